/**
 * What every CLI shares: where output goes (injectable for tests), LLVM-style diagnostics
 * (`<argv0>: error: <message>`, as WithColor::error prints them without a terminal), the program
 * name the native tool would have seen, and the rule that bad input never produces a stack trace.
 */
import { constants as bufferConstants } from "node:buffer";
import { statSync, writeSync } from "node:fs";
import { basename, delimiter, dirname, resolve } from "node:path";
import { isOffloadKitError } from "../engine/errors.js";
import { fileError, strerror } from "../node/errors.js";
import { readExact } from "../engine/source.js";
import { FileSource } from "../node/file-source.js";
import { limitText } from "../node/spool.js";
import { endByBrokenPipe } from "../process/run.js";
import type { ResponseFileReader } from "./args.js";

export interface CliIO {
  stdout(text: string | Uint8Array): void;
  stderr(text: string): void;
  /** Environment variables (defaults to process.env). */
  env: Record<string, string | undefined>;
  cwd: string;
}

/**
 * Standard output and error written synchronously, from whichever thread runs the command (the bins run it
 * in a worker: src/process/supervisor.ts), so their order is kept and a write that fails (a full disk,
 * /dev/full) is an error the run reports (`'-': No space left on device`, exit 1) instead of an unhandled
 * stream 'error' event. A closed pipe (`| head`) ends the run quietly by SIGPIPE, as it ends `ls`.
 */
function writeFd(fd: number, text: string | Uint8Array, onError: (e: unknown) => void): void {
  const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : text;
  let done = 0;
  while (done < bytes.length) {
    try {
      done += writeSync(fd, bytes, done, bytes.length - done);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") continue;
      if (code === "EPIPE") endByBrokenPipe();
      onError(e);
      return;
    }
  }
}

function writeStdout(text: string | Uint8Array): void {
  writeFd(1, text, (e) => {
    throw fileError("-", e);
  });
}

function writeStderr(text: string): void {
  // Nowhere left to report a failure to write the report.
  writeFd(2, text, () => undefined);
}

export function processIO(): CliIO {
  return {
    stdout: writeStdout,
    stderr: writeStderr,
    env: process.env,
    cwd: process.cwd(),
  };
}

/**
 * argv[0] as the shell would have passed it to a native binary: the bare name when the script was
 * found through PATH, the path as typed otherwise. Node only knows the resolved script path.
 */
export function invokedName(scriptPath: string | undefined, fallback: string, env = process.env): string {
  if (!scriptPath) return fallback;
  const dirs = (env.PATH ?? "").split(delimiter).filter(Boolean).map((d) => resolve(d));
  return dirs.includes(resolve(dirname(scriptPath))) ? basename(scriptPath) : scriptPath;
}

export function printError(io: CliIO, argv0: string, message: string): void {
  io.stderr(`${argv0}: error: ${message}\n`);
}

export function printWarning(io: CliIO, argv0: string, message: string): void {
  io.stderr(`${argv0}: warning: ${message}\n`);
}

/**
 * Runs a CLI body: our errors become one diagnostic line and exit 1; anything else is a bug in
 * offload-kit, reported as such (the stack only with OFFLOAD_KIT_DEBUG=1).
 */
export function runGuarded(io: CliIO, argv0: string, body: () => number): number {
  try {
    return body();
  } catch (e) {
    if (isOffloadKitError(e)) {
      printError(io, argv0, e.message);
      return 1;
    }
    const detail = e instanceof Error ? e.message : String(e);
    printError(io, argv0, `internal error in offload-kit: ${detail} (please report it; set OFFLOAD_KIT_DEBUG=1 for details)`);
    if (io.env.OFFLOAD_KIT_DEBUG === "1" && e instanceof Error && e.stack) io.stderr(`${e.stack}\n`);
    return 70;
  }
}

/**
 * The largest response file read: its text must fit one JavaScript string (V8's longest, 2^29 - 24
 * characters, about 512 MiB), so anything larger could not be expanded anyway; `@/dev/zero` stops there
 * instead of reading without end (LLVM reads the whole file, however large).
 */
export const RESPONSE_FILE_LIMIT = bufferConstants.MAX_STRING_LENGTH;

/** Response files (`@file`) as LLVM expands them, read relative to the current directory. */
export function responseFileReader(cwd: string): ResponseFileReader {
  return {
    cwd,
    readFile(path) {
      try {
        if (statSync(path).isDirectory()) return { error: "Is a directory" };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        return { error: strerror(e) };
      }
      let source: FileSource | undefined;
      try {
        source = FileSource.open(path, { limit: RESPONSE_FILE_LIMIT, what: "the response file" });
        return readExact(source, 0, source.size);
      } catch (e) {
        if (!isOffloadKitError(e)) throw e;
        if (e.code === "ENOENT") return undefined;
        if (e.code === "INPUT_TOO_LARGE") return { error: `File too large (more than ${limitText(RESPONSE_FILE_LIMIT)}, the longest text a response file may hold)` };
        return { error: strerror(e.cause) };
      } finally {
        source?.close();
      }
    },
  };
}
