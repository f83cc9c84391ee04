/**
 * Packages found in a folder (a wheel in a virtualenv's cache, a .deb in a mirror): each is edited by its own
 * writer (src/packages/node/editors.ts) once the folder's plain files are done (./apply.ts), in place or in the
 * mirror, like any other file of the tree.
 *
 * The new package is written to a registered temporary file beside its destination (the writer's own checks
 * run there: read back, verified) and renamed over the destination only when something changed, so an
 * unchanged package keeps its inode (and, in a mirror, its hard link to the input). In a mirror the
 * destination is the link or copy ./apply.ts made, so the rename replaces that name and never writes through
 * it into the input. Other names of the same file in the tree are linked to the new one. A package whose edit
 * fails is left as it was (in place, or linked in the mirror) and reported as an error; the others go on.
 */
import { linkSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { OffloadKitError, isOffloadKitError } from "../engine/errors.js";
import { fileError } from "../node/errors.js";
import { createTemporary, removeTemporary, settleTemporary } from "../process/temporaries.js";
import type { PlannedEdit } from "../prune/index.js";
import { editDebPackage, isDebFile } from "../packages/node/edit-deb.js";
import type { EditOptions } from "../packages/node/edit-tar.js";
import { editZipPackage, isZipFile } from "../packages/node/edit-zip.js";
import type { ZipPackageEdit } from "../packages/node/edit-zip.js";
import { nestedEditor, packageEditor } from "../packages/node/editors.js";
import type { PackageEditor } from "../packages/node/editors.js";
import type { PathsEdit } from "./apply.js";
import { mirrorPath } from "./plan.js";
import type { PreparedInputs } from "./plan.js";

let temporaries = 0;

async function editorOf(path: string): Promise<PackageEditor | undefined> {
  if (isDebFile(path)) return editDebPackage;
  return (await packageEditor(path)) ?? (isZipFile(path) ? editZipPackage : undefined);
}

/** Replaces `at` with a hard link to `target` (a link made beside it, then renamed over it). */
function relink(target: string, at: string): void {
  const temp = join(dirname(at), `.${basename(at)}.offload-kit-${process.pid}-${++temporaries}.link`);
  try {
    linkSync(target, temp);
    renameSync(temp, at);
  } catch (e) {
    rmSync(temp, { force: true });
    throw fileError(at, e);
  }
}

/**
 * Edits the packages among the folders' files that ./apply.ts left unchanged; returns their edits (errors
 * included) for the report. `dryRun`: each is edited in a scratch folder only.
 */
export async function editTreePackages<P extends PlannedEdit>(prepared: PreparedInputs, result: PathsEdit<P>, dryRun: boolean, options: EditOptions<P>): Promise<ZipPackageEdit<P>[]> {
  const edited = new Set(result.edits.filter((e) => e.planned?.plan !== undefined).map((e) => e.input));
  const out: ZipPackageEdit<P>[] = [];
  for (const tree of prepared.trees) {
    for (const group of tree.groups) {
      const [first, ...others] = group.names;
      if (first === undefined || edited.has(first.path)) continue;
      const editor = await editorOf(first.path);
      if (editor === undefined) continue;
      const target = tree.mirror === undefined ? first.path : mirrorPath(tree.mirror.root, first.rel);
      const inner = { codecs: options.codecs, plan: options.plan, nested: nestedEditor(options), progress: options.progress };
      try {
        if (dryRun) {
          out.push(await editor(first.path, undefined, inner));
          continue;
        }
        const temp = join(dirname(target), `.${basename(target)}.offload-kit-${process.pid}-${++temporaries}.pkg`);
        createTemporary(temp, () => undefined);
        let edit: ZipPackageEdit<P>;
        try {
          edit = await editor(first.path, temp, { ...inner, destination: target });
        } catch (e) {
          rmSync(temp, { force: true });
          removeTemporary(temp);
          throw e;
        }
        if (!edit.edits.some((e) => e.planned?.plan !== undefined)) {
          rmSync(temp, { force: true });
          removeTemporary(temp);
          out.push({ ...edit, output: target, outputSize: edit.inputSize });
          continue;
        }
        settleTemporary(temp, () => {
          try {
            renameSync(temp, target);
          } catch (e) {
            throw fileError(target, e);
          }
        });
        for (const name of others) relink(target, tree.mirror === undefined ? name.path : mirrorPath(tree.mirror.root, name.rel));
        const rename = (text: string | undefined) => (text === undefined ? undefined : text.split(temp).join(target));
        out.push({ ...edit, output: target, edits: edit.edits.map((e) => ({ ...e, output: rename(e.output) })) });
      } catch (e) {
        if (!isOffloadKitError(e)) throw e;
        const error = e as OffloadKitError;
        out.push({ kind: "package", refused: error, input: first.path, output: undefined, inputSize: 0, outputSize: 0, members: 0, withDeviceCode: 0, edits: [{ input: first.path, output: undefined, error }] } as ZipPackageEdit<P>);
      }
    }
  }
  return out;
}
