/**
 * What can still be read of a binary bundle whose header the strict walk rejected (src/formats/bundle.ts
 * readBinaryBundle, shared by the Wasm and TS engines and left as it is): a lenient second pass, in
 * TypeScript over the source, that reads the entry records one by one as far as the header's own bytes
 * go, and marks each entry intact (its payload lies within the input) or not. A bundle cut at 100,000 bytes
 * keeps its first entries readable; `ls --json` lists them on the problem (`entries`), never as a bundle,
 * so `extract`, `sizes`, `check` and `prune` still see the bundle as unreadable, as the native tools do.
 *
 * Layout (clang-offload-bundler, "binary" format): the 24-byte magic, u64 entry count, then per entry
 * u64 offset (from the bundle's start), u64 size, u64 ID length and the ID bytes; little-endian.
 */
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { latin1Decode } from "../formats/bytes.js";

export interface SalvagedEntry {
  /** Entry ID (byte string). */
  readonly id: string;
  /** Where its payload starts in the input (the header's offset plus the bundle's start). */
  readonly offset: number;
  readonly size: number;
  /** Whether the payload lies within the input (false: the damage reaches it). */
  readonly intact: boolean;
}

const MAGIC_SIZE = 24;
const FIXED = 24;
/** IDs longer than this are taken as damage, not read (LLVM's target IDs are under 100 bytes). */
const MAX_ID = 4096;
/** Header bytes and records read at most (a garbled count could claim billions of entries). */
const MAX_HEADER = 64 * 1024 * 1024;
const MAX_ENTRIES = 100_000;

/**
 * The entries of the binary bundle at `at` (`end`: where the input it lies in ends) whose records can be
 * read, in header order; empty when not even the first record is there.
 */
export function salvageBinaryBundle(source: ByteSource, at: number, end: number): SalvagedEntry[] {
  const limit = Math.min(end, source.size, at + MAX_HEADER);
  if (limit - at < MAGIC_SIZE + 8) return [];
  const read = (offset: number, length: number) => readExact(source, offset, length);
  const u64 = (offset: number) => {
    const b = read(offset, 8);
    const view = new DataView(b.buffer, b.byteOffset, 8);
    return view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  };
  const count = u64(at + MAGIC_SIZE);
  const entries: SalvagedEntry[] = [];
  let position = at + MAGIC_SIZE + 8;
  for (let i = 0; i < Math.min(count, MAX_ENTRIES) && position + FIXED <= limit; i++) {
    const offset = u64(position);
    const size = u64(position + 8);
    const idLength = u64(position + 16);
    if (idLength > MAX_ID || position + FIXED + idLength > limit) break;
    // A payload inside the header is garbage, not an entry (a stray magic in a string table reads so).
    if (offset < position + FIXED + idLength - at) break;
    const id = latin1Decode(read(position + FIXED, idLength));
    position += FIXED + idLength;
    entries.push({ id, offset: at + offset, size, intact: at + offset + size <= end });
  }
  return entries;
}
