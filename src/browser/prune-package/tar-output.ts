/**
 * A package's tar written again in the page: decoded from a range of the File, rewritten (src/packages/write/
 * tar-stream.ts: bodies replaced, every other byte as it was), encoded with the input's compressor
 * (./encoders.ts) into chunks held for the download; then read back as the CLI reads back what it wrote
 * before it puts it in place: decoded again with the platform's decoder (so our own xz, bzip2 and zstd
 * output is judged by another decoder), entry count the same, each edited file's bytes those edited.
 */
import type { Codecs } from "../../compress/codecs.js";
import { OffloadKitError } from "../../engine/errors.js";
import type { ByteSource } from "../../engine/source.js";
import { ChunkReader } from "../../packages/chunks.js";
import type { Compression } from "../../packages/decoders.js";
import { walkTar } from "../../packages/tar.js";
import { rewriteTarStream } from "../../packages/write/tar-stream.js";
import type { TarFileDecision } from "../../packages/write/tar-stream.js";
import { decodedRange } from "./decode.js";
import { tarEncoder } from "./encoders.js";
import type { TarPurpose } from "./encoders.js";

/** The encoded tar: its chunks, in order, and their total size. */
export interface EncodedTar {
  readonly chunks: Uint8Array[];
  readonly size: number;
  readonly entries: number;
}

/** A source over chunks held in order (the encoded tar, read back without joining them). */
export function chunkListSource(chunks: readonly Uint8Array[]): ByteSource {
  const starts: number[] = [];
  let size = 0;
  for (const c of chunks) {
    starts.push(size);
    size += c.length;
  }
  return {
    size,
    read(dest, position) {
      let done = 0;
      // The chunk holding `position`: binary search over the starts.
      let lo = 0;
      let hi = chunks.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid]! <= position) lo = mid;
        else hi = mid - 1;
      }
      for (let i = lo; i < chunks.length && done < dest.length; i++) {
        const from = Math.max(0, position + done - starts[i]!);
        const piece = chunks[i]!.subarray(from, from + dest.length - done);
        dest.set(piece, done);
        done += piece.length;
      }
      return done;
    },
  };
}

/** The tar at [start, start + length) of `source`, compressed with `method`, rewritten as `decide` says and encoded again. */
export async function rewriteTar(source: ByteSource, start: number, length: number, method: Compression | undefined, purpose: TarPurpose, codecs: Codecs, name: string, decide: TarFileDecision): Promise<EncodedTar> {
  const encoder = tarEncoder(method, purpose, codecs, name);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const put = (out: readonly Uint8Array[]) => {
    for (const c of out) {
      chunks.push(c);
      size += c.length;
    }
  };
  const reader = ChunkReader.ofStream(decodedRange(source, start, length, method, codecs, name));
  let entries: number;
  try {
    entries = await rewriteTarStream(reader, async (bytes) => put(await encoder.push(bytes)), decide, name);
  } finally {
    await reader.close();
  }
  put(await encoder.finish());
  return { chunks, size, entries };
}

/**
 * Reads `tar` back: decoded again, as many entries as were written, each file in `expected` (tar name →
 * its new bytes' check) what was edited. VERIFY_FAILED otherwise: nothing is offered for download.
 */
export async function verifyTar(tar: EncodedTar, method: Compression | undefined, codecs: Codecs, name: string, expected: ReadonlyMap<number, (body: Uint8Array) => boolean>): Promise<void> {
  const fail = (message: string) => new OffloadKitError("VERIFY_FAILED", `${name}: the tar written is wrong, nothing was offered: ${message}`);
  const written = chunkListSource(tar.chunks);
  const reader = ChunkReader.ofStream(decodedRange(written, 0, written.size, method, codecs, `${name} (written)`));
  let count = 0;
  try {
    for await (const entry of walkTar(reader)) {
      const check = expected.get(count++);
      if (check === undefined) continue;
      if (!check(await reader.read(entry.size))) throw fail(`'${entry.name}' is not what was edited`);
    }
  } catch (e) {
    if (e instanceof OffloadKitError && e.code === "VERIFY_FAILED") throw e;
    throw fail(e instanceof Error ? e.message : String(e));
  } finally {
    await reader.close();
  }
  if (count !== tar.entries) throw fail(`${count} entries read back, ${tar.entries} written`);
}
