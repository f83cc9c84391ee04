/**
 * An .xz writer in TypeScript (no node:* imports), so the inspector page can write a pruned `.deb`'s
 * data.tar.xz or a `.tar.xz` back: browsers decode xz (xz-decompress) but have no encoder. The LZMA coding
 * is src/compress/lzma-encode.ts; this module writes LZMA2 chunks around it and the .xz container around
 * those, following the .xz file format 1.2.1 (tukaani.org/xz/xz-file-format.txt) and LZMA2 as liblzma's
 * and xz-embedded's decoders read it.
 *
 * | part | bytes | written here as |
 * |---|---|---|
 * | stream header | 12 | `FD 37 7A 58 5A 00`, flags `00 04` (CRC64 check), CRC32 of the flags |
 * | block header | 12 | size byte 2 ((12 / 4) - 1), flags 0 (one filter, no sizes), filter 0x21 (LZMA2) with 1 property byte (dictionary size), padding, CRC32 |
 * | LZMA2 chunks | | see below, then `00` (end of LZMA2 data) |
 * | block padding + check | 0-3 + 8 | zeros to a multiple of 4, CRC64 of the uncompressed data |
 * | index | padded to 4 | `00`, record count, (unpadded size, uncompressed size) per block, padding, CRC32 |
 * | stream footer | 12 | CRC32, backward size (index size / 4 - 1), flags, `YZ` |
 *
 * LZMA2 chunks (control byte, then sizes big-endian):
 * | control | meaning |
 * |---|---|
 * | `01` / `02` | uncompressed chunk with / without dictionary reset, then size - 1 (2 bytes, at most 64 KiB) |
 * | `80 + r << 5 + (u - 1) >> 16` | LZMA chunk: r = 0 nothing reset, 1 state reset, 2 state reset + properties byte, 3 all that + dictionary reset; then (u - 1) & 0xFFFF (2), packed - 1 (2), [properties] |
 *
 * The decoders require the first chunk to reset the dictionary (`E0` or `01`), an LZMA chunk after a `01`
 * to carry properties (`C0` and up), and an LZMA chunk after any uncompressed chunk to reset the state
 * here as well (the encoder had already coded that input, moving its probabilities). A chunk whose LZMA
 * coding is no smaller than the input (random bytes, already-compressed members) is sent uncompressed.
 *
 * The input is cut into blocks of `blockSize` bytes (default 3 x the dictionary, as `xz -T` cuts them; 24 MiB
 * at the default 8 MiB), each starting with a dictionary reset and ending with its own check, so a reader
 * can start decoding at any block the index lists (src/packages/xz-index.ts does that to re-read a member).
 * Block headers carry no sizes (the streaming writer does not know them yet); the index has them. The check
 * is CRC64, xz's default.
 */
import { OffloadKitError } from "../engine/errors.js";
import { concatBytes } from "../formats/bytes.js";
import { crc32 } from "../packages/xz-index.js";
import type { ChunkEncoder } from "./chunk-encoder.js";
import { LZMA_PROPERTIES, LzmaEncoder } from "./lzma-encode.js";
import type { LzmaMode } from "./lzma-encode.js";

export type { ChunkEncoder } from "./chunk-encoder.js";
export type { LzmaMode } from "./lzma-encode.js";

export interface XzEncoderOptions {
  /**
   * LZMA2 dictionary size (the farthest a match reaches back), default 8 MiB as `xz -6`; rounded up to a
   * size the dictionary byte can say (2^n or 3 * 2^(n-1)), 4 KiB to 256 MiB. Memory is about the
   * dictionary plus 6 MiB of window and 4 MiB of hash table (plus 4 bytes per dictionary byte with
   * depth > 1); a decoder needs the rounded size.
   */
  readonly dictionarySize?: number;
  /**
   * "normal" (default): binary-tree match finder and optimal parsing with a price model, as `xz -6`;
   * "fast": hash table and one lazy step, several times faster and about 8% larger (docs/compression.md).
   */
  readonly mode?: LzmaMode;
  /** Fast mode: hash-chain candidates per position (default 1; depth 8 was 0.7% larger on librocrand). Normal mode: binary-tree nodes walked per position (default 8). */
  readonly depth?: number;
  /** A match this long ends the search (default 64 in fast mode, 32 in normal mode; at most 273). */
  readonly niceLength?: number;
  /** Uncompressed bytes per xz block (default 3 x the dictionary size, at least 1 MiB); Infinity for one block. */
  readonly blockSize?: number;
}

const MAGIC = [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00];
const CHECK_CRC64 = 0x04;
const FILTER_LZMA2 = 0x21;
const BLOCK_HEADER_SIZE = 12;
const CHECK_SIZE = 8;
/** The largest uncompressed LZMA2 chunk. */
const UNCOMPRESSED_CHUNK = 1 << 16;
const DICT_MIN = 4096;
const DICT_MAX = 256 << 20;

/** The LZMA2 dictionary byte for the smallest size it can say that is >= `size`, and that size. */
export function lzma2DictionaryByte(size: number): { byte: number; size: number } {
  for (let byte = 0; byte < 40; byte++) {
    const said = (2 | (byte & 1)) * 2 ** ((byte >>> 1) + 11);
    if (said >= size) return { byte, size: said };
  }
  return { byte: 40, size: 0xffffffff };
}

// CRC64 (ECMA-182, reflected 0xC96C5795D7870F42) in two 32-bit halves: numbers, not BigInt, on the hot path.
const CRC64_LO = new Uint32Array(256);
const CRC64_HI = new Uint32Array(256);
for (let n = 0; n < 256; n++) {
  let lo = n;
  let hi = 0;
  for (let k = 0; k < 8; k++) {
    const lsb = lo & 1;
    lo = ((lo >>> 1) | (hi << 31)) >>> 0;
    hi >>>= 1;
    if (lsb) {
      lo = (lo ^ 0xd7870f42) >>> 0;
      hi = (hi ^ 0xc96c5795) >>> 0;
    }
  }
  CRC64_LO[n] = lo;
  CRC64_HI[n] = hi;
}

/** A running CRC64 as xz's check computes it. */
class Crc64 {
  private lo = 0xffffffff;
  private hi = 0xffffffff;

  update(bytes: Uint8Array): void {
    let lo = this.lo;
    let hi = this.hi;
    for (let i = 0; i < bytes.length; i++) {
      const index = (lo ^ bytes[i]!) & 0xff;
      lo = CRC64_LO[index]! ^ ((lo >>> 8) | (hi << 24));
      hi = CRC64_HI[index]! ^ (hi >>> 8);
    }
    this.lo = lo;
    this.hi = hi;
  }

  /** The 8 check bytes, little-endian. */
  bytes(): Uint8Array {
    const out = new Uint8Array(8);
    const view = new DataView(out.buffer);
    view.setUint32(0, ~this.lo >>> 0, true);
    view.setUint32(4, ~this.hi >>> 0, true);
    return out;
  }
}

function varint(out: number[], value: number): void {
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
}

function withCrc32(fields: number[]): Uint8Array {
  const out = new Uint8Array(fields.length + 4);
  out.set(fields);
  new DataView(out.buffer).setUint32(fields.length, crc32(out.subarray(0, fields.length)), true);
  return out;
}

class XzEncoder implements ChunkEncoder {
  private readonly lzma: LzmaEncoder;
  private readonly dictionaryByte: number;
  private readonly blockSize: number;
  private check = new Crc64();
  private started = false;
  private finished = false;
  private blockOpen = false;
  /** Input bytes in the open block, and the LZMA2 bytes written for them. */
  private uncompressed = 0;
  private compressed = 0;
  /** Unpadded and uncompressed size of each block written, for the index. */
  private readonly records: number[] = [];
  private needDictionaryReset = true;
  private needProperties = true;
  private needStateReset = false;
  private output: Uint8Array[] = [];

  constructor(options: XzEncoderOptions) {
    const asked = options.dictionarySize ?? 8 << 20;
    if (!Number.isInteger(asked) || asked < DICT_MIN || asked > DICT_MAX) {
      throw new OffloadKitError("BAD_OPTIONS", `xz dictionary size must be an integer from ${DICT_MIN} to ${DICT_MAX} bytes, not ${asked}`, { field: "dictionarySize" });
    }
    const { byte, size } = lzma2DictionaryByte(asked);
    this.dictionaryByte = byte;
    this.blockSize = options.blockSize ?? Math.max(3 * size, 1 << 20);
    if (!(this.blockSize >= 1)) throw new OffloadKitError("BAD_OPTIONS", `xz block size must be at least 1 byte, not ${options.blockSize}`, { field: "blockSize" });
    this.lzma = new LzmaEncoder({ dictionarySize: size, mode: options.mode, depth: options.depth, niceLength: options.niceLength });
  }

  push(bytes: Uint8Array): Uint8Array[] {
    if (this.finished) throw new OffloadKitError("BAD_OPTIONS", "xz encoder: push after finish");
    this.start();
    let at = 0;
    while (at < bytes.length) {
      let room = this.lzma.room();
      if (room === 0) {
        this.drain(false);
        room = this.lzma.room();
      }
      const piece = bytes.subarray(at, at + Math.min(room, this.blockSize - this.uncompressed));
      if (!this.blockOpen) this.openBlock();
      this.lzma.write(piece);
      this.check.update(piece);
      this.uncompressed += piece.length;
      at += piece.length;
      if (this.uncompressed === this.blockSize) this.closeBlock();
      else this.drain(false);
    }
    return this.take();
  }

  finish(): Uint8Array[] {
    if (this.finished) return [];
    this.start();
    this.finished = true;
    if (this.blockOpen) this.closeBlock();
    const records: number[] = [0x00];
    varint(records, this.records.length / 2);
    for (const size of this.records) varint(records, size);
    while (records.length % 4 !== 0) records.push(0);
    const index = withCrc32(records);
    this.output.push(index);
    const footer = new Uint8Array(12);
    const view = new DataView(footer.buffer);
    view.setUint32(4, index.length / 4 - 1, true);
    footer.set([0x00, CHECK_CRC64, 0x59, 0x5a], 8);
    view.setUint32(0, crc32(footer.subarray(4, 10)), true);
    this.output.push(footer);
    return this.take();
  }

  private take(): Uint8Array[] {
    const out = this.output;
    this.output = [];
    return out;
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    this.output.push(Uint8Array.from([...MAGIC, ...withCrc32([0x00, CHECK_CRC64])]));
  }

  /** Codes the rest of the block's input, ends its LZMA2 data, pads it, writes its check; the next block starts afresh. */
  private closeBlock(): void {
    this.drain(true);
    if (this.lzma.hasOpenChunk()) {
      this.lzma.closeChunk();
      this.emitChunk();
    }
    // End of LZMA2 data (00), block padding, check.
    const unpadded = BLOCK_HEADER_SIZE + this.compressed + 1 + CHECK_SIZE;
    this.output.push(new Uint8Array(1 + ((4 - ((BLOCK_HEADER_SIZE + this.compressed + 1) % 4)) % 4)));
    this.output.push(this.check.bytes());
    this.records.push(unpadded, this.uncompressed);
    this.blockOpen = false;
    this.uncompressed = 0;
    this.compressed = 0;
    this.check = new Crc64();
    this.needDictionaryReset = this.needProperties = true;
    this.needStateReset = false;
    this.lzma.resetDictionary();
  }

  private openBlock(): void {
    this.blockOpen = true;
    // Size byte, flags (one filter, no sizes), LZMA2 filter id, 1 property byte, the dictionary byte, padding.
    this.output.push(withCrc32([BLOCK_HEADER_SIZE / 4 - 1, 0x00, FILTER_LZMA2, 0x01, this.dictionaryByte, 0x00, 0x00, 0x00]));
  }

  private drain(final: boolean): void {
    while (this.lzma.encode(final)) this.emitChunk();
  }

  /** Writes the chunk the LZMA encoder just closed, as LZMA or, where that is no smaller, uncompressed. */
  private emitChunk(): void {
    const packed = this.lzma.chunkPacked();
    const unpacked = this.lzma.chunkUnpacked();
    const pieces = Math.ceil(unpacked.length / UNCOMPRESSED_CHUNK);
    if (packed.length + 6 >= unpacked.length + 3 * pieces) {
      for (let at = 0; at < unpacked.length; at += UNCOMPRESSED_CHUNK) {
        const data = unpacked.subarray(at, at + UNCOMPRESSED_CHUNK);
        const chunk = new Uint8Array(3 + data.length);
        chunk[0] = this.needDictionaryReset ? 0x01 : 0x02;
        if (this.needDictionaryReset) this.needProperties = true;
        this.needDictionaryReset = false;
        chunk[1] = (data.length - 1) >>> 8;
        chunk[2] = (data.length - 1) & 0xff;
        chunk.set(data, 3);
        this.push1(chunk);
      }
      // The LZMA side coded this input already: start the next LZMA chunk from fresh state, on both sides.
      this.lzma.resetState();
      this.needStateReset = true;
      return;
    }
    const reset = this.needDictionaryReset ? 3 : this.needProperties ? 2 : this.needStateReset ? 1 : 0;
    const header = reset >= 2 ? 6 : 5;
    const chunk = new Uint8Array(header + packed.length);
    const u = unpacked.length - 1;
    const p = packed.length - 1;
    chunk[0] = 0x80 | (reset << 5) | (u >>> 16);
    chunk[1] = (u >>> 8) & 0xff;
    chunk[2] = u & 0xff;
    chunk[3] = p >>> 8;
    chunk[4] = p & 0xff;
    if (reset >= 2) chunk[5] = LZMA_PROPERTIES;
    chunk.set(packed, header);
    this.needDictionaryReset = this.needProperties = this.needStateReset = false;
    this.push1(chunk);
  }

  private push1(chunk: Uint8Array): void {
    this.output.push(chunk);
    this.compressed += chunk.length;
  }
}

/**
 * A streaming .xz encoder: push input in pieces of any size, collect what each call returns, then
 * `finish()`. Memory is bounded by the dictionary and a fixed window whatever the input's size.
 */
export function createXzEncoder(options: XzEncoderOptions = {}): ChunkEncoder {
  return new XzEncoder(options);
}

/** One-shot: the .xz file for `bytes`. */
export function encodeXz(bytes: Uint8Array, options: XzEncoderOptions = {}): Uint8Array {
  const encoder = createXzEncoder(options);
  return concatBytes([...encoder.push(bytes), ...encoder.finish()]);
}
