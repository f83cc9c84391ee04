/**
 * A package's tar written again in the page: decoded from a range of the File, rewritten (src/packages/write/
 * tar-stream.ts: bodies replaced, every other byte as it was), encoded with the input's compressor
 * (./encoders.ts) into chunks held for the download (an uncompressed tar: ranges of the File and the bytes made); then read back as the CLI reads back what it wrote
 * before it puts it in place: decoded again with the platform's decoder (so our own xz, bzip2 and zstd
 * output is judged by another decoder), entry count the same, each edited file's bytes those edited.
 */
import type { Codecs } from "../../compress/codecs.js";
import { OffloadKitError } from "../../engine/errors.js";
import { readInto } from "../../engine/source.js";
import type { ByteSource } from "../../engine/source.js";
import { ChunkReader } from "../../packages/chunks.js";
import type { Compression } from "../../packages/decoders.js";
import { walkTar } from "../../packages/tar.js";
import { rewriteTarStream } from "../../packages/write/tar-stream.js";
import type { TarFileDecision, TarStreamWrite } from "../../packages/write/tar-stream.js";
import type { PrunedPart } from "../protocol.js";
import { decodedRange } from "./decode.js";
import { tarEncoder } from "./encoders.js";
import type { TarPurpose } from "./encoders.js";
import { partSize } from "./members.js";

/**
 * The tar written: its parts, in order, and their total size. An uncompressed tar's unchanged bytes are ranges
 * of the File (never held: a 3 GB .tar is not copied into the page's memory); everything else is bytes made here.
 */
export interface EncodedTar {
  readonly parts: PrunedPart[];
  readonly size: number;
  readonly entries: number;
}

/** A source over parts held in order (the tar written, read back without joining them); ranges are of `file`. */
export function partsSource(parts: readonly PrunedPart[], file: ByteSource): ByteSource {
  const starts: number[] = [];
  let size = 0;
  for (const p of parts) {
    starts.push(size);
    size += partSize(p);
  }
  return {
    size,
    read(dest, position) {
      let done = 0;
      // The part holding `position`: binary search over the starts.
      let lo = 0;
      let hi = parts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid]! <= position) lo = mid;
        else hi = mid - 1;
      }
      for (let i = lo; i < parts.length && done < dest.length; i++) {
        const part = parts[i]!;
        const from = Math.max(0, position + done - starts[i]!);
        const length = Math.max(0, Math.min(partSize(part) - from, dest.length - done));
        if ("bytes" in part) dest.set(part.bytes.subarray(from, from + length), done);
        else if ("offset" in part) readInto(file, dest.subarray(done, done + length), part.offset + from);
        else dest.fill(0, done, done + length);
        done += length;
      }
      return done;
    },
  };
}

/** The tar at [start, start + length) of `source`, compressed with `method`, rewritten as `decide` says and encoded again. */
export async function rewriteTar(source: ByteSource, start: number, length: number, method: Compression | undefined, purpose: TarPurpose, codecs: Codecs, name: string, decide: TarFileDecision): Promise<EncodedTar> {
  const parts: PrunedPart[] = [];
  let size = 0;
  const put = (out: readonly Uint8Array[]) => {
    for (const c of out) {
      parts.push({ bytes: c });
      size += c.length;
    }
  };
  let write: TarStreamWrite;
  let finish: () => Promise<void>;
  if (method === undefined) {
    // Uncompressed: bytes passed on as they were are the File's own, at `start` + their position; adjacent runs join.
    write = (bytes, at) => {
      size += bytes.length;
      const last = parts.at(-1);
      if (at === undefined) parts.push({ bytes });
      else if (last !== undefined && "offset" in last && last.offset + last.size === start + at) parts[parts.length - 1] = { offset: last.offset, size: last.size + bytes.length };
      else parts.push({ offset: start + at, size: bytes.length });
    };
    finish = async () => {};
  } else {
    const encoder = tarEncoder(method, purpose, codecs, name);
    write = async (bytes) => put(await encoder.push(bytes));
    finish = async () => put(await encoder.finish());
  }
  const reader = ChunkReader.ofStream(decodedRange(source, start, length, method, codecs, name));
  let entries: number;
  try {
    entries = await rewriteTarStream(reader, write, decide, name);
  } finally {
    await reader.close();
  }
  await finish();
  return { parts, size, entries };
}

/**
 * Reads `tar` back: decoded again, as many entries as were written, each file in `expected` (tar name →
 * its new bytes' check) what was edited. VERIFY_FAILED otherwise: nothing is offered for download.
 */
export async function verifyTar(tar: EncodedTar, source: ByteSource, method: Compression | undefined, codecs: Codecs, name: string, expected: ReadonlyMap<number, (body: Uint8Array) => boolean>): Promise<void> {
  const fail = (message: string) => new OffloadKitError("VERIFY_FAILED", `${name}: the tar written is wrong, nothing was offered: ${message}`);
  const written = partsSource(tar.parts, source);
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
