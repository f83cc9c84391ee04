/**
 * The Burrows-Wheeler transform as bzip2 needs it: the last column of the block's sorted *rotations*
 * (cyclic, no end marker), and the row where the block itself landed (`origPtr`).
 *
 * Rotations are sorted in linear time with a suffix sort, without doubling the block (measured: doubling
 * the text doubles SA-IS's time, its largest cost):
 * 1. The block is `p^k` for a primitive root `p` (the Knuth-Morris-Pratt border of the block gives `p`;
 *    `k = 1` for almost every real block). The k copies of each rotation of `p` are equal, so sorting
 *    the rotations of `p` is enough.
 * 2. `p` is turned to its least rotation `w` (the two-pointer minimum-rotation scan). A primitive word's
 *    least rotation is a Lyndon word, and a Lyndon word has no border, so comparing two of its suffixes
 *    never runs off the end before a difference that the cyclic comparison would also see: the order of
 *    the suffixes of `w` *is* the order of its rotations.
 * 3. The suffixes of `w` are sorted with SA-IS (Nong, Zhang and Chan 2009, "Two efficient algorithms for
 *    linear time suffix array construction"): linear, so runs and repeats cost no more than random bytes,
 *    unlike bzip2's own main sort, which falls back to a slower sort when its comparisons go deep.
 */

/**
 * Sorts the suffixes of `text[0..n)`, whose last symbol is a unique smallest sentinel 0 and whose other
 * symbols lie in [1, alphabet); writes the start positions in order to `sa[0..n)`. `text` is overwritten
 * (each symbol becomes `symbol << 1 | type`, so the inductions read one array, not two: measured a
 * quarter faster). `text` and `sa` may be disjoint views of one buffer (the recursion uses that).
 */
function suffixSort(text: Int32Array, n: number, alphabet: number, sa: Int32Array): void {
  // Type 1 (S): smaller than the suffix after it; type 0 (L): larger. The sentinel is S. Loops below are
  // written out with locals rather than through small helpers (measured: a third faster in V8).
  const counts = new Int32Array(alphabet);
  counts[0] = 1;
  text[n - 1] = 1;
  for (let i = n - 2; i >= 0; i--) {
    const a = text[i]!;
    const next = text[i + 1]!;
    const b = next >> 1;
    counts[a]!++;
    text[i] = (a << 1) | (a < b || (a === b && (next & 1) === 1) ? 1 : 0);
  }
  const bucket = new Int32Array(alphabet);
  const bucketEnds = () => {
    let sum = 0;
    for (let c = 0; c < alphabet; c++) bucket[c] = sum += counts[c]!;
  };
  const bucketStarts = () => {
    let sum = 0;
    for (let c = 0; c < alphabet; c++) {
      bucket[c] = sum;
      sum += counts[c]!;
    }
  };
  const induce = () => {
    bucketStarts();
    for (let i = 0; i < n; i++) {
      const j = sa[i]! - 1;
      if (j < 0) continue;
      const v = text[j]!;
      if ((v & 1) === 0) sa[bucket[v >> 1]!++] = j;
    }
    bucketEnds();
    for (let i = n - 1; i >= 0; i--) {
      const j = sa[i]! - 1;
      if (j < 0) continue;
      const v = text[j]!;
      if ((v & 1) === 1) sa[--bucket[v >> 1]!] = j;
    }
  };

  // Sort the LMS substrings: LMS positions (S after L) at their buckets' ends, then one induction.
  sa.fill(-1, 0, n);
  bucketEnds();
  for (let i = 1; i < n; i++) {
    const v = text[i]!;
    if ((v & 1) === 1 && (text[i - 1]! & 1) === 0) sa[--bucket[v >> 1]!] = i;
  }
  induce();

  // Gather the sorted LMS positions at the front and name each distinct LMS substring.
  let m = 0;
  for (let i = 0; i < n; i++) {
    const at = sa[i]!;
    if (at > 0 && (text[at]! & 1) === 1 && (text[at - 1]! & 1) === 0) sa[m++] = at;
  }
  sa.fill(-1, m, n);
  let names = 0;
  let previous = -1;
  for (let i = 0; i < m; i++) {
    const at = sa[i]!;
    let differs = previous < 0;
    for (let d = 0; !differs; d++) {
      const x = text[at + d]!;
      // Symbol and type compared at once.
      if (x !== text[previous + d]) differs = true;
      // Equal so far, types included, so either both or neither end their LMS substring here.
      else if (d > 0 && (x & 1) === 1 && (text[at + d - 1]! & 1) === 0) break;
    }
    if (differs) {
      names++;
      previous = at;
    }
    // LMS positions are at least two apart, so at >> 1 gives each its own slot in sa[m..n).
    sa[m + (at >> 1)] = names - 1;
  }
  // The reduced text (names in text order) is packed at the end of sa; its suffix array at the front.
  let j = n - 1;
  for (let i = n - 1; i >= m; i--) if (sa[i]! >= 0) sa[j--] = sa[i]!;
  const reduced = sa.subarray(n - m, n);
  const reducedSa = sa.subarray(0, m);
  if (names < m) suffixSort(reduced, m, names, reducedSa);
  else for (let i = 0; i < m; i++) reducedSa[reduced[i]!] = i;

  // The LMS suffixes in sorted order, placed at their buckets' ends (from the back), then the full induction.
  j = 0;
  for (let i = 1; i < n; i++) if ((text[i]! & 1) === 1 && (text[i - 1]! & 1) === 0) reduced[j++] = i;
  for (let i = 0; i < m; i++) reducedSa[i] = reduced[reducedSa[i]!]!;
  sa.fill(-1, m, n);
  bucketEnds();
  for (let i = m - 1; i >= 0; i--) {
    const at = sa[i]!;
    sa[i] = -1;
    sa[--bucket[text[at]! >> 1]!] = at;
  }
  induce();
}

/** The length of the primitive root of `block[0..n)` (n itself unless the block is a power of a shorter word). */
function primitiveRoot(block: Uint8Array, n: number): number {
  const border = new Int32Array(n);
  let k = 0;
  for (let i = 1; i < n; i++) {
    const c = block[i]!;
    while (k > 0 && block[k] !== c) k = border[k - 1]!;
    if (block[k] === c) k++;
    border[i] = k;
  }
  const period = n - border[n - 1]!;
  return n % period === 0 ? period : n;
}

/** The start of the least rotation of the primitive word `block[0..p)`. */
function leastRotation(block: Uint8Array, p: number): number {
  let i = 0;
  let j = 1;
  let k = 0;
  while (i < p && j < p && k < p) {
    const x = i + k;
    const y = j + k;
    const a = block[x < p ? x : x - p]!;
    const b = block[y < p ? y : y - p]!;
    if (a === b) {
      k++;
      continue;
    }
    if (a > b) i += k + 1;
    else j += k + 1;
    if (i === j) j++;
    k = 0;
  }
  return Math.min(i, j);
}

/**
 * Writes the BWT of `block[0..n)` (n >= 1) to `out[0..n)`; returns origPtr, the row of the sorted rotations
 * that is the block itself (with equal rotations, any of their rows decodes to the block).
 */
export function burrowsWheeler(block: Uint8Array, n: number, out: Uint8Array): number {
  const p = primitiveRoot(block, n);
  const copies = n / p;
  const start = leastRotation(block, p);
  const text = new Int32Array(p + 1);
  for (let i = start; i < p; i++) text[i - start] = block[i]! + 1;
  for (let i = 0; i < start; i++) text[p - start + i] = block[i]! + 1;
  const sa = new Int32Array(p + 1);
  suffixSort(text, p + 1, 257, sa);
  // sa[0] is the sentinel; sa[t + 1] is the t-th rotation of w, which starts at block offset start + sa[t + 1].
  const home = (p - start) % p;
  let origPtr = 0;
  let at = 0;
  for (let t = 0; t < p; t++) {
    const q = sa[t + 1]!;
    if (q === home) origPtr = at;
    let from = start + q - 1;
    if (from >= p) from -= p;
    const last = from < 0 ? block[p - 1]! : block[from]!;
    for (let c = 0; c < copies; c++) out[at++] = last;
  }
  return origPtr;
}
