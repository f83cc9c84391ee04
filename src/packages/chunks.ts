/**
 * Reading a package front to back: a `ChunkReader` pulls from a stream of chunks (a decoder's output)
 * or from a `ByteSource` (a file, or a member already in memory). Over a source, `skip` only moves the
 * position and `sourceAt` hands out slices, so a tar held in a file has its headers read and its bodies
 * never copied; over a stream, bytes are consumed once, in order, and never held beyond the chunk in hand.
 */
import { OffloadKitError } from "../engine/errors.js";
import type { ByteSource } from "../engine/source.js";
import { sliceSource } from "../engine/source.js";
import { concatBytes } from "../formats/bytes.js";

/** How much one read of a source pulls (the decoders see chunks of this size). */
export const SOURCE_CHUNK = 1 << 20;

/** The bytes [start, start + length) of a source, as chunks. */
export async function* sourceChunks(source: ByteSource, start = 0, length = source.size - start): AsyncGenerator<Uint8Array> {
  let position = start;
  const end = start + length;
  while (position < end) {
    // Filled before it is handed on, however little each read returns: a decoder then sees the same
    // chunks from any source, so where it fails (and what it decoded first) does not depend on the source.
    const chunk = new Uint8Array(Math.min(SOURCE_CHUNK, end - position));
    let n = 0;
    while (n < chunk.length) {
      const got = source.read(chunk.subarray(n), position + n);
      if (got <= 0) break;
      n += got;
    }
    if (n === 0) return;
    position += n;
    yield n === chunk.length ? chunk : chunk.subarray(0, n);
    if (n < chunk.length) return;
  }
}

export class ChunkReader {
  /** Bytes consumed so far (the offset of the next byte in the stream). */
  position = 0;
  private chunk: Uint8Array = new Uint8Array(0);
  private at = 0;
  private ended = false;
  private readonly iterator?: AsyncIterator<Uint8Array>;

  private constructor(
    stream: AsyncIterable<Uint8Array> | undefined,
    readonly source?: ByteSource,
    readonly reopen?: (from: number) => AsyncIterable<Uint8Array>,
  ) {
    this.iterator = stream?.[Symbol.asyncIterator]();
  }

  /**
   * A reader over a stream. `reopen`, when given, yields the same stream again from its byte `from` on
   * (by decoding again, from the xz block holding it where the stream has blocks): what a member that
   * could not be kept as it went by is read back from.
   */
  static ofStream(stream: AsyncIterable<Uint8Array>, reopen?: (from: number) => AsyncIterable<Uint8Array>): ChunkReader {
    return new ChunkReader(stream, undefined, reopen);
  }

  /** A reader over a random-access source: skips seek, and members can be sliced out (`sourceAt`). */
  static ofSource(source: ByteSource): ChunkReader {
    return new ChunkReader(undefined, source);
  }

  private async fill(): Promise<boolean> {
    if (this.at < this.chunk.length) return true;
    if (this.ended || this.iterator === undefined) return false;
    for (;;) {
      const next = await this.iterator.next();
      if (next.done === true) {
        this.ended = true;
        return false;
      }
      if (next.value.length > 0) {
        this.chunk = next.value;
        this.at = 0;
        return true;
      }
    }
  }

  /** Up to `length` bytes (fewer only at the end of the stream). */
  async read(length: number): Promise<Uint8Array> {
    if (this.source !== undefined) {
      const n = Math.max(0, Math.min(length, this.source.size - this.position));
      const out = new Uint8Array(n);
      let done = 0;
      while (done < n) {
        const got = this.source.read(out.subarray(done), this.position + done);
        if (got <= 0) break;
        done += got;
      }
      this.position += done;
      return done === n ? out : out.subarray(0, done);
    }
    // Gathered first and joined once: the buffer is as large as what arrived, never as a declared length
    // (a pax header may declare 1 MiB in a stream of 2 KiB).
    const parts: Uint8Array[] = [];
    let done = 0;
    while (done < length && (await this.fill())) {
      const n = Math.min(length - done, this.chunk.length - this.at);
      parts.push(this.chunk.subarray(this.at, this.at + n));
      this.at += n;
      done += n;
    }
    this.position += done;
    return parts.length === 1 ? parts[0]!.slice() : concatBytes(parts);
  }

  /** The next `length` bytes as chunks, consumed as they are handed out (fewer only at the end). */
  async *take(length: number): AsyncGenerator<Uint8Array> {
    if (this.source !== undefined) {
      const start = this.position;
      const n = Math.max(0, Math.min(length, this.source.size - start));
      this.position += n;
      yield* sourceChunks(this.source, start, n);
      return;
    }
    let left = length;
    while (left > 0 && (await this.fill())) {
      const n = Math.min(left, this.chunk.length - this.at);
      const piece = this.chunk.subarray(this.at, this.at + n);
      this.at += n;
      this.position += n;
      left -= n;
      yield piece;
    }
  }

  /** Skips up to `length` bytes; returns how many were skipped. */
  async skip(length: number): Promise<number> {
    if (this.source !== undefined) {
      const n = Math.max(0, Math.min(length, this.source.size - this.position));
      this.position += n;
      return n;
    }
    let done = 0;
    for await (const piece of this.take(length)) done += piece.length;
    return done;
  }

  /** The next `length` bytes as a source of their own, without copying, when reading a source. */
  sourceAt(length: number): ByteSource | undefined {
    if (this.source === undefined || this.position + length > this.source.size) return undefined;
    return sliceSource(this.source, this.position, length);
  }

  /** The bytes still to come, when reading a source. */
  remaining(): number | undefined {
    return this.source === undefined ? undefined : this.source.size - this.position;
  }

  /** Stops the stream underneath (a decoder or child process) when the reader is abandoned early. */
  async close(): Promise<void> {
    await this.iterator?.return?.();
  }
}

/** `stream` without its first `count` bytes. */
export async function* skipBytes(stream: AsyncIterable<Uint8Array>, count: number): AsyncGenerator<Uint8Array> {
  let left = count;
  for await (const chunk of stream) {
    if (left >= chunk.length) {
      left -= chunk.length;
      continue;
    }
    yield left === 0 ? chunk : chunk.subarray(left);
    left = 0;
  }
}

/** A stream that ended before a member did. */
export function truncated(what: string, offset: number, wanted: number, got: number): OffloadKitError {
  return new OffloadKitError("PACKAGE_TRUNCATED", `${what} ends early: ${wanted} bytes declared, stream ended after ${got} at offset ${offset + got}`, {
    offset: offset + got,
  });
}
