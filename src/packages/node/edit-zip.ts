/**
 * prune, compress and decompress of a zip package (a wheel, a plain zip), written as a package of the same
 * kind: each member with device code (check's rule) is taken out (inflated once; memory up to 16 MiB, else a
 * temporary file), edited through the crash-safe single-file path (src/prune/node.ts `editFiles`: planned,
 * written, verified) into a scratch folder, deflated again; every other member is copied as its stored bytes
 * (../write/zip.ts). A wheel's `*.dist-info/RECORD` gets the edited members' new sha256 (urlsafe base64, no
 * padding, as PEP 376/427 write it) and sizes. The package is written to a temporary file beside its
 * destination, checked (its directory read back, every member where the directory says), and renamed into
 * place (src/node/output.ts), so the destination holds the old package or the whole new one.
 *
 * A dry run edits into the scratch folder too (the package's new size needs the deflated members), then
 * removes it: nothing is written beside the input or the destination.
 */
import { createHash } from "node:crypto";
import { chmodSync, closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as zlib from "node:zlib";
import { createDeflateRaw, deflateRawSync, inflateRawSync } from "node:zlib";
import { crc32 as jsCrc32 } from "../../inspector/zip.js";
import type { Codecs } from "../../compress/codecs.js";
import { OffloadKitError } from "../../engine/errors.js";
import { engine } from "../../engine/select.js";
import type { ByteSource } from "../../engine/source.js";
import { readExact, sliceSource } from "../../engine/source.js";
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
import { sourceChunks } from "../chunks.js";
import { rewriteRecordBytes } from "../write/record.js";
import { rewriteZip } from "../write/zip.js";
import type { ReplacedMember, ZipRewriteSink } from "../write/zip.js";
import { isZip, readZip, zipDataOffset } from "../zip.js";
import type { ZipIndex, ZipMember } from "../zip.js";
import { nodeDecoders, nodeSpooler } from "./io.js";
import type { NestedEdit } from "./edit-deb.js";
import { fileChunks } from "./file-chunks.js";

/** zlib's default level, the one Python's zipfile (and so wheel and pip) deflates with. */
const DEFLATE_LEVEL = 6;
const RECORD = /^[^/]+\.dist-info\/RECORD$/;

export interface ZipPackageEdit<P extends PlannedEdit> {
  readonly input: string;
  /** undefined in a dry run. */
  readonly output: string | undefined;
  readonly inputSize: number;
  readonly outputSize: number;
  readonly members: number;
  readonly withDeviceCode: number;
  /** The edits of its members with device code, named `pkg!member`. */
  readonly edits: FileEdit<P>[];
  /** The RECORD member rewritten, if any. */
  readonly record?: string;
  /** Set when the package's kind is not written (an RPM): why; its one edit carries the error. */
  readonly refused?: OffloadKitError;
}

/** Whether `path` is a zip file (by its first bytes). */
export function isZipFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    const source = FileSource.open(path);
    try {
      return isZip(readExact(source, 0, Math.min(4, source.size)));
    } finally {
      source.close();
    }
  } catch {
    return false;
  }
}

/** node:zlib's CRC-32 where Node has it (20.15, 22.2 and later), else the inspector page's own. */
export function crc32(bytes: Uint8Array, crc = 0): number {
  const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
  return native !== undefined ? native(bytes, crc) : jsCrc32(bytes, crc);
}

/** A member's bytes, for reading at random: a slice when stored, inflated (and kept) when deflated. */
async function memberSource(source: ByteSource, member: ZipMember, name: string): Promise<(ByteSource & { close(): void }) | undefined> {
  // Folders, empty files, symbolic links (their bytes name the target; the walker never follows them, so the
  // inspector lists no device code there), encrypted members and methods not read hold no device code offload-kit can edit.
  if ((member.flags & 1) !== 0 || (member.method !== 0 && member.method !== 8) || member.name.endsWith("/") || member.size === 0 || (member.mode & 0o170000) === 0o120000) return undefined;
  const start = zipDataOffset(source, member);
  if (member.method === 0) {
    // As the walker: a stored member's two sizes must agree (else the bytes read are not the member's).
    if (member.compressedSize !== member.size) throw new OffloadKitError("ZIP_BAD_SIZE", `${name}: stored with ${member.compressedSize} bytes but declares ${member.size}`, { offset: member.localOffset, field: "compressed size" });
    return { ...sliceSource(source, start, member.size), close() {} };
  }
  const spooled = await nodeSpooler().spool(nodeDecoders().inflateRaw(sourceChunks(source, start, member.compressedSize)), member.size, name);
  if (spooled.source.size !== member.size) {
    spooled.close();
    throw new OffloadKitError("ZIP_BAD_SIZE", `${name}: inflates to ${spooled.source.size} bytes, not the declared ${member.size}`, { offset: member.localOffset });
  }
  const s = spooled.source;
  return { size: s.size, bytes: s.bytes, read: (dest, position) => s.read(dest, position), close: () => spooled.close() };
}

/** Deflates the file at `from` into `to`: its CRC-32, sha256 (RECORD's form), sizes. */
async function deflateFile(from: string, to: string): Promise<{ crc32: number; sha256: string; size: number; compressedSize: number }> {
  let crc = 0;
  let size = 0;
  const hash = createHash("sha256");
  const fd = openSync(to, "w");
  let compressedSize = 0;
  try {
    const deflate = createDeflateRaw({ level: DEFLATE_LEVEL });
    const done = new Promise<void>((resolve, reject) => {
      deflate.on("data", (chunk: Buffer) => {
        writeSync(fd, chunk);
        compressedSize += chunk.length;
      });
      deflate.on("end", resolve);
      deflate.on("error", reject);
    });
    for (const chunk of fileChunks(from)) {
      crc = crc32(chunk, crc);
      size += chunk.length;
      hash.update(chunk);
      if (!deflate.write(Buffer.from(chunk))) await new Promise((r) => deflate.once("drain", r));
    }
    deflate.end();
    await done;
  } finally {
    closeSync(fd);
  }
  return { crc32: crc, sha256: hash.digest("base64url"), size, compressedSize };
}

export { rewriteRecord } from "../write/record.js";

/** What a plan that meets no editable content returns, in a package: the member is left as it is. */
const NOT_EDITABLE = new Set(["NO_OFFLOAD_CONTENT", "NO_HIP_FATBIN", "ELF_UNSUPPORTED"]);

/**
 * Edits the zip package at `path` with `plan`, writing the new package to `output` (undefined: a dry run).
 * `check` runs over the members' edits before anything is put in place, as editFiles runs it.
 */
export async function editZipPackage<P extends PlannedEdit>(
  path: string,
  output: string | undefined,
  options: { readonly codecs: Codecs; readonly plan: (source: ByteSource, name: string) => P; readonly check?: (edits: readonly FileEdit<P>[]) => void; readonly nested?: NestedEdit<P>; readonly progress?: (member: string, edit?: FileEdit<P>) => void },
): Promise<ZipPackageEdit<P>> {
  const source = FileSource.open(path);
  const opened = new Map<string, ByteSource & { close(): void }>();
  let scratch: string | undefined;
  try {
    const mode = statSync(path).mode & 0o7777;
    const index: ZipIndex = readZip(source);
    const names: string[] = [];
    const positions: number[] = [];
    scratch = createNamedTemporary(tmpdir(), () => mkdtempSync(join(tmpdir(), `offload-kit-${process.pid}-zip-`)));
    const folder = scratch;
    // Packages inside (a .deb in a zip): edited by their own writers; their new bytes replace the member.
    const nestedOut = new Map<number, string>();
    const nestedEdits: FileEdit<P>[] = [];
    let nestedWithCode = 0;
    for (let i = 0; i < index.members.length; i++) {
      const member = index.members[i]!;
      const name = `${path}!${member.name}`;
      const bytes = await memberSource(source, member, name);
      if (bytes === undefined) continue;
      options.progress?.(name);
      // A package inside first (a stored one holds its members' code where the locator sees it).
      let nested;
      try {
        nested = options.nested === undefined ? undefined : await options.nested(bytes, name, folder);
      } catch (e) {
        bytes.close();
        throw e;
      }
      if (nested !== undefined) {
        nestedEdits.push(...nested.edits);
        nestedWithCode += nested.withDeviceCode;
        if (nested.out !== undefined) nestedOut.set(i, nested.out);
        bytes.close();
        continue;
      }
      if (!holdsOffloadCode(locate(bytes))) {
        bytes.close();
        continue;
      }
      opened.set(name, bytes);
      names.push(name);
      positions.push(i);
    }
    const plan = (bytes: ByteSource, name: string): P => {
      try {
        return options.plan(bytes, name);
      } catch (e) {
        if (!(e instanceof OffloadKitError) || !NOT_EDITABLE.has(e.code)) throw e;
        const reason = e.message.startsWith(`${name}: `) ? e.message.slice(name.length + 2) : e.message;
        return { container: "not editable", plan: undefined, inputSize: bytes.size, notes: [`left as it is: ${reason}`], entries: [] } as unknown as P;
      }
    };
    const edits = editFiles(names, { kind: "outputs", outputs: names.map((_, k) => ({ path: join(folder, `${k}`), writeUnchanged: false })) }, options.codecs, plan, options.check, undefined, opened);
    for (const edit of edits) options.progress?.(edit.input, edit);

    // Deflate what changed, and note its RECORD row.
    const replaced = new Map<number, ReplacedMember>();
    const changed = new Map<string, { sha256: string; size: number }>();
    for (let k = 0; k < edits.length; k++) {
      if (edits[k]!.planned?.plan === undefined) continue;
      const deflated = join(folder, `${k}.deflate`);
      const made = await deflateFile(join(folder, `${k}`), deflated);
      changed.set(index.members[positions[k]!]!.name, { sha256: made.sha256, size: made.size });
      replaced.set(positions[k]!, { crc32: made.crc32, size: made.size, compressedSize: made.compressedSize, write: (sink) => copyFile(deflated, sink) });
    }
    for (const [i, out] of nestedOut) {
      const deflated = `${out}.deflate`;
      const made = await deflateFile(out, deflated);
      changed.set(index.members[i]!.name, { sha256: made.sha256, size: made.size });
      replaced.set(i, { crc32: made.crc32, size: made.size, compressedSize: made.compressedSize, write: (sink) => copyFile(deflated, sink) });
    }
    let record: string | undefined;
    const recordAt = index.members.findIndex((m) => RECORD.test(m.name));
    if (recordAt >= 0 && changed.size > 0) {
      const member = index.members[recordAt]!;
      const bytes = await memberSource(source, member, `${path}!${member.name}`);
      if (bytes !== undefined) {
        try {
          const data = rewriteRecordBytes(readExact(bytes, 0, bytes.size), changed);
          const deflated = deflateRawSync(data, { level: DEFLATE_LEVEL });
          replaced.set(recordAt, { crc32: crc32(data), size: data.length, compressedSize: deflated.length, write: (sink) => sink.write(deflated) });
          record = member.name;
        } finally {
          bytes.close();
        }
      }
    }

    const counting = { position: 0, write(b: Uint8Array) { this.position += b.length; }, copy(_: number, length: number) { this.position += length; } };
    let outputSize = replaced.size === 0 ? source.size : rewriteZip(source, index, replaced, counting);
    const packageEdits = [...edits, ...nestedEdits].map((e) => ({ ...e, output: output === undefined || e.planned?.plan === undefined ? undefined : `${output}!${e.input.slice(path.length + 1)}` }));
    if (output !== undefined) {
      outputSize = withOutputs((open) => {
        // Many small pieces (headers, small members): written through a 1 MiB buffer.
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
          verifyZip(out.tempPath, index, replaced, output);
        }
        return size;
      });
    }
    return { input: path, output, inputSize: source.size, outputSize, members: index.members.length, withDeviceCode: names.length + nestedWithCode, edits: packageEdits, record };
  } finally {
    for (const bytes of opened.values()) bytes.close();
    source.close();
    if (scratch !== undefined) {
      rmSync(scratch, { recursive: true, force: true });
      removeTemporary(scratch);
    }
  }
}

function copyFile(path: string, sink: ZipRewriteSink): void {
  for (const chunk of fileChunks(path)) sink.write(chunk);
}

/**
 * The written package read back before it is put in place: the same members in the same order, each where
 * the directory says, and each replaced member inflating to its CRC-32 and size.
 */
function verifyZip(tempPath: string, before: ZipIndex, replaced: ReadonlyMap<number, ReplacedMember>, output: string): void {
  const written = FileSource.open(tempPath);
  try {
    const index = readZip(written);
    const fail = (message: string) => new OffloadKitError("VERIFY_FAILED", `${output}: the written package is wrong, nothing was put in place: ${message}`);
    if (index.members.length !== before.members.length) throw fail(`${index.members.length} members, not ${before.members.length}`);
    index.members.forEach((m, i) => {
      const old = before.members[i]!;
      if (m.name !== old.name) throw fail(`member ${i} is '${m.name}', not '${old.name}'`);
      const start = zipDataOffset(written, m);
      const now = replaced.get(i);
      if (now === undefined) {
        if (m.crc32 !== old.crc32 || m.compressedSize !== old.compressedSize || m.size !== old.size) throw fail(`'${m.name}' changed`);
        return;
      }
      if (m.size !== now.size || m.compressedSize !== now.compressedSize || m.crc32 !== now.crc32 >>> 0) throw fail(`'${m.name}': the directory disagrees with what was written`);
      // Members up to 64 MiB are inflated again here; a larger one was verified before it was deflated (editFiles).
      if (m.compressedSize <= 64 * 1024 * 1024) {
        const data = inflateRawSync(readExact(written, start, m.compressedSize));
        if (data.length !== now.size || crc32(data) >>> 0 !== now.crc32 >>> 0) throw fail(`'${m.name}' does not inflate to what was deflated`);
      }
    });
  } catch (e) {
    if (e instanceof OffloadKitError) throw e;
    throw fileError(output, e);
  } finally {
    written.close();
  }
}
