/**
 * Finding every offload bundle in a file: one that starts at byte 0 (binary, text or compressed), or
 * binary bundles embedded anywhere (a host executable's .hip_fatbin section, a library). Embedded
 * bundles are found by the engine's magic scan; each is parsed with the bundle's own header as the
 * authority on its size, and scanning resumes after it, so payload bytes are not re-scanned.
 */
import type { Engine } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import { findFirst } from "../engine/find.js";
import { engine as defaultEngine } from "../engine/select.js";
import { bytesSource, readExact, sliceSource } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { Window } from "../engine/window.js";
import { BUNDLE_MAGIC_BYTES, readBinaryBundle } from "../formats/bundle.js";
import type { BundleProblem } from "../formats/bundle.js";
import { detectTextComment, readTextBundle } from "../formats/text-bundle.js";

export interface FoundEntry {
  readonly id: string;
  /** Absolute position of the payload in the file. */
  readonly offset: number;
  readonly size: number;
  /** Largest power of two (up to 4096) dividing the payload's offset from the bundle start. */
  readonly align: number;
}

export interface FoundBundle {
  readonly format: "binary" | "text";
  /** Where the bundle starts in the file. */
  readonly offset: number;
  /** Bytes the bundle spans (header to last payload byte). */
  readonly size: number;
  /** Text bundles: the comment that starts marker lines. */
  readonly comment?: string;
  /** Binary bundles: the alignment every payload offset is a multiple of (largest power of two up to 4096). */
  readonly align?: number;
  readonly entries: readonly FoundEntry[];
}

export interface ScanProblem {
  /** Where the bundle that could not be read starts. */
  readonly offset: number;
  readonly code: string;
  readonly message: string;
}

export interface ScanReport {
  readonly size: number;
  readonly bundles: readonly FoundBundle[];
  /** Magic occurrences that did not lead to a readable bundle. */
  readonly problems: readonly ScanProblem[];
}

function alignmentOf(offset: number): number {
  let align = 1;
  while (align < 4096 && offset % (align * 2) === 0) align *= 2;
  return align;
}

function binaryAt(source: ByteSource, base: number, engine: Engine): { bundle?: FoundBundle; problem?: BundleProblem | ScanProblem } {
  const slice = sliceSource(source, base, source.size - base);
  try {
    const read = readBinaryBundle(slice, { engine });
    if (read.kind === "none") return { problem: read.problem };
    const entries = read.bundle.entries.map((e) => ({
      id: e.id,
      offset: base + e.offset,
      size: e.size,
      align: alignmentOf(e.offset),
    }));
    const align = entries.length === 0 ? 1 : Math.min(...entries.map((e) => e.align));
    return { bundle: { format: "binary", offset: base, size: read.bundle.extent, align, entries } };
  } catch (e) {
    if (e instanceof OffloadKitError) return { problem: { offset: base, code: e.code, message: e.message } };
    throw e;
  }
}

/** Every bundle in `input`: one at byte 0, or all binary bundles embedded in it. */
export function scanBundles(input: ByteSource | Uint8Array, engine: Engine = defaultEngine()): ScanReport {
  const source = input instanceof Uint8Array ? bytesSource(input) : input;
  const head = readExact(source, 0, Math.min(source.size, 64));
  const comment = detectTextComment(head);
  if (comment !== undefined) {
    const text = readTextBundle(source, comment, { engine });
    const entries = text.entries.map((e) => ({ id: e.id, offset: e.offset, size: e.size, align: 1 }));
    return { size: source.size, bundles: [{ format: "text", offset: 0, size: text.extent, comment, entries }], problems: [] };
  }
  const bundles: FoundBundle[] = [];
  const problems: ScanProblem[] = [];
  const w = new Window(engine, source);
  let from = 0;
  for (;;) {
    const base = findFirst(w, BUNDLE_MAGIC_BYTES, from);
    if (base < 0) break;
    const { bundle, problem } = binaryAt(source, base, engine);
    if (bundle !== undefined) {
      bundles.push(bundle);
      // The header is the authority on the bundle's size; its payloads are not searched again.
      from = base + Math.max(bundle.size, BUNDLE_MAGIC_BYTES.length);
    } else {
      if (problem !== undefined) problems.push({ offset: base, code: problem.code, message: problem.message });
      from = base + 1;
    }
  }
  return { size: source.size, bundles, problems };
}
