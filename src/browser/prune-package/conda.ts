/**
 * `offload-kit prune --keep=GPU x.conda -o x.conda` in the page: the `.conda` (a zip storing metadata.json,
 * `pkg-<id>.tar.zst` and `info-<id>.tar.zst`) written as the CLI writes it (src/packages/node/edit-conda.ts):
 * the pkg tar's files with device code pruned (./tarball.ts passes), encoded again as one zstd frame at level
 * 19 (conda-package-handling's level; its reader stops at a frame's end), the info tar's `info/paths.json` given
 * the edited files' new sha256 and size_in_bytes; both stored again (zip method 0, as cph writes them), every
 * other member and the zip's own records kept (src/packages/write/zip.ts rewriteZip: ranges of the File).
 */
import { crc32 } from "../../inspector/zip.js";
import { OffloadKitError } from "../../engine/errors.js";
import type { ByteSource } from "../../engine/source.js";
import { PATHS_JSON } from "../../packages/conda.js";
import { rewriteZip } from "../../packages/write/zip.js";
import type { ReplacedMember } from "../../packages/write/zip.js";
import { readZip, zipDataOffset } from "../../packages/zip.js";
import type { ZipIndex, ZipMember } from "../../packages/zip.js";
import { packageEdit } from "./members.js";
import type { PackageEdit, PruneScope } from "./members.js";
import type { EncodedTar } from "./tar-output.js";
import { editTarMembers, missingNote, writeTarEdits } from "./tarball.js";
import { partsSink } from "./zip.js";

const PKG = /^pkg-.*\.tar\.zst$/;
const INFO = /^info-.*\.tar\.zst$/;

/** The pkg and info members of a .conda's directory, or undefined when the zip is not one. */
export function condaMembers(index: ZipIndex): { pkg: number; info: number } | undefined {
  const pkg = index.members.findIndex((m) => PKG.test(m.name));
  const info = index.members.findIndex((m) => INFO.test(m.name));
  if (pkg < 0 || info < 0 || !index.members.some((m) => m.name === "metadata.json")) return undefined;
  return { pkg, info };
}

function storedOnly(member: ZipMember, name: string): void {
  if (member.method !== 0 || (member.flags & 1) !== 0) {
    throw new OffloadKitError("CONDA_UNSUPPORTED", `${name}!${member.name}: zip method ${member.method}${(member.flags & 1) !== 0 ? ", encrypted" : ""}; a .conda stores its members (conda-package-handling writes ZIP_STORED)`, { offset: member.localOffset, field: "method" });
  }
  if (member.compressedSize !== member.size) {
    throw new OffloadKitError("ZIP_BAD_SIZE", `${name}!${member.name}: stored with ${member.compressedSize} bytes but declares ${member.size}`, { offset: member.localOffset, field: "compressed size" });
  }
}

/** A tar stored in the zip. A conda tar is zstd, so its parts are bytes made here (never ranges of the File). */
function stored(tar: EncodedTar): ReplacedMember {
  const chunks = tar.parts.map((p) => {
    if (!("bytes" in p)) throw new Error("a .conda's tar is encoded, so it is bytes");
    return p.bytes;
  });
  let crc = 0;
  for (const chunk of chunks) crc = crc32(chunk, crc);
  return { method: 0, crc32: crc, size: tar.size, compressedSize: tar.size, write: (sink) => { for (const chunk of chunks) sink.write(chunk); } };
}

export async function pruneCondaPackage(source: ByteSource, name: string, scope: PruneScope): Promise<PackageEdit> {
  const { codecs } = scope;
  const index = readZip(source);
  const at = condaMembers(index);
  if (at === undefined) throw new OffloadKitError("CONDA_MALFORMED", `${name}: not a .conda package (no metadata.json, pkg-*.tar.zst and info-*.tar.zst)`);
  const pkg = index.members[at.pkg]!;
  const info = index.members[at.info]!;
  storedOnly(pkg, name);
  storedOnly(info, name);
  const pkgName = `${name}!${pkg.name}`;
  const infoName = `${name}!${info.name}`;
  const pkgStart = zipDataOffset(source, pkg);
  const found = await editTarMembers(source, pkgStart, pkg.compressedSize, "zstd", scope, pkgName);
  scope.check(found.edits);
  if (found.replaced.size === 0) return packageEdit("conda package", found.edits, false, [{ offset: 0, size: source.size }]);
  const pkgTar = (await writeTarEdits(source, pkgStart, pkg.compressedSize, "zstd", "conda", codecs, pkgName, found)).tar;
  // info/: nothing in it is edited; paths.json is given the pkg tar's edited files.
  const infoFound = { edits: [], replaced: new Map<number, Uint8Array>(), files: found.files };
  let sawPaths = false;
  const infoTar = await writeTarEdits(source, zipDataOffset(source, info), info.compressedSize, "zstd", "conda", codecs, infoName, infoFound, () => {
    sawPaths = true;
  });
  if (!sawPaths) throw new OffloadKitError("CONDA_MALFORMED", `${infoName}: no ${PATHS_JSON}, so the edited files' hashes cannot be said (conda would refuse them)`);

  const replaced = new Map<number, ReplacedMember>([[at.pkg, stored(pkgTar)], [at.info, stored(infoTar.tar)]]);
  const { parts, sink } = partsSink();
  rewriteZip(source, index, replaced, sink);
  return packageEdit("conda package", found.edits, true, parts, infoTar.missing.map(missingNote));
}
