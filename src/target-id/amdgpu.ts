/**
 * GPU processor names that target IDs may use: the AMDGPU tables of llvm/lib/TargetParser/TargetParser.cpp
 * (AMDGCNGPUs, R600GPUs) as spec/target-id.md §3 records them per LLVM version, and the NVPTX `sm_*` rule of
 * spec/target-id.md §2.
 *
 * Only two feature bits matter for target IDs: FEATURE_XNACK and FEATURE_SRAMECC (clang/lib/Basic/TargetID.cpp
 * getAllPossibleAMDGPUTargetIDFeatures). The support columns were measured by asking clang 14/19/22 to accept
 * `-mcpu=<name>:xnack+` / `:sramecc+` (spec), and for every name the bundler knows, re-checked here through the
 * bundlers' code-object compatibility (test/differential/target-id-native.test.ts).
 */

import type { LlvmVersion } from "../llvm/triple.js";

/** Which target-ID features a processor accepts: the xnack and sramecc bits of the AMDGPU table. */
export interface ProcessorFeatures {
  readonly xnack: boolean;
  readonly sramecc: boolean;
}

export interface AmdgpuProcessor {
  /** The canonical (gfx…) name, as `getArchNameAMDGCN` returns it. */
  readonly name: string;
  /** Legacy marketing names that resolve to `name` and share its features. */
  readonly aliases: readonly string[];
  /** Feature support per LLVM version; a missing version means the processor is unknown to it. */
  readonly support: Readonly<Partial<Record<LlvmVersion, ProcessorFeatures>>>;
}

const NONE: ProcessorFeatures = { xnack: false, sramecc: false };
const XNACK: ProcessorFeatures = { xnack: true, sramecc: false };
const BOTH: ProcessorFeatures = { xnack: true, sramecc: true };

type Column = ProcessorFeatures | undefined;

function row(name: string, aliases: readonly string[], v14: Column, v19: Column, v22: Column): AmdgpuProcessor {
  const support: Partial<Record<LlvmVersion, ProcessorFeatures>> = {};
  if (v14 !== undefined) support[14] = v14;
  if (v19 !== undefined) support[19] = v19;
  if (v22 !== undefined) support[22] = v22;
  return { name, aliases, support };
}

const __ = undefined;

/** spec/target-id.md §3, in the spec's order (generic targets first). */
export const AMDGCN_PROCESSORS: readonly AmdgpuProcessor[] = [
  row("gfx9-4-generic", [], __, __, BOTH),
  row("gfx9-generic", [], __, XNACK, XNACK),
  row("gfx10-1-generic", [], __, XNACK, XNACK),
  row("gfx10-3-generic", [], __, NONE, NONE),
  row("gfx11-generic", [], __, NONE, NONE),
  row("gfx12-generic", [], __, NONE, NONE),
  row("gfx600", ["tahiti"], NONE, NONE, NONE),
  row("gfx601", ["pitcairn", "verde"], NONE, NONE, NONE),
  row("gfx602", ["hainan", "oland"], NONE, NONE, NONE),
  row("gfx700", ["kaveri"], NONE, NONE, NONE),
  row("gfx701", ["hawaii"], NONE, NONE, NONE),
  row("gfx702", [], NONE, NONE, NONE),
  row("gfx703", ["kabini", "mullins"], NONE, NONE, NONE),
  row("gfx704", ["bonaire"], NONE, NONE, NONE),
  row("gfx705", [], NONE, NONE, NONE),
  row("gfx801", ["carrizo"], XNACK, XNACK, XNACK),
  row("gfx802", ["iceland", "tonga"], NONE, NONE, NONE),
  row("gfx803", ["fiji", "polaris10", "polaris11"], NONE, NONE, NONE),
  row("gfx805", ["tongapro"], NONE, NONE, NONE),
  row("gfx810", ["stoney"], XNACK, XNACK, XNACK),
  row("gfx900", [], XNACK, XNACK, XNACK),
  row("gfx902", [], XNACK, XNACK, XNACK),
  row("gfx904", [], XNACK, XNACK, XNACK),
  row("gfx906", [], BOTH, BOTH, BOTH),
  row("gfx908", [], BOTH, BOTH, BOTH),
  row("gfx909", [], XNACK, XNACK, XNACK),
  row("gfx90a", [], BOTH, BOTH, BOTH),
  row("gfx90c", [], XNACK, XNACK, XNACK),
  row("gfx940", [], __, BOTH, __),
  row("gfx941", [], __, BOTH, __),
  row("gfx942", [], __, BOTH, BOTH),
  row("gfx950", [], __, __, BOTH),
  row("gfx1010", [], XNACK, XNACK, XNACK),
  row("gfx1011", [], XNACK, XNACK, XNACK),
  row("gfx1012", [], XNACK, XNACK, XNACK),
  row("gfx1013", [], XNACK, XNACK, XNACK),
  row("gfx1030", [], NONE, NONE, NONE),
  row("gfx1031", [], NONE, NONE, NONE),
  row("gfx1032", [], NONE, NONE, NONE),
  row("gfx1033", [], NONE, NONE, NONE),
  row("gfx1034", [], NONE, NONE, NONE),
  row("gfx1035", [], NONE, NONE, NONE),
  row("gfx1036", [], __, NONE, NONE),
  row("gfx1100", [], __, NONE, NONE),
  row("gfx1101", [], __, NONE, NONE),
  row("gfx1102", [], __, NONE, NONE),
  row("gfx1103", [], __, NONE, NONE),
  row("gfx1150", [], __, NONE, NONE),
  row("gfx1151", [], __, NONE, NONE),
  row("gfx1152", [], __, NONE, NONE),
  row("gfx1153", [], __, __, NONE),
  row("gfx1200", [], __, NONE, NONE),
  row("gfx1201", [], __, NONE, NONE),
  row("gfx1250", [], __, __, NONE),
  row("gfx1251", [], __, __, NONE),
];

/** R600GPUs (TargetParser.cpp). The same in 14, 19 and 22; none has xnack or sramecc. */
export const R600_PROCESSORS: readonly AmdgpuProcessor[] = [
  ["r600", ["rv630", "rv635"]],
  ["r630", []],
  ["rs880", ["rs780", "rv610", "rv620"]],
  ["rv670", []],
  ["rv710", []],
  ["rv730", []],
  ["rv770", ["rv740"]],
  ["cedar", ["palm"]],
  ["cypress", ["hemlock"]],
  ["juniper", []],
  ["redwood", []],
  ["sumo", ["sumo2"]],
  ["barts", []],
  ["caicos", []],
  ["cayman", ["aruba"]],
  ["turks", []],
].map(([name, aliases]) => row(name as string, aliases as string[], NONE, NONE, NONE));

/** A processor name resolved through the table: its canonical name and feature support in one version. */
export interface ResolvedProcessor {
  readonly canonical: string;
  readonly features: ProcessorFeatures;
}

function indexTable(table: readonly AmdgpuProcessor[]): ReadonlyMap<string, AmdgpuProcessor> {
  const byName = new Map<string, AmdgpuProcessor>();
  for (const processor of table) {
    byName.set(processor.name, processor);
    for (const alias of processor.aliases) byName.set(alias, processor);
  }
  return byName;
}

const AMDGCN_BY_NAME = indexTable(AMDGCN_PROCESSORS);
const R600_BY_NAME = indexTable(R600_PROCESSORS);

function resolve(byName: ReadonlyMap<string, AmdgpuProcessor>, name: string, version: LlvmVersion): ResolvedProcessor | undefined {
  const processor = byName.get(name);
  const features = processor?.support[version];
  return processor === undefined || features === undefined ? undefined : { canonical: processor.name, features };
}

/** `parseArchAMDGCN` + `getArchAttrAMDGCN`: canonical name and features, or undefined (GK_NONE). */
export function resolveAmdgcnProcessor(name: string, version: LlvmVersion = 19): ResolvedProcessor | undefined {
  return resolve(AMDGCN_BY_NAME, name, version);
}

/** `parseArchR600` + `getArchAttrR600`. */
export function resolveR600Processor(name: string, version: LlvmVersion = 19): ResolvedProcessor | undefined {
  return resolve(R600_BY_NAME, name, version);
}

/** The target-ID features a processor allows, alphabetically (`getAllPossibleAMDGPUTargetIDFeatures`). */
export function listProcessorFeatures(features: ProcessorFeatures): string[] {
  const names: string[] = [];
  if (features.sramecc) names.push("sramecc");
  if (features.xnack) names.push("xnack");
  return names;
}

/**
 * Whether `name` has the shape of a CUDA SM architecture (`sm_70`, `sm_90a`, `sm_100f`). NVPTX target IDs use the
 * processor verbatim and allow no features; whether the bundler keeps one in an entry ID depends on the
 * OffloadArch list (offload-arch.ts), not on this shape.
 */
export function isNvptxSmName(name: string): boolean {
  return /^sm_\d+[af]?$/.test(name);
}
