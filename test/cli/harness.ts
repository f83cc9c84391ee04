/** Running our CLIs in-process with captured output, for fast CLI tests. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import type { CliIO } from "../../src/cli/io.js";

const scratch: string[] = [];
// Registered when a test file imports this module, so each file removes the folders it made.
afterAll(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder under the system temp folder, removed after the test file's tests. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
}

export interface CliRun {
  code: number;
  stdout: Buffer;
  stderr: string;
}

export function captureIO(cwd: string, env: Record<string, string | undefined> = {}): { io: CliIO; result: () => Omit<CliRun, "code"> } {
  const out: Buffer[] = [];
  let err = "";
  return {
    io: {
      stdout: (text) => out.push(typeof text === "string" ? Buffer.from(text, "utf8") : Buffer.from(text)),
      stderr: (text) => {
        err += text;
      },
      env: { ...process.env, ...env },
      cwd,
    },
    result: () => ({ stdout: Buffer.concat(out), stderr: err }),
  };
}

/** Runs `main` with process.cwd() switched to `cwd` (the CLIs resolve relative paths against it). */
export async function runInDir(cwd: string, main: (io: CliIO) => number | Promise<number>, env: Record<string, string | undefined> = {}): Promise<CliRun> {
  const { io, result } = captureIO(cwd, env);
  const previous = process.cwd();
  process.chdir(cwd);
  try {
    const code = await main(io);
    return { code, ...result() };
  } finally {
    process.chdir(previous);
  }
}
