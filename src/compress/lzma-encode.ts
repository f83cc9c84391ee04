/**
 * An LZMA encoder for LZMA2 chunks (src/compress/xz-encode.ts writes the chunks and the .xz container),
 * written so that the browser can write `.tar.xz` and `.deb` data.tar.xz back after pruning: browsers have
 * xz decoders (xz-decompress) but no encoder. It produces exactly what the LZMA decoder of liblzma and
 * xz-embedded reads (the LZMA SDK's lzma-specification.txt describes the same decoder):
 *
 * | part | what the decoder expects |
 * |---|---|
 * | range coder | 11-bit probabilities moved by 1/32, `low`/`range` with the carry kept in `cache`; a chunk starts with a fresh coder whose first byte is 0 and ends with 5 flush shifts |
 * | properties | lc = 3, lp = 0, pb = 2 (xz's defaults): byte 0x5D |
 * | state | the 12-state machine (literal / match / long rep / short rep after literal or match) |
 * | literal | 8-bit tree chosen by the previous byte's top 3 bits; after a match (state >= 7) the "matched" tree, steered by the byte at rep0 until the first difference |
 * | match | is-match 1, is-rep 0, length (choice / low 8 / mid 8 / high 256, low and mid by position), 6-bit distance slot by length state, then slot 4-13: reverse tree bits, slot >= 14: direct bits and 4 reverse-coded align bits |
 * | rep0-3 | is-rep 1, G0 / G1 / G2 choose which; rep0 of length 1 is the short rep |
 *
 * Two parsers. "normal" (the default) is liblzma's normal mode: a binary-tree match finder
 * (lzma-bt4.ts), prices from the probabilities (lzma-price.ts) and optimal parsing over up to 4096 bytes
 * (lzma-optimum.ts), whose symbols this class codes; files within about 1.5% of `xz -6`'s. "fast" is
 * liblzma's fast mode in spirit: a hash-chain match finder over 4-byte hashes with a bounded walk
 * (`depth`, stopped early at `niceLength`), the four reps tried first, and one step of lazy evaluation (a
 * match is put off by a literal when the next position has a better one), no prices: about four times
 * as fast, files about 8% larger than `xz -6`'s (docs/compression.md has the numbers).
 *
 * Memory is the dictionary plus a fixed window: input is appended to one buffer and the buffer is slid
 * (the last `dictionarySize` bytes moved to its front) when it fills; hash-chain entries hold positions in
 * a coordinate that survives the slide (`base`), so sliding never rewrites them.
 */

import { Bt4MatchFinder } from "./lzma-bt4.js";
import { OPTS, OptimumParser } from "./lzma-optimum.js";
import {
  ALIGN,
  DIST_SLOT,
  DIST_SPECIAL,
  IS_MATCH,
  IS_REP,
  IS_REP0_LONG,
  IS_REP_G0,
  IS_REP_G1,
  IS_REP_G2,
  LEN_CHOICE,
  LEN_CHOICE2,
  LEN_HIGH,
  LEN_LOW,
  LEN_MID,
  LITERAL,
  LzmaPrices,
  MATCH_LEN,
  PROBS,
  PROB_INIT,
  REP_LEN,
} from "./lzma-price.js";

/** The largest match LZMA codes. */
export const MATCH_LEN_MAX = 273;
/** Bytes of input the parser wants ahead of a position before it codes it (a match there, and one lazy step). */
const LOOKAHEAD = MATCH_LEN_MAX + 1 + 4;
/** The same for the optimal parser: a parse reaches up to OPTS bytes ahead, and a match 273 past that. */
const NORMAL_LOOKAHEAD = OPTS + MATCH_LEN_MAX + 8;
/** LZMA2's limits on one chunk: 2 MiB unpacked, 64 KiB packed (a symbol is at most ~20 bytes, the flush 5). */
const CHUNK_UNPACKED_LIMIT = (1 << 21) - MATCH_LEN_MAX;
const CHUNK_PACKED_LIMIT = (1 << 16) - 32;
/** Input space beyond the dictionary; the window slides when less than SLIDE_AT of it is left. */
const WINDOW_SPARE = 4 << 20;
const SLIDE_AT = 256 << 10;

/** lc = 3, lp = 0, pb = 2, as (pb * 5 + lp) * 9 + lc. */
export const LZMA_PROPERTIES = (2 * 5 + 0) * 9 + 3;
const POS_MASK = 3;

/**
 * An empty hash-chain entry. Zero, so tables need no fill: it names stored position 0, which is either out
 * of reach or a real candidate, and every candidate is compared byte by byte before it is used.
 */
const EMPTY = 0;
/** Matches longer than this have only their ends inserted into the hash table. */
const SKIP_INSERT_BEYOND = 24;
/** The window's first size (it doubles up to the dictionary plus WINDOW_SPARE). */
const WINDOW_START = 1 << 20;
/** Positions stored in the chains are kept below this by rebasing. */
const REBASE_AT = 1 << 30;

/**
 * How the encoder parses: "fast" (hash table, one lazy step, no prices: liblzma's fast mode in spirit) or
 * "normal" (binary-tree match finder, price model, optimal parsing: liblzma's normal mode, as `xz -6`).
 */
export type LzmaMode = "fast" | "normal";

export interface LzmaEncoderOptions {
  /** Largest match distance; a value the LZMA2 dictionary byte can say exactly (see xz-encode.ts). */
  readonly dictionarySize: number;
  /** Default "normal". */
  readonly mode?: LzmaMode;
  /**
   * Fast mode: candidates walked per position (default 1: the hash table's newest entry only, and no
   * chains are kept). On librocrand's first 12 MB depth 8 gave a 0.7% larger file, slower (the longest
   * match is taken, not the cheapest; measured). Normal mode: binary-tree nodes walked per position
   * (default NORMAL_DEPTH).
   */
  readonly depth?: number;
  /** A match this long ends the search (default 64 in fast mode, NORMAL_NICE_LENGTH in normal mode). */
  readonly niceLength?: number;
}

/**
 * Normal mode's defaults. xz -6 uses nice 64 and depth 48 (16 + nice / 2); in TypeScript that runs at half
 * xz -6's speed, so the defaults trade 0.7% of size for a third more speed (librocrand: nice 64 / depth 12
 * gave 0.6% over xz -6's size, nice 32 / depth 8 1.3%, 1.34 times as fast; measured, docs/compression.md).
 */
export const NORMAL_NICE_LENGTH = 32;
export const NORMAL_DEPTH = 8;

function nextPowerOfTwo(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/**
 * The LZMA encoder state, its window and match finder. The LZMA2 writer drives it: `room` / `write` add
 * input, `encode` codes symbols until a chunk is full or the input runs short, `chunkPacked` /
 * `chunkUnpacked` hand the chunk out, `resetState` follows a chunk sent uncompressed.
 */
export class LzmaEncoder {
  readonly dictionarySize: number;
  readonly mode: LzmaMode;
  private readonly depth: number;
  private readonly niceLength: number;

  private window: Uint8Array;
  /** The window's size once grown: it starts small so that small inputs cost small allocations. */
  private readonly windowMax: number;
  /** Window index of the next byte to code, and of the end of the input. */
  private pos = 0;
  private end = 0;
  /** Stored position = window index + base (base grows as the window slides). */
  private base = 0;
  private readonly hashBits: number;
  private readonly head: Int32Array;
  private chain: Int32Array;
  private chainMask: number;
  private readonly chainMax: number;
  /** The next window index to insert into the hash chains. */
  private hashedTo = 0;
  /** The lazy step's search at `nextAt`, kept for when the parser moves there. */
  private nextAt = -1;
  private nextLen = 0;
  private nextDist = 0;
  private foundLen = 0;
  private foundDist = 0;
  private shorterLen = 0;
  private shorterDist = 0;

  private readonly probs = new Uint16Array(PROBS);
  // Normal mode's match finder, prices and parser, and the parsed symbols not yet coded.
  private readonly finder: Bt4MatchFinder | undefined;
  private readonly prices: LzmaPrices | undefined;
  private readonly parser: OptimumParser | undefined;
  private batchAt = 0;
  private batchCount = 0;
  private readonly repsNow = new Int32Array(4);
  private state = 0;
  private rep0 = 1;
  private rep1 = 1;
  private rep2 = 1;
  private rep3 = 1;

  // Range coder, restarted for each chunk.
  private low = 0;
  private range = 0xffffffff;
  private cache = 0;
  private cacheSize = 1;
  private readonly out = new Uint8Array((1 << 16) + 64);
  private outPos = 0;
  private chunkOpen = false;
  private chunkStart = 0;
  private chunkEnd = 0;

  constructor(options: LzmaEncoderOptions) {
    this.dictionarySize = options.dictionarySize;
    this.mode = options.mode ?? "normal";
    const normal = this.mode === "normal";
    this.depth = Math.max(1, options.depth ?? (normal ? NORMAL_DEPTH : 1));
    this.niceLength = Math.min(MATCH_LEN_MAX, Math.max(8, options.niceLength ?? (normal ? NORMAL_NICE_LENGTH : 64)));
    this.windowMax = Math.max(this.dictionarySize, 1 << 21) + NORMAL_LOOKAHEAD + WINDOW_SPARE;
    this.window = new Uint8Array(Math.min(this.windowMax, WINDOW_START));
    this.chainMax = nextPowerOfTwo(this.dictionarySize);
    this.chain = new Int32Array(!normal && this.depth > 1 ? Math.min(this.chainMax, nextPowerOfTwo(this.window.length)) : 1);
    this.chainMask = this.chain.length - 1;
    // A head per 8 dictionary bytes, between 64 Ki and 1 Mi heads (a bigger table misses the cache more than it finds).
    this.hashBits = Math.min(20, Math.max(16, Math.log2(this.chainMax) - 3));
    this.head = new Int32Array(normal ? 1 : 1 << this.hashBits);
    if (normal) {
      this.finder = new Bt4MatchFinder(this.dictionarySize, this.niceLength, this.depth, this.window.length);
      this.prices = new LzmaPrices(this.probs, this.niceLength);
      this.parser = new OptimumParser(this.probs, this.prices, this.finder, this.niceLength);
    }
    this.resetState();
  }

  /** Probabilities, state and reps to their initial values (a chunk whose control byte says "state reset"). */
  resetState(): void {
    this.probs.fill(PROB_INIT);
    this.prices?.stale();
    this.state = 0;
    this.rep0 = this.rep1 = this.rep2 = this.rep3 = 1;
  }

  /**
   * Starts a new xz block (an LZMA2 dictionary reset): nothing written so far may be referenced, and the
   * state starts fresh. All input so far must have been coded (`encode(true)`) and its chunk taken.
   */
  resetDictionary(): void {
    this.blockStart = this.pos;
    this.nextAt = -1;
    this.finder?.forget();
    this.resetState();
  }

  /** Free input space, after sliding the window if it is nearly full. */
  room(): number {
    if (this.window.length - this.end < SLIDE_AT) {
      if (this.window.length < this.windowMax) this.grow();
      else this.slide();
    }
    return this.window.length - this.end;
  }

  /** Appends input; `bytes.length` must not exceed `room()`. */
  write(bytes: Uint8Array): void {
    this.window.set(bytes, this.end);
    this.end += bytes.length;
  }

  /**
   * Doubles the window (and the chains with it) until it reaches its full size. Nothing has slid yet, so
   * every stored position is below the chain size and keeps its slot in the bigger chain.
   */
  private grow(): void {
    const window = new Uint8Array(Math.min(this.windowMax, this.window.length * 2));
    window.set(this.window.subarray(0, this.end));
    this.window = window;
    this.finder?.grow(window.length);
    const chainSize = Math.min(this.chainMax, nextPowerOfTwo(window.length));
    if (this.depth > 1 && chainSize > this.chain.length) {
      const chain = new Int32Array(chainSize);
      chain.set(this.chain);
      this.chain = chain;
      this.chainMask = chainSize - 1;
    }
  }

  /** Moves the bytes still needed (the dictionary behind `pos`, the open chunk, the look-ahead) to the window's front. */
  private slide(): void {
    let keep = Math.max(0, this.pos - this.dictionarySize);
    if (this.chunkOpen) keep = Math.min(keep, this.chunkStart);
    if (keep === 0) return;
    this.window.copyWithin(0, keep, this.end);
    this.pos -= keep;
    this.end -= keep;
    this.hashedTo -= keep;
    this.chunkStart -= keep;
    this.chunkEnd -= keep;
    this.blockStart -= keep;
    if (this.nextAt >= 0) this.nextAt -= keep;
    this.finder?.slide(keep);
    this.base += keep;
    if (this.base >= REBASE_AT) this.rebase();
  }

  /** Lowers every stored position by a multiple of the chain size, so they stay in int32 and keep their chain slots. */
  private rebase(): void {
    const shift = this.base - (this.base & this.chainMask);
    for (const table of [this.head, this.chain]) {
      for (let i = 0; i < table.length; i++) {
        const v = table[i]! - shift;
        table[i] = v < EMPTY ? EMPTY : v;
      }
    }
    this.base -= shift;
  }

  /** The packed bytes of the chunk just finished (valid until `encode` is called again). */
  chunkPacked(): Uint8Array {
    return this.out.subarray(0, this.outPos);
  }

  /** The input the chunk just finished covers (valid until `write` or `encode` is called). */
  chunkUnpacked(): Uint8Array {
    return this.window.subarray(this.chunkStart, this.chunkEnd);
  }

  /** True when symbols have been coded into a chunk not yet finished. */
  hasOpenChunk(): boolean {
    return this.chunkOpen && this.pos > this.chunkStart;
  }

  /** Flushes the range coder and closes the open chunk (for the last chunk of the stream). */
  closeChunk(): void {
    for (let i = 0; i < 5; i++) this.shiftLow();
    this.chunkOpen = false;
    this.chunkEnd = this.pos;
  }

  private openChunk(): void {
    this.low = 0;
    this.range = 0xffffffff;
    this.cache = 0;
    this.cacheSize = 1;
    this.outPos = 0;
    this.chunkOpen = true;
    this.chunkStart = this.pos;
  }

  // ---- range coder ----

  private shiftLow(): void {
    const low = this.low;
    if (low < 0xff000000 || low >= 0x100000000) {
      const carry = low >= 0x100000000 ? 1 : 0;
      let byte = this.cache;
      const out = this.out;
      do {
        out[this.outPos++] = (byte + carry) & 0xff;
        byte = 0xff;
      } while (--this.cacheSize !== 0);
      this.cache = (low >>> 24) & 0xff;
    }
    this.cacheSize++;
    this.low = (low & 0x00ffffff) * 256;
  }

  private bit(index: number, bit: number): void {
    const probs = this.probs;
    const prob = probs[index]!;
    const bound = (this.range >>> 11) * prob;
    if (bit === 0) {
      this.range = bound;
      probs[index] = prob + ((2048 - prob) >>> 5);
    } else {
      this.low += bound;
      this.range -= bound;
      probs[index] = prob - (prob >>> 5);
    }
    // One shift always suffices: a coded bit leaves at least range * 31 / 2048 >= 2^18.
    if (this.range < 0x1000000) {
      this.range = (this.range << 8) >>> 0;
      this.shiftLow();
    }
  }

  private tree(base: number, bits: number, value: number): void {
    let m = 1;
    for (let i = bits - 1; i >= 0; i--) {
      const b = (value >>> i) & 1;
      this.bit(base + m, b);
      m = (m << 1) | b;
    }
  }

  private reverseTree(base: number, bits: number, value: number): void {
    let m = 1;
    for (let i = 0; i < bits; i++) {
      const b = value & 1;
      value >>>= 1;
      this.bit(base + m, b);
      m = (m << 1) | b;
    }
  }

  private direct(value: number, bits: number): void {
    for (let i = bits - 1; i >= 0; i--) {
      this.range >>>= 1;
      if ((value >>> i) & 1) this.low += this.range;
      if (this.range < 0x1000000) {
        this.range = (this.range << 8) >>> 0;
        this.shiftLow();
      }
    }
  }

  // ---- symbols ----

  private length(base: number, len: number, posState: number): void {
    this.prices?.noteLength(base === REP_LEN, posState);
    const l = len - 2;
    if (l < 8) {
      this.bit(base + LEN_CHOICE, 0);
      this.tree(base + LEN_LOW + posState * 8, 3, l);
    } else if (l < 16) {
      this.bit(base + LEN_CHOICE, 1);
      this.bit(base + LEN_CHOICE2, 0);
      this.tree(base + LEN_MID + posState * 8, 3, l - 8);
    } else {
      this.bit(base + LEN_CHOICE, 1);
      this.bit(base + LEN_CHOICE2, 1);
      this.tree(base + LEN_HIGH, 8, l - 16);
    }
  }

  private literal(at: number, posState: number): void {
    const window = this.window;
    const state = this.state;
    this.bit(IS_MATCH + (state << 4) + posState, 0);
    const prev = at > this.blockStart ? window[at - 1]! : 0;
    const base = LITERAL + 0x300 * (prev >>> 5);
    let symbol = window[at]! | 0x100;
    if (state < 7) {
      do {
        this.bit(base + (symbol >>> 8), (symbol >>> 7) & 1);
        symbol <<= 1;
      } while (symbol < 0x10000);
      this.state = state < 4 ? 0 : state - 3;
    } else {
      // The matched tree: while the bits agree with the byte at rep0, its bits pick the probabilities too.
      let matchByte = window[at - this.rep0]!;
      let offset = 0x100;
      do {
        matchByte <<= 1;
        this.bit(base + offset + (matchByte & offset) + (symbol >>> 8), (symbol >>> 7) & 1);
        symbol <<= 1;
        offset &= ~(matchByte ^ symbol);
      } while (symbol < 0x10000);
      this.state = state < 10 ? state - 3 : state - 6;
    }
  }

  private match(dist: number, len: number, posState: number): void {
    const state = this.state;
    this.bit(IS_MATCH + (state << 4) + posState, 1);
    this.bit(IS_REP + state, 0);
    this.length(MATCH_LEN, len, posState);
    const lenState = len < 5 ? len - 2 : 3;
    const d = dist - 1;
    let slot: number;
    if (d < 4) {
      slot = d;
    } else {
      const top = 31 - Math.clz32(d);
      slot = (top << 1) | ((d >>> (top - 1)) & 1);
    }
    this.tree(DIST_SLOT + (lenState << 6), 6, slot);
    if (slot >= 4) {
      const footer = (slot >>> 1) - 1;
      const reduced = d - ((2 | (slot & 1)) << footer);
      if (slot < 14) {
        this.reverseTree(DIST_SPECIAL + ((2 | (slot & 1)) << footer) - slot - 1, footer, reduced);
      } else {
        this.direct(reduced >>> 4, footer - 4);
        this.reverseTree(ALIGN, 4, reduced & 15);
      }
    }
    this.prices?.noteMatch(slot >= 14);
    this.rep3 = this.rep2;
    this.rep2 = this.rep1;
    this.rep1 = this.rep0;
    this.rep0 = dist;
    this.state = state < 7 ? 7 : 10;
  }

  private rep(index: number, len: number, posState: number): void {
    const state = this.state;
    this.bit(IS_MATCH + (state << 4) + posState, 1);
    this.bit(IS_REP + state, 1);
    if (index === 0) {
      this.bit(IS_REP_G0 + state, 0);
      this.bit(IS_REP0_LONG + (state << 4) + posState, len === 1 ? 0 : 1);
    } else {
      this.bit(IS_REP_G0 + state, 1);
      let dist: number;
      if (index === 1) {
        this.bit(IS_REP_G1 + state, 0);
        dist = this.rep1;
      } else {
        this.bit(IS_REP_G1 + state, 1);
        this.bit(IS_REP_G2 + state, index - 2);
        if (index === 3) {
          dist = this.rep3;
          this.rep3 = this.rep2;
        } else {
          dist = this.rep2;
        }
        this.rep2 = this.rep1;
      }
      this.rep1 = this.rep0;
      this.rep0 = dist;
    }
    if (len === 1) {
      this.state = state < 7 ? 9 : 11;
    } else {
      this.length(REP_LEN, len, posState);
      this.state = state < 7 ? 8 : 11;
    }
  }

  // ---- match finder ----

  /** Window index where the dictionary was last reset: nothing before it may be referenced. */
  private blockStart = 0;

  private hash(at: number): number {
    const w = this.window;
    const v = w[at]! | (w[at + 1]! << 8) | (w[at + 2]! << 16) | (w[at + 3]! << 24);
    return Math.imul(v, 0x9e3779b1) >>> (32 - this.hashBits);
  }

  /** Inserts the positions up to (not including) `to` that have 4 bytes of input. */
  private skipTo(to: number): void {
    const stop = Math.min(to, this.end - 3);
    const head = this.head;
    const chain = this.chain;
    const mask = this.chainMask;
    const chained = this.depth > 1;
    for (let at = this.hashedTo; at < stop; at++) {
      const h = this.hash(at);
      const stored = at + this.base;
      if (chained) chain[stored & mask] = head[h]!;
      head[h] = stored;
    }
    if (to > this.hashedTo) this.hashedTo = to;
  }

  /**
   * Inserts `at` and finds its longest match of at least 4 bytes (up to `maxLen`), nearest first: sets
   * foundLen/foundDist, and shorterLen/shorterDist to the best match found before it (one byte shorter
   * and much nearer is sometimes the better buy).
   */
  private find(at: number, maxLen: number): void {
    this.foundLen = 0;
    this.shorterLen = 0;
    if (this.hashedTo < at) this.skipTo(at);
    if (at + 4 > this.end) {
      this.hashedTo = at + 1;
      return;
    }
    const window = this.window;
    const h = this.hash(at);
    const stored = at + this.base;
    let candidate = this.head[h]!;
    this.head[h] = stored;
    if (this.depth > 1) this.chain[stored & this.chainMask] = candidate;
    this.hashedTo = at + 1;
    if (maxLen < 4) return;
    const lowest = Math.max(this.blockStart, at - this.dictionarySize);
    let bestLen = 3;
    let bestDist = 0;
    let shorterLen = 0;
    let shorterDist = 0;
    const nice = Math.min(this.niceLength, maxLen);
    for (let depth = this.depth; depth > 0; depth--) {
      const from = candidate - this.base;
      if (from < lowest || from >= at) break;
      if (window[from + bestLen] === window[at + bestLen] && window[from] === window[at]) {
        let len = 1;
        while (len < maxLen && window[from + len] === window[at + len]) len++;
        if (len > bestLen) {
          shorterLen = bestLen;
          shorterDist = bestDist;
          bestLen = len;
          bestDist = at - from;
          if (len >= nice) break;
        }
      }
      if (depth === 1) break;
      candidate = this.chain[candidate & this.chainMask]!;
    }
    if (bestDist !== 0) {
      this.foundLen = bestLen;
      this.foundDist = bestDist;
      if (shorterDist !== 0) {
        this.shorterLen = shorterLen;
        this.shorterDist = shorterDist;
      }
    }
  }

  /** Length of the match at `at` against `dist` back, up to `maxLen` (0 when `dist` reaches before the block). */
  private repLength(at: number, dist: number, maxLen: number): number {
    const from = at - dist;
    if (from < this.blockStart) return 0;
    const window = this.window;
    let len = 0;
    while (len < maxLen && window[from + len] === window[at + len]) len++;
    return len;
  }

  /**
   * Codes symbols until the chunk is full (flushed; returns true) or the input runs out (returns false):
   * without `final` the parser stops LOOKAHEAD bytes short of the end, with it at the end.
   */
  encode(final: boolean): boolean {
    return this.parser === undefined ? this.encodeFast(final) : this.encodeNormal(final, this.parser);
  }

  /**
   * Normal mode: parses OPTS-byte stretches (optimally) into a batch of symbols, and codes the batch one
   * symbol at a time, closing a chunk between two symbols when it is full. Without `final` a parse starts
   * only with NORMAL_LOOKAHEAD bytes ahead, so the parse never sees where a push ended.
   */
  private encodeNormal(final: boolean, parser: OptimumParser): boolean {
    const reps = this.repsNow;
    for (;;) {
      if (this.batchAt === this.batchCount) {
        const avail = this.end - this.pos;
        if (avail === 0 || (!final && avail < NORMAL_LOOKAHEAD)) return false;
        reps[0] = this.rep0;
        reps[1] = this.rep1;
        reps[2] = this.rep2;
        reps[3] = this.rep3;
        this.batchCount = parser.parse(this.window, this.pos, this.end, this.blockStart, this.state, reps);
        this.batchAt = 0;
      }
      if (!this.chunkOpen) this.openChunk();
      else if (this.pos - this.chunkStart >= CHUNK_UNPACKED_LIMIT || this.outPos + this.cacheSize + 5 >= CHUNK_PACKED_LIMIT) {
        this.closeChunk();
        return true;
      }
      const len = parser.symbolLen[this.batchAt]!;
      const dist = parser.symbolDist[this.batchAt]!;
      this.batchAt++;
      const pos = this.pos;
      const posState = (pos - this.blockStart) & POS_MASK;
      if (dist === 0) {
        this.literal(pos, posState);
      } else if (len === 1) {
        // A short rep, unless the state was reset under the batch (then rep0 is 1 and may not match).
        if (dist === this.rep0) this.rep(0, 1, posState);
        else this.literal(pos, posState);
      } else {
        const index = dist === this.rep0 ? 0 : dist === this.rep1 ? 1 : dist === this.rep2 ? 2 : dist === this.rep3 ? 3 : -1;
        if (index >= 0) this.rep(index, len, posState);
        else this.match(dist, len, posState);
      }
      this.pos = pos + len;
    }
  }

  private encodeFast(final: boolean): boolean {
    const window = this.window;
    const nice = this.niceLength;
    for (;;) {
      const pos = this.pos;
      const avail = this.end - pos;
      if (avail === 0 || (!final && avail < LOOKAHEAD)) return false;
      if (!this.chunkOpen) this.openChunk();
      else if (pos - this.chunkStart >= CHUNK_UNPACKED_LIMIT || this.outPos + this.cacheSize + 5 >= CHUNK_PACKED_LIMIT) {
        this.closeChunk();
        return true;
      }
      const posState = (pos - this.blockStart) & POS_MASK;
      const maxLen = avail < MATCH_LEN_MAX ? avail : MATCH_LEN_MAX;

      let mainLen: number;
      let mainDist: number;
      if (this.nextAt === pos) {
        mainLen = this.nextLen;
        mainDist = this.nextDist;
        this.shorterLen = 0;
      } else {
        this.find(pos, maxLen);
        mainLen = this.foundLen;
        mainDist = this.foundDist;
      }
      this.nextAt = -1;

      // The reps first: a rep as long (or nearly) as the main match costs far fewer bits.
      let repLen = 0;
      let repIndex = 0;
      if (maxLen >= 2) {
        for (let i = 0; i < 4; i++) {
          const dist = i === 0 ? this.rep0 : i === 1 ? this.rep1 : i === 2 ? this.rep2 : this.rep3;
          const from = pos - dist;
          if (from < this.blockStart || window[from] !== window[pos] || window[from + 1] !== window[pos + 1]) continue;
          const len = this.repLength(pos, dist, maxLen);
          if (len > repLen) {
            repLen = len;
            repIndex = i;
          }
        }
      }
      if (repLen >= nice) {
        this.rep(repIndex, repLen, posState);
        this.advance(pos + repLen);
        continue;
      }
      if (mainLen >= nice) {
        this.match(mainDist, mainLen, posState);
        this.advance(pos + mainLen);
        continue;
      }
      if (mainLen > 0 && this.shorterLen === mainLen - 1 && mainDist >>> 7 > this.shorterDist) {
        mainLen = this.shorterLen;
        mainDist = this.shorterDist;
      }
      // A short match far back costs more bits than its literals: each byte more pays for 4 more bits of
      // distance (on librocrand's first 12 MB these limits made the file 4.3% smaller than a 1 MiB limit on
      // length 4 alone; measured).
      if ((mainLen === 4 && mainDist >= 1 << 8) || (mainLen === 5 && mainDist >= 1 << 12) || (mainLen === 6 && mainDist >= 1 << 16)) mainLen = 0;
      if (repLen >= 2 && (repLen + 1 >= mainLen || (repLen + 2 >= mainLen && mainDist >= 1 << 9) || (repLen + 3 >= mainLen && mainDist >= 1 << 15))) {
        this.rep(repIndex, repLen, posState);
        this.advance(pos + repLen);
        continue;
      }
      if (mainLen < 4 || avail <= 2) {
        // A short rep (rep0, one byte) where the literal would be coded without the matched tree.
        if (this.state >= 7 || pos - this.rep0 < this.blockStart || window[pos] !== window[pos - this.rep0]) this.literal(pos, posState);
        else this.rep(0, 1, posState);
        this.pos = pos + 1;
        continue;
      }

      // One lazy step: is the next position's match clearly better?
      this.find(pos + 1, maxLen - 1);
      this.nextAt = pos + 1;
      this.nextLen = this.foundLen;
      this.nextDist = this.foundDist;
      const nextLen = this.foundLen;
      const nextDist = this.foundDist;
      if (
        nextLen >= 4 &&
        ((nextLen >= mainLen && nextDist < mainDist) ||
          (nextLen === mainLen + 1 && !(mainDist >>> 7 > nextDist)) ||
          nextLen > mainLen + 1 ||
          (nextLen + 1 >= mainLen && mainLen >= 5 && nextDist >>> 7 > mainDist))
      ) {
        this.literal(pos, posState);
        this.pos = pos + 1;
        continue;
      }
      const limit = mainLen - 1;
      let repNext = false;
      for (let i = 0; i < 4 && !repNext; i++) {
        const dist = i === 0 ? this.rep0 : i === 1 ? this.rep1 : i === 2 ? this.rep2 : this.rep3;
        repNext = this.repLength(pos + 1, dist, limit) >= limit;
      }
      if (repNext) {
        this.literal(pos, posState);
        this.pos = pos + 1;
        continue;
      }
      this.match(mainDist, mainLen, posState);
      this.advance(pos + mainLen);
    }
  }

  private advance(to: number): void {
    // Inside a long match only its first and last 4 positions go into the hash table: the ones between
    // would mostly point at more of the same run, and inserting them was a third of the time on a
    // compressible library (measured on librocrand, and the ratio did not get worse).
    if (to - this.hashedTo > SKIP_INSERT_BEYOND) {
      this.skipTo(this.hashedTo + 4);
      this.hashedTo = to - 4;
    }
    this.skipTo(to);
    this.pos = to;
  }
}
