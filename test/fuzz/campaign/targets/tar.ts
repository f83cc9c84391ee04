/**
 * The streamed archive formats (src/packages/tar.ts, cpio.ts): entries read through a ChunkReader over a
 * stream fed in uneven pieces, and (chunked) over a random-access source that yields 7 bytes per read;
 * both must give the same entries, the same body bytes and the same error. Each file entry's body is read
 * in part (0, a few or all of its bytes) so the walk's skip of the rest is exercised. Headers must lie on
 * 512-byte (tar) or 4-byte (cpio) boundaries inside the input, and errors must name an offset in it.
 */
import { ChunkReader } from "../../../../src/packages/chunks.js";
import { walkCpio } from "../../../../src/packages/cpio.js";
import { walkTar } from "../../../../src/packages/tar.js";
import type { TarEntry } from "../../../../src/packages/tar.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";
import { CPIO_TOKENS, PACKAGE_NAMES, checkOffset, cpioSample, pieces, repairTarChecksums, tarSample } from "./package-bytes.js";

async function entriesOf(walk: (reader: ChunkReader) => AsyncGenerator<TarEntry>, input: Uint8Array, ctx: RunContext, align: number) {
  const reader = ctx.chunked ? ChunkReader.ofSource(chunkedSource(input)) : ChunkReader.ofStream(pieces(input));
  const out: unknown[] = [];
  try {
    let n = 0;
    for await (const entry of walk(reader)) {
      if (entry.headerOffset % align !== 0 || entry.headerOffset >= input.length || entry.dataOffset > input.length || entry.size < 0) {
        throw new Error(`entry '${entry.name}' has header at ${entry.headerOffset}, data at ${entry.dataOffset}, size ${entry.size} in a ${input.length}-byte input`);
      }
      // Read none, some or all of the body, by the entry's position (deterministic).
      const want = [0, 5, Math.min(entry.size, input.length + 1)][n++ % 3]!;
      const body = entry.type === "file" ? await reader.read(Math.min(want, entry.size)) : new Uint8Array(0);
      out.push({ ...entry, body });
    }
  } catch (e) {
    checkOffset(e, input.length);
  } finally {
    await reader.close();
  }
  return out;
}

export const tarTarget: FuzzTarget = {
  name: "tar",
  about: "tar as a stream (walkTar): ustar, GNU long names and base-256 sizes, pax and global pax records, v7; over a stream in uneven pieces and a chunked source",
  engines: false,
  sources: true,
  dictionary: [...PACKAGE_NAMES, "ustar\0", "ustar  \0", "L", "K", "x", "g", "5", "2", "1", "30 path=x\n", "9999999999 size=1\n", "11 size=9\n"],
  generate: (r) => tarSample(r),
  run(input, ctx) {
    const repaired = repairTarChecksums(input);
    return entriesOf(walkTar, repaired, ctx, 512);
  },
};

export const cpioTarget: FuzzTarget = {
  name: "cpio",
  about: "cpio newc (070701/070702) as a stream (walkCpio): names, sizes, symlinks, hard links, the trailer; over a stream in uneven pieces and a chunked source",
  engines: false,
  sources: true,
  magic: new TextEncoder().encode("070701"),
  dictionary: [...PACKAGE_NAMES, ...CPIO_TOKENS],
  generate: (r) => cpioSample(r),
  run(input, ctx) {
    return entriesOf(walkCpio, input, ctx, 4);
  },
};
