/**
 * Inputs that cannot be read at an offset (standard input, pipes, FIFOs, character devices, sockets,
 * `/dev/stdin`, a shell's `<(...)`) are copied once, as a stream, into a temporary file that is then read
 * like any other: the formats need random access, and `fstat` gives such inputs no size (a pipe says 0).
 * This module is the only place that copies such a stream, and where the run's temporary folders are made.
 *
 * Temporary folders live in os.tmpdir() as `offload-kit-<pid>-<what>-XXXXXX`, registered with
 * src/process/temporaries.ts, so a signal removes them and a later run removes those of a killed process.
 */
import { closeSync, mkdtempSync, openSync, readSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNamedTemporary, removeTemporary } from "../process/temporaries.js";
import { fileError } from "./errors.js";

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

/** Copies the stream `input` (already open) to its end into a temporary file; `name` is for messages. */
export function spoolStream(input: number, name: string): Spool {
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
