/**
 * Which package writer edits a file, by its content (never its name): a `.conda` (./edit-conda.ts), a
 * tarball or legacy conda `.tar.bz2` (./edit-tar.ts), an RPM (refused, below). Zips and `.deb`s keep their
 * own checks in src/cli/kit/outputs.ts.
 *
 * An RPM is refused: its signature header holds digests of the main header and payload (RPMSIGTAG_SHA256,
 * _MD5, RPMSIGTAG_PAYLOADSIZE, the main header's RPMTAG_PAYLOADDIGEST and per-file RPMTAG_FILEDIGESTS) and
 * usually an RSA/PGP signature over them made with the packager's key. The digests could be computed again;
 * the signature cannot, and an RPM written without it is no longer the package its vendor signed (dnf and
 * zypper refuse it with gpgcheck on, their default). So offload-kit says so instead of writing one.
 */
import { statSync } from "node:fs";
import { OffloadKitError } from "../../engine/errors.js";
import { readExact } from "../../engine/source.js";
import { FileSource } from "../../node/file-source.js";
import type { PlannedEdit } from "../../prune/index.js";
import { isRpm } from "../rpm.js";
import { editCondaPackage, isCondaFile } from "./edit-conda.js";
import { editTarPackage, tarballCompression } from "./edit-tar.js";
import type { EditOptions } from "./edit-tar.js";
import type { ZipPackageEdit } from "./edit-zip.js";

export type PackageEditor = <P extends PlannedEdit>(path: string, output: string | undefined, options: EditOptions<P>) => Promise<ZipPackageEdit<P>>;

/** What prune/compress/decompress say of an RPM. */
export function rpmRefusal(path: string): OffloadKitError {
  return new OffloadKitError("RPM_NOT_WRITABLE",
    `${path}: an RPM is not written again: its signature header's digests and the packager's signature over them cover ` +
    "the payload, and offload-kit cannot sign for the vendor (rpm -K and dnf would reject the result); " +
    "prune the installed files instead (offload-kit prune --in-place DIR), or rebuild the package with rpmbuild", { field: "package" });
}

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
  if ((await tarballCompression(path)) !== undefined) return editTarPackage;
  return undefined;
}
