/**
 * A tree of dropped files as the place a kpack'd host's archives are looked for (src/kpack/location.ts): a
 * folder chosen or dropped on the inspector page arrives as Files with paths relative to it
 * (`webkitRelativePath`, `stage/bin/app`), and the host's search paths (`../.kpack/test_lib_@GFXARCH@.kpack`)
 * resolve against its own path as rocm-kpack's runtime resolves them against the binary's directory. The
 * archives' paths are printed as they are here, which is what `offload-kit ls` prints when run from the
 * folder's parent with the folder's name (`ls --json stage`).
 *
 * Paths are POSIX and relative; one that climbs out of the tree (`../x`) names nothing here. Read in the
 * worker: an archive's TOC through FileReaderSync (src/browser/blob-source.ts).
 */
import { readKpackArchive } from "../formats/kpack.js";
import type { KpackPlace } from "../kpack/location.js";
import type { KpackFiles } from "../kpack/resolve.js";
import { BlobSource } from "./blob-source.js";

/** One file of the tree: its path from the tree's root, and its contents. */
export interface TreeFile {
  readonly path: string;
  readonly file: Blob;
}

/** `a/b/../c/./d` as `a/c/d`; a leading `..` that climbs out is kept (then nothing here has that path). */
export function normalizePath(path: string): string {
  const absolute = path.startsWith("/");
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === ".." && out.length > 0 && out.at(-1) !== "..") out.pop();
    else if (part === ".." && absolute) continue;
    else out.push(part);
  }
  return (absolute ? "/" : "") + (out.join("/") || (absolute ? "" : "."));
}

function dirname(path: string): string {
  const at = path.lastIndexOf("/");
  return at < 0 ? "." : at === 0 ? "/" : path.slice(0, at);
}

/** The tree as rocm-kpack's runtime would see it on disk. */
export function treeFiles(tree: readonly TreeFile[]): KpackFiles {
  const byPath = new Map(tree.map((t) => [normalizePath(t.path), t.file]));
  return {
    path: {
      isAbsolute: (path) => path.startsWith("/"),
      resolve: (directory, path) => normalizePath(path.startsWith("/") ? path : `${directory}/${path}`),
      dirname,
      basename: (path) => path.slice(path.lastIndexOf("/") + 1),
      join: (directory, name) => normalizePath(`${directory}/${name}`),
    },
    isFile: (path) => byPath.has(normalizePath(path)),
    list(directory) {
      const prefix = normalizePath(directory);
      const names: string[] = [];
      for (const path of byPath.keys()) {
        if (dirname(path) === prefix) names.push(path.slice(path.lastIndexOf("/") + 1));
      }
      return names;
    },
    readArchive: (path) => readKpackArchive(new BlobSource(byPath.get(normalizePath(path))!)),
  };
}

/** The tree as a KpackPlace: no environment (a page has none), paths printed as they are. */
export function treePlace(tree: readonly TreeFile[]): KpackPlace {
  return { files: treeFiles(tree), env: {}, shown: (path) => path };
}
