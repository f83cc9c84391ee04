/**
 * The LZMA probability model's layout and what its symbols cost, for the encoder's "normal" (optimal)
 * parser (src/compress/lzma-optimum.ts). The layout is the decoder's (LZMA SDK lzma-specification.txt,
 * liblzma lzma_common.h); the prices follow liblzma's price model (rangecoder/price.h, lzma_encoder.c):
 *
 * | price | what it is |
 * |---|---|
 * | unit | 1/16 bit: a bit coded with probability p of being 0 costs -log2(p) * 16, read from a 128-entry table by p >> 4 |
 * | length | per position state (4) and kind (match / rep), every length 2 .. niceLength, refilled after the table's size of lengths coded with that position state |
 * | distance slot | per length state (4), the 6-bit slot tree, plus 16 per direct bit for slots 14 and up |
 * | distance | below 128: slot + reverse-tree footer, filled per length state; 128 and up: slot + align |
 * | align | the 4 reverse-coded low bits, refilled after 16 matches that coded them |
 * | distances | refilled after 128 matches |
 *
 * Prices are refreshed from the probabilities now and then, not per symbol (a refresh costs thousands of
 * bit prices): a price a few hundred symbols old is close enough to choose between parses, and liblzma
 * refreshes on the same schedule.
 */

export const PROB_INIT = 1024;
export const STATES = 12;
export const POS_STATES = 4;
// The probability table, one Uint16Array; offsets of each model.
export const IS_MATCH = 0;
export const IS_REP = IS_MATCH + STATES * 16;
export const IS_REP_G0 = IS_REP + STATES;
export const IS_REP_G1 = IS_REP_G0 + STATES;
export const IS_REP_G2 = IS_REP_G1 + STATES;
export const IS_REP0_LONG = IS_REP_G2 + STATES;
export const DIST_SLOT = IS_REP0_LONG + STATES * 16;
export const DIST_SPECIAL = DIST_SLOT + 4 * 64;
export const ALIGN = DIST_SPECIAL + 114;
export const LEN_CHOICE = 0;
export const LEN_CHOICE2 = 1;
export const LEN_LOW = 2;
export const LEN_MID = LEN_LOW + 16 * 8;
export const LEN_HIGH = LEN_MID + 16 * 8;
const LEN_SIZE = LEN_HIGH + 256;
export const MATCH_LEN = ALIGN + 16;
export const REP_LEN = MATCH_LEN + LEN_SIZE;
export const LITERAL = REP_LEN + LEN_SIZE;
export const PROBS = LITERAL + 0x300 * 8;

/** Distances below this (minus one) have a price each; above, slot price + align price. */
const FULL_DISTANCES = 128;
/** Lengths 2 .. 273 as table rows. */
const LEN_SYMBOLS = 272;
/** Large enough that no parse of a few thousand symbols adds up to it, small enough to add two without overflow. */
export const INFINITY_PRICE = 1 << 30;

/** -log2(p) in 1/16 bits for p = (i * 16 + 8) / 2048, the middle of each 16-wide probability bucket. */
const BIT_PRICES = new Int32Array(128);
for (let i = 0; i < 128; i++) BIT_PRICES[i] = Math.round(-Math.log2((i * 16 + 8) / 2048) * 16);

/**
 * What coding `bit` with probability `prob` (of a 0, in 1/2048) costs. Without a branch on the bit (a
 * literal's bits are a coin toss to the branch predictor): for a 1, prob ^ 2047 = 2047 - prob.
 */
export function bitPrice(prob: number, bit: number): number {
  return BIT_PRICES[(prob ^ (-bit & 2047)) >>> 4]!;
}

export function bit0Price(prob: number): number {
  return BIT_PRICES[prob >>> 4]!;
}

export function bit1Price(prob: number): number {
  return BIT_PRICES[(prob ^ 2047) >>> 4]!;
}

function treePrice(probs: Uint16Array, base: number, bits: number, value: number): number {
  let price = 0;
  let m = 1;
  for (let i = bits - 1; i >= 0; i--) {
    const b = (value >>> i) & 1;
    price += bitPrice(probs[base + m]!, b);
    m = (m << 1) | b;
  }
  return price;
}

function reverseTreePrice(probs: Uint16Array, base: number, bits: number, value: number): number {
  let price = 0;
  let m = 1;
  for (let i = 0; i < bits; i++) {
    const b = value & 1;
    value >>>= 1;
    price += bitPrice(probs[base + m]!, b);
    m = (m << 1) | b;
  }
  return price;
}

/** The distance slot of `d` = distance - 1. */
export function distanceSlot(d: number): number {
  if (d < 4) return d;
  const top = 31 - Math.clz32(d);
  return (top << 1) | ((d >>> (top - 1)) & 1);
}

/**
 * Price tables over one probability table, refreshed on the schedule the encoder reports through
 * `noteLength` / `noteMatch`.
 */
export class LzmaPrices {
  /** Match and rep length prices, [posState * 272 + len - 2]. */
  readonly matchLen = new Int32Array(POS_STATES * LEN_SYMBOLS);
  readonly repLen = new Int32Array(POS_STATES * LEN_SYMBOLS);
  private readonly matchLenLeft = new Int32Array(POS_STATES);
  private readonly repLenLeft = new Int32Array(POS_STATES);
  /** Distance slot prices [lenState * 64 + slot], direct bits included. */
  private readonly slot = new Int32Array(4 * 64);
  /** Prices of distances below 128 [lenState * 128 + distance - 1]. */
  private readonly dist = new Int32Array(4 * FULL_DISTANCES);
  private readonly align = new Int32Array(16);
  private matchesSince = 0;
  private alignSince = 0;
  /** Lengths the tables hold (2 .. niceLength: longer matches are taken without pricing). */
  private readonly tableSize: number;

  constructor(
    private readonly probs: Uint16Array,
    niceLength: number,
  ) {
    this.tableSize = niceLength - 1;
    this.stale();
  }

  /** Marks every table for refilling (after the probabilities were reset). */
  stale(): void {
    this.matchLenLeft.fill(0);
    this.repLenLeft.fill(0);
    this.matchesSince = FULL_DISTANCES;
    this.alignSince = 16;
  }

  /** A length was coded (`rep`: with the rep length coder) at `posState`. */
  noteLength(rep: boolean, posState: number): void {
    if (rep) this.repLenLeft[posState]!--;
    else this.matchLenLeft[posState]!--;
  }

  /** A match was coded; `aligned`: its distance used the align bits. */
  noteMatch(aligned: boolean): void {
    this.matchesSince++;
    if (aligned) this.alignSince++;
  }

  /** Refills the tables whose schedule says so; called once per parse, not per symbol. */
  refresh(): void {
    if (this.alignSince >= 16) this.fillAlign();
    if (this.matchesSince >= FULL_DISTANCES) this.fillDistances();
    for (let posState = 0; posState < POS_STATES; posState++) {
      if (this.matchLenLeft[posState]! <= 0) this.fillLength(this.matchLen, MATCH_LEN, posState, this.matchLenLeft);
      if (this.repLenLeft[posState]! <= 0) this.fillLength(this.repLen, REP_LEN, posState, this.repLenLeft);
    }
  }

  /** A match's distance and length past the is-match / is-rep bits. */
  distLenPrice(dist: number, len: number, posState: number): number {
    return this.matchLen[posState * LEN_SYMBOLS + len - 2]! + this.distPrice(dist, len < 5 ? len - 2 : 3);
  }

  /** A distance's slot and footer, for a match whose length state is `lenState` (length 2, 3, 4, 5+). */
  distPrice(dist: number, lenState: number): number {
    const d = dist - 1;
    if (d < FULL_DISTANCES) return this.dist[lenState * FULL_DISTANCES + d]!;
    return this.slot[(lenState << 6) + distanceSlot(d)]! + this.align[d & 15]!;
  }

  private fillLength(table: Int32Array, base: number, posState: number, left: Int32Array): void {
    const probs = this.probs;
    const choice = probs[base + LEN_CHOICE]!;
    const choice2 = probs[base + LEN_CHOICE2]!;
    const low = bit0Price(choice);
    const mid = bit1Price(choice) + bit0Price(choice2);
    const high = bit1Price(choice) + bit1Price(choice2);
    const row = posState * LEN_SYMBOLS;
    for (let i = 0; i < this.tableSize; i++) {
      table[row + i] =
        i < 8 ? low + treePrice(probs, base + LEN_LOW + posState * 8, 3, i) : i < 16 ? mid + treePrice(probs, base + LEN_MID + posState * 8, 3, i - 8) : high + treePrice(probs, base + LEN_HIGH, 8, i - 16);
    }
    left[posState] = this.tableSize;
  }

  private fillDistances(): void {
    const probs = this.probs;
    for (let lenState = 0; lenState < 4; lenState++) {
      for (let slot = 0; slot < 64; slot++) {
        let price = treePrice(probs, DIST_SLOT + (lenState << 6), 6, slot);
        if (slot >= 14) price += ((slot >>> 1) - 1 - 4) << 4;
        this.slot[(lenState << 6) + slot] = price;
      }
      for (let d = 0; d < FULL_DISTANCES; d++) {
        const slot = distanceSlot(d);
        let price = this.slot[(lenState << 6) + slot]!;
        if (slot >= 4) {
          const footer = (slot >>> 1) - 1;
          const start = (2 | (slot & 1)) << footer;
          price += reverseTreePrice(probs, DIST_SPECIAL + start - slot - 1, footer, d - start);
        }
        this.dist[lenState * FULL_DISTANCES + d] = price;
      }
    }
    this.matchesSince = 0;
  }

  private fillAlign(): void {
    for (let i = 0; i < 16; i++) this.align[i] = reverseTreePrice(this.probs, ALIGN, 4, i);
    this.alignSince = 0;
  }
}
