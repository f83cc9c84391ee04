/**
 * Delimiting zstd frames without decoding them (RFC 8878 §3.1): a frame header, then blocks that each
 * state their size in a 3-byte header, then an optional 4-byte checksum; skippable frames state their
 * size directly. This is how a compressed bundle holding several frames (we write one per chunk of a
 * large bundle, see src/bundler/compressed.ts) is split for a decoder that takes one frame at a time,
 * and how a frame's content size is known before anything is allocated.
 *
 * | bytes | field |
 * |---|---|
 * | 4 | magic 0xFD2FB528 (LE); skippable frames 0x184D2A50..5F, then u32 size and that many bytes |
 * | 1 | frame header descriptor: bits 7-6 content-size flag, 5 single segment, 3 reserved, 2 checksum, 1-0 dictionary-ID flag |
 * | 0/1 | window descriptor (absent in single-segment frames) |
 * | 0/1/2/4 | dictionary ID |
 * | 0/1/2/4/8 | content size (2-byte form stores size - 256) |
 * | 3 + n | blocks: u24 LE = last (bit 0), type (bits 1-2: raw, RLE, compressed, reserved), size (bits 3-23); RLE blocks carry 1 byte |
 * | 0/4 | content checksum |
 *
 * Errors carry libzstd's names for the same conditions, since that is what LLVM prints.
 */
import { CodecError } from "./codecs.js";

export const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;

/** libzstd's ZSTD_getErrorName texts for the conditions a reader can meet (zstd_errors.h codes). */
export const ZSTD_ERROR_NAMES: Readonly<Record<number, string>> = {
  1: "Error (generic)",
  10: "Unknown frame descriptor",
  12: "Version not supported",
  14: "Unsupported frame parameter",
  16: "Frame requires too much memory for decoding",
  20: "Data corruption detected",
  22: "Restored data doesn't match checksum",
  64: "Allocation error : not enough memory",
  70: "Destination buffer is too small",
  72: "Src size is incorrect",
};

export function zstdErrorName(code: number): string {
  return ZSTD_ERROR_NAMES[code] ?? `zstd error ${code}`;
}

export interface ZstdFrame {
  /** Absolute position of the frame. */
  readonly offset: number;
  /** Compressed bytes, header to checksum. */
  readonly size: number;
  /** Decompressed size from the header; undefined when the frame does not record it. */
  readonly contentSize: number | undefined;
  readonly skippable: boolean;
  /**
   * The most its blocks can produce: raw and RLE blocks state their output size, a compressed block
   * yields at most ZSTD_BLOCKSIZE_MAX. A decoder's buffer never needs more, whatever the header claims.
   */
  readonly maxOutput: number;
}

/** ZSTD_BLOCKSIZE_MAX: no block decodes to more (RFC 8878 §3.1.1.2.3). */
export const ZSTD_BLOCK_SIZE_MAX = 128 * 1024;

/** Reads up to `length` bytes at `position` (short only at the end of the data). */
export type ReadAt = (position: number, length: number) => Uint8Array;

function fail(code: number, offset: number): never {
  throw Object.assign(new CodecError(zstdErrorName(code)), { offset });
}

/** Every frame in [start, start + length); the frames must tile the range exactly, as ZSTD_decompress requires. */
export function walkZstdFrames(readAt: ReadAt, start: number, length: number): ZstdFrame[] {
  const end = start + length;
  const frames: ZstdFrame[] = [];
  let at = start;
  while (at < end) {
    // ZSTD_decompress: fewer bytes than a frame's minimal header is a size error, not a bad magic.
    if (end - at < 5) fail(72, at);
    const head = readAt(at, Math.min(18, end - at));
    const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
    const magic = view.getUint32(0, true);
    if ((magic & SKIPPABLE_MASK) === SKIPPABLE_MAGIC) {
      if (end - at < 8) fail(72, at);
      const size = 8 + view.getUint32(4, true);
      if (size > end - at) fail(72, at);
      frames.push({ offset: at, size, contentSize: 0, skippable: true, maxOutput: 0 });
      at += size;
      continue;
    }
    if (magic !== ZSTD_MAGIC) fail(10, at);
    const descriptor = head[4];
    if (descriptor & 0x08) fail(14, at);
    const contentSizeFlag = descriptor >> 6;
    const singleSegment = (descriptor >> 5) & 1;
    const checksum = (descriptor >> 2) & 1;
    const dictionaryIdSize = [0, 1, 2, 4][descriptor & 3];
    const contentSizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][contentSizeFlag];
    let position = 5 + (singleSegment ? 0 : 1) + dictionaryIdSize;
    const headerSize = position + contentSizeBytes;
    if (headerSize > end - at || headerSize > head.length) fail(72, at);
    let contentSize: number | undefined;
    if (contentSizeBytes === 1) contentSize = head[position];
    else if (contentSizeBytes === 2) contentSize = view.getUint16(position, true) + 256;
    else if (contentSizeBytes === 4) contentSize = view.getUint32(position, true);
    else if (contentSizeBytes === 8) {
      const big = view.getBigUint64(position, true);
      contentSize = big > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(big);
    }
    position = at + headerSize;
    let maxOutput = 0;
    for (;;) {
      if (end - position < 3) fail(72, position);
      const b = readAt(position, 3);
      const blockHeader = b[0] | (b[1] << 8) | (b[2] << 16);
      const last = blockHeader & 1;
      const type = (blockHeader >> 1) & 3;
      if (type === 3) fail(20, position);
      const payload = type === 1 ? 1 : blockHeader >>> 3;
      maxOutput += type === 2 ? ZSTD_BLOCK_SIZE_MAX : blockHeader >>> 3;
      position += 3 + payload;
      if (position > end) fail(72, position);
      if (last) break;
    }
    if (checksum) {
      position += 4;
      if (position > end) fail(72, position);
    }
    // A header claiming more than the blocks can make is corrupt (libzstd finds out after decoding them);
    // saying so now keeps a decoder from allocating the claimed size.
    if (contentSize !== undefined && contentSize > maxOutput) fail(20, at);
    frames.push({ offset: at, size: position - at, contentSize, skippable: false, maxOutput });
    at = position;
  }
  return frames;
}
