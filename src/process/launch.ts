/**
 * What a bin's main thread loads: only this and the supervisor, not the program. The program (`<bin>.main.js`)
 * runs in the supervised worker (src/process/supervisor.ts), or right here when a worker would cost more than
 * it gives:
 *
 * - command lines that only print help or a version;
 * - `offload-kit serve`, which is long-running, asynchronous, and handles its signals itself;
 * - runs whose inputs are regular files of known size, OFFLOAD_KIT_INLINE_BYTES (4 MiB) in all, and that
 *   neither compress nor decompress (no -compress, no file starting with a CCOB: a small CCOB can expand to
 *   gigabytes): a worker costs ~30 ms of CPU to start on Node 20 (measured, README "Signals, pipes and
 *   output files"), more than such a run. Nothing listens for signals there, so a signal ends the process at once by its default
 *   action (no output is put in place; the shell sees 128+N), and the temporary file the run may have had
 *   open is removed by the next run writing in that folder (src/process/temporaries.ts).
 *
 * Every argument that names something is looked at (a stat each; `-x=a,b` and `file=` values included):
 * a folder, a pipe, a device, `-` or a response file sends the run to the worker, as does a total over the
 * limit. Arguments that name nothing (option values, target IDs, outputs not yet there) count for nothing.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { mayNeedZstd } from "../cli/zstd-preload.js";

const TRIVIAL = /^--?(help|help-hidden|help-list|version)$/;
const KIT_MAIN_THREAD = new Set(["serve", "help", "version"]);
const DEFAULT_INLINE_BYTES = 4 * 1024 * 1024;
/** Beyond this many named things, the run is not a small one. */
const MAX_LOOKS = 64;

function inlineLimit(env: NodeJS.ProcessEnv): number {
  const value = Number(env.OFFLOAD_KIT_INLINE_BYTES);
  return env.OFFLOAD_KIT_INLINE_BYTES !== undefined && env.OFFLOAD_KIT_INLINE_BYTES !== "" && Number.isFinite(value) ? value : DEFAULT_INLINE_BYTES;
}

/** The paths an argument may name: the value of `-opt=v`, each comma-separated piece, `key=path` pieces' paths. */
function candidates(arg: string): string[] {
  const value = arg.startsWith("-") && arg !== "-" ? (arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : "") : arg;
  return value.split(",").map((piece) => (piece.includes("=") ? piece.slice(piece.indexOf("=") + 1) : piece)).filter((p) => p !== "");
}

/** Whether every input the arguments name is a regular file, and all of them together are small. */
function smallRun(args: readonly string[], cwd: string, limit: number): boolean {
  if (limit <= 0) return false;
  let total = 0;
  let looks = 0;
  for (const arg of args) {
    if (arg.startsWith("@")) return false;
    for (const path of arg === "-" ? ["-"] : candidates(arg)) {
      if (path === "-") return false;
      if (++looks > MAX_LOOKS) return false;
      const stat = statSync(resolve(cwd, path), { throwIfNoEntry: false });
      if (stat === undefined) continue;
      if (!stat.isFile()) return false;
      total += stat.size;
      if (total > limit) return false;
    }
  }
  return true;
}

export function runsInline(bin: string, args: readonly string[], cwd = process.cwd(), env = process.env): boolean {
  if (args.length === 0 || args.some((arg) => TRIVIAL.test(arg))) return true;
  if (bin === "offload-kit" && KIT_MAIN_THREAD.has(args[0]!)) return true;
  const named = bin === "offload-kit" ? args.slice(1) : args;
  try {
    return smallRun(named, cwd, inlineLimit(env)) && !mayNeedZstd(named, env, cwd);
  } catch {
    // A path we may not look at: the run will say why, supervised.
    return false;
  }
}

/** Runs `program`, the bundled `<bin>.main.js` beside the bin. */
export async function launch(bin: string, program: URL): Promise<void> {
  if (runsInline(bin, process.argv.slice(2))) await import(program.href);
  else (await import("./supervisor.js")).supervise(program);
}
