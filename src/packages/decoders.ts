/**
 * What the package walker asks of its platform: stream decoders and somewhere to keep a member that
 * must be read at random (the locator's positioned reads). Node's are in src/packages/node/io.ts; the
 * in-memory spooler here serves browsers and tests.
 */
import type { ByteSource } from "../engine/source.js";
import { bytesSource } from "../engine/source.js";
import { OffloadKitError } from "../engine/errors.js";
import { concatBytes } from "../formats/bytes.js";

export type Compression = "gzip" | "xz" | "zstd" | "bzip2";

export interface Decoders {
  /** A compressed stream's decoded bytes; fails (rejects the iteration) on corrupt or truncated input. */
  decode(method: Compression, input: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array>;
  /** Raw deflate (zip method 8). */
  inflateRaw(input: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array>;
}

export interface SpooledMember {
  readonly source: ByteSource;
  /** Where it is kept: in memory, or in a temporary file (removed by `close`). */
  readonly where: "memory" | "file";
  close(): void;
}

export interface Spooler {
  /**
   * Keeps a member's bytes for random access. `size` is the declared size when known: more bytes than it
   * are an error (a lying header), and fewer leave a short member the caller reports.
   */
  spool(chunks: AsyncIterable<Uint8Array>, size: number | undefined, name: string): Promise<SpooledMember>;
}

/** The magic numbers of the stream compressions, at the start of a stream. */
export function compressionOf(head: Uint8Array): Compression | undefined {
  if (head.length >= 3 && head[0] === 0x1f && head[1] === 0x8b && head[2] === 8) return "gzip";
  if (head.length >= 6 && head[0] === 0xfd && head[1] === 0x37 && head[2] === 0x7a && head[3] === 0x58 && head[4] === 0x5a && head[5] === 0) return "xz";
  if (head.length >= 4 && head[0] === 0x28 && head[1] === 0xb5 && head[2] === 0x2f && head[3] === 0xfd) return "zstd";
  if (head.length >= 4 && head[0] === 0x42 && head[1] === 0x5a && head[2] === 0x68 && head[3]! >= 0x31 && head[3]! <= 0x39) return "bzip2";
  return undefined;
}

export function tooLarge(name: string, size: number): OffloadKitError {
  return new OffloadKitError("PACKAGE_SIZE_MISMATCH", `member '${name}' yields more than its declared ${size} bytes`, { offset: size });
}

/** Keeps every member in memory, up to `limit` bytes each (browsers; tests). */
export function memorySpooler(limit = 512 * 1024 * 1024): Spooler {
  return {
    async spool(chunks, size, name) {
      const parts: Uint8Array[] = [];
      let total = 0;
      for await (const chunk of chunks) {
        total += chunk.length;
        if (size !== undefined && total > size) throw tooLarge(name, size);
        if (total > limit) throw new OffloadKitError("PACKAGE_MEMBER_TOO_LARGE", `member '${name}' is larger than ${limit} bytes`, { offset: limit });
        parts.push(chunk.slice());
      }
      return { source: bytesSource(concatBytes(parts)), where: "memory", close() {} };
    },
  };
}
