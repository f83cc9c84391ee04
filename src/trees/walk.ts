/**
 * The walk of a folder that `prune`, `compress` and `decompress` edit: the same order and the same error
 * reports as the walk `ls` and `check` make (src/inspect/node/folders.ts: names sorted, depth first, paths
 * under the folder as it was named, an unreadable entry reported and skipped), but nothing is followed.
 * An edit must see links as links: a symbolic link is mirrored as a link (never written through, so a link
 * to /usr/lib cannot take an edit outside the tree), and the names of one hard-linked file are gathered so
 * the file is edited once. The reading walk instead counts a linked file under its target, which may lie
 * outside the folder; that is right for a report and wrong for a writer.
 */
import { lstatSync, readdirSync, readlinkSync } from "node:fs";
import type { Stats } from "node:fs";
import { fileError } from "../node/errors.js";
import type { WalkError } from "../inspect/node/folders.js";

export type TreeEntry =
  | { readonly kind: "folder"; readonly rel: string; readonly path: string; readonly mode: number }
  | { readonly kind: "file"; readonly rel: string; readonly path: string; readonly key: string; readonly nlink: number; readonly size: number; readonly mode: number }
  | { readonly kind: "symlink"; readonly rel: string; readonly path: string; readonly target: string }
  /** A FIFO, socket or device: never edited, never mirrored. */
  | { readonly kind: "special"; readonly rel: string; readonly path: string };

export interface TreeWalk {
  /** The folder as named on the command line. */
  readonly root: string;
  /** Every entry below the root (the root itself excluded), parents before children. */
  readonly entries: TreeEntry[];
  readonly errors: WalkError[];
}

function walkError(path: string, e: unknown): WalkError {
  if ((e as NodeJS.ErrnoException).code === undefined) throw e;
  const error = fileError(path, e);
  return { path, code: error.code, message: error.message };
}

/** `a/b` joined as find joins it: under the name as given (`./x` for `.`), never normalised. */
export function joinAsGiven(dir: string, name: string): string {
  return dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
}

function entryOf(stat: Stats, rel: string, path: string): TreeEntry {
  if (stat.isDirectory()) return { kind: "folder", rel, path, mode: stat.mode & 0o7777 };
  if (stat.isFile()) return { kind: "file", rel, path, key: `${stat.dev}:${stat.ino}`, nlink: stat.nlink, size: stat.size, mode: stat.mode & 0o7777 };
  return { kind: "special", rel, path };
}

/** Every entry below `root` (named; a link named is followed, as find -H does), links not followed. */
export function walkTree(root: string): TreeWalk {
  const walk: TreeWalk = { root, entries: [], errors: [] };
  const visit = (dir: string, relDir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch (e) {
      walk.errors.push(walkError(dir, e));
      return;
    }
    for (const name of names) {
      const path = joinAsGiven(dir, name);
      const rel = relDir === "" ? name : `${relDir}/${name}`;
      let stat: Stats;
      try {
        stat = lstatSync(path);
      } catch (e) {
        walk.errors.push(walkError(path, e));
        continue;
      }
      if (stat.isSymbolicLink()) {
        let target: string;
        try {
          target = readlinkSync(path);
        } catch (e) {
          walk.errors.push(walkError(path, e));
          continue;
        }
        walk.entries.push({ kind: "symlink", rel, path, target });
        continue;
      }
      const entry = entryOf(stat, rel, path);
      walk.entries.push(entry);
      if (entry.kind === "folder") visit(path, rel);
    }
  };
  visit(root, "");
  return walk;
}

/**
 * Whether a link's target, read from the link's own folder, leaves the tree: absolute, or `..` climbing
 * above the root. Such links are kept as links (cp -a keeps them too) and reported, never followed.
 */
export function linkLeavesTree(rel: string, target: string): boolean {
  if (target.startsWith("/")) return true;
  let depth = rel.split("/").length - 1;
  for (const part of target.split("/")) {
    if (part === "..") depth--;
    else if (part !== "." && part !== "") depth++;
    if (depth < 0) return true;
  }
  return false;
}
