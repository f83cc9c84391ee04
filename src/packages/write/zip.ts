/**
 * Rewriting a zip (wheel, `.conda`) with some members replaced (PKWARE APPNOTE 6.3.10; reading: ../zip.ts).
 * Members not replaced are copied as their stored bytes, never inflated: local header, data and data
 * descriptor verbatim (the span from their local header to the next one). A replaced member gets a new
 * local header (the old one's time, date, name and extra fields, zip64 field dropped and made again when
 * needed; no data descriptor: its sizes are known) and its new deflated data. The central directory is
 * the old one's headers with the local offsets, and the replaced members' method, flags, CRC-32 and sizes,
 * patched; zip64 extra fields, the zip64 end record and locator are written exactly when a value needs
 * them (or the input had them). The archive comment is kept.
 *
 * | record | patched fields (offset) |
 * |---|---|
 * | local header `PK\3\4` (30) | version (4), flags (6), method (8), CRC-32 (14), compressed (18), uncompressed (22), extra length (28) |
 * | central header `PK\1\2` (46) | version needed (6), flags (8), method (10), CRC-32 (16), compressed (20), uncompressed (24), extra length (30), local offset (42) |
 * | zip64 extra (ID 1) | uncompressed, compressed, local offset: those that do not fit 32 bits, in that order |
 */
import { OffloadKitError } from "../../engine/errors.js";
import type { ByteSource } from "../../engine/source.js";
import { readExact } from "../../engine/source.js";
import { zipDataOffset } from "../zip.js";
import type { ZipIndex } from "../zip.js";
import { concatBytes } from "../../formats/bytes.js";

const LOCAL_SIZE = 30;
const CENTRAL_SIZE = 46;
const EOCD_SIZE = 22;
const MAX32 = 0xffffffff;
const ZIP64_VERSION = 45;
const DEFLATE_VERSION = 20;

/** A replaced member's new data: deflated, with its CRC-32 and sizes known before it is written. */
export interface ReplacedMember {
  readonly crc32: number;
  readonly size: number;
  readonly compressedSize: number;
  /** 8 (deflate, the default) or 0 (stored: a `.conda`'s tar.zst members, as conda-package-handling writes them). */
  readonly method?: 0 | 8;
  /** Writes exactly `compressedSize` bytes of raw deflate (or the stored bytes). */
  readonly write: (sink: ZipRewriteSink) => void;
}

/** Where the new zip goes: bytes appended, ranges of the input copied. */
export interface ZipRewriteSink {
  readonly position: number;
  write(bytes: Uint8Array): void;
  copy(offset: number, length: number): void;
}

function dataView(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The extra fields less the zip64 one (ID 1). */
function withoutZip64(extra: Uint8Array): Uint8Array {
  const kept: Uint8Array[] = [];
  const v = dataView(extra);
  for (let at = 0; at + 4 <= extra.length;) {
    const length = v.getUint16(at + 2, true);
    const end = Math.min(extra.length, at + 4 + length);
    if (v.getUint16(at, true) !== 1) kept.push(extra.subarray(at, end));
    at = end;
  }
  return concatBytes(kept);
}


/** A zip64 extra field holding the values that do not fit 32 bits (empty when none). */
function zip64Extra(values: readonly number[]): Uint8Array {
  const big = values.filter((v) => v >= MAX32);
  if (big.length === 0) return new Uint8Array(0);
  const out = new Uint8Array(4 + 8 * big.length);
  const v = dataView(out);
  v.setUint16(0, 1, true);
  v.setUint16(2, 8 * big.length, true);
  big.forEach((value, i) => v.setBigUint64(4 + 8 * i, BigInt(value), true));
  return out;
}

const clamp = (value: number) => Math.min(value, MAX32);

/** The end of central directory record's offset and the archive comment, found as ../zip.ts finds them. */
function endRecord(source: ByteSource): { readonly offset: number; readonly comment: Uint8Array } {
  const tailStart = Math.max(0, source.size - EOCD_SIZE - 0xffff);
  const tail = readExact(source, tailStart, source.size - tailStart);
  for (let i = tail.length - EOCD_SIZE; i >= 0; i--) {
    if (tail[i] === 0x50 && tail[i + 1] === 0x4b && tail[i + 2] === 5 && tail[i + 3] === 6) {
      const length = dataView(tail).getUint16(i + 20, true);
      return { offset: tailStart + i, comment: tail.slice(i + EOCD_SIZE, i + EOCD_SIZE + length) };
    }
  }
  throw new OffloadKitError("ZIP_NO_DIRECTORY", `malformed zip: no end of central directory record (truncated?) at offset ${source.size}`, { offset: source.size, field: "eocd" });
}

/**
 * Writes `source` (whose directory is `index`) to `sink` with the members at the indexes of `replaced`
 * (central directory order) replaced. Returns the new size.
 */
export function rewriteZip(source: ByteSource, index: ZipIndex, replaced: ReadonlyMap<number, ReplacedMember>, sink: ZipRewriteSink): number {
  const members = index.members;
  const dirStart = members.reduce((low, m) => Math.min(low, m.centralOffset), endRecord(source).offset);
  const byLocal = members.map((m, i) => ({ m, i })).sort((a, b) => a.m.localOffset - b.m.localOffset);
  const newLocal = new Array<number>(members.length);
  // Each member is copied as the bytes from its local header to the next one's: that is the member only when
  // its header and data lie there, before the directory, sharing no byte with another member (members sharing
  // bytes are the overlapping-files zip bomb; the walker refuses them too). Checked before anything is written.
  let previousEnd = 0;
  for (let k = 0; k < byLocal.length; k++) {
    const { m } = byLocal[k]!;
    const end = k + 1 < byLocal.length ? byLocal[k + 1]!.m.localOffset : dirStart;
    const dataEnd = zipDataOffset(source, m) + m.compressedSize;
    if (m.localOffset < previousEnd || dataEnd > end) {
      throw new OffloadKitError("ZIP_OVERLAP", `malformed zip: member '${m.name}' (local header at offset ${m.localOffset}, data to ${dataEnd}) overlaps another member or the central directory; not rewritten`, { offset: m.localOffset, field: "local header offset" });
    }
    previousEnd = dataEnd;
  }
  for (let k = 0; k < byLocal.length; k++) {
    const { m, i } = byLocal[k]!;
    const end = k + 1 < byLocal.length ? byLocal[k + 1]!.m.localOffset : dirStart;
    newLocal[i] = sink.position;
    const replacement = replaced.get(i);
    if (replacement === undefined) {
      sink.copy(m.localOffset, end - m.localOffset);
      continue;
    }
    const fixed = readExact(source, m.localOffset, LOCAL_SIZE);
    const f = dataView(fixed);
    const nameLength = f.getUint16(26, true);
    const extraLength = f.getUint16(28, true);
    const rest = readExact(source, m.localOffset + LOCAL_SIZE, nameLength + extraLength);
    const big = replacement.size >= MAX32 || replacement.compressedSize >= MAX32;
    // A local zip64 field holds both sizes when either is needed.
    const extra = concatBytes([withoutZip64(rest.subarray(nameLength)), big ? bothSizes(replacement) : new Uint8Array(0)]);
    const header = new Uint8Array(LOCAL_SIZE);
    header.set(fixed);
    const h = dataView(header);
    h.setUint16(4, Math.max(f.getUint16(4, true), big ? ZIP64_VERSION : DEFLATE_VERSION), true);
    h.setUint16(6, f.getUint16(6, true) & ~0x0008 & ~0x0001, true);
    h.setUint16(8, replacement.method ?? 8, true);
    h.setUint32(14, replacement.crc32 >>> 0, true);
    h.setUint32(18, big ? MAX32 : replacement.compressedSize, true);
    h.setUint32(22, big ? MAX32 : replacement.size, true);
    h.setUint16(28, extra.length, true);
    sink.write(header);
    sink.write(rest.subarray(0, nameLength));
    sink.write(extra);
    const before = sink.position;
    replacement.write(sink);
    if (sink.position - before !== replacement.compressedSize) throw new Error(`rewriteZip: '${m.name}' wrote ${sink.position - before} bytes, not ${replacement.compressedSize}`);
  }

  const directoryOffset = sink.position;
  // The old directory, read once (one read, not two per member: a wheel may hold 100,000 files).
  const { offset: endOffset, comment } = endRecord(source);
  const oldDirectory = readExact(source, dirStart, Math.max(0, endOffset - dirStart));
  for (let i = 0; i < members.length; i++) {
    const m = members[i]!;
    const at = m.centralOffset - dirStart;
    const fixed = oldDirectory.subarray(at, at + CENTRAL_SIZE);
    const f = dataView(fixed);
    const nameLength = f.getUint16(28, true);
    const extraLength = f.getUint16(30, true);
    const commentLength = f.getUint16(32, true);
    // An entry whose name, extra or comment reaches into the end record (which readZip allows) would be written cut short.
    if (at + CENTRAL_SIZE + nameLength + extraLength + commentLength > oldDirectory.length) {
      throw new OffloadKitError("ZIP_BAD_DIRECTORY", `malformed zip: central directory entry of '${m.name}' runs into the end record at offset ${endOffset}; not rewritten`, { offset: m.centralOffset, field: "name length" });
    }
    const rest = oldDirectory.subarray(at + CENTRAL_SIZE, at + CENTRAL_SIZE + nameLength + extraLength + commentLength);
    const replacement = replaced.get(i);
    const size = replacement?.size ?? m.size;
    const compressedSize = replacement?.compressedSize ?? m.compressedSize;
    const local = newLocal[i]!;
    const zip64 = zip64Extra([size, compressedSize, local]);
    const extra = concatBytes([withoutZip64(rest.subarray(nameLength, nameLength + extraLength)), zip64]);
    const header = new Uint8Array(CENTRAL_SIZE);
    header.set(fixed);
    const h = dataView(header);
    if (zip64.length > 0) h.setUint16(6, Math.max(f.getUint16(6, true), ZIP64_VERSION), true);
    if (replacement !== undefined) {
      h.setUint16(6, Math.max(h.getUint16(6, true), DEFLATE_VERSION), true);
      h.setUint16(8, f.getUint16(8, true) & ~0x0008 & ~0x0001, true);
      h.setUint16(10, replacement.method ?? 8, true);
      h.setUint32(16, replacement.crc32 >>> 0, true);
    }
    h.setUint32(20, clamp(compressedSize), true);
    h.setUint32(24, clamp(size), true);
    h.setUint16(30, extra.length, true);
    h.setUint32(42, clamp(local), true);
    sink.write(header);
    sink.write(rest.subarray(0, nameLength));
    sink.write(extra);
    sink.write(rest.subarray(nameLength + extraLength));
  }
  const directorySize = sink.position - directoryOffset;
  const needs64 = index.zip64 || members.length >= 0xffff || directorySize >= MAX32 || directoryOffset >= MAX32;
  if (needs64) {
    const record = new Uint8Array(56);
    const r = dataView(record);
    const recordOffset = sink.position;
    r.setUint32(0, 0x06064b50, true);
    r.setBigUint64(4, 44n, true);
    r.setUint16(12, ZIP64_VERSION, true);
    r.setUint16(14, ZIP64_VERSION, true);
    r.setBigUint64(24, BigInt(members.length), true);
    r.setBigUint64(32, BigInt(members.length), true);
    r.setBigUint64(40, BigInt(directorySize), true);
    r.setBigUint64(48, BigInt(directoryOffset), true);
    sink.write(record);
    const locator = new Uint8Array(20);
    const l = dataView(locator);
    l.setUint32(0, 0x07064b50, true);
    l.setBigUint64(8, BigInt(recordOffset), true);
    l.setUint32(16, 1, true);
    sink.write(locator);
  }
  const end = new Uint8Array(EOCD_SIZE);
  const e = dataView(end);
  e.setUint32(0, 0x06054b50, true);
  e.setUint16(8, Math.min(members.length, 0xffff), true);
  e.setUint16(10, Math.min(members.length, 0xffff), true);
  e.setUint32(12, clamp(directorySize), true);
  e.setUint32(16, clamp(directoryOffset), true);
  e.setUint16(20, comment.length, true);
  sink.write(end);
  sink.write(comment);
  return sink.position;
}

/** The local zip64 field: uncompressed then compressed size, both always (APPNOTE 4.5.3). */
function bothSizes(replacement: ReplacedMember): Uint8Array {
  const out = new Uint8Array(20);
  const v = dataView(out);
  v.setUint16(0, 1, true);
  v.setUint16(2, 16, true);
  v.setBigUint64(4, BigInt(replacement.size), true);
  v.setBigUint64(12, BigInt(replacement.compressedSize), true);
  return out;
}
