/**
 * Which package writer edits a file, by its content (never its name): a `.conda` (./edit-conda.ts), an
 * image tarball, plain or compressed (./edit-image.ts), a tarball or legacy conda `.tar.bz2`
 * (./edit-tar.ts), an RPM (refused, below). Zips and `.deb`s keep their
 * own checks in src/cli/kit/outputs.ts.
 *
 * An RPM is refused: its signature header holds digests of the main header and payload (RPMSIGTAG_SHA256,
 * _MD5, RPMSIGTAG_PAYLOADSIZE, the main header's RPMTAG_PAYLOADDIGEST and per-file RPMTAG_FILEDIGESTS) and
 * usually an RSA/PGP signature over them made with the packager's key. The digests could be computed again;
 * the signature cannot, and an RPM written without it is no longer the package its vendor signed (dnf and
 * zypper refuse it with gpgcheck on, their default). So offload-kit says so instead of writing one.
 */
import { closeSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { OffloadKitError } from "../../engine/errors.js";
import type { ByteSource } from "../../engine/source.js";
import { readExact } from "../../engine/source.js";
import { FileSource } from "../../node/file-source.js";
import type { FileEdit } from "../../prune/node.js";
import type { PlannedEdit } from "../../prune/index.js";
import { locate } from "../../inspect/locate.js";
import { holdsOffloadCode } from "../../inspect/node/check.js";
import { sourceChunks } from "../chunks.js";
import { isRpm, rpmRefusal } from "../rpm.js";
export { rpmRefusal };
import { mayBeWritablePackage } from "../walk.js";
import { editCondaPackage, isCondaFile } from "./edit-conda.js";
import { editDebPackage, isDebFile } from "./edit-deb.js";
import type { NestedEdit } from "./edit-deb.js";
import { ImageSuspected, editTarPackage, tarballCompression } from "./edit-tar.js";
import { editCompressedImagePackage, editImagePackage, isImageFile } from "./edit-image.js";
import { forEachInput } from "./inputs.js";
import type { EditOptions } from "./edit-tar.js";
import { editZipPackage, isZipFile } from "./edit-zip.js";
import type { ZipPackageEdit } from "./edit-zip.js";

/** Packages inside packages are edited down to this depth (the walker's own limit: src/packages/walk.ts). */
const MAX_NESTING = 8;

export type PackageEditor = <P extends PlannedEdit>(path: string, output: string | undefined, options: EditOptions<P>) => Promise<ZipPackageEdit<P>>;

function isRpmFile(path: string): boolean {
  let source: FileSource | undefined;
  try {
    if (!statSync(path).isFile()) return false;
    source = FileSource.open(path);
    return source.size >= 4 && isRpm(readExact(source, 0, 4));
  } catch {
    return false;
  } finally {
    source?.close();
  }
}

/** An RPM's "edit": nothing written, one error naming the package. */
const refuseRpm: PackageEditor = async <P extends PlannedEdit>(path: string) => {
  const size = statSync(path).size;
  const error = rpmRefusal(path);
  return { kind: "rpm", refused: error, input: path, output: undefined, inputSize: size, outputSize: size, members: 0, withDeviceCode: 0, edits: [{ input: path, output: undefined, error }] } as ZipPackageEdit<P>;
};

/** The writer for the package at `path`, or undefined when it is none of these kinds. */
export async function packageEditor(path: string): Promise<PackageEditor | undefined> {
  if (isRpmFile(path)) return refuseRpm;
  if (isCondaFile(path)) return editCondaPackage;
  // Images before tarballs: an image's layers, digests and manifests are written by their own writer.
  if (isImageFile(path)) return editImagePackage;
  if ((await tarballCompression(path)) !== undefined) return editTarball;
  return undefined;
}

/** A tarball; a compressed one that holds an image (found as pass 1 reads it) goes to the image writer. */
const editTarball: PackageEditor = async <P extends PlannedEdit>(path: string, output: string | undefined, options: EditOptions<P>) => {
  try {
    return await editTarPackage(path, output, options);
  } catch (e) {
    if (!(e instanceof ImageSuspected)) throw e;
  }
  return (await editCompressedImagePackage(path, output, options)) ?? (await editTarPackage(path, output, options, false));
};

let nestedFiles = 0;

/**
 * The `nested` option of the package writers: a member that is itself a package is written to the scratch
 * folder, edited there by its own writer (into another scratch file), and its edits named below the outer
 * member (`x.tar.gz!wheels/y.whl!y/lib/z.so`). An RPM inside is refused, naming it, when a member holds device
 * code (it would have to be written); else it is left as it is. The outer writer's `check` runs over
 * every level's edits together, so an inner package is edited without it.
 */
export function nestedEditor<P extends PlannedEdit>(options: EditOptions<P>, depth = 1): NestedEdit<P> {
  return async (source: ByteSource, name: string, folder: string) => {
    if (depth >= MAX_NESTING || source.size < 16) return undefined;
    if (!mayBeWritablePackage(readExact(source, 0, Math.min(512, source.size)))) return undefined;
    const file = join(folder, `nested-${process.pid}-${++nestedFiles}`);
    const fd = openSync(file, "w");
    try {
      for await (const piece of sourceChunks(source)) writeSync(fd, piece);
    } finally {
      closeSync(fd);
    }
    if (isRpmFile(file)) {
      // Refused where it holds device code (the prune would have to write it); else it is left as it is.
      let withCode = false;
      try {
        await forEachInput(file, ({ source: member }) => {
          if (!withCode && holdsOffloadCode(locate(member))) withCode = true;
        });
      } finally {
        rmSync(file, { force: true });
      }
      if (withCode) throw rpmRefusal(name);
      return undefined;
    }
    const editor = isDebFile(file) ? editDebPackage : (await packageEditor(file)) ?? (isZipFile(file) ? editZipPackage : undefined);
    if (editor === undefined) {
      rmSync(file, { force: true });
      return undefined;
    }
    const out = `${file}.out`;
    const rename = (text: string) => text.split(file).join(name);
    const progress = options.progress;
    const inner: EditOptions<P> = { codecs: options.codecs, plan: options.plan, nested: nestedEditor(options, depth + 1), progress: progress === undefined ? undefined : (member, edit) => progress(rename(member), edit) };
    let edit: ZipPackageEdit<P>;
    try {
      edit = await editor(file, out, inner);
    } catch (e) {
      if (e instanceof OffloadKitError) throw new OffloadKitError(e.code, rename(e.message), { offset: e.offset, field: e.field });
      throw e;
    } finally {
      rmSync(file, { force: true });
    }
    const edits: FileEdit<P>[] = edit.edits.map((e) => ({ ...e, input: rename(e.input), output: undefined, ...(e.error === undefined ? {} : { error: new OffloadKitError(e.error.code, rename(e.error.message), { offset: e.error.offset, field: e.error.field }) }) }));
    const changed = edit.edits.some((e) => e.planned?.plan !== undefined);
    return { out: changed ? out : undefined, edits, withDeviceCode: edit.withDeviceCode };
  };
}
