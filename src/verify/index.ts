/**
 * The output checker: every file offload-kit writes is checked before it replaces anything, by code that
 * shares nothing with the code that laid it out. A linked ELF file is checked as the kernel, ld.so and the
 * HIP runtime would take it (./elf-load.ts, ./fat-binaries.ts); any other container (bundle, CCOB, archive,
 * offload binaries, fat object) is read again by the locator (src/inspect/locate.ts), which must find no
 * problem. After `prune`, the entries found must be exactly the entries the plan kept.
 *
 * An input that already fails a check (files from other tools can be odd) does not make its output fail:
 * only findings the input does not have count (./findings.ts `newFindings`).
 *
 * Browser-safe: decompression is handed in (./node.ts supplies Node's codecs).
 */
import { OffloadKitError } from "../engine/errors.js";
import type { ByteSource } from "../engine/source.js";
import { imageTargetId, locate } from "../inspect/locate.js";
import type { PlannedEdit } from "../prune/index.js";
import type { EntryOutcome } from "../prune/outcome.js";
import { ET_DYN, ET_EXEC, checkElfLoad } from "./elf-load.js";
import { checkFatBinaries } from "./fat-binaries.js";
import { checkFatbinRelocations } from "./fatbin-relocations.js";
import type { CheckedFatBinary } from "./fat-binaries.js";
import { hex, newFindings } from "./findings.js";
import { checkNvFatBinaries } from "./nv-fat-binaries.js";
import type { Finding } from "./findings.js";

export { checkElfLoad } from "./elf-load.js";
export { checkFatBinaries } from "./fat-binaries.js";
export { checkNvFatBinaries } from "./nv-fat-binaries.js";
export type { CheckedFatBinary, FatBinaryCheckOptions } from "./fat-binaries.js";
export { findingKey, newFindings } from "./findings.js";
export type { Finding } from "./findings.js";

export interface VerifyOptions {
  /**
   * What the file must hold after a prune: for a linked ELF file, the entry IDs of each fat binary by index;
   * for any other container, every entry ID in the file (`all`). Any order; repeated IDs counted.
   */
  readonly expected?: Expectation;
  /** Turns a CCOB into the plain bundle it holds (a linked file's fat binaries, when entries are compared). */
  readonly decompress?: (ccob: Uint8Array) => Uint8Array;
  /** How the locator opens compressed bundles and offload binaries (other containers). */
  readonly locate?: (source: ByteSource) => ReturnType<typeof locate>;
}

export interface Expectation {
  readonly fatBinaries?: ReadonlyMap<number, readonly string[]>;
  readonly all?: readonly string[];
}

export type VerifyReport =
  | { readonly kind: "linked ELF"; readonly findings: readonly Finding[]; readonly wrappers: number; readonly fatBinaries: readonly CheckedFatBinary[] }
  | { readonly kind: "ELF" | "other"; readonly findings: readonly Finding[]; readonly bundles: number; readonly entries: readonly string[] };

/** Locator problems that say a thing was not read (another vendor's format), not that anything is damaged. */
const FOREIGN = new Set(["NV_FATBIN"]);

function sortedText(ids: readonly string[]): string {
  return [...ids].sort().join(", ") || "none";
}

/** Every check that applies to `source` (see the module comment); never throws for bad bytes, only for failed reads. */
export function verifySource(source: ByteSource, options: VerifyOptions = {}): VerifyReport {
  const elf = checkElfLoad(source);
  if (elf.kind === "checked" && (elf.view.type === ET_EXEC || elf.view.type === ET_DYN)) {
    const fat = checkFatBinaries(elf.view, { expected: options.expected?.fatBinaries, decompress: options.decompress });
    const nv = checkNvFatBinaries(elf.view, { expected: options.expected?.fatBinaries });
    const findings = [...elf.findings, ...fat.findings, ...nv.findings];
    // A prune of images outside .hip_fatbin (an allocated .llvm.offloading): the locator must find exactly the kept ones.
    if (options.expected?.all !== undefined) findings.push(...entryFindings(source, options, options.expected.all).findings);
    return { kind: "linked ELF", findings, wrappers: fat.wrappers + nv.wrappers, fatBinaries: [...fat.fatBinaries, ...nv.fatBinaries] };
  }
  const found = entryFindings(source, options, options.expected?.all);
  const findings: Finding[] = [...(elf.kind === "checked" ? elf.findings : []), ...found.findings, ...checkFatbinRelocations(source)];
  return { kind: elf.kind === "checked" ? "ELF" : "other", findings, bundles: found.bundles, entries: found.entries };
}

/** The locator's problems with `source`, and (given `all`) whether it holds exactly those entry IDs. */
function entryFindings(source: ByteSource, options: VerifyOptions, all: readonly string[] | undefined): { findings: Finding[]; bundles: number; entries: string[] } {
  const findings: Finding[] = [];
  const location = (options.locate ?? ((s: ByteSource) => locate(s)))(source);
  for (const p of location.problems) {
    if (FOREIGN.has(p.code)) continue;
    findings.push({ code: p.code, message: p.message, offset: p.offset, field: "bundle", subject: `container ${p.code}` });
  }
  const entries = [
    ...location.bundles.flatMap((b) => b.entries.map((e) => e.id)),
    ...location.offloadBinaries.flatMap((run) => run.images.map((image) => imageTargetId(image))),
  ];
  if (all !== undefined && sortedText(all) !== sortedText(entries)) {
    findings.push({
      code: "ENTRIES_DIFFER", subject: "entries", field: "entries", offset: 0,
      message: `the file holds ${entries.length} entries (${sortedText(entries)}); the plan kept ${all.length} (${sortedText(all)})`,
    });
  }
  return { findings, bundles: location.bundles.length + location.offloadBinaries.length, entries };
}

/** What a prune plan says its output holds: kept entry IDs per fat binary (linked ELF) and in all. */
export function plannedEntries(planned: PlannedEdit): Expectation | undefined {
  if (!("entries" in planned)) return undefined;
  const outcomes = (planned as PlannedEdit & { readonly entries: readonly EntryOutcome[] }).entries;
  const kept = outcomes.filter((o) => o.kept);
  const all = kept.map((o) => o.id);
  if (planned.container !== "linked ELF") return { all };
  const fatBinaries = new Map<number, string[]>();
  for (const o of outcomes) {
    const match = /^fat binary (\d+)(,|$)/.exec(o.where);
    if (match === null) return { all };
    const index = Number(match[1]);
    if (!fatBinaries.has(index)) fatBinaries.set(index, []);
    if (o.kept) fatBinaries.get(index)!.push(o.id);
  }
  return { fatBinaries };
}

/**
 * Throws OUTPUT_VERIFY_FAILED when `output` (what `planned` made of `input`) has a finding `input` does not
 * have, or (after a prune) does not hold exactly the kept entries. `name` names the input in the message.
 */
export function verifyOutput(output: ByteSource, input: ByteSource, planned: PlannedEdit, name: string, options: Omit<VerifyOptions, "expected"> = {}): void {
  const report = verifySource(output, { ...options, expected: plannedEntries(planned) });
  if (report.findings.length === 0) return;
  // Only now is the input checked: the common case (a clean output) reads nothing of it.
  const before = verifySource(input, options);
  const fresh = newFindings(report.findings, before.findings);
  if (fresh.length === 0) return;
  const first = fresh[0];
  const more = fresh.length > 1 ? ` (and ${fresh.length - 1} more: ${fresh.slice(1, 4).map((f) => f.code).join(", ")}${fresh.length > 4 ? ", ..." : ""})` : "";
  throw new OffloadKitError(
    "OUTPUT_VERIFY_FAILED",
    `${name}: internal error: the ${planned.container} output failed verification, so nothing was written: ${first.message} ` +
      `[${first.code}, ${first.field} at offset ${hex(first.offset)}]${more} (please report it)`,
    { offset: first.offset, field: first.field },
  );
}
