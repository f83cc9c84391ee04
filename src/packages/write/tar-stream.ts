/**
 * A tar stream written again with some files' bodies replaced, every other byte passed on as it was: headers,
 * pax and long-name records, other bodies, padding, the end blocks and the blocking factor's zeros after them.
 * An entry given a new body keeps its header records but for the size (the header's field and checksum, and a pax
 * `size` record: src/packages/write/tar-entry.ts), and its old padding is dropped for the new body's. Used where the whole tar is re-encoded in one process and
 * memory (the page's package writers, src/browser/prune-package/); the CLI's writer (src/packages/node/edit-deb.ts
 * rewriteDataTar) does the same walk with bodies spooled to disk and edited through the crash-safe file path.
 */
import { OffloadKitError } from "../../engine/errors.js";
import { concatBytes } from "../../formats/bytes.js";
import type { ChunkReader } from "../chunks.js";
import { walkTar } from "../tar.js";
import type { TarEntry } from "../tar.js";
import { rewriteEntryHeaders } from "./tar-entry.js";
import { padding } from "./tar-headers.js";

/**
 * What to do with one regular file: `body()` reads its bytes (once; an entry whose body is not read is copied
 * through as a stream), and the answer is its new body, or undefined to keep what it was. `index` counts every
 * entry before it (directories, links and pax-described ones too): the same entry has the same index when the
 * tar is read back.
 */
export type TarFileDecision = (entry: TarEntry, body: () => Promise<Uint8Array>, index: number) => Promise<Uint8Array | undefined> | Uint8Array | undefined;

/**
 * Where the rewritten tar goes. `at` is the reader's position of bytes passed on as they were (undefined for
 * bytes made here: a new header, body or padding), so a writer of an uncompressed tar can copy those from its
 * input instead of holding them (src/browser/prune-package/tar-output.ts).
 */
export type TarStreamWrite = (bytes: Uint8Array, at?: number) => void | Promise<void>;

/**
 * Rewrites the tar `reader` reads into `write`, asking `decide` about each regular file with a body. Returns
 * the number of entries. An entry whose size a global pax header sets cannot be given its own (TAR_UNSUPPORTED).
 */
export async function rewriteTarStream(reader: ChunkReader, write: TarStreamWrite, decide: TarFileDecision, name = "tar"): Promise<number> {
  let pending: Uint8Array[] = [];
  let pendingAt = reader.position;
  let drop = 0;
  // What walkTar read since the last entry (padding, pax records, the header): passed on but for `keepLast`
  // bytes (the header, returned) and the first `drop` (an edited entry's old padding). It is one run of the
  // stream, from `pendingAt`.
  const flush = async (keepLast: number): Promise<{ bytes: Uint8Array; at: number }> => {
    const bytes = concatBytes(pending);
    const at = pendingAt;
    pending = [];
    pendingAt = reader.position;
    const from = Math.min(drop, bytes.length);
    const head = bytes.subarray(from, bytes.length - keepLast);
    drop = Math.max(0, drop - bytes.length);
    if (head.length > 0) await write(head, at + from);
    return { bytes: bytes.subarray(bytes.length - keepLast), at: at + bytes.length - keepLast };
  };
  /** The next `length` bytes of the stream, passed on as they are. */
  const passOn = async (length: number) => {
    let at = reader.position;
    for await (const piece of reader.take(length)) {
      await write(piece, at);
      at += piece.length;
    }
    pendingAt = reader.position;
  };
  const tap = {
    get position() {
      return reader.position;
    },
    async read(length: number) {
      const b = await reader.read(length);
      pending.push(b);
      return b;
    },
    async skip(length: number) {
      let n = 0;
      for await (const piece of reader.take(length)) {
        pending.push(piece.slice());
        n += piece.length;
      }
      return n;
    },
  } as unknown as ChunkReader;
  let entries = 0;
  // Where the entry's records begin: its pax and long-name headers come before its own, and go out with it.
  let recordsStart = reader.position;
  for await (const entry of walkTar(tap) as AsyncGenerator<TarEntry>) {
    entries++;
    const header = await flush(entry.dataOffset - recordsStart);
    recordsStart = entry.dataOffset + entry.size + padding(entry.size);
    if (entry.type !== "file" || entry.size === 0) {
      await write(header.bytes, header.at);
      await passOn(entry.size);
      continue;
    }
    let read: Uint8Array | undefined;
    const body = async (): Promise<Uint8Array> => {
      if (read !== undefined) return read;
      read = await reader.read(entry.size);
      if (read.length !== entry.size) throw new OffloadKitError("PACKAGE_TRUNCATED", `${name}!${entry.name}: ${read.length} of ${entry.size} bytes`, { offset: entry.dataOffset });
      return read;
    };
    const now = await decide(entry, body, entries - 1);
    if (now === undefined) {
      await write(header.bytes, header.at);
      if (read === undefined) await passOn(entry.size);
      else {
        await write(read, entry.dataOffset);
        pendingAt = reader.position;
      }
      continue;
    }
    // The old body is read to the end before the new one is written (a decision may not have read it).
    if (read === undefined) for await (const _ of reader.take(entry.size));
    pendingAt = reader.position;
    // The header's size field and checksum, and a pax `size` record when there is one (every other record kept:
    // src/packages/write/tar-entry.ts, as the CLI's writers do); a global pax size is refused there.
    await write(rewriteEntryHeaders(header.bytes, { size: now.length }, `${name}!${entry.name}`));
    await write(now);
    await write(new Uint8Array(padding(now.length)));
    drop = padding(entry.size);
  }
  await flush(0);
  await passOn(Number.MAX_SAFE_INTEGER);
  return entries;
}
