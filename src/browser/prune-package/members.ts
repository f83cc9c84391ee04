/**
 * One member of a package, in hand, pruned as `offload-kit prune --keep` prunes it inside a package: the CLI's
 * rule for a member with device code (src/inspect/node/check.ts holdsOffloadCode: something located, or damage
 * where offload code is), its planner (src/prune/index.ts planPrune) and the output materialized here. A member
 * whose plan meets nothing editable is left as it is, as the CLI leaves it. Every page writer of a package kind
 * (./zip.ts, ./deb.ts, ./tarball.ts, ./conda.ts) edits its members through this, packages inside them too (by
 * the scope's `nested`, ./index.ts).
 */
import type { Codecs } from "../../compress/codecs.js";
import { OffloadKitError } from "../../engine/errors.js";
import { bytesSource } from "../../engine/source.js";
import { locate } from "../../inspect/locate.js";
import type { Location } from "../../inspect/locate.js";
import { planPrune } from "../../prune/index.js";
import type { EntryOutcome, PlannedPrune, Selection } from "../../prune/index.js";
import { materialize } from "../../prune/plan.js";
import { selectionText } from "../../prune/select.js";
import type { PruneReply, PrunedPart } from "../protocol.js";

/** What a plan that meets no editable content throws, in a package: the member is left as it is (as the CLI leaves it). */
const NOT_EDITABLE = new Set(["NO_OFFLOAD_CONTENT", "NO_HIP_FATBIN", "ELF_UNSUPPORTED"]);

/** The CLI's rule for a member with device code (src/inspect/node/check.ts holdsOffloadCode, isDamagedOffloadFile). */
export function holdsOffloadCode(location: Location): boolean {
  if (location.bundles.length > 0 || location.offloadBinaries.length > 0) return true;
  return location.problems.length > 0 && (location.container !== "other" || location.problems.some((p) => p.offset === 0));
}

/** One member (or, for a package inside, every member below it) as prune leaves it. */
export interface MemberEdit {
  /** `pkg!member`, as the CLI names it. */
  readonly name: string;
  /** Entries kept and seen, and the planner's notes, every level below counted. */
  readonly entries: readonly EntryOutcome[];
  readonly notes: readonly string[];
  /** The member's new bytes; undefined when prune keeps it as it is. */
  readonly output?: Uint8Array;
}

/** A package writer's answer before it is a reply: its edits too, so an outer package can count them. */
export interface PackageEdit {
  readonly reply: PruneReply;
  readonly edits: readonly MemberEdit[];
}

/** What every level of one package's prune shares. */
export interface PruneScope {
  readonly selection: Selection;
  readonly codecs: Codecs;
  /** Packages opened above this one (0: the dropped file). */
  readonly depth: number;
  /** The outermost writer's check of its edits before it writes (checkMatched); a package inside skips it, as the CLI's. */
  readonly check: (edits: readonly MemberEdit[]) => void;
  /**
   * A member that is itself a package (a wheel in a tarball), written back by its own writer (./index.ts):
   * undefined when it is none, else the edits below it (the member's new bytes when any changed).
   */
  readonly nested: (bytes: Uint8Array, name: string, scope: PruneScope) => Promise<{ readonly edit?: MemberEdit } | undefined>;
}

/**
 * `bytes` (the member `name`) pruned to the scope's selection; undefined when it holds no device code prune
 * edits. A package inside is asked for first, as the CLI asks (src/packages/node/editors.ts nestedEditor):
 * an uncompressed one holds its members' code where the locator would see it.
 */
export async function pruneMember(bytes: Uint8Array, name: string, scope: PruneScope): Promise<MemberEdit | undefined> {
  const inner = await scope.nested(bytes, name, scope);
  if (inner !== undefined) return inner.edit;
  const held = bytesSource(bytes);
  if (!holdsOffloadCode(locate(held))) return undefined;
  let planned: PlannedPrune;
  try {
    planned = planPrune(held, { selection: scope.selection, codecs: scope.codecs, name });
  } catch (e) {
    if (!(e instanceof OffloadKitError) || !NOT_EDITABLE.has(e.code)) throw e;
    return undefined;
  }
  return { name, entries: planned.entries, notes: planned.notes, ...(planned.plan !== undefined ? { output: materialize(planned.plan, held, scope.codecs) } : {}) };
}

/** As the CLI's check: a selection that matches no entry of any member is an error, nothing written. */
export function checkMatched(edits: readonly MemberEdit[], selection: Selection): void {
  const matched = new Set(edits.flatMap((e) => e.entries.flatMap((o) => o.matched)));
  if (edits.length === 0 || selection.gpus.some((g) => matched.has(g.text))) return;
  const what = edits.length === 1 ? edits[0]!.name : `any of the ${edits.length} inputs`;
  throw new OffloadKitError("SELECTION_MATCHES_NOTHING", `${selectionText(selection)} matches no entry in ${what}; nothing was written`, { field: "--keep" });
}

/** The bytes a part stands for. */
export function partSize(part: PrunedPart): number {
  return "bytes" in part ? part.bytes.length : "zeros" in part ? part.zeros : part.size;
}

/** A package's answer: its parts, and the entries kept and seen over every member edited. */
export function packageEdit(container: string, edits: readonly MemberEdit[], changed: boolean, parts: PrunedPart[], notes: readonly string[] = []): PackageEdit {
  const entries = edits.flatMap((e) => e.entries);
  const outputSize = parts.reduce((n, p) => n + partSize(p), 0);
  const reply: PruneReply = { container, changed, parts, outputSize, kept: entries.filter((o) => o.kept).length, entries: entries.length, notes: [...edits.flatMap((e) => e.notes), ...notes] };
  return { reply, edits };
}

/** Hex sha256 and md5 of `bytes` (conda's paths.json and dpkg's md5sums name files by them). */
export async function digests(bytes: Uint8Array, codecs: Codecs): Promise<{ sha256: string; md5: string }> {
  const sha = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  const md5 = codecs.md5();
  md5.update(bytes);
  const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return { sha256: hex(sha), md5: hex(md5.digest()) };
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
