/**
 * `ar` archive member walk (GNU/SysV, BSD/Darwin and GNU thin archives).
 *
 * Follows llvm/lib/Object/Archive.cpp (ArchiveMemberHeader, Archive::Child, getNextChildLoc) and
 * ../shared/spec/bundler.md §8: the same fields, validated in the same order, reported as a status and
 * the position of the offending field instead of an llvm::Error. Name *resolution* (the `//` table,
 * reading `#1/` names) is left to TypeScript, which has the bytes; the walk classifies each name and
 * checks every number it needs to find the next member.
 *
 * | at  | size | field                                                                  |
 * |-----|------|------------------------------------------------------------------------|
 * | 0   | 8    | "!<arch>\n" (regular), "!<thin>\n" (thin), "<bigaf>\n" (AIX, not walked) |
 * | 8   | 60   | first member header, then its data, padded with '\n' to an even offset |
 *
 * Member header:
 *
 * | at | size | field                                                                      |
 * |----|------|----------------------------------------------------------------------------|
 * | 0  | 16   | name: `name/` (GNU), `/` `//` `/SYM64/` (tables), `/<decimal>` (offset in    |
 * |    |      | the `//` table), `#1/<decimal>` (BSD: the name follows the header), `name`   |
 * | 16 | 12   | modification time, decimal (not checked: LLVM reads it only on request)    |
 * | 28 | 6    | uid, decimal (idem)                                                        |
 * | 34 | 6    | gid, decimal (idem)                                                        |
 * | 40 | 8    | mode, octal (idem)                                                         |
 * | 48 | 10   | size of the data (including a `#1/` name), decimal, space padded           |
 * | 58 | 2    | "`\n"                                                                      |
 *
 * Records (8 x f64 each): header position, name kind (ArName), name position, name value (length,
 * or the `//` offset for GNU long names), data position, data size, raw size field, flags (bit 0:
 * thin member, its data lives in another file).
 */
import {
  AR_RECORD_F64S, RECORDS, RECORDS_BYTES, R_AUX0, R_COUNT, R_ERROR_POS, R_NEXT_INDEX, R_NEXT_POS, R_STATUS,
  setResult, windowPtr,
} from "./layout";
import { Status } from "./status";

export const AR_MAGIC_SIZE: u64 = 8;
export const AR_HEADER_SIZE: u64 = 60;

/** archiveHead's R_AUX0: which magic the file starts with. */
export const AR_KIND_REGULAR: i32 = 1;
export const AR_KIND_THIN: i32 = 2;
export const AR_KIND_BIG: i32 = 3;

/** walkArchive flags. */
export const AR_WALK_THIN: u32 = 1;
/** BSD-like archives (first member `__.SYMDEF` or `#1/...`): names end at a space, not at '/'. */
export const AR_WALK_BSD: u32 = 2;

/** Name kinds in a record. */
export const AR_NAME_PLAIN: i32 = 0;
export const AR_NAME_SYMTAB: i32 = 1;
export const AR_NAME_SYMTAB64: i32 = 2;
export const AR_NAME_STRTAB: i32 = 3;
export const AR_NAME_GNU_LONG: i32 = 4;
export const AR_NAME_BSD_LONG: i32 = 5;
export const AR_NAME_SPECIAL: i32 = 6;

const SLASH: u8 = 0x2f;
const SPACE: u8 = 0x20;
const HASH: u8 = 0x23;

function finish(status: Status, written: u32, pos: u64, index: f64, errorPos: u64): i32 {
  setResult(R_STATUS, <f64>status);
  setResult(R_COUNT, <f64>written);
  setResult(R_NEXT_POS, <f64>pos);
  setResult(R_NEXT_INDEX, index);
  setResult(R_ERROR_POS, <f64>errorPos);
  return status;
}

/**
 * `StringRef::getAsInteger(10)` of a field with trailing spaces trimmed (`getFieldRawString`): at
 * least one digit and nothing but digits. Returns -1 when LLVM would say "not all decimal numbers".
 */
function parseDecimal(at: usize, length: i32): f64 {
  let end = length;
  while (end > 0 && load<u8>(at + <usize>(end - 1)) == SPACE) end--;
  if (end == 0) return -1;
  let value: f64 = 0;
  for (let i = 0; i < end; i++) {
    const c = <i32>load<u8>(at + <usize>i) - 0x30;
    if (c < 0 || c > 9) return -1;
    value = value * 10 + <f64>c;
  }
  return value;
}

/** Whether the `length` bytes at `at` spell `text` (ASCII). */
function spells(at: usize, length: i32, text: string): bool {
  if (length != text.length) return false;
  for (let i = 0; i < length; i++) {
    if (<i32>load<u8>(at + <usize>i) != text.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Checks the magic; the window must start at position 0 and hold `winLen` bytes of a `bufSize`-byte
 * input. R_AUX0 gets the kind (AR_KIND_*), R_NEXT_POS the first member position.
 */
export function archiveHead(winLen: u32, bufSize: f64): i32 {
  setResult(R_AUX0, 0);
  if (bufSize < <f64>AR_MAGIC_SIZE || <u64>winLen < AR_MAGIC_SIZE) return finish(Status.NOT_FOUND, 0, 0, 0, 0);
  const win = windowPtr();
  let kind = 0;
  if (spells(win, 8, "!<arch>\n")) kind = AR_KIND_REGULAR;
  else if (spells(win, 8, "!<thin>\n")) kind = AR_KIND_THIN;
  else if (spells(win, 8, "<bigaf>\n")) kind = AR_KIND_BIG;
  else return finish(Status.NOT_FOUND, 0, 0, 0, 0);
  setResult(R_AUX0, <f64>kind);
  return finish(Status.DONE, 0, AR_MAGIC_SIZE, 0, 0);
}

/**
 * Walks members from position `pos` (member number `index`), with the window holding input positions
 * [winPos, winPos + winLen) of a `bufSize`-byte archive. Writes at most `maxRecords` records. Returns
 * DONE at the end of the archive, MORE when the next header is not in the window or the records are
 * full (resume from R_NEXT_POS / R_NEXT_INDEX), or a negative status with R_ERROR_POS at the field.
 */
export function walkArchive(winPos: f64, winLen: u32, bufSize: f64, pos: f64, index: f64, flags: u32, maxRecords: u32): i32 {
  const size = <u64>bufSize;
  const wStart = <u64>winPos;
  const wEnd = wStart + <u64>winLen;
  const cap = min<u32>(maxRecords, <u32>(RECORDS_BYTES / (AR_RECORD_F64S * 8)));
  const thinArchive = (flags & AR_WALK_THIN) != 0;
  const bsd = (flags & AR_WALK_BSD) != 0;
  const win = windowPtr();
  let p = <u64>pos;
  let i = index;
  let written: u32 = 0;
  while (p < size) {
    if (written == cap) return finish(Status.MORE, written, p, i, 0);
    // Archive::Child's constructor, in its order: room for a header, the terminator, the raw name,
    // the size field; then getName's checks; then getNextChildLoc's bound.
    if (size - p < AR_HEADER_SIZE) return finish(Status.AR_HEADER_TRUNCATED, written, p, i, p);
    if (p < wStart || p + AR_HEADER_SIZE > wEnd) return finish(Status.MORE, written, p, i, 0);
    const at = win + <usize>(p - wStart);
    if (load<u8>(at, 58) != 0x60 || load<u8>(at, 59) != 0x0a) return finish(Status.AR_BAD_TERMINATOR, written, p, i, p + 58);

    const first = load<u8>(at);
    if (bsd && first == SPACE) return finish(Status.AR_LEADING_SPACE, written, p, i, p);
    const endChar: u8 = bsd || first == SLASH || first == HASH ? SPACE : SLASH;
    let rawLength = 16;
    for (let k = 0; k < 16; k++) {
      if (load<u8>(at + <usize>k) == endChar) {
        rawLength = k;
        break;
      }
    }

    const rawSize = parseDecimal(at + 48, 10);
    if (rawSize < 0) return finish(Status.AR_BAD_SIZE, written, p, i, p + 48);
    const memberSize = <u64>rawSize;

    let nameKind = AR_NAME_PLAIN;
    let namePos = p;
    let nameValue: f64 = 0;
    let dataPos = p + AR_HEADER_SIZE;
    let dataSize = memberSize;
    if (first == SLASH) {
      if (rawLength == 1) nameKind = AR_NAME_SYMTAB;
      else if (rawLength == 2 && load<u8>(at, 1) == SLASH) nameKind = AR_NAME_STRTAB;
      else if (spells(at, rawLength, "/SYM64/")) nameKind = AR_NAME_SYMTAB64;
      else if (spells(at, rawLength, "/<XFGHASHMAP>/") || spells(at, rawLength, "/<ECSYMBOLS>/")) nameKind = AR_NAME_SPECIAL;
      else {
        const offset = parseDecimal(at + 1, rawLength - 1);
        if (offset < 0) return finish(Status.AR_BAD_LONG_NAME, written, p, i, p + 1);
        nameKind = AR_NAME_GNU_LONG;
        nameValue = offset;
      }
      if (nameKind != AR_NAME_GNU_LONG) nameValue = <f64>rawLength;
    } else if (rawLength >= 3 && first == HASH && load<u8>(at, 1) == 0x31 && load<u8>(at, 2) == SLASH) {
      const length = parseDecimal(at + 3, rawLength - 3);
      if (length < 0) return finish(Status.AR_BAD_BSD_NAME_LENGTH, written, p, i, p + 3);
      if (length > rawSize) return finish(Status.AR_BSD_NAME_PAST_END, written, p, i, p + 3);
      nameKind = AR_NAME_BSD_LONG;
      namePos = p + AR_HEADER_SIZE;
      nameValue = length;
      dataPos += <u64>length;
      dataSize -= <u64>length;
    } else {
      // getName: a raw name ending in '/' loses it (BSD-style "name/"), otherwise trailing blanks go.
      let length = rawLength;
      if (load<u8>(at + <usize>(length - 1)) == SLASH) length--;
      else while (length > 0 && load<u8>(at + <usize>(length - 1)) == SPACE) length--;
      nameValue = <f64>length;
    }

    // In a thin archive only the tables are stored inline; members name files beside the archive.
    const thinMember = thinArchive && nameKind != AR_NAME_SYMTAB && nameKind != AR_NAME_STRTAB && nameKind != AR_NAME_SYMTAB64;
    let next = p + AR_HEADER_SIZE;
    if (thinMember) {
      dataSize = 0;
    } else {
      if (memberSize > size - next) return finish(Status.AR_MEMBER_PAST_END, written, p, i, p + 48);
      next += memberSize;
      // The padding byte after an odd-sized last member may be missing (LLVM then stops quietly).
      if ((next & 1) != 0 && next < size) next++;
    }

    const rec = RECORDS + <usize>written * <usize>(AR_RECORD_F64S * 8);
    store<f64>(rec, <f64>p);
    store<f64>(rec, <f64>nameKind, 8);
    store<f64>(rec, <f64>namePos, 16);
    store<f64>(rec, nameValue, 24);
    store<f64>(rec, <f64>dataPos, 32);
    store<f64>(rec, <f64>dataSize, 40);
    store<f64>(rec, rawSize, 48);
    store<f64>(rec, thinMember ? 1 : 0, 56);
    written++;
    i++;
    p = next;
  }
  return finish(Status.DONE, written, p, i, 0);
}
