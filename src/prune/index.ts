/**
 * The library API of `offload-kit prune`, `compress` and `decompress`, over a ByteSource or bytes, in
 * browsers and Node alike (the codecs are handed in; by default the browser-safe ones). The input is
 * read whole and the output made in memory; src/prune/node.ts writes files.
 *
 * - `prune`: keeps the entries a device of the `keep` GPUs would load (or drops those a `drop` GPU
 *   would), host entries always; see ./select.ts for the rule and ./containers.ts for what it edits.
 * - `compress`: plain bundles become CCOBs with LLVM's parameters (version 2 and zstd level 3 unless
 *   told otherwise), in bundle files and in archives' members.
 * - `decompress`: the inverse.
 */
import { OffloadKitError } from "../engine/errors.js";
import { loadBrowserCodecs } from "../compress/browser.js";
import type { Codecs } from "../compress/codecs.js";
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import type { CcobVersion } from "../formats/ccob.js";
import { bytesSource } from "../engine/source.js";
import { planContainerEdit } from "./containers.js";
import type { CompressContext } from "./containers.js";
import { named } from "./outcome.js";
import type { EntryOutcome, PruneContext } from "./outcome.js";
import { materialize } from "./plan.js";
import type { OutputPlan } from "./plan.js";
import { parseSelection } from "./select.js";
import type { Selection } from "./select.js";

export { decideEntry, expandGpu, parseSelection, selectionText } from "./select.js";
export type { EntryDecision, GpuChoice, Selection, SelectionMode } from "./select.js";
export type { EntryOutcome } from "./outcome.js";
export { CONTAINERS, containerOf, editableContainerOf } from "./containers.js";
export type { OutputPlan, Piece } from "./plan.js";
export type { Container } from "./containers.js";
export { planReplace, replace, replaceWith } from "./replace.js";
export type { PlannedReplace, ReplaceOptions, ReplaceResult } from "./replace.js";

export interface PruneOptions {
  /** GPUs whose devices must still find their code (`gfx90a`, `gfx90a:xnack-`, `gfx1100`, `sm_80`). */
  readonly keep?: readonly string[];
  /** GPUs whose code goes; exactly one of keep and drop. */
  readonly drop?: readonly string[];
  /** A selection parsed already (instead of keep/drop). */
  readonly selection?: Selection;
  /** Write bundles that keep no device entry instead of failing. */
  readonly allowEmpty?: boolean;
  /** NVIDIA fatbins: drop the PTX the listed GPUs could JIT-compile as well (kept by default). */
  readonly dropPtx?: boolean;
  /** Re-encode compressed bundles at this level instead of the level found in them. */
  readonly level?: number;
  readonly codecs?: Codecs;
  /** The input's name in messages (default "input"). */
  readonly name?: string;
}

export interface EditResult {
  /** Which container the input is (`bundle`, `archive`, `fat object`, ...). */
  readonly container: string;
  readonly output: Uint8Array;
  /** Whether the output differs from the input (false: `output` is the input's bytes). */
  readonly changed: boolean;
  readonly inputSize: number;
  readonly outputSize: number;
  readonly notes: readonly string[];
}

export interface PruneResult extends EditResult {
  /** Every entry seen, kept or not, in file order. */
  readonly entries: readonly EntryOutcome[];
}

export function selectionOf(options: Pick<PruneOptions, "keep" | "drop" | "selection">): Selection {
  if (options.selection !== undefined) return options.selection;
  if ((options.keep === undefined) === (options.drop === undefined)) {
    throw new OffloadKitError("BAD_SELECTION", "give exactly one of keep and drop (the GPUs to keep, or the GPUs to drop)");
  }
  return options.keep !== undefined ? parseSelection("keep", options.keep) : parseSelection("drop", options.drop!);
}

export interface CompressOptions {
  /** CCOB version for `compress`: 2 (LLVM 19's; the default) or 3 (LLVM 22's). */
  readonly version?: CcobVersion;
  /** zstd level for `compress` (default 3, LLVM's). */
  readonly level?: number;
  readonly codecs?: Codecs;
  readonly name?: string;
}

/** An edit described, not yet made (see ./plan.ts): what src/prune/node.ts streams into files. */
export interface PlannedEdit {
  readonly container: string;
  /** The output; undefined when it is the input unchanged. */
  readonly plan: OutputPlan | undefined;
  readonly inputSize: number;
  readonly notes: readonly string[];
}

export interface PlannedPrune extends PlannedEdit {
  readonly entries: readonly EntryOutcome[];
}

/** Plans `prune` over a source (the Node CLI streams the plan into a file). */
export function planPrune(source: ByteSource, options: PruneOptions & { readonly codecs: Codecs }): PlannedPrune {
  const ctx: PruneContext = {
    selection: selectionOf(options), allowEmpty: options.allowEmpty ?? false, codecs: options.codecs, name: options.name ?? "input", outcomes: [], notes: [], level: options.level, dropPtx: options.dropPtx,
  };
  const edit = named(ctx.name, () => planContainerEdit(source, ctx, (c) => c.planPrune, (c, bytes, context) => c.prune(bytes, context, "")));
  return { ...edit, inputSize: source.size, notes: ctx.notes, entries: ctx.outcomes };
}

/** Plans `compress` or `decompress` over a source. */
export function planTransform(source: ByteSource, options: CompressOptions & { readonly codecs: Codecs }, operation: "compress" | "decompress"): PlannedEdit {
  const ctx: CompressContext = { version: options.version, level: options.level, codecs: options.codecs, name: options.name ?? "input", notes: [] };
  const edit = named(ctx.name, () =>
    planContainerEdit(source, ctx, (c) => (operation === "compress" ? c.planCompress : c.planDecompress), (c, bytes, context) => c[operation](bytes, context, "")));
  return { ...edit, inputSize: source.size, notes: ctx.notes };
}

function made<P extends PlannedEdit>(planned: P, bytes: Uint8Array, codecs: Codecs): Omit<P, "plan"> & EditResult {
  const output = planned.plan === undefined ? bytes : materialize(planned.plan, bytesSource(bytes), codecs);
  const { plan: _plan, ...rest } = planned;
  return { ...rest, output, changed: output !== bytes, outputSize: output.length };
}

/** `prune` with the codecs at hand (synchronous). */
export function pruneWith(bytes: Uint8Array, options: PruneOptions & { readonly codecs: Codecs }): PruneResult {
  return made(planPrune(bytesSource(bytes), options), bytes, options.codecs);
}

export async function prune(source: ByteSource | Uint8Array, options: PruneOptions): Promise<PruneResult> {
  const codecs = options.codecs ?? (await loadBrowserCodecs());
  return pruneWith(wholeBytes(source), { ...options, codecs });
}

/** `compress` / `decompress` with the codecs at hand (synchronous). */
export function transformWith(bytes: Uint8Array, options: CompressOptions & { readonly codecs: Codecs }, operation: "compress" | "decompress"): EditResult {
  return made(planTransform(bytesSource(bytes), options, operation), bytes, options.codecs);
}

function wholeBytes(source: ByteSource | Uint8Array): Uint8Array {
  if (source instanceof Uint8Array) return source;
  return source.bytes ?? readExact(source, 0, source.size);
}

/** Plain bundles → CCOBs (a file already compressed comes back unchanged). */
export async function compress(source: ByteSource | Uint8Array, options: CompressOptions = {}): Promise<EditResult> {
  const codecs = options.codecs ?? (await loadBrowserCodecs());
  return transformWith(wholeBytes(source), { ...options, codecs }, "compress");
}

/** CCOBs → plain bundles (a plain file comes back unchanged). */
export async function decompress(source: ByteSource | Uint8Array, options: CompressOptions = {}): Promise<EditResult> {
  const codecs = options.codecs ?? (await loadBrowserCodecs());
  return transformWith(wholeBytes(source), { ...options, codecs }, "decompress");
}
