/**
 * What pruning decided, entry by entry, and the one rule every container applies to each bundle it
 * prunes: a bundle that had device entries and would keep none is an error naming it (the HIP runtime
 * would fail every launch with hipErrorNoBinaryForGpu), unless the caller allows empty bundles.
 */
import { OffloadKitError } from "../engine/errors.js";
import type { Codecs } from "../compress/codecs.js";
import { byteStringToUnicode } from "../formats/bytes.js";
import { fatBinaryHasCode } from "../inspect/check.js";
import { decideEntry, selectionText } from "./select.js";
import type { Selection } from "./select.js";

export interface EntryOutcome {
  /** Where the entry's bundle is inside the file (`""` for the file itself, `member lib.o`, `compressed bundle 1`). */
  readonly where: string;
  /** Entry ID (byte string). */
  readonly id: string;
  /** Payload bytes. */
  readonly size: number;
  readonly kept: boolean;
  readonly host: boolean;
  /** The listed GPUs (as given) whose devices would load it. */
  readonly matched: readonly string[];
}

export interface PruneContext {
  readonly selection: Selection;
  readonly allowEmpty: boolean;
  readonly codecs: Codecs;
  /** The input's name, for messages. */
  readonly name: string;
  /** Where each entry went (filled in as bundles are pruned). */
  readonly outcomes: EntryOutcome[];
  /** Remarks for the report (an assumed compression level, a layout LLVM would not write). */
  readonly notes: string[];
  /** Force this compression level when re-encoding compressed bundles (default: the detected one). */
  readonly level?: number;
  /** NVIDIA fatbins: drop PTX too (./nv-linked-elf.ts). */
  readonly dropPtx?: boolean;
}

/** Where a bundle is, for messages: the file, or the file and the place inside it. */
export function placeText(name: string, where: string): string {
  return where === "" ? name : `${name} (${byteStringToUnicode(where)})`;
}

/** The entries of one bundle that stay, in their order; records every decision in `ctx.outcomes`. */
export function selectEntries<T extends { readonly id: string; readonly size: number }>(entries: readonly T[], ctx: PruneContext, where: string): T[] {
  const kept: T[] = [];
  let devices = 0;
  let keptDevices = 0;
  for (const entry of entries) {
    const decision = decideEntry(ctx.selection, entry.id);
    ctx.outcomes.push({ where, id: entry.id, size: entry.size, kept: decision.keep, host: decision.host, matched: decision.matched });
    if (!decision.host) devices++;
    if (decision.keep) {
      kept.push(entry);
      if (!decision.host) keptDevices++;
    }
  }
  if (!fatBinaryHasCode(devices, keptDevices) && !ctx.allowEmpty) {
    const ids = entries.filter((e) => !decideEntry(ctx.selection, e.id).host).map((e) => byteStringToUnicode(e.id));
    throw new OffloadKitError("PRUNE_EMPTY",
      `${placeText(ctx.name, where)}: ${selectionText(ctx.selection)} keeps none of the bundle's device entries (${ids.join(", ")}); ` +
      "a HIP runtime would then fail on every GPU with hipErrorNoBinaryForGpu (--allow-empty writes it anyway)", { field: "entries" });
  }
  return kept;
}

/** Every error names the input first (`lib.so: ...`), whichever layer raised it. */
export function named<T>(name: string, run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (e instanceof OffloadKitError && !e.message.startsWith(`${name}:`) && !e.message.startsWith(`${name} (`)) {
      throw new OffloadKitError(e.code, `${name}: ${e.message}`, { offset: e.offset, field: e.field, cause: e });
    }
    throw e;
  }
}
