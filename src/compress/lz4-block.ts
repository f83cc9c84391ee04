/**
 * LZ4 raw blocks (lz4/doc/lz4_Block_format.md), the compression CUDA 12's fatbinary applies to entries
 * (flag 0x2000, src/formats/nv-fatbin.ts): no frame, no checksum, the uncompressed size known from the
 * entry header. A decoder and a small encoder, written here because each is under a hundred lines and the
 * entries are small (a cubin is kilobytes to a few megabytes), so a Wasm build of liblz4 would cost more to
 * load than it saves.
 *
 * A block is a run of sequences:
 * | bytes | field |
 * |---|---|
 * | 1 | token: high nibble literal length, low nibble match length - 4 (15 means "more bytes follow") |
 * | 0+ | literal length continuation: bytes added while each is 255 |
 * | n | literals |
 * | 2 | match offset, little-endian, 1..bytes produced so far (absent in the last sequence) |
 * | 0+ | match length continuation, as for literals |
 *
 * Bounded both ways: the output never grows past `capacity` (the declared uncompressed size) and the
 * input is never read past its end; a match may overlap its own output (offset < length), copied byte by
 * byte as the format requires. Every failure is an OffloadKitError `LZ4_CORRUPT` at the input offset of
 * the offending field.
 */
import { OffloadKitError } from "../engine/errors.js";

const MIN_MATCH = 4;

function corrupt(message: string, offset: number, field: string): never {
  throw new OffloadKitError("LZ4_CORRUPT", `LZ4 block: ${message}`, { offset, field });
}

/** Decodes one LZ4 block into at most `capacity` bytes; returns the bytes produced (a view of a `capacity`-sized buffer). */
export function decodeLz4Block(input: Uint8Array, capacity: number): Uint8Array {
  const out = new Uint8Array(capacity);
  let ip = 0;
  let op = 0;
  while (ip < input.length) {
    const tokenAt = ip;
    const token = input[ip++]!;
    let literals = token >>> 4;
    if (literals === 15) {
      for (;;) {
        if (ip >= input.length) corrupt("literal length runs past the input", ip, "literal length");
        const more = input[ip++]!;
        literals += more;
        if (more !== 255) break;
      }
    }
    if (literals > input.length - ip) corrupt(`${literals} literals run past the input (${input.length - ip} bytes left)`, tokenAt, "literals");
    if (literals > capacity - op) corrupt(`${literals} literals overflow the ${capacity}-byte output at ${op}`, tokenAt, "literals");
    // Short runs byte by byte: a subarray per sequence costs more than the copy (measured: 3x on cubins).
    if (literals < 64) {
      for (const stop = ip + literals; ip < stop;) out[op++] = input[ip++]!;
    } else {
      out.set(input.subarray(ip, ip + literals), op);
      ip += literals;
      op += literals;
    }
    // The last sequence ends with its literals.
    if (ip === input.length) break;
    if (input.length - ip < 2) corrupt("match offset runs past the input", ip, "offset");
    const offsetAt = ip;
    const offset = input[ip]! | (input[ip + 1]! << 8);
    ip += 2;
    if (offset === 0 || offset > op) corrupt(`match offset ${offset} is not within the ${op} bytes produced`, offsetAt, "offset");
    let length = (token & 15) + MIN_MATCH;
    if ((token & 15) === 15) {
      for (;;) {
        if (ip >= input.length) corrupt("match length runs past the input", ip, "match length");
        const more = input[ip++]!;
        length += more;
        if (more !== 255) break;
      }
    }
    if (length > capacity - op) corrupt(`match of ${length} bytes overflows the ${capacity}-byte output at ${op}`, offsetAt, "match length");
    let from = op - offset;
    if (offset >= length && length >= 64) {
      out.copyWithin(op, from, from + length);
      op += length;
    } else {
      for (const stop = op + length; op < stop;) out[op++] = out[from++]!;
    }
  }
  return out.subarray(0, op);
}

/** Matches are found through a hash of the next 4 bytes: 2^16 heads, 2^16 chain links (the 64 KiB window). */
const HASH_LOG = 16;
const WINDOW = 65536;
/** The format's end rules (lz4_Block_format.md "End of block conditions"): the last 5 bytes are literals, and no match starts in the last 12. */
const LAST_LITERALS = 5;
const MATCH_FREE_END = 12;
/** Candidates tried per position: 16 gets within 3% of lz4 -9 on cubins at a fraction of its time (measured on the nvcc 13 fixtures). */
const DEFAULT_DEPTH = 16;
/** A match this long ends the search (zlib's nice_length): without it, a run of zeros costs depth × its length per byte. */
const GOOD_ENOUGH = 64;

/** The largest block `encodeLz4Block` can write for `size` input bytes (all literals: one length byte per 255). */
export function lz4BlockBound(size: number): number {
  return size + Math.floor(size / 255) + 16;
}

/**
 * One LZ4 block holding `input`, for `decodeLz4Block(block, input.length)` (and liblz4's
 * LZ4_decompress_safe) to give back. Greedy: at each position the longest match among the last `depth`
 * positions whose first 4 bytes hash alike (a hash chain over the 64 KiB window; the first of 64 bytes or
 * more ends the search) is taken when it is 4 bytes or more; else the byte stays a literal. After 64 positions without a match the search steps
 * further each time (as liblz4 does), so incompressible input costs about a pass over it.
 */
export function encodeLz4Block(input: Uint8Array, depth = DEFAULT_DEPTH): Uint8Array {
  const size = input.length;
  const out = new Uint8Array(lz4BlockBound(size));
  // No closures over `op` or the tables: V8 keeps locals in registers only when nothing captures them (measured: 4x).
  const head = new Int32Array(1 << HASH_LOG).fill(-1);
  const chain = new Int32Array(WINDOW);
  const matchEnd = size - LAST_LITERALS;
  const lastStart = size - MATCH_FREE_END;
  let op = 0;
  let anchor = 0;
  let at = 0;
  let misses = 0;
  while (at <= lastStart) {
    const word = input[at]! | (input[at + 1]! << 8) | (input[at + 2]! << 16) | (input[at + 3]! << 24);
    const h = Math.imul(word, 2654435761) >>> (32 - HASH_LOG);
    let best = 0;
    let bestFrom = 0;
    let candidate = head[h]!;
    for (let tries = depth; candidate >= 0 && at - candidate < WINDOW && tries > 0; tries--) {
      if (input[candidate] === input[at] && input[candidate + 1] === input[at + 1] && input[candidate + 2] === input[at + 2] && input[candidate + 3] === input[at + 3]) {
        let length = 4;
        while (at + length < matchEnd && input[candidate + length] === input[at + length]) length++;
        if (length > best) {
          best = length;
          bestFrom = candidate;
          if (length >= GOOD_ENOUGH || at + length >= matchEnd) break;
        }
      }
      candidate = chain[candidate & (WINDOW - 1)]!;
    }
    chain[at & (WINDOW - 1)] = head[h]!;
    head[h] = at;
    if (best < 4) {
      at += 1 + (misses++ >> 6);
      continue;
    }
    misses = 0;
    const literals = at - anchor;
    const matchCode = best - 4;
    out[op++] = (Math.min(literals, 15) << 4) | Math.min(matchCode, 15);
    if (literals >= 15) {
      let n = literals - 15;
      for (; n >= 255; n -= 255) out[op++] = 255;
      out[op++] = n;
    }
    for (let p = anchor; p < at; p++) out[op++] = input[p]!;
    const offset = at - bestFrom;
    out[op++] = offset & 0xff;
    out[op++] = offset >>> 8;
    if (matchCode >= 15) {
      let n = matchCode - 15;
      for (; n >= 255; n -= 255) out[op++] = 255;
      out[op++] = n;
    }
    // Every position the match covers joins the chains, so later matches can start inside it.
    const stop = Math.min(at + best, lastStart + 1);
    for (let p = at + 1; p < stop; p++) {
      const ph = Math.imul(input[p]! | (input[p + 1]! << 8) | (input[p + 2]! << 16) | (input[p + 3]! << 24), 2654435761) >>> (32 - HASH_LOG);
      chain[p & (WINDOW - 1)] = head[ph]!;
      head[ph] = p;
    }
    at += best;
    anchor = at;
  }
  const literals = size - anchor;
  out[op++] = Math.min(literals, 15) << 4;
  if (literals >= 15) {
    let n = literals - 15;
    for (; n >= 255; n -= 255) out[op++] = 255;
    out[op++] = n;
  }
  out.set(input.subarray(anchor), op);
  op += literals;
  return out.slice(0, op);
}
