/**
 * Which `.kpack` archives serve a kpack'd host binary, found as rocm-kpack's runtime finds them
 * (ROCm/rocm-kpack e3483286 runtime/src/loader.cpp `kpack_load_code_object`):
 *
 * 1. `ROCM_KPACK_PATH` (a `:`-separated list of archive paths) replaces everything else; otherwise
 *    `ROCM_KPACK_PATH_PREFIX` archives come first, then the marker's search paths, each relative to the
 *    directory of the binary, `@GFXARCH@` expanded for each GPU to each of its compatible names, most
 *    specific first (src/kpack/targets.ts). Override and prefix paths are archive paths as they stand.
 * 2. Every candidate that is a regular file and opens is kept; an archive serves the names in its TOC's
 *    `gfx_arches` (not the keys under `toc`).
 * 3. For each GPU, for each of its names, most specific first, the first kept archive serving that name is
 *    asked for `kernel_name#co_index` under that name; found or not, the search ends there (the runtime
 *    returns "kernel not found" rather than trying another name).
 *
 * `ROCM_KPACK_DISABLE` set (not empty, not starting with 0) turns the loader off: nothing is found.
 * Where the runtime canonicalises paths (`weakly_canonical`) this resolves them lexically (`path.resolve`).
 *
 * Browser-safe: the files are asked of a `KpackFiles` (src/kpack/node/resolve.ts gives the disk's, the
 * inspector page's worker the dropped tree's: src/browser/kpack-tree.ts), so a page given a folder finds
 * the same archives `offload-kit ls` finds on disk.
 *
 * Without a GPU (what `ls`, `sizes` and `extract` list), `listInstalled` answers "which code objects could any
 * GPU get": each search path's directory is listed for the names its `@GFXARCH@` pattern matches, and every
 * archive found is asked for each wrapper's key under each of its `gfx_arches`.
 */
import { isOffloadKitError } from "../engine/errors.js";
import type { KpackArchive, KpackEntry } from "../formats/kpack.js";
import type { KpackHost, KpackWrapper } from "./host.js";
import { kpackKey } from "./host.js";
import { GFXARCH_PLACEHOLDER, compatibleKpackTargets } from "./targets.js";

/** The environment the runtime reads: `ROCM_KPACK_PATH`, `ROCM_KPACK_PATH_PREFIX`, `ROCM_KPACK_DISABLE`. */
export type KpackEnv = Readonly<Record<string, string | undefined>>;

/** Where archives are looked for: a disk, or a tree of dropped files. Paths are as `path` makes them. */
export interface KpackFiles {
  /** Path arithmetic (node:path in Node; POSIX paths relative to the tree's root in a browser). */
  readonly path: {
    isAbsolute(path: string): boolean;
    resolve(directory: string, path: string): string;
    dirname(path: string): string;
    basename(path: string): string;
    join(directory: string, name: string): string;
  };
  /** Whether a regular file is there. */
  isFile(path: string): boolean;
  /** A directory's entry names, undefined when it cannot be listed. */
  list(directory: string): readonly string[] | undefined;
  /** The archive's TOC (src/formats/kpack.ts readKpackArchive); throws an OffloadKitError when it does not read. */
  readArchive(path: string): KpackArchive;
}

/** An archive looked at: opened, or why not. */
export interface OpenedArchive {
  readonly path: string;
  readonly archive?: KpackArchive;
  readonly error?: { readonly code: string; readonly message: string };
}

/** A code object a wrapper gets. */
export interface KpackFound {
  readonly archivePath: string;
  readonly archive: KpackArchive;
  readonly entry: KpackEntry;
}

export type KpackMiss = "disabled" | "archive-not-found" | "arch-not-found" | "kernel-not-found";

export interface WrapperLookup {
  readonly wrapper: KpackWrapper;
  readonly key: string;
  readonly found: readonly KpackFound[];
  /** Why nothing was found (`load` only), as the runtime's error. */
  readonly miss?: KpackMiss;
}

export interface KpackResolution {
  readonly lookups: readonly WrapperLookup[];
  /** Every archive candidate that exists, in search order, opened or not. */
  readonly archives: readonly OpenedArchive[];
}

function splitPathList(list: string | undefined): string[] {
  return (list ?? "").split(":").filter((p) => p !== "");
}

function isDisabled(env: KpackEnv): boolean {
  const value = env.ROCM_KPACK_DISABLE;
  return value !== undefined && value !== "" && !value.startsWith("0");
}

/** Embedded search paths resolved against the binary's directory (absolute ones as they are). */
function resolveSearchPath(files: KpackFiles, binaryPath: string, searchPath: string): string {
  return files.path.isAbsolute(searchPath) ? searchPath : files.path.resolve(files.path.dirname(binaryPath), searchPath);
}

/** The archive paths the runtime tries for `gpus`, in its order (duplicates kept once). */
export function kpackCandidates(files: KpackFiles, binaryPath: string, searchPaths: readonly string[], gpus: readonly string[], env: KpackEnv): string[] {
  const override = splitPathList(env.ROCM_KPACK_PATH);
  if (override.length > 0) return [...new Set(override)];
  const out = splitPathList(env.ROCM_KPACK_PATH_PREFIX);
  for (const searchPath of searchPaths) {
    const resolved = resolveSearchPath(files, binaryPath, searchPath);
    if (!resolved.includes(GFXARCH_PLACEHOLDER)) {
      out.push(resolved);
      continue;
    }
    for (const gpu of gpus) for (const name of compatibleKpackTargets(gpu)) out.push(resolved.replace(GFXARCH_PLACEHOLDER, name));
  }
  return [...new Set(out)];
}

/**
 * Every installed archive a search path could name: `@GFXARCH@` in the file name part matches any name there
 * (a `*` in a glob); override and prefix paths, and paths without the placeholder, as they stand.
 */
export function installedKpackArchives(files: KpackFiles, binaryPath: string, searchPaths: readonly string[], env: KpackEnv): string[] {
  const isFile = (path: string) => files.isFile(path);
  const override = splitPathList(env.ROCM_KPACK_PATH);
  if (override.length > 0) return [...new Set(override)].filter(isFile);
  const out = splitPathList(env.ROCM_KPACK_PATH_PREFIX);
  for (const searchPath of searchPaths) {
    const resolved = resolveSearchPath(files, binaryPath, searchPath);
    const at = resolved.indexOf(GFXARCH_PLACEHOLDER);
    if (at < 0) {
      out.push(resolved);
      continue;
    }
    const directory = files.path.dirname(resolved);
    const name = files.path.basename(resolved);
    // A placeholder in a directory part cannot be listed without walking the tree: no runtime build writes one.
    if (directory.includes(GFXARCH_PLACEHOLDER)) continue;
    const [before, after] = [name.substring(0, name.indexOf(GFXARCH_PLACEHOLDER)), name.substring(name.indexOf(GFXARCH_PLACEHOLDER) + GFXARCH_PLACEHOLDER.length)];
    const names = files.list(directory);
    if (names === undefined) continue;
    for (const file of [...names].sort()) {
      if (file.length > before.length + after.length && file.startsWith(before) && file.endsWith(after)) out.push(files.path.join(directory, file));
    }
  }
  return [...new Set(out)].filter(isFile);
}

/** Opens archives once per path, keeping why one could not be. */
class Archives {
  readonly opened = new Map<string, OpenedArchive>();

  constructor(private readonly files: KpackFiles) {}

  open(path: string): OpenedArchive {
    let opened = this.opened.get(path);
    if (opened === undefined) {
      try {
        opened = { path, archive: this.files.readArchive(path) };
      } catch (e) {
        if (!isOffloadKitError(e)) throw e;
        opened = { path, error: { code: e.code, message: e.message } };
      }
      this.opened.set(path, opened);
    }
    return opened;
  }
}

function entryOf(archive: KpackArchive, key: string, arch: string): KpackEntry | undefined {
  return archive.entries.find((e) => e.key === key && e.arch === arch);
}

/** What the runtime loads for each wrapper on each of `gpus` (one lookup per wrapper and GPU, in that order). */
export function loadKpack(files: KpackFiles, binaryPath: string, host: KpackHost, gpus: readonly string[], env: KpackEnv): KpackResolution {
  const archives = new Archives(files);
  const lookups: WrapperLookup[] = [];
  for (const wrapper of host.wrappers) {
    const key = kpackKey(wrapper);
    if (isDisabled(env)) {
      lookups.push({ wrapper, key, found: [], miss: "disabled" });
      continue;
    }
    const valid = kpackCandidates(files, binaryPath, wrapper.marker.searchPaths, gpus, env)
      .filter((path) => files.isFile(path))
      .map((path) => archives.open(path))
      .filter((a): a is OpenedArchive & { archive: KpackArchive } => a.archive !== undefined);
    for (const gpu of gpus) {
      if (valid.length === 0) {
        lookups.push({ wrapper, key, found: [], miss: "archive-not-found" });
        continue;
      }
      let lookup: WrapperLookup | undefined;
      for (const name of compatibleKpackTargets(gpu)) {
        const serving = valid.find((a) => a.archive.gfxArches.includes(name));
        if (serving === undefined) continue;
        const entry = entryOf(serving.archive, key, name);
        lookup = entry === undefined
          ? { wrapper, key, found: [], miss: "kernel-not-found" }
          : { wrapper, key, found: [{ archivePath: serving.path, archive: serving.archive, entry }] };
        break;
      }
      lookups.push(lookup ?? { wrapper, key, found: [], miss: "arch-not-found" });
    }
  }
  return { lookups, archives: [...archives.opened.values()] };
}

/** Every code object installed for each wrapper: each archive found (`installedKpackArchives`), under each of its `gfx_arches`. */
export function listInstalledKpack(files: KpackFiles, binaryPath: string, host: KpackHost, env: KpackEnv): KpackResolution {
  const archives = new Archives(files);
  const lookups = host.wrappers.map((wrapper): WrapperLookup => {
    const key = kpackKey(wrapper);
    if (isDisabled(env)) return { wrapper, key, found: [], miss: "disabled" };
    const found: KpackFound[] = [];
    for (const path of installedKpackArchives(files, binaryPath, wrapper.marker.searchPaths, env)) {
      const opened = archives.open(path);
      if (opened.archive === undefined) continue;
      for (const arch of opened.archive.gfxArches) {
        const entry = entryOf(opened.archive, key, arch);
        if (entry !== undefined) found.push({ archivePath: path, archive: opened.archive, entry });
      }
    }
    return { wrapper, key, found, ...(found.length === 0 ? { miss: "archive-not-found" as const } : {}) };
  });
  return { lookups, archives: [...archives.opened.values()] };
}
