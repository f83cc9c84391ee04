/**
 * Compressed offload bundles ("CCOB"): clang-offload-bundler's CompressedOffloadBundle
 * (clang/lib/Driver/OffloadBundler.cpp, LLVM 19 and 22; spec bundler.md §5). A CCOB wraps one whole
 * uncompressed bundle (binary or text) in a small header followed directly by a zlib or zstd stream.
 *
 * Header, little-endian and packed:
 *
 * | offset | v1 | v2 | v3 | field |
 * |---|---|---|---|---|
 * | 0 | 4 | 4 | 4 | magic `CCOB` |
 * | 4 | u16 | u16 | u16 | version (1, 2, 3) |
 * | 6 | u16 | u16 | u16 | method: 0 = zlib, 1 = zstd (llvm::compression::Format) |
 * | 8 | — | u32 | u64 | total size: header + compressed stream |
 * | 8 / 12 / 16 | u32 | u32 | u64 | uncompressed size |
 * | 12 / 16 / 24 | u64 | u64 | u64 | hash: MD5 of the uncompressed bundle, bytes 0..7 (MD5Result::low()) |
 * | | **20** | **24** | **32** | header size |
 *
 * What LLVM does with the fields, as observed with clang-offload-bundler 19.1.7 and 22.1.8:
 * - The hash is never checked; only `-verbose` recomputes it and prints `Hashes match: No`.
 * - The total size is ignored by both releases when reading: the compressed stream is everything after
 *   the header (so bytes after it make zstd fail with "Src size is incorrect"). Upstream after 22 reads
 *   exactly `total - header` bytes. We walk by the total size (that is how several CCOBs in one blob
 *   are told apart) and fall back to "everything after the header" when the total is impossible
 *   (smaller than the header or past the end), which is what 19 does with every file.
 * - The uncompressed size is the decoder's output capacity: a stream that inflates to more fails
 *   ("Destination buffer is too small", zlib Z_BUF_ERROR); one that inflates to less is accepted and
 *   the bundle is the shorter output.
 * - Version 1 has no total size, so a v1 CCOB always runs to the end of its blob: nothing can follow it.
 *   (Upstream's `-list` instead cuts a blob at the next `CCOB` bytes, which can occur inside compressed
 *   data; we never search for the magic.) This is the ambiguity of v1 in a concatenation.
 * - 19 reads any version >= 2 with the v2 layout and version 0 with the v1 layout; 22 refuses unknown
 *   versions. We refuse them with upstream's message.
 */
import { OffloadKitError } from "../engine/errors.js";

export const CCOB_MAGIC = new Uint8Array([0x43, 0x43, 0x4f, 0x42]);
/** magic + version + method: what every version shares. */
export const CCOB_COMMON_SIZE = 8;
/** LLVM 19 passes anything shorter than a v1 header through as uncompressed, magic or not. */
export const CCOB_MIN_SIZE = 20;

export const CCOB_HEADER_SIZE: Readonly<Record<CcobVersion, number>> = { 1: 20, 2: 24, 3: 32 };

export type CcobVersion = 1 | 2 | 3;

/** llvm::compression::Format, as stored in the method field. */
export const CompressionMethod = { Zlib: 0, Zstd: 1 } as const;
export type CompressionMethod = (typeof CompressionMethod)[keyof typeof CompressionMethod];

export function compressionMethodName(method: CompressionMethod): "zlib" | "zstd" {
  return method === CompressionMethod.Zlib ? "zlib" : "zstd";
}

/** Largest sizes a v2 header can hold (LLVM refuses to write more). */
export const CCOB_V2_MAX_SIZE = 0xffff_ffff;

export interface CcobHeader {
  readonly version: CcobVersion;
  readonly method: CompressionMethod;
  readonly headerSize: number;
  /** v2/v3 total size as stored (undefined for v1). */
  readonly rawTotalSize: number | undefined;
  readonly uncompressedSize: number;
  /** The stored truncated MD5, as LLVM's u64 (MD5 digest bytes 0..7 read little-endian). */
  readonly hash: bigint;
}

/** Does the input start with the CCOB magic? (llvm::identify_magic looks at these 4 bytes only.) */
export function isCompressedBundle(head: Uint8Array): boolean {
  return head.length >= 4 && head[0] === 0x43 && head[1] === 0x43 && head[2] === 0x4f && head[3] === 0x42;
}

function u64(view: DataView, at: number, field: string, offset: number): number {
  const value = view.getBigUint64(at, true);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new OffloadKitError("CCOB_SIZE_TOO_LARGE", `compressed bundle ${field} ${value} at offset ${offset + at} is too large`, {
      offset: offset + at,
      field,
    });
  }
  return Number(value);
}

/**
 * Parses the header of the CCOB starting at `bytes[0]` (`offset` is where that is in the file, for
 * messages). `available` is how many bytes the blob has from there (defaults to `bytes.length`).
 * Validation order is LLVM's: header size for the version, then the method.
 */
export function parseCcobHeader(bytes: Uint8Array, offset = 0, available = bytes.length): CcobHeader {
  if (!isCompressedBundle(bytes) || bytes.length < CCOB_COMMON_SIZE) {
    throw new OffloadKitError("CCOB_BAD_MAGIC", `no compressed bundle magic at offset ${offset}`, { offset, field: "magic" });
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const rawVersion = view.getUint16(4, true);
  if (rawVersion !== 1 && rawVersion !== 2 && rawVersion !== 3) {
    throw new OffloadKitError("CCOB_UNKNOWN_VERSION", "Unknown compressed bundle version", { offset: offset + 4, field: "version" });
  }
  const version = rawVersion as CcobVersion;
  const headerSize = CCOB_HEADER_SIZE[version];
  if (available < headerSize || bytes.length < headerSize) {
    throw new OffloadKitError("CCOB_HEADER_TOO_SMALL", "Compressed bundle header size too small", { offset, field: "header" });
  }
  const method = view.getUint16(6, true);
  if (method !== CompressionMethod.Zlib && method !== CompressionMethod.Zstd) {
    throw new OffloadKitError("CCOB_UNKNOWN_METHOD", "Unknown compressing method", { offset: offset + 6, field: "method" });
  }
  if (version === 1) {
    return { version, method, headerSize, rawTotalSize: undefined, uncompressedSize: view.getUint32(8, true), hash: view.getBigUint64(12, true) };
  }
  if (version === 2) {
    return {
      version,
      method,
      headerSize,
      rawTotalSize: view.getUint32(8, true),
      uncompressedSize: view.getUint32(12, true),
      hash: view.getBigUint64(16, true),
    };
  }
  return {
    version,
    method,
    headerSize,
    rawTotalSize: u64(view, 8, "total size", offset),
    uncompressedSize: u64(view, 16, "uncompressed size", offset),
    hash: view.getBigUint64(24, true),
  };
}

export interface CcobHeaderFields {
  readonly version: CcobVersion;
  readonly method: CompressionMethod;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  readonly hash: bigint;
}

/** The header LLVM writes for these fields; v2 refuses sizes over 4 GiB with LLVM's messages. */
export function writeCcobHeader(fields: CcobHeaderFields): Uint8Array {
  const headerSize = CCOB_HEADER_SIZE[fields.version];
  const total = headerSize + fields.compressedSize;
  if (fields.version === 2) {
    if (fields.uncompressedSize > CCOB_V2_MAX_SIZE) throw new OffloadKitError("CCOB_V2_LIMIT", "Uncompressed size exceeds version 2 limit");
    if (total > CCOB_V2_MAX_SIZE) throw new OffloadKitError("CCOB_V2_LIMIT", "Total file size exceeds version 2 limit");
  }
  if (fields.version === 1 && fields.uncompressedSize > CCOB_V2_MAX_SIZE) {
    throw new OffloadKitError("CCOB_V1_LIMIT", "Uncompressed size exceeds version 1 limit");
  }
  const out = new Uint8Array(headerSize);
  const view = new DataView(out.buffer);
  out.set(CCOB_MAGIC, 0);
  view.setUint16(4, fields.version, true);
  view.setUint16(6, fields.method, true);
  if (fields.version === 1) {
    view.setUint32(8, fields.uncompressedSize, true);
    view.setBigUint64(12, fields.hash, true);
  } else if (fields.version === 2) {
    view.setUint32(8, total, true);
    view.setUint32(12, fields.uncompressedSize, true);
    view.setBigUint64(16, fields.hash, true);
  } else {
    view.setBigUint64(8, BigInt(total), true);
    view.setBigUint64(16, BigInt(fields.uncompressedSize), true);
    view.setBigUint64(24, fields.hash, true);
  }
  return out;
}

/** LLVM's truncated hash from a full MD5 digest: MD5Result::low(), bytes 0..7 little-endian. */
export function truncatedHash(md5Digest: Uint8Array): bigint {
  return new DataView(md5Digest.buffer, md5Digest.byteOffset, 8).getBigUint64(0, true);
}

/** llvm::format_hex(value, 16): "0x" and at least 14 lowercase hex digits. */
export function formatHash(hash: bigint): string {
  return `0x${hash.toString(16).padStart(14, "0")}`;
}

export interface CcobMember {
  /** Where the CCOB starts in the blob. */
  readonly offset: number;
  readonly header: CcobHeader;
  /** The compressed stream: [dataOffset, dataOffset + dataSize) in the blob. */
  readonly dataOffset: number;
  readonly dataSize: number;
  /** Bytes the member spans (header + stream). */
  readonly size: number;
  /**
   * The stored total size could not be used (smaller than the header or past the end of the blob), so
   * the member runs to the end, as LLVM 19 reads every file. Always false for v1, which has none.
   */
  readonly totalSizeIgnored: boolean;
}

export interface CcobWalk {
  readonly members: readonly CcobMember[];
  /** Zero bytes skipped between or after members (section alignment padding). */
  readonly padding: number;
  /** Bytes after the last member that are neither padding nor a CCOB. */
  readonly trailing?: { readonly offset: number; readonly size: number };
}

/** Reads `length` bytes at `position` of the blob (short only at its end). */
export type ReadAt = (position: number, length: number) => Uint8Array;

const ZERO_SCAN_CHUNK = 64 * 1024;

/**
 * Walks the CCOBs of a blob by the sizes in their headers, never by searching for the magic (which
 * can occur inside compressed data). Zero bytes between members are skipped as padding; anything else
 * after a member ends the walk and is reported as `trailing`. The blob must start with a CCOB.
 */
export function walkCcobs(readAt: ReadAt, size: number): CcobWalk {
  const members: CcobMember[] = [];
  let padding = 0;
  let at = 0;
  while (at < size) {
    const head = readAt(at, Math.min(32, size - at));
    if (!isCompressedBundle(head)) {
      if (members.length === 0) throw new OffloadKitError("CCOB_BAD_MAGIC", `no compressed bundle magic at offset ${at}`, { offset: at, field: "magic" });
      const zeros = countZeros(readAt, at, size);
      padding += zeros;
      at += zeros;
      if (at >= size) break;
      if (isCompressedBundle(readAt(at, Math.min(4, size - at)))) continue;
      return { members, padding, trailing: { offset: at, size: size - at } };
    }
    const header = parseCcobHeader(head, at, size - at);
    const total = header.rawTotalSize;
    const usable = total !== undefined && total >= header.headerSize && total <= size - at;
    const memberSize = usable ? total : size - at;
    members.push({
      offset: at,
      header,
      dataOffset: at + header.headerSize,
      dataSize: memberSize - header.headerSize,
      size: memberSize,
      totalSizeIgnored: total !== undefined && !usable,
    });
    at += memberSize;
  }
  return { members, padding };
}

function countZeros(readAt: ReadAt, from: number, size: number): number {
  let at = from;
  while (at < size) {
    const chunk = readAt(at, Math.min(ZERO_SCAN_CHUNK, size - at));
    const nonZero = chunk.findIndex((b) => b !== 0);
    if (nonZero >= 0) return at + nonZero - from;
    at += chunk.length;
    if (chunk.length === 0) break;
  }
  return at - from;
}
