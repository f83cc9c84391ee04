/**
 * The package walker (src/packages/walk.ts) end to end: containers nested in one another (zip, tar,
 * tar.gz, .deb, RPM, cpio, gzip, stored and deflate zip members) and image layouts (docker save, OCI)
 * with whiteouts and opaque directories. The walk must settle with every member handed on or a problem
 * named, never throw, keep the decompression budget (set to what the input could honestly decode to, so
 * a nested bomb is caught by the allocation watch if the budget leaks), and the same over a chunked
 * source. Members must never be whiteout markers, and every path must flatten to one safe file name.
 */
import { deflateRawSync, gzipSync } from "node:zlib";
import { bytesSource, readExact } from "../../../../src/engine/source.js";
import { nodeDecoders } from "../../../../src/packages/node/io.js";
import { memorySpooler } from "../../../../src/packages/decoders.js";
import type { Decoders } from "../../../../src/packages/decoders.js";
import { flattenMemberPath } from "../../../../src/packages/names.js";
import { ChunkReader } from "../../../../src/packages/chunks.js";
import { layerPath } from "../../../../src/packages/image.js";
import { walkTar } from "../../../../src/packages/tar.js";
import { walkPackage } from "../../../../src/packages/walk.js";
import { createHash } from "node:crypto";
import type { Rand } from "../rand.js";
import type { Sample } from "../sample.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";
import { PACKAGE_NAMES, Writer, cpioSample, endTar, imageSample, randomTarEntry, repairTarChecksums, tarSample, writeTarEntry } from "./package-bytes.js";

/** Decoded bytes a case may produce in all: deflate's most (1032:1) on the whole input, plus 64 KiB. */
export function walkBudget(length: number): number {
  return 64 * 1024 + 1032 * length;
}

// xz through the WebAssembly decoder, so no case starts a program for xz; zstd and bzip2 do (rarely: only
// when a mutation makes their magic).
let decoders: Decoders | undefined;

async function walkOutcome(input: Uint8Array, ctx: RunContext, image: boolean) {
  decoders ??= nodeDecoders({ ...process.env, OFFLOAD_KIT_XZ: "wasm" });
  const source = ctx.chunked ? chunkedSource(input, 61) : bytesSource(input);
  // Whether the walker will take it for an image: a tar naming manifest.json or index.json (walk.ts's rule).
  let isImage = false;
  if (image) {
    try {
      for await (const entry of walkTar(ChunkReader.ofSource(bytesSource(input)))) {
        if (["manifest.json", "index.json"].includes(layerPath(entry.name))) isImage = true;
      }
    } catch {
      // A broken index still counts if it named a manifest before breaking.
    }
  }
  const members: unknown[] = [];
  const problems: unknown[] = [];
  const walk = await walkPackage(source, "p.pkg", {
    decoders,
    spooler: memorySpooler(walkBudget(input.length)),
    maxDepth: 1 + (input.length % 8),
    maxDecompressed: walkBudget(input.length),
    onMember: ({ path, source: member }) => {
      if (path[0] !== "p.pkg") throw new Error(`member path ${JSON.stringify(path)} does not start with the package`);
      // In an image, the file of a layer (the level after the image's name, when several images) is never a
      // whiteout marker; files inside a container in a layer may be named anything.
      const layerFile = /^(test:|sha256:)/.test(path[1] ?? "") ? path[2] : path[1];
      if (image && isImage && layerFile !== undefined && layerFile.split("/").pop()!.startsWith(".wh.")) {
        throw new Error(`whiteout marker handed on as a member: ${JSON.stringify(path)}`);
      }
      const flat = flattenMemberPath("p.pkg", path.slice(1));
      if (/[/\\\0]/.test(flat) || flat === "." || flat === "..") throw new Error(`member ${JSON.stringify(path)} flattens to '${flat}'`);
      const head = readExact(member, 0, Math.min(member.size, 64));
      members.push({ path, size: member.size, head: createHash("sha1").update(head).digest("hex").slice(0, 12) });
    },
    onProblem: (p) => {
      if (!Number.isSafeInteger(p.offset) || p.offset < 0) throw new Error(`problem at offset ${p.offset}: ${p.message}`);
      if (p.path[0] !== "p.pkg") throw new Error(`problem path ${JSON.stringify(p.path)} does not start with the package`);
      problems.push(p);
    },
  });
  return { walk, members, problems };
}

const LEAF_NAMES = PACKAGE_NAMES.filter((n) => n !== "");

/** A container holding `children` (each [name, bytes]); the kind is chosen at random. */
function container(r: Rand, children: readonly [string, Uint8Array][]): Uint8Array {
  switch (r.int(7)) {
    case 0: { // zip, stored or deflate members
      const w = new Writer();
      const central: number[] = [];
      const le = (v: number, n: number) => Array.from({ length: n }, (_, i) => Math.floor(v / 2 ** (8 * i)) & 255);
      for (const [name, data] of children) {
        const method = r.bool(0.5) ? 8 : 0;
        const stored = method === 8 ? deflateRawSync(data) : data;
        const nameBytes = new TextEncoder().encode(name);
        const at = w.length;
        w.field(at + 18, 4, "size");
        w.field(at + 22, 4, "size");
        w.push([0x50, 0x4b, 3, 4, ...le(20, 2), 0, 0, ...le(method, 2), 0, 0, 0, 0, 0, 0, 0, 0, ...le(stored.length, 4), ...le(data.length, 4), ...le(nameBytes.length, 2), 0, 0, ...nameBytes]);
        w.push(stored);
        central.push(0x50, 0x4b, 1, 2, ...le(0x314, 2), ...le(20, 2), 0, 0, ...le(method, 2), 0, 0, 0, 0, 0, 0, 0, 0, ...le(stored.length, 4), ...le(data.length, 4),
          ...le(nameBytes.length, 2), 0, 0, 0, 0, 0, 0, 0, 0, ...le(0o100644 * 65536, 4), ...le(at, 4), ...nameBytes);
      }
      const dirAt = w.length;
      w.push(central);
      w.push([0x50, 0x4b, 5, 6, 0, 0, 0, 0, ...le(children.length, 2), ...le(children.length, 2), ...le(central.length, 4), ...le(dirAt, 4), 0, 0]);
      return Uint8Array.from(w.bytes);
    }
    case 1: { // .deb: debian-binary, control.tar.gz, data.tar(.gz)
      const data = tarOf(r, children);
      const members: [string, Uint8Array][] = [["debian-binary", new TextEncoder().encode("2.0\n")], ["control.tar.gz", gzipSync(tarOf(r, []))], [r.bool(0.5) ? "data.tar.gz" : "data.tar", r.bool(0.5) ? gzipSync(data) : data]];
      const parts: number[] = [...new TextEncoder().encode("!<arch>\n")];
      for (const [name, bytes] of members) {
        parts.push(...new TextEncoder().encode(`${name.padEnd(16)}${"0".padEnd(12)}${"0".padEnd(6)}${"0".padEnd(6)}${"100644".padEnd(8)}${String(bytes.length).padEnd(10)}\`\n`), ...bytes);
        if (bytes.length % 2) parts.push(10);
      }
      return Uint8Array.from(parts);
    }
    case 2: { // RPM with a (maybe gzip'd) cpio payload
      const payload = cpioOf(children);
      const gz = r.bool(0.6);
      const be = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
      const header = (tags: readonly [number, string][]) => {
        const store: number[] = [];
        const index: number[] = [];
        for (const [tag, value] of tags) {
          index.push(...be(tag), ...be(6), ...be(store.length), ...be(1));
          store.push(...new TextEncoder().encode(`${value}\0`));
        }
        return [0x8e, 0xad, 0xe8, 0x01, 0, 0, 0, 0, ...be(tags.length), ...be(store.length), ...index, ...store];
      };
      const lead = [0xed, 0xab, 0xee, 0xdb, 3, 0, ...new Array(90).fill(0)];
      return Uint8Array.from([...lead, ...header([]), ...header([[1124, "cpio"], [1125, gz ? "gzip" : "none"]]), ...(gz ? gzipSync(payload) : payload)]);
    }
    case 3: return cpioOf(children);
    case 4: return gzipSync(tarOf(r, children), { level: 1 });
    case 5: return children.length > 0 ? gzipSync(children[0]![1], { level: 1 }) : gzipSync(new Uint8Array(0));
    default: return tarOf(r, children);
  }
}

function tarOf(r: Rand, children: readonly [string, Uint8Array][]): Uint8Array {
  const w = new Writer();
  for (const [name, data] of children) randomTarEntry(r, w, name, data);
  if (r.bool(0.5)) writeTarEntry(w, "link", new Uint8Array(0), { type: "2", linkName: "../x" });
  endTar(w);
  return Uint8Array.from(w.bytes);
}

function cpioOf(children: readonly [string, Uint8Array][]): Uint8Array {
  const parts: number[] = [];
  const hex = (n: number) => n.toString(16).padStart(8, "0");
  const entry = (name: string, data: Uint8Array, mode: number) => {
    const nameBytes = new TextEncoder().encode(`${name}\0`);
    parts.push(...new TextEncoder().encode(`070701${[1, mode, 0, 0, 1, 0, data.length, 0, 0, 0, 0, nameBytes.length, 0].map(hex).join("")}`), ...nameBytes);
    while (parts.length % 4) parts.push(0);
    parts.push(...data);
    while (parts.length % 4) parts.push(0);
  };
  for (const [name, data] of children) entry(name, data, 0o100644);
  entry("TRAILER!!!", new Uint8Array(0), 0);
  return Uint8Array.from(parts);
}

/** A tree of containers 1-4 deep with small leaves (sometimes a run of zeros, which compresses far). */
function nested(r: Rand, depth: number): Uint8Array {
  if (depth === 0 || r.bool(0.25)) return r.bool(0.2) ? new Uint8Array(r.range(1, 3000)) : r.bytes(r.range(1, 80));
  const children: [string, Uint8Array][] = [];
  for (let i = r.range(1, 3); i > 0; i--) children.push([r.pick(LEAF_NAMES) + String(i), nested(r, depth - 1)]);
  return container(r, children);
}

/** A small nested bomb: a tar.gz of gzip'd runs of zeros, decoding to far more than the case's budget. */
function bomb(r: Rand): Uint8Array {
  const members: [string, Uint8Array][] = Array.from({ length: r.range(2, 6) }, (_, i) => [`z${i}.gz`, gzipSync(new Uint8Array(r.range(100000, 400000)), { level: 9 })]);
  return gzipSync(tarOf(r, members), { level: 9 });
}

function walkSample(r: Rand): Sample {
  if (r.bool(0.05)) return { bytes: bomb(r), fields: [] };
  if (r.bool(0.15)) return tarSample(r);
  if (r.bool(0.1)) return cpioSample(r);
  return { bytes: nested(r, r.range(1, 4)), fields: [] };
}

export const walkTarget: FuzzTarget = {
  name: "walk",
  about: "walkPackage over containers nested 1-4 deep (zip stored/deflate, tar, tar.gz, .deb, RPM, cpio, gzip) and small nested bombs, with the decompression budget, plain and chunked sources",
  engines: false,
  sources: true,
  dictionary: PACKAGE_NAMES,
  generate: walkSample,
  run: (input, ctx) => walkOutcome(repairTarChecksums(input), ctx, false),
  allocBudget: (length) => 2 * walkBudget(length) + 1024 * 1024,
};

export const imageTarget: FuzzTarget = {
  name: "image",
  about: "docker-save and OCI image layout tarballs (walkPackage): manifests, nested indexes, linked layers, plain and gzip layers, whiteouts and opaque directories, plain and chunked sources",
  engines: false,
  sources: true,
  dictionary: [...PACKAGE_NAMES, '"Layers":[]', '"manifests":[{"digest":"sha256:00"}]', "sha256:", ".wh.", ".wh..wh..opq", "layer.tar", "{}", "[]", "null"],
  generate: imageSample,
  run: (input, ctx) => walkOutcome(repairTarChecksums(input), ctx, true),
  allocBudget: (length) => 2 * walkBudget(length) + 1024 * 1024,
};
