/** Running our CLIs in-process with captured output, for fast CLI tests. */
import type { CliIO } from "../../src/cli/io.js";

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
