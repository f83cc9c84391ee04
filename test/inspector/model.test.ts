// The inspector page's data model without a browser: what the GPU field accepts (rocminfo's ISA name, entry
// IDs, target IDs, processors) read as `--gpu` reads it, rows flattened from an `ls --json` report, filters,
// orders and verdict totals against `offload-kit check`'s checkEntry.
import { describe, expect, it } from "vitest";
import { parseGpu } from "../../src/inspect/check.js";
import { locate } from "../../src/inspect/locate.js";
import { locationJson } from "../../src/inspect/location-json.js";
import { processorOf } from "../../src/inspect/sizes.js";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { NO_FILTER, Verdicts, applyFilter, isActive, parseGpuText, rowsOf, verdictTotals } from "../../src/inspector/model.js";

describe("the GPU field", () => {
  it.each([
    ["amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack-"],
    ["hipv4-amdgcn-amd-amdhsa--gfx942", "gfx942"],
    ["amdgcn-amd-amdhsa-gfx906", "gfx906"],
    ["  gfx1030 ", "gfx1030"],
    ["gfx908:xnack+", "gfx908:xnack+"],
    ["gfx10-3-generic", "gfx10-3-generic"],
    ["sm_80", "sm_80"],
  ])("reads %s as --gpu=%s", (text, gpu) => {
    expect(parseGpuText(text)).toEqual(parseGpu(gpu));
  });

  it("is empty for nothing and refuses what --gpu refuses, with its code", () => {
    expect(parseGpuText("  ")).toBeUndefined();
    expect(() => parseGpuText("gfx90a:bogus+")).toThrow(expect.objectContaining({ code: "BAD_GPU" }));
    expect(() => parseGpuText("amdgcn-amd-amdhsa--gfx9999")).toThrow(expect.objectContaining({ code: "BAD_GPU" }));
  });
});

describe("rows and filters", () => {
  const ids = ["host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", "hipv4-amdgcn-amd-amdhsa--gfx1030", "openmp-amdgcn-amd-amdhsa--gfx906", "hip-amdgcn-amd-amdhsa-e7-gfx942"];
  const bundle = writeBinaryBundle(ids.map((id, i) => ({ id, data: new Uint8Array(10 + i * 7) })));
  const report = locationJson("lib.so", locate(bundle));
  const known = new Set(ids.map(processorOf));
  const rows = [...rowsOf(report, "lib.so", known)];

  it("flattens the report in file order, with extract's names and processorOf's processors", () => {
    expect(rows.map((r) => r.id)).toEqual(ids);
    expect(rows.map((r) => r.processor)).toEqual(ids.map(processorOf));
    expect(rows.map((r) => r.name)).toEqual(ids.map((id) => `lib.so-0-${id}`.replace(/:/g, "_")));
    expect(rows.every((r) => r.range !== undefined && r.range.size === r.size)).toBe(true);
    expect(rows.map((r) => r.offloadKind)).toEqual(["host", "hipv4", "hipv4", "hipv4", "openmp", "hip"]);
  });

  it("keeps what the filter asks for, in the order asked", () => {
    const verdicts = new Verdicts();
    expect(isActive(NO_FILTER)).toBe(false);
    expect(applyFilter(rows, { ...NO_FILTER, text: "GFX90A" }, verdicts).map((r) => r.id)).toEqual(ids.slice(1, 3));
    expect(applyFilter(rows, { ...NO_FILTER, processor: "gfx942" }, verdicts).map((r) => r.id)).toEqual([ids[5]]);
    expect(applyFilter(rows, { ...NO_FILTER, kind: "openmp" }, verdicts).map((r) => r.id)).toEqual([ids[4]]);
    expect(applyFilter(rows, { ...NO_FILTER, target: ids[3]! }, verdicts).map((r) => r.id)).toEqual([ids[3]]);
    expect(applyFilter(rows, { ...NO_FILTER, sort: "size-desc" }, verdicts).map((r) => r.size)).toEqual([...rows.map((r) => r.size)].sort((a, b) => b - a));
    const gpu = parseGpu("gfx90a:xnack-");
    const loads = applyFilter(rows, { ...NO_FILTER, gpu, loadsOnly: true }, verdicts).map((r) => r.id);
    expect(loads).toEqual([ids[0], ids[1]]);
    expect(verdictTotals(rows, gpu, verdicts)).toEqual({ loadable: 1, device: 5, bytes: rows[1]!.size });
  });
});
