/**
 * The code objects and kernels of what a command line names, in Node: files, packages (each member, named
 * `file!member`, src/packages/node/inputs.ts) and folders (walked as ls/sizes/check walk them,
 * src/inspect/node/folders.ts; files without offload code are skipped). Compressed bundles are opened with
 * the prefetching decompressor the other commands use.
 */
import { isOffloadKitError } from "../../engine/errors.js";
import { withCcobPrefetch } from "../../compress/node/decompress.js";
import { nodeCodecs } from "../../compress/node/codecs.js";
import { codecDecompressor } from "../../compress/node/packager-codecs.js";
import { holdsOffloadCode } from "../../inspect/node/check.js";
import { forEachPath } from "../../inspect/node/folders.js";
import type { PathsRun } from "../../inspect/node/folders.js";
import type { ScanProblem } from "../../inspect/scan.js";
import { forEachInput } from "../../packages/node/inputs.js";
import type { InputWalk } from "../../packages/node/inputs.js";
import { collectKernels } from "../collect.js";
import type { FoundCodeObject } from "../collect.js";
import type { KernelListOptions } from "../kernels.js";

/** One file or package member and its code objects. */
export interface GatheredItem {
  /** `file`, or `file!member` for a package member. */
  readonly name: string;
  readonly codeObjects: readonly FoundCodeObject[];
  /** What the locator could not read. */
  readonly problems: readonly ScanProblem[];
}

export interface GatheredPath {
  readonly path: string;
  readonly items: readonly GatheredItem[];
  /** The package walk, when the path was a package. */
  readonly walk?: InputWalk;
  readonly offload: boolean;
  /** The path could not be read at all. */
  readonly error?: { readonly code: string; readonly message: string };
}

export interface Gathered {
  readonly paths: readonly GatheredPath[];
  readonly run: PathsRun;
}

/** Takes each code object as it is read (`file` as GatheredItem.name gives it); the items then list none. */
export type CodeObjectSink = (file: string, codeObject: FoundCodeObject) => void;

async function gatherPath(path: string, options: KernelListOptions, sink: CodeObjectSink | undefined): Promise<GatheredPath> {
  try {
    const items: GatheredItem[] = [];
    let offload = false;
    const walk = await forEachInput(path, ({ name, member, source }) => {
      let handed = 0;
      const onCodeObject = sink === undefined ? undefined : (c: FoundCodeObject): void => {
        handed++;
        sink(name, c);
      };
      const found = withCcobPrefetch({}, (hooks) => collectKernels(source, {
        ...hooks, ...options, decompressOffload: codecDecompressor(), nvZstd: (frame, capacity) => nodeCodecs.zstdDecompressFrame(frame, capacity),
        ...(onCodeObject !== undefined ? { onCodeObject } : {}),
      }));
      if (holdsOffloadCode(found.location)) offload = true;
      // In a package, members without device code are not listed.
      if (member !== undefined && found.codeObjects.length === 0 && handed === 0 && found.location.problems.length === 0) return;
      items.push({ name, codeObjects: found.codeObjects, problems: found.location.problems });
    });
    return { path, items, ...(walk.package !== undefined ? { walk } : {}), offload: offload || walk.package !== undefined };
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    return { path, items: [], offload: true, error: { code: e.code, message: e.message } };
  }
}

/**
 * Gathers every path named (see the module docblock). With `sink`, code objects go to it as they are read,
 * in the order they would be listed, and are not kept: a file's are handed on before its problems are known.
 */
export async function gatherKernels(paths: readonly string[], options: KernelListOptions = {}, sink?: CodeObjectSink): Promise<Gathered> {
  const gathered: GatheredPath[] = [];
  const run = await forEachPath(paths, {
    inspect: (path) => gatherPath(path, options, sink),
    classify: (g) => (g.error !== undefined ? { unreadable: g.error } : g.offload ? "input" : "skipped"),
    use: (g) => {
      gathered.push(g);
    },
  });
  return { paths: gathered, run };
}
