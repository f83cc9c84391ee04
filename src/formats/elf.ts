/**
 * ELF, as far as the offload tools need it: the section table (bundles stored as
 * `__CLANG_OFFLOAD_BUNDLE__<id>` sections, `.llvm.lto`), and the symbol table an archive writer
 * indexes. 32- and 64-bit, either byte order. Reads only the header, the section table and the
 * sections asked for, through positioned reads (never the whole file).
 *
 * Follows llvm/include/llvm/Object/ELF.h (`ELFFile::create`, `sections`, `getSectionName`,
 * `getStringTable`, `getSectionContentsAsArray`), llvm/include/llvm/Object/ELFObjectFile.h
 * (`getSymbolFlags`) and clang/lib/Driver/OffloadBundler.cpp (ObjectFileHandler); spec bundler.md §7.
 * Error texts are LLVM's for the checks it makes.
 *
 * | at (64-bit) | at (32-bit) | size (64/32) | field                                          |
 * |-------------|-------------|--------------|------------------------------------------------|
 * | 0           | 0           | 16           | e_ident: "\x7fELF", class (1/2), data (1 LE, 2 BE) |
 * | 16          | 16          | 2            | e_type                                         |
 * | 18          | 18          | 2            | e_machine                                      |
 * | 40          | 32          | 8 / 4        | e_shoff                                        |
 * | 58          | 46          | 2            | e_shentsize (64 / 40)                          |
 * | 60          | 48          | 2            | e_shnum (0: count in section 0's sh_size)      |
 * | 62          | 50          | 2            | e_shstrndx (0xffff: in section 0's sh_link)    |
 *
 * Section header (64-bit: name u32, type u32, flags u64, addr u64, offset u64, size u64, link u32,
 * info u32, addralign u64, entsize u64; 32-bit: all u32). Symbol (64-bit, 24 bytes: name u32, info u8,
 * other u8, shndx u16, value u64, size u64; 32-bit, 16 bytes: name, value, size u32, info, other u8,
 * shndx u16).
 */
import { OffloadKitError } from "../engine/errors.js";
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { latin1Decode } from "./bytes.js";

export const ELF_BUNDLE_SECTION_PREFIX = "__CLANG_OFFLOAD_BUNDLE__";

export const SHT_NOBITS = 8;
export const SHT_SYMTAB = 2;
export const SHT_STRTAB = 3;
export const ET_REL = 1;
export const EM_ARM = 40;
export const EM_AARCH64 = 183;
export const EM_RISCV = 243;
export const EM_CSKY = 252;

const SHN_UNDEF = 0;
const SHN_XINDEX = 0xffff;
const STB_LOCAL = 0;
const STT_SECTION = 3;
const STT_FILE = 4;

export interface ElfHeader {
  readonly is64: boolean;
  readonly littleEndian: boolean;
  readonly type: number;
  readonly machine: number;
  readonly shoff: number;
  readonly shentsize: number;
  readonly shnum: number;
  readonly shstrndx: number;
}

export interface ElfSection {
  readonly index: number;
  readonly nameOffset: number;
  readonly type: number;
  /** sh_addr: where the section is loaded (0 in objects). */
  readonly addr: number;
  readonly offset: number;
  readonly size: number;
  readonly link: number;
  /** sh_info: for a relocation section, the section it applies to. */
  readonly info: number;
  readonly entsize: number;
}

/** An ELF file LLVM can open (`ELFObjectFile::create`): header and section table. */
export interface ElfFile {
  readonly source: ByteSource;
  readonly header: ElfHeader;
  readonly sections: readonly ElfSection[];
}

function elfError(message: string, offset?: number, field?: string): OffloadKitError {
  return new OffloadKitError("ELF_MALFORMED", message, { offset, field });
}

function hex(value: number): string {
  return value.toString(16);
}

/** `identify_magic` says ELF: the magic and at least 18 bytes. */
export function isElf(head: Uint8Array, size: number = head.length): boolean {
  return size >= 18 && head.length >= 4 && head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c && head[3] === 0x46;
}

class Reader {
  private readonly view: DataView;
  constructor(readonly bytes: Uint8Array, readonly littleEndian: boolean) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  u8(at: number): number {
    return this.bytes[at];
  }
  u16(at: number): number {
    return this.view.getUint16(at, this.littleEndian);
  }
  u32(at: number): number {
    return this.view.getUint32(at, this.littleEndian);
  }
  u64(at: number): number {
    const lo = this.view.getUint32(at + (this.littleEndian ? 0 : 4), this.littleEndian);
    const hi = this.view.getUint32(at + (this.littleEndian ? 4 : 0), this.littleEndian);
    return hi * 4294967296 + lo;
  }
  word(at: number, is64: boolean): number {
    return is64 ? this.u64(at) : this.u32(at);
  }
}

function sectionIndexText(index: number): string {
  return `[index ${index}]`;
}

/**
 * Opens an ELF file the way `createBinary` does for the bundler: the header must fit and the section
 * table must lie inside the file. Throws OffloadKitError (code ELF_MALFORMED) with LLVM's message.
 */
export function openElf(source: ByteSource): ElfFile {
  const size = source.size;
  const ident = readExact(source, 0, Math.min(size, 16));
  if (ident.length < 6) throw elfError(`invalid buffer: the size (${size}) is smaller than an ELF header (52)`);
  const elfClass = ident[4];
  const data = ident[5];
  if (elfClass !== 1 && elfClass !== 2) throw elfError("Invalid ELF class", 4, "e_ident");
  if (data !== 1 && data !== 2) throw elfError("Invalid ELF data", 5, "e_ident");
  const is64 = elfClass === 2;
  const headerSize = is64 ? 64 : 52;
  if (size < headerSize) throw elfError(`invalid buffer: the size (${size}) is smaller than an ELF header (${headerSize})`);
  const r = new Reader(readExact(source, 0, headerSize), data === 1);
  const header: ElfHeader = {
    is64,
    littleEndian: data === 1,
    type: r.u16(16),
    machine: r.u16(18),
    shoff: r.word(is64 ? 40 : 32, is64),
    shentsize: r.u16(is64 ? 58 : 46),
    shnum: r.u16(is64 ? 60 : 48),
    shstrndx: r.u16(is64 ? 62 : 50),
  };
  return { source, header, sections: readSectionTable(source, header) };
}

function readSectionTable(source: ByteSource, header: ElfHeader): ElfSection[] {
  const shoff = header.shoff;
  if (shoff === 0) return [];
  const entrySize = header.is64 ? 64 : 40;
  if (header.shentsize !== entrySize) throw elfError(`invalid e_shentsize in ELF header: ${header.shentsize}`, header.is64 ? 58 : 46, "e_shentsize");
  const fileSize = source.size;
  if (shoff + entrySize > fileSize) {
    throw elfError(`section header table goes past the end of the file: e_shoff = 0x${hex(shoff)}`, header.is64 ? 40 : 32, "e_shoff");
  }
  // No alignment rule for e_shoff: rocm-kpack's ELF surgery leaves it unaligned (13786 in one of its outputs), and
  // LLVM 19's clang-offload-bundler --list and llvm-objdump read such files (measured on test/fixtures/kpack).
  let count = header.shnum;
  if (count === 0) {
    const first = parseSection(new Reader(readExact(source, shoff, entrySize), header.littleEndian), 0, header.is64, 0);
    count = first.size;
  }
  if (shoff + count * entrySize > fileSize) throw elfError("section table goes past the end of file", shoff, "e_shnum");
  const table = new Reader(readExact(source, shoff, count * entrySize), header.littleEndian);
  const sections: ElfSection[] = [];
  for (let i = 0; i < count; i++) sections.push(parseSection(table, i * entrySize, header.is64, i));
  return sections;
}

function parseSection(r: Reader, at: number, is64: boolean, index: number): ElfSection {
  return is64
    ? { index, nameOffset: r.u32(at), type: r.u32(at + 4), addr: r.u64(at + 16), offset: r.u64(at + 24), size: r.u64(at + 32), link: r.u32(at + 40), info: r.u32(at + 44), entsize: r.u64(at + 56) }
    : { index, nameOffset: r.u32(at), type: r.u32(at + 4), addr: r.u32(at + 12), offset: r.u32(at + 16), size: r.u32(at + 20), link: r.u32(at + 24), info: r.u32(at + 28), entsize: r.u32(at + 36) };
}

/** `checkSectionOffsets` + `getSectionContents`: a section's byte range in the file. */
export function sectionRange(elf: ElfFile, section: ElfSection): { offset: number; size: number } {
  if (section.type === SHT_NOBITS) return { offset: 0, size: 0 };
  const fileSize = elf.source.size;
  if (section.offset + section.size > fileSize) {
    throw elfError(`section ${sectionIndexText(section.index)} has a sh_offset (0x${hex(section.offset)}) + sh_size ` +
      `(0x${hex(section.size)}) that is greater than the file size (0x${hex(fileSize)})`, section.offset, "sh_offset");
  }
  return { offset: section.offset, size: section.size };
}

function sectionBytes(elf: ElfFile, section: ElfSection): Uint8Array {
  const range = sectionRange(elf, section);
  return readExact(elf.source, range.offset, range.size);
}

/** `getStringTable`: a SHT_STRTAB section, non-empty and NUL-terminated. */
function stringTable(elf: ElfFile, section: ElfSection): string {
  if (section.type !== SHT_STRTAB) {
    throw elfError(`invalid sh_type for string table section ${sectionIndexText(section.index)}: expected SHT_STRTAB, but got ` +
      `${section.type}`, undefined, "sh_type");
  }
  const text = latin1Decode(sectionBytes(elf, section));
  if (text.length === 0) throw elfError(`SHT_STRTAB string table section ${sectionIndexText(section.index)} is empty`);
  if (!text.endsWith("\0")) throw elfError(`SHT_STRTAB string table section ${sectionIndexText(section.index)} is non-null terminated`);
  return text;
}

function cString(table: string, offset: number): string {
  const end = table.indexOf("\0", offset);
  return table.substring(offset, end === -1 ? table.length : end);
}

/** Section names, in section order (`getSectionName` against the section-name string table). */
export function sectionNames(elf: ElfFile): string[] {
  const { sections, header } = elf;
  if (sections.length === 0) return [];
  let index = header.shstrndx;
  if (index === SHN_XINDEX) index = sections[0].link;
  if (index === 0) {
    return sections.map((s) => {
      if (s.nameOffset === 0) return "";
      throw elfError(`a section ${sectionIndexText(s.index)} has a non-null sh_name but there is no section name string table`);
    });
  }
  if (index >= sections.length) {
    throw elfError(`section header string table index ${index} does not exist or is out of range`, undefined, "e_shstrndx");
  }
  const table = stringTable(elf, sections[index]);
  return sections.map((s) => {
    if (s.nameOffset >= table.length) {
      throw elfError(`a section ${sectionIndexText(s.index)} has an invalid sh_name (0x${hex(s.nameOffset)}) offset which goes past ` +
        "the end of the section name string table");
    }
    return cString(table, s.nameOffset);
  });
}

export interface ObjectBundleEntry {
  /** Entry ID: the section name after the prefix. */
  readonly id: string;
  /** Payload range in the file. */
  readonly offset: number;
  readonly size: number;
}

/**
 * The bundle entries of a fat object (ObjectFileHandler::ReadBundleStart): sections whose names start
 * with `__CLANG_OFFLOAD_BUNDLE__`, in section order. A payload of one 0x00 byte is the host entry.
 */
export function listElfBundleEntries(elf: ElfFile): ObjectBundleEntry[] {
  const names = sectionNames(elf);
  const entries: ObjectBundleEntry[] = [];
  elf.sections.forEach((section, i) => {
    if (!names[i].startsWith(ELF_BUNDLE_SECTION_PREFIX)) return;
    const range = sectionRange(elf, section);
    entries.push({ id: names[i].substring(ELF_BUNDLE_SECTION_PREFIX.length), offset: range.offset, size: range.size });
  });
  return entries;
}

/** The `.llvm.lto` section of a relocatable object (`IRObjectFile::findBitcodeInObject`), if it holds more than one byte. */
export function findEmbeddedBitcode(elf: ElfFile): { offset: number; size: number } | undefined {
  const names = sectionNames(elf);
  for (let i = 0; i < elf.sections.length; i++) {
    if (names[i] !== ".llvm.lto") continue;
    const range = sectionRange(elf, elf.sections[i]);
    return range.size <= 1 ? undefined : range;
  }
  return undefined;
}

/**
 * The names an archive symbol table lists for this ELF file, in symbol-table order: the first
 * SHT_SYMTAB's symbols that are global, defined, and not format-specific (the null symbol, section
 * and file symbols, ARM/AArch64/RISC-V mapping symbols).
 */
export function elfArchiveSymbols(elf: ElfFile): string[] {
  const symtab = elf.sections.find((s) => s.type === SHT_SYMTAB);
  if (symtab === undefined) return [];
  const { header } = elf;
  const entrySize = header.is64 ? 24 : 16;
  if (symtab.entsize !== entrySize) {
    throw elfError(`section ${sectionIndexText(symtab.index)} has invalid sh_entsize: expected ${entrySize}, but got ${symtab.entsize}`);
  }
  if (symtab.size % entrySize !== 0) {
    throw elfError(`section ${sectionIndexText(symtab.index)} has an invalid sh_size (${symtab.size}) which is not a multiple of its ` +
      `sh_entsize (${symtab.entsize})`);
  }
  const bytes = sectionBytes(elf, symtab);
  if (symtab.offset % (header.is64 ? 8 : 4) !== 0) throw elfError("unaligned data");
  if (symtab.link >= elf.sections.length) {
    throw elfError(`invalid section index: ${symtab.link}`);
  }
  const strings = stringTable(elf, elf.sections[symtab.link]);
  const r = new Reader(bytes, header.littleEndian);
  const names: string[] = [];
  for (let i = 0; i < bytes.length / entrySize; i++) {
    const at = i * entrySize;
    const nameOffset = r.u32(at);
    const info = header.is64 ? r.u8(at + 4) : r.u8(at + 12);
    const shndx = header.is64 ? r.u16(at + 6) : r.u16(at + 14);
    const binding = info >>> 4;
    const type = info & 0xf;
    if (i === 0 || binding === STB_LOCAL || type === STT_SECTION || type === STT_FILE || shndx === SHN_UNDEF) continue;
    if (nameOffset >= strings.length) {
      throw elfError(`st_name (0x${hex(nameOffset)}) is past the end of the string table of size 0x${hex(strings.length)}`);
    }
    const name = cString(strings, nameOffset);
    if (isMappingSymbol(header.machine, name)) continue;
    names.push(name);
  }
  return names;
}

/** Mapping symbols and the like, which `getSymbolFlags` marks format-specific per machine. */
function isMappingSymbol(machine: number, name: string): boolean {
  if (machine === EM_AARCH64) return name.startsWith("$d") || name.startsWith("$x");
  if (machine === EM_ARM) return name === "" || name.startsWith("$d") || name.startsWith("$t") || name.startsWith("$a");
  if (machine === EM_CSKY) return name.startsWith("$d") || name.startsWith("$t");
  if (machine === EM_RISCV) return name === ".L0 " || name.startsWith("$d") || name.startsWith("$x");
  return false;
}
