/**
 * `offload-kit prune --keep=GPU x.tar.xz -o out.tar.xz` in the page: a tarball (plain, gzip, xz, zstd, bzip2;
 * a legacy conda `.tar.bz2` among them) written as the CLI writes it (src/packages/node/edit-tar.ts), in two
 * passes as the CLI's: the first decodes the tar and prunes each regular file with device code in memory
 * (./members.ts), keeping only the edited files' new bytes; the second decodes it again and writes it with
 * those bodies, `info/paths.json` (a conda package: it comes before the files it describes) given their new
 * sha256 and size_in_bytes (src/packages/conda.ts, the CLI's code), encoded with the input's compressor
 * (./encoders.ts) and read back (./tar-output.ts). Images are the CLI's (their digests chain).
 */
import type { Codecs } from "../../compress/codecs.js";
import { OffloadKitError } from "../../engine/errors.js";
import { readExact } from "../../engine/source.js";
import type { ByteSource } from "../../engine/source.js";
import { ChunkReader } from "../../packages/chunks.js";
import { PATHS_JSON, condaPath, newPathsJson } from "../../packages/conda.js";
import { compressionOf } from "../../packages/decoders.js";
import type { Compression } from "../../packages/decoders.js";
import { isTarHeader } from "../../packages/tar.js";
import { TAR_BLOCK } from "../../packages/tar.js";
import { rewriteTarStream } from "../../packages/write/tar-stream.js";
import { decodedRange } from "./decode.js";
import type { TarPurpose } from "./encoders.js";
import { digests, packageEdit, pruneMember, sameBytes } from "./members.js";
import type { MemberEdit, PackageEdit, PruneScope } from "./members.js";
import { rewriteTar, verifyTar } from "./tar-output.js";
import type { EncodedTar } from "./tar-output.js";

/** The first block of the tar `source` holds, decoded: its compression, or undefined when it is no tarball. */
export async function tarballCompression(source: ByteSource, codecs: Codecs): Promise<{ readonly compression: Compression | undefined } | undefined> {
  const compression = compressionOf(readExact(source, 0, Math.min(16, source.size)));
  const reader = ChunkReader.ofStream(decodedRange(source, 0, source.size, compression, codecs, "tarball"));
  try {
    const head = await reader.read(TAR_BLOCK);
    return head.length === TAR_BLOCK && isTarHeader(head) ? { compression } : undefined;
  } catch {
    return undefined;
  } finally {
    await reader.close();
  }
}

/** What the first pass found: the members edited and, by entry index, the new bodies. */
export interface TarEdits {
  readonly edits: MemberEdit[];
  readonly replaced: Map<number, Uint8Array>;
  /** The edited files as paths.json names them, with their new digests. */
  readonly files: { readonly path: string; readonly sha256: string; readonly newSize: number }[];
}

/** Pass 1 over a tar: each regular file with device code pruned; an image is refused (the CLI writes those). */
export async function editTarMembers(source: ByteSource, start: number, length: number, method: Compression | undefined, scope: PruneScope, name: string): Promise<TarEdits> {
  const { codecs } = scope;
  const found: TarEdits = { edits: [], replaced: new Map(), files: [] };
  const reader = ChunkReader.ofStream(decodedRange(source, start, length, method, codecs, name));
  try {
    await rewriteTarStream(reader, () => {}, async (entry, body, index) => {
      const path = condaPath(entry.name);
      if (path === "manifest.json" || path === "oci-layout") {
        throw new OffloadKitError("PACKAGE_NOT_WRITTEN_HERE", `${name}: a container image: the page does not write images (their layers' digests, diff_ids and manifests chain); offload-kit prune writes it`);
      }
      const edit = await pruneMember(await body(), `${name}!${entry.name.replace(/^\.\//, "")}`, scope);
      if (edit === undefined) return undefined;
      found.edits.push(edit);
      if (edit.output === undefined) return undefined;
      found.replaced.set(index, edit.output);
      found.files.push({ path, sha256: (await digests(edit.output, codecs)).sha256, newSize: edit.output.length });
      return undefined;
    }, name);
  } finally {
    await reader.close();
  }
  return found;
}

/** Pass 2: the tar written with pass 1's bodies and, when it holds one, paths.json rewritten; read back. */
export async function writeTarEdits(source: ByteSource, start: number, length: number, method: Compression | undefined, purpose: TarPurpose, codecs: Codecs, name: string, found: TarEdits, onPaths?: () => void): Promise<{ tar: EncodedTar; missing: readonly string[] }> {
  let missing: readonly string[] = [];
  const expected = new Map<number, (body: Uint8Array) => boolean>();
  for (const [index, bytes] of found.replaced) expected.set(index, (b) => sameBytes(b, bytes));
  const tar = await rewriteTar(source, start, length, method, purpose, codecs, name, async (entry, body, index) => {
    const now = found.replaced.get(index);
    if (now !== undefined) return now;
    if (condaPath(entry.name) !== PATHS_JSON) return undefined;
    onPaths?.();
    const made = newPathsJson(await body(), found.files, name);
    missing = made.missing;
    expected.set(index, (b) => sameBytes(b, made.bytes));
    return made.bytes;
  });
  await verifyTar(tar, source, method, codecs, name, expected);
  return { tar, missing };
}

/** As the CLI notes an edited file conda's paths.json does not list (src/packages/node/edit-tar.ts withNotes). */
export function missingNote(path: string): string {
  return `${PATHS_JSON} has no sha256 or size for '${path}' (left as it is)`;
}

export async function pruneTarballPackage(source: ByteSource, name: string, scope: PruneScope, compression: Compression | undefined): Promise<PackageEdit> {
  const found = await editTarMembers(source, 0, source.size, compression, scope, name);
  scope.check(found.edits);
  if (found.replaced.size === 0) return packageEdit("tarball", found.edits, false, [{ offset: 0, size: source.size }]);
  const { tar, missing } = await writeTarEdits(source, 0, source.size, compression, "tarball", scope.codecs, name, found);
  return packageEdit("tarball", found.edits, true, tar.parts, missing.map((p) => missingNote(p)));
}
