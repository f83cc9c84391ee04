/**
 * Packages made in the tests from the small fat binaries in test/fixtures/hosts, with the standard tools
 * (tar, gzip, xz, zstd, bzip2, zip, dpkg-deb, rpmbuild) where they exist and with small writers below
 * where a test needs bytes no tool writes (image layouts, hostile headers). Also: walking a package
 * in-process and locating each member, to compare with the locator on the unpacked files.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { bytesSource } from "../../src/engine/source.js";
import type { ByteSource } from "../../src/engine/source.js";
import { locate } from "../../src/inspect/locate.js";
import { locationJson } from "../../src/inspect/location-json.js";
import { withCcobPrefetch } from "../../src/compress/node/decompress.js";
import { nodeDecoders } from "../../src/packages/node/io.js";
import { memorySpooler } from "../../src/packages/decoders.js";
import { walkPackage } from "../../src/packages/walk.js";
import type { PackageProblem, PackageWalk } from "../../src/packages/walk.js";
import { nativeTool } from "../native.js";

export const HOSTS = new URL("../fixtures/hosts/", import.meta.url).pathname;
/** What the staged tree holds that has device code (path -> fixture). */
export const PAYLOADS: Record<string, string> = {
  "usr/lib/app": "app",
  "usr/lib/libboth.a": "libboth.a",
  "opt/a/very/long/directory/name/that/makes/the/path/longer/than/one/hundred/bytes/for/ustar/and/pax/fat.o": "fat.o",
};

/** A tree with the payloads, a text file and a symlink (hard links: see the writers, tar's order is readdir's). */
export function stage(dir: string): string {
  const root = join(dir, "root");
  for (const [path, fixture] of Object.entries(PAYLOADS)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    copyFileSync(join(HOSTS, fixture), join(root, path));
  }
  writeFileSync(join(root, "usr/lib/readme.txt"), "no device code here\n");
  symlinkSync("app", join(root, "usr/lib/app.link"));
  return root;
}

/** Runs a tool (skips the caller via `undefined` when missing; fails under OFFLOAD_KIT_REQUIRE_NATIVE=1). */
export function tool(name: string, args: readonly string[], options: { cwd?: string; input?: Uint8Array } = {}): Buffer | undefined {
  const path = nativeTool(name);
  if (path === undefined) return undefined;
  return execFileSync(path, args, { cwd: options.cwd, input: options.input, maxBuffer: 1 << 30, stdio: ["pipe", "pipe", "pipe"] });
}

/** Whether every named tool is on PATH (under OFFLOAD_KIT_REQUIRE_NATIVE=1 a missing one throws). */
export function haveTools(...names: string[]): boolean {
  return names.every((name) => nativeTool(name) !== undefined);
}

export interface Walked {
  readonly walk: PackageWalk | undefined;
  /** Member path (levels after the package, joined with `!`) -> the locator's JSON for it. */
  readonly members: Map<string, unknown>;
  readonly problems: PackageProblem[];
}

/** What the locator reports for one file, without its path (for comparisons). */
export function located(source: ByteSource): unknown {
  const report = withCcobPrefetch({ recalculateHash: true }, (ccob) => locate(source, { ...ccob }));
  const { path: _path, ...rest } = locationJson("", report);
  return rest;
}

export async function walkBytes(bytes: Uint8Array, name = "pkg", env: Record<string, string | undefined> = process.env): Promise<Walked> {
  const members = new Map<string, unknown>();
  const problems: PackageProblem[] = [];
  const walk = await walkPackage(bytesSource(bytes), name, {
    decoders: nodeDecoders(env),
    spooler: memorySpooler(),
    onMember: ({ path, source }) => {
      members.set(path.slice(1).join("!"), located(source));
    },
    onProblem: (p) => problems.push(p),
  });
  return { walk, members, problems };
}

/** The locator on each payload of the staged tree. */
export function expectedMembers(root: string, prefix = ""): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const path of Object.keys(PAYLOADS)) out.set(prefix + path, located(bytesSource(readFileSync(join(root, path)))));
  return out;
}

// --- small writers --------------------------------------------------------------------------------

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, "0") + "\0";
}

/** One ustar header (+ body, padded). `size` may lie; `type` is the typeflag character. */
export function tarEntry(name: string, body: Uint8Array, options: { type?: string; linkName?: string; size?: number; rawSize?: Uint8Array } = {}): Uint8Array {
  const header = new Uint8Array(512);
  const put = (text: string, at: number) => header.set(Buffer.from(text, "utf8").subarray(0, 512 - at), at);
  put(name.slice(0, 100), 0);
  put(octal(0o644, 8), 100);
  put(octal(0, 8), 108);
  put(octal(0, 8), 116);
  put(octal(options.size ?? body.length, 12), 124);
  if (options.rawSize !== undefined) header.set(options.rawSize, 124);
  put(octal(0, 12), 136);
  put(options.type ?? "0", 156);
  if (options.linkName !== undefined) put(options.linkName, 157);
  put("ustar\0", 257);
  put("00", 263);
  header.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of header) sum += b;
  put(octal(sum, 7) + " ", 148);
  const padded = new Uint8Array(Math.ceil(body.length / 512) * 512);
  padded.set(body);
  return Buffer.concat([header, padded]);
}

export function tarOf(entries: readonly Uint8Array[]): Uint8Array {
  return Buffer.concat([...entries, new Uint8Array(1024)]);
}

export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** An OCI image layout tarball: layers (tar bytes, bottom first) gzip'd as blobs, one manifest. */
export function ociImage(layers: readonly Uint8Array[]): Uint8Array {
  const blobs: Uint8Array[] = [];
  const descriptors = layers.map((layer) => {
    const blob = gzipSync(layer);
    const digest = sha256(blob);
    blobs.push(tarEntry(`blobs/sha256/${digest}`, blob));
    return { mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: `sha256:${digest}`, size: blob.length };
  });
  const config = Buffer.from("{}");
  const manifest = Buffer.from(JSON.stringify({
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: `sha256:${sha256(config)}`, size: config.length },
    layers: descriptors,
  }));
  const index = Buffer.from(JSON.stringify({
    schemaVersion: 2,
    manifests: [{ mediaType: "application/vnd.oci.image.manifest.v1+json", digest: `sha256:${sha256(manifest)}`, size: manifest.length, annotations: { "org.opencontainers.image.ref.name": "test:1" } }],
  }));
  return tarOf([
    tarEntry("oci-layout", Buffer.from('{"imageLayoutVersion":"1.0.0"}')),
    tarEntry("index.json", index),
    tarEntry(`blobs/sha256/${sha256(manifest)}`, manifest),
    tarEntry(`blobs/sha256/${sha256(config)}`, config),
    ...blobs,
  ]);
}

/** A `docker save` tarball (legacy layout: <id>/layer.tar, manifest.json last, as docker writes it). */
export function dockerImage(layers: readonly Uint8Array[]): Uint8Array {
  const names = layers.map((layer) => `${sha256(layer)}/layer.tar`);
  const manifest = Buffer.from(JSON.stringify([{ Config: "config.json", RepoTags: ["test:1"], Layers: names }]));
  return tarOf([
    ...layers.map((layer, i) => tarEntry(names[i]!, layer)),
    tarEntry("config.json", Buffer.from("{}")),
    tarEntry("manifest.json", manifest),
  ]);
}

/** A minimal RPM (lead, empty signature, a header with PAYLOADFORMAT/PAYLOADCOMPRESSOR) around `payload`. */
export function rpmOf(payload: Uint8Array, compressor: string): Uint8Array {
  const lead = new Uint8Array(96);
  lead.set([0xed, 0xab, 0xee, 0xdb, 3, 0]);
  const header = (tags: readonly [number, string][]) => {
    const store: number[] = [];
    const index: number[] = [];
    for (const [tag, value] of tags) {
      const be = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
      index.push(...be(tag), ...be(6), ...be(store.length), ...be(1));
      store.push(...Buffer.from(`${value}\0`));
    }
    const intro = Buffer.alloc(16);
    intro.writeUInt32BE(0x8eade801, 0);
    intro.writeUInt32BE(tags.length, 8);
    intro.writeUInt32BE(store.length, 12);
    return Buffer.concat([intro, Buffer.from(index), Buffer.from(store)]);
  };
  const signature = header([]);
  const pad = new Uint8Array((8 - (signature.length % 8)) % 8);
  return Buffer.concat([lead, signature, pad, header([[1124, "cpio"], [1125, compressor]]), payload]);
}

/** A newc cpio archive (what rpm's payload holds) of regular files. */
export function cpioOf(files: readonly [string, Uint8Array][]): Uint8Array {
  const parts: Buffer[] = [];
  const entry = (name: string, data: Uint8Array, mode: number) => {
    const hex = (n: number) => n.toString(16).padStart(8, "0");
    const nameBytes = Buffer.from(`${name}\0`);
    const header = Buffer.from(`070701${[1, mode, 0, 0, 1, 0, data.length, 0, 0, 0, 0, nameBytes.length, 0].map(hex).join("")}`);
    const namePad = (4 - ((header.length + nameBytes.length) % 4)) % 4;
    parts.push(header, nameBytes, Buffer.alloc(namePad), Buffer.from(data), Buffer.alloc((4 - (data.length % 4)) % 4));
  };
  for (const [name, data] of files) entry(name, data, 0o100644);
  entry("TRAILER!!!", new Uint8Array(0), 0);
  return Buffer.concat(parts);
}
