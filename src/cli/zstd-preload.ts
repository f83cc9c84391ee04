/**
 * Whether a command line may need libzstd, so its bin can load it before the (synchronous) run:
 * -compress (or OFFLOAD_BUNDLER_COMPRESS=1), or an argument naming a file that starts with the CCOB
 * magic. Only a speed-up: a run that needs zstd without it being loaded gets it on a helper worker
 * (src/compress/node/codecs.ts). Checking costs a stat and a 4-byte read per file-like argument.
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { resolve } from "node:path";

function startsWithCcob(path: string, cwd: string, directories: boolean): boolean {
  try {
    const full = resolve(cwd, path);
    const stat = statSync(full, { throwIfNoEntry: false });
    if (stat !== undefined && stat.isDirectory()) return directories;
    if (stat === undefined || !stat.isFile() || stat.size < 20) return false;
    const fd = openSync(full, "r");
    try {
      const head = Buffer.alloc(4);
      return readSync(fd, head, 0, 4, 0) === 4 && head.toString("latin1") === "CCOB";
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

export interface PreloadOptions {
  /** Look at no more than this many paths (a batch of thousands is homogeneous; its first files tell). */
  readonly sample?: number;
  /** A directory argument counts as "may need it" (commands that walk folders). */
  readonly directories?: boolean;
}

export function mayNeedZstd(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  options: PreloadOptions = {},
): boolean {
  if (env.OFFLOAD_BUNDLER_COMPRESS === "1" && env.OFFLOAD_BUNDLER_IGNORE_ENV_VAR !== "1") return true;
  let budget = options.sample ?? Infinity;
  for (const arg of args) {
    if (/^--?compress(=|$)/.test(arg)) return true;
    const value = arg.startsWith("-") ? arg.slice(arg.indexOf("=") + 1 || arg.length) : arg;
    for (const path of value.split(",")) {
      if (path === "") continue;
      if (budget-- <= 0) return false;
      if (startsWithCcob(path, cwd, options.directories ?? false)) return true;
    }
  }
  return false;
}
