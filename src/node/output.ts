/**
 * Atomic outputs. Every output is written to a temporary file beside its destination and put in place
 * only when the whole job has succeeded, so a failure (bad input, full disk, a signal) leaves no partial
 * or truncated output, and existing files stay as they were. "-" writes to stdout, as in LLVM's
 * raw_fd_ostream, and cannot be undone. Temporary files are registered with src/process/temporaries.ts:
 * a signal removes them, and a run removes those a killed process left in the folder it writes to.
 *
 * An existing destination is treated as the native tool treats it. Tools that write through
 * raw_fd_ostream (clang-offload-bundler, the wrappers: `replace: "in-place"`, the default) open it for
 * writing, so: a file the user may not write is refused (`'<path>': Permission denied`; root may), the file
 * keeps its mode and owner, and its other hard links see the new bytes. We check the open first, give the
 * temporary file the destination's mode and owner, and at commit rename it over the destination, or, when
 * the destination has other links, copy it into the destination's inode. Tools that write
 * through FileOutputBuffer (clang-offload-packager: `replace: "rename"`) rename a new file (mode 0666 less
 * the umask) over whatever is there, as we do. An output that is also an input is fine: inputs are read
 * before the output is put in place.
 *
 * Hostile destinations: a symbolic link is refused (renaming over it would replace the link, writing
 * through it would overwrite whatever it points at); an existing device, FIFO or socket (/dev/null,
 * /dev/full) is written in place as LLVM does, never renamed over.
 *
 * Crash safety: whatever moment the process dies (SIGKILL, a power cut), each destination holds its original
 * bytes or the complete new ones, and all names of a hard-linked file agree. A group's commit
 * (`commitOutputs`): first every temporary file is made complete and durable (flushed, the destination's
 * extended attributes and ACLs copied onto it (./attributes.ts), fsync) — a signal here still undoes the run;
 * then, under the commit lock (src/process/temporaries.ts), each is put in place: renamed over the destination
 * and the folder fsynced, or, for a destination whose inode is kept (other hard links, or a folder that
 * refuses new files: the temporary file then waits in `copyOnlyFolder()`, not beside it), journalled and
 * copied in (./journal.ts: the journal names the complete copy, so a crash during the copy is finished by
 * the next run or `offload-kit recover`). From the commit on, a signal no longer reports the run as
 * interrupted (the edit is made).
 */
import { closeSync, constants, fchmodSync, fchownSync, fsyncSync, lstatSync, openSync, renameSync, statSync, writeSync } from "node:fs";
import type { Stats } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { OffloadKitError } from "../engine/errors.js";
import { commitOutputs, createTemporary, markCommitted, removeTemporary, settleTemporary } from "../process/temporaries.js";
import { capabilityOf, firstMissingToolWarning, readAttributes, writeAttributes } from "./attributes.js";
import { fileError } from "./errors.js";
import { copyOnlyFolder, fsyncFolder, rollForward, writeJournal } from "./journal.js";

let counter = 0;

const ZEROS = new Uint8Array(64 * 1024);

export interface OutputOptions {
  /**
   * Collect small writes in a buffer of this many bytes and write it when full (and before close): for
   * outputs made of many small pieces (an archive's member headers and payloads), one system call per
   * buffer instead of two per member. Default: none, every write goes straight to the file.
   */
  readonly bufferSize?: number;
  /**
   * How an existing destination is replaced: "in-place" as raw_fd_ostream (needs write permission on it,
   * keeps its mode, owner and hard links; the default) or "rename" as FileOutputBuffer (a new file).
   */
  readonly replace?: "in-place" | "rename";
  /**
   * "-" is a file of that name rather than stdout: llvm-offload-wrapper 22 writes through FileOutputBuffer,
   * which does not know "-" (`-o -` makes a file `-`). Default: false.
   */
  readonly dashIsFile?: boolean;
}

/** Errors creating a file beside the destination that writing into the destination itself may not have. */
const FOLDER_REFUSED = new Set(["EACCES", "EPERM", "EROFS"]);

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
  /** The destination is kept (its inode written at commit) rather than renamed over. */
  private readonly inPlace: boolean;
  /** What to remove if the job fails: the temporary file, or the folder holding it (see `besideRefused`). */
  private readonly temporary: string | undefined;
  /** The temporary file is not beside the destination (its folder refused it): commit copies, never renames. */
  private copyOnly = false;
  /** The destination replaced as raw_fd_ostream replaces it (in place, an existing file): its attributes are kept. */
  private readonly existing: Stats | undefined;
  /** Set by `prepare`: the destination's inode is written (journalled) rather than renamed over. */
  private copyIn = false;

  constructor(readonly path: string, options: OutputOptions = {}) {
    this.buffer = options.bufferSize ? new Uint8Array(options.bufferSize) : undefined;
    this.inPlace = (options.replace ?? "in-place") === "in-place";
    if (path === "-" && options.dashIsFile !== true) {
      this.tempPath = undefined;
      this.temporary = undefined;
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
      this.temporary = undefined;
      try {
        this.fd = openSync(path, "w");
      } catch (e) {
        throw fileError(path, e);
      }
      this.ownsFd = true;
      return;
    }
    const keep = this.inPlace && existing !== undefined && existing.isFile() ? existing : undefined;
    if (keep !== undefined) {
      // raw_fd_ostream opens the destination for writing: refused as it would refuse it (not truncated here).
      try {
        closeSync(openSync(path, constants.O_WRONLY));
      } catch (e) {
        throw fileError(path, e);
      }
    }
    this.existing = keep;
    const name = `.${basename(path)}.offload-kit-${process.pid}-${++counter}.tmp`;
    let tempPath = resolve(dirname(path), name);
    let fd: number;
    try {
      fd = createTemporary(tempPath, () => openSync(tempPath, "wx", 0o666));
    } catch (e) {
      if (keep === undefined || !FOLDER_REFUSED.has((e as NodeJS.ErrnoException).code ?? "")) throw fileError(path, e);
      // A file we may write in a folder we may not: the bytes wait in a folder that survives a reboot (the
      // journal's copy must), then are copied in.
      removeTemporary(tempPath);
      const waiting = resolve(copyOnlyFolder(), name);
      tempPath = waiting;
      this.copyOnly = true;
      try {
        fd = createTemporary(waiting, () => openSync(waiting, "wx", 0o600));
      } catch (inner) {
        removeTemporary(waiting);
        throw fileError(path, inner);
      }
      this.temporary = tempPath;
      this.tempPath = tempPath;
      this.fd = fd;
      return;
    }
    this.tempPath = tempPath;
    this.temporary = tempPath;
    this.fd = fd;
    if (keep !== undefined) {
      try {
        // Only root may give a file away; for others this is the owner the file already has, or an error we
        // ignore. Before the mode: a change of owner clears set-user-ID and set-group-ID bits.
        if (keep.uid !== process.getuid?.() || keep.gid !== process.getgid?.()) fchownSync(fd, keep.uid, keep.gid);
      } catch {
        // The destination gets the owner the system let us give the temporary file.
      }
      fchmodSync(fd, keep.mode & 0o7777);
    }
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
    return this.tempPath !== undefined;
  }

  /** Closes the temporary file and puts it in place (renamed, or copied into a destination that is kept). */
  commit(): void {
    commitAll([this]);
  }

  /** Finishes the writing: false when there is nothing to put in place (stdout, a device, already settled). */
  beginCommit(): boolean {
    try {
      if (!this.done) this.flush();
    } catch (e) {
      this.discard();
      throw e;
    }
    return this.settle();
  }

  /**
   * Decides how the output goes in place: copied into the destination's inode (`copyIn`), or renamed over
   * it, then with the attributes of `attributesOf` (an existing file replaced as raw_fd_ostream replaces it).
   */
  plan(): { readonly copyIn: boolean; readonly attributesOf: string | undefined } {
    this.copyIn = this.copyOnly || (this.inPlace && hasOtherLinks(this.path));
    return { copyIn: this.copyIn, attributesOf: this.existing !== undefined && !this.copyIn ? resolve(this.path) : undefined };
  }

  /** Makes the temporary file durable (after its attributes were set), and closes it. */
  makeDurable(): void {
    const temp = this.tempPath!;
    try {
      const fd = this.fdOpen ? this.fd : openSync(temp, "r");
      this.fdOpen = false;
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch (e) {
      throw fileError(this.path, e);
    }
  }

  /**
   * Puts the durable temporary file in place; called under the commit lock. A journalled copy that fails
   * after its journal was written keeps the copy (the destination needs it) and says how to finish.
   */
  putInPlace(capability: string | null, warn: (message: string) => void): void {
    const temp = this.tempPath!;
    let journal: string | undefined;
    try {
      settleTemporary(this.temporary!, () => {
        if (this.copyIn) {
          // Into the destination's own inode, as raw_fd_ostream writes: its other names see the new bytes.
          const stat = statSync(this.path);
          if (!stat.isFile()) throw new Error("not a regular file any more");
          const entry = { destination: resolve(this.path), copy: temp, size: statSync(temp).size, dev: stat.dev, ino: stat.ino, capability };
          journal = writeJournal(entry);
          markCommitted();
          rollForward(entry, journal, warn);
        } else {
          renameSync(temp, this.path);
          markCommitted();
          fsyncFolder(dirname(resolve(this.path)));
        }
      });
    } catch (e) {
      if (journal === undefined) {
        removeTemporary(this.temporary!);
        throw fileError(this.path, e);
      }
      const why = fileError(this.path, e).message;
      throw new OffloadKitError("IO_ERROR", `${why}; the new content is kept in '${temp}' (journal '${journal}'): run 'offload-kit recover ${dirname(journal)}' to finish`, { cause: e });
    }
  }

  /** Closes and removes the temporary file; the destination is untouched. */
  discard(): void {
    if (!this.settle()) return;
    this.release();
  }

  /** Closes and removes the temporary file of an output already settled. */
  release(): void {
    try {
      if (this.fdOpen) closeSync(this.fd);
    } catch {
      // Already closed: nothing else to release.
    }
    this.fdOpen = false;
    removeTemporary(this.temporary!);
  }
}

function warnOnStderr(message: string): void {
  try {
    writeSync(2, `offload-kit: warning: ${message}\n`);
  } catch {
    // No stderr to say it on.
  }
}

/**
 * Commits outputs together: all made durable with their attributes first (a failure or a signal there undoes
 * them all), then all put in place under one hold of the commit lock (see the module docblock).
 */
export function commitAll(files: readonly OutputFile[], warn: (message: string) => void = warnOnStderr): void {
  const ready = files.filter((file) => file.beginCommit());
  if (ready.length === 0) return;
  let capabilities = new Map<string, string | null>();
  try {
    const sources = new Map<string, OutputFile>();
    const inodes: string[] = [];
    for (const file of ready) {
      const { copyIn, attributesOf } = file.plan();
      if (attributesOf !== undefined) sources.set(attributesOf, file);
      // Kept inodes keep their attributes; only security.capability, which the write clears, is put back.
      else if (copyIn) inodes.push(resolve(file.path));
    }
    const all = [...sources.keys(), ...inodes];
    const attributes = all.length === 0 ? new Map<string, readonly string[]>() : readAttributes(all);
    if (attributes === undefined) {
      if (firstMissingToolWarning()) warn("getfattr (the attr package) is not installed: extended attributes, ACLs and file capabilities of replaced files are not kept");
    } else {
      const targets = new Map([...sources].map(([path, file]) => [path, file.tempPath!]));
      const failed = writeAttributes(attributes, targets);
      if (failed !== undefined) warn(`some extended attributes could not be kept: ${failed}`);
      capabilities = new Map(inodes.map((path) => [path, capabilityOf(attributes.get(path))]));
    }
    for (const file of ready) file.makeDurable();
  } catch (e) {
    for (const file of ready) file.release();
    throw e;
  }
  commitOutputs(() => {
    let at = 0;
    try {
      for (; at < ready.length; at++) ready[at]!.putInPlace(capabilities.get(resolve(ready[at]!.path)) ?? null, warn);
    } catch (e) {
      for (const file of ready.slice(at + 1)) file.release();
      throw e;
    }
  });
}

function hasOtherLinks(path: string): boolean {
  try {
    const stat = lstatSync(path);
    return stat.isFile() && stat.nlink > 1;
  } catch {
    return false;
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
    commitAll(files);
    return result;
  } catch (e) {
    for (const file of files) file.discard();
    throw e;
  }
}
