/**
 * "Download, pruned for GPU" of a dropped package: `offload-kit prune --keep=GPU PKG -o OUT` in the page's
 * worker, the package written back as its kind, as the CLI's writers (src/packages/node/editors.ts) write it:
 * wheels and other zips (./zip.ts), `.conda` (./conda.ts), .deb (./deb.ts), tarballs plain or gzip, xz, zstd,
 * bzip2, a legacy conda `.tar.bz2` among them (./tarball.ts). Refused with the CLI command that writes them:
 * RPMs (the CLI refuses them too: their signature and digests), container images, anything else.
 * Members are held in memory one at a time (the page has no scratch disk); the output is parts: ranges of
 * the File where bytes are kept as they are, and the bytes made here.
 */
import type { Codecs } from "../../compress/codecs.js";
import { OffloadKitError } from "../../engine/errors.js";
import { readExact } from "../../engine/source.js";
import type { ByteSource } from "../../engine/source.js";
import { isRpm, rpmRefusal } from "../../packages/rpm.js";
import { readZip } from "../../packages/zip.js";
import type { PruneReply } from "../protocol.js";
import { condaMembers, pruneCondaPackage } from "./conda.js";
import { isDebPackage, pruneDebPackage } from "./deb.js";
import { pruneTarballPackage, tarballCompression } from "./tarball.js";
import { isZipPackage, pruneZipPackage } from "./zip.js";

export { isZipPackage, pruneZipPackage };

/** The package `source` (named `name`) pruned to `keep`, written back as its kind. */
export async function prunePackage(source: ByteSource, name: string, keep: readonly string[], codecs: Codecs): Promise<PruneReply> {
  const cli = `offload-kit prune --keep=${keep.join(",")} ${name} -o OUT`;
  if (isZipPackage(source)) {
    return condaMembers(readZip(source)) !== undefined ? pruneCondaPackage(source, name, keep, codecs) : pruneZipPackage(source, name, keep, codecs);
  }
  if (isDebPackage(source)) return pruneDebPackage(source, name, keep, codecs);
  if (source.size >= 4 && isRpm(readExact(source, 0, 4))) {
    throw rpmRefusal(name);
  }
  const tarball = await tarballCompression(source, codecs);
  if (tarball === undefined) throw new OffloadKitError("PACKAGE_NOT_WRITTEN_HERE", `${name}: not a package the page writes (wheels and zips, .conda, .deb, tarballs); ${cli} writes what the CLI can`);
  return pruneTarballPackage(source, name, keep, codecs, tarball.compression);
}
