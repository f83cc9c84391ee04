/**
 * clang's offload-arch names as the bundler sees them: `StringToOffloadArch` (clang/lib/Basic/Cuda.cpp in 14 and 19,
 * where it was `StringToCudaArch` in 14; clang/lib/Basic/OffloadArch.cpp in 22). The bundler keeps a target ID in a
 * bundle entry ID only when its processor is one of these names (spec/bundler.md §3.1).
 *
 * The lists are the ArchNames tables of each release, checked name by name against clang-offload-bundler-19/-22 by
 * bundling `hip-amdgcn-amd-amdhsa--<name>` and reading the stored ID back (test/differential/target-id-native.test.ts;
 * 14 stores targets verbatim, so its list only matters for archive matching and comes from its source).
 *
 * Notes, all measured:
 * - The table's first row is `UNUSED` with the empty name, so "" is a known arch. 19 relies on that: a target whose
 *   last '-' field is empty keeps the whole target as its "target ID". 22 tests for "" separately.
 * - No legacy aliases (tahiti, fiji, …), no `generic-hsa`, no R600 names.
 * - 19 can never see a name containing '-' (it splits at the last '-'), so its gfx*-generic rows are unobservable
 *   there; `gfx12-5-generic` in 19 is "known" only because its last field, `generic`, is.
 * - 22 drops gfx940/gfx941 and adds gfx950, gfx9-4-generic, gfx1153, gfx1250, gfx1251, sm_88 and the Blackwell
 *   sm_1xx names (not the `…f` ones), plus graniterapids and bmg_g21.
 */

import type { LlvmVersion } from "../llvm/triple.js";

function smNames(...numbers: string[]): string[] {
  return numbers.map((number) => `sm_${number}`);
}

function gfxNames(...numbers: string[]): string[] {
  return numbers.map((number) => `gfx${number}`);
}

const SM_14 = smNames("20", "21", "30", "32", "35", "37", "50", "52", "53", "60", "61", "62", "70", "72", "75", "80", "86");
const SM_19 = [...SM_14, ...smNames("87", "89", "90", "90a")];
const SM_22 = [
  ...SM_19,
  ...smNames("88", "100", "100a", "101", "101a", "103", "103a", "110", "110a", "120", "120a", "121", "121a"),
];

const GFX_14 = gfxNames("600", "601", "602", "700", "701", "702", "703", "704", "705", "801", "802", "803", "805", "810",
  "900", "902", "904", "906", "908", "909", "90a", "90c", "1010", "1011", "1012", "1013",
  "1030", "1031", "1032", "1033", "1034", "1035");

const GFX_19 = [
  ...GFX_14,
  ...gfxNames("940", "941", "942", "1036", "1100", "1101", "1102", "1103", "1150", "1151", "1152", "1200", "1201"),
  "gfx9-generic", "gfx10-1-generic", "gfx10-3-generic", "gfx11-generic", "gfx12-generic",
];

const GFX_22 = [
  ...GFX_19.filter((name) => name !== "gfx940" && name !== "gfx941"),
  ...gfxNames("950", "1153", "1250", "1251"),
  "gfx9-4-generic",
];

/** The `ArchName` column of each release's table, the UNUSED row ("") included. */
export const OFFLOAD_ARCH_NAMES: Readonly<Record<LlvmVersion, ReadonlySet<string>>> = {
  14: new Set(["", ...SM_14, ...GFX_14]),
  19: new Set(["", ...SM_19, ...GFX_19, "amdgcnspirv", "generic"]),
  22: new Set(["", ...SM_22, ...GFX_22, "amdgcnspirv", "graniterapids", "bmg_g21", "generic"]),
};

/** `StringToOffloadArch(name) != UNKNOWN` for that release. Case-sensitive; "" is known (the UNUSED row). */
export function isKnownOffloadArch(name: string, version: LlvmVersion = 19): boolean {
  return OFFLOAD_ARCH_NAMES[version].has(name);
}
