/**
 * Native LLVM tools for differential tests. A test asks `nativeTool("clang-offload-bundler-19")` and
 * skips when it is absent; under OFFLOAD_KIT_REQUIRE_NATIVE=1 (set by .ci/run after installing the
 * tools) an absent tool is a failure instead, so CI cannot silently skip the comparisons.
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { HANG_MS } from "./limits.js";

const cache = new Map<string, string | undefined>();

/**
 * Tools that live outside PATH: NVIDIA's cuobjdump is taken out of Debian's nvidia-cuda-toolkit .deb into a
 * cache folder by scripts/fetch-cuobjdump.sh (which .ci/run calls), or named by OFFLOAD_KIT_CUOBJDUMP.
 */
function knownLocations(name: string): string[] {
  if (name !== "cuobjdump") return [];
  const cacheHome = process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache");
  return [
    ...(process.env.OFFLOAD_KIT_CUOBJDUMP ? [process.env.OFFLOAD_KIT_CUOBJDUMP] : []),
    join(process.env.OFFLOAD_KIT_CACHE ?? join(cacheHome, "offload-kit"), "cuobjdump", "cuobjdump"),
  ];
}

export function nativeTool(name: string): string | undefined {
  if (cache.has(name)) return cache.get(name);
  let found: string | undefined;
  for (const path of knownLocations(name)) {
    try {
      accessSync(path, constants.X_OK);
      found = path;
      break;
    } catch {
      // Not fetched there.
    }
  }
  for (const dir of found === undefined ? (process.env.PATH ?? "").split(delimiter) : []) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      found = join(dir, name);
      break;
    } catch {
      // Not in this directory.
    }
  }
  if (found === undefined && process.env.OFFLOAD_KIT_REQUIRE_NATIVE === "1") {
    throw new Error(`native tool ${name} is required (OFFLOAD_KIT_REQUIRE_NATIVE=1) but not on PATH`);
  }
  cache.set(name, found);
  return found;
}

export function hasNative(name: string): boolean {
  return nativeTool(name) !== undefined;
}

export interface NativeRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
}

export function runNative(name: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: Uint8Array } = {}): NativeRun {
  const result = spawnSync(nativeTool(name) ?? name, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    input: options.input,
    maxBuffer: 1 << 30,
    // A native tool that never ends (19's -list on a damaged text bundle prints forever) is killed, not awaited.
    timeout: HANG_MS,
    killSignal: "SIGKILL",
  });
  return { status: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr.toString("latin1") };
}
