/**
 * The worker's inspect result, sent in parts: its long lists (the report's bundles and their entries, the
 * sizes' target and bundle rows) go in slices of at most PART_ITEMS items, each its own message, then the
 * rest of the result with those lists empty. A message is deserialised on the main thread as one task:
 * 100,000 entries in one message blocked the page for 115–960 ms (measured), a slice of 2,000 takes a few.
 * The client (src/browser/client.ts) appends each slice as it arrives, and the result it hands back is the
 * one the worker made, key order included (what `ls --json` prints is built from it).
 */
import type { BundleJson, EntryJson } from "../inspect/location-json.js";
import type { BundleSizeRow, SizeRow } from "../inspect/sizes.js";
import type { Inspection } from "./inspect.js";

/** Items (bundles, entries, size rows) one message carries at most. */
export const PART_ITEMS = 2000;

export type ReportPart =
  /** Bundles of the report, in order; the last one's entries may continue in `entries` parts. */
  | { readonly bundles: readonly BundleJson[] }
  /** More entries of the last bundle sent. */
  | { readonly entries: readonly EntryJson[] }
  | { readonly targets: readonly SizeRow[] }
  | { readonly sizeBundles: readonly BundleSizeRow[] };

/** How many items a part carries (a bundle counts one, plus its entries carried with it). */
export function partItems(part: ReportPart): number {
  if ("bundles" in part) return part.bundles.reduce((n, b) => n + 1 + b.entries.length, 0);
  if ("entries" in part) return part.entries.length;
  if ("targets" in part) return part.targets.length;
  return part.sizeBundles.length;
}

function slices<T>(items: readonly T[], limit: number): T[][] {
  const out: T[][] = [];
  for (let at = 0; at < items.length; at += limit) out.push(items.slice(at, at + limit));
  return out;
}

/** `result` as parts of at most `limit` items each, and the rest of it (`head`, its long lists empty). */
export function splitResult<T extends Inspection>(result: T, limit = PART_ITEMS): { head: T; parts: ReportPart[] } {
  if (!(limit >= 1)) throw new RangeError(`a part carries at least one item (${limit})`);
  const parts: ReportPart[] = [];
  let batch: BundleJson[] = [];
  let items = 0;
  const flush = () => {
    if (batch.length > 0) parts.push({ bundles: batch });
    batch = [];
    items = 0;
  };
  for (const bundle of result.report.bundles) {
    if (items + 1 + bundle.entries.length <= limit) {
      batch.push(bundle);
      items += 1 + bundle.entries.length;
      continue;
    }
    // Too many entries for this message: the bundle begins here with what room is left, the rest follow.
    if (items + 1 > limit) flush();
    const room = limit - items - 1;
    batch.push({ ...bundle, entries: bundle.entries.slice(0, room) });
    flush();
    for (const entries of slices(bundle.entries.slice(room), limit)) parts.push({ entries });
  }
  flush();
  for (const targets of slices(result.sizes.targets, limit)) parts.push({ targets });
  for (const sizeBundles of slices(result.sizes.bundles, limit)) parts.push({ sizeBundles });
  // Spread, then the lists replaced where they stand: the head keeps the result's key order.
  const head = { ...result, report: { ...result.report, bundles: [] }, sizes: { ...result.sizes, targets: [], bundles: [] } };
  return { head, parts };
}

/** Puts a split result back together, a part at a time as the messages arrive. */
export class ResultAssembler {
  private readonly bundles: BundleJson[] = [];
  private readonly targets: SizeRow[] = [];
  private readonly sizeBundles: BundleSizeRow[] = [];
  /** Parts received, and the most items one carried. */
  parts = 0;
  largestPart = 0;

  add(part: ReportPart): void {
    this.parts++;
    this.largestPart = Math.max(this.largestPart, partItems(part));
    if ("bundles" in part) for (const b of part.bundles) this.bundles.push(b);
    else if ("entries" in part) {
      const last = this.bundles.at(-1);
      if (last === undefined) throw new Error("entries arrived before their bundle");
      const entries = last.entries as EntryJson[];
      for (const e of part.entries) entries.push(e);
    } else if ("targets" in part) for (const t of part.targets) this.targets.push(t);
    else for (const b of part.sizeBundles) this.sizeBundles.push(b);
  }

  /** The whole result: `head` (as splitResult made it, received) with the parts' lists in their places. */
  finish<T extends Inspection>(head: T): T {
    // Assigned in place (the head arrives as a fresh clone): the keys keep the order the worker gave them.
    (head.report as { bundles: readonly BundleJson[] }).bundles = this.bundles;
    const sizes = head.sizes as { targets: readonly SizeRow[]; bundles: readonly BundleSizeRow[] };
    sizes.targets = this.targets;
    sizes.bundles = this.sizeBundles;
    return head;
  }
}
