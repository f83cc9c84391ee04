/**
 * The bundler as a library over in-memory bytes: what `offload-bundler` does, for browsers and for
 * callers that already hold the files. Same validation, same IDs, same matching as the CLI; errors are
 * OffloadKitError with LLVM's messages.
 */
import { OffloadKitError } from "../engine/errors.js";
import type { Engine } from "../engine/engine.js";
import type { Codecs } from "../compress/codecs.js";
import { loadBrowserCodecs } from "../compress/browser.js";
import { CCOB_MIN_SIZE, CompressionMethod, isCompressedBundle, walkCcobs } from "../formats/ccob.js";
import type { CcobVersion } from "../formats/ccob.js";
import {
  DEFAULT_MAX_DECOMPRESSED_SIZE,
  DEFAULT_ZLIB_LEVEL,
  DEFAULT_ZSTD_LEVEL,
  ccobBytes,
  compressBundleBytes,
  decodeCcobMemberBytes,
} from "./compressed.js";
import { writeBinaryBundle } from "../formats/bundle.js";
import { writeTextBundle } from "../formats/text-bundle.js";
import type { BundlerOptions } from "./options.js";
import { validateBundlerOptions } from "./options.js";
import { bytesSource } from "../engine/source.js";
import { bundleObject, hostObject, isObjectHostEntry, noHostForObject, objectBundleEntries } from "./object-bundle.js";
import { fileTypeOrThrow, planAroundDamage, readBundleIndex } from "./read.js";
import { planUnbundle } from "./unbundle-plan.js";

export interface BundleRequest {
  /** The -type: i ii cui hipi d ll bc s o gch ast. */
  readonly type: string;
  /** -targets, as typed (normalised to LLVM 19's stored IDs). */
  readonly targets: readonly string[];
  /** One input per target. */
  readonly inputs: readonly Uint8Array[];
  readonly bundleAlign?: number;
}

function validated(options: BundlerOptions) {
  const validation = validateBundlerOptions(options);
  if (validation.job === undefined) throw new OffloadKitError("BAD_OPTIONS", validation.error ?? "invalid options");
  return validation.job;
}

/** Bundles in memory; byte-identical to `clang-offload-bundler` 19 (binary, text, and ELF fat objects for -type=o). */
export function bundle(request: BundleRequest): Uint8Array {
  const job = validated({
    type: request.type,
    targets: [...request.targets],
    input: request.inputs.map((_, i) => `input ${i}`),
    output: ["output"],
    bundleAlign: request.bundleAlign,
  });
  const info = fileTypeOrThrow(job.type);
  // An ELF host object (-type=o) keeps the bundle in sections, as clang-offload-bundler's llvm-objcopy run does.
  if (info.object && objectBundleEntries(bytesSource(request.inputs[job.allowNoHost ? 0 : Math.max(job.hostInputIndex, 0)])) !== undefined) {
    if (job.hostInputIndex < 0) throw noHostForObject();
    return bundleObject(request.inputs[job.hostInputIndex], job.targets, job.hostInputIndex, (i) => request.inputs[i]);
  }
  const entries = job.targets.map((id, i) => ({ id, data: request.inputs[i] }));
  return info.comment !== undefined ? writeTextBundle(info.comment, entries) : writeBinaryBundle(entries, job.bundleAlign);
}

export interface UnbundleRequest {
  readonly type: string;
  readonly targets: readonly string[];
  readonly allowMissingBundles?: boolean;
  readonly hipOpenmpCompatible?: boolean;
  readonly engine?: Engine;
}

/** The synchronous readers cannot decompress (the codecs load asynchronously): say so instead of "no bundle". */
function refuseCompressed(input: Uint8Array): void {
  if (input.length >= CCOB_MIN_SIZE && isCompressedBundle(input)) {
    throw new OffloadKitError("COMPRESSED_INPUT", "the input is a compressed offload bundle (CCOB): decompress it first with decompressBundle()");
  }
}

/** Unbundles in memory: one output per requested target, in -targets order (views into `input`). */
export function unbundle(input: Uint8Array, request: UnbundleRequest): Uint8Array[] {
  refuseCompressed(input);
  const job = validated({
    type: request.type,
    targets: [...request.targets],
    input: ["input"],
    output: request.targets.map((_, i) => `output ${i}`),
    unbundle: true,
    allowMissingBundles: request.allowMissingBundles,
    hipOpenmpCompatible: request.hipOpenmpCompatible,
  });
  const index = readBundleIndex(input, job.type, request.engine, { lenient: true });
  const outputs: Uint8Array[] = job.targets.map(() => new Uint8Array(0));
  for (const write of planAroundDamage(index, () => planUnbundle(index.visitOrder, job))) {
    const content = write.content;
    if (content.kind === "entry" && index.handler === "object" && isObjectHostEntry(bytesSource(input), content.entry)) outputs[write.target] = hostObject(input);
    else if (content.kind === "entry") outputs[write.target] = input.subarray(content.entry.offset, content.entry.offset + content.entry.size);
    else if (content.kind === "whole-input") outputs[write.target] = input;
  }
  return outputs;
}

/** The bundle entry IDs of an in-memory bundle, in file order. */
export function listBundleIds(input: Uint8Array, type: string, engine?: Engine): string[] {
  refuseCompressed(input);
  return readBundleIndex(input, type, engine).entries.map((e) => e.id);
}

export interface CompressOptions {
  /** CCOB format version: 2 (LLVM 19's, the default) or 3 (LLVM 22's); 1 only for tests of old readers. */
  readonly version?: CcobVersion;
  readonly method?: "zstd" | "zlib";
  /** Default: zstd 3, zlib 6 (LLVM's). */
  readonly level?: number;
  /** Codecs to use; default the browser-safe ones (libzstd WebAssembly, fflate, hash-wasm). */
  readonly codecs?: Codecs;
}

/**
 * Compresses an uncompressed bundle as `clang-offload-bundler -compress` does (CompressedOffloadBundle::
 * compress): same header and hash, contents that LLVM 19 (v2) and 22 (v3) decompress. Asynchronous only
 * because the WebAssembly codecs load asynchronously; the work itself is synchronous.
 */
export async function compressBundle(bundle: Uint8Array, options: CompressOptions = {}): Promise<Uint8Array> {
  const codecs = options.codecs ?? (await loadBrowserCodecs());
  const method = options.method === "zlib" ? CompressionMethod.Zlib : CompressionMethod.Zstd;
  const level = options.level ?? (method === CompressionMethod.Zlib ? DEFAULT_ZLIB_LEVEL : DEFAULT_ZSTD_LEVEL);
  return ccobBytes(compressBundleBytes(bundle, codecs, { version: options.version ?? 2, method, level }));
}

export interface DecompressOptions {
  /** Refuse compressed bundles declaring more than this many bytes (default 16 GiB), before allocating. */
  readonly maxDecompressedSize?: number;
  readonly codecs?: Codecs;
}

/**
 * The contents of every compressed bundle in `input`, walked by their header sizes (one element for
 * an ordinary file; `input` itself when it is not compressed). Errors are LLVM's
 * ("Failed to decompress input: ...").
 */
export async function decompressBundles(input: Uint8Array, options: DecompressOptions = {}): Promise<Uint8Array[]> {
  if (input.length < CCOB_MIN_SIZE || !isCompressedBundle(input)) return [input];
  const codecs = options.codecs ?? (await loadBrowserCodecs());
  const readAt = (position: number, length: number) => input.subarray(position, position + length);
  let walk;
  try {
    walk = walkCcobs(readAt, input.length);
  } catch (e) {
    if (e instanceof OffloadKitError) throw new OffloadKitError(e.code, `Failed to decompress input: ${e.message}`, { offset: e.offset, field: e.field });
    throw e;
  }
  const limits = { maxDecompressedSize: options.maxDecompressedSize ?? DEFAULT_MAX_DECOMPRESSED_SIZE };
  return walk.members.map((member) => decodeCcobMemberBytes(readAt, member, codecs, limits));
}

/** The first compressed bundle's contents (what clang-offload-bundler unbundles), or `input` itself. */
export async function decompressBundle(input: Uint8Array, options: DecompressOptions = {}): Promise<Uint8Array> {
  return (await decompressBundles(input, options))[0];
}
