/**
 * zip (PKWARE APPNOTE 6.3.10), Python wheels and `.conda` files: the central directory is the authority,
 * read from the end of the file as unzip and Python's zipfile read it; each member's data starts after its
 * local header, whose own name and extra lengths place it.
 *
 * | record | signature | fixed size | fields used |
 * |---|---|---|---|
 * | end of central directory | `PK\5\6` | 22 | entries (10), directory size (12), directory offset (16), comment length (20) |
 * | zip64 end locator | `PK\6\7` | 20 | zip64 record offset (8), just before the end record |
 * | zip64 end of central directory | `PK\6\6` | 56 | entries (32), directory size (40), directory offset (48) |
 * | central directory header | `PK\1\2` | 46 | flags (8), method (10), CRC-32 (16), compressed (20), uncompressed (24), name/extra/comment lengths (28/30/32), external attributes (38), local header offset (42) |
 * | local file header | `PK\3\4` | 30 | name length (26), extra length (28) |
 *
 * Sizes and offsets of 0xFFFFFFFF are in the zip64 extra field (ID 1), in the order uncompressed,
 * compressed, local offset. Data descriptors (flag bit 3) need not be read: the central directory
 * repeats what they hold. Methods 0 (stored) and 8 (deflate) are read; others and encrypted members
 * are reported, not guessed at.
 */
import { OffloadKitError } from "../engine/errors.js";
import type { ByteSource } from "../engine/source.js";
import { readExact } from "../engine/source.js";

export const ZIP_LOCAL_MAGIC = 0x04034b50;
const EOCD_MAGIC = 0x06054b50;
const ZIP64_LOCATOR_MAGIC = 0x07064b50;
const ZIP64_EOCD_MAGIC = 0x06064b50;
const CENTRAL_MAGIC = 0x02014b50;
const EOCD_SIZE = 22;
const CENTRAL_SIZE = 46;
const LOCAL_SIZE = 30;
/** The end record plus the longest comment it may carry. */
const EOCD_SEARCH = EOCD_SIZE + 0xffff;
/** Deflate cannot expand data by more than about 1032:1; a member that claims more is lying about a size. */
export const DEFLATE_MAX_RATIO = 1032;

export interface ZipMember {
  readonly name: string;
  readonly method: number;
  readonly flags: number;
  readonly compressedSize: number;
  readonly size: number;
  readonly crc32: number;
  /** Unix mode from the external attributes, when the member was made on Unix (0 otherwise). */
  readonly mode: number;
  /** The central directory header's offset and the local header's. */
  readonly centralOffset: number;
  readonly localOffset: number;
}

export interface ZipIndex {
  readonly members: readonly ZipMember[];
  readonly zip64: boolean;
}

const utf8 = new TextDecoder("utf-8");

function bad(code: string, message: string, offset: number, field?: string): OffloadKitError {
  return new OffloadKitError(code, `malformed zip: ${message} at offset ${offset}`, { offset, field });
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function u64(v: DataView, at: number, offset: number, field: string): number {
  const value = v.getUint32(at, true) + v.getUint32(at + 4, true) * 2 ** 32;
  if (!Number.isSafeInteger(value)) throw bad("ZIP_BAD_SIZE", `${field} is beyond 2^53`, offset + at, field);
  return value;
}

/** Whether the first bytes are a zip's: a local header, or the end record of an empty zip. */
export function isZip(head: Uint8Array): boolean {
  if (head.length < 4) return false;
  const magic = view(head).getUint32(0, true);
  return magic === ZIP_LOCAL_MAGIC || magic === EOCD_MAGIC;
}

/** The central directory of a zip held in `source`. */
export function readZip(source: ByteSource): ZipIndex {
  const tailStart = Math.max(0, source.size - EOCD_SEARCH);
  const tail = readExact(source, tailStart, source.size - tailStart);
  let eocd = -1;
  for (let i = tail.length - EOCD_SIZE; i >= 0; i--) {
    if (tail[i] === 0x50 && tail[i + 1] === 0x4b && tail[i + 2] === 5 && tail[i + 3] === 6) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw bad("ZIP_NO_DIRECTORY", "no end of central directory record (truncated?)", source.size, "eocd");
  const end = view(tail.subarray(eocd));
  let count = end.getUint16(10, true);
  let dirSize = end.getUint32(12, true);
  let dirOffset = end.getUint32(16, true);
  let zip64 = false;
  const eocdOffset = tailStart + eocd;
  if ((count === 0xffff || dirSize === 0xffffffff || dirOffset === 0xffffffff) && eocdOffset >= 20) {
    const locator = view(readExact(source, eocdOffset - 20, 20));
    if (locator.getUint32(0, true) === ZIP64_LOCATOR_MAGIC) {
      const recordOffset = u64(locator, 8, eocdOffset - 20, "zip64 record offset");
      if (recordOffset + 56 > source.size) throw bad("ZIP_NO_DIRECTORY", "zip64 end record lies outside the file", eocdOffset - 20, "zip64 locator");
      const record = view(readExact(source, recordOffset, 56));
      if (record.getUint32(0, true) !== ZIP64_EOCD_MAGIC) throw bad("ZIP_NO_DIRECTORY", "no zip64 end of central directory record", recordOffset, "zip64 eocd");
      count = u64(record, 32, recordOffset, "entries");
      dirSize = u64(record, 40, recordOffset, "directory size");
      dirOffset = u64(record, 48, recordOffset, "directory offset");
      zip64 = true;
    }
  }
  if (dirOffset + dirSize > source.size || count * CENTRAL_SIZE > dirSize) {
    throw bad("ZIP_NO_DIRECTORY", `central directory [${dirOffset}, ${dirOffset + dirSize}) of ${count} entries does not fit the ${source.size}-byte file`, eocdOffset, "directory");
  }
  const dir = readExact(source, dirOffset, dirSize);
  const d = view(dir);
  const members: ZipMember[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const offset = dirOffset + at;
    if (at + CENTRAL_SIZE > dir.length || d.getUint32(at, true) !== CENTRAL_MAGIC) throw bad("ZIP_BAD_DIRECTORY", `central directory entry ${i} is not a central header`, offset, "signature");
    const nameLength = d.getUint16(at + 28, true);
    const extraLength = d.getUint16(at + 30, true);
    const commentLength = d.getUint16(at + 32, true);
    const next = at + CENTRAL_SIZE + nameLength + extraLength + commentLength;
    if (next > dir.length) throw bad("ZIP_BAD_DIRECTORY", `central directory entry ${i} runs past the directory`, offset, "name length");
    let size = d.getUint32(at + 24, true);
    let compressedSize = d.getUint32(at + 20, true);
    let localOffset = d.getUint32(at + 42, true);
    const extraStart = at + CENTRAL_SIZE + nameLength;
    for (let e = extraStart; e + 4 <= extraStart + extraLength;) {
      const id = d.getUint16(e, true);
      const length = d.getUint16(e + 2, true);
      if (e + 4 + length > extraStart + extraLength) break;
      if (id === 1) {
        let p = e + 4;
        if (size === 0xffffffff && p + 8 <= e + 4 + length) { size = u64(d, p, dirOffset, "uncompressed size"); p += 8; }
        if (compressedSize === 0xffffffff && p + 8 <= e + 4 + length) { compressedSize = u64(d, p, dirOffset, "compressed size"); p += 8; }
        if (localOffset === 0xffffffff && p + 8 <= e + 4 + length) { localOffset = u64(d, p, dirOffset, "local header offset"); p += 8; }
      }
      e += 4 + length;
    }
    const madeBy = d.getUint16(at + 4, true) >>> 8;
    members.push({
      name: utf8.decode(dir.subarray(at + CENTRAL_SIZE, at + CENTRAL_SIZE + nameLength)),
      flags: d.getUint16(at + 8, true),
      method: d.getUint16(at + 10, true),
      crc32: d.getUint32(at + 16, true),
      compressedSize,
      size,
      mode: madeBy === 3 ? d.getUint32(at + 38, true) >>> 16 : 0,
      centralOffset: offset,
      localOffset,
    });
    at = next;
  }
  return { members, zip64 };
}

/** Where a member's data starts, from its local header (validated against the file). */
export function zipDataOffset(source: ByteSource, member: ZipMember): number {
  if (member.localOffset + LOCAL_SIZE > source.size) throw bad("ZIP_BAD_LOCAL", `local header of '${member.name}' lies outside the file`, member.localOffset, "local header offset");
  const local = view(readExact(source, member.localOffset, LOCAL_SIZE));
  if (local.getUint32(0, true) !== ZIP_LOCAL_MAGIC) throw bad("ZIP_BAD_LOCAL", `no local header for '${member.name}'`, member.localOffset, "signature");
  const start = member.localOffset + LOCAL_SIZE + local.getUint16(26, true) + local.getUint16(28, true);
  if (start + member.compressedSize > source.size) {
    throw bad("ZIP_BAD_SIZE", `'${member.name}' declares ${member.compressedSize} stored bytes from ${start}, past the end of the ${source.size}-byte file`, member.localOffset, "compressed size");
  }
  return start;
}
