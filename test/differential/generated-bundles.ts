/**
 * What the differential tests of prune and replace share: random bundle contents (one seeded generator per
 * test file, so each file's cases stay reproducible), target lists and the native bundler, run in a folder of
 * its own per case below `root`.
 */
import { mkdirSync, realpathSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { rng } from "../engines.js";
import { nativeTool } from "../native.js";

export const NATIVE_BUNDLER = "clang-offload-bundler-19";
export const HOST = "host-x86_64-unknown-linux-gnu";
export const DEVICES = [
  "hip-amdgcn-amd-amdhsa--gfx906", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "hip-amdgcn-amd-amdhsa--gfx90a:xnack-",
  "hipv4-amdgcn-amd-amdhsa--gfx908:sramecc+:xnack-", "hip-amdgcn-amd-amdhsa--gfx1100", "hip-amdgcn-amd-amdhsa--gfx1030",
  "openmp-nvptx64-nvidia-cuda--sm_70", "hip-amdgcn-amd-amdhsa--gfx942",
];

/** The native bundler from its real path, so that -type=o runs LLVM 19's own llvm-objcopy. */
export function bundler(): string {
  return realpathSync(nativeTool(NATIVE_BUNDLER)!);
}

export function run(tool: string, args: readonly string[], cwd: string): void {
  const r = spawnSync(tool, args, { cwd, maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${tool} ${args.join(" ")} failed: ${r.stderr.toString()}`);
}

export function generatedBundles(seed: number, root: string) {
  let counter = 0;
  const next = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];
  const dir = (): string => {
    const d = join(root, `c${++counter}`);
    mkdirSync(d);
    return d;
  };
  const shuffled = <T>(list: readonly T[]): T[] => {
    const out = [...list];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  };
  /** Random bytes, or assembly-looking text for text bundles, up to `max` bytes. */
  const payload = (text: boolean, max = 6000): Uint8Array => {
    const size = Math.floor(next() * max);
    if (!text) return Uint8Array.from({ length: size }, () => Math.floor(next() * 256));
    const words = ["mov", "add", "s_load", "v_mad", "; note", "ret", "label:", "0x1f"];
    let s = "";
    while (s.length < size) s += `${pick(words)} ${Math.floor(next() * 1000)}\n`;
    return new TextEncoder().encode(s);
  };
  /** A target list: one host somewhere among 2-5 device entries. */
  const targetList = (): string[] => {
    const devices = shuffled(DEVICES).slice(0, 2 + Math.floor(next() * 4));
    const at = Math.floor(next() * (devices.length + 1));
    return [...devices.slice(0, at), HOST, ...devices.slice(at)];
  };
  return { next, pick, dir, shuffled, payload, targetList };
}
