/**
 * Text offload bundles: entries separated by comment lines carrying the bundle magic.
 *
 * Follows seed 000 ("Bundled Text File Layout"), spec bundler.md §4 and TextFileHandler in
 * clang/lib/Driver/OffloadBundler.cpp. For each entry the writer emits
 *
 *     "\n" P " __CLANG_OFFLOAD_BUNDLE____START__ " ID "\n"
 *     <payload, unchanged>
 *     "\n" P " __CLANG_OFFLOAD_BUNDLE____END__ " ID "\n"
 *
 * where P is the type's line comment (`//`, `#` or `;`, see file-types.ts). The reader searches for
 * the start string, takes the ID up to the next "\n", and the payload up to the next end string
 * (which begins with its own "\n"); it then resumes after the newline that ends the END line. The
 * ID after `__END__` is not checked, as in LLVM. Searches run through the engine's scan kernel.
 */
import type { Engine } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import { findFirst } from "../engine/find.js";
import { engine as defaultEngine } from "../engine/select.js";
import { bytesSource, readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { Window } from "../engine/window.js";
import { concatBytes, latin1Decode, latin1Encode, startsWith } from "./bytes.js";
import { BUNDLE_MAGIC } from "./bundle.js";

export const TEXT_COMMENTS = ["//", "#", ";"] as const;
export type TextComment = (typeof TEXT_COMMENTS)[number] | string;

/** IDs longer than this are refused rather than read into memory (LLVM has no limit). */
export const TEXT_ID_MAX = 64 * 1024;

export function textStartMarker(comment: TextComment): string {
  return `\n${comment} ${BUNDLE_MAGIC}__START__ `;
}

export function textEndMarker(comment: TextComment): string {
  return `\n${comment} ${BUNDLE_MAGIC}__END__ `;
}

export interface TextBundleEntry {
  /** The entry ID, as a byte string. */
  readonly id: string;
  /** Payload position and size. */
  readonly offset: number;
  readonly size: number;
  /** Where the START line's leading "\n" is. */
  readonly markerOffset: number;
}

export interface TextBundle {
  readonly format: "text";
  readonly comment: TextComment;
  /** Entries in file order (an empty list: not a text bundle of this comment style). */
  readonly entries: readonly TextBundleEntry[];
  /** End of the last END line. */
  readonly extent: number;
  /**
   * With `lenient`: why reading stopped early (an entry without its END marker). `entries` holds the intact
   * entries before it, which LLVM hands out when no requested target needs it to read further.
   */
  readonly damage?: OffloadKitError;
}

const NEWLINE = new Uint8Array([0x0a]);

/** Reads every entry of a text bundle written with `comment` (with `lenient`, the intact ones before any damage). */
export function readTextBundle(
  input: ByteSource | Uint8Array,
  comment: TextComment,
  options: { engine?: Engine; window?: Window; lenient?: boolean } = {},
): TextBundle {
  const source = input instanceof Uint8Array ? bytesSource(input) : input;
  const engine = options.window?.engine ?? options.engine ?? defaultEngine();
  const w = options.window ?? new Window(engine, source);
  const start = latin1Encode(textStartMarker(comment));
  const end = latin1Encode(textEndMarker(comment));
  const entries: TextBundleEntry[] = [];
  let position = 0;
  let extent = 0;
  for (;;) {
    const marker = findFirst(w, start, position);
    if (marker < 0) break;
    const idStart = marker + start.length;
    const idEnd = findFirst(w, NEWLINE, idStart);
    // LLVM stops quietly when the START line never ends.
    if (idEnd < 0) break;
    if (idEnd - idStart > TEXT_ID_MAX) {
      throw new OffloadKitError("TEXT_ID_TOO_LONG", `the ID of the text bundle entry at offset ${marker} is ${idEnd - idStart} bytes long (at most ${TEXT_ID_MAX} are supported)`, {
        offset: idStart,
        field: "ID",
      });
    }
    const id = latin1Decode(readExact(source, idStart, idEnd - idStart));
    const payload = idEnd + 1;
    const close = findFirst(w, end, payload);
    if (close < 0) {
      // LLVM reads past the end of its buffer here (or, listing, prints the ID forever); say what is wrong instead.
      const damage = new OffloadKitError("TEXT_END_MISSING", `text bundle entry '${id}' at offset ${marker} has no END marker`, {
        offset: marker,
        field: "END marker",
      });
      if (options.lenient) return { format: "text", comment, entries, extent, damage };
      throw damage;
    }
    entries.push({ id, offset: payload, size: close - payload, markerOffset: marker });
    const lineEnd = findFirst(w, NEWLINE, close + 1);
    position = lineEnd < 0 ? source.size : lineEnd + 1;
    extent = position;
  }
  return { format: "text", comment, entries, extent };
}

/** The comment style of a text bundle that starts at byte 0 of `head`, if any. */
export function detectTextComment(head: Uint8Array): TextComment | undefined {
  for (const comment of TEXT_COMMENTS) {
    if (startsWith(head, latin1Encode(textStartMarker(comment)))) return comment;
  }
  return undefined;
}

/** The bytes that go before and after one entry's payload. */
export function textEntryFraming(comment: TextComment, id: string): { before: Uint8Array; after: Uint8Array } {
  return {
    before: latin1Encode(`${textStartMarker(comment)}${id}\n`),
    after: latin1Encode(`${textEndMarker(comment)}${id}\n`),
  };
}

/** Writes a whole text bundle in memory. */
export function writeTextBundle(comment: TextComment, entries: readonly { id: string; data: Uint8Array }[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const entry of entries) {
    const framing = textEntryFraming(comment, entry.id);
    parts.push(framing.before, entry.data, framing.after);
  }
  return concatBytes(parts);
}
