/**
 * prune, compress and decompress of a container image tarball, written as an image tarball its tools load:
 * `docker save` (manifest.json, `<config>.json` or `blobs/sha256/…`, layer tars, repositories; Docker Image
 * Specification v1.2) and OCI image layouts (oci-layout, index.json, blobs/sha256/…, nested indexes; OCI
 * image-spec v1.1), and docker 25's mix of both.
 *
 * Each image's layers are read from the top down (src/packages/image.ts LayerStack), so a file that an
 * upper layer deletes (a whiteout, an opaque directory) or replaces is not edited: it is not in the image's
 * filesystem, and editing it would only change a digest. A layer is decoded once, as a stream, through the
 * .deb's tar rewriter (edit-deb.ts `rewriteDataTar`: a file with device code spooled and edited through the
 * crash-safe single-file path, every other tar byte passed on) into an uncompressed scratch tar whose sha256
 * is the new `diff_id`. A layer where nothing changed is dropped there and keeps its blob and digest. An
 * edited one is compressed again as it was: gzip at level 6 (node:zlib; the level Go's compress/gzip
 * defaults to, which docker and buildkit write with) or zstd -3 (the `zstd` program; containerd's default
 * level), or left uncompressed. The original compressor's bytes cannot be reproduced and every digest above
 * the layer changes anyway, so the default levels are the honest choice.
 *
 * Then the JSON, bottom up: each config's `rootfs.diff_ids` (history kept), each manifest's `config` and
 * `layers[]` descriptors (digest and size), each nested index's descriptors, index.json, and docker's
 * manifest.json (`Config`, `Layers`, `LayerSources`). A blob named by its digest (`blobs/sha256/<hex>`,
 * `<hex>.json`) is renamed to its new digest; docker's legacy `<id>/layer.tar` paths are v1 layer IDs, not
 * digests, and are kept. JSON that changes is written compact (JSON.stringify), as docker writes it.
 *
 * The tarball is written once: every outer tar byte of an entry not replaced is copied as it was; a replaced
 * entry keeps its headers but for name, size and checksums (its pax `path`/`size` records and GNU long name
 * written again, every other record kept: ../write/tar-entry.ts). The output goes to a temporary file
 * beside the destination, is read back (every replaced entry's sha256 is the digest that names it; every
 * descriptor in the rewritten JSON names an entry of that size), and renamed into place. A tarball
 * compressed whole (`docker save | gzip`) is decoded into the scratch folder, written so, and encoded again
 * (editCompressedImagePackage).
 */
import { createHash } from "node:crypto";
import { chmodSync, closeSync, copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, openSync, readdirSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve as resolvePath } from "node:path";
import { createGzip } from "node:zlib";
import type { Codecs } from "../../compress/codecs.js";
import { OffloadKitError, isOffloadKitError } from "../../engine/errors.js";
import { engine } from "../../engine/select.js";
import type { ByteSource } from "../../engine/source.js";
import { readExact, sliceSource } from "../../engine/source.js";
import { copyRange } from "../../node/copy.js";
import { fileError } from "../../node/errors.js";
import { FileSource } from "../../node/file-source.js";
import { withOutputs } from "../../node/output.js";
import { createNamedTemporary, removeTemporary } from "../../process/temporaries.js";
import type { FileEdit } from "../../prune/node.js";
import type { PlannedEdit } from "../../prune/index.js";
import { ChunkReader, sourceChunks } from "../chunks.js";
import { compressionOf } from "../decoders.js";
import type { Compression } from "../decoders.js";
import { LayerStack, layerPath } from "../image.js";
import { TAR_BLOCK, walkTar } from "../tar.js";
import type { TarEntry } from "../tar.js";
import { paxValues, rewriteEntryHeaders } from "../write/tar-entry.js";
import { checkEditedTar, headerSize, openEncoder, rewriteDataTar } from "./edit-deb.js";
import type { EditedFile, Encoder } from "./edit-deb.js";
import type { ZipPackageEdit } from "./edit-zip.js";
import { decodedChunks, fileSha256, isImageTar, scratchFolder, tarEncoder } from "./edit-tar.js";
import { nodeDecoders } from "./io.js";
import { fileChunks } from "./file-chunks.js";

/** Go's compress/gzip DefaultCompression, what docker and buildkit write layers with. */
const GZIP_LEVEL = 6;
/** Largest JSON (manifests, configs, indexes) read into memory. */
const MAX_JSON = 64 * 1024 * 1024;
const CHUNK = 1 << 20;

export interface ImagePackageEdit<P extends PlannedEdit> extends ZipPackageEdit<P> {
  readonly kind: "image";
  /** Layer blobs rewritten, as `old digest -> new digest`. */
  readonly layers: readonly { readonly name: string; readonly from: string; readonly to: string; readonly diffId: string }[];
}

interface OuterEntry {
  readonly name: string;
  readonly entry: TarEntry;
  /** Where its records begin (after the previous entry's padded body): pax or long-name headers come first, written again with it. */
  readonly start: number;
  /** The end of its padded body. */
  readonly end: number;
}

/** What replaces an outer entry: a new name, size and body. */
interface Replacement {
  readonly name: string;
  readonly size: number;
  readonly digest: string;
  readonly bytes?: Uint8Array;
  readonly file?: string;
}

interface ImageRefs {
  readonly config?: string;
  readonly layers: readonly string[];
}

function bad(message: string, offset?: number): OffloadKitError {
  return new OffloadKitError("IMAGE_BAD_MANIFEST", message, { offset });
}

function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

function objectOf(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw bad(`${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

function blobPathOf(digest: unknown): string {
  if (typeof digest !== "string" || !/^[a-z0-9]+:[a-zA-Z0-9=_-]+$/.test(digest)) throw bad(`bad digest ${JSON.stringify(digest)}`);
  const colon = digest.indexOf(":");
  return `blobs/${digest.slice(0, colon)}/${digest.slice(colon + 1)}`;
}

/** The outer tar's entries in order, and where its end blocks begin. */
async function indexOuterTar(source: ByteSource): Promise<{ entries: OuterEntry[]; trailer: number }> {
  const entries: OuterEntry[] = [];
  let at = 0;
  for await (const entry of walkTar(ChunkReader.ofSource(source))) {
    const end = entry.dataOffset + entry.size + ((TAR_BLOCK - (entry.size % TAR_BLOCK)) % TAR_BLOCK);
    entries.push({ name: layerPath(entry.name), entry, start: at, end });
    at = end;
  }
  return { entries, trailer: at };
}

/** Whether `path` is an image tarball: an uncompressed tar holding manifest.json, or oci-layout and index.json. */
export function isImageFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    const source = FileSource.open(path);
    try {
      if (source.size < 1024) return false;
      const block = readExact(source, 0, TAR_BLOCK);
      const magic = String.fromCharCode(...block.subarray(257, 262));
      if (magic !== "ustar") return false;
      // Walk headers only (bodies are skipped by seeking).
      const names = new Set<string>();
      let at = 0;
      while (at + TAR_BLOCK <= source.size) {
        const header = readExact(source, at, TAR_BLOCK);
        if (header.every((b) => b === 0)) break;
        const name = layerPath(new TextDecoder().decode(header.subarray(0, header.indexOf(0) < 0 || header.indexOf(0) > 100 ? 100 : header.indexOf(0))));
        names.add(name);
        // Octal, or GNU base-256 (a layer of 8 GiB or more).
        const size = headerSize(header);
        if (!Number.isSafeInteger(size)) return false;
        at += TAR_BLOCK + size + ((TAR_BLOCK - (size % TAR_BLOCK)) % TAR_BLOCK);
      }
      return names.has("manifest.json") || (names.has("oci-layout") && names.has("index.json"));
    } finally {
      source.close();
    }
  } catch {
    return false;
  }
}

/** Hashes what passes through. */
async function* hashed(stream: AsyncIterable<Uint8Array>, hash: ReturnType<typeof createHash>): AsyncGenerator<Uint8Array> {
  for await (const chunk of stream) {
    hash.update(chunk);
    yield chunk;
  }
}

function hashFile(path: string): string {
  const hash = createHash("sha256");
  for (const chunk of fileChunks(path)) hash.update(chunk);
  return `sha256:${hash.digest("hex")}`;
}

/** Compresses the scratch tar `from` into `to` as the layer was: gzip -6, zstd -3, or a plain copy. */
async function compressLayer(method: Compression | undefined, from: string, to: string, name: string): Promise<void> {
  if (method !== undefined && method !== "gzip" && method !== "zstd") {
    throw new OffloadKitError("IMAGE_UNSUPPORTED", `${name}: a ${method} layer is not written again (OCI layers are tar, tar+gzip or tar+zstd)`);
  }
  const fd = openSync(to, "w");
  try {
    const encoder = method === "gzip" ? gzipEncoder(fd, GZIP_LEVEL) : openEncoder(method, fd);
    for (const chunk of fileChunks(from)) await encoder.write(chunk.slice());
    await encoder.end();
  } finally {
    closeSync(fd);
  }
}

/** A layer after its rewrite: undefined when nothing in it changed. */
interface LayerResult {
  readonly blob: string;
  readonly oldDigest: string;
  readonly oldDiffId: string;
  readonly newDiffId: string;
  readonly digest: string;
  readonly size: number;
}

/**
 * The blob written is read back: decoded again, its sha256 the diff_id the config will say, as many tar
 * entries, each edited file the bytes that were edited.
 */
async function verifyLayer(blob: string, method: Compression | undefined, name: string, diffId: string, entries: number, files: readonly EditedFile[]): Promise<void> {
  const fail = (message: string) => new OffloadKitError("VERIFY_FAILED", `${name}: the layer written is wrong, nothing was put in place: ${message}`);
  const written = FileSource.open(blob);
  const hash = createHash("sha256");
  const stream = sourceChunks(written);
  const reader = ChunkReader.ofStream(hashed(method === undefined ? stream : nodeDecoders().decode(method, stream), hash));
  try {
    const count = await checkEditedTar(reader, files, fail);
    for await (const piece of reader.take(Number.MAX_SAFE_INTEGER)) void piece;
    if (count !== entries) throw fail(`it holds ${count} entries, not ${entries}`);
    if (`sha256:${hash.digest("hex")}` !== diffId) throw fail("it does not decode to the tar whose digest the config names");
  } finally {
    await reader.close();
    written.close();
  }
}

/** One file of an image: a tarball's entry or a layout folder's file. */
interface StoreEntry {
  readonly name: string;
  readonly size: number;
  /** Where its bytes begin in the tarball (0 in a folder), for messages. */
  readonly offset: number;
  /** A tarball's link entry: the name it points to. */
  readonly link?: { readonly target: string; readonly symbolic: boolean };
  source(): ByteSource;
}

type EditOptions<P extends PlannedEdit> = {
  readonly codecs: Codecs;
  readonly plan: (source: ByteSource, name: string) => P;
  readonly check?: (edits: readonly FileEdit<P>[]) => void;
  /** A layout folder mirrored with --out-dir: unchanged files copied, not hard-linked (--copy, as the tree writer does). */
  readonly copy?: boolean;
};

interface ImagePlan<P extends PlannedEdit> {
  readonly edits: FileEdit<P>[];
  readonly members: number;
  readonly withDeviceCode: number;
  readonly replacements: Map<string, Replacement>;
  readonly changed: [string, LayerResult][];
  readonly rewrittenJson: string[];
}

/**
 * The image's layers rewritten into `folder` and its JSON rewritten in memory: what replaces which file.
 * `label` names the image in messages and member names (`label!layer!file`).
 */
async function planImage<P extends PlannedEdit>(label: string, byName: ReadonlyMap<string, StoreEntry>, folder: string, options: EditOptions<P>): Promise<ImagePlan<P>> {
  const path = label;
  const resolve = (name: string, hops = 0): StoreEntry => {
    const found = byName.get(layerPath(name));
    if (found === undefined) throw new OffloadKitError("IMAGE_MISSING_BLOB", `${path}: image names '${name}', which it does not hold`);
    if (found.link !== undefined && hops < 8) {
      const dir = name.includes("/") && found.link.symbolic ? name.slice(0, name.lastIndexOf("/") + 1) : "";
      return resolve(found.link.target.startsWith("/") ? found.link.target : dir + found.link.target, hops + 1);
    }
    return found;
  };
  const bytesOf = (e: StoreEntry): Uint8Array => {
    if (e.size > MAX_JSON) throw bad(`${path}: '${e.name}' is ${e.size} bytes, larger than a manifest`, e.offset);
    return readExact(e.source(), 0, e.size);
  };
  const jsonOf = (e: StoreEntry): unknown => {
    try {
      return JSON.parse(new TextDecoder().decode(bytesOf(e)));
    } catch (error) {
      if (isOffloadKitError(error)) throw error;
      throw bad(`${path}: '${e.name}' is not JSON: ${(error as Error).message}`, e.offset);
    }
  };
  // The images, each with its config and layers (bottom first), from manifest.json and from index.json.
  const images: ImageRefs[] = [];
  const docker = byName.get("manifest.json");
  if (docker !== undefined) {
    const list = jsonOf(docker);
    if (!Array.isArray(list)) throw bad(`${path}: manifest.json is not a list`);
    list.forEach((item, i) => {
      const o = objectOf(item, `manifest.json entry ${i}`);
      if (!Array.isArray(o.Layers) || !o.Layers.every((l) => typeof l === "string")) throw bad(`${path}: manifest.json entry ${i} has no Layers list`);
      images.push({ config: typeof o.Config === "string" ? resolve(o.Config).name : undefined, layers: (o.Layers as string[]).map((l) => resolve(l).name) });
    });
  }
  const ociIndex = byName.get("index.json");
  const seenJson = new Set<string>();
  const collect = (e: StoreEntry, depth: number): void => {
    if (depth > 4) throw bad(`${path}: OCI indexes nest more than 4 deep`);
    if (seenJson.has(e.name)) return;
    seenJson.add(e.name);
    const o = objectOf(jsonOf(e), `'${e.name}'`);
    if (Array.isArray(o.manifests)) {
      for (const d of o.manifests) {
        const descriptor = objectOf(d, "OCI descriptor");
        const child = byName.get(blobPathOf(descriptor.digest));
        // A platform left out of the tarball (docker save --platform) is named but absent: nothing to edit.
        if (child === undefined || !isJsonDescriptor(descriptor)) continue;
        collect(resolve(child.name), depth + 1);
      }
    }
    if (Array.isArray(o.layers) && docker === undefined) {
      const config = o.config === undefined ? undefined : resolve(blobPathOf(objectOf(o.config, "config descriptor").digest)).name;
      images.push({ config, layers: o.layers.map((l) => resolve(blobPathOf(objectOf(l, "layer descriptor").digest)).name) });
    }
  };
  if (ociIndex !== undefined) collect(ociIndex, 0);
  if (docker === undefined && ociIndex === undefined) throw bad(`${path}: neither manifest.json nor index.json`);

  const edits: FileEdit<P>[] = [];
  let members = 0;
  let withDeviceCode = 0;
  const layers = new Map<string, LayerResult | undefined>();
  const replacements = new Map<string, Replacement>();

  // Layers, top down per image; a layer shared by images is rewritten once, seen from the first image listing it.
  for (const image of images) {
    const stack = new LayerStack();
    for (let layer = image.layers.length - 1; layer >= 0; layer--) {
      const name = image.layers[layer]!;
      const visible = (entry: TarEntry) => stack.offer(entry.name, layer, entry.headerOffset, entry.type === "directory");
      if (layers.has(name)) {
        // Seen already: its entries still cover the layers below them in this image.
        await offerOnly(byName.get(name)!, visible);
        continue;
      }
      const blob = byName.get(name)!.source();
      const method = compressionOf(readExact(blob, 0, Math.min(blob.size, 16)));
      const oldDiff = createHash("sha256");
      const stream = sourceChunks(blob);
      const reader = ChunkReader.ofStream(hashed(method === undefined ? stream : nodeDecoders().decode(method, stream), oldDiff));
      const tarPath = join(folder, `layer-${layers.size}.tar`);
      const fd = openSync(tarPath, "w");
      const newDiff = createHash("sha256");
      const found = { names: 0, edits: [] as FileEdit<P>[], files: [] as EditedFile[], entries: 0 };
      const label = `${path}!${name}`;
      try {
        const encoder: Encoder = { write: async (b) => { newDiff.update(b); writeSync(fd, b); }, end: async () => {} };
        await rewriteDataTar(reader, encoder, label, folder, { ...options, visible }, found);
      } finally {
        await reader.close();
        closeSync(fd);
      }
      members += found.entries;
      withDeviceCode += found.names;
      edits.push(...found.edits);
      const failed = found.edits.find((f) => f.error !== undefined);
      if (failed !== undefined) throw failed.error!;
      if (found.files.length === 0) {
        rmSync(tarPath, { force: true });
        layers.set(name, undefined);
        continue;
      }
      const blobFile = join(folder, `blob-${layers.size}`);
      await compressLayer(method, tarPath, blobFile, label);
      const newDiffId = `sha256:${newDiff.digest("hex")}`;
      await verifyLayer(blobFile, method, label, newDiffId, found.entries, found.files);
      rmSync(tarPath, { force: true });
      const oldHash = createHash("sha256");
      for await (const chunk of sourceChunks(blob)) oldHash.update(chunk);
      const oldDigest = `sha256:${oldHash.digest("hex")}`;
      checkNamedDigest(path, name, oldDigest);
      const result: LayerResult = {
        blob: blobFile, oldDigest, oldDiffId: `sha256:${oldDiff.digest("hex")}`, newDiffId,
        digest: hashFile(blobFile), size: statSync(blobFile).size,
      };
      layers.set(name, result);
      replacements.set(name, { name: renamed(name, result.oldDigest, result.digest), size: result.size, digest: result.digest, file: blobFile });
    }
  }
  options.check?.(edits);

  // The JSON, bottom up: configs, manifests, indexes; then index.json and manifest.json.
  const digests = new Map<string, { digest: string; size: number }>();
  const diffIds = new Map<string, string>();
  for (const result of layers.values()) {
    if (result === undefined) continue;
    digests.set(result.oldDigest, { digest: result.digest, size: result.size });
    diffIds.set(result.oldDiffId, result.newDiffId);
  }
  const rewrittenJson: string[] = [];
  const replaceJson = (e: StoreEntry, value: unknown, named: boolean, kind: string) => {
    const bytes = new TextEncoder().encode(JSON.stringify(value));
    const digest = sha256(bytes);
    const oldDigest = sha256(bytesOf(e));
    if (named) checkNamedDigest(path, e.name, oldDigest);
    if (named) digests.set(oldDigest, { digest, size: bytes.length });
    replacements.set(e.name, { name: named ? renamed(e.name, oldDigest, digest) : e.name, size: bytes.length, digest, bytes });
    rewrittenJson.push(kind);
  };
  if (replacements.size > 0) {
    for (const image of images) {
      image.layers.forEach((layer, i) => {
        const result = layers.get(layer);
        if (result === undefined || image.config === undefined) return;
        const config = objectOf(jsonOf(byName.get(image.config)!), `'${image.config}'`);
        if (config.rootfs === undefined) throw bad(`${path}: '${image.config}' has no rootfs.diff_ids`);
        const ids = objectOf(config.rootfs, `'${image.config}' rootfs`).diff_ids;
        if (!Array.isArray(ids) || ids.length !== image.layers.length) throw bad(`${path}: '${image.config}' has ${Array.isArray(ids) ? ids.length : "no"} diff_ids for ${image.layers.length} layers`);
        if (ids[i] !== result.oldDiffId) throw new OffloadKitError("IMAGE_BAD_DIGEST", `${path}: '${layer}' decodes to ${result.oldDiffId}, but '${image.config}' says diff_ids[${i}] is ${String(ids[i])}`);
      });
      if (image.config === undefined || replacements.has(image.config)) continue;
      const e = byName.get(image.config)!;
      const config = objectOf(jsonOf(e), `'${e.name}'`);
      const rootfs = objectOf(config.rootfs, `'${e.name}' rootfs`);
      if (!Array.isArray(rootfs.diff_ids) || !rootfs.diff_ids.some((d) => diffIds.has(d))) continue;
      rootfs.diff_ids = rootfs.diff_ids.map((d) => diffIds.get(d) ?? d);
      replaceJson(e, config, true, "config");
    }
    // Manifests and indexes from the leaves up (a post-order walk from index.json).
    const done = new Set<string>();
    const rewrite = (e: StoreEntry, top: boolean): void => {
      if (done.has(e.name)) return;
      done.add(e.name);
      const o = objectOf(jsonOf(e), `'${e.name}'`);
      for (const d of Array.isArray(o.manifests) ? o.manifests : []) {
        const descriptor = objectOf(d, "OCI descriptor");
        const child = byName.get(blobPathOf(descriptor.digest));
        if (child !== undefined && isJsonDescriptor(descriptor)) rewrite(resolve(child.name), false);
      }
      if (replaceDescriptors(o, digests)) replaceJson(e, o, !top, top ? e.name : Array.isArray(o.manifests) ? "index" : "manifest");
    };
    if (ociIndex !== undefined) rewrite(ociIndex, true);
    if (docker !== undefined) {
      const list = jsonOf(docker) as Record<string, unknown>[];
      for (const item of list) {
        const rename = (p: string) => replacements.get(resolve(p).name)?.name ?? p;
        if (typeof item.Config === "string") item.Config = rename(item.Config);
        item.Layers = (item.Layers as string[]).map(rename);
        if (typeof item.LayerSources === "object" && item.LayerSources !== null) {
          item.LayerSources = Object.fromEntries(Object.entries(item.LayerSources as Record<string, unknown>).map(([k, v]) => {
            replaceDescriptors(v, digests);
            return [diffIds.get(k) ?? k, v];
          }));
        }
      }
      replaceJson(docker, list, false, "manifest.json");
    }
  }

  // Links to a blob that is renamed would dangle.
  for (const e of byName.values()) {
    if (e.link === undefined) continue;
    const target = resolve(e.name);
    const r = replacements.get(target.name);
    if (r !== undefined && r.name !== target.name) throw new OffloadKitError("IMAGE_UNSUPPORTED", `${path}: '${e.name}' links to '${target.name}', which is renamed to its new digest; links to blobs are not rewritten`);
  }
  const changed = [...layers].filter(([, r]) => r !== undefined) as [string, LayerResult][];
  return { edits, members, withDeviceCode, replacements, changed, rewrittenJson };
}

/** Edits `path` (an image tarball) with `plan`, writing the new image to `output` (undefined: a dry run). */
export async function editImagePackage<P extends PlannedEdit>(path: string, output: string | undefined, options: EditOptions<P>): Promise<ImagePackageEdit<P>> {
  return editImageTarball(path, output, options, { input: path, output });
}

/**
 * The image tarball `path` edited into `output`; `names` are what messages and the report call them (a
 * compressed image's scratch tar is named as the package it was decoded from).
 */
async function editImageTarball<P extends PlannedEdit>(path: string, output: string | undefined, options: EditOptions<P>, names: { readonly input: string; readonly output: string | undefined }): Promise<ImagePackageEdit<P>> {
  const label = names.input;
  const source = FileSource.open(path);
  let scratch: string | undefined;
  try {
    const mode = statSync(path).mode & 0o7777;
    const { entries } = await indexOuterTar(source);
    const byName = new Map<string, StoreEntry>(entries.map((e) => [e.name, {
      name: e.name, size: e.entry.size, offset: e.entry.dataOffset,
      link: e.entry.type === "symlink" || e.entry.type === "hardlink" ? { target: e.entry.linkName, symbolic: e.entry.type === "symlink" } : undefined,
      source: () => sliceSource(source, e.entry.dataOffset, e.entry.size),
    }]));
    const outer = new Map(entries.map((e) => [e.name, e]));
    scratch = createNamedTemporary(tmpdir(), () => mkdtempSync(join(tmpdir(), `offload-kit-${process.pid}-image-`)));
    const { edits, members, withDeviceCode, replacements, changed, rewrittenJson } = await planImage(label, byName, scratch, options);
    // Each replaced entry's headers (pax and GNU long-name records, then its own) for its new name and size.
    const headers = new Map<string, Uint8Array>();
    for (const [name, r] of replacements) {
      const e = outer.get(name)!;
      if (r.name !== name && outer.has(r.name)) throw new OffloadKitError("IMAGE_UNSUPPORTED", `${label}: '${name}' would be renamed '${r.name}', which the tarball already holds`);
      // The name as recorded keeps what layerPath took off its front (`./`).
      const recorded = r.name === name ? undefined : `${e.entry.name.endsWith(name) ? e.entry.name.slice(0, e.entry.name.length - name.length) : ""}${r.name}`;
      headers.set(name, rewriteEntryHeaders(readExact(source, e.start, e.entry.dataOffset - e.start), { name: recorded, size: r.size }, `${label}!${name}`));
    }
    const pad = (n: number) => (TAR_BLOCK - (n % TAR_BLOCK)) % TAR_BLOCK;
    let outputSize = source.size;
    for (const [name, r] of replacements) {
      const e = outer.get(name)!;
      outputSize += headers.get(name)!.length + r.size + pad(r.size) - (e.end - e.start);
    }
    const ordered = entries.filter((e) => replacements.has(e.name));
    if (output !== undefined) {
      outputSize = withOutputs((open) => {
        const out = open(output, { bufferSize: 1 << 20 });
        if (ordered.length === 0) copyRange(engine(), source, 0, source.size, out);
        else {
          let at = 0;
          for (const e of ordered) {
            const r = replacements.get(e.name)!;
            copyRange(engine(), source, at, e.start - at, out);
            out.write(headers.get(e.name)!);
            if (r.bytes !== undefined) out.write(r.bytes);
            else for (const chunk of fileChunks(r.file!)) out.write(chunk);
            out.writeZeros(pad(r.size));
            at = e.end;
          }
          copyRange(engine(), source, at, source.size - at, out);
        }
        const size = out.position;
        out.close();
        if (out.tempPath !== undefined) {
          chmodSync(out.tempPath, mode);
          if (ordered.length > 0) verifyImageTar(out.tempPath, names.output ?? output, replacements);
        }
        return size;
      });
    }
    const shown = names.output;
    const packageEdits = edits.map((e) => ({ ...e, output: shown === undefined || e.planned?.plan === undefined ? undefined : memberOutput(e.input.slice(label.length + 1), shown, replacements) }));
    return {
      kind: "image", input: label, output: shown, inputSize: source.size, outputSize, members, withDeviceCode, edits: packageEdits,
      record: recordText(changed.length, rewrittenJson),
      layers: changed.map(([name, r]) => ({ name, from: r.oldDigest, to: r.digest, diffId: r.newDiffId })),
    };
  } finally {
    source.close();
    if (scratch !== undefined) {
      rmSync(scratch, { recursive: true, force: true });
      removeTemporary(scratch);
    }
  }
}

/** The gzip level a stream's header suggests (its XFL byte, RFC 1952): 2 slowest (gzip -9), 4 fastest (-1), else the default 6. */
export function gzipLevelOf(head: Uint8Array): number {
  return head[8] === 2 ? 9 : head[8] === 4 ? 1 : 6;
}

/**
 * A compressed image tarball (`docker save img | gzip`, or zstd, xz, bzip2): decoded into the scratch folder,
 * written there by the image tarball writer, encoded again with its compressor (gzip at the level its header
 * suggests, node:zlib; zstd -3, xz -6, bzip2 -9 as the tarball writer encodes), decoded again and compared
 * with the tar it encodes (sha256), then copied to a temporary file beside `output` and renamed into place.
 * Undefined when the decoded tar is not an image after all (the tarball writer then takes it).
 */
export async function editCompressedImagePackage<P extends PlannedEdit>(path: string, output: string | undefined, options: EditOptions<P>): Promise<(ImagePackageEdit<P> & { readonly compression: Compression }) | undefined> {
  const source = FileSource.open(path);
  const scratch = scratchFolder("image");
  try {
    const mode = statSync(path).mode & 0o7777;
    const head = readExact(source, 0, Math.min(16, source.size));
    const method = compressionOf(head);
    if (method === undefined) return undefined;
    const decoded = join(scratch.path, "decoded.tar");
    const fd = openSync(decoded, "w");
    try {
      for await (const chunk of decodedChunks(source, 0, source.size, method)) writeSync(fd, chunk);
    } finally {
      closeSync(fd);
    }
    if (!(await isImageTar(decoded))) return undefined;
    const written = join(scratch.path, "image.tar");
    const edit = await editImageTarball(decoded, written, options, { input: path, output });
    rmSync(decoded, { force: true });
    let result = path;
    if (edit.layers.length > 0) {
      result = join(scratch.path, "image.tar.encoded");
      const out = openSync(result, "w");
      try {
        const encoder = method === "gzip" ? gzipEncoder(out, gzipLevelOf(head)) : openEncoder(method, out, tarEncoder(method, path, false));
        try {
          for (const chunk of fileChunks(written)) await encoder.write(chunk.slice());
        } finally {
          await encoder.end();
        }
      } finally {
        closeSync(out);
      }
      // Read back: the encoded stream decodes to the image tar that was written and checked.
      const hash = createHash("sha256");
      const encoded = FileSource.open(result);
      try {
        for await (const chunk of decodedChunks(encoded, 0, encoded.size, method)) hash.update(chunk);
      } finally {
        encoded.close();
      }
      if (hash.digest("hex") !== fileSha256(written)) throw new OffloadKitError("VERIFY_FAILED", `${output ?? path}: the ${method} stream written does not decode to the image written, nothing was put in place`);
    }
    const outputSize = statSync(result).size;
    if (output !== undefined) {
      const expected = fileSha256(result);
      withOutputs((open) => {
        const out = open(output, { bufferSize: 1 << 20 });
        for (const chunk of fileChunks(result)) out.write(chunk);
        out.close();
        if (out.tempPath !== undefined) {
          chmodSync(out.tempPath, mode);
          if (fileSha256(out.tempPath) !== expected) throw new OffloadKitError("VERIFY_FAILED", `${output}: the written image is not the one encoded, nothing was put in place`);
        }
      });
    }
    return { ...edit, inputSize: source.size, outputSize, compression: method };
  } finally {
    source.close();
    scratch.done();
  }
}

/** node:zlib's gzip at `level` writing into the open file `fd`, fed with backpressure. */
function gzipEncoder(fd: number, level: number): Encoder {
  const gzip = createGzip({ level });
  let error: Error | undefined;
  gzip.on("data", (chunk: Buffer) => writeSync(fd, chunk));
  const done = new Promise<void>((resolve, reject) => {
    gzip.on("end", resolve);
    gzip.on("error", (e) => reject((error = e)));
  });
  done.catch(() => {});
  return {
    write: (b) => new Promise((resolve, reject) => {
      if (error !== undefined) return reject(error);
      if (gzip.write(b)) resolve();
      else gzip.once("drain", () => resolve());
    }),
    end: async () => {
      gzip.end();
      await done;
    },
  };
}

/** `out.tar!blobs/sha256/<new digest>!usr/lib/x.so`: an edited member's name in the output, under its layer's new name. */
function memberOutput(inside: string, output: string, replacements: ReadonlyMap<string, Replacement>): string {
  const bang = inside.indexOf("!");
  const layer = bang < 0 ? inside : inside.slice(0, bang);
  return `${output}!${replacements.get(layer)?.name ?? layer}${bang < 0 ? "" : inside.slice(bang)}`;
}

/** `1 layer, 1 config, 1 manifest, index.json`: what the report says was rewritten. */
function recordText(layers: number, json: readonly string[]): string | undefined {
  if (layers === 0) return undefined;
  const count = (kind: string, plural: string) => {
    const n = json.filter((k) => k === kind).length;
    return n === 0 ? [] : [`${n} ${n === 1 ? kind : plural}`];
  };
  const named = json.filter((k) => k.endsWith(".json"));
  return [`${layers} ${layers === 1 ? "layer" : "layers"}`, ...count("config", "configs"), ...count("manifest", "manifests"), ...count("index", "indexes"), ...named].join(", ");
}

/** Offers a layer's entries to the stack without editing (a layer shared with an image already done). */
async function offerOnly(e: StoreEntry, visible: (entry: TarEntry) => boolean): Promise<void> {
  const blob = e.source();
  const method = compressionOf(readExact(blob, 0, Math.min(blob.size, 16)));
  const stream = sourceChunks(blob);
  const reader = ChunkReader.ofStream(method === undefined ? stream : nodeDecoders().decode(method, stream));
  try {
    for await (const entry of walkTar(reader)) visible(entry);
  } finally {
    await reader.close();
  }
}

/** Whether a descriptor names a manifest or an index (JSON to walk), by its media type; none given: try it. */
function isJsonDescriptor(descriptor: Record<string, unknown>): boolean {
  const type = descriptor.mediaType;
  return type === undefined || (typeof type === "string" && /manifest|index/.test(type));
}

/** Sets the digest and size of every descriptor (at any depth) whose digest `digests` maps; whether any was. */
function replaceDescriptors(value: unknown, digests: ReadonlyMap<string, { digest: string; size: number }>): boolean {
  if (typeof value !== "object" || value === null) return false;
  let changed = false;
  if (Array.isArray(value)) {
    for (const item of value) changed = replaceDescriptors(item, digests) || changed;
    return changed;
  }
  const o = value as Record<string, unknown>;
  const now = typeof o.digest === "string" ? digests.get(o.digest) : undefined;
  if (now !== undefined) {
    o.digest = now.digest;
    if ("size" in o) o.size = now.size;
    changed = true;
  }
  for (const [key, child] of Object.entries(o)) if (key !== "digest") changed = replaceDescriptors(child, digests) || changed;
  return changed;
}

/**
 * A blob named by its digest (`blobs/sha256/<hex>`, `<hex>.json`) that is replaced must hold that digest: the
 * descriptors naming it are followed to its new digest by its bytes, so a blob whose bytes are not its name
 * would be written under a name that is not its digest, and the descriptors naming it left stale.
 */
function checkNamedDigest(label: string, name: string, actual: string): void {
  const hex = /^blobs\/sha256\/([0-9a-f]{64})$/.exec(name)?.[1] ?? /^([0-9a-f]{64})\.json$/.exec(name)?.[1];
  if (hex !== undefined && `sha256:${hex}` !== actual) {
    throw new OffloadKitError("IMAGE_BAD_DIGEST", `${label}: '${name}' is named by sha256:${hex}, but its bytes' sha256 is ${actual}`);
  }
}

/** A blob's path after its digest changed: `blobs/sha256/<hex>` and `<hex>.json` follow it; other paths stay. */
function renamed(name: string, oldDigest: string, digest: string): string {
  const oldHex = oldDigest.slice("sha256:".length);
  const hex = digest.slice("sha256:".length);
  if (name === `blobs/sha256/${oldHex}`) return `blobs/sha256/${hex}`;
  if (name === `${oldHex}.json`) return `${hex}.json`;
  return name;
}

/**
 * The written tarball read back: every replaced entry under its new name with the bytes whose sha256 its
 * digest says, and every descriptor in index.json, the manifests and manifest.json naming an entry that is
 * there with the size it says.
 */
function verifyImageTar(tempPath: string, output: string, replacements: ReadonlyMap<string, Replacement>): void {
  const fail = (message: string) => new OffloadKitError("VERIFY_FAILED", `${output}: the written image is wrong, nothing was put in place: ${message}`);
  const written = FileSource.open(tempPath);
  try {
    const names = new Map<string, { offset: number; size: number }>();
    // pax `path`/`size` and GNU long names apply to the next entry, as tar reads them.
    let next: { path?: string; size?: string } = {};
    let at = 0;
    while (at + TAR_BLOCK <= written.size) {
      const header = readExact(written, at, TAR_BLOCK);
      if (header.every((b) => b === 0)) break;
      const nul = header.indexOf(0);
      const raw = new TextDecoder().decode(header.subarray(0, nul < 0 || nul > 100 ? 100 : nul));
      const prefix = String.fromCharCode(...header.subarray(257, 263)) === "ustar\0" ? new TextDecoder().decode(header.subarray(345, 500)).replace(/\0.*$/s, "") : "";
      let size = (header[124]! & 0x80) !== 0
        ? header.subarray(125, 136).reduce((n, b) => n * 256 + b, 0)
        : parseInt(String.fromCharCode(...header.subarray(124, 136)).replace(/[\0 ]/g, "") || "0", 8);
      const type = String.fromCharCode(header[156]!);
      if (type === "x" || type === "L") {
        if (size > MAX_JSON) throw fail(`a ${type === "x" ? "pax" : "long-name"} record of ${size} bytes at ${at}`);
        const body = readExact(written, at + TAR_BLOCK, size);
        if (type === "L") next = { ...next, path: new TextDecoder().decode(body).replace(/\0.*$/s, "") };
        else {
          const values = paxValues(body, output);
          next = { path: values.get("path") ?? next.path, size: values.get("size") ?? next.size };
        }
      } else if (type !== "g" && type !== "K") {
        if (next.size !== undefined) size = Number(next.size);
        names.set(layerPath(next.path ?? (prefix === "" ? raw : `${prefix}/${raw}`)), { offset: at + TAR_BLOCK, size: type === "0" || type === "\0" ? size : 0 });
        next = {};
      }
      at += TAR_BLOCK + size + ((TAR_BLOCK - (size % TAR_BLOCK)) % TAR_BLOCK);
    }
    const digestAt = (where: { offset: number; size: number }) => {
      const hash = createHash("sha256");
      for (let i = 0; i < where.size; i += CHUNK) hash.update(readExact(written, where.offset + i, Math.min(CHUNK, where.size - i)));
      return `sha256:${hash.digest("hex")}`;
    };
    for (const r of replacements.values()) {
      const where = names.get(r.name);
      if (where === undefined) throw fail(`'${r.name}' is missing`);
      if (where.size !== r.size || digestAt(where) !== r.digest) throw fail(`'${r.name}' is not the bytes written`);
      if (r.bytes === undefined) continue;
      const check = (value: unknown): void => {
        if (typeof value !== "object" || value === null) return;
        for (const child of Object.values(value)) check(child);
        const o = value as Record<string, unknown>;
        if (typeof o.digest !== "string" || typeof o.size !== "number" || !o.digest.startsWith("sha256:")) return;
        const blob = names.get(blobPathOf(o.digest));
        // A blob the input left out (another platform) is left out still; one that is there has the size named.
        if (blob !== undefined && blob.size !== o.size) throw fail(`'${r.name}' names ${o.digest} of ${o.size} bytes, but the blob has ${blob.size}`);
      };
      check(JSON.parse(new TextDecoder().decode(r.bytes)));
    }
  } finally {
    written.close();
  }
}

/** Whether `path` is an OCI image layout folder (oci-layout and index.json in it). */
export function isImageLayout(path: string): boolean {
  try {
    return statSync(path).isDirectory() && statSync(join(path, "oci-layout")).isFile() && statSync(join(path, "index.json")).isFile();
  } catch {
    return false;
  }
}

/** A layout folder's files (its top level and everything under blobs/), links not followed. */
function layoutFiles(dir: string, opened: FileSource[]): Map<string, StoreEntry> {
  const files = new Map<string, StoreEntry>();
  const visit = (relative: string) => {
    for (const item of readdirSync(join(dir, relative), { withFileTypes: true })) {
      const name = relative === "" ? item.name : `${relative}/${item.name}`;
      if (item.isDirectory()) {
        if (relative !== "" || item.name === "blobs") visit(name);
        continue;
      }
      const full = join(dir, name);
      if (item.isSymbolicLink()) {
        files.set(name, { name, size: 0, offset: 0, link: { target: readlinkSync(full), symbolic: true }, source: () => { throw new Error("a link has no bytes"); } });
        continue;
      }
      if (!item.isFile()) continue;
      let source: FileSource | undefined;
      files.set(name, {
        name, size: statSync(full).size, offset: 0,
        source: () => {
          if (source === undefined) opened.push((source = FileSource.open(full)));
          return source;
        },
      });
    }
  };
  visit("");
  return files;
}

/**
 * Edits the OCI layout folder `path`. `output` undefined: a dry run; `output` = `path`: in place, new blobs
 * written beside the old ones (each through a temporary name), read back, then index.json (and docker's
 * manifest.json) renamed over the old ones, the commit point, and only then the replaced blobs removed; else a
 * new folder mirroring it (unchanged files hard-linked, or copied where a link cannot be made or `--copy`
 * says so), built under a temporary name beside it and renamed into place when whole.
 */
export async function editImageLayout<P extends PlannedEdit>(path: string, output: string | undefined, options: EditOptions<P>): Promise<ImagePackageEdit<P>> {
  const opened: FileSource[] = [];
  let scratch: string | undefined;
  let building: string | undefined;
  try {
    const byName = layoutFiles(path, opened);
    const inputSize = [...byName.values()].reduce((n, e) => n + e.size, 0);
    scratch = createNamedTemporary(tmpdir(), () => mkdtempSync(join(tmpdir(), `offload-kit-${process.pid}-image-`)));
    const { edits, members, withDeviceCode, replacements, changed, rewrittenJson } = await planImage(path, byName, scratch, options);
    for (const [name, r] of replacements) {
      if (r.name !== name && byName.has(r.name)) throw new OffloadKitError("IMAGE_UNSUPPORTED", `${path}: '${name}' would be renamed '${r.name}', which the folder already holds`);
    }
    let outputSize = inputSize;
    for (const [name, r] of replacements) outputSize += r.size - byName.get(name)!.size;
    const top = (name: string) => !name.includes("/");
    const writeReplacement = (root: string, r: Replacement) => {
      const to = join(root, r.name);
      const temp = `${to}.offload-kit-${process.pid}.tmp`;
      try {
        if (r.bytes !== undefined) writeFileSync(temp, r.bytes);
        else copyFileSync(r.file!, temp);
        renameSync(temp, to);
      } catch (e) {
        rmSync(temp, { force: true });
        throw fileError(to, e);
      }
    };
    if (output !== undefined && replacements.size > 0) {
      if (resolvePath(output) === resolvePath(path)) {
        // New blobs sit beside the old ones, unreferenced, until index.json names them: on a failure they go again.
        const written: string[] = [];
        try {
          for (const r of replacements.values()) {
            if (top(r.name)) continue;
            written.push(join(path, r.name));
            writeReplacement(path, r);
          }
          verifyLayout(path, replacements, (r) => !top(r.name));
        } catch (e) {
          for (const file of written) rmSync(file, { force: true });
          throw e;
        }
        for (const name of ["manifest.json", "index.json"]) {
          const r = replacements.get(name);
          if (r !== undefined) writeReplacement(path, r);
        }
        for (const [name, r] of replacements) if (r.name !== name) rmSync(join(path, name), { force: true });
      } else {
        if (existsSync(output)) throw new OffloadKitError("OUTPUT_EXISTS", `'${output}' exists; an image layout is written as a new folder`, { field: "--out-dir" });
        building = `${output}.offload-kit-${process.pid}.tmp`;
        for (const e of byName.values()) {
          if (replacements.has(e.name)) continue;
          const to = join(building, e.name);
          mkdirSync(dirname(to), { recursive: true });
          if (e.link !== undefined) symlinkSync(e.link.target, to);
          else if (options.copy === true) copyFileSync(join(path, e.name), to);
          else {
            try {
              linkSync(join(path, e.name), to);
            } catch {
              copyFileSync(join(path, e.name), to);
            }
          }
        }
        for (const r of replacements.values()) {
          mkdirSync(dirname(join(building, r.name)), { recursive: true });
          writeReplacement(building, r);
        }
        verifyLayout(building, replacements, () => true);
        renameSync(building, output);
        building = undefined;
      }
    }
    const packageEdits = edits.map((e) => ({ ...e, output: output === undefined || e.planned?.plan === undefined ? undefined : memberOutput(e.input.slice(path.length + 1), output, replacements) }));
    return {
      kind: "image", input: path, output, inputSize, outputSize, members, withDeviceCode, edits: packageEdits,
      record: recordText(changed.length, rewrittenJson),
      layers: changed.map(([name, r]) => ({ name, from: r.oldDigest, to: r.digest, diffId: r.newDiffId })),
    };
  } finally {
    for (const source of opened) source.close();
    if (building !== undefined) rmSync(building, { recursive: true, force: true });
    if (scratch !== undefined) {
      rmSync(scratch, { recursive: true, force: true });
      removeTemporary(scratch);
    }
  }
}

/** The files written into a layout read back: each one's sha256 its digest, each descriptor in new JSON naming a blob of its size. */
function verifyLayout(root: string, replacements: ReadonlyMap<string, Replacement>, which: (r: Replacement) => boolean): void {
  const fail = (message: string) => new OffloadKitError("VERIFY_FAILED", `${root}: the written image is wrong, nothing was put in place: ${message}`);
  for (const r of replacements.values()) {
    if (!which(r)) continue;
    const full = join(root, r.name);
    if (!existsSync(full) || statSync(full).size !== r.size || hashFile(full) !== r.digest) throw fail(`'${r.name}' is not the bytes written`);
    if (r.bytes === undefined) continue;
    const check = (value: unknown): void => {
      if (typeof value !== "object" || value === null) return;
      for (const child of Object.values(value)) check(child);
      const o = value as Record<string, unknown>;
      if (typeof o.digest !== "string" || typeof o.size !== "number" || !o.digest.startsWith("sha256:")) return;
      const blob = join(root, blobPathOf(o.digest));
      if (existsSync(blob) && statSync(blob).size !== o.size) throw fail(`'${r.name}' names ${o.digest} of ${o.size} bytes, but the blob has ${statSync(blob).size}`);
    };
    check(JSON.parse(new TextDecoder().decode(r.bytes)));
  }
}
