/**
 * A bzip2 encoder for browsers (no `bzip2` program, no node:*), writing the format exactly as libbzip2
 * 1.0.x's compress.c / huffman.c / bzlib.c write it, so that for blocks whose rotations are all distinct
 * the bytes equal `bzip2 -N`'s (the tests compare them); the BWT is our own (src/compress/bzip2-bwt.ts).
 * The decoder is src/packages/bzip2.ts (the same format read the other way).
 *
 * | part | layout (bits, most significant first) |
 * |---|---|
 * | stream header | `BZh` + level `1`-`9` (block size in 100 kB) |
 * | block | magic 0x314159265359 (48), block CRC (32), randomised 0 (1), origPtr (24), symbol map (16 + 16 per used row of 16 byte values), groups 2-6 (3), selectors (15 + each MTF-coded in unary), code lengths per table (5 + per symbol `1x` steps of ±1 ended by `0`), Huffman-coded symbols |
 * | end of stream | magic 0x177245385090 (48), stream CRC (32), zero bits to a byte |
 *
 * Per block, as libbzip2 does it:
 * - RLE1: runs of 4-255 equal input bytes become 4 bytes and a count byte (0-251). A block ends once it
 *   holds `100000 x level - 19` bytes *after* RLE1 (libbzip2's nblockMAX; a pair added last may take it 4
 *   over, never past the block size the decoder allows). A run still open when a block fills goes on
 *   into the next block, as in libbzip2.
 * - CRC: bzip2's CRC-32 (polynomial 0x04c11db7, most significant bit first) over the block's input
 *   bytes; the stream CRC is the running `rotl1(crc) ^ blockCrc`.
 * - BWT, then move-to-front over the byte values used, zero runs written in bijective base 2 as RUNA
 *   (digit 1) / RUNB (digit 2) least significant first, end-of-block symbol `used + 1`.
 * - Huffman: 2-6 tables by the number of MTF symbols (<200, <600, <1200, <2400, more); initial tables
 *   cut the symbol range into slices of equal frequency; four rounds choose the cheapest table for each
 *   50-symbol group and rebuild the tables from the groups that chose them; lengths limited to 17 bits
 *   (libbzip2 >= 1.0.3; the format allows 20) by halving the frequencies and retrying.
 *
 * Memory is bounded by the block, not the input: the block buffer (grown as input comes, at most
 * `100000 x level` bytes) and, while a block is coded, about 18 bytes per block byte (BWT 1, suffix sort
 * 8 plus a 4-byte border table, MTF symbols 2, output bound 2-3): some 16 MB at level 9. Every block is
 * coded as soon as it is full, so `push` returns it then; `finish` codes the last one and ends the stream.
 */
import { OffloadKitError } from "../engine/errors.js";
import { burrowsWheeler } from "./bzip2-bwt.js";
import type { ChunkEncoder } from "./chunk-encoder.js";
import { BZIP2_CRC_TABLE } from "./bzip2-crc.js";

const GROUP_SIZE = 50;
const MAX_GROUPS = 6;
/** libbzip2 >= 1.0.3 limits code lengths to 17 bits when encoding (the decoder takes 20). */
const MAX_CODE_LENGTH = 17;
const ITERATIONS = 4;
const RUNA = 0;
const RUNB = 1;
/** Cost libbzip2 gives a symbol inside (0) and outside (15) an initial table's slice. */
const LESSER_COST = 0;
const GREATER_COST = 15;

const CRC_TABLE = BZIP2_CRC_TABLE;

/** Most-significant-first bits into a byte buffer; bits short of a byte stay in `held` between blocks. */
class BitWriter {
  bytes = new Uint8Array(0);
  at = 0;
  private held = 0;
  private heldBits = 0;

  /** Makes room for `n` more bytes (called once per block with the block's bound). */
  reserve(n: number): void {
    if (this.bytes.length - this.at >= n) return;
    const next = new Uint8Array(this.at + n);
    next.set(this.bytes.subarray(0, this.at));
    this.bytes = next;
  }

  /** Writes the low `n` bits of `value`, n <= 24. */
  write(n: number, value: number): void {
    let held = (this.held << n) | value;
    let bits = this.heldBits + n;
    while (bits >= 8) {
      bits -= 8;
      this.bytes[this.at++] = held >>> bits;
    }
    this.held = held & ((1 << bits) - 1);
    this.heldBits = bits;
  }

  write32(value: number): void {
    this.write(16, value >>> 16);
    this.write(16, value & 0xffff);
  }

  /** Writes `symbols[start..end)` with codes packed as `code << 5 | length` (lengths <= 20). */
  writeCodes(symbols: Uint16Array, start: number, end: number, codes: Int32Array): void {
    const bytes = this.bytes;
    let at = this.at;
    let held = this.held;
    let bits = this.heldBits;
    for (let i = start; i < end; i++) {
      const packed = codes[symbols[i]!]!;
      const n = packed & 31;
      held = (held << n) | (packed >>> 5);
      bits += n;
      while (bits >= 8) {
        bits -= 8;
        bytes[at++] = held >>> bits;
      }
      held &= (1 << bits) - 1;
    }
    this.at = at;
    this.held = held;
    this.heldBits = bits;
  }

  /** Pads the last byte with zero bits. */
  pad(): void {
    if (this.heldBits > 0) this.write(8 - this.heldBits, 0);
  }

  /** The whole bytes written since the last take. */
  take(): Uint8Array {
    const out = this.bytes.slice(0, this.at);
    this.at = 0;
    return out;
  }
}

/** The largest alphabet: 256 byte values + RUNA/RUNB in place of MTF index 0 + end of block. */
const MAX_ALPHABET = 258;
/**
 * Scratch for codeLengths, shared by every encoder (the encoder is synchronous, so one call runs at a
 * time): it runs 4 x 6 times a block, and allocating per call cost more than the work on small blocks.
 */
const WEIGHT = new Int32Array(2 * MAX_ALPHABET + 2);
const PARENT = new Int32Array(2 * MAX_ALPHABET + 2);
const DEPTH = new Int32Array(2 * MAX_ALPHABET + 2);
const HEAP = new Int32Array(MAX_ALPHABET + 2);

/**
 * Huffman code lengths for `freq[0..size)`, at most `maxLength` bits, into `lengths`: libbzip2's
 * BZ2_hbMakeCodeLengths (the same heap order and tie rules, so the tables and the bytes match bzip2's).
 * A weight carries the subtree's depth in its low 8 bits, so of two equal frequencies the shallower
 * subtree is merged first; a zero frequency counts as 1, so every symbol gets a code. Too long a code
 * halves every frequency and starts again.
 */
function codeLengths(lengths: Uint8Array, freq: Int32Array, size: number, maxLength: number): void {
  const weight = WEIGHT;
  const parent = PARENT;
  const depth = DEPTH;
  const heap = HEAP;
  for (let i = 0; i < size; i++) weight[i + 1] = Math.max(freq[i]!, 1) << 8;
  for (;;) {
    let nodes = size;
    let heapSize = 0;
    heap[0] = 0;
    weight[0] = 0;
    parent[0] = -2;
    for (let i = 1; i <= size; i++) {
      parent[i] = -1;
      heap[++heapSize] = i;
      siftUp(heap, weight, heapSize);
    }
    while (heapSize > 1) {
      const a = heap[1]!;
      heap[1] = heap[heapSize--]!;
      siftDown(heap, weight, heapSize);
      const b = heap[1]!;
      heap[1] = heap[heapSize--]!;
      siftDown(heap, weight, heapSize);
      nodes++;
      parent[a] = parent[b] = nodes;
      const wa = weight[a]!;
      const wb = weight[b]!;
      weight[nodes] = ((wa & ~0xff) + (wb & ~0xff)) | (1 + Math.max(wa & 0xff, wb & 0xff));
      parent[nodes] = -1;
      heap[++heapSize] = nodes;
      siftUp(heap, weight, heapSize);
    }
    // A parent is always made after its children, so depths fill in from the root down in one pass.
    let tooLong = false;
    depth[nodes] = 0;
    for (let k = nodes - 1; k >= 1; k--) depth[k] = depth[parent[k]!]! + 1;
    for (let i = 1; i <= size; i++) {
      lengths[i - 1] = depth[i]!;
      if (depth[i]! > maxLength) tooLong = true;
    }
    if (!tooLong) return;
    for (let i = 1; i <= size; i++) weight[i] = (1 + ((weight[i]! >> 8) >> 1)) << 8;
  }
}

/** Moves heap[at] up while it weighs less than its parent (heap[0], weight 0, stops it). */
function siftUp(heap: Int32Array, weight: Int32Array, at: number): void {
  let z = at;
  const node = heap[z]!;
  while (weight[node]! < weight[heap[z >> 1]!]!) {
    heap[z] = heap[z >> 1]!;
    z >>= 1;
  }
  heap[z] = node;
}

/** Moves heap[1] down while a child weighs less (ties keep it in place, as libbzip2's DOWNHEAP does). */
function siftDown(heap: Int32Array, weight: Int32Array, heapSize: number): void {
  let z = 1;
  const node = heap[z]!;
  for (;;) {
    let child = z << 1;
    if (child > heapSize) break;
    if (child < heapSize && weight[heap[child + 1]!]! < weight[heap[child]!]!) child++;
    if (weight[node]! < weight[heap[child]!]!) break;
    heap[z] = heap[child]!;
    z = child;
  }
  heap[z] = node;
}

/** Per-stream state that survives from block to block. */
class Bzip2Stream implements ChunkEncoder {
  private readonly blockLimit: number;
  /** The block after RLE1, grown as input comes (small inputs never cost a full block). */
  private block = new Uint8Array(0);
  private filled = 0;
  private readonly used = new Uint8Array(256);
  /** The open RLE1 run: its byte (-1 before any input) and length (1-255). */
  private runByte = -1;
  private runLength = 0;
  private blockCrc = -1;
  private streamCrc = 0;
  private readonly out = new BitWriter();
  private finished = false;

  constructor(level: number) {
    this.blockLimit = 100000 * level - 19;
    this.out.reserve(4);
    this.out.write(24, 0x425a68);
    this.out.write(8, 0x30 + level);
  }

  push(bytes: Uint8Array): Uint8Array[] {
    if (this.finished) throw new OffloadKitError("BAD_OPTIONS", "bzip2 encoder: push after finish");
    const chunks: Uint8Array[] = [];
    let byte = this.runByte;
    let length = this.runLength;
    // The block, its fill and its CRC live in locals while single bytes go in (most bytes of most inputs);
    // runs and block ends go through closeRun/writeBlock (measured: the input loop 2x faster than a call per run).
    let block = this.block;
    let filled = this.filled;
    let crc = this.blockCrc;
    const used = this.used;
    for (let i = 0; i < bytes.length; i++) {
      const c = bytes[i]!;
      if (c === byte && length < 255) {
        length++;
        continue;
      }
      if (length === 1 && filled + 1 < block.length && filled + 1 < this.blockLimit) {
        crc = (crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ byte) & 0xff]!;
        used[byte] = 1;
        block[filled++] = byte;
      } else if (byte >= 0) {
        this.filled = filled;
        this.blockCrc = crc;
        // libbzip2 checks for a full block before taking each byte and codes it at once, so a block ends
        // right after the pair that filled it and the open run goes on into the next block.
        if (this.closeRun(byte, length)) chunks.push(this.writeBlock());
        block = this.block;
        filled = this.filled;
        crc = this.blockCrc;
      }
      byte = c;
      length = 1;
    }
    this.filled = filled;
    this.blockCrc = crc;
    this.runByte = byte;
    this.runLength = length;
    return chunks;
  }

  finish(): Uint8Array[] {
    if (this.finished) throw new OffloadKitError("BAD_OPTIONS", "bzip2 encoder: finish called twice");
    this.finished = true;
    const chunks: Uint8Array[] = [];
    if (this.runByte >= 0) this.closeRun(this.runByte, this.runLength);
    if (this.filled > 0) chunks.push(this.writeBlock());
    const out = this.out;
    out.reserve(16);
    out.write(24, 0x177245);
    out.write(24, 0x385090);
    out.write32(this.streamCrc >>> 0);
    out.pad();
    chunks.push(out.take());
    // Nothing more will be written: let the block and the output buffer go.
    this.block = new Uint8Array(0);
    out.bytes = new Uint8Array(0);
    return chunks;
  }

  /**
   * Appends a run to the block as RLE1 writes it (1-3 bytes as they are, 4-255 as 4 and a count) and adds
   * it to the block CRC; returns whether the block is now full.
   */
  private closeRun(byte: number, length: number): boolean {
    if (this.block.length < this.filled + 5) {
      const next = new Uint8Array(Math.min(Math.max(2 * this.block.length, 4096), this.blockLimit + 24));
      next.set(this.block.subarray(0, this.filled));
      this.block = next;
    }
    const block = this.block;
    let crc = this.blockCrc;
    for (let k = 0; k < length; k++) crc = (crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ byte) & 0xff]!;
    this.blockCrc = crc;
    this.used[byte] = 1;
    if (length < 4) {
      for (let k = 0; k < length; k++) block[this.filled++] = byte;
    } else {
      block[this.filled] = block[this.filled + 1] = block[this.filled + 2] = block[this.filled + 3] = byte;
      block[this.filled + 4] = length - 4;
      this.used[length - 4] = 1;
      this.filled += 5;
    }
    return this.filled >= this.blockLimit;
  }

  /** Codes the block held (at least one byte) into the bit writer and returns the whole bytes written. */
  private writeBlock(): Uint8Array {
    const n = this.filled;
    const blockCrc = ~this.blockCrc >>> 0;
    this.streamCrc = (((this.streamCrc << 1) | (this.streamCrc >>> 31)) ^ blockCrc) >>> 0;
    const bwt = new Uint8Array(n);
    const origPtr = burrowsWheeler(this.block, n, bwt);
    const mtf = moveToFront(bwt, n, this.used);
    const tables = chooseTables(mtf);
    const out = this.out;
    const { alphabet, count } = mtf;
    const { groups, lengths, selectors } = tables;
    // Bound: fixed fields and the map (< 100 bytes), selectors (<= 6 bits each), code lengths (5 bits
    // and at most 2 x 16 + 1 bits per symbol), symbols (<= 17 bits each).
    out.reserve(100 + selectors.length + groups * (1 + alphabet * 5) + Math.ceil((count * MAX_CODE_LENGTH) / 8) + 16);
    out.write(24, 0x314159);
    out.write(24, 0x265359);
    out.write32(blockCrc);
    out.write(1, 0);
    out.write(24, origPtr);
    writeSymbolMap(out, this.used);
    out.write(3, groups);
    out.write(15, selectors.length);
    const tableOrder = [0, 1, 2, 3, 4, 5];
    for (let i = 0; i < selectors.length; i++) {
      const table = selectors[i]!;
      const j = tableOrder.indexOf(table);
      tableOrder.splice(j, 1);
      tableOrder.unshift(table);
      // j ones then a zero.
      out.write(j + 1, ((1 << j) - 1) << 1);
    }
    for (let t = 0; t < groups; t++) {
      const table = lengths[t]!;
      let current = table[0]!;
      out.write(5, current);
      for (let v = 0; v < alphabet; v++) {
        const target = table[v]!;
        for (; current < target; current++) out.write(2, 2);
        for (; current > target; current--) out.write(2, 3);
        out.write(1, 0);
      }
    }
    const codes = lengths.slice(0, groups).map((table) => canonicalCodes(table, alphabet));
    for (let g = 0; g < selectors.length; g++) {
      const start = g * GROUP_SIZE;
      out.writeCodes(mtf.symbols, start, Math.min(start + GROUP_SIZE, count), codes[selectors[g]!]!);
    }
    this.filled = 0;
    this.used.fill(0);
    this.blockCrc = -1;
    return out.take();
  }
}

/** The 16-bit map of used rows of 16 byte values, then a 16-bit map of each used row. */
function writeSymbolMap(out: BitWriter, used: Uint8Array): void {
  let rows = 0;
  for (let row = 0; row < 16; row++) {
    for (let k = 0; k < 16; k++) if (used[16 * row + k]) rows |= 0x8000 >>> row;
  }
  out.write(16, rows);
  for (let row = 0; row < 16; row++) {
    if (!(rows & (0x8000 >>> row))) continue;
    let bits = 0;
    for (let k = 0; k < 16; k++) if (used[16 * row + k]) bits |= 0x8000 >>> k;
    out.write(16, bits);
  }
}

interface MtfSymbols {
  /** RUNA, RUNB, MTF index + 1, ..., end of block; `count` of them. */
  readonly symbols: Uint16Array;
  readonly count: number;
  readonly freq: Int32Array;
  /** Byte values used + 2 (RUNA/RUNB replace index 0; the end-of-block symbol is last). */
  readonly alphabet: number;
}

/** Move-to-front over the byte values in use (renumbered densely), zero runs as RUNA/RUNB, then end of block. */
function moveToFront(bwt: Uint8Array, n: number, used: Uint8Array): MtfSymbols {
  const dense = new Uint8Array(256);
  let inUse = 0;
  for (let b = 0; b < 256; b++) if (used[b]) dense[b] = inUse++;
  const alphabet = inUse + 2;
  const symbols = new Uint16Array(n + 1);
  const freq = new Int32Array(alphabet);
  // The MTF list packed four entries to an Int32 (entry k in byte k & 3 of word k >> 2): a value is found
  // four entries at a time (a zero-byte test on word ^ value x 0x01010101) and the list shifted a word at a
  // time (measured: 2x faster than entry by entry on an ELF's compressed sections, where the mean MTF index is 64).
  const words = new Int32Array(64);
  for (let k = 0; k < 64; k++) words[k] = (4 * k) | ((4 * k + 1) << 8) | ((4 * k + 2) << 16) | ((4 * k + 3) << 24);
  let count = 0;
  let zeros = 0;
  let front = 0;
  for (let i = 0; i <= n; i++) {
    const value = i < n ? dense[bwt[i]!]! : -1;
    if (value === front) {
      zeros++;
      continue;
    }
    if (zeros > 0) {
      // A run of z zeros is z written in bijective base 2 (digits 1 = RUNA, 2 = RUNB), least significant first.
      let z = zeros - 1;
      for (;;) {
        const symbol = z & 1 ? RUNB : RUNA;
        symbols[count++] = symbol;
        freq[symbol]!++;
        if (z < 2) break;
        z = (z - 2) >> 1;
      }
      zeros = 0;
    }
    if (value < 0) break;
    const pattern = value * 0x01010101;
    let w = 0;
    let word = words[0]!;
    let x = word ^ pattern;
    let hit = (x - 0x01010101) & ~x & 0x80808080;
    // Each word passed over moves up one byte, taking the previous word's top entry (the new front first).
    let carry = value;
    while (hit === 0) {
      words[w] = (word << 8) | carry;
      carry = word >>> 24;
      word = words[++w]!;
      x = word ^ pattern;
      hit = (x - 0x01010101) & ~x & 0x80808080;
    }
    // The lowest flagged byte is the match (a false flag can only sit above a true one).
    const b = (31 - Math.clz32(hit & -hit)) >> 3;
    const below = word & ((1 << (8 * b)) - 1);
    const above = b === 3 ? 0 : word & ~((1 << (8 * b + 8)) - 1);
    words[w] = above | (below << 8) | carry;
    front = value;
    const symbol = 4 * w + b + 1;
    symbols[count++] = symbol;
    freq[symbol]!++;
  }
  symbols[count++] = inUse + 1;
  freq[inUse + 1]!++;
  return { symbols, count, freq, alphabet };
}

/**
 * libbzip2's sendMTFValues table choice: 2-6 tables by the symbol count, initial tables from slices of the
 * symbol range, then four rounds of choosing each 50-symbol group's cheapest table (the first on a tie)
 * and rebuilding each table's code lengths from the groups that chose it.
 */
function chooseTables(mtf: MtfSymbols): { groups: number; lengths: Uint8Array[]; selectors: Uint8Array } {
  const { symbols, count, freq, alphabet } = mtf;
  const groups = count < 200 ? 2 : count < 600 ? 3 : count < 1200 ? 4 : count < 2400 ? 5 : 6;
  const lengths = Array.from({ length: MAX_GROUPS }, () => new Uint8Array(alphabet).fill(GREATER_COST));
  let parts = groups;
  let left = count;
  let first = 0;
  while (parts > 0) {
    const target = Math.floor(left / parts);
    let last = first - 1;
    let taken = 0;
    while (taken < target && last < alphabet - 1) taken += freq[++last]!;
    // libbzip2 gives back the last symbol on every other slice, so the slices alternate sides of their targets.
    if (last > first && parts !== groups && parts !== 1 && (groups - parts) % 2 === 1) taken -= freq[last--]!;
    const table = lengths[parts - 1]!;
    for (let v = 0; v < alphabet; v++) table[v] = v >= first && v <= last ? LESSER_COST : GREATER_COST;
    parts--;
    first = last + 1;
    left -= taken;
  }
  const selectors = new Uint8Array(Math.ceil(count / GROUP_SIZE));
  const tableFreq = Array.from({ length: groups }, () => new Int32Array(alphabet));
  // Tables past `groups` stay at GREATER_COST everywhere and are never chosen (ties go to the first).
  // Two tables' lengths share an Int32 (a group's cost is at most 50 x 17 < 2^16), so the six costs take
  // three loads per symbol, as libbzip2 packs them (measured: the choice a third faster).
  const pairs = [new Int32Array(alphabet), new Int32Array(alphabet), new Int32Array(alphabet)] as const;
  const cost = new Int32Array(MAX_GROUPS);
  for (let iteration = 0; iteration < ITERATIONS; iteration++) {
    for (let k = 0; k < 3; k++) {
      const low = lengths[2 * k]!;
      const high = lengths[2 * k + 1]!;
      const pair = pairs[k];
      for (let v = 0; v < alphabet; v++) pair[v] = low[v]! | (high[v]! << 16);
    }
    const [p01, p23, p45] = pairs;
    for (const f of tableFreq) f.fill(0);
    for (let g = 0; g < selectors.length; g++) {
      const start = g * GROUP_SIZE;
      const end = Math.min(start + GROUP_SIZE, count);
      let c01 = 0;
      let c23 = 0;
      let c45 = 0;
      for (let i = start; i < end; i++) {
        const s = symbols[i]!;
        c01 += p01[s]!;
        c23 += p23[s]!;
        c45 += p45[s]!;
      }
      cost[0] = c01 & 0xffff;
      cost[1] = c01 >>> 16;
      cost[2] = c23 & 0xffff;
      cost[3] = c23 >>> 16;
      cost[4] = c45 & 0xffff;
      cost[5] = c45 >>> 16;
      let best = 0;
      for (let t = 1; t < groups; t++) if (cost[t]! < cost[best]!) best = t;
      selectors[g] = best;
      const f = tableFreq[best]!;
      for (let i = start; i < end; i++) f[symbols[i]!]!++;
    }
    for (let t = 0; t < groups; t++) codeLengths(lengths[t]!, tableFreq[t]!, alphabet, MAX_CODE_LENGTH);
  }
  return { groups, lengths, selectors };
}

/**
 * Canonical codes for `lengths` (shorter codes first, then by symbol), as the decoder rebuilds them, each
 * packed as `code << 5 | length`.
 */
function canonicalCodes(lengths: Uint8Array, size: number): Int32Array {
  const packed = new Int32Array(size);
  let minLength = 32;
  let maxLength = 0;
  for (let i = 0; i < size; i++) {
    minLength = Math.min(minLength, lengths[i]!);
    maxLength = Math.max(maxLength, lengths[i]!);
  }
  let code = 0;
  for (let n = minLength; n <= maxLength; n++) {
    for (let i = 0; i < size; i++) if (lengths[i] === n) packed[i] = (code++ << 5) | n;
    code <<= 1;
  }
  return packed;
}

function checkLevel(level: number): void {
  if (!Number.isInteger(level) || level < 1 || level > 9) {
    throw new OffloadKitError("BAD_OPTIONS", `bzip2 level must be an integer from 1 to 9, not ${String(level)}`, { field: "level" });
  }
}

/**
 * A streaming bzip2 encoder. `level` (default 9, as `bzip2 -9`, Python's tarfile and
 * conda-package-handling use) sets the block size to `100000 x level` bytes.
 */
export function createBzip2Encoder(options: { level?: number } = {}): ChunkEncoder {
  const level = options.level ?? 9;
  checkLevel(level);
  return new Bzip2Stream(level);
}

/** One-shot: the whole bzip2 stream for `bytes`. */
export function encodeBzip2(bytes: Uint8Array, options: { level?: number } = {}): Uint8Array {
  const encoder = createBzip2Encoder(options);
  const chunks = [...encoder.push(bytes), ...encoder.finish()];
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
