/**
 * The image writer (src/packages/node/edit-image.ts, as `prune -o` reaches it through the CLI's choice of
 * writer) on small docker-save and OCI image tarballs: one or two layers, plain or gzip, holding a 262-byte
 * clang-offload-bundler bundle that `prune --keep=gfx90a` edits (test/fixtures/bundler/align16.19.bc), with
 * configs whose diff_ids, manifests and indexes whose digests and sizes are right; the outer tar written with
 * ustar, pax, GNU long-name and base-256 headers, and sometimes gzipped whole. Mutations aim at the tar
 * headers, the digests and sizes in the JSON, and the layer bytes.
 *
 * Each case runs in a folder of its own (its TMPDIR too, so the writer's scratch folders land there). What
 * must hold: the writer writes an output or fails with an OffloadKitError (anything else is a crash); on
 * failure no output exists; either way nothing is left beside the input and the scratch folder is empty; an
 * image output's blobs that are not the input's own bytes are named by their sha256, every descriptor the
 * writer added names a blob there of its digest and size, every diff_id it added is the sha256 of a layer
 * there decoded; and the package walker reads any output back without throwing. (A mutated input that is no
 * longer an image by the writers' rule goes to the tarball writer, as the CLI sends it, which keeps no digests.)
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import type { Codecs } from "../../../../src/compress/codecs.js";
import { loadNodeCodecs } from "../../../../src/compress/node/codecs.js";
import { OffloadKitError } from "../../../../src/engine/errors.js";
import { bytesSource } from "../../../../src/engine/source.js";
import type { ByteSource } from "../../../../src/engine/source.js";
import { ChunkReader } from "../../../../src/packages/chunks.js";
import { compressionOf, memorySpooler } from "../../../../src/packages/decoders.js";
import type { Decoders } from "../../../../src/packages/decoders.js";
import { layerPath } from "../../../../src/packages/image.js";
import { editImagePackage, isImageFile } from "../../../../src/packages/node/edit-image.js";
import { nestedEditor, packageEditor } from "../../../../src/packages/node/editors.js";
import { nodeDecoders } from "../../../../src/packages/node/io.js";
import { walkTar } from "../../../../src/packages/tar.js";
import { walkPackage } from "../../../../src/packages/walk.js";
import { planPrune } from "../../../../src/prune/index.js";
import type { Rand } from "../rand.js";
import type { Sample } from "../sample.js";
import type { FuzzTarget } from "../target.js";
import { Writer, endTar, paxRecords, repairTarChecksums, writeTarEntry } from "./package-bytes.js";

const BUNDLE = readFileSync(new URL("../../../fixtures/bundler/align16.19.bc", import.meta.url));
const utf8 = new TextEncoder();
const text = new TextDecoder();

let codecs: Codecs | undefined;
let decoders: Decoders | undefined;

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/**
 * One valid entry in a header flavour the writers must keep: ustar, a ustar prefix split, a GNU long name,
 * GNU base-256 size, pax records (path, size, mtime, a comment).
 */
function entryOf(r: Rand, w: Writer, name: string, body: Uint8Array): void {
  const flavour = r.int(6);
  if (flavour === 1 && name.length > 100) {
    writeTarEntry(w, "././@LongLink", utf8.encode(`${name}\0`), { type: "L", magic: "gnu" });
    return writeTarEntry(w, name.slice(0, 100), body, { magic: "gnu" });
  }
  if (flavour === 2) {
    const records: [string, string][] = [["mtime", "1700000000.25"], ["comment", "kept"]];
    if (name.length > 100 || r.bool(0.5)) records.push(["path", name]);
    if (r.bool(0.5)) records.push(["size", String(body.length)]);
    writeTarEntry(w, "PaxHeaders.0/x", paxRecords(records), { type: "x" });
    return writeTarEntry(w, name.slice(0, 100), body);
  }
  if (flavour === 3) return writeTarEntry(w, name.slice(0, 100), body, { base256: true, magic: "gnu" });
  const cut = name.lastIndexOf("/", 100);
  if (name.length > 100 && cut > 0 && cut <= 155) return writeTarEntry(w, name.slice(cut + 1), body, { prefix: name.slice(0, cut) });
  if (name.length > 100) return entryOf(r, w, name, body);
  writeTarEntry(w, name, body);
}

/** A layer: the bundle under a name that may need a long-name record, text, sometimes a whiteout or a link. */
function layerOf(r: Rand): Writer {
  const w = new Writer();
  const paths = ["usr/lib/libx.bc", "./opt/liby.bc", `usr/lib/${"deep/".repeat(22)}libz.bc`];
  for (let i = r.range(1, 3); i > 0; i--) {
    const choice = r.int(8);
    if (choice < 4) entryOf(r, w, r.pick(paths), BUNDLE);
    else if (choice === 4) writeTarEntry(w, "etc/conf", utf8.encode("text\n"));
    else if (choice === 5) writeTarEntry(w, "usr/lib/.wh.libx.bc", new Uint8Array(0));
    else if (choice === 6) writeTarEntry(w, "usr/lib/link.bc", new Uint8Array(0), { type: "2", linkName: "libx.bc" });
    else writeTarEntry(w, "usr/lib/", new Uint8Array(0), { type: "5" });
  }
  endTar(w);
  return w;
}

/** Marks the JSON's digests and sizes in the outer tar as fields (its body starts at `at`). */
function jsonFields(w: Writer, at: number, json: string): void {
  for (const m of json.matchAll(/sha256:[0-9a-f]{64}/g)) w.field(at + m.index!, m[0].length, "text");
  for (const m of json.matchAll(/"size":(\d+)/g)) w.field(at + m.index! + 7, m[1]!.length, "size", { decimal: true });
}

/** One outer entry: plain ustar for the first (the writer's recognition reads it), any flavour after; where its body starts. */
function outerEntry(r: Rand, w: Writer, name: string, body: Uint8Array, first: boolean): number {
  if (first) writeTarEntry(w, name, body);
  else entryOf(r, w, name, body);
  return w.length - body.length - ((512 - (body.length % 512)) % 512);
}

function imageWriterSample(r: Rand): Sample {
  const layers = Array.from({ length: r.range(1, 2) }, () => {
    const layer = layerOf(r);
    const tar = Uint8Array.from(layer.bytes);
    const gzip = r.bool(0.5);
    return { layer, tar, blob: gzip ? gzipSync(tar, { level: 1 }) : tar, gzip };
  });
  const config = JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: layers.map((l) => `sha256:${sha256(l.tar)}`) }, history: layers.map(() => ({ created_by: "fuzz" })) });
  const w = new Writer();
  let first = true;
  const put = (name: string, body: Uint8Array, isJson = false) => {
    const at = outerEntry(r, w, name, body, first);
    first = false;
    if (isJson) jsonFields(w, at, text.decode(body));
    return at;
  };
  const putLayer = (name: string, l: (typeof layers)[number]) => {
    const at = put(name, l.blob);
    // A plain layer's own tar fields, where they sit in the outer tar.
    if (!l.gzip) for (const f of l.layer.fields) w.field(at + f.at, f.size, f.kind, f);
  };
  const configName = sha256(utf8.encode(config));
  if (r.bool(0.5)) {
    // docker save, legacy (`<id>/layer.tar`) or docker 25 (`blobs/sha256/…`).
    const legacy = r.bool(0.5);
    const names = layers.map((l, i) => (legacy ? `${sha256(utf8.encode(`id ${i}`))}/layer.tar` : `blobs/sha256/${sha256(l.blob)}`));
    const configPath = legacy ? `${configName}.json` : `blobs/sha256/${configName}`;
    layers.forEach((l, i) => putLayer(names[i]!, l));
    put(configPath, utf8.encode(config), true);
    put("manifest.json", utf8.encode(JSON.stringify([{ Config: configPath, RepoTags: ["fuzz:1"], Layers: names }])), true);
  } else {
    const manifest = JSON.stringify({
      schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: `sha256:${configName}`, size: config.length },
      layers: layers.map((l) => ({ mediaType: `application/vnd.oci.image.layer.v1.tar${l.gzip ? "+gzip" : ""}`, digest: `sha256:${sha256(l.blob)}`, size: l.blob.length })),
    });
    const index = JSON.stringify({ schemaVersion: 2, manifests: [{ mediaType: "application/vnd.oci.image.manifest.v1+json", digest: `sha256:${sha256(utf8.encode(manifest))}`, size: manifest.length }] });
    put("oci-layout", utf8.encode('{"imageLayoutVersion":"1.0.0"}'));
    put("index.json", utf8.encode(index), true);
    put(`blobs/sha256/${sha256(utf8.encode(manifest))}`, utf8.encode(manifest), true);
    put(`blobs/sha256/${configName}`, utf8.encode(config), true);
    layers.forEach((l) => putLayer(`blobs/sha256/${sha256(l.blob)}`, l));
  }
  endTar(w);
  const sample = w.sample();
  // Sometimes `docker save | gzip`: the fields no longer point at anything.
  return r.bool(0.15) ? { bytes: gzipSync(sample.bytes, { level: 1 }), fields: [] } : sample;
}

/** A tar's files (decoded when compressed) by name; undefined when it is not one we can read. */
async function filesOf(bytes: Uint8Array): Promise<Map<string, Uint8Array> | undefined> {
  const method = compressionOf(bytes.subarray(0, 16));
  let plainBytes = bytes;
  try {
    if (method === "gzip") plainBytes = gunzipSync(bytes);
    else if (method !== undefined) {
      const parts: Uint8Array[] = [];
      for await (const chunk of decoders!.decode(method, (async function* () { yield bytes; })())) parts.push(chunk.slice());
      plainBytes = Buffer.concat(parts);
    }
    const files = new Map<string, Uint8Array>();
    const reader = ChunkReader.ofSource(bytesSource(plainBytes));
    for await (const entry of walkTar(reader)) if (entry.type === "file") files.set(layerPath(entry.name), (await reader.read(entry.size)).slice());
    return files;
  } catch {
    return undefined;
  }
}

/** Every descriptor (digest + size) in a JSON value. */
function descriptors(value: unknown, out: { digest: string; size: number }[] = []): { digest: string; size: number }[] {
  if (typeof value !== "object" || value === null) return out;
  for (const child of Object.values(value)) descriptors(child, out);
  const o = value as Record<string, unknown>;
  if (typeof o.digest === "string" && typeof o.size === "number") out.push({ digest: o.digest, size: o.size });
  return out;
}

function diffIds(value: unknown): string[] {
  const rootfs = typeof value === "object" && value !== null ? (value as Record<string, unknown>).rootfs : undefined;
  const ids = typeof rootfs === "object" && rootfs !== null ? (rootfs as Record<string, unknown>).diff_ids : undefined;
  return Array.isArray(ids) ? ids.filter((d): d is string => typeof d === "string") : [];
}

function jsonOf(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(text.decode(bytes));
  } catch {
    return undefined;
  }
}

/** The output judged against the input: what the writer wrote is named by its digest, and the walker reads it. */
async function judgeOutput(input: Uint8Array, output: Uint8Array, image: boolean): Promise<void> {
  await walkPackage(bytesSource(output), "out.tar", { decoders: decoders!, spooler: memorySpooler(64 * 1024 * 1024), maxDecompressed: 64 * 1024 * 1024, onMember: () => {}, onProblem: () => {} });
  if (!image) return;
  const before = await filesOf(input);
  const after = await filesOf(output);
  if (after === undefined) throw new Error("the output is not a tar that can be read");
  const old = (name: string, bytes: Uint8Array) => before?.get(name) !== undefined && sha256(before.get(name)!) === sha256(bytes);
  const oldText = before === undefined ? "" : [...before.values()].filter((b) => b.length < 1 << 20).map((b) => text.decode(b)).join("\n");
  // Every decoded layer in the output, for the diff_ids.
  const decodedLayers = new Set<string>();
  for (const bytes of after.values()) {
    try {
      decodedLayers.add(`sha256:${sha256(bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes)}`);
    } catch {
      // not a gzip stream
    }
  }
  for (const [name, bytes] of after) {
    if (old(name, bytes)) continue;
    const named = /^blobs\/sha256\/([0-9a-f]{64})$/.exec(name) ?? /^([0-9a-f]{64})\.json$/.exec(name);
    if (named !== null && sha256(bytes) !== named[1]) throw new Error(`the writer wrote '${name}', whose sha256 is ${sha256(bytes)}`);
    const json = jsonOf(bytes);
    if (json === undefined) continue;
    for (const d of descriptors(json)) {
      if (!d.digest.startsWith("sha256:") || oldText.includes(d.digest)) continue;
      const blob = after.get(`blobs/sha256/${d.digest.slice(7)}`);
      if (blob === undefined || blob.length !== d.size || `sha256:${sha256(blob)}` !== d.digest) throw new Error(`'${name}' names ${d.digest} of ${d.size} bytes, which the output does not hold as such`);
    }
    for (const id of diffIds(json)) {
      if (!oldText.includes(id) && !decodedLayers.has(id)) throw new Error(`'${name}' names diff_id ${id}, which no layer in the output decodes to`);
    }
  }
}

/** What a case's run says: the writer's result, comparable from run to run (no temporary paths). */
async function writeImage(input: Uint8Array): Promise<unknown> {
  const dir = mkdtempSync(join(tmpdir(), "offload-kit-fuzz-image-"));
  const scratch = join(dir, "tmp");
  mkdirSync(scratch);
  const oldTmp = process.env.TMPDIR;
  // Worker threads have their own process.env: the writer's scratch folders go into this case's folder.
  process.env.TMPDIR = scratch;
  const inPath = join(dir, "in.tar");
  const outPath = join(dir, "out.tar");
  try {
    writeFileSync(inPath, input);
    const plan = (source: ByteSource, name: string) => planPrune(source, { keep: ["gfx90a"], allowEmpty: true, codecs: codecs!, name });
    const options = { codecs: codecs!, plan };
    let result: unknown;
    let error: unknown;
    try {
      const editor = isImageFile(inPath) ? editImagePackage : await packageEditor(inPath);
      if (editor === undefined) result = { writer: "none" };
      else {
        const edit = await editor(inPath, outPath, { ...options, nested: nestedEditor(options) });
        result = {
          kind: (edit as { kind?: string }).kind, members: edit.members, withDeviceCode: edit.withDeviceCode, inputSize: edit.inputSize, outputSize: edit.outputSize,
          record: edit.record ?? null, changed: edit.edits.filter((e) => e.planned?.plan !== undefined).length,
          layers: (edit as { layers?: unknown }).layers ?? null,
        };
      }
    } catch (e) {
      error = e;
    }
    const left = readdirSync(dir).filter((f) => f !== "in.tar" && f !== "out.tar" && f !== "tmp");
    if (left.length > 0) throw new Error(`left beside the input: ${left.join(", ")}`);
    if (readdirSync(scratch).length > 0) throw new Error(`left in the scratch folder: ${readdirSync(scratch).join(", ")}`);
    if (error !== undefined) {
      if (existsSync(outPath)) throw new Error(`an output was left after ${String(error)}`);
      if (error instanceof OffloadKitError) throw new OffloadKitError(error.code, error.message.split(dir).join("<case>"), { offset: error.offset, field: error.field });
      throw error;
    }
    // An input that is not an image by the writers' rule goes to the tarball writer, which keeps no digests.
    if (existsSync(outPath)) await judgeOutput(input, readFileSync(outPath), (result as { kind?: string }).kind === "image");
    return result;
  } finally {
    if (oldTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = oldTmp;
    rmSync(dir, { recursive: true, force: true });
  }
}

export const imageWriterTarget: FuzzTarget = {
  name: "image-writer",
  about: "the image writer (prune -o of docker-save and OCI tarballs, plain or gzipped; pax and long-name headers; plain and gzip layers holding an editable bundle): an output whose new digests all hold and the walker reads, or an OffloadKitError, nothing left behind",
  engines: false,
  sources: false,
  dictionary: ["sha256:", '"size":', "diff_ids", "manifests", "layers", "config", "Layers", "Config", "blobs/sha256/", "manifest.json", "index.json", "oci-layout", "layer.tar", ".wh.", "0", "-1", "1e999", "null", "[]", "{}", '"', "\\u0000", "././@LongLink", "path=", "size="],
  async setup() {
    codecs ??= await loadNodeCodecs();
    // xz through the WebAssembly decoder, so no case starts a program to read one.
    decoders ??= nodeDecoders({ ...process.env, OFFLOAD_KIT_XZ: "wasm" });
  },
  generate: imageWriterSample,
  run: (input) => writeImage(repairTarChecksums(input)),
  // The writer's chunked copies and output buffers (1 MiB each), zlib's windows, the walker's read-back.
  allocBudget: (length) => 24 * 1024 * 1024 + 64 * length,
};
