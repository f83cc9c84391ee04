/**
 * Magic scanning: every position where the needle (NEEDLE region) occurs in a window range.
 *
 * SIMD filter in the style of Muła's "SIMD-friendly algorithms for substring searching": compare 16
 * candidate starts at once on the needle's first and last bytes, and only run the full comparison
 * where both match. Positions are window-relative u32s written to RECORDS.
 */
import { NEEDLE, NEEDLE_MAX, RECORDS, RECORDS_BYTES, windowPtr } from "./layout";

@inline function matchesAt(at: usize, n: usize): bool {
  // First and last bytes already matched; compare the middle.
  return n <= 2 || memory.compare(at + 1, NEEDLE + 1, n - 2) == 0;
}

/**
 * Finds occurrences of the `needleLen`-byte needle that start in [start, end - needleLen].
 * Returns the number of hits written (at most `maxHits` and the RECORDS capacity); a caller that
 * gets a full batch resumes after the last hit.
 */
export function scan(needleLen: i32, start: u32, end: u32, maxHits: u32): i32 {
  if (needleLen <= 0 || needleLen > NEEDLE_MAX) return 0;
  const n = <usize>needleLen;
  if (<usize>end < <usize>start + n) return 0;
  const cap = min<u32>(maxHits, <u32>(RECORDS_BYTES >>> 2));
  if (cap == 0) return 0;
  const win = windowPtr();
  const limit = <usize>end - n; // last candidate start, inclusive
  const vFirst = i8x16.splat(load<u8>(NEEDLE));
  const vLast = i8x16.splat(load<u8>(NEEDLE + n - 1));
  let hits: u32 = 0;
  let i = <usize>start;

  // Two vectors per round: 32 candidate starts (measured faster than one on 64 MiB inputs).
  while (i + 31 <= limit) {
    const at = win + i;
    const m0 = i8x16.bitmask(v128.and(i8x16.eq(v128.load(at), vFirst), i8x16.eq(v128.load(at + n - 1), vLast)));
    const m1 = i8x16.bitmask(v128.and(i8x16.eq(v128.load(at, 16), vFirst), i8x16.eq(v128.load(at + n - 1, 16), vLast)));
    let mask = <u32>m0 | (<u32>m1 << 16);
    while (mask != 0) {
      const p = i + <usize>ctz(mask);
      if (matchesAt(win + p, n)) {
        store<u32>(RECORDS + (<usize>hits << 2), <u32>p);
        if (++hits == cap) return <i32>hits;
      }
      mask &= mask - 1;
    }
    i += 32;
  }
  while (i + 15 <= limit) {
    const at = win + i;
    let mask = <u32>i8x16.bitmask(v128.and(i8x16.eq(v128.load(at), vFirst), i8x16.eq(v128.load(at + n - 1), vLast)));
    while (mask != 0) {
      const p = i + <usize>ctz(mask);
      if (matchesAt(win + p, n)) {
        store<u32>(RECORDS + (<usize>hits << 2), <u32>p);
        if (++hits == cap) return <i32>hits;
      }
      mask &= mask - 1;
    }
    i += 16;
  }
  const first = load<u8>(NEEDLE);
  const last = load<u8>(NEEDLE + n - 1);
  while (i <= limit) {
    const at = win + i;
    if (load<u8>(at) == first && load<u8>(at + n - 1) == last && matchesAt(at, n)) {
      store<u32>(RECORDS + (<usize>hits << 2), <u32>i);
      if (++hits == cap) return <i32>hits;
    }
    i++;
  }
  return <i32>hits;
}
