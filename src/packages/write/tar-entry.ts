/**
 * A tar entry's headers written again for a new name and size (POSIX.1-2001 pax, GNU, ustar; reading:
 * ../tar.ts). The image writer renames a blob to its new digest and resizes it; a layer's edited file keeps
 * its name but not its size. The entry's headers are everything from its first pax or long-name record to
 * its own header:
 *
 * | record | what changes |
 * |---|---|
 * | pax `x` (`<length> <key>=<value>\n`) | the `path` record (a rename) and the `size` record (a resize), each length recounted; every other record byte for byte; the body's size field and checksum |
 * | pax `g` (global) | nothing; a `path` or `size` in it applies to every later entry, so an entry it names is refused |
 * | GNU `L` (`././@LongLink`) | its body, the new name and a NUL (as GNU tar writes it), its size field and checksum |
 * | GNU `K` (long link name) | nothing |
 * | the entry's own header | name (and ustar prefix), size, checksum; every other field kept |
 *
 * The entry's own name field holds the new name when it fits: in the 100-byte name, or (POSIX ustar)
 * split at a `/` into the 155-byte prefix and the name, as ustar writers do. When it does not fit and no
 * pax `path` or GNU long name carries it, one is added before the header, as GNU tar writes them: a GNU
 * long name for a GNU header (magic `ustar  `), else a pax header holding one `path` record (its name
 * `PaxHeaders.0/<base name>`, as Go's archive/tar names it). The name field then holds the name's first 100
 * bytes, as both do. Browser-safe: bytes in, bytes out.
 */
import { OffloadKitError } from "../../engine/errors.js";
import { concatBytes } from "../../formats/bytes.js";

const BLOCK = 512;
const NAME = 0;
const NAME_SIZE = 100;
const SIZE = 124;
const CHECKSUM = 148;
const TYPEFLAG = 156;
const LINKNAME = 157;
const MAGIC = 257;
const PREFIX = 345;
const PREFIX_SIZE = 155;

const utf8 = new TextEncoder();
const text = new TextDecoder();

export interface EntryChange {
  /** The new name, as it will be recorded (undefined: kept). */
  readonly name?: string;
  /** The new body size. */
  readonly size: number;
}

function pad(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}

function magicOf(block: Uint8Array): string {
  return String.fromCharCode(...block.subarray(MAGIC, MAGIC + 8));
}

/** `size` in a header's 12-byte size field: octal below 8 GiB, GNU base-256 above. */
function setSize(block: Uint8Array, size: number): void {
  if (size < 8 ** 11) {
    const octal = size.toString(8).padStart(11, "0");
    for (let i = 0; i < 11; i++) block[SIZE + i] = octal.charCodeAt(i);
    block[SIZE + 11] = 0;
    return;
  }
  block.fill(0, SIZE, SIZE + 12);
  block[SIZE] = 0x80;
  let value = size;
  for (let i = SIZE + 11; i > SIZE; i--) {
    block[i] = value % 256;
    value = Math.floor(value / 256);
  }
}

/** The checksum field again: the sum of the header's bytes, the field counted as spaces (six octal digits, NUL, space). */
function setChecksum(block: Uint8Array): void {
  block.fill(0x20, CHECKSUM, CHECKSUM + 8);
  let sum = 0;
  for (const b of block) sum += b;
  const octal = sum.toString(8).padStart(6, "0");
  for (let i = 0; i < 6; i++) block[CHECKSUM + i] = octal.charCodeAt(i);
  block[CHECKSUM + 6] = 0;
  block[CHECKSUM + 7] = 0x20;
}

/** A copy (a Node Buffer's slice is a view, not a copy). */
function copy(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes);
}


/** A header block and its body, padded to the block size, with the header's size and checksum set for the body. */
function record(header: Uint8Array, body: Uint8Array): Uint8Array {
  const block = copy(header.subarray(0, BLOCK));
  setSize(block, body.length);
  setChecksum(block);
  return concatBytes([block, body, new Uint8Array(pad(body.length))]);
}

/** One pax record, `<length> <key>=<value>\n`, its length counting its own digits. */
export function paxRecord(key: string, value: string): Uint8Array {
  const rest = utf8.encode(` ${key}=${value}\n`).length;
  let length = rest + 1;
  while (String(length).length + rest !== length) length = String(length).length + rest;
  return utf8.encode(`${length} ${key}=${value}\n`);
}

/** A pax body's records as they are (bytes) with their keys; a body that is not records is refused. */
function paxRecords(body: Uint8Array, where: string): { key: string; bytes: Uint8Array }[] {
  const records: { key: string; bytes: Uint8Array }[] = [];
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    const length = space < 0 ? NaN : Number(String.fromCharCode(...body.subarray(at, space)));
    if (!Number.isSafeInteger(length) || length <= space - at || at + length > body.length) {
      // Trailing NULs after the last record are padding some writers leave; anything else is not pax.
      if (body.subarray(at).every((b) => b === 0)) break;
      throw new OffloadKitError("TAR_MALFORMED", `${where}: pax record at ${at} has a bad length`, { offset: at, field: "pax" });
    }
    const bytes = body.subarray(at, at + length);
    const line = text.decode(bytes.subarray(space + 1 - at));
    records.push({ key: line.slice(0, Math.max(0, line.indexOf("="))), bytes });
    at += length;
  }
  return records;
}

/**
 * Sets `name` in the header's name field (and, for POSIX ustar, its prefix): whether it fits. When it does
 * not, the field holds the name's first 100 bytes and the prefix is cleared.
 */
function setName(block: Uint8Array, name: string): boolean {
  const bytes = utf8.encode(name);
  const ustar = magicOf(block).startsWith("ustar\0");
  block.fill(0, NAME, NAME + NAME_SIZE);
  if (ustar) block.fill(0, PREFIX, PREFIX + PREFIX_SIZE);
  if (bytes.length <= NAME_SIZE) {
    block.set(bytes, NAME);
    return true;
  }
  if (ustar) {
    // The prefix takes as much as it can, so the name keeps the end (tar's own split: the last `/` that fits).
    for (let slash = Math.min(bytes.length - 2, PREFIX_SIZE); slash > 0; slash--) {
      if (bytes[slash] !== 0x2f || bytes.length - slash - 1 > NAME_SIZE) continue;
      block.set(bytes.subarray(0, slash), PREFIX);
      block.set(bytes.subarray(slash + 1), NAME);
      return true;
    }
  }
  block.set(bytes.subarray(0, NAME_SIZE), NAME);
  return false;
}

/**
 * The headers of one tar entry (every block from its first pax or long-name record to its own header,
 * `headers`) written for `change`. `where` names the entry in errors.
 */
export function rewriteEntryHeaders(headers: Uint8Array, change: EntryChange, where: string): Uint8Array {
  if (headers.length < BLOCK || headers.length % BLOCK !== 0) throw new OffloadKitError("TAR_MALFORMED", `${where}: its headers are ${headers.length} bytes, not whole blocks`);
  const parts: Uint8Array[] = [];
  let nameCarried = false;
  let at = 0;
  const last = headers.length - BLOCK;
  while (at < last) {
    const header = headers.subarray(at, at + BLOCK);
    const size = Number.parseInt(String.fromCharCode(...header.subarray(SIZE, SIZE + 12)).replace(/[\0 ]/g, "") || "0", 8);
    const end = at + BLOCK + size + pad(size);
    if (!Number.isSafeInteger(size) || end > last) throw new OffloadKitError("TAR_MALFORMED", `${where}: a record's size runs past its header`, { offset: at });
    const body = headers.subarray(at + BLOCK, at + BLOCK + size);
    const kind = String.fromCharCode(header[TYPEFLAG]!);
    if (kind === "x") {
      const records = paxRecords(body, where).map((r) => {
        if (r.key === "size") return paxRecord("size", String(change.size));
        if (r.key === "path" && change.name !== undefined) {
          nameCarried = true;
          return paxRecord("path", change.name);
        }
        return r.bytes;
      });
      parts.push(record(header, concatBytes(records)));
    } else if (kind === "L") {
      if (change.name !== undefined) nameCarried = true;
      parts.push(change.name === undefined ? headers.subarray(at, end) : record(header, concatBytes([utf8.encode(change.name), new Uint8Array(1)])));
    } else if (kind === "g") {
      const keys = paxRecords(body, where).map((r) => r.key);
      if (keys.includes("size") || (change.name !== undefined && keys.includes("path"))) {
        throw new OffloadKitError("TAR_UNSUPPORTED", `${where}: a global pax header sets every later entry's ${keys.includes("size") ? "size" : "path"}, so this entry cannot be given its own`, { offset: at, field: "pax" });
      }
      parts.push(headers.subarray(at, end));
    } else parts.push(headers.subarray(at, end));
    at = end;
  }
  const own = copy(headers.subarray(last));
  if (change.name !== undefined && !setName(own, change.name) && !nameCarried) {
    const gnu = magicOf(own) === "ustar  \0";
    const added = copy(own);
    added.fill(0, LINKNAME, LINKNAME + NAME_SIZE);
    if (gnu) {
      added.fill(0, NAME, NAME + NAME_SIZE);
      added.set(utf8.encode("././@LongLink"), NAME);
      added[TYPEFLAG] = "L".charCodeAt(0);
      parts.push(record(added, concatBytes([utf8.encode(change.name), new Uint8Array(1)])));
    } else {
      const base = change.name.slice(change.name.lastIndexOf("/") + 1);
      setName(added, `PaxHeaders.0/${base}`);
      added[TYPEFLAG] = "x".charCodeAt(0);
      parts.push(record(added, paxRecord("path", change.name)));
    }
  }
  setSize(own, change.size);
  setChecksum(own);
  parts.push(own);
  return concatBytes(parts);
}

/** A pax body's values by key (the last of a key wins, as tar reads them). */
export function paxValues(body: Uint8Array, where: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const r of paxRecords(body, where)) {
    const line = text.decode(r.bytes);
    const eq = line.indexOf("=");
    if (eq > 0) values.set(r.key, line.slice(eq + 1, -1));
  }
  return values;
}
