/**
 * Reading a bundle the way clang-offload-bundler 19 does for a given -type: choose the handler
 * (CreateFileHandler), read the entries, and give them both in file order and in the order the native
 * tool visits them when unbundling (binary bundles: llvm::StringMap bucket order).
 */
import type { Engine } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import { engine as defaultEngine } from "../engine/select.js";
import { bytesSource } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { Window } from "../engine/window.js";
import { distinctEntries, readBinaryBundle } from "../formats/bundle.js";
import type { BinaryBundle, BundleProblem } from "../formats/bundle.js";
import { fileTypeInfo, invalidFileTypeMessage } from "../formats/file-types.js";
import type { FileTypeInfo } from "../formats/file-types.js";
import { readTextBundle } from "../formats/text-bundle.js";
import { StringMapModel } from "../llvm/string-map.js";
import { objectBundleEntries } from "./object-bundle.js";

export interface IndexedEntry {
  /** Bundle entry ID (byte string). */
  readonly id: string;
  /** Payload position and size in the (decompressed) input. */
  readonly offset: number;
  readonly size: number;
}

export interface BundleIndex {
  /** "object": entries in ELF sections (./object-bundle.ts), in section order. */
  readonly handler: "binary" | "text" | "object";
  /** File order; for binary bundles one entry per distinct ID (first position, last value, as LLVM). */
  readonly entries: readonly IndexedEntry[];
  /** The order clang-offload-bundler 19 visits entries in when unbundling and listing. */
  readonly visitOrder: readonly IndexedEntry[];
  /** Why an input that starts like a binary bundle is not one to LLVM. */
  readonly problem?: BundleProblem;
  readonly binary?: BinaryBundle;
  /** Text bundles read leniently: the damage after `entries` (see {@link planAroundDamage}). */
  readonly damage?: OffloadKitError;
}

export function fileTypeOrThrow(type: string): FileTypeInfo {
  const info = fileTypeInfo(type);
  if (info === undefined) throw new OffloadKitError("INVALID_FILE_TYPE", invalidFileTypeMessage(type));
  return info;
}

const orderCache = new Map<string, number[]>();

/**
 * StringMap (xxh3, LLVM 19) iteration order of distinct IDs inserted in header order. The permutation
 * depends only on the ID sequence, which repeats across a batch, so it is memoised.
 */
export function nativeVisitOrder<T extends { id: string }>(entries: readonly T[]): T[] {
  const key = entries.map((e) => `${e.id.length}:${e.id}`).join("");
  let order = orderCache.get(key);
  if (order === undefined) {
    const map = new StringMapModel<number>({ hash: "xxh3" });
    entries.forEach((entry, i) => map.set(entry.id, i));
    order = [...map.values()];
    if (orderCache.size >= 1024) orderCache.clear();
    orderCache.set(key, order);
  }
  return order.map((i) => entries[i]);
}

/**
 * Unbundling a damaged text bundle, as LLVM 19 does it: its loop stops once every requested target has its
 * entry, so a request served by the intact entries before the damage succeeds (a bundle whose last, unrequested
 * entry lost its END marker still gives the host). Anything that would read on (a target still missing, or
 * nothing matched, which LLVM only concludes after reading everything) meets the damage and fails with it.
 */
export function planAroundDamage<W extends { content: { kind: string } }>(index: BundleIndex, plan: () => W[]): W[] {
  if (index.damage === undefined) return plan();
  let writes: W[];
  try {
    writes = plan();
  } catch {
    throw index.damage;
  }
  if (writes.some((w) => w.content.kind !== "entry")) throw index.damage;
  return writes;
}

/** With `lenient`, a damaged text bundle gives its intact entries and `damage` instead of throwing. */
export function readBundleIndex(input: ByteSource | Uint8Array, type: string, engine: Engine = defaultEngine(), options: { lenient?: boolean } = {}): BundleIndex {
  const source = input instanceof Uint8Array ? bytesSource(input) : input;
  const info = fileTypeOrThrow(type);
  const window = new Window(engine, source);
  if (info.comment !== undefined) {
    const text = readTextBundle(source, info.comment, { window, lenient: options.lenient });
    const entries = text.entries.map(({ id, offset, size }) => ({ id, offset, size }));
    return { handler: "text", entries, visitOrder: entries, damage: text.damage };
  }
  if (info.object) {
    const entries = objectBundleEntries(source);
    if (entries !== undefined) return { handler: "object", entries, visitOrder: entries };
  }
  const read = readBinaryBundle(source, { window });
  if (read.kind === "none") return { handler: "binary", entries: [], visitOrder: [], problem: read.problem };
  const entries = distinctEntries(read.bundle.entries).map(({ id, offset, size }) => ({ id, offset, size }));
  // The StringMap holds each ID once, at its first insertion's bucket, with the last stored value.
  return { handler: "binary", entries, visitOrder: nativeVisitOrder(entries), binary: read.bundle };
}
