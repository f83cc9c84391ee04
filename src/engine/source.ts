/**
 * Random-access byte sources the kernels read through the window. Node files (src/node/) and
 * in-memory bytes both implement it, so every format reader works on a 4 GiB file in bounded memory
 * and on a Uint8Array in a browser alike.
 */
import { OffloadKitError } from "./errors.js";

export interface ByteSource {
  /** Total size in bytes. */
  readonly size: number;
  /** Copies up to `dest.length` bytes starting at `position` into `dest`; returns how many (short only at the end). */
  read(dest: Uint8Array, position: number): number;
  /** The bytes themselves, when the source is already in memory (lets callers take zero-copy views). */
  readonly bytes?: Uint8Array;
}

export function bytesSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.length,
    bytes,
    read(dest, position) {
      const n = Math.max(0, Math.min(dest.length, bytes.length - position));
      dest.set(bytes.subarray(position, position + n));
      return n;
    },
  };
}

/** The bytes [start, start + length) of another source, as a source of their own (embedded bundles, archive members). */
export function sliceSource(source: ByteSource, start: number, length: number): ByteSource {
  if (start < 0 || length < 0 || start + length > source.size) {
    throw new OffloadKitError("OUT_OF_BOUNDS", `slice [${start}, ${start + length}) is outside the ${source.size}-byte input`, {
      offset: start,
    });
  }
  if (start === 0 && length === source.size) return source;
  const inner = source.bytes;
  return {
    size: length,
    bytes: inner?.subarray(start, start + length),
    read(dest, position) {
      const n = Math.max(0, Math.min(dest.length, length - position));
      return n === 0 ? 0 : source.read(dest.subarray(0, n), start + position);
    },
  };
}

/** Reads exactly `length` bytes at `position` into a new array (for small, already-validated ranges). */
export function readExact(source: ByteSource, position: number, length: number): Uint8Array {
  if (source.bytes !== undefined) return source.bytes.slice(position, position + length);
  const out = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const n = source.read(out.subarray(done), position + done);
    if (n <= 0) {
      throw new OffloadKitError("SHORT_READ", `unexpected end of input at offset ${position + done}`, { offset: position + done });
    }
    done += n;
  }
  return out;
}
