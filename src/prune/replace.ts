/**
 * `replace`: one code object swapped for another, in every container `prune` edits, through the same
 * dispatch table (./containers.ts; each container's module does its swap, ./swap.ts holds the rules they
 * share). The output is what the native tool writes for the same entries in the same order with the new
 * file in the entry's place: clang-offload-bundler 19 for bundle files (binary, text, CCOB), fat objects
 * (`-type=o`) and the members of archives (written again as `llvm-ar rcD` does), clang-offload-packager 19
 * for offload binaries. In a linked ELF file the ELF editor packs the result (./linked-elf.ts), moving
 * `.hip_fatbin` to a new PT_LOAD at the end of the file when the new bundle no longer fits.
 *
 * The entry must be found exactly once. Bundles are numbered in file order (./swap.ts); where several hold
 * the entry, `bundle` says which. Every error is raised while planning, before anything is written.
 */
import { OffloadKitError } from "../engine/errors.js";
import { loadBrowserCodecs } from "../compress/browser.js";
import type { Codecs } from "../compress/codecs.js";
import { bytesSource, readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { byteStringToUnicode } from "../formats/bytes.js";
import { planContainerEdit } from "./containers.js";
import { named } from "./outcome.js";
import { materialize } from "./plan.js";
import type { OutputPlan } from "./plan.js";
import type { ReplaceContext } from "./swap.js";

export type { ReplaceContext } from "./swap.js";

/**
 * The largest replacement code object read (4 GiB): a compressed bundle (v2, what clang writes by default)
 * states its total size in 32 bits, so nothing larger could be stored compressed, and device code objects
 * are far smaller (the largest entry of librocsparse0's 1.3 GB library is 14 MB). It bounds `--with`, which
 * is read whole, so `/dev/zero` or a FIFO that never ends is an error rather than a read without end.
 */
export const REPLACEMENT_LIMIT = 4 * 1024 ** 3;

export interface ReplaceOptions {
  /** The entry ID (byte string, as `offload-kit ls` prints it) whose code object is replaced. */
  readonly entry: string;
  /** The bundle to edit, counted from 0 in file order (in a linked ELF file, the fat binary's index). */
  readonly bundle?: number;
  /** The new code object. */
  readonly payload: ByteSource | Uint8Array;
  /** Re-encode a compressed bundle at this level instead of the level found in it. */
  readonly level?: number;
  readonly codecs?: Codecs;
  /** The input's name in messages (default "input"). */
  readonly name?: string;
}

export interface PlannedReplace {
  readonly container: string;
  /** The output (never the input unchanged: a replace that changes nothing is an error). */
  readonly plan: OutputPlan;
  readonly inputSize: number;
  readonly notes: readonly string[];
  /** Where the entry was replaced (`""` for the file itself, `fat binary 3`, `member k.o`). */
  readonly replaced: readonly string[];
  /** How many bundles the file holds. */
  readonly bundles: number;
}

export interface ReplaceResult extends Omit<PlannedReplace, "plan"> {
  readonly output: Uint8Array;
  readonly outputSize: number;
}

function bundleCountText(count: number): string {
  return count === 0 ? "no bundles" : count === 1 ? "1 bundle (0)" : `${count} bundles (0 to ${count - 1})`;
}

/** Plans `replace` over a source: the container it is and the output; the errors of a wrong ID or index. */
export function planReplace(source: ByteSource, options: ReplaceOptions & { readonly codecs: Codecs }): PlannedReplace {
  const payload = options.payload instanceof Uint8Array ? bytesSource(options.payload) : options.payload;
  const ctx: ReplaceContext = {
    entry: options.entry, bundle: options.bundle, payload, codecs: options.codecs, name: options.name ?? "input", notes: [], level: options.level,
    replaced: [], bundles: [],
  };
  const id = byteStringToUnicode(ctx.entry);
  if (ctx.bundle !== undefined && !(Number.isSafeInteger(ctx.bundle) && ctx.bundle >= 0)) {
    throw new OffloadKitError("BAD_OPTIONS", `${ctx.name}: the bundle index must be a whole number from 0, not ${ctx.bundle}`, { field: "--bundle" });
  }
  const edit = named(ctx.name, () => planContainerEdit(source, ctx, (c) => c.planReplace, (c, bytes, context) => c.replace(bytes, context, "")));
  const count = ctx.bundles.length;
  if (ctx.bundle !== undefined && ctx.bundle >= count) {
    throw new OffloadKitError("BUNDLE_OUT_OF_RANGE", `${ctx.name}: --bundle=${ctx.bundle} is out of range: the file holds ${bundleCountText(count)}`, { field: "--bundle" });
  }
  if (ctx.replaced.length === 0 || edit.plan === undefined) {
    const inBundle = ctx.bundle === undefined ? "" : ` bundle ${ctx.bundle}${ctx.bundles[ctx.bundle] === "" ? "" : ` (${byteStringToUnicode(ctx.bundles[ctx.bundle])})`}:`;
    throw new OffloadKitError("ENTRY_NOT_FOUND", `${ctx.name}:${inBundle} no entry '${id}'`, { field: "--entry" });
  }
  if (ctx.replaced.length > 1) {
    const places = ctx.replaced.map((where) => (where === "" ? "the file" : byteStringToUnicode(where)));
    throw new OffloadKitError("ENTRY_AMBIGUOUS",
      `${ctx.name}: '${id}' is in ${ctx.replaced.length} places (${places.join("; ")}); give --bundle=N to pick the bundle (0 to ${count - 1}, in file order)`,
      { field: "--bundle" });
  }
  return { container: edit.container, plan: edit.plan, inputSize: source.size, notes: ctx.notes, replaced: ctx.replaced, bundles: count };
}

/** `replace` with the codecs at hand (synchronous), in memory. */
export function replaceWith(bytes: Uint8Array, options: ReplaceOptions & { readonly codecs: Codecs }): ReplaceResult {
  const source = bytesSource(bytes);
  const { plan, ...rest } = planReplace(source, options);
  const output = materialize(plan, source, options.codecs);
  return { ...rest, output, outputSize: output.length };
}

export async function replace(source: ByteSource | Uint8Array, options: ReplaceOptions): Promise<ReplaceResult> {
  const codecs = options.codecs ?? (await loadBrowserCodecs());
  const bytes = source instanceof Uint8Array ? source : source.bytes ?? readExact(source, 0, source.size);
  return replaceWith(bytes, { ...options, codecs });
}
