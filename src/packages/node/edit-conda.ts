/**
 * prune, compress and decompress of a `.conda` package (conda's format v2: a zip, its members stored, holding
 * `metadata.json`, `pkg-<name>.tar.zst` with the files and `info-<name>.tar.zst` with info/), written as a
 * `.conda` that conda and conda-package-handling accept. The pkg tar goes through ./edit-tar.ts's two passes
 * (decoded once, files with device code edited, encoded again with zstd -19, cph's level); the info tar is
 * decoded and encoded again only when a file changed, with `info/paths.json`'s rows for the edited files given
 * their new sha256 and size_in_bytes; every other zip member is copied as its stored bytes, and the zip's
 * directory is written again with the two members' new CRC-32s, sizes and offsets (../write/zip.ts).
 *
 * Before anything is put in place both tars are decoded again (entries, edited files' sha256, paths.json's
 * rows) and the written zip is read back (same members in order; the replaced ones' bytes those encoded).
 *
 * | zip member | written |
 * |---|---|
 * | `metadata.json` (`conda_pkg_format_version: 2`) | its stored bytes |
 * | `pkg-*.tar.zst` | encoded again when a file in it changed, else its stored bytes |
 * | `info-*.tar.zst` | encoded again (paths.json) when a file changed, else its stored bytes |
 * | anything else | its stored bytes |
 */
import { chmodSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { OffloadKitError } from "../../engine/errors.js";
import { engine } from "../../engine/select.js";
import { readExact } from "../../engine/source.js";
import { copyRange } from "../../node/copy.js";
import { fileError } from "../../node/errors.js";
import { FileSource } from "../../node/file-source.js";
import { withOutputs } from "../../node/output.js";
import type { PlannedEdit } from "../../prune/index.js";
import { rewriteZip } from "../write/zip.js";
import type { ReplacedMember, ZipRewriteSink } from "../write/zip.js";
import { isZip, readZip, zipDataOffset } from "../zip.js";
import type { ZipIndex, ZipMember } from "../zip.js";
import { fileChunks } from "./edit-deb.js";
import { crc32 } from "./edit-zip.js";
import { PATHS_JSON, decodedChunks, editTarStream, encodeTar, fileSha256, scratchFolder, tarEncoder, verifyTar, withNotes } from "./edit-tar.js";
import type { EditOptions, TarFound, TarPackageEdit } from "./edit-tar.js";

const PKG = /^pkg-.*\.tar\.zst$/;
const INFO = /^info-.*\.tar\.zst$/;

/** The pkg and info members of a .conda's directory, or undefined when the zip is not one. */
function condaMembers(index: ZipIndex): { pkg: number; info: number } | undefined {
  const pkg = index.members.findIndex((m) => PKG.test(m.name));
  const info = index.members.findIndex((m) => INFO.test(m.name));
  if (pkg < 0 || info < 0 || !index.members.some((m) => m.name === "metadata.json")) return undefined;
  return { pkg, info };
}

/** Whether `path` is a `.conda` package: a zip holding metadata.json, pkg-*.tar.zst and info-*.tar.zst. */
export function isCondaFile(path: string): boolean {
  let source: FileSource | undefined;
  try {
    if (!statSync(path).isFile()) return false;
    source = FileSource.open(path);
    if (!isZip(readExact(source, 0, Math.min(4, source.size)))) return false;
    return condaMembers(readZip(source)) !== undefined;
  } catch {
    return false;
  } finally {
    source?.close();
  }
}

function storedOnly(member: ZipMember, name: string): void {
  if (member.method !== 0 || (member.flags & 1) !== 0) {
    throw new OffloadKitError("CONDA_UNSUPPORTED", `${name}!${member.name}: zip method ${member.method}${(member.flags & 1) !== 0 ? ", encrypted" : ""}; a .conda stores its members (conda-package-handling writes ZIP_STORED)`, { offset: member.localOffset, field: "method" });
  }
  if (member.compressedSize !== member.size) {
    throw new OffloadKitError("ZIP_BAD_SIZE", `${name}!${member.name}: stored with ${member.compressedSize} bytes but declares ${member.size}`, { offset: member.localOffset, field: "compressed size" });
  }
}

/** A stored member from a scratch file: its CRC-32 computed as it is read. */
function storedFile(path: string): ReplacedMember {
  let crc = 0;
  for (const chunk of fileChunks(path)) crc = crc32(chunk, crc);
  const size = statSync(path).size;
  return { method: 0, crc32: crc, size, compressedSize: size, write: (sink) => { for (const chunk of fileChunks(path)) sink.write(chunk); } };
}

/** Edits the `.conda` at `path` with `plan`, writing the new package to `output` (undefined: a dry run). */
export async function editCondaPackage<P extends PlannedEdit>(path: string, output: string | undefined, options: EditOptions<P>): Promise<TarPackageEdit<P>> {
  const source = FileSource.open(path);
  const scratch = scratchFolder("conda");
  try {
    const mode = statSync(path).mode & 0o7777;
    const index = readZip(source);
    const at = condaMembers(index);
    if (at === undefined) throw new OffloadKitError("CONDA_MALFORMED", `${path}: not a .conda package (no metadata.json, pkg-*.tar.zst and info-*.tar.zst)`);
    const pkg = index.members[at.pkg]!;
    const info = index.members[at.info]!;
    storedOnly(pkg, path);
    storedOnly(info, path);
    const destination = options.destination ?? output;
    if (destination !== undefined && resolve(destination) !== resolve(path) && basename(destination) !== basename(path)) {
      // conda-package-handling finds the tars by the file's own name (pkg-<name>.tar.zst for <name>.conda).
      const id = pkg.name.slice("pkg-".length, -".tar.zst".length);
      if (basename(destination) !== `${id}.conda`) {
        throw new OffloadKitError("CONDA_NAME_MISMATCH", `${destination}: a .conda must be named for the tars it holds (${pkg.name}), as conda finds them by the file name: name it ${id}.conda (or use --out-dir or --in-place)`, { field: "-o" });
      }
    }
    const pkgName = `${path}!${pkg.name}`;
    const infoName = `${path}!${info.name}`;

    const found: TarFound<P> = { names: 0, edits: [], files: [], entries: 0 };
    const pkgPlain = join(scratch.path, "pkg.tar");
    await editTarStream(decodedChunks(source, zipDataOffset(source, pkg), pkg.compressedSize, "zstd"), pkgPlain, pkgName, scratch.path, options, found);
    options.check?.(found.edits);

    const replaced = new Map<number, ReplacedMember>();
    let missingRows: readonly string[] = [];
    if (found.files.length > 0) {
      const pkgEncoded = join(scratch.path, "pkg.tar.zst");
      await encodeTar(pkgPlain, "zstd", tarEncoder("zstd", pkgName, true), pkgEncoded, pkgName, undefined);
      await verifyTar(pkgEncoded, "zstd", pkgName, found.files, found.entries, false);

      // info/: decoded (nothing in it is edited: a plan that changes nothing), paths.json rewritten.
      const infoFound: TarFound<P> = { names: 0, edits: [], files: [], entries: 0 };
      const infoPlain = join(scratch.path, "info.tar");
      const keep = { ...options, plan: (() => { throw new OffloadKitError("NO_OFFLOAD_CONTENT", "info/ is not edited"); }) as EditOptions<P>["plan"] };
      await editTarStream(decodedChunks(source, zipDataOffset(source, info), info.compressedSize, "zstd"), infoPlain, infoName, scratch.path, keep, infoFound);
      const infoEncoded = join(scratch.path, "info.tar.zst");
      const encoded = await encodeTar(infoPlain, "zstd", tarEncoder("zstd", infoName, true), infoEncoded, infoName, found.files);
      if (!encoded.paths) throw new OffloadKitError("CONDA_MALFORMED", `${infoName}: no ${PATHS_JSON}, so the edited files' hashes cannot be said (conda would refuse them)`);
      missingRows = encoded.missing;
      await verifyTar(infoEncoded, "zstd", infoName, found.files, infoFound.entries, true);
      replaced.set(at.pkg, storedFile(pkgEncoded));
      replaced.set(at.info, storedFile(infoEncoded));
    }

    const counting = { position: 0, write(b: Uint8Array) { this.position += b.length; }, copy(_: number, length: number) { this.position += length; } };
    let outputSize = replaced.size === 0 ? source.size : rewriteZip(source, index, replaced, counting);
    if (output !== undefined) {
      outputSize = withOutputs((open) => {
        const out = open(output, { bufferSize: 1 << 20 });
        const sink: ZipRewriteSink = {
          get position() {
            return out.position;
          },
          write: (bytes) => out.write(bytes),
          copy: (offset, length) => copyRange(engine(), source, offset, length, out),
        };
        if (replaced.size === 0) sink.copy(0, source.size);
        else rewriteZip(source, index, replaced, sink);
        const size = out.position;
        out.close();
        if (out.tempPath !== undefined) {
          chmodSync(out.tempPath, mode);
          if (replaced.size > 0) verifyConda(out.tempPath, output, index, replaced, { [at.pkg]: join(scratch.path, "pkg.tar.zst"), [at.info]: join(scratch.path, "info.tar.zst") });
        }
        return size;
      });
    }
    return {
      kind: "conda", compression: "zstd", input: path, output, inputSize: source.size, outputSize, members: found.entries, withDeviceCode: found.names,
      edits: withNotes(found.edits, missingRows, path, output), record: replaced.size > 0 ? `${info.name}!${PATHS_JSON}` : undefined,
    };
  } catch (e) {
    if (e instanceof OffloadKitError) throw e;
    throw fileError(path, e);
  } finally {
    source.close();
    scratch.done();
  }
}

/** The written zip read back: the same members in order, untouched ones unchanged, replaced ones the bytes encoded. */
function verifyConda(tempPath: string, output: string, before: ZipIndex, replaced: ReadonlyMap<number, ReplacedMember>, encoded: Record<number, string>): void {
  const fail = (message: string) => new OffloadKitError("VERIFY_FAILED", `${output}: the written package is wrong, nothing was put in place: ${message}`);
  const written = FileSource.open(tempPath);
  try {
    const index = readZip(written);
    if (index.members.map((m) => m.name).join("\0") !== before.members.map((m) => m.name).join("\0")) throw fail("its zip members differ");
    index.members.forEach((m, i) => {
      const old = before.members[i]!;
      const now = replaced.get(i);
      if (now === undefined) {
        if (m.crc32 !== old.crc32 || m.compressedSize !== old.compressedSize || m.size !== old.size) throw fail(`'${m.name}' changed`);
        return;
      }
      if (m.method !== 0 || m.size !== now.size || m.crc32 !== now.crc32 >>> 0) throw fail(`'${m.name}': the directory disagrees with what was written`);
      if (fileSha256(tempPath, zipDataOffset(written, m), m.size) !== fileSha256(encoded[i]!)) throw fail(`'${m.name}' is not the tar encoded`);
    });
  } catch (e) {
    if (e instanceof OffloadKitError) throw e;
    throw fileError(output, e);
  } finally {
    written.close();
  }
}
