/**
 * Twin directories for the offload binary drop-ins' differential tests (offload-packager against
 * clang-offload-packager-19, offload-binary against llvm-offload-binary-22): each run, ours in-process or the
 * native tool by its bare name (so argv[0], and with it every message, matches), gets a fresh directory
 * holding the same inputs, and its outcome is the exit code, stdout, stderr and every file left there.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import type { CliIO } from "../../src/cli/io.js";
import { runInDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";

export interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  files: Record<string, string>;
}

/** Every regular file below `dir` with its bytes, as hex (directories by name). */
export function snapshot(dir: string, prefix = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) Object.assign(out, snapshot(path, `${prefix}${name}/`));
    else out[prefix + name] = readFileSync(path).toString("hex");
  }
  return out;
}

export interface TwinDirs {
  /** A fresh directory with the inputs (and `extra`) and an empty `sub/`. */
  freshDir(extra?: Record<string, Uint8Array>): string;
  ours(args: string[], extra?: Record<string, Uint8Array>): Promise<Outcome>;
  native(args: string[], extra?: Record<string, Uint8Array>): Outcome;
}

/** Runs of `tool` (native) and `run` (ours, called with the native name as argv[0]) over `inputs`; removed after the file's tests. */
export function twinDirs(tool: string, inputs: Record<string, Uint8Array>, run: (argv0: string, args: string[], io: CliIO) => number): TwinDirs {
  const root = mkdtempSync(join(tmpdir(), `offload-kit-${tool}-`));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let counter = 0;
  const freshDir = (extra: Record<string, Uint8Array> = {}): string => {
    const dir = join(root, `run${++counter}`);
    mkdirSync(dir);
    mkdirSync(join(dir, "sub"));
    for (const [name, bytes] of Object.entries({ ...inputs, ...extra })) writeFileSync(join(dir, name), bytes);
    return dir;
  };
  return {
    freshDir,
    async ours(args, extra = {}) {
      const dir = freshDir(extra);
      const r = await runInDir(dir, (io) => run(tool, args, io));
      return { code: r.code, stdout: r.stdout.toString("latin1"), stderr: r.stderr, files: snapshot(dir) };
    },
    native(args, extra = {}) {
      const dir = freshDir(extra);
      const r = spawnSync(tool, args, { cwd: dir, timeout: HANG_MS });
      return { code: r.status, stdout: r.stdout.toString("latin1"), stderr: r.stderr.toString("latin1"), files: snapshot(dir) };
    },
  };
}
