/**
 * tar, read as a stream (POSIX.1-1988 ustar, GNU and POSIX.1-2001 pax), as GNU tar and libarchive
 * read it: 512-byte headers, each followed by its body padded to 512; two zero blocks end the archive.
 *
 * | offset | size | field |
 * |---|---|---|
 * | 0 | 100 | name (NUL-terminated unless full) |
 * | 100 | 8 | mode (octal) |
 * | 124 | 12 | size (octal, or base-256 when the first byte has bit 7 set: GNU, for sizes >= 8 GiB) |
 * | 148 | 8 | checksum: sum of the header's bytes with this field as spaces (octal) |
 * | 156 | 1 | typeflag: `0`/NUL file, `1` hard link, `2` symlink, `5` directory, `L`/`K` GNU long name/link, `x` pax, `g` global pax |
 * | 157 | 100 | linkname |
 * | 257 | 6 | magic `ustar\0` (POSIX) or `ustar ` (GNU, with version ` \0`) |
 * | 345 | 155 | prefix (ustar: the name is prefix/name) |
 *
 * A pax header's records (`<length> <key>=<value>\n`) override the next entry's `path`, `linkpath` and
 * `size`; a GNU `L`/`K` entry's body is the next entry's name/link name. Both are capped (1 MiB), and a
 * declared size beyond 2^53 is refused at its header, so no header can make the reader allocate or wait
 * for more than the stream holds.
 */
import { OffloadKitError } from "../engine/errors.js";
import type { ChunkReader } from "./chunks.js";
import { truncated } from "./chunks.js";

export const TAR_BLOCK = 512;
/** Long names and pax headers larger than this are refused (GNU tar's own limit is lower). */
const MAX_META_SIZE = 1 << 20;

export type TarEntryType = "file" | "directory" | "symlink" | "hardlink" | "other";

export interface TarEntry {
  /** The member's path as recorded (UTF-8 decoded; pax and GNU long names applied). */
  readonly name: string;
  readonly type: TarEntryType;
  readonly size: number;
  readonly linkName: string;
  readonly mode: number;
  /** Offsets in the tar stream of the entry's (last) header and of its body. */
  readonly headerOffset: number;
  readonly dataOffset: number;
  /**
   * True when a pax record (the entry's or a global one) gives the size: readers take it over the header's size
   * field even where the two agree, so a writer giving the entry a new body must rewrite that record, not the field.
   */
  readonly sizeInPax?: boolean;
}

const utf8 = new TextDecoder("utf-8");

function field(block: Uint8Array, start: number, length: number): Uint8Array {
  const bytes = block.subarray(start, start + length);
  const nul = bytes.indexOf(0);
  return nul < 0 ? bytes : bytes.subarray(0, nul);
}

function text(block: Uint8Array, start: number, length: number): string {
  return utf8.decode(field(block, start, length));
}

function bad(message: string, offset: number, fieldName: string): OffloadKitError {
  return new OffloadKitError("TAR_MALFORMED", `malformed tar header at offset ${offset}: ${message}`, { offset, field: fieldName });
}

/** An octal number field (spaces and NULs around it allowed), or GNU base-256. */
function number(block: Uint8Array, start: number, length: number, offset: number, name: string): number {
  if ((block[start]! & 0x80) !== 0) {
    let value = block[start]! & 0x7f;
    for (let i = start + 1; i < start + length; i++) value = value * 256 + block[i]!;
    if (!Number.isSafeInteger(value) || (block[start]! & 0x40) !== 0) throw bad(`${name} ${value} is out of range`, offset + start, name);
    return value;
  }
  const raw = latin1(block.subarray(start, start + length)).replace(/[\0 ]+$/, "").replace(/^ +/, "");
  if (raw === "") return 0;
  if (!/^[0-7]+$/.test(raw)) throw bad(`${name} '${raw}' is not an octal number`, offset + start, name);
  const value = parseInt(raw, 8);
  if (!Number.isSafeInteger(value)) throw bad(`${name} ${raw} is out of range`, offset + start, name);
  return value;
}

function latin1(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += String.fromCharCode(b);
  return out;
}

function checksumOk(block: Uint8Array): boolean {
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < TAR_BLOCK; i++) {
    const b = i >= 148 && i < 156 ? 0x20 : block[i]!;
    unsigned += b;
    signed += b > 127 ? b - 256 : b;
  }
  const raw = latin1(block.subarray(148, 156)).replace(/[\0 ]+$/, "").replace(/^ +/, "");
  if (!/^[0-7]+$/.test(raw)) return false;
  const stored = parseInt(raw, 8);
  return stored === unsigned || stored === signed;
}

/** Whether a block is a tar header: the ustar magic, or (old v7 tar) a name and a valid checksum. */
export function isTarHeader(block: Uint8Array): boolean {
  if (block.length < TAR_BLOCK) return false;
  const magic = latin1(block.subarray(257, 263));
  if (magic === "ustar\0" || magic === "ustar ") return checksumOk(block);
  return block[0] !== 0 && checksumOk(block);
}

function typeOf(flag: number): TarEntryType {
  switch (String.fromCharCode(flag)) {
    case "0": case "\0": case "7": return "file";
    case "1": return "hardlink";
    case "2": return "symlink";
    case "5": return "directory";
    default: return "other";
  }
}

/** pax records: `<decimal length> <key>=<value>\n`, the length counting the whole record. */
function parsePax(body: Uint8Array, offset: number): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    if (space < 0) break;
    const length = Number(latin1(body.subarray(at, space)));
    if (!Number.isSafeInteger(length) || length <= space - at || at + length > body.length) {
      throw bad(`pax record at ${at} has a bad length`, offset + at, "pax");
    }
    const record = utf8.decode(body.subarray(space + 1, at + length - 1));
    const eq = record.indexOf("=");
    if (eq > 0) records.set(record.slice(0, eq), record.slice(eq + 1));
    at += length;
  }
  return records;
}

async function readBody(reader: ChunkReader, size: number, what: string): Promise<Uint8Array> {
  if (size > MAX_META_SIZE) throw new OffloadKitError("TAR_MALFORMED", `${what} of ${size} bytes at offset ${reader.position} is larger than ${MAX_META_SIZE}`, { offset: reader.position });
  const start = reader.position;
  const body = await reader.read(size);
  if (body.length < size) throw truncated(what, start, size, body.length);
  const pad = (TAR_BLOCK - (size % TAR_BLOCK)) % TAR_BLOCK;
  const skipped = await reader.skip(pad);
  if (skipped < pad) throw truncated(what, start, size + pad, size + skipped);
  return body;
}

/**
 * The entries of a tar stream, in order. After each yield the caller may read up to `size` bytes of the
 * body from `reader`; whatever it leaves is skipped before the next header. Throws (TAR_MALFORMED,
 * PACKAGE_TRUNCATED) with the offset where the stream stops making sense.
 */
export async function* walkTar(reader: ChunkReader): AsyncGenerator<TarEntry> {
  let longName: string | undefined;
  let longLink: string | undefined;
  let pax = new Map<string, string>();
  const globalPax = new Map<string, string>();
  for (;;) {
    const headerOffset = reader.position;
    const block = await reader.read(TAR_BLOCK);
    // A stream that stops on a block boundary without the two zero blocks is accepted, as GNU tar does.
    if (block.length === 0) return;
    if (block.length < TAR_BLOCK) throw truncated("tar header", headerOffset, TAR_BLOCK, block.length);
    if (block.every((b) => b === 0)) return;
    if (!checksumOk(block)) throw bad("checksum mismatch (not a tar header)", headerOffset, "checksum");
    const flag = block[156]!;
    const declared = number(block, 124, 12, headerOffset, "size");
    const kind = String.fromCharCode(flag);
    if (kind === "L" || kind === "K" || kind === "x" || kind === "g") {
      const body = await readBody(reader, declared, `tar ${kind === "x" || kind === "g" ? "pax header" : "long name"}`);
      if (kind === "L") longName = utf8.decode(field(body, 0, body.length));
      else if (kind === "K") longLink = utf8.decode(field(body, 0, body.length));
      else if (kind === "x") pax = parsePax(body, headerOffset + TAR_BLOCK);
      else for (const [k, v] of parsePax(body, headerOffset + TAR_BLOCK)) globalPax.set(k, v);
      continue;
    }
    const records = new Map([...globalPax, ...pax]);
    let name = text(block, 0, 100);
    const magic = latin1(block.subarray(257, 263));
    if (magic === "ustar\0") {
      const prefix = text(block, 345, 155);
      if (prefix !== "") name = `${prefix}/${name}`;
    }
    name = records.get("path") ?? longName ?? name;
    const linkName = records.get("linkpath") ?? longLink ?? text(block, 157, 100);
    let size = declared;
    const paxSize = records.get("size");
    if (paxSize !== undefined) {
      size = Number(paxSize);
      if (!/^\d+$/.test(paxSize) || !Number.isSafeInteger(size)) throw bad(`pax size '${paxSize}' is not a size`, headerOffset, "size");
    }
    const type = typeOf(flag);
    // Links, directories and devices carry no body whatever their size field says (GNU tar reads it so).
    const bodySize = type === "file" || type === "other" ? size : 0;
    const mode = number(block, 100, 8, headerOffset, "mode");
    longName = undefined;
    longLink = undefined;
    pax = new Map();
    const dataOffset = reader.position;
    yield { name, type, size: bodySize, linkName, mode, headerOffset, dataOffset, ...(paxSize !== undefined ? { sizeInPax: true } : {}) };
    const consumed = reader.position - dataOffset;
    const rest = bodySize - consumed + ((TAR_BLOCK - (bodySize % TAR_BLOCK)) % TAR_BLOCK);
    if (rest > 0) {
      const skipped = await reader.skip(rest);
      if (skipped < rest) {
        // The body itself cut short is the member's fault; missing padding after a full body is tolerated at the very end.
        if (consumed + skipped < bodySize) throw truncated(`tar member '${name}'`, dataOffset, bodySize, consumed + skipped);
        return;
      }
    }
  }
}
