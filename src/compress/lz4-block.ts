/**
 * LZ4 raw blocks (lz4/doc/lz4_Block_format.md), the compression CUDA 12's fatbinary applies to entries
 * (flag 0x2000, src/formats/nv-fatbin.ts): no frame, no checksum, the uncompressed size known from the
 * entry header. Decode only; written here because it is forty lines and the entries are small (a cubin
 * is kilobytes to a few megabytes), so a Wasm build of liblz4 would cost more to load than it saves.
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
    out.set(input.subarray(ip, ip + literals), op);
    ip += literals;
    op += literals;
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
    if (offset >= length) {
      out.copyWithin(op, from, from + length);
      op += length;
    } else {
      for (const stop = op + length; op < stop;) out[op++] = out[from++]!;
    }
  }
  return out.subarray(0, op);
}
