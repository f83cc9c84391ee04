/**
 * Streaming substring search over a source with the engine's `scan` kernel. Windows overlap by
 * (needle length - 1) bytes so a match across a window boundary is never missed.
 */
import { NEEDLE, NEEDLE_MAX, RECORDS, SCAN_MAX_HITS } from "./layout.js";
import { OffloadKitError } from "./errors.js";
import type { Window } from "./window.js";

function setNeedle(w: Window, needle: Uint8Array): void {
  if (needle.length === 0 || needle.length > NEEDLE_MAX) {
    throw new OffloadKitError("BAD_ARGUMENT", `a search string must be 1 to ${NEEDLE_MAX} bytes long`);
  }
  w.engine.views().bytes.set(needle, NEEDLE);
}

/**
 * Calls `onHit` with the source position of every occurrence of `needle` that lies entirely in
 * [from, to), in increasing order; `onHit` returns false to stop. Returns the number of hits seen.
 */
export function findAll(w: Window, needle: Uint8Array, from: number, to: number, onHit: (position: number) => boolean | void): number {
  const n = needle.length;
  const limit = Math.min(to, w.source.size);
  let seen = 0;
  let pos = from;
  while (pos + n <= limit) {
    // Scan what is already loaded from pos on; refill from pos only when that is not even one needle.
    if (!w.holds(pos, n)) w.load(pos);
    setNeedle(w, needle);
    const end = Math.min(w.end, limit);
    let start = pos - w.position;
    const stop = end - w.position;
    for (;;) {
      const hits = w.engine.scan(n, start, stop, SCAN_MAX_HITS);
      const u32 = w.engine.views().u32;
      for (let k = 0; k < hits; k++) {
        seen++;
        if (onHit(w.position + u32[(RECORDS >>> 2) + k]) === false) return seen;
      }
      if (hits < SCAN_MAX_HITS) break;
      start = u32[(RECORDS >>> 2) + hits - 1] + 1;
    }
    if (end >= limit) break;
    const next = end - n + 1;
    // A window that cannot hold the needle past `pos` would loop forever; the capacity is always far larger.
    pos = next > pos ? next : pos + 1;
  }
  return seen;
}

/** The first occurrence of `needle` in [from, to), or -1. */
export function findFirst(w: Window, needle: Uint8Array, from: number, to: number = w.source.size): number {
  let found = -1;
  findAll(w, needle, from, to, (position) => {
    found = position;
    return false;
  });
  return found;
}
