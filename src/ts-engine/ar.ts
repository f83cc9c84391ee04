/**
 * TypeScript twin of assembly/ar.ts: the `ar` member walk, with the same checks in the same order, the
 * same records and the same statuses (test/fuzz/archive-engines.test.ts holds the two equal).
 */
import {
  AR_KIND_BIG, AR_KIND_REGULAR, AR_KIND_THIN, AR_MAX_RECORDS, AR_NAME_BSD_LONG, AR_NAME_GNU_LONG, AR_NAME_PLAIN,
  AR_NAME_SPECIAL, AR_NAME_STRTAB, AR_NAME_SYMTAB, AR_NAME_SYMTAB64, AR_RECORD_F64S, AR_WALK_BSD, AR_WALK_THIN,
  RECORDS, RESULT, R_AUX0,
} from "../engine/layout.js";
import { Status } from "../engine/status.js";
import type { TsMemory } from "./memory.js";

const MAGIC_SIZE = 8;
const HEADER_SIZE = 60;


const SLASH = 0x2f;
const SPACE = 0x20;
const HASH = 0x23;


function parseDecimal(bytes: Uint8Array, at: number, length: number): number {
  let end = length;
  while (end > 0 && bytes[at + end - 1] === SPACE) end--;
  if (end === 0) return -1;
  let value = 0;
  for (let i = 0; i < end; i++) {
    const c = bytes[at + i] - 0x30;
    if (c < 0 || c > 9) return -1;
    value = value * 10 + c;
  }
  return value;
}

function spells(bytes: Uint8Array, at: number, length: number, text: string): boolean {
  if (length !== text.length) return false;
  for (let i = 0; i < length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

export function archiveHead(mem: TsMemory, windowLength: number, bufferSize: number): number {
  mem.f64[(RESULT >>> 3) + R_AUX0] = 0;
  if (bufferSize < MAGIC_SIZE || windowLength < MAGIC_SIZE) return mem.finish(Status.NOT_FOUND, 0, 0, 0, 0);
  const win = mem.windowBase;
  let kind: number;
  if (spells(mem.bytes, win, 8, "!<arch>\n")) kind = AR_KIND_REGULAR;
  else if (spells(mem.bytes, win, 8, "!<thin>\n")) kind = AR_KIND_THIN;
  else if (spells(mem.bytes, win, 8, "<bigaf>\n")) kind = AR_KIND_BIG;
  else return mem.finish(Status.NOT_FOUND, 0, 0, 0, 0);
  mem.f64[(RESULT >>> 3) + R_AUX0] = kind;
  return mem.finish(Status.DONE, 0, MAGIC_SIZE, 0, 0);
}

export function walkArchive(
  mem: TsMemory, windowPosition: number, windowLength: number, bufferSize: number,
  position: number, index: number, flags: number, maxRecords: number,
): number {
  const size = bufferSize;
  const wStart = windowPosition;
  const wEnd = wStart + windowLength;
  const cap = Math.min(maxRecords, AR_MAX_RECORDS);
  const thinArchive = (flags & AR_WALK_THIN) !== 0;
  const bsd = (flags & AR_WALK_BSD) !== 0;
  const bytes = mem.bytes;
  const win = mem.windowBase;
  let p = position;
  let i = index;
  let written = 0;
  while (p < size) {
    if (written === cap) return mem.finish(Status.MORE, written, p, i, 0);
    if (size - p < HEADER_SIZE) return mem.finish(Status.AR_HEADER_TRUNCATED, written, p, i, p);
    if (p < wStart || p + HEADER_SIZE > wEnd) return mem.finish(Status.MORE, written, p, i, 0);
    const at = win + (p - wStart);
    if (bytes[at + 58] !== 0x60 || bytes[at + 59] !== 0x0a) return mem.finish(Status.AR_BAD_TERMINATOR, written, p, i, p + 58);

    const first = bytes[at];
    if (bsd && first === SPACE) return mem.finish(Status.AR_LEADING_SPACE, written, p, i, p);
    const endChar = bsd || first === SLASH || first === HASH ? SPACE : SLASH;
    let rawLength = 16;
    for (let k = 0; k < 16; k++) {
      if (bytes[at + k] === endChar) {
        rawLength = k;
        break;
      }
    }

    const rawSize = parseDecimal(bytes, at + 48, 10);
    if (rawSize < 0) return mem.finish(Status.AR_BAD_SIZE, written, p, i, p + 48);

    let nameKind = AR_NAME_PLAIN;
    let namePos = p;
    let nameValue = 0;
    let dataPos = p + HEADER_SIZE;
    let dataSize = rawSize;
    if (first === SLASH) {
      if (rawLength === 1) nameKind = AR_NAME_SYMTAB;
      else if (rawLength === 2 && bytes[at + 1] === SLASH) nameKind = AR_NAME_STRTAB;
      else if (spells(bytes, at, rawLength, "/SYM64/")) nameKind = AR_NAME_SYMTAB64;
      else if (spells(bytes, at, rawLength, "/<XFGHASHMAP>/") || spells(bytes, at, rawLength, "/<ECSYMBOLS>/")) nameKind = AR_NAME_SPECIAL;
      else {
        const offset = parseDecimal(bytes, at + 1, rawLength - 1);
        if (offset < 0) return mem.finish(Status.AR_BAD_LONG_NAME, written, p, i, p + 1);
        nameKind = AR_NAME_GNU_LONG;
        nameValue = offset;
      }
      if (nameKind !== AR_NAME_GNU_LONG) nameValue = rawLength;
    } else if (rawLength >= 3 && first === HASH && bytes[at + 1] === 0x31 && bytes[at + 2] === SLASH) {
      const length = parseDecimal(bytes, at + 3, rawLength - 3);
      if (length < 0) return mem.finish(Status.AR_BAD_BSD_NAME_LENGTH, written, p, i, p + 3);
      if (length > rawSize) return mem.finish(Status.AR_BSD_NAME_PAST_END, written, p, i, p + 3);
      nameKind = AR_NAME_BSD_LONG;
      namePos = p + HEADER_SIZE;
      nameValue = length;
      dataPos += length;
      dataSize -= length;
    } else {
      let length = rawLength;
      if (bytes[at + length - 1] === SLASH) length--;
      else while (length > 0 && bytes[at + length - 1] === SPACE) length--;
      nameValue = length;
    }

    const thinMember = thinArchive && nameKind !== AR_NAME_SYMTAB && nameKind !== AR_NAME_STRTAB && nameKind !== AR_NAME_SYMTAB64;
    let next = p + HEADER_SIZE;
    if (thinMember) {
      dataSize = 0;
    } else {
      if (rawSize > size - next) return mem.finish(Status.AR_MEMBER_PAST_END, written, p, i, p + 48);
      next += rawSize;
      if (next % 2 !== 0 && next < size) next++;
    }

    const rec = (RECORDS >>> 3) + written * AR_RECORD_F64S;
    mem.f64[rec] = p;
    mem.f64[rec + 1] = nameKind;
    mem.f64[rec + 2] = namePos;
    mem.f64[rec + 3] = nameValue;
    mem.f64[rec + 4] = dataPos;
    mem.f64[rec + 5] = dataSize;
    mem.f64[rec + 6] = rawSize;
    mem.f64[rec + 7] = thinMember ? 1 : 0;
    written++;
    i++;
    p = next;
  }
  return mem.finish(Status.DONE, written, p, i, 0);
}
