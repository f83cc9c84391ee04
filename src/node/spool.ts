/**
 * Inputs that cannot be read at an offset (standard input, pipes, FIFOs, character devices, sockets,
 * `/dev/stdin`, a shell's `<(...)`) are copied once, as a stream, into a temporary file that is then read
 * like any other: the formats need random access, and `fstat` gives such inputs no size (a pipe says 0).
 * This module is the only place that copies such a stream, and where the run's temporary folders are made.
 *
 * Temporary folders live in os.tmpdir() as `offload-kit-<pid>-<what>-XXXXXX`, registered with
 * src/process/temporaries.ts, so a signal removes them and a later run removes those of a killed process.
 *
 * A stream is copied up to a limit, never to its end whatever it is: `/dev/zero`, `/dev/urandom` or a FIFO
 * whose writer never stops would otherwise fill the disk. The limit is `STREAM_LIMIT` (16 GiB: twelve times
 * librocsparse0's 1.3 GB library, the largest offload file we know, and more than the native tools hold,
 * since they read a stream into memory), or `OFFLOAD_KIT_MAX_STREAM` in its place (bytes, K/M/G/T suffixes,
 * powers of 1024, or `unlimited`); a caller with a format's limit (a replacement code object: 4 GiB) takes
 * the lower of its own and the variable's. The copy stops at the
 * first chunk past it, its temporary file removed, with an error naming the stream and the limit.
 */
import { closeSync, mkdtempSync, openSync, readSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OffloadKitError } from "../engine/errors.js";
import { parseDecompressionLimit } from "../packages/budget.js";
import { createNamedTemporary, removeTemporary } from "../process/temporaries.js";
import { fileError } from "./errors.js";

/** The most bytes a stream is copied to disk by default (see above for why 16 GiB). */
export const STREAM_LIMIT = 16 * 1024 ** 3;

/**
 * The limit a stream is spooled under: `OFFLOAD_KIT_MAX_STREAM` if set, else STREAM_LIMIT; with a caller's
 * own limit (`wanted`), the lower of it and the variable.
 */
export function streamLimit(wanted?: number): number {
  const set = parseDecompressionLimit(process.env.OFFLOAD_KIT_MAX_STREAM, "OFFLOAD_KIT_MAX_STREAM");
  if (wanted === undefined) return set ?? STREAM_LIMIT;
  return Math.min(wanted, set ?? Infinity);
}

/** `16 GiB (17179869184 bytes)`: a limit as messages state it. */
export function limitText(limit: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let unit = 0;
  while (unit < units.length - 1 && limit >= 1024 ** (unit + 1) && limit % 1024 ** (unit + 1) === 0) unit++;
  return unit === 0 ? `${limit} bytes` : `${limit / 1024 ** unit} ${units[unit]} (${limit} bytes)`;
}

/** A new empty folder for this run's temporary files; `remove` deletes it and everything in it. */
export function temporaryFolder(what: string): { readonly path: string; remove(): void } {
  const parent = tmpdir();
  const path = createNamedTemporary(parent, () => mkdtempSync(join(parent, `offload-kit-${process.pid}-${what}-`)));
  return { path, remove: () => removeTemporary(path) };
}

export interface Spool {
  /** Open for reading and writing; the caller closes it. */
  readonly fd: number;
  readonly size: number;
  /** Removes the spooled copy (after closing `fd`). */
  remove(): void;
}

const CHUNK = 1 << 20;

/**
 * Copies the stream `input` (already open) to its end into a temporary file; `name` is for messages,
 * `what` says what the stream is for in the error past `limit` bytes (default "the input").
 */
export function spoolStream(input: number, name: string, limit: number = streamLimit(), what = "the input"): Spool {
  const folder = temporaryFolder("spool");
  const path = join(folder.path, "input");
  let fd: number | undefined;
  try {
    fd = openSync(path, "w+", 0o600);
    const chunk = new Uint8Array(CHUNK);
    let size = 0;
    for (;;) {
      let n: number;
      try {
        n = readSync(input, chunk, 0, chunk.length, null);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        // A non-blocking descriptor inherited from the parent: wait for data by asking again.
        if (code === "EAGAIN") continue;
        if (code === "EOF") break;
        throw fileError(name, e);
      }
      if (n === 0) break;
      if (size + n > limit) {
        throw new OffloadKitError("INPUT_TOO_LARGE",
          `'${name}': ${what} is a stream (pipe, FIFO, device) that gave more than ${limitText(limit)}, the most it may be; it was not read further` +
            (what === "the input" ? " (OFFLOAD_KIT_MAX_STREAM sets the limit)" : ""), { offset: limit, field: what });
      }
      let done = 0;
      while (done < n) {
        try {
          done += writeSync(fd, chunk, done, n - done, size + done);
        } catch (e) {
          throw fileError(path, e);
        }
      }
      size += n;
    }
    return { fd, size, remove: folder.remove };
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    folder.remove();
    throw e;
  }
}
