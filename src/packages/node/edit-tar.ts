/**
 * prune, compress and decompress of a tarball (plain, or gzip, xz, zstd, bzip2), a legacy conda package
 * (`.tar.bz2`) among them, written as a tarball of the same kind; and the tar passes a `.conda` package
 * (./edit-conda.ts) makes of its `pkg-*.tar.zst` and `info-*.tar.zst`.
 *
 * Two passes over the tar, each streamed:
 * 1. the stream is decoded once and written, uncompressed, into a scratch folder with every regular file
 *    holding device code (check's rule) edited through the crash-safe single-file path (./edit-deb.ts
 *    `rewriteDataTar`: headers, pax and long-name records, other bodies, padding and end blocks kept; an
 *    edited entry's header keeps every field but its size and checksum);
 * 2. that tar is encoded again with the input's compressor (bzip2 -9, as Python's tarfile and so
 *    conda-package-handling write it; zstd -19, cph's level; xz -6 and zstd -3 otherwise, gzip -9), with
 *    `info/paths.json`, when the tar holds one (a conda package), given the edited files' new sha256 and
 *    size_in_bytes (../conda.ts). Two passes because a `.tar.bz2` puts info/ before the files it describes.
 *
 * The encoded tar is read back before anything is put in place: decoded again, as many entries, each edited
 * file's sha256 and size what was written and what paths.json now says. The package is then written to a
 * temporary file beside its destination and renamed into place (src/node/output.ts). Scratch disk: the
 * decoded tar plus the encoded one (`$TMPDIR`), removed at the end.
 */
import { createHash } from "node:crypto";
import { chmodSync, closeSync, mkdtempSync, openSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Codecs } from "../../compress/codecs.js";
import { OffloadKitError } from "../../engine/errors.js";
import type { ByteSource } from "../../engine/source.js";
import { readExact } from "../../engine/source.js";
import { fileError } from "../../node/errors.js";
import { FileSource } from "../../node/file-source.js";
import { withOutputs } from "../../node/output.js";
import { createNamedTemporary, removeTemporary } from "../../process/temporaries.js";
import type { FileEdit } from "../../prune/node.js";
import type { PlannedEdit } from "../../prune/index.js";
import { ChunkReader, sourceChunks } from "../chunks.js";
import { PATHS_JSON, condaPath, newPathsJson, readPathsJson } from "../conda.js";
export { PATHS_JSON, newPathsJson };

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
import { compressionOf } from "../decoders.js";
import type { Compression } from "../decoders.js";
import { TAR_BLOCK, isTarHeader, walkTar } from "../tar.js";
import type { TarEntry } from "../tar.js";
import { fileChunks, headerSize, openEncoder, padding, program, rewriteDataTar, tarHeaderWithSize } from "./edit-deb.js";
import type { EditedFile, NestedEdit } from "./edit-deb.js";
import type { ZipPackageEdit } from "./edit-zip.js";
import { nodeDecoders } from "./io.js";

/** paths.json is read whole; one larger than this is refused (conda-forge's largest are a few MB). */
const MAX_PATHS_JSON = 256 * 1024 * 1024;

export interface EditOptions<P extends PlannedEdit> {
  readonly codecs: Codecs;
  readonly plan: (source: ByteSource, name: string) => P;
  readonly check?: (edits: readonly FileEdit<P>[]) => void;
  /** The name the output will have when `output` is a temporary file renamed later (src/trees/packages.ts). */
  readonly destination?: string;
  /** Packages inside are edited by their own writers (./editors.ts nestedEditor). */
  readonly nested?: NestedEdit<P>;
  /** Told of each member read and each edited (src/cli/kit/package-progress.ts). */
  readonly progress?: (member: string, edit?: FileEdit<P>) => void;
}

export interface TarPackageEdit<P extends PlannedEdit> extends ZipPackageEdit<P> {
  readonly kind: "tarball" | "conda";
  readonly compression?: Compression;
}

/** What pass 1 found: the edits, the files changed, the entries seen. */
export interface TarFound<P extends PlannedEdit> {
  names: number;
  edits: FileEdit<P>[];
  files: EditedFile[];
  entries: number;
}

function missing(what: string, name: string): OffloadKitError {
  return new OffloadKitError("ENCODER_MISSING", `writing ${name} needs the ${what} program on PATH`);
}

/** The program and arguments that encode `method` again: `conda` for a conda package's levels. */
export function tarEncoder(method: Compression | undefined, name: string, conda: boolean): { command: string; args: string[] } | undefined {
  if (method === undefined || method === "gzip") return undefined;
  if (method === "bzip2") {
    const bzip2 = program("bzip2");
    if (bzip2 === undefined) throw missing("bzip2", name);
    return { command: bzip2, args: ["-9", "-c", "-q"] };
  }
  if (method === "zstd") {
    const zstd = program("zstd");
    if (zstd === undefined) throw missing("zstd", name);
    // conda-package-handling's level for .conda is 19; zstd's own default otherwise.
    return { command: zstd, args: [conda ? "-19" : "-3", "-T0", "-c", "-q"] };
  }
  const xz = program("xz");
  if (xz === undefined) throw missing("xz", name);
  return { command: xz, args: ["-6", "-T0", "--memlimit-compress=160MiB", "-c", "-q"] };
}

/** The decoded chunks of `length` bytes of `source` from `start`, compressed with `method`. */
export function decodedChunks(source: ByteSource, start: number, length: number, method: Compression | undefined): AsyncIterable<Uint8Array> {
  const raw = sourceChunks(source, start, length);
  return method === undefined ? raw : nodeDecoders().decode(method, raw);
}

/** Whether `path` is a tarball (a tar header first, maybe behind gzip, xz, zstd or bzip2): its compression, or undefined when not. */
export async function tarballCompression(path: string): Promise<{ readonly compression: Compression | undefined } | undefined> {
  let source: FileSource | undefined;
  try {
    if (!statSync(path).isFile()) return undefined;
    source = FileSource.open(path);
    if (source.size < 16) return undefined;
    const method = compressionOf(readExact(source, 0, 16));
    if (method === undefined) return source.size >= TAR_BLOCK && isTarHeader(readExact(source, 0, TAR_BLOCK)) ? { compression: undefined } : undefined;
    const reader = ChunkReader.ofStream(decodedChunks(source, 0, source.size, method));
    try {
      return isTarHeader(await reader.read(TAR_BLOCK)) ? { compression: method } : undefined;
    } finally {
      await reader.close();
    }
  } catch {
    return undefined;
  } finally {
    source?.close();
  }
}

/** Pass 1: the tar in `chunks` written uncompressed to `plainPath`, its files with device code edited. */
export async function editTarStream<P extends PlannedEdit>(chunks: AsyncIterable<Uint8Array>, plainPath: string, name: string, folder: string, options: EditOptions<P>, found: TarFound<P>, visible?: (entry: TarEntry) => boolean): Promise<void> {
  const fd = openSync(plainPath, "w");
  const reader = ChunkReader.ofStream(chunks);
  try {
    const encoder = openEncoder(undefined, fd);
    await rewriteDataTar(reader, encoder, name, folder, { ...options, visible }, found);
    await encoder.end();
  } finally {
    await reader.close();
    closeSync(fd);
  }
}

/** The paths.json entry of a plain tar file, if any: where it is and its text. */
async function findPathsJson(plainPath: string): Promise<{ entry: TarEntry; body: Uint8Array } | undefined> {
  const source = FileSource.open(plainPath);
  const reader = ChunkReader.ofSource(source);
  try {
    let found: { entry: TarEntry; body: Uint8Array } | undefined;
    for await (const entry of walkTar(reader)) {
      if (entry.type !== "file" || condaPath(entry.name) !== PATHS_JSON) continue;
      if (entry.size > MAX_PATHS_JSON) throw new OffloadKitError("CONDA_UNSUPPORTED", `${PATHS_JSON} of ${entry.size} bytes is larger than ${MAX_PATHS_JSON}`, { offset: entry.headerOffset });
      // The last one wins, as extraction leaves it.
      found = { entry, body: await reader.read(entry.size) };
    }
    return found;
  } finally {
    await reader.close();
    source.close();
  }
}

/**
 * Pass 2: the plain tar at `plainPath` encoded into `outPath` with `method`, the paths.json entry's body
 * replaced by `replacePaths` (when given and the tar holds one). Returns whether paths.json was rewritten and
 * the edited paths it had no row for.
 */
export async function encodeTar(plainPath: string, method: Compression | undefined, command: { command: string; args: string[] } | undefined, outPath: string, name: string, files: readonly EditedFile[] | undefined): Promise<{ paths: boolean; missing: readonly string[] }> {
  const paths = files === undefined ? undefined : await findPathsJson(plainPath);
  let replacement: { start: number; end: number; bytes: Uint8Array[] } | undefined;
  let missingRows: readonly string[] = [];
  if (paths !== undefined) {
    const { entry, body } = paths;
    const made = newPathsJson(body, files!, name);
    missingRows = made.missing;
    const source = FileSource.open(plainPath);
    const header = readExact(source, entry.headerOffset, TAR_BLOCK);
    source.close();
    if (entry.sizeInPax === true || headerSize(header) !== entry.size) throw new OffloadKitError("CONDA_UNSUPPORTED", `${name}!${entry.name}: its size is in a pax record, which offload-kit does not rewrite`, { offset: entry.headerOffset });
    replacement = {
      start: entry.headerOffset,
      end: entry.dataOffset + entry.size + padding(entry.size),
      bytes: [tarHeaderWithSize(header, made.bytes.length), made.bytes, new Uint8Array(padding(made.bytes.length))],
    };
  }
  const fd = openSync(outPath, "w");
  const plain = FileSource.open(plainPath);
  try {
    const encoder = openEncoder(method, fd, command);
    try {
      if (replacement === undefined) {
        for await (const piece of sourceChunks(plain)) await encoder.write(piece);
      } else {
        for await (const piece of sourceChunks(plain, 0, replacement.start)) await encoder.write(piece);
        for (const b of replacement.bytes) await encoder.write(b);
        for await (const piece of sourceChunks(plain, replacement.end)) await encoder.write(piece);
      }
    } finally {
      await encoder.end();
    }
  } finally {
    plain.close();
    closeSync(fd);
  }
  return { paths: replacement !== undefined, missing: missingRows };
}

/**
 * An encoded tar read back: decoded again, `entries` entries, each edited file's bytes the sha256 and size
 * it was written with, and (when `paths`) paths.json's rows for them saying the same.
 */
export async function verifyTar(encodedPath: string, method: Compression | undefined, name: string, files: readonly EditedFile[], entries: number | undefined, paths: boolean): Promise<void> {
  const fail = (message: string) => new OffloadKitError("VERIFY_FAILED", `${name}: the tar written is wrong, nothing was put in place: ${message}`);
  const written = FileSource.open(encodedPath);
  const reader = ChunkReader.ofStream(decodedChunks(written, 0, written.size, method));
  try {
    const expected = new Map(files.map((f) => [condaPath(f.path), f]));
    let count = 0;
    let rows: Map<string, { sha256?: string; size?: number }> | undefined;
    for await (const entry of walkTar(reader)) {
      count++;
      if (entry.type !== "file") continue;
      if (paths && condaPath(entry.name) === PATHS_JSON) {
        const text = utf8.decode(await reader.read(entry.size));
        const parsed = JSON.parse(text) as { paths: { _path: string; sha256?: string; size_in_bytes?: number }[] };
        rows = new Map(parsed.paths.map((r) => [condaPath(r._path), { sha256: r.sha256, size: r.size_in_bytes }]));
        if (readPathsJson(text).length !== parsed.paths.length) throw fail(`${PATHS_JSON} reads differently`);
        continue;
      }
      const file = expected.get(condaPath(entry.name));
      if (file === undefined) continue;
      const hash = createHash("sha256");
      let size = 0;
      for await (const piece of reader.take(entry.size)) {
        hash.update(piece);
        size += piece.length;
      }
      if (size !== file.newSize || hash.digest("hex") !== file.sha256) throw fail(`'${entry.name}' is not what was edited`);
    }
    if (entries !== undefined && count !== entries) throw fail(`it holds ${count} entries, not ${entries}`);
    if (paths) {
      if (rows === undefined) throw fail(`no ${PATHS_JSON}`);
      for (const file of files) {
        const row = rows.get(condaPath(file.path));
        if (row === undefined) continue;
        if ((row.sha256 !== undefined && row.sha256 !== file.sha256) || (row.size !== undefined && row.size !== file.newSize)) throw fail(`${PATHS_JSON} does not say '${file.path}' as written`);
      }
    }
  } finally {
    await reader.close();
    written.close();
  }
}

/** A scratch folder for one package, removed by `done`. */
export function scratchFolder(kind: string): { readonly path: string; done(): void } {
  const path = createNamedTemporary(tmpdir(), () => mkdtempSync(join(tmpdir(), `offload-kit-${process.pid}-${kind}-`)));
  return { path, done: () => { rmSync(path, { recursive: true, force: true }); removeTemporary(path); } };
}

/** Hash of a file's bytes (sha256 hex), read in chunks. */
export function fileSha256(path: string, start = 0, length?: number): string {
  const hash = createHash("sha256");
  if (start === 0 && length === undefined) {
    for (const chunk of fileChunks(path)) hash.update(chunk);
    return hash.digest("hex");
  }
  const source = FileSource.open(path);
  try {
    const end = start + (length ?? source.size - start);
    for (let at = start; at < end; at += 1 << 20) hash.update(readExact(source, at, Math.min(1 << 20, end - at)));
  } finally {
    source.close();
  }
  return hash.digest("hex");
}

/** Whether the plain tar at `path` is a container image (`manifest.json` or `oci-layout` at its root, the walker's rule). */
export async function isImageTar(path: string): Promise<boolean> {
  const source = FileSource.open(path);
  const reader = ChunkReader.ofSource(source);
  try {
    for await (const entry of walkTar(reader)) {
      const name = condaPath(entry.name);
      if (name === "manifest.json" || name === "oci-layout") return true;
    }
    return false;
  } finally {
    await reader.close();
    source.close();
  }
}

/**
 * Thrown by pass 1 when a compressed tarball holds what a container image holds (a blob, a layer, a
 * manifest) before anything in it was edited: the image writer takes it (./editors.ts), and the tarball
 * writer again, without looking, when it is not an image after all.
 */
export class ImageSuspected extends Error {
  constructor(readonly path: string) {
    super(`${path}: holds a container image's files`);
  }
}

/** Whether a root entry's name is one an image tarball holds: the walker's manifest.json / oci-layout, and the blobs and layers sorted before them. */
function imageName(name: string): boolean {
  const path = condaPath(name);
  return path === "manifest.json" || path === "oci-layout" || path === "index.json" || /^blobs\/sha256\/[0-9a-f]{64}$/.test(path) || /^[0-9a-f]{64}(\/layer\.tar|\.json)$/.test(path);
}

function imageRefusal(path: string): OffloadKitError {
  return new OffloadKitError("IMAGE_UNSUPPORTED", `${path}: a container image (docker save or OCI layout): its layers' digests, the config's diff_ids and the manifests would have to be written again, which this tarball writer does not do; nothing was written`, { field: "package" });
}

/**
 * Edits the tarball at `path` (a conda `.tar.bz2` among them: its paths.json rewritten) with `plan`, writing
 * the new tarball to `output` (undefined: a dry run, which edits in the scratch folder and writes nothing else).
 */
export async function editTarPackage<P extends PlannedEdit>(path: string, output: string | undefined, options: EditOptions<P>, lookForImages = true): Promise<TarPackageEdit<P>> {
  const source = FileSource.open(path);
  const scratch = scratchFolder("tar");
  try {
    const mode = statSync(path).mode & 0o7777;
    const method = compressionOf(readExact(source, 0, Math.min(16, source.size)));
    // Images are refused before any work when the tar is plain (docker save writes it so), else after pass 1.
    if (method === undefined && (await isImageTar(path))) throw imageRefusal(path);
    const plainPath = join(scratch.path, "plain.tar");
    const found: TarFound<P> = { names: 0, edits: [], files: [], entries: 0 };
    // A compressed image is handed to the image writer at its first blob, before anything in it is edited.
    const suspect = method !== undefined && lookForImages ? (entry: TarEntry) => {
      if (imageName(entry.name)) throw new ImageSuspected(path);
      return true;
    } : undefined;
    await editTarStream(decodedChunks(source, 0, source.size, method), plainPath, path, scratch.path, options, found, suspect);
    if (method !== undefined && (await isImageTar(plainPath))) throw imageRefusal(path);
    options.check?.(found.edits);
    let outputSize = source.size;
    let conda = false;
    let missingRows: readonly string[] = [];
    const encodedPath = join(scratch.path, "encoded");
    if (found.files.length > 0) {
      const encoded = await encodeTar(plainPath, method, tarEncoder(method, path, false), encodedPath, path, found.files);
      conda = encoded.paths;
      missingRows = encoded.missing;
      await verifyTar(encodedPath, method, path, found.files, found.entries, conda);
      outputSize = statSync(encodedPath).size;
    }
    if (output !== undefined) {
      withOutputs((open) => {
        const out = open(output, { bufferSize: 1 << 20 });
        if (found.files.length === 0) {
          for (const chunk of fileChunks(path)) out.write(chunk);
        } else {
          for (const chunk of fileChunks(encodedPath)) out.write(chunk);
        }
        out.close();
        if (out.tempPath !== undefined) {
          chmodSync(out.tempPath, mode);
          const expected = found.files.length === 0 ? fileSha256(path) : fileSha256(encodedPath);
          if (fileSha256(out.tempPath) !== expected) throw new OffloadKitError("VERIFY_FAILED", `${output}: the written package is not the one encoded, nothing was put in place`);
        }
      });
    }
    const edits = withNotes(found.edits, missingRows, path, output);
    return {
      kind: conda ? "conda" : "tarball", compression: method, input: path, output, inputSize: source.size, outputSize, members: found.entries, withDeviceCode: found.names,
      edits, record: conda ? PATHS_JSON : undefined,
    };
  } catch (e) {
    if (e instanceof OffloadKitError || e instanceof ImageSuspected) throw e;
    throw fileError(path, e);
  } finally {
    source.close();
    scratch.done();
  }
}

/** The members' edits named inside the output, with a note on each edited file paths.json has no row for. */
export function withNotes<P extends PlannedEdit>(edits: readonly FileEdit<P>[], missingRows: readonly string[], path: string, output: string | undefined): FileEdit<P>[] {
  const missingSet = new Set(missingRows);
  return edits.map((e) => {
    const inner = e.input.slice(path.length + 1);
    const last = inner.slice(inner.lastIndexOf("!") + 1);
    const planned = e.planned !== undefined && e.planned.plan !== undefined && missingSet.has(condaPath(last))
      ? { ...e.planned, notes: [...e.planned.notes, `${PATHS_JSON} has no sha256 or size for '${condaPath(last)}' (left as it is)`] }
      : e.planned;
    return { ...e, planned, output: output === undefined || e.planned?.plan === undefined ? undefined : `${output}!${inner}` };
  });
}
