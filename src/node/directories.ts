/**
 * Output folders (`--out-dir`) made as `mkdir -p` makes them, and undone when a run wrote nothing in them.
 *
 * Node's `mkdirSync(path, { recursive: true })` retries the parent whenever mkdir says ENOENT, so a place where
 * mkdir always says ENOENT although the parent exists (`/proc/x`) loops for ever, and its other errors carry
 * Node's wording. `makeDirectories` walks up once: each missing level is created at most once, and any error
 * but "the parent is missing" / "it is already there" stops the walk, worded as coreutils' `mkdir -p` words it
 * (`cannot create directory 'a': Not a directory` when `a` is a file on the way, `File exists` when the
 * folder itself is a file).
 */
import { closeSync, mkdirSync, openSync, rmdirSync, statSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { OffloadKitError } from "../engine/errors.js";
import { strerror } from "./errors.js";

function directoryError(path: string, code: string, cause?: unknown): OffloadKitError {
  const text = strerror(cause ?? Object.assign(new Error(code), { code }));
  return new OffloadKitError(code, `cannot create directory '${path}': ${text}`, { cause });
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * `mkdir -p path`: returns the folders it created, outermost first (empty when `path` was already a folder).
 * `intermediate` is set for the levels above the one asked for, where a file in the way is "Not a directory".
 */
export function makeDirectories(path: string, intermediate = false): string[] {
  if (path === "") throw directoryError(path, "ENOENT");
  try {
    mkdirSync(path);
    return [path];
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "EIO";
    if (code === "EEXIST") {
      if (isDirectory(path)) return [];
      throw directoryError(path, intermediate ? "ENOTDIR" : "EEXIST");
    }
    // ENOTDIR: a file somewhere above; the walk up finds which one and names it.
    if (code !== "ENOENT" && code !== "ENOTDIR") throw directoryError(path, code, e);
    const parent = dirname(path);
    if (parent === path) throw directoryError(path, code, e);
    const created = makeDirectories(parent, true);
    try {
      mkdirSync(path);
    } catch (again) {
      const code = (again as NodeJS.ErrnoException).code ?? "EIO";
      if (code === "EEXIST" && isDirectory(path)) return created;
      removeDirectories(created);
      throw directoryError(path, code === "EEXIST" && intermediate ? "ENOTDIR" : code, again);
    }
    return [...created, path];
  }
}

/**
 * Whether files can be created in `path` (an existing folder), found by creating and removing an empty file,
 * since permission bits do not tell (root, read-only mounts, /proc and /sys).
 */
function checkWritableDirectory(path: string): void {
  const probe = join(path, `.offload-kit-probe-${process.pid}.tmp`);
  let fd: number;
  try {
    fd = openSync(probe, "wx", 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "EIO";
    throw new OffloadKitError(code, `cannot write to directory '${path}': ${strerror(e)}`, { cause: e });
  }
  closeSync(fd);
  unlinkSync(probe);
}

/**
 * An output folder (`--out-dir`) ready for files: made as `mkdir -p` makes it and, when `probe`, checked writable
 * (a folder made but not writable, under a umask of 0222 say, is removed again before the error). Returns the
 * folders it made, for `removeDirectories` when the run leaves them empty.
 */
export function prepareOutputDirectory(path: string, probe = true): string[] {
  const created = makeDirectories(path);
  if (!probe) return created;
  try {
    checkWritableDirectory(path);
  } catch (e) {
    removeDirectories(created);
    throw e;
  }
  return created;
}

/** Removes folders `makeDirectories` created, innermost first, leaving any that are no longer empty. */
export function removeDirectories(created: readonly string[]): void {
  for (const path of [...created].reverse()) {
    try {
      rmdirSync(path);
    } catch {
      return; // Something was put there (or it went away): leave it and every folder above it.
    }
  }
}
