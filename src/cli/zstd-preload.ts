/**
 * Whether a command line may need libzstd, so its bin can load it before the (synchronous) run:
 * -compress (or OFFLOAD_BUNDLER_COMPRESS=1), or an argument naming a file that starts with the CCOB
 * magic. Only a speed-up: a run that needs zstd without it being loaded gets it on a helper worker
 * (src/node/codecs.ts). Checking costs a stat and a 4-byte read per file-like argument.
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { resolve } from "node:path";

function startsWithCcob(path: string, cwd: string): boolean {
  try {
    const full = resolve(cwd, path);
    const stat = statSync(full, { throwIfNoEntry: false });
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

export function mayNeedZstd(args: readonly string[], env: Readonly<Record<string, string | undefined>>, cwd: string): boolean {
  if (env.OFFLOAD_BUNDLER_COMPRESS === "1" && env.OFFLOAD_BUNDLER_IGNORE_ENV_VAR !== "1") return true;
  for (const arg of args) {
    if (/^--?compress(=|$)/.test(arg)) return true;
    const value = arg.startsWith("-") ? arg.slice(arg.indexOf("=") + 1 || arg.length) : arg;
    for (const path of value.split(",")) if (path !== "" && startsWithCcob(path, cwd)) return true;
  }
  return false;
}
