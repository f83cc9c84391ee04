/**
 * Atomic outputs. Every output is written to a temporary file beside its destination and renamed
 * over it only when the whole job has succeeded, so a failure (bad input, full disk, Ctrl-C) leaves
 * no partial or truncated output, and existing files stay as they were. "-" writes to stdout, as in
 * LLVM's raw_fd_ostream, and cannot be undone.
 *
 * Hostile destinations: a symbolic link is refused (renaming over it would replace the link, writing
 * through it would overwrite whatever it points at); an existing device, FIFO or socket (/dev/null,
 * /dev/full) is written in place as LLVM does, never renamed over; and a destination that is one of
 * the run's input files is refused before anything is renamed into place.
 */
import { closeSync, lstatSync, openSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import type { Stats } from "node:fs";
import { basename, dirname, join } from "node:path";
import { OffloadKitError } from "../engine/errors.js";
import { fileError } from "./errors.js";
import { isOpenedInput } from "./file-source.js";

let counter = 0;
const pending = new Set<OutputFile>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const file of pending) file.discard();
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      for (const file of pending) file.discard();
      process.kill(process.pid, signal);
    });
  }
}

const ZEROS = new Uint8Array(64 * 1024);

export interface OutputOptions {
  /**
   * Collect small writes in a buffer of this many bytes and write it when full (and before close): for
   * outputs made of many small pieces (an archive's member headers and payloads), one system call per
   * buffer instead of two per member. Default: none, every write goes straight to the file.
   */
  readonly bufferSize?: number;
  /**
   * "-" is a file of that name rather than stdout: llvm-offload-wrapper 22 writes through FileOutputBuffer,
   * which does not know "-" (`-o -` makes a file `-`). Default: false.
   */
  readonly dashIsFile?: boolean;
}

export class OutputFile {
  readonly tempPath: string | undefined;
  private fd: number;
  /** Bytes written so far (buffered ones included). */
  position = 0;
  private done = false;
  private fdOpen = true;
  /** A device opened in place: closed when settled, never renamed. */
  private ownsFd = false;
  private readonly buffer: Uint8Array | undefined;
  /** Bytes at the start of `buffer` not yet written: they belong at file offset position - buffered. */
  private buffered = 0;

  constructor(readonly path: string, options: OutputOptions = {}) {
    this.buffer = options.bufferSize ? new Uint8Array(options.bufferSize) : undefined;
    if (path === "-" && options.dashIsFile !== true) {
      this.tempPath = undefined;
      this.fd = 1;
      return;
    }
    let existing: Stats | undefined;
    try {
      existing = lstatSync(path);
    } catch {
      // Nothing there yet (or nothing we may look at: opening the temporary file will say so).
    }
    if (existing?.isSymbolicLink()) {
      const cause = new Error("refusing to write through a symbolic link");
      throw new OffloadKitError("OUTPUT_IS_SYMLINK", `'${path}': ${cause.message}`, { field: "output", cause });
    }
    if (existing !== undefined && !existing.isFile() && !existing.isDirectory()) {
      // A device or pipe: renaming a file over it would replace it (as root, /dev/null itself).
      this.tempPath = undefined;
      try {
        this.fd = openSync(path, "w");
      } catch (e) {
        throw fileError(path, e);
      }
      this.ownsFd = true;
      return;
    }
    installExitHook();
    this.tempPath = join(dirname(path), `.${basename(path)}.offload-kit-${process.pid}-${++counter}.tmp`);
    try {
      this.fd = openSync(this.tempPath, "wx", 0o666);
    } catch (e) {
      throw fileError(path, e);
    }
    pending.add(this);
  }

  write(bytes: Uint8Array): void {
    const room = this.reserve(bytes.length);
    if (room !== undefined) {
      room.set(bytes);
      this.advance(bytes.length);
      return;
    }
    this.flush();
    this.writeOut(bytes, this.position);
    this.position += bytes.length;
  }

  /**
   * Room for the next `length` bytes in the buffer (flushing it first if it is too full), for a caller
   * to fill in place and then `advance` over; undefined when unbuffered or `length` does not fit.
   */
  reserve(length: number): Uint8Array | undefined {
    const buffer = this.buffer;
    if (buffer === undefined || length > buffer.length) return undefined;
    if (length > buffer.length - this.buffered) this.flush();
    return buffer.subarray(this.buffered, this.buffered + length);
  }

  /** Counts `length` bytes of the room `reserve` gave as written. */
  advance(length: number): void {
    this.buffered += length;
    this.position += length;
  }

  /** Writes what the buffer holds. */
  flush(): void {
    if (this.buffered === 0) return;
    this.writeOut(this.buffer!.subarray(0, this.buffered), this.position - this.buffered);
    this.buffered = 0;
  }

  private writeOut(bytes: Uint8Array, at: number): void {
    let done = 0;
    while (done < bytes.length) {
      try {
        done += writeSync(this.fd, bytes, done, bytes.length - done, this.tempPath === undefined ? null : at + done);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "EAGAIN") continue;
        throw fileError(this.path, e);
      }
    }
  }

  writeZeros(count: number): void {
    while (count > 0) {
      const n = Math.min(count, ZEROS.length);
      this.write(ZEROS.subarray(0, n));
      count -= n;
    }
  }

  /** Overwrites bytes already written (a header known only at the end); files only, not stdout. */
  writeAt(bytes: Uint8Array, position: number): void {
    this.flush();
    if (this.tempPath === undefined || position + bytes.length > this.position) {
      throw new Error("OutputFile.writeAt: only bytes already written to a file can be overwritten");
    }
    let done = 0;
    while (done < bytes.length) {
      try {
        done += writeSync(this.fd, bytes, done, bytes.length - done, position + done);
      } catch (e) {
        throw fileError(this.path, e);
      }
    }
  }

  /**
   * Closes the temporary file now, finished; `commit` still renames it into place. Lets a job with many
   * outputs hold one descriptor at a time instead of one per output until the end.
   */
  close(): void {
    if (this.done || !this.fdOpen || this.tempPath === undefined) return;
    this.flush();
    this.fdOpen = false;
    try {
      closeSync(this.fd);
    } catch (e) {
      throw fileError(this.path, e);
    }
  }

  /** Marks the output finished; true when there is a temporary file left to settle. */
  private settle(): boolean {
    if (this.done) return false;
    this.done = true;
    if (this.ownsFd) closeSync(this.fd);
    if (this.tempPath === undefined) return false;
    pending.delete(this);
    return true;
  }

  /** Refuses a destination that is one of the run's inputs (sys::fs::equivalent), before anything is renamed. */
  checkDestination(): void {
    if (this.done || this.tempPath === undefined) return;
    let stat: Stats;
    try {
      stat = statSync(this.path);
    } catch {
      return;
    }
    if (isOpenedInput(stat)) {
      throw new OffloadKitError("OUTPUT_IS_INPUT", `'${this.path}': the output file is one of the input files`, { field: "output" });
    }
  }

  /** Closes the temporary file and renames it over the destination. */
  commit(): void {
    try {
      this.checkDestination();
      if (!this.done) this.flush();
    } catch (e) {
      this.discard();
      throw e;
    }
    if (!this.settle()) return;
    try {
      if (this.fdOpen) closeSync(this.fd);
      renameSync(this.tempPath!, this.path);
    } catch (e) {
      this.unlinkTemp();
      throw fileError(this.path, e);
    }
  }

  /** Closes and removes the temporary file; the destination is untouched. */
  discard(): void {
    if (!this.settle()) return;
    try {
      if (this.fdOpen) closeSync(this.fd);
    } catch {
      // Already closed: nothing else to release.
    }
    this.unlinkTemp();
  }

  private unlinkTemp(): void {
    try {
      unlinkSync(this.tempPath!);
    } catch {
      // The temporary file is gone already.
    }
  }
}

/**
 * A group of outputs that succeed or fail together: `run` creates them through `open`; they are
 * renamed into place only if `run` returns, and all discarded if it throws.
 */
export function withOutputs<T>(run: (open: (path: string, options?: OutputOptions) => OutputFile) => T): T {
  const files: OutputFile[] = [];
  try {
    const result = run((path, options) => {
      const file = new OutputFile(path, options);
      files.push(file);
      return file;
    });
    for (const file of files) file.checkDestination();
    for (const file of files) file.commit();
    return result;
  } catch (e) {
    for (const file of files) file.discard();
    throw e;
  }
}
