/**
 * `compress` and `decompress` of NVIDIA fatbin entries (src/formats/nv-fatbin.ts), one container at a time;
 * the containers' places (linked files: ./nv-linked-elf.ts, objects: ./nv-object.ts) move them.
 *
 * - `decompress`: every LZ4 or zstd entry is stored plain, as nvcc 13 `--compress-mode=none` stores it
 *   (payload padded with zeros to 8, compressed and uncompressed sizes 0, no compression flag). An nvcc 13
 *   `-Xfatbin -compress-all` container decompressed this way is byte-identical to the same build with
 *   `--compress-mode=none` (test/prune/nv-compress.test.ts).
 * - `compress`: every plain PTX or cubin entry is stored as one LZ4 block (src/compress/lz4-block.ts), with
 *   the header fields nvcc 13 `--compress-mode=speed -Xfatbin -compress-all` sets for its LZ4 entries.
 *   LZ4 rather than zstd because every CUDA driver that reads compressed fatbins reads LZ4 (CUDA 11.x's
 *   fatbinary wrote it), while zstd entries need a CUDA 12.8+ driver. An entry LZ4 would not shrink (its
 *   padded block at least as large as its padded plain payload) stays plain, as fatbinary leaves its own
 *   (libnvjpeg 12.4 has plain kernel-less cubins among LZ4 entries). Entries compressed already stay as
 *   they are: `compress` never re-encodes.
 *
 * Each block made is decoded again and compared with its input before it is used (an encoder bug becomes
 * an INTERNAL error, never a wrong cubin); the output as a whole is then checked by src/verify.
 */
import { OffloadKitError } from "../engine/errors.js";
import { decodeLz4Block, encodeLz4Block } from "../compress/lz4-block.js";
import type { Codecs } from "../compress/codecs.js";
import { NV_KIND_ELF, NV_KIND_PTX, nvEntryContents, restoreNvEntry, writeNvFatbinContainer } from "../formats/nv-fatbin.js";
import type { NvFatbinContainer, NvFatbinEntry } from "../formats/nv-fatbin.js";

export type NvTransform = "compress" | "decompress";

function padded(size: number): number {
  return Math.ceil(size / 8) * 8;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** One entry compressed with LZ4, or undefined when it stays as it is. */
function compressEntry(entry: NvFatbinEntry): NvFatbinEntry | undefined {
  if (entry.compression !== "none" || (entry.kind !== NV_KIND_PTX && entry.kind !== NV_KIND_ELF)) return undefined;
  const contents = nvEntryContents(entry);
  if (contents.length === 0) return undefined;
  const block = encodeLz4Block(contents);
  if (padded(block.length) >= entry.paddedSize) return undefined;
  const back = decodeLz4Block(block, contents.length);
  if (!sameBytes(back, contents)) {
    throw new OffloadKitError("INTERNAL", `the LZ4 block made for the ${entry.archName} entry at ${entry.offset} does not decode to its ${contents.length} bytes`, { offset: entry.offset, field: "payload" });
  }
  return restoreNvEntry(entry, block, "lz4", contents.length);
}

/** One entry stored plain, or undefined when it is plain already. */
function decompressEntry(entry: NvFatbinEntry, codecs: Codecs): NvFatbinEntry | undefined {
  if (entry.compression === "none") return undefined;
  const contents = nvEntryContents(entry, (frame, capacity) => codecs.zstdDecompressFrame(frame, capacity));
  return restoreNvEntry(entry, contents, "none", 0);
}

/**
 * The container with its entries compressed or decompressed, or undefined when no entry changes. Entries
 * keep their order, headers (but for the four size and flag fields) and options; the container header
 * keeps its version and extra bytes and states the new size.
 */
export function transformNvContainer(operation: NvTransform, container: NvFatbinContainer, codecs: Codecs): Uint8Array | undefined {
  let changed = false;
  const entries = container.entries.map((entry) => {
    const made = operation === "compress" ? compressEntry(entry) : decompressEntry(entry, codecs);
    if (made === undefined) return entry;
    changed = true;
    return made;
  });
  return changed ? writeNvFatbinContainer(entries, { header: container.rawHeader }) : undefined;
}
