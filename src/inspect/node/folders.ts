/**
 * Folders named on the command line of `check`, `ls`, `sizes` and `extract`: the one walk all four make.
 *
 * Directories are walked as `find DIR` walks them (without -L): a symbolic link named on the command
 * line is followed; inside a walked directory a link to a file counts once, under the first name met
 * below the folder as typed (files are told apart by device and inode, so two links and the file are one
 * input; names stay relative when the folder was), a link to a
 * directory is not entered (`ln -s . self` cannot loop, a link to /usr/lib cannot leave the tree), and
 * a directory or entry that cannot be read is reported and skipped while the walk goes on.
 *
 * `forEachPath` runs a command over what was named: a file named is always an input; a file found in a
 * folder is one only when the command finds offload code in it (its `classify`), else it is skipped
 * (counted, not reported), and a file found that cannot be read is an unreadable entry of the walk.
 */
import { lstatSync, readdirSync, statSync } from "node:fs";
import type { Stats } from "node:fs";
import { fileError } from "../../node/errors.js";

/** A directory or entry a walk could not read. */
export interface WalkError {
  readonly path: string;
  readonly code: string;
  readonly message: string;
}

export interface Walk {
  /** Regular files, each once (`key`: device:inode), in walk order (names sorted, depth first). */
  readonly files: { readonly path: string; readonly key: string }[];
  /** Files met again (a second link, or a directory walked twice in one run), by device:inode. */
  readonly repeats: string[];
  readonly errors: WalkError[];
}

function walkError(path: string, e: unknown): WalkError {
  if ((e as NodeJS.ErrnoException).code === undefined) throw e;
  const error = fileError(path, e);
  return { path, code: error.code, message: error.message };
}

/**
 * The regular files below `dir`, as `find DIR -type f` (without -L) reaches them, except that a link to
 * a file counts under its own name (the first name met); `seen` (device:inode) spans the walks of one run.
 */
export function walkDirectory(dir: string, seen: Set<string> = new Set(), walk: Walk = { files: [], repeats: [], errors: [] }): Walk {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (e) {
    walk.errors.push(walkError(dir, e));
    return walk;
  }
  for (const name of names) {
    // As find names them: under the directory as given (`./lib.so` for `.`), not normalised.
    const path = dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
    let stat: Stats;
    try {
      stat = lstatSync(path);
    } catch (e) {
      walk.errors.push(walkError(path, e));
      continue;
    }
    if (stat.isSymbolicLink()) {
      // A link to a directory is not entered; a dangling link or a loop of links is nothing to check. A link
      // to a file keeps its own name below the folder as typed (`lib/x.so`, not the target's absolute path).
      let target: Stats;
      try {
        target = statSync(path);
      } catch {
        continue;
      }
      if (!target.isFile()) continue;
      stat = target;
    }
    if (stat.isDirectory()) walkDirectory(path, seen, walk);
    else if (stat.isFile()) {
      const key = `${stat.dev}:${stat.ino}`;
      if (seen.has(key)) {
        walk.repeats.push(key);
        continue;
      }
      seen.add(key);
      walk.files.push({ path, key });
    }
  }
  return walk;
}

/**
 * Whether a path named on the command line is a directory, following a link as `find -H` does. A path that
 * cannot be looked at (under a file, a loop of links, behind a folder without search permission) is not:
 * it is taken as a file, whose open then fails with the reason, as a per-file error.
 */
export function namedDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === undefined) throw e;
    return false;
  }
}

/** A file the walk of a named folder found. */
export interface FoundFile {
  /** The folder as named on the command line. */
  readonly folder: string;
  /** device:inode. */
  readonly key: string;
}

/** What a command made of one file found in a folder. */
export type Classified = "input" | "skipped" | { readonly unreadable: { readonly code: string; readonly message: string } };

export interface PathsVisit<T> {
  /** Looks at one file, named (`found` undefined) or found in a folder. Must not report anything yet. */
  readonly inspect: (path: string, found: FoundFile | undefined) => T | Promise<T>;
  /** For a found file: an input (it holds offload code), skipped (it does not), or unreadable. */
  readonly classify: (result: T) => Classified;
  /** Reports an input: every named file, and the found files classified as inputs, in walk order. */
  readonly use: (result: T, path: string, found: FoundFile | undefined) => void | Promise<void>;
}

export interface PathsRun {
  /** Files found in folders that hold no offload code (not inputs). */
  readonly skipped: readonly string[];
  /** Folders named that held no offload file at all (in what could be read). */
  readonly emptyDirectories: readonly string[];
  /** Directories and entries a walk could not read (reported by the caller, skipped). */
  readonly unreadable: readonly WalkError[];
  /** Whether some path named was a folder. */
  readonly folders: boolean;
  /** Files looked at in folders (inputs, skipped and unreadable). */
  readonly lookedAt: number;
  /** Files found in folders that were inputs. */
  readonly found: number;
}

/** Visits the paths named: files as they are, folders by the walk above. */
export async function forEachPath<T>(paths: readonly string[], visit: PathsVisit<T>): Promise<PathsRun> {
  const skipped: string[] = [];
  const emptyDirectories: string[] = [];
  const unreadable: WalkError[] = [];
  const seen = new Set<string>();
  /** Files (device:inode) found to be inputs, so a directory walked again still counts them. */
  const offloadKeys = new Set<string>();
  let folders = false;
  let lookedAt = 0;
  let inputs = 0;
  for (const path of paths) {
    if (!namedDirectory(path)) {
      await visit.use(await visit.inspect(path, undefined), path, undefined);
      continue;
    }
    folders = true;
    const walk = walkDirectory(path, seen);
    unreadable.push(...walk.errors);
    let found = walk.repeats.filter((key) => offloadKeys.has(key)).length;
    for (const { path: file, key } of walk.files) {
      const where = { folder: path, key };
      const result = await visit.inspect(file, where);
      const classified = visit.classify(result);
      lookedAt++;
      // In a folder, only files that hold offload code are inputs (a host-only library is not), and a file
      // that cannot be read is an unreadable entry of the walk, as find reports it.
      if (classified === "skipped") skipped.push(file);
      else if (classified !== "input") unreadable.push({ path: file, ...classified.unreadable });
      else {
        await visit.use(result, file, where);
        offloadKeys.add(key);
        found++;
        inputs++;
      }
    }
    if (found === 0) emptyDirectories.push(path);
  }
  return { skipped, emptyDirectories, unreadable, folders, lookedAt, found: inputs };
}

/**
 * A file found in `folder`, as one safe file name for outputs: its path below the folder, each `/` made `_`
 * (`sub/libfoo.so` gives `sub_libfoo.so`, a file at the top keeps its own name, as when named), control
 * characters and `\` made `_` too. A single component that is a file's name or starts with a folder's, so
 * never `.`, `..` or a path: outputs named after it stay in the output folder.
 */
export function flattenFoundPath(folder: string, file: string): string {
  const prefix = folder.endsWith("/") ? folder : `${folder}/`;
  // A linked file is found under its target, which may lie outside the folder: then its own name is used.
  const below = file.startsWith(prefix) ? file.slice(prefix.length) : file.slice(file.lastIndexOf("/") + 1);
  // eslint-disable-next-line no-control-regex
  return below.replace(/[/\\\u0000-\u001f\u007f]/g, "_");
}
