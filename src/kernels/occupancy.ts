/**
 * How many waves of a kernel one SIMD can hold at once, from the resources its metadata states: the estimate
 * the compiler itself makes (LLVM 19, llvm/lib/Target/AMDGPU), not a measurement.
 *
 * The rules, each named for the LLVM function it follows:
 * - `IsaInfo::getMaxWavesPerEU`: 8 on gfx90a/gfx94x/gfx950 (FeatureGFX90AInsts), 10 before gfx10, 20 on gfx10.1,
 *   16 on gfx10.3 and later.
 * - `IsaInfo::getNumWavesPerEUWithNumVGPRs`: `min(max(total / alignTo(vgprs, granule), 1), maxWaves)`, where
 *   `getTotalNumVGPRs` is 512 with the unified VGPR+AGPR file of gfx90a/gfx94x (and `.vgpr_count` there is
 *   already the unified count: `alignTo(arch, 4) + agprs`, AMDGPUResourceUsageAnalysis), 256 before gfx10,
 *   and on gfx10+ 1024 (wave32) / 512 (wave64), or 1536 / 768 with FeatureGFX11FullVGPRs (gfx1100, gfx1101,
 *   gfx1151, gfx1200, gfx1201); `getVGPRAllocGranule` is 8 on gfx90a, 4 before gfx10, 8/4 (w32/w64) on
 *   gfx10.1, 16/8 on gfx10.3+, 24/12 with full VGPRs.
 * - `GCNSubtarget::getOccupancyWithNumSGPRs`: no limit from gfx10; gfx8/gfx9 10 waves up to 80 SGPRs, 9 up to
 *   88, 8 up to 100, else 7; gfx6/gfx7 10/9/8/7/6/5 at 48/56/64/72/80 SGPRs.
 * - `AMDGPUSubtarget::getOccupancyWithLocalMemSize`: the workgroups that fit in the LDS of a CU (gfx6: 32 KiB;
 *   gfx7 to gfx9: 64 KiB; gfx950: 160 KiB; gfx10+ in WGP mode, the default: twice the 64 KiB, one WGP's),
 *   capped by `getMaxWorkGroupsPerCU` (waves per CU / waves per group, and 16 barriers, 32 on a WGP), times the
 *   waves of a group of `.max_flat_workgroup_size`, over the 4 SIMDs.
 */

/** What one processor's rules need. */
export interface ProcessorLimits {
  readonly processor: string;
  /** `getMaxWavesPerEU`. */
  readonly maxWavesPerEu: number;
  readonly family: "gfx6" | "gfx8" | "gfx90a" | "gfx10.1" | "gfx10.3";
  /** FeatureGFX11FullVGPRs. */
  readonly fullVgprs: boolean;
  /** Bytes of LDS the workgroups of one CU (WGP on gfx10+) share. */
  readonly ldsBytes: number;
  readonly simdsPerCu: number;
  readonly maxBarriers: number;
}

export interface Occupancy {
  /** Waves per SIMD: the least of the four bounds. */
  readonly waves: number;
  readonly byVgprs: number;
  readonly bySgprs: number;
  readonly byLds: number;
  readonly maxWaves: number;
  /** Which bound is the least (the first of vgprs, sgprs, lds on a tie; `max` when none is below the processor's). */
  readonly limitedBy: "vgprs" | "sgprs" | "lds" | "max";
}

/** Where the rules come from, for reports. */
export const OCCUPANCY_RULE =
  "LLVM 19 AMDGPU: IsaInfo::getNumWavesPerEUWithNumVGPRs, GCNSubtarget::getOccupancyWithNumSGPRs, " +
  "AMDGPUSubtarget::getOccupancyWithLocalMemSize, IsaInfo::getMaxWavesPerEU (waves per SIMD; WGP mode on gfx10+)";

const FULL_VGPRS = new Set(["gfx1100", "gfx1101", "gfx1151", "gfx1200", "gfx1201", "gfx12-generic"]);
const GFX90A_INSTS = new Set(["gfx90a", "gfx940", "gfx941", "gfx942", "gfx950", "gfx9-4-generic"]);

/** The limits of a processor by its gfx name; undefined for a name it cannot place (r600, unknown). */
export function processorLimits(processor: string): ProcessorLimits | undefined {
  const generic = /^gfx(\d+)(?:-(\d+))?-generic$/.exec(processor);
  let major: number;
  let minor: number;
  if (generic !== null) {
    major = Number(generic[1]);
    minor = generic[2] === undefined ? 0 : Number(generic[2]);
  } else {
    const m = /^gfx(\d+)([0-9a-f])([0-9a-f])$/.exec(processor);
    if (m === null) return undefined;
    major = Number(m[1]);
    minor = parseInt(m[2]!, 16);
  }
  if (major < 6) return undefined;
  const common = { processor, fullVgprs: FULL_VGPRS.has(processor), simdsPerCu: 4 };
  if (major < 10) {
    const unified = GFX90A_INSTS.has(processor);
    const lds = processor === "gfx950" ? 163840 : major === 6 ? 32768 : 65536;
    return { ...common, family: unified ? "gfx90a" : major < 8 ? "gfx6" : "gfx8", maxWavesPerEu: unified ? 8 : 10, ldsBytes: lds, maxBarriers: 16 };
  }
  const gfx103 = major > 10 || minor >= 3;
  return { ...common, family: gfx103 ? "gfx10.3" : "gfx10.1", maxWavesPerEu: gfx103 ? 16 : 20, ldsBytes: 2 * 65536, maxBarriers: 32 };
}

/** `getTotalNumVGPRs` and `getVGPRAllocGranule` for a wave size. */
export function vgprFile(limits: ProcessorLimits, wavefrontSize: number): { total: number; granule: number } {
  const wave32 = wavefrontSize === 32;
  if (limits.family === "gfx90a") return { total: 512, granule: 8 };
  if (limits.family === "gfx6" || limits.family === "gfx8") return { total: 256, granule: 4 };
  if (limits.fullVgprs) return { total: wave32 ? 1536 : 768, granule: wave32 ? 24 : 12 };
  if (limits.family === "gfx10.3") return { total: wave32 ? 1024 : 512, granule: wave32 ? 16 : 8 };
  return { total: wave32 ? 1024 : 512, granule: wave32 ? 8 : 4 };
}

export function wavesWithVgprs(limits: ProcessorLimits, vgprs: number, wavefrontSize: number): number {
  const { total, granule } = vgprFile(limits, wavefrontSize);
  if (vgprs < granule) return limits.maxWavesPerEu;
  const rounded = Math.ceil(vgprs / granule) * granule;
  return Math.min(Math.max(Math.floor(total / rounded), 1), limits.maxWavesPerEu);
}

export function wavesWithSgprs(limits: ProcessorLimits, sgprs: number): number {
  if (limits.family === "gfx10.1" || limits.family === "gfx10.3") return limits.maxWavesPerEu;
  if (limits.family === "gfx6") {
    const steps: readonly (readonly [number, number])[] = [[48, 10], [56, 9], [64, 8], [72, 7], [80, 6]];
    return Math.min(steps.find(([at]) => sgprs <= at)?.[1] ?? 5, limits.maxWavesPerEu);
  }
  const waves = sgprs <= 80 ? 10 : sgprs <= 88 ? 9 : sgprs <= 100 ? 8 : 7;
  return Math.min(waves, limits.maxWavesPerEu);
}

/** `getMaxWorkGroupsPerCU`. */
function workgroupsPerCu(limits: ProcessorLimits, flatWorkgroupSize: number, wavefrontSize: number): number {
  const wavesPerGroup = Math.ceil(flatWorkgroupSize / wavefrontSize);
  const wavesPerCu = limits.maxWavesPerEu * limits.simdsPerCu;
  if (wavesPerGroup <= 1) return wavesPerCu;
  return Math.min(Math.floor(wavesPerCu / wavesPerGroup), limits.maxBarriers);
}

export function wavesWithLds(limits: ProcessorLimits, ldsBytes: number, flatWorkgroupSize: number, wavefrontSize: number): number {
  const groupsPerCu = workgroupsPerCu(limits, flatWorkgroupSize, wavefrontSize);
  if (groupsPerCu === 0) return 0;
  let groups = Math.floor(limits.ldsBytes / (ldsBytes > 0 ? ldsBytes : 1));
  if (groups === 0) return 1;
  groups = Math.min(groups, groupsPerCu);
  const waves = groups * Math.ceil(flatWorkgroupSize / wavefrontSize);
  return Math.min(Math.ceil(waves / limits.simdsPerCu), limits.maxWavesPerEu);
}

export interface KernelResources {
  readonly vgprs: number;
  readonly sgprs: number;
  readonly ldsBytes: number;
  readonly wavefrontSize: number;
  readonly maxFlatWorkgroupSize: number;
}

/** The estimate for one kernel on one processor. */
export function estimateOccupancy(limits: ProcessorLimits, kernel: KernelResources): Occupancy {
  const wave = kernel.wavefrontSize === 32 ? 32 : 64;
  const byVgprs = wavesWithVgprs(limits, kernel.vgprs, wave);
  const bySgprs = wavesWithSgprs(limits, kernel.sgprs);
  const byLds = wavesWithLds(limits, kernel.ldsBytes, Math.max(1, kernel.maxFlatWorkgroupSize), wave);
  const maxWaves = limits.maxWavesPerEu;
  const waves = Math.min(byVgprs, bySgprs, byLds, maxWaves);
  const limitedBy = waves === maxWaves ? "max" : waves === byVgprs ? "vgprs" : waves === bySgprs ? "sgprs" : "lds";
  return { waves, byVgprs, bySgprs, byLds, maxWaves, limitedBy };
}
