/**
 * `llvm::StringTableBuilder` of kind ELF, finalized with optimisation (llvm/lib/MC/StringTableBuilder.cpp),
 * as OffloadBinary::write uses it for the string table of an offload binary (spec offload-binary.md §1).
 *
 * - The table starts with one NUL byte; the empty string is at offset 0.
 * - The distinct strings are sorted by their characters read from the end (`multikeySort` on
 *   `charTailAt`): a greater byte first, and a string that runs out first (a proper suffix of the other)
 *   after the longer one. For distinct strings this is a total order, so the order they were added in
 *   does not matter.
 * - Walking that order, a string that is a suffix of the last string *written* reuses that string's tail
 *   (tail merging); any other string is written followed by a NUL.
 * - After finalizing, the empty string is forced to offset 0.
 *
 * Strings are byte strings (one char per byte).
 */
import { latin1Encode } from "../formats/bytes.js";

export interface StringTable {
  /** The table bytes, leading NUL included. */
  readonly bytes: Uint8Array;
  /** Offset of each string added (the empty string at 0). */
  readonly offsets: ReadonlyMap<string, number>;
}

/** Compares two strings as multikeySort orders them: negative when `a` goes first. */
function compareFromEnd(a: string, b: string): number {
  for (let pos = 0; ; pos++) {
    const ca = pos < a.length ? a.charCodeAt(a.length - 1 - pos) : -1;
    const cb = pos < b.length ? b.charCodeAt(b.length - 1 - pos) : -1;
    if (ca !== cb) return cb - ca;
    if (ca === -1) return 0;
  }
}

export function buildElfStringTable(strings: Iterable<string>): StringTable {
  const unique = [...new Set(strings)].sort(compareFromEnd);
  const offsets = new Map<string, number>();
  const parts: string[] = ["\0"];
  let size = 1;
  let previous = "";
  for (const text of unique) {
    if (previous.endsWith(text)) {
      offsets.set(text, size - text.length - 1);
      continue;
    }
    offsets.set(text, size);
    parts.push(text, "\0");
    size += text.length + 1;
    previous = text;
  }
  offsets.set("", 0);
  return { bytes: latin1Encode(parts.join("")), offsets };
}
