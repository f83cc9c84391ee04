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

function processorRow(name: string, aliases: readonly string[], v14: Column, v19: Column, v22: Column): AmdgpuProcessor {
  const support: Partial<Record<LlvmVersion, ProcessorFeatures>> = {};
  if (v14 !== undefined) support[14] = v14;
  if (v19 !== undefined) support[19] = v19;
  if (v22 !== undefined) support[22] = v22;
  return { name, aliases, support };
}

const UNKNOWN = undefined;

/** spec/target-id.md §3, in the spec's order (generic targets first). */
export const AMDGCN_PROCESSORS: readonly AmdgpuProcessor[] = [
  processorRow("gfx9-4-generic", [], UNKNOWN, UNKNOWN, BOTH),
  processorRow("gfx9-generic", [], UNKNOWN, XNACK, XNACK),
  processorRow("gfx10-1-generic", [], UNKNOWN, XNACK, XNACK),
  processorRow("gfx10-3-generic", [], UNKNOWN, NONE, NONE),
  processorRow("gfx11-generic", [], UNKNOWN, NONE, NONE),
  processorRow("gfx12-generic", [], UNKNOWN, NONE, NONE),
  processorRow("gfx600", ["tahiti"], NONE, NONE, NONE),
  processorRow("gfx601", ["pitcairn", "verde"], NONE, NONE, NONE),
  processorRow("gfx602", ["hainan", "oland"], NONE, NONE, NONE),
  processorRow("gfx700", ["kaveri"], NONE, NONE, NONE),
  processorRow("gfx701", ["hawaii"], NONE, NONE, NONE),
  processorRow("gfx702", [], NONE, NONE, NONE),
  processorRow("gfx703", ["kabini", "mullins"], NONE, NONE, NONE),
  processorRow("gfx704", ["bonaire"], NONE, NONE, NONE),
  processorRow("gfx705", [], NONE, NONE, NONE),
  processorRow("gfx801", ["carrizo"], XNACK, XNACK, XNACK),
  processorRow("gfx802", ["iceland", "tonga"], NONE, NONE, NONE),
  processorRow("gfx803", ["fiji", "polaris10", "polaris11"], NONE, NONE, NONE),
  processorRow("gfx805", ["tongapro"], NONE, NONE, NONE),
  processorRow("gfx810", ["stoney"], XNACK, XNACK, XNACK),
  processorRow("gfx900", [], XNACK, XNACK, XNACK),
  processorRow("gfx902", [], XNACK, XNACK, XNACK),
  processorRow("gfx904", [], XNACK, XNACK, XNACK),
  processorRow("gfx906", [], BOTH, BOTH, BOTH),
  processorRow("gfx908", [], BOTH, BOTH, BOTH),
  processorRow("gfx909", [], XNACK, XNACK, XNACK),
  processorRow("gfx90a", [], BOTH, BOTH, BOTH),
  processorRow("gfx90c", [], XNACK, XNACK, XNACK),
  processorRow("gfx940", [], UNKNOWN, BOTH, UNKNOWN),
  processorRow("gfx941", [], UNKNOWN, BOTH, UNKNOWN),
  processorRow("gfx942", [], UNKNOWN, BOTH, BOTH),
  processorRow("gfx950", [], UNKNOWN, UNKNOWN, BOTH),
  processorRow("gfx1010", [], XNACK, XNACK, XNACK),
  processorRow("gfx1011", [], XNACK, XNACK, XNACK),
  processorRow("gfx1012", [], XNACK, XNACK, XNACK),
  processorRow("gfx1013", [], XNACK, XNACK, XNACK),
  processorRow("gfx1030", [], NONE, NONE, NONE),
  processorRow("gfx1031", [], NONE, NONE, NONE),
  processorRow("gfx1032", [], NONE, NONE, NONE),
  processorRow("gfx1033", [], NONE, NONE, NONE),
  processorRow("gfx1034", [], NONE, NONE, NONE),
  processorRow("gfx1035", [], NONE, NONE, NONE),
  processorRow("gfx1036", [], UNKNOWN, NONE, NONE),
  processorRow("gfx1100", [], UNKNOWN, NONE, NONE),
  processorRow("gfx1101", [], UNKNOWN, NONE, NONE),
  processorRow("gfx1102", [], UNKNOWN, NONE, NONE),
  processorRow("gfx1103", [], UNKNOWN, NONE, NONE),
  processorRow("gfx1150", [], UNKNOWN, NONE, NONE),
  processorRow("gfx1151", [], UNKNOWN, NONE, NONE),
  processorRow("gfx1152", [], UNKNOWN, NONE, NONE),
  processorRow("gfx1153", [], UNKNOWN, UNKNOWN, NONE),
  processorRow("gfx1200", [], UNKNOWN, NONE, NONE),
  processorRow("gfx1201", [], UNKNOWN, NONE, NONE),
  processorRow("gfx1250", [], UNKNOWN, UNKNOWN, NONE),
  processorRow("gfx1251", [], UNKNOWN, UNKNOWN, NONE),
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
].map(([name, aliases]) => processorRow(name as string, aliases as string[], NONE, NONE, NONE));

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

/**
 * The processor an AMDGPU ELF code object's `e_flags & EF_AMDGPU_MACH` names (llvm/BinaryFormat/ELF.h
 * `EF_AMDGPU_MACH_*`, LLVM 22), by canonical name from the tables above. Reserved numbers are left out, except
 * 0x040 and 0x04b, which LLVM 19 gave gfx940 and gfx941 (processors 22 dropped, so old code objects carry them).
 */
export const AMDGPU_MACH_PROCESSORS: ReadonlyMap<number, string> = new Map([
  [0x001, "r600"], [0x002, "r630"], [0x003, "rs880"], [0x004, "rv670"], [0x005, "rv710"], [0x006, "rv730"],
  [0x007, "rv770"], [0x008, "cedar"], [0x009, "cypress"], [0x00a, "juniper"], [0x00b, "redwood"], [0x00c, "sumo"],
  [0x00d, "barts"], [0x00e, "caicos"], [0x00f, "cayman"], [0x010, "turks"],
  [0x020, "gfx600"], [0x021, "gfx601"], [0x022, "gfx700"], [0x023, "gfx701"], [0x024, "gfx702"], [0x025, "gfx703"],
  [0x026, "gfx704"], [0x028, "gfx801"], [0x029, "gfx802"], [0x02a, "gfx803"], [0x02b, "gfx810"], [0x02c, "gfx900"],
  [0x02d, "gfx902"], [0x02e, "gfx904"], [0x02f, "gfx906"], [0x030, "gfx908"], [0x031, "gfx909"], [0x032, "gfx90c"],
  [0x033, "gfx1010"], [0x034, "gfx1011"], [0x035, "gfx1012"], [0x036, "gfx1030"], [0x037, "gfx1031"], [0x038, "gfx1032"],
  [0x039, "gfx1033"], [0x03a, "gfx602"], [0x03b, "gfx705"], [0x03c, "gfx805"], [0x03d, "gfx1035"], [0x03e, "gfx1034"],
  [0x03f, "gfx90a"], [0x040, "gfx940"], [0x041, "gfx1100"], [0x042, "gfx1013"], [0x043, "gfx1150"], [0x044, "gfx1103"], [0x045, "gfx1036"],
  [0x046, "gfx1101"], [0x047, "gfx1102"], [0x048, "gfx1200"], [0x049, "gfx1250"], [0x04a, "gfx1151"], [0x04b, "gfx941"], [0x04c, "gfx942"],
  [0x04e, "gfx1201"], [0x04f, "gfx950"], [0x051, "gfx9-generic"], [0x052, "gfx10-1-generic"], [0x053, "gfx10-3-generic"],
  [0x054, "gfx11-generic"], [0x055, "gfx1152"], [0x058, "gfx1153"], [0x059, "gfx12-generic"], [0x05a, "gfx1251"],
  [0x05f, "gfx9-4-generic"],
]);
