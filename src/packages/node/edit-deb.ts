/**
 * prune, compress and decompress of a Debian package, written as a .deb that dpkg accepts. The data.tar
 * member is decoded once, as a stream: each regular file with device code (check's rule) is spooled (memory
 * up to 16 MiB, else a temporary file) and edited through the crash-safe single-file path (src/prune/node.ts
 * `editFiles`) into a scratch folder; every other tar byte (headers, pax and long-name records, bodies,
 * padding, the end blocks and the blocking factor's zeros) is passed on as it was. The edited entry keeps its
 * header but for its size and checksum. The tar is encoded again with the input's compressor at dpkg-deb's
 * default level (xz -6 and zstd -3 through the `xz` / `zstd` programs, as node:zlib on Node 20 encodes
 * neither and the project has only an xz decoder; gzip -9 through node:zlib), into the scratch folder.
 *
 * control.tar keeps every byte but the edited files' `md5sums` lines and `control`'s `Installed-Size`,
 * lowered by each edited file's change in KiB rounded up per file (dpkg-gencontrol's count). The ar archive
 * keeps its member order and each member's header (name, timestamp, owner, mode) but for the size field,
 * as dpkg-deb wrote it. The package is written to a temporary file beside its destination, read back (the
 * ar members, the data tar decoded again and the edited files' md5 checked), and renamed into place.
 *
 * | ar | bytes |
 * |---|---|
 * | magic `!<arch>\n` | 8 |
 * | per member: name(16) mtime(12) uid(6) gid(6) mode(8) size(10, decimal) `` `\n `` | 60 |
 * | member data, padded with `\n` to an even size | size |
 */
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { constants as zlibConstants, createGzip, gunzipSync, gzipSync } from "node:zlib";
import type { Codecs } from "../../compress/codecs.js";
import { OffloadKitError } from "../../engine/errors.js";
import { engine } from "../../engine/select.js";
import type { ByteSource } from "../../engine/source.js";
import { readExact } from "../../engine/source.js";
import { concatBytes } from "../../formats/bytes.js";
import { locate } from "../../inspect/locate.js";
import { holdsOffloadCode } from "../../inspect/node/check.js";
import { copyRange } from "../../node/copy.js";
import { fileError } from "../../node/errors.js";
import { FileSource } from "../../node/file-source.js";
import { withOutputs } from "../../node/output.js";
import { createNamedTemporary, removeTemporary } from "../../process/temporaries.js";
import { editFiles } from "../../prune/node.js";
import type { FileEdit } from "../../prune/node.js";
import type { PlannedEdit } from "../../prune/index.js";
import { ChunkReader, sourceChunks } from "../chunks.js";
import { compressionOf } from "../decoders.js";
import type { Compression } from "../decoders.js";
import { walkTar } from "../tar.js";
import type { TarEntry } from "../tar.js";
import { rewriteEntryHeaders } from "../write/tar-entry.js";
import { nodeDecoders, nodeSpooler } from "./io.js";
import type { ZipPackageEdit } from "./edit-zip.js";
import { fileChunks } from "./file-chunks.js";
import { AR_HEADER, AR_MAGIC, MAX_CONTROL, arHeader, debTars, editControlMember, malformed, md5sumsPath, readDebMembers, replaceTarMembers } from "../write/deb.js";
import type { ArMember, EditedFile } from "../write/deb.js";
import { headerSize, padding, tarHeaderWithSize } from "../write/tar-headers.js";
export { fileChunks, headerSize, padding, readDebMembers, tarHeaderWithSize };
export type { EditedFile };

const CHUNK = 1 << 20;
/** xz's encoder memory (its threads are cut to fit): keeps a package edit under the 256 MiB budget. */
const XZ_MEMORY = "160MiB";
/** What a plan that meets no editable content returns, in a package: the member is left as it is. */
const NOT_EDITABLE = new Set(["NO_OFFLOAD_CONTENT", "NO_HIP_FATBIN", "ELF_UNSUPPORTED"]);

export interface DebPackageEdit<P extends PlannedEdit> extends ZipPackageEdit<P> {
  readonly kind: "deb";
  /** `Installed-Size` before and after (KiB), when the package's control has one. */
  readonly installedSize?: { readonly before: number; readonly after: number };
}

/** Whether `path` is a Debian package (an ar archive whose first member is debian-binary, dpkg's rule). */
export function isDebFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    const source = FileSource.open(path);
    try {
      if (source.size < 8 + AR_HEADER) return false;
      const head = String.fromCharCode(...readExact(source, 0, 8 + 16));
      return head.startsWith(AR_MAGIC) && /^debian-binary\/? *$/.test(head.slice(8));
    } finally {
      source.close();
    }
  } catch {
    return false;
  }
}

/** A compressor writing into a file: a program (xz, zstd) or node:zlib's gzip, fed with backpressure. */
export interface Encoder {
  write(bytes: Uint8Array): Promise<void>;
  end(): Promise<void>;
}

export function program(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (dir === "") continue;
    try {
      if (statSync(join(dir, name)).isFile()) return join(dir, name);
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/** The program and arguments that encode `method` as dpkg-deb does by default, or why it cannot. */
function encoderCommand(method: Compression): { command: string; args: string[] } | undefined {
  if (method === "xz") {
    const xz = program("xz");
    if (xz === undefined) throw new OffloadKitError("ENCODER_MISSING", "writing a .deb whose data.tar is xz needs the xz program on PATH (offload-kit has an xz decoder only)");
    // dpkg-deb's default: -6; threads as xz allows within XZ_MEMORY (dpkg-deb also encodes in threads).
    return { command: xz, args: ["-6", "-T0", `--memlimit-compress=${XZ_MEMORY}`, "-c", "-q"] };
  }
  if (method === "zstd") {
    const zstd = program("zstd");
    if (zstd === undefined) throw new OffloadKitError("ENCODER_MISSING", "writing a .deb whose data.tar is zstd needs the zstd program on PATH (Node 20's zlib has no zstd encoder)");
    return { command: zstd, args: ["-3", "-c", "-q"] };
  }
  if (method === "bzip2") throw new OffloadKitError("DEB_UNSUPPORTED", "a data.tar.bz2 is not written again (dpkg-deb no longer builds bzip2 packages)");
  return undefined;
}

function waitWritable(stream: NodeJS.WritableStream, bytes: Uint8Array, failed: () => Error | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const error = failed();
    if (error !== undefined) return reject(error);
    if (stream.write(bytes)) resolve();
    else stream.once("drain", () => resolve());
  });
}

/** An encoder for `method` (undefined: no compression) writing into the open file `fd`. */
export function openEncoder(method: Compression | undefined, fd: number, command = method === undefined ? undefined : encoderCommand(method)): Encoder {
  if (method === undefined) return { write: async (b) => void writeSync(fd, b), end: async () => {} };
  if (command === undefined) {
    const gzip = createGzip({ level: 9 });
    let error: Error | undefined;
    gzip.on("data", (chunk: Buffer) => writeSync(fd, chunk));
    const done = new Promise<void>((resolve, reject) => {
      gzip.on("end", resolve);
      gzip.on("error", (e) => reject((error = e)));
    });
    return { write: (b) => waitWritable(gzip, b, () => error), end: async () => { gzip.end(); await done; } };
  }
  const child: ChildProcess = spawn(command.command, command.args, { stdio: ["pipe", fd, "pipe"] });
  let stderr = "";
  let error: Error | undefined;
  child.stderr!.on("data", (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<void>((resolve, reject) => {
    child.on("error", (e) => reject((error = e)));
    child.on("close", (code) => {
      if (code === 0) resolve();
      else reject((error = new OffloadKitError("ENCODER_FAILED", `${method} encoding failed (exit ${code}): ${stderr.trim()}`)));
    });
  });
  exited.catch(() => {});
  return {
    write: (b) => waitWritable(child.stdin!, b, () => error),
    end: async () => { child.stdin!.end(); await exited; },
  };
}

/** A whole small stream decoded (control.tar) or encoded again, with the same programs. */
function codeSmall(method: Compression | undefined, bytes: Uint8Array, decode: boolean, name: string): Uint8Array {
  if (method === undefined) return bytes;
  if (method === "gzip") return decode ? gunzipSync(bytes, { maxOutputLength: MAX_CONTROL }) : gzipSync(bytes, { level: zlibConstants.Z_BEST_COMPRESSION });
  const command = decode ? { command: program(method === "bzip2" ? "bzip2" : method) ?? method, args: ["-dcq"] } : encoderCommand(method)!;
  const run = spawnSync(command.command, command.args, { input: bytes, maxBuffer: MAX_CONTROL });
  if (run.status !== 0) throw new OffloadKitError("DEB_MALFORMED", `${name}: ${method} ${decode ? "decoding" : "encoding"} failed: ${run.error?.message ?? run.stderr.toString().trim()}`);
  return new Uint8Array(run.stdout);
}

/**
 * A package found inside another (a wheel in a tarball): edited by its own writer into a scratch file.
 * Undefined when `source` is no package; `out` is set when the package changed (the new bytes).
 */
export type NestedEdit<P extends PlannedEdit> = (source: ByteSource, name: string, folder: string) => Promise<{ readonly out?: string; readonly edits: FileEdit<P>[]; readonly withDeviceCode: number } | undefined>;

/**
 * The data tar, decoded and written again into `encoder` with the files holding device code edited.
 * Everything walkTar reads between two entries (padding, headers) is held in `pending` and passed on
 * when the next entry is known; an edited entry's last header is replaced and its old padding dropped.
 * `visible` sees every entry (an image layer's whiteouts too) and says whether a file may be edited.
 */
export async function rewriteDataTar<P extends PlannedEdit>(
  reader: ChunkReader,
  encoder: Encoder,
  path: string,
  folder: string,
  options: { readonly codecs: Codecs; readonly plan: (source: ByteSource, name: string) => P; readonly visible?: (entry: TarEntry) => boolean; readonly nested?: NestedEdit<P>; readonly progress?: (member: string, edit?: FileEdit<P>) => void },
  found: { names: number; edits: FileEdit<P>[]; files: EditedFile[]; entries: number },
): Promise<void> {
  let pending: Uint8Array[] = [];
  let drop = 0;
  const flush = async (keepLast: number) => {
    let bytes = concatBytes(pending);
    pending = [];
    const head = bytes.subarray(Math.min(drop, bytes.length), bytes.length - keepLast);
    drop = Math.max(0, drop - bytes.length);
    if (head.length > 0) await encoder.write(head);
    return bytes.subarray(bytes.length - keepLast);
  };
  // walkTar sees this reader: what it reads or skips is kept in `pending` (headers and padding only; bodies are taken below).
  const tap = {
    get position() { return reader.position; },
    async read(length: number) { const b = await reader.read(length); pending.push(b); return b; },
    async skip(length: number) {
      let n = 0;
      for await (const piece of reader.take(length)) { pending.push(piece.slice()); n += piece.length; }
      return n;
    },
  } as unknown as ChunkReader;
  const spooler = nodeSpooler();
  // Where the entry's records begin: its pax and long-name headers come before its own, and are written again with it.
  let recordsStart = reader.position;
  for await (const entry of walkTar(tap) as AsyncGenerator<TarEntry>) {
    found.entries++;
    const headers = await flush(entry.dataOffset - recordsStart);
    recordsStart = entry.dataOffset + entry.size + padding(entry.size);
    const shown = options.visible?.(entry) ?? true;
    if (entry.type !== "file" || entry.size === 0 || !shown) {
      await encoder.write(headers);
      for await (const piece of reader.take(entry.size)) await encoder.write(piece);
      continue;
    }
    const name = `${path}!${entry.name.replace(/^\.\//, "")}`;
    const spooled = await spooler.spool(reader.take(entry.size), entry.size, name);
    options.progress?.(name);
    try {
      const source = spooled.source;
      if (source.size !== entry.size) throw new OffloadKitError("PACKAGE_TRUNCATED", `${name}: ${source.size} of ${entry.size} bytes`, { offset: entry.dataOffset });
      let replacedBy: string | undefined;
      // A package inside (a wheel in a tarball) first: edited by its own writer, its new bytes this entry's body.
      // (An uncompressed package holds its members' code where the locator sees it, so it is asked before the locator.)
      const nested = options.nested === undefined ? undefined : await options.nested(source, name, folder);
      if (nested !== undefined) {
        found.edits.push(...nested.edits);
        found.names += nested.withDeviceCode;
        replacedBy = nested.out;
      } else if (holdsOffloadCode(locate(source))) {
        found.names++;
        const out = join(folder, String(found.edits.length));
        const plan = (bytes: ByteSource, member: string): P => {
          try {
            return options.plan(bytes, member);
          } catch (e) {
            if (!(e instanceof OffloadKitError) || !NOT_EDITABLE.has(e.code)) throw e;
            const reason = e.message.startsWith(`${member}: `) ? e.message.slice(member.length + 2) : e.message;
            return { container: "not editable", plan: undefined, inputSize: bytes.size, notes: [`left as it is: ${reason}`], entries: [] } as unknown as P;
          }
        };
        const opened = new Map([[name, { ...source, size: source.size, bytes: source.bytes, read: (d: Uint8Array, p: number) => source.read(d, p), close() {} }]]);
        const edit = editFiles([name], { kind: "outputs", outputs: [{ path: out, writeUnchanged: false }] }, options.codecs, plan, undefined, undefined, opened)[0]!;
        found.edits.push(edit);
        options.progress?.(name, edit);
        if (edit.planned?.plan !== undefined) replacedBy = out;
      }
      if (replacedBy !== undefined) {
        const out = replacedBy;
        const newSize = statSync(out).size;
        const md5 = createHash("md5");
        const sha256 = createHash("sha256");
        // A pax `size` record says the new size too; every other record is kept.
        await encoder.write(rewriteEntryHeaders(headers, { size: newSize }, name));
        for (const chunk of fileChunks(out)) {
          md5.update(chunk);
          sha256.update(chunk);
          await encoder.write(chunk);
        }
        await encoder.write(new Uint8Array(padding(newSize)));
        drop = padding(entry.size);
        found.files.push({ path: md5sumsPath(entry.name), md5: md5.digest("hex"), sha256: sha256.digest("hex"), oldSize: entry.size, newSize });
        rmSync(out, { force: true });
        continue;
      }
      await encoder.write(headers);
      for await (const piece of sourceChunks(source)) await encoder.write(piece);
    } finally {
      spooled.close();
    }
  }
  await flush(0);
  // The end blocks walkTar stopped at and the blocking factor's zeros after them, as they were.
  for await (const piece of reader.take(Number.MAX_SAFE_INTEGER)) await encoder.write(piece);
}

/**
 * Edits the .deb at `path` with `plan`, writing the new package to `output` (undefined: a dry run, which
 * edits into a scratch folder too, for the new size, and writes nothing beside the input or destination).
 */
export async function editDebPackage<P extends PlannedEdit>(
  path: string,
  output: string | undefined,
  options: { readonly codecs: Codecs; readonly plan: (source: ByteSource, name: string) => P; readonly check?: (edits: readonly FileEdit<P>[]) => void; readonly nested?: NestedEdit<P>; readonly progress?: (member: string, edit?: FileEdit<P>) => void },
): Promise<DebPackageEdit<P>> {
  const source = FileSource.open(path);
  let scratch: string | undefined;
  try {
    const mode = statSync(path).mode & 0o7777;
    const members = readDebMembers(source);
    const { controlAt, dataAt } = debTars(members);
    const data = members[dataAt]!;
    const method = compressionOf(readExact(source, data.dataOffset, Math.min(16, data.size)));
    scratch = createNamedTemporary(tmpdir(), () => mkdtempSync(join(tmpdir(), `offload-kit-${process.pid}-deb-`)));
    const folder = scratch;

    // data.tar: decoded once, written again into the scratch folder.
    const dataPath = join(folder, "data");
    const fd = openSync(dataPath, "w");
    const found = { names: 0, edits: [] as FileEdit<P>[], files: [] as EditedFile[], entries: 0 };
    const reader = method === undefined
      ? ChunkReader.ofStream(sourceChunks(source, data.dataOffset, data.size))
      : ChunkReader.ofStream(nodeDecoders().decode(method, sourceChunks(source, data.dataOffset, data.size)));
    try {
      const encoder = openEncoder(method, fd);
      try {
        await rewriteDataTar(reader, encoder, path, folder, options, found);
      } finally {
        await encoder.end();
      }
    } finally {
      await reader.close();
      closeSync(fd);
    }
    options.check?.(found.edits);

    // control.tar: the md5sums lines and Installed-Size of the edited files.
    const sizes: { before?: number; after?: number } = {};
    const replaced = new Map<number, { size: number; write: (put: (b: Uint8Array) => void) => void }>();
    if (found.files.length > 0) {
      const control = members[controlAt]!;
      if (control.size > MAX_CONTROL) throw malformed(`control.tar of ${control.size} bytes is larger than ${MAX_CONTROL}`, control.headerOffset, "size");
      const packed = readExact(source, control.dataOffset, control.size);
      const controlMethod = compressionOf(packed.subarray(0, 16));
      const tar = codeSmall(controlMethod, packed, true, `${path}!${control.name}`);
      const edited = await replaceTarMembers(tar, (entry, body) => editControlMember(entry, body, found.files, sizes));
      const repacked = codeSmall(controlMethod, edited, false, `${path}!${control.name}`);
      replaced.set(controlAt, { size: repacked.length, write: (put) => put(repacked) });
      const dataSize = statSync(dataPath).size;
      replaced.set(dataAt, { size: dataSize, write: (put) => { for (const chunk of fileChunks(dataPath)) put(chunk); } });
    }

    if (found.files.length > 0) await verifyDataTar(dataPath, `${path}!${data.name}`, method, found.files, found.entries);
    let outputSize = 8;
    for (let i = 0; i < members.length; i++) {
      const size = replaced.get(i)?.size ?? members[i]!.size;
      outputSize += AR_HEADER + size + (size % 2);
    }
    const installedSize = sizes.before === undefined ? undefined : { before: sizes.before, after: sizes.after! };
    const packageEdits = found.edits.map((e) => ({ ...e, output: output === undefined || e.planned?.plan === undefined ? undefined : `${output}!${e.input.slice(path.length + 1)}` }));
    if (output !== undefined) {
      outputSize = withOutputs((open) => {
        const out = open(output, { bufferSize: 1 << 20 });
        if (replaced.size === 0) copyRange(engine(), source, 0, source.size, out);
        else {
          out.write(readExact(source, 0, 8));
          members.forEach((member, i) => {
            const now = replaced.get(i);
            if (now === undefined) {
              copyRange(engine(), source, member.headerOffset, AR_HEADER + member.size + (member.size % 2), out);
              return;
            }
            out.write(arHeader(member.header, now.size, member.name));
            now.write((b) => out.write(b));
            if (now.size % 2 === 1) out.write(new Uint8Array([0x0a]));
          });
        }
        const size = out.position;
        out.close();
        if (out.tempPath !== undefined) {
          chmodSync(out.tempPath, mode);
          if (replaced.size > 0) verifyDeb(out.tempPath, output, members, controlAt, dataAt, dataPath);
        }
        return size;
      });
    }
    return {
      kind: "deb", input: path, output, inputSize: source.size, outputSize, members: found.entries, withDeviceCode: found.names,
      edits: packageEdits, record: found.files.length > 0 ? `${members[controlAt]!.name}:md5sums` : undefined, installedSize,
    };
  } finally {
    source.close();
    if (scratch !== undefined) {
      rmSync(scratch, { recursive: true, force: true });
      removeTemporary(scratch);
    }
  }
}

/**
 * Walks a tar written again (a .deb's data.tar, an image layer) and checks each edited file's size and md5
 * against what was edited; returns how many entries it holds.
 */
export async function checkEditedTar(reader: ChunkReader, files: readonly EditedFile[], fail: (message: string) => Error): Promise<number> {
  const expected = new Map(files.map((f) => [f.path, f]));
  let count = 0;
  for await (const entry of walkTar(reader)) {
    count++;
    const file = entry.type === "file" ? expected.get(md5sumsPath(entry.name)) : undefined;
    if (file === undefined) continue;
    const md5 = createHash("md5");
    let size = 0;
    for await (const piece of reader.take(entry.size)) {
      md5.update(piece);
      size += piece.length;
    }
    if (size !== file.newSize || md5.digest("hex") !== file.md5) throw fail(`'${entry.name}' is not what was edited`);
  }
  return count;
}

/**
 * The new data.tar read back before it is put in a package: decoded again, as many entries, each edited
 * file's bytes the md5 that md5sums will say.
 */
export async function verifyDataTar(dataPath: string, name: string, method: Compression | undefined, files: readonly EditedFile[], entries: number): Promise<void> {
  const fail = (message: string) => new OffloadKitError("VERIFY_FAILED", `${name}: the data.tar written is wrong, nothing was put in place: ${message}`);
  const written = FileSource.open(dataPath);
  const stream = sourceChunks(written);
  const reader = ChunkReader.ofStream(method === undefined ? stream : nodeDecoders().decode(method, stream));
  try {
    const count = await checkEditedTar(reader, files, fail);
    if (count !== entries) throw fail(`it holds ${count} entries, not ${entries}`);
  } finally {
    await reader.close();
    written.close();
  }
}

/** The written package read back: the same ar members in order, untouched ones where they were, the replaced ones' bytes those made. */
function verifyDeb(tempPath: string, output: string, before: readonly ArMember[], controlAt: number, dataAt: number, dataPath: string): void {
  const fail = (message: string) => new OffloadKitError("VERIFY_FAILED", `${output}: the written package is wrong, nothing was put in place: ${message}`);
  const written = FileSource.open(tempPath);
  try {
    const members = readDebMembers(written);
    if (members.map((m) => m.name).join("/") !== before.map((m) => m.name).join("/")) throw fail("its ar members differ");
    const data = members[dataAt]!;
    const hash = (s: ByteSource, start: number, length: number) => {
      const h = createHash("sha256");
      for (let at = 0; at < length; at += CHUNK) h.update(readExact(s, start + at, Math.min(CHUNK, length - at)));
      return h.digest("hex");
    };
    const scratch = FileSource.open(dataPath);
    try {
      if (data.size !== scratch.size || hash(written, data.dataOffset, data.size) !== hash(scratch, 0, scratch.size)) throw fail("its data.tar is not the one encoded");
    } finally {
      scratch.close();
    }
    if (members[controlAt]!.size === 0) throw fail("its control.tar is empty");
  } catch (e) {
    if (e instanceof OffloadKitError) throw e;
    throw fileError(output, e);
  } finally {
    written.close();
  }
}
