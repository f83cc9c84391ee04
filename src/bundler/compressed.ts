/**
 * clang-offload-bundler's compression semantics (CompressedOffloadBundle::compress / decompress in
 * clang/lib/Driver/OffloadBundler.cpp; spec bundler.md §5), over the Codecs interface so the same code
 * runs in Node and in browsers: building a CCOB from an uncompressed bundle, decoding one CCOB member
 * into a sink, the -verbose report lines, and the OffloadBundlerConfig environment variables.
 *
 * Frames: LLVM writes the whole bundle as one zstd frame. We do the same up to ZSTD_FRAME_CHUNK and cut
 * larger bundles into one frame per chunk (compressed in parallel in Node, see src/compress/node/compress.ts).
 * ZSTD_decompress, which LLVM calls, decodes concatenated frames as one stream, so LLVM 19 and 22 read
 * these files (test/differential/ccob-native.test.ts). Level 3 without long-distance matching keeps a
 * 2 MiB window, so 8 MiB chunks cost little in ratio.
 */
import { OffloadKitError } from "../engine/errors.js";
import { concatBytes } from "../formats/bytes.js";
import type { Codecs, Md5Hasher } from "../compress/codecs.js";
import { CodecError } from "../compress/codecs.js";
import { walkZstdFrames } from "../compress/zstd-frames.js";
import type { ZstdFrame } from "../compress/zstd-frames.js";
import {
  CCOB_HEADER_SIZE,
  CompressionMethod,
  compressionMethodName,
  formatHash,
  truncatedHash,
  writeCcobHeader,
} from "../formats/ccob.js";
import type { CcobMember, CcobVersion, ReadAt } from "../formats/ccob.js";

/**
 * Frame size of large bundles. In memory (compressBundleBytes) bundles up to this size are one frame,
 * as LLVM writes them; the Node writer keeps one frame up to 32 MiB and uses this size beyond, where
 * frames are compressed in parallel (8 MiB balances two workers better than 32; measured).
 */
export const ZSTD_FRAME_CHUNK = 8 * 1024 * 1024;

/** LLVM's defaults: zstd level 3 (zlib's default, 6, when LLVM is built without zstd). */
export const DEFAULT_ZSTD_LEVEL = 3;
export const DEFAULT_ZLIB_LEVEL = 6;

export interface CompressionSettings {
  readonly version: CcobVersion;
  readonly method: CompressionMethod;
  readonly level: number;
}

export const LLVM19_COMPRESSION: CompressionSettings = { version: 2, method: CompressionMethod.Zstd, level: DEFAULT_ZSTD_LEVEL };

/** Compresses one chunk of a bundle the way `settings` says (one zstd frame, or the whole zlib stream). */
export function compressChunk(codecs: Codecs, settings: CompressionSettings, bytes: Uint8Array): Uint8Array {
  return settings.method === CompressionMethod.Zstd ? codecs.zstdCompress(bytes, settings.level) : codecs.zlibCompress(bytes, settings.level);
}

export interface CompressionResult {
  readonly header: Uint8Array;
  /** The compressed stream, in order (one element per zstd frame). */
  readonly frames: readonly Uint8Array[];
  readonly uncompressedSize: number;
  readonly compressedSize: number;
  readonly hash: bigint;
  /** Seconds spent compressing and hashing (for -verbose). */
  readonly compressSeconds: number;
  readonly hashSeconds: number;
}

function now(): number {
  return typeof performance !== "undefined" ? performance.now() / 1000 : Date.now() / 1000;
}

/** LLVM refuses v2 sizes over 4 GiB before compressing anything; so do we. */
export function checkVersionLimits(version: CcobVersion, uncompressedSize: number): void {
  if (version === 2 && uncompressedSize > 0xffff_ffff) throw new OffloadKitError("CCOB_V2_LIMIT", "Uncompressed size exceeds version 2 limit");
}

/**
 * CompressedOffloadBundle::compress over an in-memory bundle. `frameSize` cuts zstd streams into frames of
 * that many input bytes (default ZSTD_FRAME_CHUNK; Infinity writes one frame, as LLVM does at any size).
 */
export function compressBundleBytes(bundle: Uint8Array, codecs: Codecs, settings: CompressionSettings, frameSize = ZSTD_FRAME_CHUNK): CompressionResult {
  checkVersionLimits(settings.version, bundle.length);
  let t = now();
  const hasher = codecs.md5();
  hasher.update(bundle);
  const hash = truncatedHash(hasher.digest());
  const hashSeconds = now() - t;
  t = now();
  const frames: Uint8Array[] = [];
  if (settings.method === CompressionMethod.Zlib || bundle.length <= frameSize) {
    frames.push(compressChunk(codecs, settings, bundle));
  } else {
    for (let at = 0; at < bundle.length; at += frameSize) {
      frames.push(compressChunk(codecs, settings, bundle.subarray(at, Math.min(bundle.length, at + frameSize))));
    }
  }
  const compressSeconds = now() - t;
  const compressedSize = frames.reduce((n, f) => n + f.length, 0);
  const header = writeCcobHeader({ version: settings.version, method: settings.method, compressedSize, uncompressedSize: bundle.length, hash });
  return { header, frames, uncompressedSize: bundle.length, compressedSize, hash, compressSeconds, hashSeconds };
}

/** Concatenates a CompressionResult into the file bytes. */
export function ccobBytes(result: CompressionResult): Uint8Array {
  const out = new Uint8Array(result.header.length + result.compressedSize);
  out.set(result.header, 0);
  let at = result.header.length;
  for (const frame of result.frames) {
    out.set(frame, at);
    at += frame.length;
  }
  return out;
}

export interface DecompressionLimits {
  /** Refuse members declaring more uncompressed bytes than this, before allocating anything. */
  readonly maxDecompressedSize: number;
}

/** Generous by default, and never more than a JavaScript array can index. */
export const DEFAULT_MAX_DECOMPRESSED_SIZE = 16 * 1024 * 1024 * 1024;

export function checkDeclaredSize(member: CcobMember, limits: DecompressionLimits): void {
  const declared = member.header.uncompressedSize;
  if (declared > limits.maxDecompressedSize) {
    throw new OffloadKitError(
      "CCOB_TOO_LARGE",
      `Failed to decompress input: compressed bundle at offset ${member.offset} declares ${declared} uncompressed bytes, more than the limit of ${limits.maxDecompressedSize}`,
      { offset: member.offset + (member.header.version === 1 ? 8 : member.header.version === 2 ? 12 : 16), field: "uncompressed size" },
    );
  }
}

export interface DecodeResult {
  /** Bytes produced (at most the declared size; fewer is accepted, as LLVM truncates). */
  readonly size: number;
  readonly seconds: number;
}

function decodeError(e: unknown, fallbackOffset: number): never {
  if (e instanceof CodecError) {
    const offset = (e as CodecError & { offset?: number }).offset ?? fallbackOffset;
    throw new OffloadKitError("CCOB_DECOMPRESS", `Failed to decompress input: Could not decompress embedded file contents: ${e.message}`, {
      offset,
      field: "compressed data",
      cause: e,
    });
  }
  throw e;
}

/**
 * Decodes several zstd frames at once (on worker threads in Node), handing the outputs on in order.
 * Only given frames that all record their content size.
 */
export type FrameDecoder = (frames: readonly ZstdFrame[], readAt: ReadAt, emit: (out: Uint8Array) => void) => void;

/**
 * Decodes one CCOB member into `sink`, chunk by chunk (one zstd frame at a time), as
 * llvm::compression::decompress would into a buffer of the declared size. `hasher`, when given, sees
 * every output byte (for -verbose). Check the declared size against a limit first (checkDeclaredSize).
 */
export function decodeCcobMember(
  readAt: ReadAt,
  member: CcobMember,
  codecs: Codecs,
  sink: (chunk: Uint8Array) => void,
  hasher?: Md5Hasher,
  frameDecoder?: FrameDecoder,
): DecodeResult {
  const start = now();
  const capacity = member.header.uncompressedSize;
  let produced = 0;
  const emit = (chunk: Uint8Array) => {
    produced += chunk.length;
    hasher?.update(chunk);
    sink(chunk);
  };
  if (member.header.method === CompressionMethod.Zlib) {
    try {
      emit(codecs.zlibDecompress(readAt(member.dataOffset, member.dataSize), capacity));
    } catch (e) {
      decodeError(e, member.dataOffset);
    }
    return { size: produced, seconds: now() - start };
  }
  let frames;
  try {
    frames = walkZstdFrames(readAt, member.dataOffset, member.dataSize);
  } catch (e) {
    decodeError(e, member.dataOffset);
  }
  // ZSTD_decompress into a buffer of the declared size: refuse up front what would overflow it.
  let known = 0;
  for (const frame of frames) known += frame.contentSize ?? 0;
  if (known > capacity) decodeError(new CodecError("Destination buffer is too small"), member.dataOffset);
  const data = frames.filter((f) => !f.skippable);
  if (frameDecoder !== undefined && data.length > 1 && data.every((f) => f.contentSize !== undefined)) {
    try {
      frameDecoder(data, readAt, emit);
    } catch (e) {
      decodeError(e, member.dataOffset);
    }
    return { size: produced, seconds: now() - start };
  }
  for (const frame of frames) {
    if (frame.skippable) continue;
    try {
      const out = codecs.zstdDecompressFrame(readAt(frame.offset, frame.size), frame.contentSize ?? capacity - produced);
      if (produced + out.length > capacity) throw new CodecError("Destination buffer is too small");
      emit(out);
    } catch (e) {
      decodeError(e, frame.offset);
    }
  }
  return { size: produced, seconds: now() - start };
}

/**
 * One CCOB member decoded into one buffer (in memory: decompressBundles, the browser's readers), its
 * declared size checked against `limits` first. Chunks are gathered rather than a buffer of the declared
 * size allocated: that size is only an upper bound, and a tiny stream may declare gigabytes.
 */
export function decodeCcobMemberBytes(readAt: ReadAt, member: CcobMember, codecs: Codecs, limits: DecompressionLimits, hasher?: Md5Hasher): Uint8Array {
  checkDeclaredSize(member, limits);
  const chunks: Uint8Array[] = [];
  decodeCcobMember(readAt, member, codecs, (chunk) => chunks.push(chunk), hasher);
  return chunks.length === 1 ? chunks[0]! : concatBytes(chunks);
}

/** LLVM's formatWithCommas. */
export function formatWithCommas(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** llvm::format("%.2lf"), which rounds half to even on the binary value like printf. */
function fixed2(value: number): string {
  if (!Number.isFinite(value)) return value > 0 ? "inf" : value < 0 ? "-inf" : "nan";
  return value.toFixed(2);
}

export interface CompressionReport {
  readonly version: CcobVersion;
  readonly method: CompressionMethod;
  readonly level: number;
  readonly uncompressedSize: number;
  readonly compressedSize: number;
  readonly hash: bigint;
  readonly compressSeconds: number;
}

/** The lines CompressedOffloadBundle::compress prints under -verbose. */
export function formatCompressionReport(r: CompressionReport): string {
  const total = CCOB_HEADER_SIZE[r.version] + r.compressedSize;
  const rate = r.uncompressedSize / r.compressedSize;
  const speed = r.uncompressedSize / (1024 * 1024) / r.compressSeconds;
  return (
    `Compressed bundle format version: ${r.version}\n` +
    `Total file size (including headers): ${formatWithCommas(total)} bytes\n` +
    `Compression method used: ${compressionMethodName(r.method)}\n` +
    `Compression level: ${r.level}\n` +
    `Binary size before compression: ${formatWithCommas(r.uncompressedSize)} bytes\n` +
    `Binary size after compression: ${formatWithCommas(r.compressedSize)} bytes\n` +
    `Compression rate: ${fixed2(rate)}\n` +
    `Compression ratio: ${fixed2(100 / rate)}%\n` +
    `Compression speed: ${fixed2(speed)} MB/s\n` +
    `Truncated MD5 hash: ${formatHash(r.hash)}\n`
  );
}

export interface DecompressionReport {
  readonly member: CcobMember;
  readonly seconds: number;
  readonly recalculatedHash: bigint;
}

/** The lines CompressedOffloadBundle::decompress prints under -verbose (sizes as declared, like LLVM). */
export function formatDecompressionReport(r: DecompressionReport): string {
  const h = r.member.header;
  // 19 and 22 count the compressed size as everything after the header.
  const compressed = r.member.dataSize;
  const rate = h.uncompressedSize / compressed;
  const speed = h.uncompressedSize / (1024 * 1024) / r.seconds;
  let out = `Compressed bundle format version: ${h.version}\n`;
  if (h.version >= 2) out += `Total file size (from header): ${formatWithCommas(h.rawTotalSize ?? 0)} bytes\n`;
  out +=
    `Decompression method: ${compressionMethodName(h.method)}\n` +
    `Size before decompression: ${formatWithCommas(compressed)} bytes\n` +
    `Size after decompression: ${formatWithCommas(h.uncompressedSize)} bytes\n` +
    `Compression rate: ${fixed2(rate)}\n` +
    `Compression ratio: ${fixed2(100 / rate)}%\n` +
    `Decompression speed: ${fixed2(speed)} MB/s\n` +
    `Stored hash: ${formatHash(h.hash)}\n` +
    `Recalculated hash: ${formatHash(r.recalculatedHash)}\n` +
    `Hashes match: ${h.hash === r.recalculatedHash ? "Yes" : "No"}\n`;
  return out;
}

export interface TimerLine {
  readonly name: string;
  /** Seconds. */
  readonly user: number;
  readonly system: number;
  readonly wall: number;
}

/**
 * The "Clang Offload Bundler Timer Group" report LLVM prints at exit when -verbose ran a timer
 * (llvm::TimerGroup::PrintQueuedTimers layout). The times are ours, so only the layout matches.
 */
export function formatTimerReport(lines: readonly TimerLine[]): string {
  const sum = (key: "user" | "system" | "wall") => lines.reduce((n, l) => n + l[key], 0);
  const total = { name: "Total", user: sum("user"), system: sum("system"), wall: sum("wall") };
  const cell = (value: number, of: number) => `  ${value.toFixed(4).padStart(7)} (${(of === 0 ? 0 : (value * 100) / of).toFixed(1).padStart(5)}%)`;
  const row = (l: TimerLine) =>
    `${cell(l.user, total.user)}${cell(l.system, total.system)}${cell(l.user + l.system, total.user + total.system)}${cell(l.wall, total.wall)}  ${l.name}\n`;
  const bar = "===-------------------------------------------------------------------------===\n";
  return (
    bar +
    "                     Timer group for clang offload bundler\n" +
    bar +
    `  Total Execution Time: ${(total.user + total.system).toFixed(4)} seconds (${total.wall.toFixed(4)} wall clock)\n\n` +
    "   ---User Time---   --System Time--   --User+System--   ---Wall Time---  --- Name ---\n" +
    [...lines].sort((a, b) => b.wall - a.wall).map(row).join("") +
    row(total) +
    "\n"
  );
}

/** What OffloadBundlerConfig's constructor and main() decide about compression (spec §5.3). */
export interface CompressionConfig {
  readonly compress: boolean;
  readonly verbose: boolean;
  readonly level: number;
  readonly version: CcobVersion;
  /** Printed to stderr as is, before anything else (LLVM prints them while building the config). */
  readonly warnings: readonly string[];
}

/**
 * The environment variables, then the command line. `OFFLOAD_BUNDLER_*` are LLVM 19's. The version
 * selector `COMPRESSED_BUNDLE_FORMAT_VERSION` is LLVM 22's (19 ignores it and always writes v2): we
 * honour it with 22's checks and warnings, keeping 19's default of version 2.
 */
export function compressionConfig(
  env: Readonly<Record<string, string | undefined>>,
  flags: { compress?: boolean; verbose?: boolean; compressionLevel?: number },
): CompressionConfig {
  const warnings: string[] = [];
  let compress = false;
  let verbose = false;
  let level = DEFAULT_ZSTD_LEVEL;
  let version: CcobVersion = 2;
  if (env.OFFLOAD_BUNDLER_IGNORE_ENV_VAR !== "1") {
    if (env.OFFLOAD_BUNDLER_VERBOSE !== undefined) verbose = env.OFFLOAD_BUNDLER_VERBOSE === "1";
    if (env.OFFLOAD_BUNDLER_COMPRESS !== undefined) compress = env.OFFLOAD_BUNDLER_COMPRESS === "1";
    const levelText = env.OFFLOAD_BUNDLER_COMPRESSION_LEVEL;
    if (levelText !== undefined) {
      const parsed = llvmGetAsInteger(levelText);
      if (parsed !== undefined && parsed >= -0x8000_0000 && parsed <= 0x7fff_ffff) level = parsed;
      else warnings.push(`Warning: Invalid value for OFFLOAD_BUNDLER_COMPRESSION_LEVEL: ${levelText}. Ignoring it.\n`);
    }
    const versionText = env.COMPRESSED_BUNDLE_FORMAT_VERSION;
    if (versionText !== undefined) {
      const parsed = llvmGetAsInteger(versionText);
      if (parsed !== undefined && parsed >= 0 && parsed <= 0xffff) {
        if (parsed === 2 || parsed === 3) version = parsed;
        else warnings.push(`Warning: Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: ${versionText}. Valid values are 2 or 3. Using default version ${version}.\n`);
      } else {
        warnings.push(`Warning: Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: ${versionText}. Using default version ${version}.\n`);
      }
    }
  }
  if (flags.compress !== undefined) compress = flags.compress;
  if (flags.verbose !== undefined) verbose = flags.verbose;
  if (flags.compressionLevel !== undefined) level = flags.compressionLevel;
  return { compress, verbose, level, version, warnings };
}

/**
 * StringRef::getAsInteger(10, x): optional sign for signed types, digits only, the whole string, no
 * overflow of 64 bits (the caller narrows). Returns undefined where LLVM returns true (failure).
 */
function llvmGetAsInteger(text: string): number | undefined {
  if (!/^[-+]?[0-9]+$/.test(text) || text.startsWith("+")) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}
