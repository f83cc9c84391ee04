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

/** Fills `dest` from `position` on; a source that ends first is an error (SHORT_READ, with the offset). */
export function readInto(source: ByteSource, dest: Uint8Array, position: number): void {
  let done = 0;
  while (done < dest.length) {
    const n = source.read(dest.subarray(done), position + done);
    if (n <= 0) {
      throw new OffloadKitError("SHORT_READ", `unexpected end of input at offset ${position + done}`, { offset: position + done });
    }
    done += n;
  }
}

/** Reads exactly `length` bytes at `position` into a new array (for small, already-validated ranges). */
export function readExact(source: ByteSource, position: number, length: number): Uint8Array {
  if (source.bytes !== undefined) return source.bytes.slice(position, position + length);
  const out = new Uint8Array(length);
  readInto(source, out, position);
  return out;
}

/**
 * A source that keeps the last block it read, for readers that make many small reads close together
 * (an archive member's header, name, magic, bundle header and object sniff all lie in its first few KiB:
 * one read instead of five). A small read that misses fills the block from its own position onwards; a
 * read larger than half the block goes straight through (payload copies), without a second copy.
 */
export function blockCachedSource(source: ByteSource, blockSize = 8 * 1024): ByteSource {
  if (source.bytes !== undefined) return source;
  const block = new Uint8Array(blockSize);
  let start = 0;
  let length = 0;
  return {
    size: source.size,
    read(dest, position) {
      const want = Math.max(0, Math.min(dest.length, source.size - position));
      if (want === 0) return 0;
      if (position >= start && position + want <= start + length) {
        dest.set(block.subarray(position - start, position - start + want));
        return want;
      }
      if (want > blockSize >>> 1) return source.read(dest.subarray(0, want), position);
      const fill = Math.min(blockSize, source.size - position);
      let got = 0;
      while (got < fill) {
        const n = source.read(block.subarray(got, fill), position + got);
        if (n <= 0) break;
        got += n;
      }
      start = position;
      length = got;
      const n = Math.min(want, got);
      dest.set(block.subarray(0, n));
      return n;
    },
  };
}
