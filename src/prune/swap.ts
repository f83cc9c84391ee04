/**
 * What `replace` decides, and the rules every container applies to each bundle it edits (./outcome.ts is
 * prune's twin): bundles are numbered in file order as the containers meet them (a linked ELF file's fat
 * binaries, the compressed bundles of a CCOB file, an archive's members' bundles, the binaries of a run of
 * offload binaries; a plain bundle file or a fat object is one), `--bundle=N` picks the N-th, and every place
 * where the entry was swapped is recorded so that the caller can refuse none or more than one.
 */
import type { Codecs } from "../compress/codecs.js";
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";

export interface ReplaceContext {
  /** The entry ID (byte string) whose code object is replaced. */
  readonly entry: string;
  /** The index of the bundle to edit, in file order (needed when several hold the entry). */
  readonly bundle?: number;
  /** The new code object. */
  readonly payload: ByteSource;
  readonly codecs: Codecs;
  readonly name: string;
  readonly notes: string[];
  /** Force this compression level when re-encoding a CCOB (default: the detected one). */
  readonly level?: number;
  /** Where the entry was replaced (filled in as bundles are edited). */
  readonly replaced: string[];
  /** Every bundle met, in file order (filled in by `pickBundle`). */
  readonly bundles: string[];
}

/** Numbers the bundle at `where` and says whether it is one to edit: the one `--bundle` names, or any without it. */
export function pickBundle(ctx: ReplaceContext, where: string): boolean {
  ctx.bundles.push(where);
  return ctx.bundle === undefined || ctx.bundle === ctx.bundles.length - 1;
}

/**
 * Whether an entry is the one to replace; records the place when it is. Every container asks this of each
 * entry of a picked bundle, so an ID found twice is seen twice.
 */
export function isReplaced(ctx: ReplaceContext, id: string, where: string): boolean {
  if (id !== ctx.entry) return false;
  ctx.replaced.push(where);
  return true;
}

/** The new code object, in memory (containers that are rewritten whole: text bundles, objects, archives). */
export function payloadBytes(ctx: ReplaceContext): Uint8Array {
  return ctx.payload.bytes ?? readExact(ctx.payload, 0, ctx.payload.size);
}
