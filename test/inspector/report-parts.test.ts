// The worker's inspect result in parts (src/browser/report-parts.ts): no message carries more than its limit
// of items, and the parts put back together are the result itself, key order included (what the page's
// "copy/save report" prints, as `offload-kit ls --json` does).
import { describe, expect, it } from "vitest";
import { inspectSource } from "../../src/browser/inspect.js";
import type { Inspection } from "../../src/browser/inspect.js";
import { PART_ITEMS, ResultAssembler, partItems, splitResult } from "../../src/browser/report-parts.js";
import { writeBinaryBundle } from "../../src/formats/bundle.js";

/** As the messages travel: each part and the head structured-cloned, then assembled. */
function roundTrip<T extends Inspection>(result: T, limit?: number): { joined: T; parts: number; largest: number } {
  const { head, parts } = splitResult(result, limit);
  const assembler = new ResultAssembler();
  for (const part of parts) assembler.add(structuredClone(part));
  return { joined: assembler.finish(structuredClone(head)), parts: parts.length, largest: assembler.largestPart };
}

/** A result of bundles with these entry counts (only the fields the split looks at need be real). */
function synthetic(counts: number[]): Inspection {
  let offset = 0;
  const bundles = counts.map((n, index) => ({
    index, format: "binary" as const, offset: (offset += 100), size: 100 + n,
    entries: Array.from({ length: n }, (_, i) => ({ id: `hipv4-amdgcn-amd-amdhsa--gfx90${index % 10}-${i}`, offset: offset + i, size: 1 })),
  }));
  const report = { path: "x", size: offset + 1000, container: "raw", searched: [], bundles, offloadBinaries: [], problems: [] };
  const sizes = {
    path: "x", size: report.size, entries: counts.reduce((a, b) => a + b, 0), bytes: 0,
    targets: Array.from({ length: 4321 }, (_, i) => ({ id: `t${i}`, entries: 1, bytes: i })),
    processors: [{ id: "gfx900", entries: 1, bytes: 1 }],
    bundles: bundles.map((b) => ({ index: b.index, format: b.format, offset: b.offset, entries: b.entries.length, bytes: b.entries.length })),
    images: 0,
  };
  return { report, sizes } as unknown as Inspection;
}

describe("the inspect result in parts", () => {
  it("splits a real 5,001-entry bundle's report and sizes into parts of at most PART_ITEMS, and joins them back exactly", () => {
    const bytes = writeBinaryBundle(Array.from({ length: 5001 }, (_, i) => ({ id: i === 0 ? "host-x86_64-unknown-linux-gnu" : `hipv4-amdgcn-amd-amdhsa--gfx90${i % 10}-e${i}`, data: new Uint8Array(8 + (i % 5)) })));
    const result = { ...inspectSource(bytes, "many.hipfb"), bytesRead: bytes.length, engine: "ts" };
    const before = JSON.stringify(result);
    const { joined, parts, largest } = roundTrip(result);
    expect(JSON.stringify(joined)).toBe(before);
    expect(result.report.bundles[0]!.entries).toHaveLength(5001);
    // 5,001 entries and their bundle: 3 parts; 5,001 target rows: 3 more; the one bundle's size row: 1.
    expect(parts).toBe(7);
    expect(largest).toBe(PART_ITEMS);
    // The split leaves the result alone.
    expect(JSON.stringify(result)).toBe(before);
  });

  it.each([2000, 7, 1])("splits bundles of many sizes at %i items a part, never more, and joins them back", (limit) => {
    const result = synthetic([0, 3, 1999, 2000, 1, 4500, 2, 0, 0, 1]);
    const before = JSON.stringify(result);
    const { head, parts } = splitResult(result, limit);
    for (const part of parts) expect(partItems(part)).toBeLessThanOrEqual(limit);
    expect(head.report.bundles).toEqual([]);
    expect(head.sizes.targets).toEqual([]);
    // Every item travels once: bundles and entries, target rows, bundle size rows.
    const total = parts.reduce((n, p) => n + partItems(p), 0);
    expect(total).toBe(10 + 8506 + 4321 + 10);
    expect(JSON.stringify(roundTrip(result, limit).joined)).toBe(before);
  });

  it("refuses a limit below one item", () => {
    expect(() => splitResult(synthetic([1]), 0)).toThrow(RangeError);
  });
});
