/**
 * `ar` archives: reading members (GNU/SysV, BSD/Darwin, COFF-style symbol maps; thin archives are
 * recognised) and writing archives the way LLVM 19's archive writer does for clang-offload-bundler
 * (GNU format, deterministic, `//` long-name table, symbol table from the members' symbols).
 *
 * Follows llvm/lib/Object/Archive.cpp (the Archive constructor's special-member rules, getName) and
 * llvm/lib/Object/ArchiveWriter.cpp (writeArchiveToStream with K_GNU, Deterministic, NormalSymtab);
 * seed 000 "Archive Unbundling"; spec bundler.md §8. The member walk runs in the engine
 * (assembly/ar.ts or its TS twin); this module resolves names and words errors as LLVM does.
 *
 * | at              | size   | field                                                        |
 * |-----------------|--------|--------------------------------------------------------------|
 * | 0               | 8      | "!<arch>\n" ("!<thin>\n": members are files beside the archive) |
 * | 8               | 60     | member header: name[16] date[12] uid[6] gid[6] mode[8] size[10] "`\n" |
 * | 68              | size   | member data, then one '\n' if the size is odd                |
 *
 * Special members, only where the Archive constructor looks for them: `/` (GNU symbol table: u32 BE
 * count, u32 BE member-header offsets, NUL-terminated names, NUL padding to even), `/SYM64/` (the same
 * with u64), `//` (long names, each `name/\n`, referenced as `/<offset>`), `__.SYMDEF` and `#1/<n>`
 * names (BSD), a second `/` (COFF symbol map) and `/<ECSYMBOLS>/`.
 *
 * Writing: every member gets time 0, uid 0, gid 0, mode 644. A name of 16 bytes or more, or with a
 * '/', goes to the `//` table (names deduplicated). The symbol table lists, per member, its global
 * defined symbols (see formats/symbols.ts); it is omitted when no member is a symbolic file, and holds
 * just "\0\0\0" when symbolic members define nothing. Offsets switch to `/SYM64/` past 4 GiB.
 */
import type { Engine } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import {
  AR_KIND_BIG, AR_KIND_THIN, AR_MAX_RECORDS, AR_NAME_BSD_LONG, AR_NAME_GNU_LONG, AR_NAME_PLAIN, AR_NAME_SPECIAL,
  AR_NAME_STRTAB, AR_NAME_SYMTAB, AR_NAME_SYMTAB64, AR_RECORD_F64S, AR_WALK_BSD, AR_WALK_THIN, RECORDS, RESULT,
  R_AUX0, R_COUNT, R_ERROR_POS, R_NEXT_INDEX, R_NEXT_POS,
} from "../engine/layout.js";
import { engine as defaultEngine } from "../engine/select.js";
import { bytesSource, readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { Status, statusName } from "../engine/status.js";
import { Window } from "../engine/window.js";
import { latin1Decode, latin1Encode } from "./bytes.js";

export const ARCHIVE_MAGIC = "!<arch>\n";
export const THIN_ARCHIVE_MAGIC = "!<thin>\n";
export const ARCHIVE_HEADER_SIZE = 60;
/** The largest member the 10-digit size field can describe (`Archive::MaxMemberSize`). */
export const ARCHIVE_MAX_MEMBER_SIZE = 9999999999;

/** llvm::object::Archive::Kind, as the reader detects it (K_DARWIN is never detected, only written). */
export type ArchiveKind = "gnu" | "gnu64" | "bsd" | "darwin64" | "coff";

export interface ArchiveMember {
  /** Position among all members, special ones included. */
  readonly index: number;
  readonly headerOffset: number;
  /** The name as `Archive::Child::getName` returns it (a byte string). */
  readonly name: string;
  /** Where the data starts (after a `#1/` name). For a thin member: 0. */
  readonly dataOffset: number;
  /** Data size; for a thin member, the size recorded for the external file. */
  readonly size: number;
  /** A thin archive's member: its data is the file `name`, relative to the archive's directory. */
  readonly thin: boolean;
}

export interface ArchiveRange {
  readonly offset: number;
  readonly size: number;
}

export interface ArchiveIndex {
  readonly kind: ArchiveKind;
  readonly thin: boolean;
  readonly symbolTable?: ArchiveRange;
  readonly stringTable?: ArchiveRange;
  /** The regular members (`child_begin` with internal members skipped), in file order. */
  readonly members: readonly ArchiveMember[];
}

export interface ArchiveReadOptions {
  engine?: Engine;
}

/** One walk record (see assembly/ar.ts). */
interface RawMember {
  readonly index: number;
  readonly headerOffset: number;
  readonly nameKind: number;
  readonly namePos: number;
  readonly nameValue: number;
  readonly dataOffset: number;
  readonly size: number;
  readonly thin: boolean;
}

export function isArchive(bytes: Uint8Array): boolean {
  if (bytes.length < 8) return false;
  const head = latin1Decode(bytes.subarray(0, 8));
  return head === ARCHIVE_MAGIC || head === THIN_ARCHIVE_MAGIC;
}

function malformed(code: string, message: string, offset?: number, field?: string): OffloadKitError {
  return new OffloadKitError(code, `truncated or malformed archive (${message})`, { offset, field });
}

/** `object_error::parse_failed`, which the Archive constructor returns for an unexpected special member. */
function parseFailed(offset: number): OffloadKitError {
  return new OffloadKitError("AR_PARSE_FAILED", "Invalid data was encountered while parsing the file", { offset, field: "name" });
}

/** `raw_ostream::write_escaped`: \\ \t \n \" and three-digit octal escapes for anything unprintable. */
export function writeEscaped(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) out += "\\\\";
    else if (c === 0x09) out += "\\t";
    else if (c === 0x0a) out += "\\n";
    else if (c === 0x22) out += '\\"';
    else if (c >= 0x20 && c <= 0x7e) out += text[i];
    else out += `\\${(c >> 6) & 7}${(c >> 3) & 7}${c & 7}`;
  }
  return out;
}

/** `StringRef::rtrim(' ')`. */
function rtrimSpaces(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x20) end--;
  return text.substring(0, end);
}

function isDecimal(text: string): boolean {
  return /^[0-9]+$/.test(text);
}

/**
 * `ArchiveMemberHeader::getRawName` of a 16-byte name field: up to the first space for names starting
 * with '/' or '#' (and in BSD archives), else up to the first '/'.
 */
function rawName(field: string, bsd: boolean): string {
  const first = field[0];
  const end = field.indexOf(bsd || first === "/" || first === "#" ? " " : "/");
  return end === -1 ? field : field.substring(0, end);
}

/** Reads archives member by member through an engine window. */
class ArchiveReader {
  readonly size: number;
  private readonly window: Window;
  private kind: ArchiveKind = "gnu";
  private stringTable = "";
  private stringTableLoaded = false;
  private stringTableRange: ArchiveRange | undefined;

  constructor(private readonly source: ByteSource, private readonly engine: Engine, private readonly thinArchive: boolean) {
    this.size = source.size;
    this.window = new Window(engine, source);
  }

  /** The 16-byte name field of a member header (or fewer bytes at the end of the input). */
  nameField(headerOffset: number): string {
    return latin1Decode(readExact(this.source, headerOffset, Math.max(0, Math.min(16, this.size - headerOffset))));
  }

  setKind(kind: ArchiveKind, stringTable?: ArchiveRange): void {
    this.kind = kind;
    this.stringTableRange = stringTable;
  }

  private table(): string {
    if (!this.stringTableLoaded) {
      this.stringTableLoaded = true;
      const range = this.stringTableRange;
      this.stringTable = range === undefined ? "" : latin1Decode(readExact(this.source, range.offset, range.size));
    }
    return this.stringTable;
  }

  private bsd(): boolean {
    return this.kind === "bsd" || this.kind === "darwin64";
  }

  /**
   * `getName(Size)`, for error messages too: undefined where LLVM's getName fails (the caller then says
   * "at offset N"). `available` is the byte count getName may assume (the member's or what is left).
   */
  nameForMessage(headerOffset: number, available: number): string | undefined {
    if (available < 16) return undefined;
    const field = this.nameField(headerOffset);
    if (this.bsd() && field[0] === " ") return undefined;
    const raw = rawName(field, this.bsd());
    if (raw[0] === "/") {
      if (raw === "/" || raw === "//" || raw === "/<XFGHASHMAP>/" || raw === "/<ECSYMBOLS>/") return raw;
      const digits = rtrimSpaces(raw.substring(1));
      if (!isDecimal(digits)) return undefined;
      return this.longName(Number(digits)) ?? undefined;
    }
    if (raw.startsWith("#1/")) {
      const digits = rtrimSpaces(raw.substring(3));
      if (!isDecimal(digits)) return undefined;
      const length = Number(digits);
      if (ARCHIVE_HEADER_SIZE + length > available) return undefined;
      // A member that runs past the end (AR_MEMBER_PAST_END) may name bytes the input does not have:
      // name it from what there is, the same for a file as for bytes in memory.
      const present = Math.max(0, Math.min(length, this.size - headerOffset - ARCHIVE_HEADER_SIZE));
      return latin1Decode(readExact(this.source, headerOffset + ARCHIVE_HEADER_SIZE, present)).replace(/\0+$/, "");
    }
    return raw.endsWith("/") ? raw.slice(0, -1) : rtrimSpaces(raw);
  }

  /** A `/<offset>` name from the string table; undefined when LLVM would fail. */
  private longName(offset: number): string | undefined {
    const table = this.table();
    if (offset >= table.length) return undefined;
    if (this.kind === "gnu" || this.kind === "gnu64") {
      const end = table.indexOf("\n", offset);
      if (end === -1 || end < 1 || table[end - 1] !== "/") return undefined;
      return table.substring(offset, end - 1);
    }
    const nul = table.indexOf("\0", offset);
    return table.substring(offset, nul === -1 ? table.length : nul);
  }

  /** `Archive::Child::getName` for a walked member, with LLVM's errors. */
  resolveName(member: RawMember): string {
    switch (member.nameKind) {
      case AR_NAME_PLAIN:
        return latin1Decode(readExact(this.source, member.headerOffset, member.nameValue));
      case AR_NAME_SYMTAB:
        return "/";
      case AR_NAME_STRTAB:
        return "//";
      case AR_NAME_SPECIAL:
        return rawName(this.nameField(member.headerOffset), this.bsd());
      case AR_NAME_SYMTAB64:
        // Only the constructor treats "/SYM64/" as special; getName reads it as a long-name offset.
        throw malformed("AR_BAD_LONG_NAME", "long name offset characters after the '/' are not all decimal numbers: " +
          `'SYM64/' for archive member header at offset ${member.headerOffset}`, member.headerOffset + 1, "name");
      case AR_NAME_BSD_LONG:
        // In a thin archive the walk checks the length against the external file's size: the name
        // itself must still be in the archive.
        if (member.namePos + member.nameValue > this.size) {
          throw malformed("AR_BSD_NAME_PAST_END", `long name length: ${member.nameValue} extends past the end of the member or archive for archive ` +
            `member header at offset ${member.headerOffset}`, member.headerOffset + 3, "name");
        }
        return latin1Decode(readExact(this.source, member.namePos, member.nameValue)).replace(/\0+$/, "");
      case AR_NAME_GNU_LONG: {
        const offset = member.nameValue;
        const table = this.table();
        if (offset >= table.length) {
          throw malformed("AR_LONG_NAME_PAST_END", `long name offset ${offset} past the end of the string table for archive ` +
            `member header at offset ${member.headerOffset}`, member.headerOffset + 1, "name");
        }
        const name = this.longName(offset);
        if (name === undefined) {
          throw malformed("AR_LONG_NAME_UNTERMINATED", `string table at long name offset ${offset} not terminated`,
            this.stringTableRange!.offset + offset, "string table");
        }
        return name;
      }
      default:
        throw new OffloadKitError("INTERNAL", `unknown archive name kind ${member.nameKind}`);
    }
  }

  /** The error for a failed walk status, worded as LLVM words it. */
  walkError(status: number, position: number, errorPos: number): OffloadKitError {
    const code = statusName(status) ?? "AR_MALFORMED";
    const remaining = this.size - position;
    const named = (available: number): string => {
      const name = this.nameForMessage(position, available);
      return name === undefined ? `at offset ${position}` : `for ${name}`;
    };
    switch (status) {
      case Status.AR_HEADER_TRUNCATED:
        return malformed(code, `remaining size of archive too small for next archive member header ${named(remaining)}`, errorPos, "header");
      case Status.AR_BAD_TERMINATOR: {
        const terminator = latin1Decode(readExact(this.source, position + 58, 2));
        return malformed(code, `terminator characters in archive member "${writeEscaped(terminator)}" not the correct "\`\\n" ` +
          `values for the archive member header ${named(remaining)}`, errorPos, "terminator");
      }
      case Status.AR_LEADING_SPACE:
        return malformed(code, `name contains a leading space for archive member header at offset ${position}`, errorPos, "name");
      case Status.AR_BAD_SIZE: {
        const raw = rtrimSpaces(latin1Decode(readExact(this.source, position + 48, 10)));
        return malformed(code, `characters in size field in archive member header are not all decimal numbers: '${raw}' ` +
          `for the archive member header at offset ${position}`, errorPos, "size");
      }
      case Status.AR_BAD_LONG_NAME: {
        const raw = rtrimSpaces(rawName(this.nameField(position), this.bsd()).substring(1));
        return malformed(code, `long name offset characters after the '/' are not all decimal numbers: '${writeEscaped(raw)}' ` +
          `for archive member header at offset ${position}`, errorPos, "name");
      }
      case Status.AR_BAD_BSD_NAME_LENGTH: {
        const raw = rtrimSpaces(rawName(this.nameField(position), this.bsd()).substring(3));
        return malformed(code, `long name length characters after the #1/ are not all decimal numbers: '${raw}' ` +
          `for archive member header at offset ${position}`, errorPos, "name");
      }
      case Status.AR_BSD_NAME_PAST_END: {
        const raw = rtrimSpaces(rawName(this.nameField(position), this.bsd()).substring(3));
        return malformed(code, `long name length: ${Number(raw)} extends past the end of the member or archive for archive ` +
          `member header at offset ${position}`, errorPos, "name");
      }
      case Status.AR_MEMBER_PAST_END: {
        // LLVM notices when stepping past this member, and names the member it steps from.
        const subject = this.nameForMessage(position, ARCHIVE_HEADER_SIZE + this.rawSizeAt(position));
        return malformed(code, `offset to next archive member past the end of the archive after member ` +
          `${subject ?? `at offset ${position}`}`, errorPos, "size");
      }
      default:
        return malformed(code, `malformed archive member header at offset ${position}`, errorPos);
    }
  }

  private rawSizeAt(position: number): number {
    return Number(rtrimSpaces(latin1Decode(readExact(this.source, position + 48, 10))));
  }

  /**
   * Walks members from `position` (member number `index`) with the engine, `limit` records at most;
   * throws OffloadKitError for a malformed header.
   */
  walk(position: number, index: number, limit: number, onMember: (member: RawMember) => void): { position: number; index: number } {
    const flags = (this.thinArchive ? AR_WALK_THIN : 0) | (this.bsd() ? AR_WALK_BSD : 0);
    const engine = this.engine;
    const w = this.window;
    const resultBase = RESULT >>> 3;
    let pos = position;
    let at = index;
    let left = limit;
    let stalled = false;
    while (left > 0 && pos < this.size) {
      if (!w.holds(pos, Math.min(ARCHIVE_HEADER_SIZE, this.size - pos))) w.load(pos);
      const status = engine.walkArchive(w.position, w.length, this.size, pos, at, flags, Math.min(left, AR_MAX_RECORDS));
      const f64 = engine.views().f64;
      const written = f64[resultBase + R_COUNT];
      for (let k = 0; k < written; k++) {
        const rec = (RECORDS >>> 3) + k * AR_RECORD_F64S;
        onMember({
          index: at + k,
          headerOffset: f64[rec],
          nameKind: f64[rec + 1],
          namePos: f64[rec + 2],
          nameValue: f64[rec + 3],
          dataOffset: f64[rec + 4],
          size: f64[rec + 5],
          thin: f64[rec + 7] !== 0,
        });
      }
      left -= written;
      const nextPos = f64[resultBase + R_NEXT_POS];
      const nextIndex = f64[resultBase + R_NEXT_INDEX];
      if (status === Status.DONE) return { position: nextPos, index: nextIndex };
      if (status === Status.MORE) {
        if (written === 0) {
          if (stalled) throw new OffloadKitError("INTERNAL", `archive walk made no progress at offset ${nextPos}`);
          stalled = true;
          w.load(nextPos);
        } else {
          stalled = false;
        }
        pos = nextPos;
        at = nextIndex;
        continue;
      }
      throw this.walkError(status, nextPos, f64[resultBase + R_ERROR_POS]);
    }
    return { position: pos, index: at };
  }

  /** One member at `position`, or undefined at the end of the archive. */
  one(position: number, index: number): RawMember | undefined {
    let found: RawMember | undefined;
    this.walk(position, index, 1, (m) => (found = m));
    return found;
  }
}

function nextPosition(member: RawMember, size: number): number {
  if (member.thin) return member.headerOffset + ARCHIVE_HEADER_SIZE;
  const end = member.dataOffset + member.size;
  return end % 2 !== 0 && end < size ? end + 1 : end;
}

/**
 * Reads an archive's member list the way `llvm::object::Archive` does: the constructor's rules for the
 * leading special members decide the kind, the symbol and string tables; the regular members follow,
 * with names resolved. Throws OffloadKitError with LLVM's message for anything malformed (LLVM itself
 * stops quietly at a malformed member after the first in some clients; see bundler.md §8).
 */
export function readArchive(input: ByteSource | Uint8Array, options: ArchiveReadOptions = {}): ArchiveIndex {
  const source = input instanceof Uint8Array ? bytesSource(input) : input;
  const engine = options.engine ?? defaultEngine();
  const head = new Window(engine, source);
  if (source.size > 0) head.load(0);
  const status = engine.archiveHead(head.length, source.size);
  const kindCode = engine.views().f64[(RESULT >>> 3) + R_AUX0];
  if (status === Status.NOT_FOUND) throw new OffloadKitError("NOT_AN_ARCHIVE", "file too small to be an archive");
  if (kindCode === AR_KIND_BIG) {
    throw new OffloadKitError("UNSUPPORTED_ARCHIVE", "AIX big archives (<bigaf>) are not supported");
  }
  const thin = kindCode === AR_KIND_THIN;
  const reader = new ArchiveReader(source, engine, thin);
  const size = source.size;
  if (size === 8) return { kind: "gnu", thin, members: [] };

  // The Archive constructor's rules for the leading special members (raw names read GNU-style).
  const range = (m: RawMember): ArchiveRange => ({ offset: m.dataOffset, size: m.size });
  const raw = (m: RawMember) => rawName(reader.nameField(m.headerOffset), false);
  const step = (m: RawMember) => constructorStep(() => reader.one(nextPosition(m, size), m.index + 1));
  let kind: ArchiveKind = "gnu";
  let symbolTable: ArchiveRange | undefined;
  let stringTable: ArchiveRange | undefined;
  let firstRegular: RawMember | undefined;

  const first = constructorStep(() => reader.one(8, 0))!;
  let current: RawMember | undefined = first;
  let name = raw(first);
  if (name === "__.SYMDEF" || name === "__.SYMDEF_64") {
    kind = name === "__.SYMDEF" ? "bsd" : "darwin64";
    reader.setKind(kind);
    symbolTable = range(first);
    firstRegular = step(first);
  } else if (name.startsWith("#1/")) {
    kind = "bsd";
    reader.setKind(kind);
    const resolved = reader.resolveName(first);
    firstRegular = first;
    if (resolved === "__.SYMDEF SORTED" || resolved === "__.SYMDEF" || resolved === "__.SYMDEF_64 SORTED" || resolved === "__.SYMDEF_64") {
      if (resolved.startsWith("__.SYMDEF_64")) kind = "darwin64";
      reader.setKind(kind);
      symbolTable = range(first);
      firstRegular = step(first);
    }
  } else {
    let has64 = false;
    if (name === "/" || name === "/SYM64/") {
      symbolTable = range(first);
      has64 = name === "/SYM64/";
      current = step(first);
      if (current !== undefined) name = raw(current);
    }
    if (current !== undefined) {
      if (name === "//") {
        kind = has64 ? "gnu64" : "gnu";
        stringTable = range(current);
        reader.setKind(kind, stringTable);
        firstRegular = step(current);
      } else if (name[0] !== "/") {
        kind = has64 ? "gnu64" : "gnu";
        firstRegular = current;
      } else if (name !== "/") {
        throw parseFailed(current.headerOffset);
      } else {
        kind = "coff";
        symbolTable = range(current);
        current = step(current);
        if (current !== undefined && raw(current) === "//") {
          stringTable = range(current);
          current = step(current);
        }
        if (current !== undefined && raw(current) === "/<ECSYMBOLS>/") current = step(current);
        firstRegular = current;
      }
    }
  }
  reader.setKind(kind, stringTable);

  const members: ArchiveMember[] = [];
  if (firstRegular !== undefined) {
    const add = (m: RawMember) => {
      members.push({ index: m.index, headerOffset: m.headerOffset, name: reader.resolveName(m), dataOffset: m.dataOffset, size: m.size, thin: m.thin });
    };
    add(firstRegular);
    reader.walk(nextPosition(firstRegular, size), firstRegular.index + 1, Number.MAX_SAFE_INTEGER, add);
  }
  return { kind, thin, symbolTable, stringTable, members };
}

/**
 * A step the Archive constructor takes: a '/'-name that is not a table is its parse error
 * (object_error::parse_failed), not getName's long-name error.
 */
function constructorStep(step: () => RawMember | undefined): RawMember | undefined {
  try {
    return step();
  } catch (e) {
    if (e instanceof OffloadKitError && e.code === "AR_BAD_LONG_NAME") throw parseFailed(e.offset ?? 0);
    throw e;
  }
}

/** A member's bytes (in-memory archives; Node code copies ranges instead). */
export function memberData(archive: Uint8Array, member: ArchiveMember): Uint8Array {
  if (member.thin) throw new OffloadKitError("THIN_MEMBER", `member '${member.name}' of a thin archive is stored outside the archive`);
  return archive.subarray(member.dataOffset, member.dataOffset + member.size);
}

// ---------------------------------------------------------------------------------------------
// Writing

/** Archive symbol names packed as the symbol table stores them: NUL-terminated, back to back. */
export interface PackedSymbols {
  readonly count: number;
  readonly bytes: Uint8Array;
}

export function packSymbols(names: readonly string[]): PackedSymbols {
  return { count: names.length, bytes: latin1Encode(names.map((n) => `${n}\0`).join("")) };
}

export function unpackSymbols(symbols: PackedSymbols): string[] {
  return symbols.count === 0 ? [] : latin1Decode(symbols.bytes).split("\0").slice(0, symbols.count);
}

export interface NewArchiveMember {
  /** The member name (byte string), stored as-is. */
  readonly name: string;
  readonly size: number;
  /**
   * The member's archive symbols in order (global, defined, not format-specific), or null when the
   * member is not a symbolic file at all (it then does not count towards "has an object").
   */
  readonly symbols: readonly string[] | PackedSymbols | null;
}

export interface ArchiveLayout {
  /** Magic, symbol table and `//` table: everything before the first member header. */
  readonly head: Uint8Array;
  /** Each member's header. */
  readonly headers: readonly Uint8Array[];
  /** Each member's trailing padding ('\n' bytes: 0 or 1). */
  readonly padding: readonly number[];
  /** Total archive size. */
  readonly size: number;
  /** "gnu", or "gnu64" when the offsets needed 64 bits. */
  readonly kind: "gnu" | "gnu64";
}

export interface ArchiveWriteOptions {
  /** Member-offset size at which the symbol table switches to /SYM64/ (LLVM's SYM64_THRESHOLD; default 2^32). */
  readonly sym64Threshold?: number;
}

function padded(text: string, width: number): string {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}

/** `printRestOfMemberHeader` with LLVM's deterministic values: time, uid, gid 0. */
function restOfHeader(perms: string, size: number): string {
  return padded("0", 12) + padded("0", 6) + padded("0", 6) + padded(perms, 8) + padded(String(size), 10) + "`\n";
}

function useStringTable(name: string): boolean {
  return name.length >= 16 || name.includes("/");
}

function setOffset(view: DataView, at: number, value: number, bytes: 4 | 8): void {
  if (bytes === 4) view.setUint32(at, value);
  else view.setBigUint64(at, BigInt(value));
}

/**
 * Lays out an archive as `writeArchive(..., NormalSymtab, K_GNU, Deterministic=true, Thin=false)`
 * writes it: the bytes before the first member, each member header and padding. Member data is the
 * caller's to copy (streaming), in order, after its header.
 */
export function layoutArchive(members: readonly NewArchiveMember[], options: ArchiveWriteOptions = {}): ArchiveLayout {
  const threshold = options.sym64Threshold ?? 2 ** 32;
  let stringTable = "";
  const namePositions = new Map<string, number>();
  const headers: Uint8Array[] = [];
  const padding: number[] = [];
  const symbolic: { member: number; symbols: PackedSymbols }[] = [];
  let hasObject = false;
  let numSyms = 0;
  let namesSize = 0;

  members.forEach((member, i) => {
    if (member.size > ARCHIVE_MAX_MEMBER_SIZE) {
      throw new OffloadKitError("AR_MEMBER_TOO_LARGE", `File ${member.name} exceeds size limit`);
    }
    let nameField: string;
    if (!useStringTable(member.name)) {
      nameField = padded(`${member.name}/`, 16);
    } else {
      let at = namePositions.get(member.name);
      if (at === undefined) {
        at = stringTable.length;
        namePositions.set(member.name, at);
        stringTable += `${member.name}/\n`;
      }
      nameField = `/${padded(String(at), 15)}`;
    }
    headers.push(latin1Encode(nameField + restOfHeader("644", member.size)));
    padding.push(member.size % 2);
    if (member.symbols !== null) {
      hasObject = true;
      const packed = "bytes" in member.symbols ? member.symbols : packSymbols(member.symbols as readonly string[]);
      if (packed.count > 0) symbolic.push({ member: i, symbols: packed });
      numSyms += packed.count;
      namesSize += packed.bytes.length;
    }
  });

  // A symbolic member without symbols still gets a (nearly) empty table, for old Solaris tools.
  const emptyNames = hasObject && namesSize === 0;
  if (emptyNames) namesSize = 3;

  let stringMember = "";
  if (stringTable.length > 0) {
    const pad = stringTable.length % 2;
    stringMember = `${padded("//", 48)}${padded(String(stringTable.length + pad), 10)}\`\n${stringTable}${pad ? "\n" : ""}`;
  }

  const memberSizes = members.map((m, i) => ARCHIVE_HEADER_SIZE + m.size + padding[i]);
  let lastMemberHeaderOffset = 0;
  let offset = 0;
  for (const size of memberSizes) {
    lastMemberHeaderOffset = offset;
    offset += size;
  }
  const symtabSize = (offsetSize: number) => {
    const size = offsetSize + numSyms * offsetSize + namesSize;
    return size + (size % 2);
  };
  let kind: "gnu" | "gnu64" = "gnu";
  let headersSize = 8 + ARCHIVE_HEADER_SIZE + symtabSize(4) + stringMember.length;
  if (headersSize + lastMemberHeaderOffset >= threshold) {
    kind = "gnu64";
    headersSize = 8 + ARCHIVE_HEADER_SIZE + symtabSize(8) + stringMember.length;
  }

  const offsetSize = kind === "gnu64" ? 8 : 4;
  const writeSymtab = namesSize > 0;
  const tableSize = writeSymtab ? symtabSize(offsetSize) : 0;
  const headLength = 8 + (writeSymtab ? ARCHIVE_HEADER_SIZE + tableSize : 0) + stringMember.length;
  const head = new Uint8Array(headLength);
  const view = new DataView(head.buffer);
  head.set(latin1Encode(ARCHIVE_MAGIC), 0);
  let at = 8;
  if (writeSymtab) {
    head.set(latin1Encode(padded(kind === "gnu64" ? "/SYM64/" : "/", 16) + restOfHeader("0", tableSize)), at);
    at += ARCHIVE_HEADER_SIZE;
    setOffset(view, at, numSyms, offsetSize);
    at += offsetSize;
    const memberOffsets: number[] = [];
    let position = headersSize;
    for (const size of memberSizes) {
      memberOffsets.push(position);
      position += size;
    }
    for (const { member, symbols } of symbolic) {
      for (let k = 0; k < symbols.count; k++) {
        setOffset(view, at, memberOffsets[member], offsetSize);
        at += offsetSize;
      }
    }
    if (emptyNames) at += 3;
    for (const { symbols } of symbolic) {
      head.set(symbols.bytes, at);
      at += symbols.bytes.length;
    }
    at += tableSize - (offsetSize + numSyms * offsetSize + namesSize);
  }
  head.set(latin1Encode(stringMember), at);

  const size = headLength + memberSizes.reduce((a, b) => a + b, 0);
  return { head, headers, padding, size, kind };
}

/** Writes a whole archive in memory (the layout plus each member's data). */
export function writeArchive(
  members: readonly { name: string; data: Uint8Array; symbols: readonly string[] | PackedSymbols | null }[],
  options: ArchiveWriteOptions = {},
): Uint8Array {
  const layout = layoutArchive(members.map((m) => ({ name: m.name, size: m.data.length, symbols: m.symbols })), options);
  const out = new Uint8Array(layout.size);
  out.set(layout.head, 0);
  let at = layout.head.length;
  members.forEach((member, i) => {
    out.set(layout.headers[i], at);
    at += ARCHIVE_HEADER_SIZE;
    out.set(member.data, at);
    at += member.data.length;
    if (layout.padding[i]) out[at++] = 0x0a;
  });
  return out;
}
