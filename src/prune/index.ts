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
import { containerOf } from "./containers.js";
import type { EntryOutcome, PruneContext } from "./outcome.js";
import { parseSelection } from "./select.js";
import type { Selection } from "./select.js";

export { decideEntry, expandGpu, parseSelection, selectionText } from "./select.js";
export type { EntryDecision, GpuChoice, Selection, SelectionMode } from "./select.js";
export type { EntryOutcome } from "./outcome.js";
export { CONTAINERS, containerOf } from "./containers.js";
export type { Container } from "./containers.js";

export interface PruneOptions {
  /** GPUs whose devices must still find their code (`gfx90a`, `gfx90a:xnack-`, `gfx1100`, `sm_80`). */
  readonly keep?: readonly string[];
  /** GPUs whose code goes; exactly one of keep and drop. */
  readonly drop?: readonly string[];
  /** A selection parsed already (instead of keep/drop). */
  readonly selection?: Selection;
  /** Write bundles that keep no device entry instead of failing. */
  readonly allowEmpty?: boolean;
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

function wholeBytes(source: ByteSource | Uint8Array): Uint8Array {
  if (source instanceof Uint8Array) return source;
  return source.bytes ?? readExact(source, 0, source.size);
}

export function selectionOf(options: Pick<PruneOptions, "keep" | "drop" | "selection">): Selection {
  if (options.selection !== undefined) return options.selection;
  if ((options.keep === undefined) === (options.drop === undefined)) {
    throw new OffloadKitError("BAD_SELECTION", "give exactly one of keep and drop (the GPUs to keep, or the GPUs to drop)");
  }
  return options.keep !== undefined ? parseSelection("keep", options.keep) : parseSelection("drop", options.drop!);
}

/** `prune` with the codecs at hand (synchronous: the Node CLI edits file after file with it). */
export function pruneWith(bytes: Uint8Array, options: PruneOptions & { readonly codecs: Codecs }): PruneResult {
  const selection = selectionOf(options);
  const name = options.name ?? "input";
  const container = containerOf(bytes, name);
  const ctx: PruneContext = {
    selection, allowEmpty: options.allowEmpty ?? false, codecs: options.codecs, name, outcomes: [], notes: [], level: options.level,
  };
  const output = container.prune(bytes, ctx, "");
  return {
    container: container.name, output, changed: output !== bytes, inputSize: bytes.length, outputSize: output.length, notes: ctx.notes, entries: ctx.outcomes,
  };
}

export async function prune(source: ByteSource | Uint8Array, options: PruneOptions): Promise<PruneResult> {
  const codecs = options.codecs ?? (await loadBrowserCodecs());
  return pruneWith(wholeBytes(source), { ...options, codecs });
}

export interface CompressOptions {
  /** CCOB version for `compress`: 2 (LLVM 19's; the default) or 3 (LLVM 22's). */
  readonly version?: CcobVersion;
  /** zstd level for `compress` (default 3, LLVM's). */
  readonly level?: number;
  readonly codecs?: Codecs;
  readonly name?: string;
}

/** `compress` / `decompress` with the codecs at hand (synchronous). */
export function transformWith(bytes: Uint8Array, options: CompressOptions & { readonly codecs: Codecs }, operation: "compress" | "decompress"): EditResult {
  const name = options.name ?? "input";
  const container = containerOf(bytes, name);
  const notes: string[] = [];
  const output = container[operation](bytes, { version: options.version, level: options.level, codecs: options.codecs, name, notes }, "");
  return { container: container.name, output, changed: output !== bytes, inputSize: bytes.length, outputSize: output.length, notes };
}

async function transform(source: ByteSource | Uint8Array, options: CompressOptions, operation: "compress" | "decompress"): Promise<EditResult> {
  const codecs = options.codecs ?? (await loadBrowserCodecs());
  return transformWith(wholeBytes(source), { ...options, codecs }, operation);
}

/** Plain bundles → CCOBs (a file already compressed comes back unchanged). */
export function compress(source: ByteSource | Uint8Array, options: CompressOptions = {}): Promise<EditResult> {
  return transform(source, options, "compress");
}

/** CCOBs → plain bundles (a plain file comes back unchanged). */
export function decompress(source: ByteSource | Uint8Array, options: CompressOptions = {}): Promise<EditResult> {
  return transform(source, options, "decompress");
}
