/**
 * The binary-tree match finder of the encoder's "normal" mode (liblzma's bt4, lz_encoder_mf.c): for a
 * position, every match that is longer than all nearer ones, shortest first, which is what the optimal
 * parser (src/compress/lzma-optimum.ts) prices.
 *
 * | table | holds |
 * |---|---|
 * | `hash2` | 2^16 heads by the next 2 bytes (exact): the newest earlier position starting with them |
 * | `hash3` | 2^16 heads by a hash of the next 3 bytes |
 * | `hash4` | 2^16 to 2^20 heads by a hash of the next 4 bytes: the root of that hash's tree |
 * | `son` | two children per position (power-of-two ring over the dictionary): a binary search tree of the suffixes sharing a 4-byte hash, newest at the root |
 *
 * Inserting a position walks its tree from the root, comparing suffixes: every node passed is hung
 * left or right of the new root, and the nearest node of each longer common prefix is a match. The walk
 * stops after `depth` nodes, at a node out of the dictionary's reach, or at a match of `niceLength`
 * (whose node it replaces). A position covered by a match the parser took is inserted the same way
 * without reporting matches, so the trees stay whole; inside a match longer than 64 only its first and
 * last 8 positions are.
 *
 * Positions are stored as window index + `base` (base grows as the window slides, and is lowered by a
 * multiple of the ring's size before it leaves int32), so sliding never rewrites the tables; base stays
 * at least the ring's size, so 0 is never a live position and marks an empty entry.
 */

const EMPTY = 0;
const HASH23_BITS = 16;
/** Positions stored in the tables are kept below this by rebasing. */
const REBASE_AT = 1 << 30;
/** Positions skipped by a match longer than this are inserted only at its ends (SKIP_EDGE each). */
const SKIP_INSERT_BEYOND = 64;
const SKIP_EDGE = 8;
/** The longest match LZMA codes. */
const MATCH_LEN_MAX = 273;

function nextPowerOfTwo(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

export class Bt4MatchFinder {
  /** Matches of the last `find`: lengths strictly increasing, and each one's distance. */
  readonly lens = new Int32Array(MATCH_LEN_MAX + 4);
  readonly dists = new Int32Array(MATCH_LEN_MAX + 4);
  /** Window index whose matches `lens` / `dists` hold (-1: none). */
  private foundAt = -1;
  private foundCount = 0;
  /** The next window index to insert. */
  private insertedTo = 0;
  private base: number;
  private son: Int32Array;
  private mask: number;
  private readonly ringMax: number;
  private readonly hashBits: number;
  private readonly hash2 = new Int32Array(1 << HASH23_BITS);
  private readonly hash3 = new Int32Array(1 << HASH23_BITS);
  private readonly hash4: Int32Array;

  constructor(
    private readonly dictionarySize: number,
    private readonly niceLength: number,
    private readonly depth: number,
    windowLength: number,
  ) {
    this.ringMax = nextPowerOfTwo(dictionarySize);
    this.base = this.ringMax;
    const ring = Math.min(this.ringMax, nextPowerOfTwo(windowLength));
    this.son = new Int32Array(2 * ring);
    this.mask = ring - 1;
    this.hashBits = Math.min(20, Math.max(16, Math.log2(this.ringMax) - 3));
    this.hash4 = new Int32Array(1 << this.hashBits);
  }

  /**
   * The window grew to `windowLength` (nothing slid yet): a bigger ring. Every stored position is base +
   * an index below the old ring's size and base is a multiple of both sizes, so each keeps its slot.
   */
  grow(windowLength: number): void {
    const ring = Math.min(this.ringMax, nextPowerOfTwo(windowLength));
    if (ring <= this.mask + 1) return;
    const son = new Int32Array(2 * ring);
    son.set(this.son);
    this.son = son;
    this.mask = ring - 1;
  }

  /** The window's first `keep` bytes were dropped. */
  slide(keep: number): void {
    this.insertedTo -= keep;
    if (this.foundAt >= 0) this.foundAt -= keep;
    this.base += keep;
    if (this.base >= REBASE_AT) this.rebase();
  }

  /** A new block: nothing inserted may be reported again (positions before `blockStart` are out of reach anyway). */
  forget(): void {
    this.foundAt = -1;
  }

  /** Lowers every stored position by a multiple of the ring's size, keeping base at least one ring. */
  private rebase(): void {
    const ring = this.mask + 1;
    const shift = this.base - (this.base & this.mask) - ring;
    for (const table of [this.hash2, this.hash3, this.hash4, this.son]) {
      for (let i = 0; i < table.length; i++) {
        const v = table[i]! - shift;
        table[i] = v < EMPTY ? EMPTY : v;
      }
    }
    this.base -= shift;
  }

  /**
   * The matches at `at` (count returned; in `lens` / `dists`), inserting every position before it not yet
   * inserted, and `at` itself. Matches start at or after `blockStart`, reach back less than the dictionary,
   * and stop at `end`; the longest is followed past `niceLength` up to 273.
   */
  find(window: Uint8Array, at: number, end: number, blockStart: number): number {
    if (at === this.foundAt) return this.foundCount;
    if (at - this.insertedTo > SKIP_INSERT_BEYOND) {
      // Inside a long match only its first and last positions go into the trees: the ones between would
      // hang more of the same run, each at the cost of a niceLength compare (on a run with nice 273 that
      // was most of the time; on librocrand's first 8 MB the file came out 0.01% smaller; measured).
      const stop = this.insertedTo + SKIP_EDGE;
      while (this.insertedTo < stop) this.insert(window, this.insertedTo, end, blockStart, false);
      this.insertedTo = at - SKIP_EDGE;
    }
    while (this.insertedTo < at) this.insert(window, this.insertedTo, end, blockStart, false);
    // A position inserted already (it cannot be again without breaking its tree) has no matches to give.
    const count = at < this.insertedTo ? 0 : this.insert(window, at, end, blockStart, true);
    this.foundAt = at;
    this.foundCount = count;
    return count;
  }

  private insert(window: Uint8Array, at: number, end: number, blockStart: number, report: boolean): number {
    this.insertedTo = at + 1;
    const avail = end - at;
    if (avail < 4) return 0;
    const base = this.base;
    const stored = at + base;
    const lowest = Math.max(blockStart, at - this.dictionarySize + 1, at - this.mask) + base;
    const two = window[at]! | (window[at + 1]! << 8);
    const three = two | (window[at + 2]! << 16);
    const h3 = Math.imul(three, 0x9e3779b1) >>> (32 - HASH23_BITS);
    const h4 = Math.imul(three | (window[at + 3]! << 24), 0x9e3779b1) >>> (32 - this.hashBits);
    const candidate2 = this.hash2[two]!;
    const candidate3 = this.hash3[h3]!;
    let candidate = this.hash4[h4]!;
    this.hash2[two] = stored;
    this.hash3[h3] = stored;
    this.hash4[h4] = stored;
    const limit = avail < this.niceLength ? avail : this.niceLength;
    const lens = this.lens;
    const dists = this.dists;
    let count = 0;
    let best = 3;
    if (report) {
      // The nearest 2- and 3-byte matches, which the 4-byte trees cannot give.
      best = 1;
      if (candidate2 >= lowest) {
        lens[0] = 2;
        dists[0] = stored - candidate2;
        count = 1;
        best = 2;
      }
      if (candidate3 !== candidate2 && candidate3 >= lowest) {
        const from = candidate3 - base;
        if (window[from] === window[at] && window[from + 1] === window[at + 1] && window[from + 2] === window[at + 2]) {
          lens[count] = 3;
          dists[count] = stored - candidate3;
          count++;
          best = 3;
        }
      }
      if (count > 0) {
        // The nearest of them may be longer than 2 or 3.
        const from = at - dists[count - 1]!;
        let len = best;
        while (len < limit && window[from + len] === window[at + len]) len++;
        lens[count - 1] = len;
        best = len;
        if (len === limit) report = false;
      }
      if (best < 3) best = 3;
    }

    const son = this.son;
    const mask = this.mask;
    let ptr0 = ((stored & mask) << 1) + 1;
    let ptr1 = (stored & mask) << 1;
    let len0 = 0;
    let len1 = 0;
    for (let depth = this.depth; ; depth--) {
      if (candidate < lowest || depth === 0) {
        son[ptr0] = EMPTY;
        son[ptr1] = EMPTY;
        break;
      }
      const from = candidate - base;
      const pair = (candidate & mask) << 1;
      let len = len0 < len1 ? len0 : len1;
      if (window[from + len] === window[at + len]) {
        len++;
        while (len < limit && window[from + len] === window[at + len]) len++;
        if (report && len > best) {
          best = len;
          lens[count] = len;
          dists[count] = at - from;
          count++;
        }
        if (len === limit) {
          // As long as the search goes: this node's subtrees become the new root's.
          son[ptr1] = son[pair]!;
          son[ptr0] = son[pair + 1]!;
          break;
        }
      }
      if (window[from + len]! < window[at + len]!) {
        son[ptr1] = candidate;
        ptr1 = pair + 1;
        candidate = son[ptr1]!;
        len1 = len;
      } else {
        son[ptr0] = candidate;
        ptr0 = pair;
        candidate = son[ptr0]!;
        len0 = len;
      }
    }
    if (count > 0 && lens[count - 1] === this.niceLength) {
      // The search stops at niceLength; the match itself may go on to 273.
      const max = avail < MATCH_LEN_MAX ? avail : MATCH_LEN_MAX;
      const from = at - dists[count - 1]!;
      let len = lens[count - 1]!;
      while (len < max && window[from + len] === window[at + len]) len++;
      lens[count - 1] = len;
    }
    return count;
  }
}
