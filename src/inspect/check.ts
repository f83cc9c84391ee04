/**
 * "Will it run on my GPU": whether a GPU in a given configuration can load a bundle entry, under the
 * rules the offload runtimes apply (seed 000 "Target ID": a feature left out of the code object's target
 * ID is Any and loads either way; On loads only where the GPU has it on, Off only where it is off; the
 * processors must be the same, alternative names resolved). Pure: src/inspect/node/check.ts finds the entries.
 *
 * Beyond the bundler's own matching (which is about requested targets, not devices):
 * - the GPU's configuration can leave a feature unsaid (`--gpu=gfx90a`). A device always runs with a
 *   definite setting (rocminfo prints `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`; xnack is off unless
 *   HSA_XNACK=1), so an entry that needs the feature on or off is "unknown" (`needs` says the setting),
 *   and a file is judged by `judgeEntries`: it passes when, for every setting of the unsaid features,
 *   some entry loads (librocsparse ships `xnack+` and `xnack-` variants: one of them always loads);
 * - generic code objects (`gfx9-generic`, ...) load on every processor of their family
 *   (llvm/docs/AMDGPUUsage.rst "Generic processors"; code object v6 and a runtime that supports it);
 * - `spirv64-amd-amdhsa--amdgcnspirv` entries are compiled for the device when loaded, so any AMD GPU
 *   takes them.
 */
import { OffloadKitError } from "../engine/errors.js";
import { Triple } from "../llvm/triple.js";
import { describeIncompatibility, isNvptxSmName, parseOffloadTarget, parseTargetId, resolveAmdgcnProcessor } from "../target-id/index.js";
import type { IncompatibilityReason, ParsedTargetId } from "../target-id/index.js";

/**
 * The offload kinds `--kind` takes: the bundler's device kinds (`OFFLOAD_KINDS` but host; hip and hipv4 count
 * as one) and the kinds offload images carry (`offloadKindText`: openmp, cuda, hip (3 as LLVM 19 writes it, 4 as 22 does), sycl).
 */
export const CHECK_KINDS = ["hip", "hipv4", "openmp", "cuda", "sycl"] as const;

/** The device the question is about. */
export interface GpuConfig {
  /** As given (`gfx90a:xnack-`). */
  readonly input: string;
  readonly vendor: "amd" | "nvidia";
  /** Canonical processor (`gfx90a`, `sm_80`). */
  readonly processor: string;
  /** Features the configuration states; a missing one is unknown. */
  readonly features: ReadonlyMap<string, boolean>;
  /** Canonical target ID. */
  readonly canonical: string;
}

export type Verdict = "loadable" | "not-loadable" | "unknown" | "host";

export type CheckReason =
  | IncompatibilityReason
  | { readonly code: "not-a-gpu-entry"; readonly triple: string }
  | { readonly code: "no-target-id" }
  /** Loadable notes. */
  | { readonly code: "exact" }
  | { readonly code: "any-features"; readonly features: readonly string[] }
  | { readonly code: "generic"; readonly family: string }
  | { readonly code: "spirv" }
  /** NVIDIA: SASS for this GPU's major version at a minor no higher (`sass`), or PTX the driver JIT-compiles (`ptx-jit`). */
  | { readonly code: "nv-sass"; readonly arch: string }
  | { readonly code: "nv-ptx-jit"; readonly arch: string }
  /** NVIDIA: the entry's arch does not run on the GPU (another major, a higher minor, an arch-specific or newer PTX). */
  | { readonly code: "nv-arch-mismatch"; readonly arch: string; readonly gpu: string }
  /**
   * Unknown: the entry needs feature settings the GPU configuration does not state; `feature` and
   * `setting` name the first (the verdict's `needs` has them all).
   */
  | { readonly code: "needs-setting"; readonly feature: string; readonly setting: boolean };

export interface EntryVerdict {
  readonly verdict: Verdict;
  readonly reason?: CheckReason;
  /** What the reason says, in one sentence. */
  readonly message: string;
  /** For "unknown": the settings of the unstated features under which the entry loads (`{ xnack: true }`). */
  readonly needs?: Readonly<Record<string, boolean>>;
}

/** Generic processors and the processors whose code they run on (AMDGPUUsage "Generic processors"). */
export const GENERIC_PROCESSOR_FAMILIES: Readonly<Record<string, readonly string[]>> = {
  "gfx9-generic": ["gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"],
  "gfx9-4-generic": ["gfx940", "gfx941", "gfx942", "gfx950"],
  "gfx10-1-generic": ["gfx1010", "gfx1011", "gfx1012", "gfx1013"],
  "gfx10-3-generic": ["gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"],
  "gfx11-generic": ["gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"],
  "gfx12-generic": ["gfx1200", "gfx1201"],
};

const AMD_TRIPLE = "amdgcn-amd-amdhsa";
const NVIDIA_TRIPLE = "nvptx64-nvidia-cuda";

function onOff(setting: boolean): string {
  return setting ? "on (+)" : "off (-)";
}

/**
 * The target ID in `text` and the triple it was written with, if any: rocminfo names an agent
 * `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-` (triple, empty environment, target ID), and entry IDs
 * write NVIDIA ones `nvptx64-nvidia-cuda--sm_80`; one `-` after the triple is accepted too.
 */
function splitTriple(text: string): { triple?: string; targetId: string } {
  for (const triple of [AMD_TRIPLE, NVIDIA_TRIPLE]) {
    if (!text.startsWith(`${triple}-`)) continue;
    const rest = text.substring(triple.length + 1);
    return { triple, targetId: rest.startsWith("-") ? rest.substring(1) : rest };
  }
  return { targetId: text };
}

/**
 * Parses `--gpu`: an AMDGPU target ID (`gfx90a:xnack-`, `gfx942:sramecc+:xnack-`, alternative names
 * accepted) or an NVIDIA `sm_XX`, bare or after its triple as rocminfo prints it
 * (`amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`). Throws OffloadKitError with clang's wording for a
 * malformed ID.
 */
export function parseGpu(text: string): GpuConfig {
  const { triple, targetId } = splitTriple(text);
  const processor = targetId.split(":")[0]!;
  if (isNvptxSmName(processor)) {
    if (triple === AMD_TRIPLE) throw new OffloadKitError("BAD_GPU", `invalid GPU '${text}': '${processor}' is an NVIDIA processor, not an ${AMD_TRIPLE} one`);
    const parsed = parseTargetId(NVIDIA_TRIPLE, targetId, 22);
    if (!parsed.ok) throw new OffloadKitError("BAD_GPU", `${parsed.error.message} (NVIDIA processors take no features)`);
    return { input: text, vendor: "nvidia", processor: parsed.value.processor, features: parsed.value.features, canonical: parsed.value.canonical };
  }
  if (triple === NVIDIA_TRIPLE) throw new OffloadKitError("BAD_GPU", `invalid GPU '${text}': '${processor}' is not an NVIDIA processor (sm_XX)`);
  // The newest table knows the most processors (22 adds gfx950, gfx1153, ...); 19 knows gfx940/941.
  let parsed = parseTargetId(AMD_TRIPLE, targetId, 22);
  if (!parsed.ok && parsed.error.code === "unknown-processor") parsed = parseTargetId(AMD_TRIPLE, targetId, 19);
  if (!parsed.ok) {
    throw new OffloadKitError("BAD_GPU", `invalid GPU '${text}': ${parsed.error.message}; format is a processor name followed by an ` +
      "optional colon-delimited list of features followed by an enable/disable sign (e.g., 'gfx908:sramecc+:xnack-'), " +
      `optionally after the triple as rocminfo prints it ('${AMD_TRIPLE}--gfx908:sramecc+:xnack-')`);
  }
  return { input: text, vendor: "amd", processor: parsed.value.processor, features: parsed.value.features, canonical: parsed.value.canonical };
}

function parseEntryTargetId(triple: Triple, targetId: string): ParsedTargetId | { error: IncompatibilityReason } {
  let parsed = parseTargetId(triple, targetId, 19);
  if (!parsed.ok && parsed.error.code === "unknown-processor") parsed = parseTargetId(triple, targetId, 22);
  if (!parsed.ok) return { error: { code: "invalid-target-id", side: "code-object", error: parsed.error } };
  return parsed.value;
}

function loadable(reason: CheckReason, message: string): EntryVerdict {
  return { verdict: "loadable", reason, message };
}

function notLoadable(reason: CheckReason, message?: string): EntryVerdict {
  return { verdict: "not-loadable", reason, message: message ?? describeIncompatibility(reason as IncompatibilityReason) };
}

/**
 * The entry ID read as generously as the bundlers write it: six '-' fields (22's rule, which keeps
 * `gfx9-generic` whole), else the 14/19 rule for five-field IDs (`hip-amdgcn-amd-amdhsa-gfx906`),
 * without 19's quirk of taking the whole ID as the target ID when the last field is empty.
 */
function parseEntryId(id: string) {
  const info = parseOffloadTarget(id, 22);
  if (info.targetId !== "") return info;
  const old = parseOffloadTarget(id, 19);
  return old.targetId === id || old.targetId === "" ? info : old;
}

/** An NVIDIA fatbin entry's or cubin's ID (src/formats/nv-fatbin.ts `nvEntryArchName`): `sm_80`, `sm_90a`, `sm_100f`, `compute_90`. */
const NV_ARCH_ID = /^(sm|compute)_(\d+)([af]?)$/;

export function isNvArchId(id: string): boolean {
  return NV_ARCH_ID.test(id);
}

/**
 * Whether an NVIDIA GPU runs an entry of a fatbin or a cubin, by the CUDA driver's rules (CUDA C
 * Programming Guide, "Binary Compatibility" and "Application Compatibility"; the arch-specific and
 * family-specific suffixes from nvcc's `-arch` documentation):
 * - SASS `sm_XY` runs on `sm_XZ` for Z >= Y (same major version, minor no higher);
 * - `sm_XYa` (arch-specific) runs only on `sm_XY`; `sm_XYf` (family-specific) as `sm_XY` does, within the major version;
 * - PTX `compute_XY` is JIT-compiled by the driver for any GPU of compute capability >= X.Y; `compute_XYa` only
 *   for `sm_XY`, `compute_XYf` within the major version.
 * Compute capabilities are the number's tens and ones (sm_86: 8.6; sm_100: 10.0, sm_121: 12.1).
 */
export function checkNvEntry(id: string, gpu: GpuConfig, options: { kind?: string } = {}): EntryVerdict {
  const match = NV_ARCH_ID.exec(id)!;
  if (options.kind !== undefined && options.kind !== "cuda") {
    return notLoadable({ code: "kind-mismatch", codeObjectKind: "cuda", targetKind: options.kind });
  }
  const gpuMatch = NV_ARCH_ID.exec(gpu.processor);
  if (gpu.vendor !== "nvidia" || gpuMatch === null) {
    return notLoadable({ code: "not-a-gpu-entry", triple: NVIDIA_TRIPLE }, `NVIDIA ${match[1] === "sm" ? "SASS" : "PTX"} (${id}) does not run on an AMD GPU`);
  }
  const number = Number(match[2]);
  const suffix = match[3]!;
  const gpuNumber = Number(gpuMatch[2]);
  const [major, minor] = [Math.floor(number / 10), number % 10];
  const [gpuMajor, gpuMinor] = [Math.floor(gpuNumber / 10), gpuNumber % 10];
  const gpuName = `sm_${gpuNumber}`;
  const mismatch = (why: string) => notLoadable({ code: "nv-arch-mismatch", arch: id, gpu: gpuName }, why);
  if (match[1] === "sm") {
    if (suffix === "a") {
      return number === gpuNumber ? loadable({ code: "nv-sass", arch: id }, `arch-specific SASS for ${gpuName}`)
        : mismatch(`arch-specific SASS (${id}) runs only on sm_${number}`);
    }
    if (major !== gpuMajor) return mismatch(`SASS for ${id} runs only on compute capability ${major}.x GPUs, not ${gpuMajor}.${gpuMinor}`);
    if (minor > gpuMinor) return mismatch(`SASS for ${id} needs compute capability ${major}.${minor} or a later ${major}.x, the GPU is ${gpuMajor}.${gpuMinor}`);
    return loadable({ code: "nv-sass", arch: id }, number === gpuNumber ? `SASS built for ${gpuName}` : `SASS for ${id} runs on ${gpuName} (same major version, minor ${minor} <= ${gpuMinor})`);
  }
  if (suffix === "a" && number !== gpuNumber) return mismatch(`arch-specific PTX (${id}) is JIT-compiled only for sm_${number}`);
  if (suffix === "f" && (major !== gpuMajor || minor > gpuMinor)) return mismatch(`family-specific PTX (${id}) is JIT-compiled only for ${major}.x GPUs of ${major}.${minor} or later`);
  if (number > gpuNumber) return mismatch(`PTX for ${id} needs compute capability ${major}.${minor} or later, the GPU is ${gpuMajor}.${gpuMinor}`);
  return loadable({ code: "nv-ptx-jit", arch: id }, `PTX for ${id}: the driver JIT-compiles it for ${gpuName} (no SASS needed)`);
}

/** Whether `gpu` can load the code object stored under bundle entry ID `id`, and why. */
export function checkEntry(id: string, gpu: GpuConfig, options: { kind?: string } = {}): EntryVerdict {
  if (NV_ARCH_ID.test(id)) return checkNvEntry(id, gpu, options);
  const info = parseEntryId(id);
  if (info.offloadKind === "host") return { verdict: "host", message: "host code (not device code)" };
  if (options.kind !== undefined) {
    const same = info.offloadKind === options.kind ||
      (info.offloadKind.startsWith("hip") && options.kind.startsWith("hip"));
    if (!same) return notLoadable({ code: "kind-mismatch", codeObjectKind: info.offloadKind, targetKind: options.kind });
  }
  const triple = info.triple;
  if (gpu.vendor === "amd" && triple.getArchName() === "spirv64" && triple.getVendorName() === "amd") {
    return loadable({ code: "spirv" }, "AMD SPIR-V: compiled for the GPU when loaded");
  }
  const rightFamily = gpu.vendor === "amd" ? triple.isAMDGCN() : triple.isNVPTX();
  if (!rightFamily) {
    return notLoadable({ code: "not-a-gpu-entry", triple: triple.str() },
      `triple '${triple.str()}' is not ${gpu.vendor === "amd" ? "an AMD GPU (amdgcn)" : "an NVIDIA GPU (nvptx)"} triple`);
  }
  if (info.targetId === "") return notLoadable({ code: "no-target-id" }, "the entry names no processor");
  const parsed = parseEntryTargetId(triple, info.targetId);
  if ("error" in parsed) return notLoadable(parsed.error);

  let generic: string | undefined;
  if (parsed.processor !== gpu.processor) {
    if (!(GENERIC_PROCESSOR_FAMILIES[parsed.processor] ?? []).includes(gpu.processor)) {
      return notLoadable({ code: "processor-mismatch", codeObjectProcessor: parsed.processor, targetProcessor: gpu.processor });
    }
    generic = parsed.processor;
  }
  const anyFeatures: string[] = [];
  for (const feature of resolveFeatures(gpu)) if (!parsed.features.has(feature)) anyFeatures.push(feature);
  // A stated setting that differs rules the entry out whatever the unstated ones are, so all stated
  // features are compared before an unstated one can make the verdict "unknown".
  const needs: Record<string, boolean> = {};
  for (const [feature, setting] of parsed.features) {
    const gpuSetting = gpu.features.get(feature);
    if (gpuSetting === undefined) {
      needs[feature] = setting;
    } else if (gpuSetting !== setting) {
      return notLoadable({ code: "feature-mismatch", feature, codeObjectSetting: setting, targetSetting: gpuSetting },
        `needs ${feature} ${onOff(setting)}, the GPU has it ${onOff(gpuSetting)}`);
    }
  }
  const needed = Object.keys(needs);
  if (needed.length > 0) {
    return {
      verdict: "unknown",
      reason: { code: "needs-setting", feature: needed[0]!, setting: needs[needed[0]!]! },
      message: `loads only with ${needed.map((f) => `${f} ${onOff(needs[f]!)}`).join(" and ")}; ` +
        `--gpu=${gpu.input} does not say how ${needed.join(" and ")} ${needed.length === 1 ? "is" : "are"} set`,
      needs,
    };
  }
  if (generic !== undefined) return loadable({ code: "generic", family: generic }, `generic code object: ${generic} covers ${gpu.processor} (code object v6 runtimes)`);
  if (anyFeatures.length > 0) return loadable({ code: "any-features", features: anyFeatures }, `built for any ${anyFeatures.join(" and any ")}`);
  return loadable({ code: "exact" }, "built for exactly this configuration");
}

/** The target-ID features the GPU's processor has (xnack, sramecc), whether or not `--gpu` sets them. */
function resolveFeatures(gpu: GpuConfig): string[] {
  if (gpu.vendor !== "amd") return [];
  const resolved = resolveAmdgcnProcessor(gpu.processor, 22) ?? resolveAmdgcnProcessor(gpu.processor, 19);
  if (resolved === undefined) return [];
  const names: string[] = [];
  if (resolved.features.sramecc) names.push("sramecc");
  if (resolved.features.xnack) names.push("xnack");
  return names;
}

/** One setting of the features `--gpu` leaves unstated, and how many entries load under it. */
export interface SettingCase {
  /** Empty when `--gpu` states every feature the entries depend on. */
  readonly settings: Readonly<Record<string, boolean>>;
  readonly loadable: number;
}

/** What a file's entries add up to on one GPU configuration. */
export interface FileJudgement {
  /** Some entry loads whichever way the unstated features are set. */
  readonly ok: boolean;
  /** Features `--gpu` leaves unstated that some entry depends on, alphabetically (as target IDs list them). */
  readonly unstated: readonly string[];
  /** Every setting of `unstated` (one case, with no settings, when nothing is unstated). */
  readonly cases: readonly SettingCase[];
}

/**
 * Judges a file by its entries' verdicts: it passes when, for every setting of the features the GPU
 * configuration leaves unstated, at least one entry loads (an entry that is "loadable" loads under
 * every setting; an "unknown" one under the settings it `needs`). Features no entry depends on do not
 * matter, so a file with no "unknown" entries passes when one entry is loadable.
 */
export function judgeEntries(verdicts: readonly EntryVerdict[]): FileJudgement {
  const unstated: string[] = [];
  for (const v of verdicts) for (const feature of Object.keys(v.needs ?? {})) if (!unstated.includes(feature)) unstated.push(feature);
  unstated.sort();
  const cases: SettingCase[] = [];
  for (let bits = 0; bits < 2 ** unstated.length; bits++) {
    // Off before on: the first case is the usual setting (xnack off unless HSA_XNACK=1).
    const settings: Record<string, boolean> = {};
    unstated.forEach((feature, i) => { settings[feature] = (bits & (1 << (unstated.length - 1 - i))) !== 0; });
    const loadable = verdicts.filter((v) => v.verdict === "loadable" ||
      (v.verdict === "unknown" && Object.entries(v.needs ?? {}).every(([f, on]) => settings[f] === on))).length;
    cases.push({ settings, loadable });
  }
  return { ok: cases.every((c) => c.loadable > 0), unstated, cases };
}

/** `1 with xnack off (-), 1 with xnack on (+)`: the entries that load under each setting, for reports. */
export function describeCases(cases: readonly SettingCase[]): string {
  return cases.map((c) => `${c.loadable} with ${describeSettings(c.settings)}`).join(", ");
}

/** `xnack on (+) and sramecc off (-)`, for reports. */
export function describeSettings(settings: Readonly<Record<string, boolean>>): string {
  return Object.entries(settings).map(([feature, on]) => `${feature} ${onOff(on)}`).join(" and ");
}

/**
 * The HIP runtime's rule for one fat binary, which `prune` (what it keeps) and `check` (what loads) both
 * apply: a fat binary with device entries must have one the device takes, or registering it fails every
 * launch with hipErrorNoBinaryForGpu (ROCm clr hip_fatbin.cpp), whatever the file's other fat binaries hold.
 * One with host entries only has nothing to look for, and passes.
 */
export function fatBinaryHasCode(deviceEntries: number, usable: number): boolean {
  return deviceEntries === 0 || usable > 0;
}

/** What one fat binary's entries add up to on one GPU configuration. */
export interface FatBinaryJudgement extends FileJudgement {
  readonly deviceEntries: number;
}

/**
 * Judges one fat binary by its entries' verdicts: it passes when, under every setting of the features `--gpu`
 * leaves unstated, `fatBinaryHasCode` holds for the entries that load under it.
 */
export function judgeFatBinary(verdicts: readonly EntryVerdict[]): FatBinaryJudgement {
  const deviceEntries = verdicts.filter((v) => v.verdict !== "host").length;
  const { unstated, cases } = judgeEntries(verdicts);
  return { ok: cases.every((c) => fatBinaryHasCode(deviceEntries, c.loadable)), unstated, cases, deviceEntries };
}
