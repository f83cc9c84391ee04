/**
 * What an edit of files and folders will do, decided before anything is written: which files of each
 * folder hold device code (the rule `ls` and `check` use: src/inspect/node/check.ts `holdsOffloadCode`),
 * the names of each hard-linked file (edited once, under its first name in walk order), and where every
 * output goes. Errors that would stop the run (a clash, an output folder inside the tree it mirrors, an
 * entry that cannot be read) are raised here, before any byte is written.
 *
 * Destinations for a folder named `T`:
 * - `--in-place`: each file with device code is edited where it is (src/prune/node.ts; a hard-linked file
 *   keeps its inode, so every name sees the edit, as editing one inode in place gives).
 * - `--out-dir=D`: the tree is mirrored at `D/<name of T>`, built in a temporary folder beside it and renamed
 *   into place whole; folders and symbolic links are recreated, files without device code (or left
 *   unchanged) hard-linked to the input (`--copy`: copied), edited files written new. Names that share an
 *   inode in `T` share one in the mirror (the edited output, or the input's inode, or one copy).
 * - `-o`: refused (one file).
 * - `--dry-run`: nothing is written; the same plan and numbers.
 */
import { realpathSync, statSync } from "node:fs";
import { basename, join, relative, resolve, sep } from "node:path";
import { OffloadKitError } from "../engine/errors.js";
import { codecDecompressor } from "../compress/node/packager-codecs.js";
import { locate } from "../inspect/locate.js";
import { holdsOffloadCode } from "../inspect/node/check.js";
import { namedDirectory } from "../inspect/node/folders.js";
import type { WalkError } from "../inspect/node/folders.js";
import { withFile } from "../node/file-source.js";
import { fileError } from "../node/errors.js";
import { destinations } from "../prune/node.js";
import type { Destination } from "../prune/node.js";
import { walkTree } from "./walk.js";
import type { TreeEntry, TreeWalk } from "./walk.js";

export type TreeFile = Extract<TreeEntry, { kind: "file" }>;

/** One file (inode) of a tree: its names in walk order; the first is the one edited. */
export interface FileGroup {
  readonly names: readonly TreeFile[];
  /** Holds device code by check's rule. */
  readonly offload: boolean;
  /** Links to it exist outside the tree (its link count is higher than the names found here). */
  readonly linkedFromOutside: boolean;
}

export interface TreePlan {
  readonly walk: TreeWalk;
  readonly groups: readonly FileGroup[];
  /** `--out-dir`: where the mirror lands (`D/<name>`), and the folder it is built in first. */
  readonly mirror?: { readonly root: string; readonly outDir: string };
}

/** Every input of one run: files named, and the files with device code found in folders. */
export interface PreparedInputs {
  /** Paths to edit, in order: named files first as named, then each tree's files with device code. */
  readonly inputs: readonly string[];
  /** For each input, the tree it belongs to (index into `trees`), or undefined when named. */
  readonly treeOf: readonly (number | undefined)[];
  /** For each input found in a tree, its file (all its names). */
  readonly groupOf: readonly (FileGroup | undefined)[];
  readonly trees: readonly TreePlan[];
  /** The destination editFiles gets (an `outputs` list when a folder is mirrored). */
  readonly destination: Destination;
  /** Whether the outputs of mirrored trees are to be built in staging folders (see ./apply.ts). */
  readonly mirrored: boolean;
}

/** A tree entry's place in the mirror; `rel` comes from readdir names, but is checked: nothing may climb out. */
export function mirrorPath(root: string, rel: string): string {
  if (rel === "" || rel.startsWith("/") || rel.split("/").some((part) => part === ".." || part === "." || part === "")) {
    throw new OffloadKitError("BAD_PATH", `'${rel}': not a path below the tree`);
  }
  return join(root, rel);
}

function isInside(child: string, parent: string): boolean {
  const r = relative(parent, child);
  return r === "" || (!r.startsWith(`..${sep}`) && r !== ".." && !r.startsWith(sep));
}

function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** Whether the file holds device code (check's rule); an error reading it is the walk's unreadable entry. */
function classify(path: string): boolean | WalkError {
  try {
    // With the codecs' decompressor: a zstd-per-kernel .kpack archive's code objects are only seen decoded.
    return withFile(path, (source) => holdsOffloadCode(locate(source, { decompressOffload: codecDecompressor() })));
  } catch (e) {
    if (e instanceof OffloadKitError) return { path, code: e.code, message: e.message };
    if ((e as NodeJS.ErrnoException).code === undefined) throw e;
    const error = fileError(path, e);
    return { path, code: error.code, message: error.message };
  }
}

function planTree(root: string, seen: Set<string>): TreePlan {
  const walk = walkTree(root);
  const byKey = new Map<string, TreeFile[]>();
  for (const entry of walk.entries) {
    if (entry.kind !== "file") continue;
    const names = byKey.get(entry.key);
    if (names !== undefined) names.push(entry);
    else byKey.set(entry.key, [entry]);
  }
  const groups: FileGroup[] = [];
  for (const [key, names] of byKey) {
    // A file already met in an earlier folder of this run (two folders overlapping): edited there, once.
    if (seen.has(key)) continue;
    seen.add(key);
    const offload = classify(names[0]!.path);
    if (typeof offload !== "boolean") {
      walk.errors.push(offload);
      continue;
    }
    groups.push({ names, offload, linkedFromOutside: names[0]!.nlink > names.length });
  }
  return { walk, groups };
}

/**
 * Walks the folders among `paths`, classifies their files, and says where every output goes. `paths` that
 * are not folders are inputs as they always were (an error there is the file's, as before).
 */
export function prepareInputs(paths: readonly string[], destination: Destination): PreparedInputs {
  const named: string[] = [];
  const folders: string[] = [];
  for (const path of paths) (namedDirectory(path) ? folders : named).push(path);
  if (folders.length === 0) return { inputs: paths, treeOf: paths.map(() => undefined), groupOf: paths.map(() => undefined), trees: [], destination, mirrored: false };
  if (destination.kind === "output") {
    throw new OffloadKitError("BAD_OPTIONS", `'${folders[0]}' is a folder: -o names one output file (use --out-dir=DIR to mirror the folder, or --in-place)`, { field: "-o" });
  }
  const seen = new Set<string>();
  const trees = folders.map((root) => planTree(root, seen));
  const inputs = [...named];
  const treeOf: (number | undefined)[] = named.map(() => undefined);
  const groupOf: (FileGroup | undefined)[] = named.map(() => undefined);
  trees.forEach((tree, t) => {
    for (const group of tree.groups) {
      if (!group.offload) continue;
      inputs.push(group.names[0]!.path);
      treeOf.push(t);
      groupOf.push(group);
    }
  });
  if (destination.kind !== "out-dir") return { inputs, treeOf, groupOf, trees, destination, mirrored: false };

  // --out-dir: each tree lands at D/<its name>, which must not exist yet and must not lie inside any tree.
  const namedOutputs = destinations(named, destination) as string[];
  const outDirReal = realOrResolved(destination.dir);
  const roots = new Map<string, string>();
  const mirroredTrees = trees.map((tree) => {
    const name = basename(realOrResolved(tree.walk.root));
    const root = join(destination.dir, name);
    for (const other of trees) {
      if (isInside(join(outDirReal, name), realOrResolved(other.walk.root))) {
        throw new OffloadKitError("OUTPUT_IN_INPUT", `'${root}' would lie inside the folder '${other.walk.root}' it mirrors from (choose an --out-dir outside it)`, { field: "--out-dir" });
      }
    }
    const clash = roots.get(resolve(root));
    if (clash !== undefined) throw new OffloadKitError("OUTPUT_CLASH", `'${clash}' and '${tree.walk.root}' would both be mirrored to '${root}'`, { field: "--out-dir" });
    roots.set(resolve(root), tree.walk.root);
    if (namedOutputs.some((o) => resolve(o) === resolve(root))) throw new OffloadKitError("OUTPUT_CLASH", `'${root}' is both a file's output and a folder's mirror`, { field: "--out-dir" });
    let exists = true;
    try {
      statSync(root);
    } catch {
      exists = false;
    }
    if (exists) throw new OffloadKitError("OUTPUT_EXISTS", `'${root}' exists already; the mirror of '${tree.walk.root}' is made there new (remove it, or choose another --out-dir)`, { field: "--out-dir" });
    return { ...tree, mirror: { root, outDir: destination.dir } };
  });
  // Tree outputs are placeholders here (paths below the mirror root); ./apply.ts points them into the staging folder.
  const outputs = [
    ...namedOutputs.map((path) => ({ path, writeUnchanged: true })),
    ...inputs.slice(named.length).map((_, i) => {
      const tree = mirroredTrees[treeOf[named.length + i]!]!;
      return { path: mirrorPath(tree.mirror.root, groupOf[named.length + i]!.names[0]!.rel), writeUnchanged: false };
    }),
  ];
  return { inputs, treeOf, groupOf, trees: mirroredTrees, destination: { kind: "outputs", outputs }, mirrored: true };
}
