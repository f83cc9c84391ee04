/**
 * Whole-process tests of the built bins (dist/bin, `npm run build` first) next to the native tools, run
 * through bash so that pipes, FIFOs, `/dev/stdin`, `<(...)` and PIPESTATUS are the shell's own.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { hasNative, nativeTool } from "../native.js";
import { HANG_MS } from "../limits.js";

export const BIN = new URL("../../dist/bin/", import.meta.url).pathname;

/**
 * What a run left in a folder it used as TMPDIR, less Node's own module compile cache (Node 22.1+ makes
 * `node-compile-cache` there for the bins, see scripts/bundle-bins.mjs): nothing of offload-kit's may stay.
 */
export function leftovers(folder: string): string[] {
  return readdirSync(folder).filter((name) => name !== "node-compile-cache");
}

export type Tool = "offload-bundler" | "offload-packager" | "offload-wrapper" | "offload-kit";

/** Our bin as a shell word: `node /…/dist/bin/<tool>.js`. */
export function ours(tool: Tool): string {
  return `${quote(process.execPath)} ${quote(`${BIN}${tool}.js`)}`;
}

/**
 * A native tool as a shell word, or undefined when absent (a failure under OFFLOAD_KIT_REQUIRE_NATIVE=1).
 * clang-offload-bundler is started from its real path, as it finds llvm-objcopy beside itself.
 */
export function native(name: "clang-offload-bundler-19" | "clang-offload-packager-19" | "clang-offload-wrapper-14" | "llvm-offload-wrapper-22"): string | undefined {
  if (!hasNative(name)) return undefined;
  if (name === "clang-offload-bundler-19" && existsSync("/usr/lib/llvm-19/bin/clang-offload-bundler")) return "/usr/lib/llvm-19/bin/clang-offload-bundler";
  return nativeTool(name);
}

export function quote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

export interface ShellRun {
  status: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs `script` with bash in `cwd` (NODE_EXTRA_CA_CERTS dropped: it only slows every Node start). */
export function bash(script: string, cwd: string, env: Record<string, string> = {}): ShellRun {
  const environment: Record<string, string | undefined> = { ...process.env, ...env };
  delete environment.NODE_EXTRA_CA_CERTS;
  const result = spawnSync("bash", ["-c", script], { cwd, env: environment, timeout: HANG_MS, maxBuffer: 256 * 1024 * 1024 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr.toString("utf8") };
}
