/**
 * Which `.kpack` archives serve a kpack'd host binary on disk: src/kpack/resolve.ts (the runtime's search,
 * browser-safe) over the file system, with `process.env` as the runtime reads it.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { readKpackArchive } from "../../formats/kpack.js";
import { withFile } from "../../node/file-source.js";
import type { KpackHost } from "../host.js";
import * as core from "../resolve.js";
import type { KpackEnv, KpackFiles, KpackResolution } from "../resolve.js";

export type { KpackEnv, KpackFound, KpackMiss, KpackResolution, OpenedArchive, WrapperLookup } from "../resolve.js";

/** The disk, as the runtime sees it. */
export const DISK: KpackFiles = {
  path: { isAbsolute, resolve: (directory, path) => resolve(directory, path), dirname, basename, join },
  isFile(path) {
    try {
      return statSync(path).isFile();
    } catch {
      return false;
    }
  },
  list(directory) {
    try {
      return readdirSync(directory);
    } catch {
      return undefined;
    }
  },
  readArchive: (path) => withFile(path, readKpackArchive),
};

/** The archive paths the runtime tries for `gpus`, in its order (duplicates kept once). */
export function kpackCandidates(binaryPath: string, searchPaths: readonly string[], gpus: readonly string[], env: KpackEnv): string[] {
  return core.kpackCandidates(DISK, binaryPath, searchPaths, gpus, env);
}

/** Every installed archive a search path could name (src/kpack/resolve.ts installedKpackArchives). */
export function installedKpackArchives(binaryPath: string, searchPaths: readonly string[], env: KpackEnv): string[] {
  return core.installedKpackArchives(DISK, binaryPath, searchPaths, env);
}

/** What the runtime loads for each wrapper on each of `gpus` (one lookup per wrapper and GPU, in that order). */
export function loadKpack(binaryPath: string, host: KpackHost, gpus: readonly string[], env: KpackEnv = process.env): KpackResolution {
  return core.loadKpack(DISK, binaryPath, host, gpus, env);
}

/** Every code object installed for each wrapper: each archive found, under each of its `gfx_arches`. */
export function listInstalledKpack(binaryPath: string, host: KpackHost, env: KpackEnv = process.env): KpackResolution {
  return core.listInstalledKpack(DISK, binaryPath, host, env);
}
