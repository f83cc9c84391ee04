/**
 * The processor tables: src/target-id/amdgpu.ts against spec/target-id.md §3 and src/target-id/offload-arch.ts
 * against spec/bundler.md §3.1 (both measured with the native tools).
 */

import { describe, expect, it } from "vitest";
import {
  AMDGCN_PROCESSORS,
  OFFLOAD_ARCH_NAMES,
  isKnownOffloadArch,
  isNvptxSmName,
  listProcessorFeatures,
  resolveAmdgcnProcessor,
  resolveR600Processor,
  type LlvmVersion,
} from "../../src/target-id/index.js";

const VERSIONS: readonly LlvmVersion[] = [14, 19, 22];

/** spec/target-id.md §3, row by row: name, aliases, then the 14/19/22 columns ("—" unknown, "none", features). */
const SPEC_TABLE = `
gfx9-4-generic |  | — | — | xnack sramecc
gfx9-generic |  | — | xnack | xnack
gfx10-1-generic |  | — | xnack | xnack
gfx10-3-generic |  | — | none | none
gfx11-generic |  | — | none | none
gfx12-generic |  | — | none | none
gfx600 | tahiti | none | none | none
gfx601 | pitcairn, verde | none | none | none
gfx602 | hainan, oland | none | none | none
gfx700 | kaveri | none | none | none
gfx701 | hawaii | none | none | none
gfx702 |  | none | none | none
gfx703 | kabini, mullins | none | none | none
gfx704 | bonaire | none | none | none
gfx705 |  | none | none | none
gfx801 | carrizo | xnack | xnack | xnack
gfx802 | iceland, tonga | none | none | none
gfx803 | fiji, polaris10, polaris11 | none | none | none
gfx805 | tongapro | none | none | none
gfx810 | stoney | xnack | xnack | xnack
gfx900 |  | xnack | xnack | xnack
gfx902 |  | xnack | xnack | xnack
gfx904 |  | xnack | xnack | xnack
gfx906 |  | xnack sramecc | xnack sramecc | xnack sramecc
gfx908 |  | xnack sramecc | xnack sramecc | xnack sramecc
gfx909 |  | xnack | xnack | xnack
gfx90a |  | xnack sramecc | xnack sramecc | xnack sramecc
gfx90c |  | xnack | xnack | xnack
gfx940 |  | — | xnack sramecc | —
gfx941 |  | — | xnack sramecc | —
gfx942 |  | — | xnack sramecc | xnack sramecc
gfx950 |  | — | — | xnack sramecc
gfx1010 |  | xnack | xnack | xnack
gfx1011 |  | xnack | xnack | xnack
gfx1012 |  | xnack | xnack | xnack
gfx1013 |  | xnack | xnack | xnack
gfx1030 |  | none | none | none
gfx1031 |  | none | none | none
gfx1032 |  | none | none | none
gfx1033 |  | none | none | none
gfx1034 |  | none | none | none
gfx1035 |  | none | none | none
gfx1036 |  | — | none | none
gfx1100 |  | — | none | none
gfx1101 |  | — | none | none
gfx1102 |  | — | none | none
gfx1103 |  | — | none | none
gfx1150 |  | — | none | none
gfx1151 |  | — | none | none
gfx1152 |  | — | none | none
gfx1153 |  | — | — | none
gfx1200 |  | — | none | none
gfx1201 |  | — | none | none
gfx1250 |  | — | — | none
gfx1251 |  | — | — | none
`;

const SPEC_ROWS = SPEC_TABLE.trim().split("\n").map((line) => {
  const [name, aliases, ...columns] = line.split("|").map((cell) => cell.trim());
  return {
    name: name!,
    aliases: aliases === "" ? [] : aliases!.split(", "),
    columns: columns.map((cell) => (cell === "—" ? undefined : cell === "none" ? [] : cell.split(" ").sort())),
  };
});

describe("AMDGCN processor table", () => {
  it("has exactly the spec's rows", () => {
    expect(AMDGCN_PROCESSORS.map((processor) => processor.name)).toEqual(SPEC_ROWS.map((row) => row.name));
  });

  it.each(SPEC_ROWS)("$name: aliases and features per version", ({ name, aliases, columns }) => {
    VERSIONS.forEach((version, index) => {
      for (const spelled of [name, ...aliases]) {
        const resolved = resolveAmdgcnProcessor(spelled, version);
        const expected = columns[index];
        if (expected === undefined) expect(resolved, `${spelled} in ${version}`).toBeUndefined();
        else expect({ canonical: resolved?.canonical, features: resolved && listProcessorFeatures(resolved.features) })
          .toEqual({ canonical: name, features: expected });
      }
    });
  });

  it("knows no generic or R600 names", () => {
    for (const name of ["generic", "generic-hsa", "cayman", "r600", "GFX906", ""])
      expect(resolveAmdgcnProcessor(name), name).toBeUndefined();
  });
});

describe("R600 processor table", () => {
  it.each([
    ["r600", "r600"], ["rv630", "r600"], ["rv635", "r600"], ["r630", "r630"], ["rs780", "rs880"], ["rv610", "rs880"],
    ["rv620", "rs880"], ["rv670", "rv670"], ["rv710", "rv710"], ["rv730", "rv730"], ["rv740", "rv770"],
    ["cedar", "cedar"], ["palm", "cedar"], ["cypress", "cypress"], ["hemlock", "cypress"], ["juniper", "juniper"],
    ["redwood", "redwood"], ["sumo", "sumo"], ["sumo2", "sumo"], ["barts", "barts"], ["caicos", "caicos"],
    ["cayman", "cayman"], ["aruba", "cayman"], ["turks", "turks"],
  ])("%s → %s, no target-ID features", (name, canonical) => {
    const resolved = resolveR600Processor(name);
    expect(resolved?.canonical).toBe(canonical);
    expect(listProcessorFeatures(resolved!.features)).toEqual([]);
  });

  it("does not know gfx names", () => {
    expect(resolveR600Processor("gfx906")).toBeUndefined();
  });
});

describe("offload-arch names", () => {
  it("counts the empty string as known (the UNUSED row)", () => {
    for (const version of VERSIONS) expect(isKnownOffloadArch("", version)).toBe(true);
  });

  it("knows no legacy aliases, generic-hsa or R600 names", () => {
    const aliases = AMDGCN_PROCESSORS.flatMap((processor) => processor.aliases);
    for (const version of VERSIONS)
      for (const name of [...aliases, "generic-hsa", "cayman", "r600"])
        expect(isKnownOffloadArch(name, version), `${name} in ${version}`).toBe(false);
  });

  it.each([
    ["gfx940", [false, true, false]], ["gfx941", [false, true, false]], ["gfx942", [false, true, true]],
    ["gfx950", [false, false, true]], ["gfx1036", [false, true, true]], ["gfx1153", [false, false, true]],
    ["gfx1250", [false, false, true]], ["gfx1251", [false, false, true]], ["gfx9-4-generic", [false, false, true]],
    ["gfx9-generic", [false, true, true]], ["sm_20", [true, true, true]], ["sm_86", [true, true, true]],
    ["sm_87", [false, true, true]], ["sm_90a", [false, true, true]], ["sm_88", [false, false, true]],
    ["sm_100", [false, false, true]], ["sm_120", [false, false, true]], ["sm_110a", [false, false, true]],
    ["sm_100f", [false, false, false]], ["sm_999", [false, false, false]], ["generic", [false, true, true]],
    ["amdgcnspirv", [false, true, true]], ["graniterapids", [false, false, true]], ["bmg_g21", [false, false, true]],
    ["pvc", [false, false, false]], ["Generic", [false, false, false]],
  ] as const)("%s known in 14/19/22: %j", (name, known) => {
    expect(VERSIONS.map((version) => isKnownOffloadArch(name, version))).toEqual(known);
  });

  it("lists exactly the gfx processors that the same release's processor table knows", () => {
    for (const version of VERSIONS) {
      const tableNames = AMDGCN_PROCESSORS.filter((processor) => processor.support[version] !== undefined).map((processor) => processor.name);
      const archNames = [...OFFLOAD_ARCH_NAMES[version]].filter((name) => name.startsWith("gfx"));
      expect(archNames.sort()).toEqual(tableNames.sort());
    }
  });
});

describe("NVPTX names", () => {
  it.each([["sm_70", true], ["sm_90a", true], ["sm_100f", true], ["sm_", false], ["sm_70:xnack+", false], ["gfx906", false]] as const)(
    "%s is an SM name: %s", (name, expected) => {
      expect(isNvptxSmName(name)).toBe(expected);
    });
});
