/**
 * TypeScript twin of assembly/scan.ts: the same hits, in the same order, capped the same way.
 * `Uint8Array.prototype.indexOf` finds first-byte candidates at native speed; each candidate is then
 * checked on the last byte and the middle, like the SIMD filter does.
 */
import { NEEDLE, NEEDLE_MAX, RECORDS, SCAN_MAX_HITS } from "../engine/layout.js";
import type { TsMemory } from "./memory.js";

export function scan(mem: TsMemory, needleLength: number, start: number, end: number, maxHits: number): number {
  if (needleLength <= 0 || needleLength > NEEDLE_MAX) return 0;
  const n = needleLength;
  if (end < start + n) return 0;
  const cap = Math.min(maxHits, SCAN_MAX_HITS);
  if (cap <= 0) return 0;
  const win = mem.windowBase;
  // Bounded to the range: an unbounded indexOf would run on through the rest of memory on a miss.
  const bytes = mem.bytes.subarray(0, win + end);
  const first = bytes[NEEDLE];
  const last = bytes[NEEDLE + n - 1];
  const limit = win + end - n;
  const hitsBase = RECORDS >>> 2;
  let hits = 0;
  let at = win + start;
  while (at <= limit) {
    at = bytes.indexOf(first, at);
    if (at < 0 || at > limit) break;
    if (bytes[at + n - 1] === last && middleMatches(bytes, at, n)) {
      mem.u32[hitsBase + hits] = at - win;
      if (++hits === cap) return hits;
    }
    at++;
  }
  return hits;
}

function middleMatches(bytes: Uint8Array, at: number, n: number): boolean {
  for (let k = 1; k < n - 1; k++) {
    if (bytes[at + k] !== bytes[NEEDLE + k]) return false;
  }
  return true;
}
