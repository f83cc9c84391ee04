/**
 * Binary offload bundles: the `__CLANG_OFFLOAD_BUNDLE__` format of clang-offload-bundler.
 *
 * Follows seed 000 ("Bundled Binary File Layout"), spec bundler.md §2 and BinaryFileHandler in
 * clang/lib/Driver/OffloadBundler.cpp. All integers little-endian:
 *
 * | offset      | size | field                                                   |
 * |-------------|------|---------------------------------------------------------|
 * | 0           | 24   | "__CLANG_OFFLOAD_BUNDLE__" (no NUL)                     |
 * | 24          | 8    | N, the number of entries                                |
 * | 32 + ...    | 8    | entry payload offset, from the start of the bundle      |
 * |             | 8    | entry payload size                                      |
 * |             | 8    | entry ID length L                                       |
 * |             | L    | entry ID (no NUL, no padding)                           |
 * | header end  |      | payloads, each at its recorded offset, zero padding in  |
 * |             |      | front of each one up to the -bundle-align multiple      |
 *
 * Reading is LLVM-lenient where LLVM is lenient (a header that fails at its first entry makes the
 * input "not a bundle"), and strict where LLVM crashes (a header that fails after one or more good
 * entries is an error here, a segfault there). The header walk runs in the engine (Wasm or TS twin).
 */
import type { Engine } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import {
  BUNDLE_MAX_RECORDS, BUNDLE_RECORD_F64S, RECORDS, RESULT, R_AUX0, R_COUNT, R_ERROR_POS, R_NEXT_INDEX, R_NEXT_POS,
} from "../engine/layout.js";
import { engine as defaultEngine } from "../engine/select.js";
import { bytesSource } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { Status, statusName } from "../engine/status.js";
import type { StatusName } from "../engine/status.js";
import { Window } from "../engine/window.js";
import { alignTo, latin1Decode, latin1Encode, setU64 } from "./bytes.js";

export const BUNDLE_MAGIC = "__CLANG_OFFLOAD_BUNDLE__";
export const BUNDLE_MAGIC_BYTES: Uint8Array = latin1Encode(BUNDLE_MAGIC);
export const BUNDLE_MAGIC_SIZE = 24;
/** Magic + entry count. */
export const BUNDLE_HEAD_SIZE = 32;
/** Offset, size and ID-length fields of one header entry. */
export const BUNDLE_ENTRY_FIXED_SIZE = 24;
/** Bytes read for a first look at a header (most headers are a few hundred bytes). */
const HEADER_PROBE = 4096;

export interface BundleEntry {
  /** The entry ID, as a byte string (see bytes.ts). */
  readonly id: string;
  /** Payload position, from the start of the bundle. */
  readonly offset: number;
  readonly size: number;
  /** Where this entry's header record starts. */
  readonly headerOffset: number;
}

export interface BinaryBundle {
  readonly format: "binary";
  /** The entry count the header declares. */
  readonly declaredCount: number;
  /** Entries in header order; a repeated ID appears each time it is stored. */
  readonly entries: readonly BundleEntry[];
  /** Bytes used by the header. */
  readonly headerSize: number;
  /** End of the last byte the bundle uses (header or payload). */
  readonly extent: number;
}

/** Why an input that starts like a bundle is "not a bundle" to LLVM (or is an error to us). */
export interface BundleProblem {
  readonly code: StatusName;
  /** Offset of the offending field, from the start of the bundle. */
  readonly offset: number;
  readonly field: string;
  /** Index of the entry whose header failed. */
  readonly entryIndex: number;
  readonly message: string;
}

export type BinaryBundleRead =
  | { readonly kind: "bundle"; readonly bundle: BinaryBundle }
  | { readonly kind: "none"; readonly problem?: BundleProblem };

export interface ReadOptions {
  engine?: Engine;
  /** Reuse a window over the same source (saves a reload). */
  window?: Window;
}

export function isBinaryBundle(bytes: Uint8Array): boolean {
  if (bytes.length < BUNDLE_MAGIC_SIZE) return false;
  for (let i = 0; i < BUNDLE_MAGIC_SIZE; i++) if (bytes[i] !== BUNDLE_MAGIC_BYTES[i]) return false;
  return true;
}

const FIELD_NAMES: Partial<Record<StatusName, string>> = {
  BUNDLE_COUNT_TRUNCATED: "entry count",
  BUNDLE_OFFSET_TRUNCATED: "offset",
  BUNDLE_SIZE_TRUNCATED: "size",
  BUNDLE_ID_LENGTH_TRUNCATED: "ID length",
  BUNDLE_ID_TRUNCATED: "ID",
  BUNDLE_OFFSET_ZERO: "offset",
  BUNDLE_PAYLOAD_OUT_OF_BOUNDS: "offset",
  BUNDLE_ID_TOO_LONG: "ID length",
};

function u64Text(view: Uint8Array): string {
  let value = 0n;
  for (let i = 7; i >= 0; i--) value = (value << 8n) | BigInt(view[i]);
  return value.toString();
}

function describeProblem(code: StatusName, w: Window, entryPos: number, errorPos: number, index: number, size: number): string {
  const entry = `bundle entry ${index}`;
  switch (code) {
    case "BUNDLE_COUNT_TRUNCATED":
      return `truncated bundle header: the entry count at offset ${errorPos} runs past the end of the ${size}-byte input`;
    case "BUNDLE_OFFSET_TRUNCATED":
    case "BUNDLE_SIZE_TRUNCATED":
    case "BUNDLE_ID_LENGTH_TRUNCATED":
      return `truncated bundle header: the ${FIELD_NAMES[code]} field of ${entry} at offset ${errorPos} runs past the end of the ${size}-byte input`;
    case "BUNDLE_ID_TRUNCATED":
      return `malformed bundle header: the ID of ${entry} (${u64Text(w.view(errorPos, 8))} bytes from offset ${errorPos + 8}) runs past the end of the ${size}-byte input`;
    case "BUNDLE_ID_TOO_LONG":
      return `unsupported bundle header: the ID of ${entry} is ${u64Text(w.view(errorPos, 8))} bytes long (at most ${w.engine.windowCapacity - BUNDLE_ENTRY_FIXED_SIZE} are supported)`;
    case "BUNDLE_OFFSET_ZERO":
      return `malformed bundle header: ${entry} at offset ${entryPos} has payload offset 0`;
    case "BUNDLE_PAYLOAD_OUT_OF_BOUNDS": {
      const offset = u64Text(w.view(entryPos, 8));
      const length = u64Text(w.view(entryPos + 8, 8));
      return `malformed bundle header: the payload of ${entry} (offset ${offset}, size ${length}) runs past the end of the ${size}-byte input`;
    }
    default:
      return `malformed bundle header at offset ${errorPos}`;
  }
}

/**
 * Reads the header of the binary bundle that starts at position 0 of `input`. Returns `none` for
 * inputs LLVM does not treat as bundles (no magic, or a header that fails at its first entry, with the
 * reason); throws OffloadKitError when the header fails after at least one good entry.
 */
export function readBinaryBundle(input: ByteSource | Uint8Array, options: ReadOptions = {}): BinaryBundleRead {
  const source = input instanceof Uint8Array ? bytesSource(input) : input;
  const engine = options.window?.engine ?? options.engine ?? defaultEngine();
  const w = options.window ?? new Window(engine, source);
  const size = source.size;
  // Headers are small: read a few KiB first, and a whole window only when the walk asks for more.
  if (!w.holds(0, Math.min(size, BUNDLE_HEAD_SIZE))) w.load(0, HEADER_PROBE);
  const resultBase = RESULT >>> 3;

  let status = engine.bundleHead(w.position === 0 ? w.length : 0, size);
  let f64 = engine.views().f64;
  if (status === Status.NOT_FOUND) return { kind: "none" };
  if (status < 0) {
    const code = statusName(status)!;
    const errorPos = f64[resultBase + R_ERROR_POS];
    return {
      kind: "none",
      problem: { code, offset: errorPos, field: FIELD_NAMES[code]!, entryIndex: -1, message: describeProblem(code, w, 0, errorPos, -1, size) },
    };
  }
  const declaredCount = f64[resultBase + R_AUX0];
  const entries: BundleEntry[] = [];
  let position = f64[resultBase + R_NEXT_POS];
  let index = 0;
  let stalled = false;
  for (;;) {
    status = engine.walkBundle(w.position, w.length, size, position, index, declaredCount, BUNDLE_MAX_RECORDS);
    f64 = engine.views().f64;
    const written = f64[resultBase + R_COUNT];
    for (let k = 0; k < written; k++) {
      const rec = (RECORDS >>> 3) + k * BUNDLE_RECORD_F64S;
      entries.push({
        headerOffset: f64[rec] - BUNDLE_ENTRY_FIXED_SIZE,
        id: latin1Decode(w.view(f64[rec], f64[rec + 1])),
        offset: f64[rec + 2],
        size: f64[rec + 3],
      });
    }
    position = f64[resultBase + R_NEXT_POS];
    index = f64[resultBase + R_NEXT_INDEX];
    if (status === Status.DONE) break;
    if (status === Status.MORE) {
      if (written === 0) {
        if (stalled) throw new OffloadKitError("INTERNAL", `bundle header walk made no progress at offset ${position}`);
        stalled = true;
        w.load(position);
      } else {
        stalled = false;
      }
      continue;
    }
    const code = statusName(status)!;
    const errorPos = f64[resultBase + R_ERROR_POS];
    const problem: BundleProblem = {
      code,
      offset: errorPos,
      field: FIELD_NAMES[code] ?? "header",
      entryIndex: index,
      message: describeProblem(code, w, position, errorPos, index, size),
    };
    if (entries.length === 0) return { kind: "none", problem };
    throw new OffloadKitError(code, problem.message, { offset: errorPos, field: problem.field });
  }
  let extent = position;
  for (const entry of entries) extent = Math.max(extent, entry.offset + entry.size);
  return { kind: "bundle", bundle: { format: "binary", declaredCount, entries, headerSize: position, extent } };
}

/**
 * The entries LLVM would see: one per distinct ID, at the position of its first appearance, with the
 * offset and size of its last (StringMap assignment semantics).
 */
export function distinctEntries(entries: readonly BundleEntry[]): BundleEntry[] {
  const byId = new Map<string, BundleEntry>();
  for (const entry of entries) byId.set(entry.id, entry);
  return [...byId.values()];
}

export interface BinaryBundleLayout {
  /** The complete header bytes. */
  readonly header: Uint8Array;
  /** Payload offsets, in entry order. */
  readonly offsets: readonly number[];
  /** Total size of the bundle. */
  readonly size: number;
}

/**
 * Lays out a bundle the way BinaryFileHandler::WriteHeader does: header, then each payload at the
 * next multiple of `align` (padding goes in front of every payload, the first one included).
 */
export function layoutBinaryBundle(entries: readonly { id: string; size: number }[], align = 1): BinaryBundleLayout {
  if (!Number.isInteger(align) || align < 1) {
    throw new OffloadKitError("BAD_ALIGNMENT", `bundle alignment must be a positive integer, not ${align}`);
  }
  const seen = new Set<string>();
  let headerSize = BUNDLE_HEAD_SIZE;
  for (const entry of entries) {
    if (seen.has(entry.id)) {
      throw new OffloadKitError("DUPLICATE_ID", `two bundle entries have the ID '${entry.id}'`);
    }
    seen.add(entry.id);
    headerSize += BUNDLE_ENTRY_FIXED_SIZE + entry.id.length;
  }
  const header = new Uint8Array(headerSize);
  const view = new DataView(header.buffer);
  header.set(BUNDLE_MAGIC_BYTES, 0);
  setU64(view, BUNDLE_MAGIC_SIZE, entries.length);
  const offsets: number[] = [];
  let at = BUNDLE_HEAD_SIZE;
  let position = headerSize;
  for (const entry of entries) {
    position = alignTo(position, align);
    offsets.push(position);
    setU64(view, at, position);
    setU64(view, at + 8, entry.size);
    setU64(view, at + 16, entry.id.length);
    header.set(latin1Encode(entry.id), at + BUNDLE_ENTRY_FIXED_SIZE);
    at += BUNDLE_ENTRY_FIXED_SIZE + entry.id.length;
    position += entry.size;
  }
  return { header, offsets, size: position };
}

/** Writes a whole bundle in memory. */
export function writeBinaryBundle(entries: readonly { id: string; data: Uint8Array }[], align = 1): Uint8Array {
  const layout = layoutBinaryBundle(entries.map((e) => ({ id: e.id, size: e.data.length })), align);
  const out = new Uint8Array(layout.size);
  out.set(layout.header, 0);
  entries.forEach((entry, i) => out.set(entry.data, layout.offsets[i]));
  return out;
}

/** Parses an in-memory bundle into entries with zero-copy payload views; throws if it is not a bundle. */
export function parseBinaryBundle(bytes: Uint8Array, options: ReadOptions = {}): (BundleEntry & { data: Uint8Array })[] {
  const read = readBinaryBundle(bytes, options);
  if (read.kind === "none") {
    throw new OffloadKitError(read.problem?.code ?? "NOT_A_BUNDLE", read.problem?.message ?? "not a binary offload bundle", {
      offset: read.problem?.offset,
      field: read.problem?.field,
    });
  }
  return read.bundle.entries.map((e) => ({ ...e, data: bytes.subarray(e.offset, e.offset + e.size) }));
}
