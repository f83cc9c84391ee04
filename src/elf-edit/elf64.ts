/**
 * The linked-ELF view the `.hip_fatbin` surgery needs: ELF64 little-endian executables and shared
 * libraries for x86-64 and AArch64 (what ROCm ships), with their program headers, section headers and
 * section names, read through positioned reads (never the whole file). Anything else is refused with
 * the field and offset that rules it out: the edit rewrites segment tables, and a layout it has not
 * been checked against (32-bit, big-endian, another machine, relocatable objects) is not guessed at.
 *
 * Follows the System V gABI (ELF64) and elf.h.
 *
 * | at | size | field                                | | at | size | field (program header, 56 bytes) |
 * |----|------|--------------------------------------|-|----|------|----------------------------------|
 * | 4  | 1    | EI_CLASS (2 = 64-bit)                | | 0  | 4    | p_type                           |
 * | 5  | 1    | EI_DATA (1 = little-endian)          | | 4  | 4    | p_flags                          |
 * | 16 | 2    | e_type (2 EXEC, 3 DYN)               | | 8  | 8    | p_offset                         |
 * | 18 | 2    | e_machine (62 x86-64, 183 AArch64)   | | 16 | 8    | p_vaddr                          |
 * | 32 | 8    | e_phoff                              | | 24 | 8    | p_paddr                          |
 * | 40 | 8    | e_shoff                              | | 32 | 8    | p_filesz                         |
 * | 54 | 2    | e_phentsize (56)                     | | 40 | 8    | p_memsz                          |
 * | 56 | 2    | e_phnum                              | | 48 | 8    | p_align                          |
 * | 58 | 2    | e_shentsize (64)                     | |    |      |                                  |
 * | 60 | 2    | e_shnum                              | |    |      |                                  |
 * | 62 | 2    | e_shstrndx                           | |    |      |                                  |
 *
 * Section header (64 bytes): name u32 @0, type u32 @4, flags u64 @8, addr u64 @16, offset u64 @24,
 * size u64 @32, link u32 @40, info u32 @44, addralign u64 @48, entsize u64 @56.
 */
import { OffloadKitError } from "../engine/errors.js";
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { latin1Decode } from "../formats/bytes.js";

export const EHDR_SIZE = 64;
export const PHDR_SIZE = 56;
export const SHDR_SIZE = 64;

export const ET_EXEC = 2;
export const ET_DYN = 3;
export const EM_X86_64 = 62;
export const EM_AARCH64 = 183;

export const PT_NULL = 0;
export const PT_LOAD = 1;
export const PT_INTERP = 3;
export const PT_PHDR = 6;
export const PF_R = 4;

export const SHT_SYMTAB = 2;
export const SHT_RELA = 4;
export const SHT_NOTE = 7;
export const SHT_NOBITS = 8;
export const SHT_REL = 9;
export const SHT_DYNSYM = 11;
export const SHT_RELR = 19;
export const SHF_ALLOC = 2;

export interface ProgramHeader {
  type: number;
  flags: number;
  offset: number;
  vaddr: number;
  paddr: number;
  filesz: number;
  memsz: number;
  align: number;
}

export interface SectionHeader {
  readonly index: number;
  readonly name: string;
  readonly type: number;
  readonly flags: number;
  readonly addr: number;
  readonly offset: number;
  readonly size: number;
  readonly link: number;
  readonly info: number;
  readonly addralign: number;
  readonly entsize: number;
}

export interface LinkedElf {
  readonly source: ByteSource;
  readonly type: number;
  readonly machine: number;
  readonly phoff: number;
  readonly shoff: number;
  readonly shstrndx: number;
  readonly programHeaders: readonly ProgramHeader[];
  readonly sections: readonly SectionHeader[];
}

export function elfEditError(code: string, message: string, offset?: number, field?: string): OffloadKitError {
  return new OffloadKitError(code, message, { offset, field });
}

export function hex(value: number): string {
  return `0x${value.toString(16)}`;
}

/**
 * A u64 field as a Number; values past 2^53 cannot be file offsets or addresses we can edit. `base` is
 * where the view starts in the file, so the error names the field's file offset.
 */
export function u64(view: DataView, at: number, base = 0): number {
  const value = view.getBigUint64(at, true);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw elfEditError("ELF_VALUE_TOO_LARGE", `64-bit value 0x${value.toString(16)} at file offset ${base + at} is past 2^53`, base + at);
  }
  return Number(value);
}

export function setU64(view: DataView, at: number, value: number): void {
  view.setBigUint64(at, BigInt(value), true);
}

function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The program header at `at` of a view that starts at file offset `base`. */
export function parseProgramHeader(view: DataView, at: number, base = 0): ProgramHeader {
  return {
    type: view.getUint32(at, true),
    flags: view.getUint32(at + 4, true),
    offset: u64(view, at + 8, base),
    vaddr: u64(view, at + 16, base),
    paddr: u64(view, at + 24, base),
    filesz: u64(view, at + 32, base),
    memsz: u64(view, at + 40, base),
    align: u64(view, at + 48, base),
  };
}

export function writeProgramHeaders(headers: readonly ProgramHeader[]): Uint8Array {
  const out = new Uint8Array(headers.length * PHDR_SIZE);
  const view = viewOf(out);
  headers.forEach((h, i) => {
    const at = i * PHDR_SIZE;
    view.setUint32(at, h.type, true);
    view.setUint32(at + 4, h.flags, true);
    setU64(view, at + 8, h.offset);
    setU64(view, at + 16, h.vaddr);
    setU64(view, at + 24, h.paddr);
    setU64(view, at + 32, h.filesz);
    setU64(view, at + 40, h.memsz);
    setU64(view, at + 48, h.align);
  });
  return out;
}

/**
 * Opens a linked ELF64 little-endian x86-64/AArch64 executable or shared library; refuses anything
 * else with the field that rules it out. Program headers and section headers must lie in the file.
 */
export function openLinkedElf(source: ByteSource): LinkedElf {
  const size = source.size;
  if (size < 16) throw elfEditError("NOT_ELF", `the ${size}-byte input is too small to be an ELF file`, 0, "e_ident");
  const ident = readExact(source, 0, 16);
  if (ident[0] !== 0x7f || ident[1] !== 0x45 || ident[2] !== 0x4c || ident[3] !== 0x46) {
    throw elfEditError("NOT_ELF", "the input is not an ELF file (no \\x7fELF magic at offset 0)", 0, "e_ident");
  }
  if (ident[4] !== 2) {
    throw elfEditError("ELF_UNSUPPORTED", `unsupported ELF class ${ident[4]} at offset 4 (EI_CLASS): only ELF64 is edited`, 4, "EI_CLASS");
  }
  if (ident[5] !== 1) {
    throw elfEditError("ELF_UNSUPPORTED", `unsupported ELF data encoding ${ident[5]} at offset 5 (EI_DATA): only little-endian is edited`, 5, "EI_DATA");
  }
  if (size < EHDR_SIZE) throw elfEditError("ELF_TRUNCATED", `the ${size}-byte input is smaller than an ELF64 header (64)`, 0, "e_ident");
  const view = viewOf(readExact(source, 0, EHDR_SIZE));
  const type = view.getUint16(16, true);
  const machine = view.getUint16(18, true);
  if (type !== ET_EXEC && type !== ET_DYN) {
    throw elfEditError("ELF_UNSUPPORTED", `e_type ${type} at offset 16: only linked executables (2) and shared libraries (3) are edited`, 16, "e_type");
  }
  if (machine !== EM_X86_64 && machine !== EM_AARCH64) {
    throw elfEditError("ELF_UNSUPPORTED", `e_machine ${machine} at offset 18: only x86-64 (62) and AArch64 (183) are edited`, 18, "e_machine");
  }
  const phoff = u64(view, 32);
  const shoff = u64(view, 40);
  const phentsize = view.getUint16(54, true);
  const phnum = view.getUint16(56, true);
  const shentsize = view.getUint16(58, true);
  let shnum = view.getUint16(60, true);
  let shstrndx = view.getUint16(62, true);
  if (phoff === 0 || phnum === 0) throw elfEditError("ELF_NO_PROGRAM_HEADERS", "the ELF file has no program headers (e_phoff/e_phnum are 0)", 32, "e_phoff");
  if (phentsize !== PHDR_SIZE) throw elfEditError("ELF_MALFORMED", `e_phentsize is ${phentsize}, not 56`, 54, "e_phentsize");
  if (phnum === 0xffff) throw elfEditError("ELF_UNSUPPORTED", "e_phnum is PN_XNUM (65535): extended program header counts are not edited", 56, "e_phnum");
  if (phoff + phnum * PHDR_SIZE > size) {
    throw elfEditError("ELF_TRUNCATED", `the program header table (${phnum} at ${hex(phoff)}) runs past the end of the ${size}-byte file`, 32, "e_phoff");
  }
  if (shoff === 0) throw elfEditError("ELF_NO_SECTIONS", "the ELF file has no section header table (e_shoff is 0): .hip_fatbin cannot be found", 40, "e_shoff");
  if (shentsize !== SHDR_SIZE) throw elfEditError("ELF_MALFORMED", `e_shentsize is ${shentsize}, not 64`, 58, "e_shentsize");
  if (shoff + SHDR_SIZE > size) {
    throw elfEditError("ELF_TRUNCATED", `the section header table at ${hex(shoff)} runs past the end of the ${size}-byte file`, 40, "e_shoff");
  }
  const first = viewOf(readExact(source, shoff, SHDR_SIZE));
  if (shnum === 0) shnum = u64(first, 32, shoff);
  if (shstrndx === 0xffff) shstrndx = first.getUint32(40, true);
  if (shoff + shnum * SHDR_SIZE > size) {
    throw elfEditError("ELF_TRUNCATED", `the section header table (${shnum} at ${hex(shoff)}) runs past the end of the ${size}-byte file`, 40, "e_shoff");
  }
  const phView = viewOf(readExact(source, phoff, phnum * PHDR_SIZE));
  const programHeaders: ProgramHeader[] = [];
  for (let i = 0; i < phnum; i++) programHeaders.push(parseProgramHeader(phView, i * PHDR_SIZE, phoff));
  const shView = viewOf(readExact(source, shoff, shnum * SHDR_SIZE));
  const raw = [];
  for (let i = 0; i < shnum; i++) {
    const at = i * SHDR_SIZE;
    raw.push({
      index: i,
      nameOffset: shView.getUint32(at, true),
      type: shView.getUint32(at + 4, true),
      flags: u64(shView, at + 8, shoff),
      addr: u64(shView, at + 16, shoff),
      offset: u64(shView, at + 24, shoff),
      size: u64(shView, at + 32, shoff),
      link: shView.getUint32(at + 40, true),
      info: shView.getUint32(at + 44, true),
      addralign: u64(shView, at + 48, shoff),
      entsize: u64(shView, at + 56, shoff),
    });
  }
  if (shstrndx >= shnum) throw elfEditError("ELF_MALFORMED", `e_shstrndx ${shstrndx} is not a section (${shnum} sections)`, 62, "e_shstrndx");
  const strtab = raw[shstrndx];
  if (strtab.offset + strtab.size > size) {
    throw elfEditError("ELF_TRUNCATED", `the section name table runs past the end of the ${size}-byte file`, shoff + shstrndx * SHDR_SIZE + 24, "sh_offset");
  }
  const names = readExact(source, strtab.offset, strtab.size);
  const sections: SectionHeader[] = raw.map(({ nameOffset, ...s }) => {
    let end = nameOffset;
    while (end < names.length && names[end] !== 0) end++;
    return { ...s, name: latin1Decode(names.subarray(nameOffset, end)) };
  });
  return { source, type, machine, phoff, shoff, shstrndx, programHeaders, sections };
}

/** Reads `count` bytes of a section that must lie inside the file. */
export function sectionBytes(elf: LinkedElf, section: SectionHeader): Uint8Array {
  if (section.offset + section.size > elf.source.size) {
    throw elfEditError(
      "ELF_TRUNCATED",
      `section ${section.name} [${section.index}] (${hex(section.offset)}+${hex(section.size)}) runs past the end of the ${elf.source.size}-byte file`,
      elf.shoff + section.index * SHDR_SIZE + 24,
      "sh_offset",
    );
  }
  return readExact(elf.source, section.offset, section.size);
}

/** The file offset holding virtual address `vaddr`, through the PT_LOAD that maps it from the file. */
export function fileOffsetOf(elf: LinkedElf, vaddr: number, length = 1): number | undefined {
  for (const p of elf.programHeaders) {
    if (p.type === PT_LOAD && vaddr >= p.vaddr && vaddr + length <= p.vaddr + p.filesz) return p.offset + (vaddr - p.vaddr);
  }
  return undefined;
}
