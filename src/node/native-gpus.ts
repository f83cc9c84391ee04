/**
 * The GPUs of the machine offload-kit runs on, for `check` without `--gpu` and `--gpu=native` /
 * `--keep=native` / `--drop=native`. Node-only: it runs processes and reads sysfs.
 *
 * Sources, in order; the first that names a GPU wins, so the answer always comes from one place:
 * 1. `offload-arch`, then `amdgpu-arch` and `nvptx-arch` on PATH (LLVM's tools: one processor per line,
 *    `sm_XX` for NVIDIA GPUs; they print no xnack/sramecc setting; with no GPU they print nothing or fail).
 * 2. `rocminfo`: each GPU agent's ISA name, `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`, the full target ID
 *    the runtime loads code for; an agent `Name: gfxNNN` line when no ISA line is printed.
 * 3. `nvidia-smi --query-gpu=compute_cap --format=csv,noheader`: `9.0` is sm_90 (an NVIDIA machine without
 *    LLVM's tools).
 * 4. The KFD topology, `<sysfs>/class/kfd/kfd/topology/nodes/N/properties` (`<sysfs>` is /sys, or
 *    OFFLOAD_KIT_SYSFS for tests): `gfx_target_version` is decimal major*10000 + minor*100 + stepping, and
 *    minor and stepping are written as hex digits in the processor name (90010 = gfx90a, 110000 = gfx1100);
 *    0 marks a CPU node. sramecc is bit 26 of `capability` (HSA_CAP_SRAM_EDCSUPPORTED = 0x04000000 in
 *    the kernel's uapi kfd_sysfs.h; bit 19, 0x00080000, is HSA_CAP_RESERVED_WAS_SRAM_EDCSUPPORTED and kept 0
 *    for old user mode), stated only for processors that have the feature. The XNACK mode is not in the
 *    topology (the runtime asks the driver with an ioctl), so it is left unstated: checks then hold
 *    whichever way it is set.
 * A tool that is missing, fails, or hangs past TOOL_TIMEOUT_MS is passed over, and the next source asked.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { resolveAmdgcnProcessor } from "../target-id/index.js";

export type NativeGpuSource = "offload-arch" | "amdgpu-arch" | "nvptx-arch" | "rocminfo" | "nvidia-smi" | "kfd";

/** One kind of GPU found: identical GPUs (same target ID) are counted, not repeated. */
export interface NativeGpu {
  /** As the source spelled it, triple removed: `gfx90a:sramecc+:xnack-`, `gfx1100`, `sm_80`. */
  readonly targetId: string;
  readonly source: NativeGpuSource;
  /** Where, for messages: `offload-arch`, `rocminfo`, `/sys/class/kfd/kfd/topology/nodes/1, 2`. */
  readonly where: string;
  readonly count: number;
}

export interface NativeGpuSearch {
  readonly gpus: readonly NativeGpu[];
  /** What was asked, in order, for the message when nothing was found. */
  readonly tried: readonly string[];
}

/** Long enough for rocminfo to start the runtime on a busy machine; a hung tool must not hang offload-kit. */
export const TOOL_TIMEOUT_MS = 30_000;
const KFD_NODES = "class/kfd/kfd/topology/nodes";
const HSA_CAP_SRAM_EDCSUPPORTED = 0x04000000;

const PROCESSOR_LINE = /^(gfx[0-9a-f]+|sm_[0-9]+a?)((?::[a-z]+[+-])*)$/;

/** Runs a tool found on PATH; its stdout, or undefined when it is missing, fails or times out. */
function toolOutput(tool: string, args: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  const result = spawnSync(tool, args, { env, encoding: "utf8", timeout: TOOL_TIMEOUT_MS, maxBuffer: 1 << 24, stdio: ["ignore", "pipe", "ignore"] });
  if (result.error !== undefined || result.status !== 0) return undefined;
  return result.stdout;
}

function counted(ids: readonly string[], source: NativeGpuSource, where: (indexes: number[]) => string): NativeGpu[] {
  const seen = new Map<string, number[]>();
  ids.forEach((id, index) => {
    const list = seen.get(id);
    if (list === undefined) seen.set(id, [index]);
    else list.push(index);
  });
  return [...seen].map(([targetId, indexes]) => ({ targetId, source, where: where(indexes), count: indexes.length }));
}

/** offload-arch / amdgpu-arch: a processor per line; anything else printed (a warning, a blank) is ignored. */
export function parseArchToolOutput(text: string): string[] {
  return text.split("\n").map((line) => line.trim()).filter((line) => PROCESSOR_LINE.test(line));
}

/**
 * rocminfo's GPU agents: the `amdgcn-amd-amdhsa--` ISA names (one per agent, features included), else the
 * agents' `Name: gfx...` lines. CPU agents have no such names.
 */
export function parseRocminfoOutput(text: string): string[] {
  const isas = [...text.matchAll(/^\s*Name:\s+amdgcn-amd-amdhsa--(\S+)\s*$/gm)].map((m) => m[1]!).filter((id) => PROCESSOR_LINE.test(id));
  if (isas.length > 0) return isas;
  return [...text.matchAll(/^\s*Name:\s+(gfx[0-9a-f]+)\s*$/gm)].map((m) => m[1]!);
}

/** nvidia-smi's compute capabilities, one `major.minor` a line, as sm_XX names. */
export function parseComputeCapOutput(text: string): string[] {
  return [...text.matchAll(/^\s*(\d+)\.(\d)\s*$/gm)].map((m) => `sm_${m[1]}${m[2]}`);
}

/** `gfx_target_version` to a processor name; undefined for 0 (a CPU node) or a value no processor has. */
export function processorFromTargetVersion(version: number): string | undefined {
  if (!Number.isInteger(version) || version <= 0) return undefined;
  const major = Math.floor(version / 10000);
  const minor = Math.floor(version / 100) % 100;
  const stepping = version % 100;
  // Each of minor and stepping is one hex digit in the name.
  if (minor > 15 || stepping > 15) return undefined;
  return `gfx${major}${minor.toString(16)}${stepping.toString(16)}`;
}

function propertiesOf(text: string): Map<string, string> {
  const properties = new Map<string, string>();
  for (const line of text.split("\n")) {
    const [key, value] = line.trim().split(/\s+/);
    if (key !== undefined && key !== "" && value !== undefined) properties.set(key, value);
  }
  return properties;
}

/** The GPU nodes of the KFD topology under `sysfsRoot`, in node order, with the path each was read from. */
export function readKfdTopology(sysfsRoot: string): { targetId: string; node: string }[] {
  const nodesDir = join(sysfsRoot, KFD_NODES);
  let nodes: string[];
  try {
    nodes = readdirSync(nodesDir).filter((n) => /^\d+$/.test(n)).sort((a, b) => Number(a) - Number(b));
  } catch {
    return [];
  }
  const found: { targetId: string; node: string }[] = [];
  for (const node of nodes) {
    let text: string;
    try {
      text = readFileSync(join(nodesDir, node, "properties"), "utf8");
    } catch {
      continue;
    }
    const properties = propertiesOf(text);
    const processor = processorFromTargetVersion(Number(properties.get("gfx_target_version") ?? "0"));
    if (processor === undefined) continue;
    const capability = Number(properties.get("capability") ?? "0");
    const sramecc = (resolveAmdgcnProcessor(processor, 22) ?? resolveAmdgcnProcessor(processor, 19))?.features.sramecc ?? false;
    const targetId = sramecc && Number.isFinite(capability) ? `${processor}:sramecc${(capability & HSA_CAP_SRAM_EDCSUPPORTED) !== 0 ? "+" : "-"}` : processor;
    found.push({ targetId, node });
  }
  return found;
}

/** Looks for this machine's GPUs in the sources above, with PATH and OFFLOAD_KIT_SYSFS taken from `env`. */
export function findNativeGpus(env: NodeJS.ProcessEnv = process.env): NativeGpuSearch {
  const tried: string[] = [];
  for (const tool of ["offload-arch", "amdgpu-arch", "nvptx-arch"] as const) {
    tried.push(tool);
    const output = toolOutput(tool, [], env);
    const ids = output === undefined ? [] : parseArchToolOutput(output);
    if (ids.length > 0) return { gpus: counted(ids, tool, () => tool), tried };
  }
  tried.push("rocminfo");
  const rocminfo = toolOutput("rocminfo", [], env);
  const agents = rocminfo === undefined ? [] : parseRocminfoOutput(rocminfo);
  if (agents.length > 0) return { gpus: counted(agents, "rocminfo", () => "rocminfo"), tried };
  tried.push("nvidia-smi");
  const smi = toolOutput("nvidia-smi", ["--query-gpu=compute_cap", "--format=csv,noheader"], env);
  const sms = smi === undefined ? [] : parseComputeCapOutput(smi);
  if (sms.length > 0) return { gpus: counted(sms, "nvidia-smi", () => "nvidia-smi"), tried };
  const sysfs = env.OFFLOAD_KIT_SYSFS || "/sys";
  const nodesDir = join(sysfs, KFD_NODES);
  tried.push(nodesDir);
  const nodes = readKfdTopology(sysfs);
  const gpus = counted(nodes.map((n) => n.targetId), "kfd", (indexes) => `${nodesDir}/${indexes.map((i) => nodes[i]!.node).join(", ")}`);
  return { gpus, tried };
}

/** `gfx90a:sramecc+:xnack- (2 GPUs, from rocminfo)`, for messages. */
export function describeNativeGpu(gpu: NativeGpu): string {
  return `${gpu.targetId} (${gpu.count > 1 ? `${gpu.count} GPUs, ` : ""}from ${gpu.where})`;
}

/** The usage message when nothing was found. */
export function noNativeGpuMessage(search: NativeGpuSearch, option: string): string {
  return `no GPU found on this machine (asked ${search.tried.join(", ")}); pass ${option}=<target id>, e.g. ${option}=gfx90a`;
}
