/**
 * The object model llvm-objcopy builds from an ELF file (llvm/lib/ObjCopy/ELF/ELFObject.cpp, ELFBuilder), as far as
 * the offload bundler's edits need it: the header, every section with its original header fields and bytes, and
 * the symbol table's entries (name, section, raw bytes). Sections keep their input index order; `originalOffset`
 * is what the writer sorts by when it lays the file out again.
 *
 * Every offset and size is checked against the input before use, and counts are bounded by the input's length,
 * so nothing here allocates from an untrusted size. Errors are OffloadKitError OBJCOPY_MALFORMED with the offset
 * of the offending field; llvm-objcopy's wording where it has a check of its own.
 */
import { OffloadKitError } from "../engine/errors.js";
import { SHT_NOBITS, SHT_STRTAB, SHT_SYMTAB } from "../formats/elf.js";

export { SHT_NOBITS, SHT_STRTAB, SHT_SYMTAB };
export const SHT_PROGBITS = 1;
export const SHT_RELA = 4;
export const SHT_REL = 9;
export const SHT_GROUP = 17;
export const SHT_SYMTAB_SHNDX = 18;
export const SHF_ALLOC = 0x2n;
export const SHN_LORESERVE = 0xff00;
export const SHN_ABS = 0xfff1;
export const SHN_COMMON = 0xfff2;
export const SHN_XINDEX = 0xffff;
const EM_MIPS = 8;
const EM_HEXAGON = 164;
const EM_AMDGPU = 224;

export interface ElfLayout {
  readonly is64: boolean;
  readonly little: boolean;
  readonly ehdrSize: number;
  readonly shdrSize: number;
  readonly symSize: number;
}

export interface ObjSection {
  name: string;
  readonly type: number;
  flags: bigint;
  readonly addr: bigint;
  readonly size: number;
  /** Input section index this one links to (0: none); remapped by the writer. */
  readonly link: number;
  readonly info: number;
  readonly align: bigint;
  readonly entsize: bigint;
  /** Where its bytes were in the input: the layout keeps that order. Added sections: +Infinity. */
  readonly originalOffset: number;
  /** Index in the input (0 for added sections). */
  readonly inputIndex: number;
  /** The bytes (empty for SHT_NOBITS). */
  readonly data: Uint8Array;
}

export interface ObjSymbol {
  /** Index in the input's symbol table. */
  readonly index: number;
  readonly name: string;
  /** Input section index when defined in a section; otherwise undefined and `reserved` holds st_shndx. */
  readonly section: number | undefined;
  readonly reserved: number;
  readonly local: boolean;
  /** The entry as read, for the fields copied unchanged (info, other, value, size). */
  readonly raw: Uint8Array;
}

export interface ElfObject {
  readonly layout: ElfLayout;
  readonly ident: Uint8Array;
  readonly type: number;
  readonly machine: number;
  /** e_version, copied as it is (llvm-objcopy does). */
  readonly version: number;
  readonly entry: bigint;
  readonly flags: number;
  readonly sections: ObjSection[];
  /** Input index of the section names table (e_shstrndx). */
  readonly sectionNamesIndex: number;
  /** Input index of the symbol table, if any, and its symbols (index 0 is the null symbol). */
  readonly symtabIndex: number | undefined;
  readonly symbols: ObjSymbol[];
}

function malformed(message: string, offset: number): never {
  throw new OffloadKitError("OBJCOPY_MALFORMED", message, { offset });
}

export function unsupported(message: string, offset?: number): never {
  throw new OffloadKitError("OBJCOPY_UNSUPPORTED", message, offset === undefined ? {} : { offset });
}

/** A reader of one byte order and class over the whole input. */
class Fields {
  readonly view: DataView;
  constructor(readonly bytes: Uint8Array, readonly layout: ElfLayout) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  u8(at: number): number {
    return this.view.getUint8(at);
  }
  u16(at: number): number {
    return this.view.getUint16(at, this.layout.little);
  }
  u32(at: number): number {
    return this.view.getUint32(at, this.layout.little);
  }
  /** A word: 8 bytes in ELF64, 4 in ELF32. */
  word(at: number): bigint {
    return this.layout.is64 ? this.view.getBigUint64(at, this.layout.little) : BigInt(this.view.getUint32(at, this.layout.little));
  }
}

/** A bigint offset or size that must fit in the input. */
function within(value: bigint, limit: number, what: string, at: number): number {
  if (value > BigInt(limit)) malformed(`${what} (${value}) is past the end of the file (${limit} bytes)`, at);
  return Number(value);
}

function cString(bytes: Uint8Array, table: { offset: number; size: number }, index: number, what: string, at: number): string {
  if (index >= table.size) malformed(`${what}: name offset ${index} is past the end of its string table (${table.size} bytes)`, at);
  const start = table.offset + index;
  const end = bytes.indexOf(0, start);
  if (end < 0 || end >= table.offset + table.size) malformed(`${what}: name at ${index} is not NUL-terminated inside its string table`, at);
  let name = "";
  for (let i = start; i < end; i++) name += String.fromCharCode(bytes[i]!);
  return name;
}

export function readElfObject(bytes: Uint8Array): ElfObject {
  if (bytes.length < 16 || bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46)
    malformed("not an ELF file (no \\x7fELF magic)", 0);
  const cls = bytes[4];
  const data = bytes[5];
  if (cls !== 1 && cls !== 2) malformed(`invalid ELF class ${cls}`, 4);
  if (data !== 1 && data !== 2) malformed(`invalid ELF data encoding ${data}`, 5);
  const is64 = cls === 2;
  const layout: ElfLayout = { is64, little: data === 1, ehdrSize: is64 ? 64 : 52, shdrSize: is64 ? 64 : 40, symSize: is64 ? 24 : 16 };
  if (bytes.length < layout.ehdrSize) malformed(`the ELF header needs ${layout.ehdrSize} bytes, the file has ${bytes.length}`, 0);
  const f = new Fields(bytes, layout);
  const type = f.u16(16);
  const machine = f.u16(18);
  const entry = f.word(24);
  const phoffAt = is64 ? 32 : 28;
  const shoffAt = is64 ? 40 : 32;
  const flags = f.u32(is64 ? 48 : 36);
  const phnum = f.u16(is64 ? 56 : 44);
  const shentsize = f.u16(is64 ? 58 : 46);
  let shnum = f.u16(is64 ? 60 : 48);
  let shstrndx = f.u16(is64 ? 62 : 50);
  if (phnum !== 0 || f.word(phoffAt) !== 0n)
    unsupported("only objects without program headers (relocatable objects) are supported: llvm-objcopy lays segments out by rules offload-kit does not reproduce", phoffAt);
  const shoff = within(f.word(shoffAt), bytes.length, "e_shoff", shoffAt);
  if (shoff === 0) malformed("the object has no section header table", shoffAt);
  if (shentsize !== layout.shdrSize) malformed(`e_shentsize is ${shentsize}, expected ${layout.shdrSize}`, is64 ? 58 : 46);
  if (shoff + layout.shdrSize > bytes.length) malformed("the section header table is past the end of the file", shoffAt);
  const header0 = shoff;
  if (shnum === 0) {
    const count = f.word(header0 + (is64 ? 32 : 20));
    if (count > BigInt(Math.floor((bytes.length - shoff) / layout.shdrSize)))
      malformed(`section count ${count} (in section 0's sh_size) does not fit in the file`, header0 + (is64 ? 32 : 20));
    shnum = Number(count);
  }
  if (shnum === 0) malformed("the object has no sections", shoffAt);
  if (shoff + shnum * layout.shdrSize > bytes.length)
    malformed(`${shnum} section headers at ${shoff} run past the end of the file (${bytes.length} bytes)`, shoffAt);
  if (shstrndx === SHN_XINDEX) shstrndx = f.u32(header0 + (is64 ? 40 : 24));
  if (shstrndx === 0 || shstrndx >= shnum) malformed(`e_shstrndx ${shstrndx} is not a section index (${shnum} sections)`, is64 ? 62 : 50);

  interface RawHeader { name: number; type: number; flags: bigint; addr: bigint; offset: number; size: number; link: number; info: number; align: bigint; entsize: bigint; at: number }
  const headers: RawHeader[] = [];
  for (let i = 0; i < shnum; i++) {
    const at = shoff + i * layout.shdrSize;
    const type = f.u32(at + 4);
    const w = is64 ? 8 : 4;
    const offsetAt = at + 8 + 2 * w;
    const sizeAt = offsetAt + w;
    const rawOffset = f.word(offsetAt);
    const rawSize = f.word(sizeAt);
    let offset = 0;
    let size = 0;
    if (type === SHT_NOBITS) {
      // No bytes: only the order matters, and a size that still fits a JavaScript number.
      offset = rawOffset > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(rawOffset);
      if (rawSize > BigInt(Number.MAX_SAFE_INTEGER)) unsupported(`section ${i}: SHT_NOBITS size ${rawSize} is too large`, sizeAt);
      size = Number(rawSize);
    } else if (i !== 0) {
      offset = within(rawOffset, bytes.length, `section ${i}: sh_offset`, offsetAt);
      size = within(rawSize, bytes.length - offset, `section ${i}: sh_offset + sh_size`, sizeAt);
    }
    headers.push({
      name: f.u32(at), type, flags: f.word(at + 8), addr: f.word(at + 8 + w), offset, size,
      link: f.u32(sizeAt + w), info: f.u32(sizeAt + w + 4), align: f.word(sizeAt + w + 8), entsize: f.word(sizeAt + 2 * w + 8), at,
    });
  }
  const names = headers[shstrndx]!;
  if (names.type !== SHT_STRTAB) malformed(`e_shstrndx ${shstrndx} is not a string table (type ${names.type})`, names.at + 4);
  const sections: ObjSection[] = [];
  for (let i = 1; i < shnum; i++) {
    const h = headers[i]!;
    const name = cString(bytes, names, h.name, `section ${i}`, h.at);
    if (h.link >= shnum) malformed(`link field value '${h.link}' in section '${name}' is invalid`, h.at + (is64 ? 40 : 24));
    sections.push({
      name, type: h.type, flags: h.flags, addr: h.addr, size: h.size, link: h.link, info: h.info, align: h.align, entsize: h.entsize,
      originalOffset: h.offset, inputIndex: i, data: h.type === SHT_NOBITS ? new Uint8Array(0) : bytes.subarray(h.offset, h.offset + h.size),
    });
  }

  // The symbol table (relocatable objects have at most one).
  const symtabs = sections.filter((s) => s.type === SHT_SYMTAB);
  if (symtabs.length > 1) unsupported("more than one SHT_SYMTAB section", headers[symtabs[1]!.inputIndex]!.at);
  const symbols: ObjSymbol[] = [];
  const symtab = symtabs[0];
  if (symtab !== undefined) {
    const h = headers[symtab.inputIndex]!;
    if (symtab.entsize !== BigInt(layout.symSize)) malformed(`symbol table sh_entsize is ${symtab.entsize}, expected ${layout.symSize}`, h.at);
    if (symtab.size % layout.symSize !== 0) malformed(`symbol table size ${symtab.size} is not a multiple of ${layout.symSize}`, h.at);
    const strtab = headers[symtab.link];
    if (symtab.link === 0 || strtab === undefined || strtab.type !== SHT_STRTAB)
      malformed(`symbol table links to section ${symtab.link}, which is not a string table`, h.at);
    const shndxTable = sections.find((s) => s.type === SHT_SYMTAB_SHNDX && s.link === symtab.inputIndex);
    const count = symtab.size / layout.symSize;
    if (shndxTable !== undefined && shndxTable.size < count * 4)
      malformed(`SHT_SYMTAB_SHNDX section has ${shndxTable.size / 4} entries for ${count} symbols`, headers[shndxTable.inputIndex]!.at);
    for (let k = 0; k < count; k++) {
      const at = h.offset + k * layout.symSize;
      const nameIndex = f.u32(at);
      const info = is64 ? f.u8(at + 4) : f.u8(at + 12);
      const shndx = is64 ? f.u16(at + 6) : f.u16(at + 14);
      const name = cString(bytes, strtab, nameIndex, `symbol ${k}`, at);
      let section: number | undefined;
      let reserved = 0;
      if (shndx === SHN_XINDEX) {
        if (shndxTable === undefined) malformed(`symbol '${name}' has SHN_XINDEX but there is no SHT_SYMTAB_SHNDX section`, at);
        section = f.u32(headers[shndxTable.inputIndex]!.offset + 4 * k);
        if (section === 0 || section >= shnum) malformed(`symbol '${name}' has extended index ${section}, not a section`, at);
      } else if (shndx >= SHN_LORESERVE) {
        if (!validReserved(shndx, machine))
          malformed(`symbol '${name}' has unsupported value greater than or equal to SHN_LORESERVE: ${shndx}`, at);
        reserved = shndx;
      } else if (shndx !== 0) {
        if (shndx >= shnum) malformed(`symbol '${name}' is defined in section ${shndx}, past the last one (${shnum - 1})`, at);
        section = shndx;
      }
      symbols.push({ index: k, name, section, reserved, local: info >> 4 === 0, raw: bytes.subarray(at, at + layout.symSize) });
    }
  }

  return {
    layout, ident: bytes.subarray(0, 16), type, machine, version: f.u32(20), entry, flags, sections,
    sectionNamesIndex: shstrndx, symtabIndex: symtab?.inputIndex, symbols,
  };
}

/** Reserved st_shndx values llvm-objcopy keeps (ELFObject.cpp, isValidReservedSectionIndex). */
function validReserved(index: number, machine: number): boolean {
  if (index === SHN_ABS || index === SHN_COMMON) return true;
  if (machine === EM_AMDGPU) return index === 0xff00; // SHN_AMDGPU_LDS
  if (machine === EM_MIPS) return index >= 0xff00 && index <= 0xff04; // SHN_MIPS_ACOMMON .. SUNDEFINED
  if (machine === EM_HEXAGON) return index >= 0xff00 && index <= 0xff04; // SHN_HEXAGON_SCOMMON .. SCOMMON_8
  return false;
}
