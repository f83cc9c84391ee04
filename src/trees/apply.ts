/**
 * Carrying out a plan (./plan.ts): every file with device code goes through the one crash-safe path single
 * files take (src/prune/node.ts `editFiles`: planned, written to a temporary file, verified, then put in
 * place with the others, all or none), and a mirrored folder is built whole before it appears.
 *
 * The mirror (`--out-dir`) is built in `D/.<name>.offload-kit-<pid>-<n>.tmp`, a folder registered with
 * src/process/temporaries.ts (a signal removes it; a later run in `D` removes one a killed run left), made
 * with plain mkdir (never recursive: no folder or link already there can redirect a write), and renamed to
 * `D/<name>` once complete, so `D/<name>` either does not exist or holds the whole mirror. Links are
 * recreated with the same target text and never written through. Inputs are only read.
 *
 * A `.kpack` archive in a folder that prune leaves with no code object (every GPU it served dropped) is removed
 * (in place: after every edit is in place; mirrored: not put in the mirror): the runtime, finding no archive
 * for a dropped GPU, fails as it does for any GPU the tree was not built for, while an empty archive would only
 * be skipped. Kpack'd hosts' markers name a pattern (`<group>_@GFXARCH@.kpack`), not files, so they stay valid.
 *
 * A file with device code that no editor takes (a standalone code object, an ELF whose code is not in
 * `.hip_fatbin`) is left as it is, with a note: in a folder, prune edits what it can and says what it could not.
 */
import { chmodSync, closeSync, copyFileSync, linkSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import type { Codecs } from "../compress/codecs.js";
import { OffloadKitError } from "../engine/errors.js";
import { AMDGPU_CODE_OBJECT_HEADER_SIZE, codeObjectEntryId, isAmdgpuCodeObject, parseAmdgpuCodeObject } from "../formats/amdgpu-code-object.js";
import type { ByteSource } from "../engine/source.js";
import { fileError } from "../node/errors.js";
import { editFiles } from "../prune/node.js";
import type { CompressedAheads, FileEdit, OpenedInputs } from "../prune/node.js";
import type { PlannedEdit } from "../prune/index.js";
import { createNamedTemporary, removeTemporary, settleTemporary } from "../process/temporaries.js";
import { mirrorPath } from "./plan.js";
import type { FileGroup, PreparedInputs, TreePlan } from "./plan.js";
import { linkLeavesTree } from "./walk.js";

/** Planner errors that mean "nothing here this editor can change": in a folder, such a file is left as it is. */
const NOT_EDITABLE = new Set(["NO_OFFLOAD_CONTENT", "NO_HIP_FATBIN", "ELF_UNSUPPORTED"]);

/** What became of one folder named. */
export interface TreeOutcome {
  /** The folder as named. */
  readonly root: string;
  /** `--out-dir`: where its mirror is (or would be). */
  readonly mirror?: string;
  /** Regular files (inodes) in it, and those with device code. */
  readonly files: number;
  readonly withDeviceCode: number;
  /** Files with device code no editor takes, left as they are (with why). */
  readonly notEditable: readonly { readonly path: string; readonly reason: string }[];
  readonly symlinks: number;
  /** Symbolic links whose target lies outside the tree (kept as links, never followed). */
  readonly linksLeavingTree: readonly string[];
  /** Files with more than one name in the tree (edited once), and those also linked from outside it. */
  readonly hardLinked: number;
  readonly linkedFromOutside: readonly string[];
  /** FIFOs, sockets and devices: not edited, not mirrored. */
  readonly special: readonly string[];
  /** Mirror: files hard-linked to the input, and copied (`--copy`, or a link refused: another file system). */
  readonly linked: number;
  readonly copied: number;
  readonly unreadable: readonly { readonly path: string; readonly code: string; readonly message: string }[];
  /**
   * Files removed whole (or that would be, in a dry run), and why: `.kpack` archives left with no code object;
   * with `removeFiles`, standalone code objects and per-architecture library files for dropped GPUs.
   */
  readonly removed: readonly { readonly path: string; readonly reason: string }[];
}

/** A planned edit that leaves a `.kpack` archive with nothing: the file goes instead. */
function removesWholeFile(planned: PlannedEdit | undefined): boolean {
  const entries = (planned as { entries?: readonly { kept: boolean }[] } | undefined)?.entries;
  return planned?.container === "kpack archive" && entries !== undefined && entries.length > 0 && entries.every((e) => !e.kept);
}

/**
 * rocBLAS/hipBLASLt per-architecture library files that are not code objects themselves (Tensile's
 * `TensileLibrary_lazy_gfx90a.dat`, `..._gfx942.yaml`): the architecture is the last `_gfxNNN` of the name, with
 * Tensile's `-xnack-`/`-sramecc+` spelling of features. Code objects (`.co`, `.hsaco`) are judged by their header.
 */
const PER_ARCH_FILE = /[_-](gfx[0-9a-f]+)((?:[-:](?:xnack|sramecc)[+-])*)\.(?:dat|yaml)$/;

function perArchTarget(name: string): string | undefined {
  const m = PER_ARCH_FILE.exec(name);
  if (m === null) return undefined;
  const features = (m[2] ?? "").replace(/-(xnack|sramecc)/g, ":$1");
  return `hipv4-amdgcn-amd-amdhsa--${m[1]}${features}`;
}

/** Why `file` goes under `--remove-files` (its code is for dropped GPUs only), or undefined to keep it. */
function removableFile(file: FileGroup["names"][number], dropped: (entryId: string) => boolean): string | undefined {
  let head: Uint8Array;
  try {
    const fd = openSync(file.path, "r");
    try {
      head = new Uint8Array(AMDGPU_CODE_OBJECT_HEADER_SIZE);
      head = head.subarray(0, readSync(fd, head, 0, head.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  if (isAmdgpuCodeObject(head)) {
    let id: string | undefined;
    try {
      id = codeObjectEntryId(parseAmdgpuCodeObject(head));
    } catch {
      return undefined;
    }
    return id !== undefined && dropped(id) ? `standalone code object for ${id.slice(id.indexOf("--") + 2)}` : undefined;
  }
  const id = perArchTarget(file.path.slice(file.path.lastIndexOf("/") + 1));
  return id !== undefined && dropped(id) ? `per-architecture library file for ${id.slice(id.indexOf("--") + 2)}` : undefined;
}

export interface PathsEdit<P extends PlannedEdit> {
  readonly edits: (FileEdit<P> & { readonly tree?: number })[];
  readonly trees: TreeOutcome[];
}

export interface ApplyOptions<P extends PlannedEdit> {
  readonly codecs: Codecs;
  readonly plan: (source: ByteSource, name: string) => P;
  readonly check?: (edits: readonly FileEdit<P>[]) => void;
  readonly ahead?: CompressedAheads;
  /** Mirror: copy unchanged files instead of hard-linking them. */
  readonly copy?: boolean;
  readonly dryRun: boolean;
  /** Package members named `pkg!member`, opened by the caller (src/packages/node/inputs.ts openNamedMember). */
  readonly opened?: OpenedInputs;
  /**
   * `prune --remove-files`: in folders, remove standalone code objects and per-architecture library files whose
   * entry ID this says is dropped (the function gets a bundle entry ID such as `hipv4-amdgcn-amd-amdhsa--gfx906`).
   */
  readonly removeFiles?: (entryId: string) => boolean;
}

let stagings = 0;

/** The mirror's skeleton (folders, links) in a new registered staging folder; returns its path. */
function stageMirror(tree: TreePlan): string {
  const mirror = tree.mirror!;
  const name = mirror.root.slice(mirror.root.lastIndexOf("/") + 1);
  const staging = createNamedTemporary(mirror.outDir, () => {
    const path = join(mirror.outDir, `.${name}.offload-kit-${process.pid}-${++stagings}.tmp`);
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch (e) {
      throw fileError(path, e);
    }
    return path;
  });
  for (const entry of tree.walk.entries) {
    const at = mirrorPath(staging, entry.rel);
    try {
      // Folders stay writable by us until the mirror is complete; their own modes are set last.
      if (entry.kind === "folder") mkdirSync(at, { mode: 0o700 });
      else if (entry.kind === "symlink") symlinkSync(entry.target, at);
    } catch (e) {
      throw fileError(at, e);
    }
  }
  return staging;
}

function linkOrCopy(from: string, to: string, copy: boolean, mode: number): "linked" | "copied" {
  if (!copy) {
    try {
      linkSync(from, to);
      return "linked";
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Another file system, or a file the kernel will not let us link (fs.protected_hardlinks): a copy.
      if (code !== "EXDEV" && code !== "EPERM" && code !== "EMLINK") throw fileError(to, e);
    }
  }
  try {
    copyFileSync(from, to);
    chmodSync(to, mode);
  } catch (e) {
    throw fileError(to, e);
  }
  return "copied";
}

/** Fills the staged mirror with what editFiles did not write, sets folder modes, and renames it into place. */
function finishMirror(tree: TreePlan, staging: string, edited: ReadonlySet<FileGroup>, copy: boolean, removed: ReadonlySet<FileGroup>): { linked: number; copied: number } {
  let linked = 0;
  let copied = 0;
  for (const group of tree.groups) {
    const [first, ...others] = group.names;
    if (removed.has(group)) {
      rmSync(mirrorPath(staging, first!.rel), { force: true });
      continue;
    }
    let base: string;
    if (edited.has(group)) base = mirrorPath(staging, first!.rel);
    else {
      const how = linkOrCopy(first!.path, mirrorPath(staging, first!.rel), copy, first!.mode);
      if (how === "linked") linked++;
      else copied++;
      // Linked: every name links the input's inode; copied: the other names link the one copy.
      base = how === "linked" ? first!.path : mirrorPath(staging, first!.rel);
    }
    for (const name of others) {
      const at = mirrorPath(staging, name.rel);
      try {
        linkSync(base, at);
      } catch (e) {
        throw fileError(at, e);
      }
    }
  }
  const folders = tree.walk.entries.filter((e) => e.kind === "folder");
  for (const folder of folders.reverse()) chmodSync(mirrorPath(staging, folder.rel), folder.mode);
  chmodSync(staging, rootMode(tree));
  settleTemporary(staging, () => {
    try {
      renameSync(staging, tree.mirror!.root);
    } catch (e) {
      throw fileError(tree.mirror!.root, e);
    }
  });
  return { linked, copied };
}

/** The named folder's own mode (a link named is followed, as the walk followed it). */
function rootMode(tree: TreePlan): number {
  try {
    return statSync(tree.walk.root).mode & 0o7777;
  } catch {
    return 0o755;
  }
}

function outcomeOf(tree: TreePlan, notEditable: TreeOutcome["notEditable"], counts: { linked: number; copied: number }, removed: TreeOutcome["removed"]): TreeOutcome {
  const symlinks = tree.walk.entries.filter((e) => e.kind === "symlink");
  return {
    root: tree.walk.root,
    ...(tree.mirror === undefined ? {} : { mirror: tree.mirror.root }),
    files: tree.groups.length,
    withDeviceCode: tree.groups.filter((g) => g.offload).length,
    notEditable,
    symlinks: symlinks.length,
    linksLeavingTree: symlinks.filter((l) => l.kind === "symlink" && linkLeavesTree(l.rel, l.target)).map((l) => l.path),
    hardLinked: tree.groups.filter((g) => g.names.length > 1).length,
    linkedFromOutside: tree.groups.filter((g) => g.linkedFromOutside).map((g) => g.names[0]!.path),
    special: tree.walk.entries.filter((e) => e.kind === "special").map((e) => e.path),
    linked: counts.linked,
    copied: counts.copied,
    unreadable: tree.walk.errors,
    removed,
  };
}

/**
 * Edits what `prepared` names. Named files behave as they always did; a folder's files with device code
 * are edited (or planned, in a dry run), and a mirror is completed around them. An entry of a folder that
 * cannot be read stops a real run before anything is written (a mirror or an in-place edit would be
 * incomplete without saying so); a dry run reports it.
 */
export function editPrepared<P extends PlannedEdit>(prepared: PreparedInputs, options: ApplyOptions<P>): PathsEdit<P> {
  const { inputs, treeOf, groupOf, trees } = prepared;
  if (!options.dryRun) {
    for (const tree of trees) {
      const first = tree.walk.errors[0];
      if (first !== undefined) throw new OffloadKitError(first.code, `${first.message}; nothing was written (every file of '${tree.walk.root}' must be readable to edit it)`);
    }
  }
  const notEditable = trees.map((): { path: string; reason: string }[] => []);
  const treeIndex = new Map<string, number>();
  inputs.forEach((input, i) => {
    if (treeOf[i] !== undefined) treeIndex.set(input, treeOf[i]!);
  });
  const plan = (source: ByteSource, name: string): P => {
    try {
      return options.plan(source, name);
    } catch (e) {
      if (!(e instanceof OffloadKitError) || !NOT_EDITABLE.has(e.code) || !treeIndex.has(name)) throw e;
      const reason = e.message.startsWith(`${name}: `) ? e.message.slice(name.length + 2) : e.message;
      notEditable[treeIndex.get(name)!]!.push({ path: name, reason });
      // An unchanged edit: editFiles leaves the file where it is (in place) or to the mirror (linked).
      return { container: "not editable", plan: undefined, inputSize: source.size, notes: [`left as it is: ${reason}`], entries: [] } as unknown as P;
    }
  };
  const stagingOf = new Map<number, string>();
  let destination = prepared.destination;
  try {
    if (prepared.mirrored && !options.dryRun && destination.kind === "outputs") {
      trees.forEach((tree, t) => stagingOf.set(t, stageMirror(tree)));
      destination = {
        kind: "outputs",
        outputs: destination.outputs.map((o, i) => (treeOf[i] === undefined ? o : { path: mirrorPath(stagingOf.get(treeOf[i]!)!, groupOf[i]!.names[0]!.rel), writeUnchanged: false })),
      };
    }
    const edits = editFiles(inputs, destination, options.codecs, plan, options.check, options.ahead, options.opened).map((edit, i) => {
      const t = treeOf[i];
      if (t === undefined) return edit;
      // Report the mirror's final path, not the staging folder's.
      const mirror = trees[t]!.mirror;
      const output = mirror === undefined ? edit.output : edit.planned?.plan === undefined ? undefined : mirrorPath(mirror.root, groupOf[i]!.names[0]!.rel);
      return { ...edit, output, tree: t };
    });
    const outcomes = trees.map((tree, t) => {
      let counts = { linked: 0, copied: 0 };
      const removed = new Map<FileGroup, string>();
      edits.forEach((e, i) => {
        if (treeOf[i] === t && removesWholeFile(e.planned)) removed.set(groupOf[i]!, "no code object left");
      });
      const dropped = options.removeFiles;
      if (dropped !== undefined) {
        for (const group of tree.groups) {
          if (removed.has(group)) continue;
          // A file an edit changed (a fat binary pruned) is never removed: only files whose whole content is for dropped GPUs.
          const changed = edits.some((e, i) => treeOf[i] === t && groupOf[i] === group && e.planned?.plan !== undefined);
          if (changed) continue;
          const why = removableFile(group.names[0]!, dropped);
          if (why !== undefined) removed.set(group, why);
        }
      }
      const staging = stagingOf.get(t);
      if (staging !== undefined) {
        const edited = new Set<FileGroup>();
        edits.forEach((e, i) => {
          if (treeOf[i] === t && e.planned?.plan !== undefined) edited.add(groupOf[i]!);
        });
        counts = finishMirror(tree, staging, edited, options.copy === true, new Set(removed.keys()));
        stagingOf.delete(t);
      } else if (!options.dryRun && tree.mirror === undefined) {
        // In place: every edit is in place (the emptied archive among them, valid on its own); now each name goes.
        for (const group of removed.keys()) for (const n of group.names) rmSync(n.path, { force: true });
      }
      return outcomeOf(tree, notEditable[t]!, counts, [...removed].map(([g, reason]) => ({ path: g.names[0]!.path, reason })));
    });
    return { edits, trees: outcomes };
  } finally {
    // A run that failed leaves no staging folder behind.
    for (const staging of stagingOf.values()) {
      rmSync(staging, { recursive: true, force: true });
      removeTemporary(staging);
    }
  }
}
