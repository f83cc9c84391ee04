/**
 * The optimal parser of the LZMA encoder's "normal" mode (the method of liblzma's
 * lzma_encoder_optimum_normal.c): from a position, the cheapest way to code each of the next few hundred
 * bytes is found by pricing every symbol that can end there, then the path back from the end is coded.
 *
 * | step | what |
 * |---|---|
 * | node `i` | the cheapest price found to code the next `i` bytes, and the symbol that ends there (literal, short rep, rep0-3 of a length, match of a distance and length) with where it starts; the state and the four reps that path leaves |
 * | start | literal or short rep to node 1; every rep length to its node; every match length (each length with the nearest distance the finder gave for it) to its node |
 * | each node in turn | the same from there, priced from the node's own state and reps, plus three two-symbol shapes liblzma found worth it: literal then rep0, rep then literal then rep0, match then literal then rep0 |
 * | stop | at the farthest node reached, or where the finder gives a match of `niceLength` (taken whole by the next parse) |
 * | out | the path back from the stop, as (length, distance) symbols in order |
 *
 * Symbols are handed out by distance, not by rep index: the encoder codes a distance equal to one of its
 * reps as that rep, so a batch stays valid even if the coder's state is reset before it is all coded
 * (after a chunk sent uncompressed).
 */
import { Bt4MatchFinder } from "./lzma-bt4.js";
import {
  IS_MATCH,
  IS_REP,
  IS_REP0_LONG,
  IS_REP_G0,
  IS_REP_G1,
  IS_REP_G2,
  INFINITY_PRICE,
  LITERAL,
  LzmaPrices,
  bit0Price,
  bit1Price,
  bitPrice,
} from "./lzma-price.js";

/** Nodes of one parse (liblzma's OPTS): the farthest a parse can reach past its start, plus one. */
export const OPTS = 1 << 12;
const POS_MASK = 3;
const MATCH_LEN_MAX = 273;
/** A node's `back`: below 4 a rep index, from 4 a match of distance back - 3; -1 a literal. */
const LITERAL_BACK = -1;
const MATCH_BASE = 3;

function afterLiteral(state: number): number {
  return state < 4 ? 0 : state < 10 ? state - 3 : state - 6;
}
function afterMatch(state: number): number {
  return state < 7 ? 7 : 10;
}
function afterRep(state: number): number {
  return state < 7 ? 8 : 11;
}
function afterShortRep(state: number): number {
  return state < 7 ? 9 : 11;
}

export class OptimumParser {
  /** The last parse's symbols in coding order: length, and distance (0: a literal). */
  readonly symbolLen = new Int32Array(OPTS);
  readonly symbolDist = new Int32Array(OPTS);

  // The nodes.
  private readonly price = new Int32Array(OPTS);
  private readonly posPrev = new Int32Array(OPTS);
  private readonly backPrev = new Int32Array(OPTS);
  private readonly prev1IsLiteral = new Uint8Array(OPTS);
  private readonly prev2 = new Uint8Array(OPTS);
  private readonly posPrev2 = new Int32Array(OPTS);
  private readonly backPrev2 = new Int32Array(OPTS);
  private readonly state = new Uint8Array(OPTS);
  private readonly reps = new Int32Array(OPTS * 4);
  private readonly repLens = new Int32Array(4);

  constructor(
    private readonly probs: Uint16Array,
    private readonly prices: LzmaPrices,
    private readonly finder: Bt4MatchFinder,
    private readonly niceLength: number,
  ) {}

  /** What coding the byte at `at` as a literal costs in `state`, with `matchByte` the byte at rep0. */
  private literalPrice(window: Uint8Array, at: number, blockStart: number, state: number, matchByte: number): number {
    const probs = this.probs;
    const prev = at > blockStart ? window[at - 1]! : 0;
    const base = LITERAL + 0x300 * (prev >>> 5);
    let symbol = window[at]! | 0x100;
    let price = 0;
    if (state < 7) {
      do {
        price += bitPrice(probs[base + (symbol >>> 8)]!, (symbol >>> 7) & 1);
        symbol <<= 1;
      } while (symbol < 0x10000);
    } else {
      let offset = 0x100;
      do {
        matchByte <<= 1;
        price += bitPrice(probs[base + offset + (matchByte & offset) + (symbol >>> 8)]!, (symbol >>> 7) & 1);
        symbol <<= 1;
        offset &= ~(matchByte ^ symbol);
      } while (symbol < 0x10000);
    }
    return price;
  }

  /** The bits that say "rep `index`" (after is-match 1 and is-rep 1), for a rep of length 2 or more. */
  private pureRepPrice(index: number, state: number, posState: number): number {
    const probs = this.probs;
    if (index === 0) return bit0Price(probs[IS_REP_G0 + state]!) + bit1Price(probs[IS_REP0_LONG + (state << 4) + posState]!);
    let price = bit1Price(probs[IS_REP_G0 + state]!);
    if (index === 1) return price + bit0Price(probs[IS_REP_G1 + state]!);
    price += bit1Price(probs[IS_REP_G1 + state]!);
    return price + bitPrice(probs[IS_REP_G2 + state]!, index - 2);
  }

  private shortRepPrice(state: number, posState: number): number {
    return bit0Price(this.probs[IS_REP_G0 + state]!) + bit0Price(this.probs[IS_REP0_LONG + (state << 4) + posState]!);
  }

  private set(node: number, price: number, posPrev: number, back: number): void {
    this.price[node] = price;
    this.posPrev[node] = posPrev;
    this.backPrev[node] = back;
    this.prev1IsLiteral[node] = 0;
  }

  /**
   * Parses from `pos` (coder state `state`, reps `reps`) and returns how many symbols it put in
   * `symbolLen` / `symbolDist`. Reads no further than `end`; the caller keeps OPTS + 273 bytes of input
   * ahead of `pos` unless the input ends, so that how the input was pushed does not change the parse.
   */
  parse(window: Uint8Array, pos: number, end: number, blockStart: number, state: number, reps: Int32Array): number {
    const probs = this.probs;
    const prices = this.prices;
    const finder = this.finder;
    const nice = this.niceLength;
    prices.refresh();

    const avail = Math.min(end - pos, MATCH_LEN_MAX);
    let count = finder.find(window, pos, end, blockStart);
    const lens = finder.lens;
    const dists = finder.dists;
    const mainLen = count > 0 ? lens[count - 1]! : 0;
    if (avail < 2) return this.single(1, 0);

    const repLens = this.repLens;
    let repMax = 0;
    for (let i = 0; i < 4; i++) {
      const from = pos - reps[i]!;
      let len = 0;
      if (from >= blockStart && window[from] === window[pos] && window[from + 1] === window[pos + 1]) {
        len = 2;
        while (len < avail && window[from + len] === window[pos + len]) len++;
      }
      repLens[i] = len;
      if (len > repLens[repMax]!) repMax = i;
    }
    // A match of niceLength, or one that runs to the end of the input, is taken whole: nothing longer can
    // follow, and pricing every length of it at every node ahead is quadratic (a run's last few hundred
    // bytes before a block's end cost 1 ms each; measured with 1000-byte blocks).
    const whole = avail < nice ? avail : nice;
    if (repLens[repMax]! >= whole) return this.single(repLens[repMax]!, reps[repMax]!);
    if (mainLen >= whole) return this.single(mainLen, dists[count - 1]!);

    const curByte = window[pos]!;
    const rep0From = pos - reps[0]!;
    const matchByte = rep0From >= blockStart ? window[rep0From]! : ~curByte & 0xff;
    if (mainLen < 2 && curByte !== matchByte && repLens[repMax]! < 2) return this.single(1, 0);

    const posState = (pos - blockStart) & POS_MASK;
    this.state[0] = state;
    for (let i = 0; i < 4; i++) this.reps[i] = reps[i]!;

    const isMatchProb = probs[IS_MATCH + (state << 4) + posState]!;
    this.set(1, bit0Price(isMatchProb) + this.literalPrice(window, pos, blockStart, state, matchByte), 0, LITERAL_BACK);
    const matchPrice = bit1Price(isMatchProb);
    const repMatchPrice = matchPrice + bit1Price(probs[IS_REP + state]!);
    if (matchByte === curByte) {
      const price = repMatchPrice + this.shortRepPrice(state, posState);
      if (price < this.price[1]!) this.set(1, price, 0, 0);
    }
    let lenEnd = mainLen >= repLens[repMax]! ? mainLen : repLens[repMax]!;
    if (lenEnd < 2) return this.single(1, this.backPrev[1] === 0 ? reps[0]! : 0);

    for (let i = 2; i <= lenEnd; i++) this.price[i] = INFINITY_PRICE;
    for (let i = 0; i < 4; i++) {
      const repLen = repLens[i]!;
      if (repLen < 2) continue;
      const priceBase = repMatchPrice + this.pureRepPrice(i, state, posState);
      for (let len = repLen; len >= 2; len--) {
        const price = priceBase + prices.repLen[posState * 272 + len - 2]!;
        if (price < this.price[len]!) this.set(len, price, 0, i);
      }
    }
    const normalMatchPrice = matchPrice + bit0Price(probs[IS_REP + state]!);
    let len = repLens[0]! >= 2 ? repLens[0]! + 1 : 2;
    if (len <= mainLen) {
      let i = 0;
      while (len > lens[i]!) i++;
      for (;; len++) {
        const dist = dists[i]!;
        const price = normalMatchPrice + prices.distLenPrice(dist, len, posState);
        if (price < this.price[len]!) this.set(len, price, 0, dist + MATCH_BASE);
        if (len === lens[i] && ++i === count) break;
      }
    }

    let cur = 1;
    for (; cur < lenEnd; cur++) {
      count = finder.find(window, pos + cur, end, blockStart);
      if (count > 0 && lens[count - 1]! >= nice) break;
      lenEnd = this.extend(window, pos, cur, lenEnd, end, blockStart, count);
    }
    return this.backward(cur);
  }

  /** One symbol, for a parse that needs no nodes. */
  private single(len: number, dist: number): number {
    this.symbolLen[0] = len;
    this.symbolDist[0] = dist;
    return 1;
  }

  /** A rep0 of `len` bytes from `state` at `posState`: is-match, is-rep, the rep0 choice, the length. */
  private rep0Price(state: number, posState: number, len: number): number {
    const probs = this.probs;
    return bit1Price(probs[IS_MATCH + (state << 4) + posState]!) + bit1Price(probs[IS_REP + state]!) + this.pureRepPrice(0, state, posState) + this.prices.repLen[posState * 272 + len - 2]!;
  }

  /**
   * A first symbol of `len` bytes at node `cur` (a rep or a match, `back` as the path records it, costing
   * `firstPrice` and leaving `stateAfter`), then a literal, then a rep0 of `len2` (the bytes at `from` go on
   * matching past the literal): priced, and kept at its node when cheaper. Returns the end of the priced nodes.
   */
  private thenLiteralRep0(window: Uint8Array, posCur: number, blockStart: number, cur: number, len: number, len2: number, firstPrice: number, stateAfter: number, from: number, back: number, lenEnd: number): number {
    const priceOf = this.price;
    const posState = (posCur + len - blockStart) & POS_MASK;
    const litPrice = firstPrice + bit0Price(this.probs[IS_MATCH + (stateAfter << 4) + posState]!) + this.literalPrice(window, posCur + len, blockStart, stateAfter, window[from + len]!);
    const price = litPrice + this.rep0Price(afterLiteral(stateAfter), (posState + 1) & POS_MASK, len2);
    const offset = cur + len + 1 + len2;
    while (lenEnd < offset) priceOf[++lenEnd] = INFINITY_PRICE;
    if (price < priceOf[offset]!) {
      this.set(offset, price, cur + len + 1, 0);
      this.prev1IsLiteral[offset] = 1;
      this.prev2[offset] = 1;
      this.posPrev2[offset] = cur;
      this.backPrev2[offset] = back;
    }
    return lenEnd;
  }

  /** Prices every symbol from node `cur` (at window index pos + cur), whose `count` matches the finder holds; returns the new farthest node. */
  private extend(window: Uint8Array, pos: number, cur: number, lenEnd: number, end: number, blockStart: number, count: number): number {
    const probs = this.probs;
    const prices = this.prices;
    const nice = this.niceLength;
    const priceOf = this.price;
    const reps = this.reps;

    // The state and reps the cheapest path to `cur` leaves.
    let posPrev = this.posPrev[cur]!;
    let state: number;
    if (this.prev1IsLiteral[cur]) {
      posPrev--;
      if (this.prev2[cur]) {
        state = this.state[this.posPrev2[cur]!]!;
        state = this.backPrev2[cur]! < 4 ? afterRep(state) : afterMatch(state);
      } else {
        state = this.state[posPrev]!;
      }
      state = afterLiteral(state);
    } else {
      state = this.state[posPrev]!;
    }
    const at4 = cur * 4;
    if (posPrev === cur - 1) {
      state = this.backPrev[cur] === 0 && !this.prev1IsLiteral[cur] ? afterShortRep(state) : afterLiteral(state);
      const from4 = posPrev * 4;
      reps[at4] = reps[from4]!;
      reps[at4 + 1] = reps[from4 + 1]!;
      reps[at4 + 2] = reps[from4 + 2]!;
      reps[at4 + 3] = reps[from4 + 3]!;
    } else {
      let back: number;
      if (this.prev1IsLiteral[cur] && this.prev2[cur]) {
        posPrev = this.posPrev2[cur]!;
        back = this.backPrev2[cur]!;
        state = afterRep(state);
      } else {
        back = this.backPrev[cur]!;
        state = back < 4 ? afterRep(state) : afterMatch(state);
      }
      const from4 = posPrev * 4;
      if (back < 4) {
        reps[at4] = reps[from4 + back]!;
        let i = 1;
        for (; i <= back; i++) reps[at4 + i] = reps[from4 + i - 1]!;
        for (; i < 4; i++) reps[at4 + i] = reps[from4 + i]!;
      } else {
        reps[at4] = back - MATCH_BASE;
        reps[at4 + 1] = reps[from4]!;
        reps[at4 + 2] = reps[from4 + 1]!;
        reps[at4 + 3] = reps[from4 + 2]!;
      }
    }
    this.state[cur] = state;

    const posCur = pos + cur;
    const curByte = window[posCur]!;
    const rep0 = reps[at4]!;
    const rep0Valid = posCur - rep0 >= blockStart;
    const matchByte = rep0Valid ? window[posCur - rep0]! : ~curByte & 0xff;
    const posState = (posCur - blockStart) & POS_MASK;
    const curPrice = priceOf[cur]!;
    const isMatchProb = probs[IS_MATCH + (state << 4) + posState]!;
    const curAnd1Price = curPrice + bit0Price(isMatchProb) + this.literalPrice(window, posCur, blockStart, state, matchByte);

    let nextIsLiteral = false;
    if (curAnd1Price < priceOf[cur + 1]!) {
      this.set(cur + 1, curAnd1Price, cur, LITERAL_BACK);
      nextIsLiteral = true;
    }
    const matchPrice = curPrice + bit1Price(isMatchProb);
    const repMatchPrice = matchPrice + bit1Price(probs[IS_REP + state]!);
    if (matchByte === curByte && !(this.posPrev[cur + 1]! < cur && this.backPrev[cur + 1] === 0)) {
      const price = repMatchPrice + this.shortRepPrice(state, posState);
      if (price <= priceOf[cur + 1]!) {
        this.set(cur + 1, price, cur, 0);
        nextIsLiteral = true;
      }
    }

    const availFull = Math.min(end - posCur, OPTS - 1 - cur);
    if (availFull < 2) return lenEnd;
    const availNice = availFull < nice ? availFull : nice;

    // Literal, then rep0 (with the state the literal leaves).
    if (!nextIsLiteral && matchByte !== curByte && rep0Valid) {
      const from = posCur + 1 - rep0;
      const limit = Math.min(availFull - 1, nice);
      let len2 = 0;
      while (len2 < limit && window[from + len2] === window[posCur + 1 + len2]) len2++;
      if (len2 >= 2) {
        const state2 = afterLiteral(state);
        const posState2 = (posCur + 1 - blockStart) & POS_MASK;
        const price = curAnd1Price + this.rep0Price(state2, posState2, len2);
        const offset = cur + 1 + len2;
        while (lenEnd < offset) priceOf[++lenEnd] = INFINITY_PRICE;
        if (price < priceOf[offset]!) {
          this.set(offset, price, cur + 1, 0);
          this.prev1IsLiteral[offset] = 1;
          this.prev2[offset] = 0;
        }
      }
    }

    let startLen = 2;
    for (let index = 0; index < 4; index++) {
      const dist = reps[at4 + index]!;
      const from = posCur - dist;
      if (from < blockStart || window[from] !== window[posCur] || window[from + 1] !== window[posCur + 1]) continue;
      let len = 2;
      while (len < availNice && window[from + len] === window[posCur + len]) len++;
      while (lenEnd < cur + len) priceOf[++lenEnd] = INFINITY_PRICE;
      const priceBase = repMatchPrice + this.pureRepPrice(index, state, posState);
      for (let l = len; l >= 2; l--) {
        const price = priceBase + prices.repLen[posState * 272 + l - 2]!;
        if (price < priceOf[cur + l]!) this.set(cur + l, price, cur, index);
      }
      if (index === 0) startLen = len + 1;

      // Rep, literal, rep0.
      const limit = Math.min(availFull, len + 1 + nice);
      let end2 = len + 1;
      while (end2 < limit && window[from + end2] === window[posCur + end2]) end2++;
      const len2 = end2 - (len + 1);
      if (len2 >= 2) lenEnd = this.thenLiteralRep0(window, posCur, blockStart, cur, len, len2, priceBase + prices.repLen[posState * 272 + len - 2]!, afterRep(state), from, index, lenEnd);
    }

    // Matches: each length from startLen with the nearest distance that reaches it.
    const lens = this.finder.lens;
    const dists = this.finder.dists;
    if (count === 0) return lenEnd;
    let newLen = lens[count - 1]!;
    if (newLen > availNice) {
      newLen = availNice;
      count = 0;
      while (newLen > lens[count]!) count++;
      count++;
    }
    if (newLen < startLen) return lenEnd;
    const normalMatchPrice = matchPrice + bit0Price(probs[IS_REP + state]!);
    while (lenEnd < cur + newLen) priceOf[++lenEnd] = INFINITY_PRICE;
    const lenRow = posState * 272 - 2;
    const matchLenPrices = prices.matchLen;
    let i = 0;
    while (startLen > lens[i]!) i++;
    let len = startLen;
    for (; i < count; i++) {
      const dist = dists[i]!;
      // A distance costs the same for every length from 5 (one length state): priced once per match.
      const distPrice5 = prices.distPrice(dist, 3);
      const last = lens[i]! < newLen ? lens[i]! : newLen;
      let price = 0;
      for (; len <= last; len++) {
        price = normalMatchPrice + matchLenPrices[lenRow + len]! + (len < 5 ? prices.distPrice(dist, len - 2) : distPrice5);
        if (price < priceOf[cur + len]!) this.set(cur + len, price, cur, dist + MATCH_BASE);
      }
      const matchLen = last;
      // Match, literal, rep0.
      const from = posCur - dist;
      const limit = Math.min(availFull, matchLen + 1 + nice);
      let end2 = matchLen + 1;
      while (end2 < limit && window[from + end2] === window[posCur + end2]) end2++;
      const len2 = end2 - (matchLen + 1);
      if (len2 >= 2) lenEnd = this.thenLiteralRep0(window, posCur, blockStart, cur, matchLen, len2, price, afterMatch(state), from, dist + MATCH_BASE, lenEnd);
      if (last === newLen) break;
    }
    return lenEnd;
  }

  /**
   * Follows the cheapest path back from node `cur` and writes its symbols in coding order; returns their
   * count. A rep's distance is read from the reps of the node it starts at; the rep0 after a literal from
   * the node before that literal (a literal moves no rep), or from the symbol before the literal.
   */
  private backward(cur: number): number {
    const lenOut = this.symbolLen;
    const distOut = this.symbolDist;
    const reps = this.reps;
    // Collected last first from the arrays' end, then moved to their front.
    let n = OPTS;
    let at = cur;
    while (at > 0) {
      const node = at;
      const start = this.posPrev[node]!;
      const back = this.backPrev[node]!;
      n--;
      lenOut[n] = node - start;
      if (!this.prev1IsLiteral[node]) {
        distOut[n] = back < 0 ? 0 : back < 4 ? reps[start * 4 + back]! : back - MATCH_BASE;
        at = start;
        continue;
      }
      // A rep0 after a literal (after a symbol, with prev2).
      n--;
      lenOut[n] = 1;
      distOut[n] = 0;
      at = start - 1;
      if (!this.prev2[node]) {
        distOut[n + 1] = reps[at * 4]!;
        continue;
      }
      const start2 = this.posPrev2[node]!;
      const back2 = this.backPrev2[node]!;
      const dist2 = back2 < 4 ? reps[start2 * 4 + back2]! : back2 - MATCH_BASE;
      distOut[n + 1] = dist2;
      n--;
      lenOut[n] = at - start2;
      distOut[n] = dist2;
      at = start2;
    }
    const count = OPTS - n;
    lenOut.copyWithin(0, n, OPTS);
    distOut.copyWithin(0, n, OPTS);
    return count;
  }
}
