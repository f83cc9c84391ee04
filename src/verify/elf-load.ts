/**
 * Would the dynamic loader take this ELF file? The checks the kernel's binfmt_elf and glibc's ld.so
 * (`_dl_map_object_from_fd`, `_dl_map_segments`, `elf_get_dynamic_info`, the relocation loop) rely on,
 * done from the bytes alone, for ELF64 little-endian files. This is the independent half of every linked
 * ELF edit: it shares nothing with the writer (src/elf-edit/), whose layout it judges, and reads only
 * headers and tables through bounded positioned reads (never a payload: a 1.3 GB library costs a few
 * hundred KiB of reads, most of them its relocation table).
 *
 * Follows the System V gABI (ELF64: "ELF Header", "Program Header", "Sections", "Dynamic Section") and
 * elf.h. Findings are worded like LLVM's Object library errors (llvm/Object/ELF.h: "program headers are
 * longer than binary of size N: e_phoff = 0x..., e_phnum = N, e_phentsize = N").
 *
 * | order | what | why |
 * |-------|------|-----|
 * | 1 | ELF header: version, e_ehsize, entry sizes | everything below is located through it |
 * | 2 | program header table inside the file | ld.so preads it: "cannot read file data" |
 * | 3 | every PT_LOAD inside the file, p_filesz <= p_memsz, p_offset = p_vaddr (mod p_align), ascending and disjoint | mmap of each segment (`_dl_map_segments`), "ELF load command address/offset not properly aligned" |
 * | 4 | the table mapped by a PT_LOAD (and PT_PHDR equal to it) | AT_PHDR / `l_phdr` point into the mapped image |
 * | 5 | PT_DYNAMIC, PT_INTERP, PT_NOTE, PT_TLS, PT_GNU_EH_FRAME, PT_GNU_RELRO inside a PT_LOAD at its displacement | ld.so reads them at load base + p_vaddr |
 * | 6 | section header table and sections inside the file; allocated sections where their PT_LOAD maps them | tools (strip, objcopy, debuggers) and our own readers |
 * | 7 | dynamic table addresses (and sizes) inside loaded segments | ld.so dereferences them at load base + value |
 * | 8 | relocation targets in a writable or RELRO segment (unless DT_TEXTREL) | a write to read-only memory faults |
 *
 * Relocatable objects (ET_REL) get steps 1 and 6 only; other types, 1, 2 and 6.
 */
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { Findings, hex } from "./findings.js";
import type { Finding } from "./findings.js";

const EHDR_SIZE = 64;
const PHENT_SIZE = 56;
const SHENT_SIZE = 64;
/** Names, dynamic tables and relocations are read in pieces of this size at most. */
const CHUNK = 1 << 20;
/** A section-name table larger than this is not read (names are then `[N]`). */
const MAX_NAMES = 16 << 20;

const ET_REL = 1;
const ET_EXEC = 2;
const ET_DYN = 3;

export const PT_LOAD = 1;
const PT_DYNAMIC = 2;
const PT_INTERP = 3;
const PT_NOTE = 4;
const PT_PHDR = 6;
const PT_TLS = 7;
const PT_GNU_EH_FRAME = 0x6474e550;
const PT_GNU_RELRO = 0x6474e552;
const PF_W = 2;
const PN_XNUM = 0xffff;
const SHN_XINDEX = 0xffff;

export const SHT_NOBITS = 8;
export const SHF_ALLOC = 2;
const SHF_TLS = 0x400;

const SEGMENT_NAMES: ReadonlyMap<number, string> = new Map([
  [PT_DYNAMIC, "PT_DYNAMIC"], [PT_INTERP, "PT_INTERP"], [PT_NOTE, "PT_NOTE"], [PT_PHDR, "PT_PHDR"], [PT_TLS, "PT_TLS"],
  [PT_GNU_EH_FRAME, "PT_GNU_EH_FRAME"], [PT_GNU_RELRO, "PT_GNU_RELRO"],
]);

export const DT_NULL = 0;
const DT_PLTRELSZ = 2;
const DT_PLTGOT = 3;
const DT_HASH = 4;
const DT_STRTAB = 5;
export const DT_SYMTAB = 6;
export const DT_RELA = 7;
export const DT_RELASZ = 8;
const DT_RELAENT = 9;
const DT_STRSZ = 10;
const DT_INIT = 12;
const DT_FINI = 13;
export const DT_REL = 17;
export const DT_RELSZ = 18;
const DT_RELENT = 19;
const DT_PLTREL = 20;
const DT_TEXTREL = 22;
export const DT_JMPREL = 23;
const DT_INIT_ARRAY = 25;
const DT_FINI_ARRAY = 26;
const DT_INIT_ARRAYSZ = 27;
const DT_FINI_ARRAYSZ = 28;
const DT_FLAGS = 30;
const DT_PREINIT_ARRAY = 32;
const DT_PREINIT_ARRAYSZ = 33;
export const DT_RELRSZ = 35;
export const DT_RELR = 36;
const DT_GNU_HASH = 0x6ffffef5;
const DT_VERSYM = 0x6ffffff0;
const DT_VERDEF = 0x6ffffffc;
const DT_VERNEED = 0x6ffffffe;
const DF_TEXTREL = 4;

/** Dynamic tags whose value is an address ld.so dereferences, with the tag giving the table's size (if any). */
const ADDRESS_TAGS: ReadonlyMap<number, { name: string; size?: number; sizeName?: string }> = new Map([
  [DT_PLTGOT, { name: "DT_PLTGOT" }],
  [DT_HASH, { name: "DT_HASH" }],
  [DT_STRTAB, { name: "DT_STRTAB", size: DT_STRSZ, sizeName: "DT_STRSZ" }],
  [DT_SYMTAB, { name: "DT_SYMTAB" }],
  [DT_RELA, { name: "DT_RELA", size: DT_RELASZ, sizeName: "DT_RELASZ" }],
  [DT_INIT, { name: "DT_INIT" }],
  [DT_FINI, { name: "DT_FINI" }],
  [DT_REL, { name: "DT_REL", size: DT_RELSZ, sizeName: "DT_RELSZ" }],
  [DT_JMPREL, { name: "DT_JMPREL", size: DT_PLTRELSZ, sizeName: "DT_PLTRELSZ" }],
  [DT_INIT_ARRAY, { name: "DT_INIT_ARRAY", size: DT_INIT_ARRAYSZ, sizeName: "DT_INIT_ARRAYSZ" }],
  [DT_FINI_ARRAY, { name: "DT_FINI_ARRAY", size: DT_FINI_ARRAYSZ, sizeName: "DT_FINI_ARRAYSZ" }],
  [DT_PREINIT_ARRAY, { name: "DT_PREINIT_ARRAY", size: DT_PREINIT_ARRAYSZ, sizeName: "DT_PREINIT_ARRAYSZ" }],
  [DT_RELR, { name: "DT_RELR", size: DT_RELRSZ, sizeName: "DT_RELRSZ" }],
  [DT_GNU_HASH, { name: "DT_GNU_HASH" }],
  [DT_VERSYM, { name: "DT_VERSYM" }],
  [DT_VERDEF, { name: "DT_VERDEF" }],
  [DT_VERNEED, { name: "DT_VERNEED" }],
]);

export interface Segment {
  readonly index: number;
  readonly type: number;
  readonly flags: number;
  readonly offset: number;
  readonly vaddr: number;
  readonly filesz: number;
  readonly memsz: number;
  readonly align: number;
  /** File offset of this program header. */
  readonly at: number;
}

export interface Section {
  readonly index: number;
  readonly name: string;
  readonly type: number;
  readonly flags: number;
  readonly addr: number;
  readonly offset: number;
  readonly size: number;
  readonly link: number;
  /** File offset of this section header. */
  readonly at: number;
}

export interface DynamicEntry {
  readonly tag: number;
  readonly value: number;
  /** File offset of the entry. */
  readonly at: number;
}

/** What the checks read, for the fat-binary checks (./fat-binaries.ts) to reuse. */
export interface LoadView {
  readonly source: ByteSource;
  readonly type: number;
  readonly machine: number;
  readonly segments: readonly Segment[];
  readonly loads: readonly Segment[];
  readonly sections: readonly Section[];
  readonly dynamic: readonly DynamicEntry[];
}

export type ElfCheck =
  | { readonly kind: "checked"; readonly findings: Finding[]; readonly view: LoadView }
  /** Not ELF64 little-endian: nothing checked (`reason` says why). */
  | { readonly kind: "unsupported"; readonly reason: string };

function u64(view: DataView, at: number): number {
  return Number(view.getBigUint64(at, true));
}

function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The PT_LOAD whose memory holds `address` (the one ld.so would find), if any. */
export function loadAt(loads: readonly Segment[], address: number): Segment | undefined {
  return loads.find((l) => address >= l.vaddr && address < l.vaddr + Math.max(l.memsz, 1));
}

/**
 * The file offset holding `length` bytes at `address` as loaded: inside one PT_LOAD's file-backed part.
 * undefined when the bytes are not in the file as mapped.
 */
export function fileOffsetAt(loads: readonly Segment[], address: number, length: number): number | undefined {
  const load = loadAt(loads, address);
  if (load === undefined || address + length > load.vaddr + load.filesz) return undefined;
  return load.offset + (address - load.vaddr);
}

function segmentName(type: number): string {
  return SEGMENT_NAMES.get(type) ?? (type === PT_LOAD ? "PT_LOAD" : `segment type ${hex(type)}`);
}

/** Reads `length` bytes at `offset` of a range already checked to be inside the file, in pieces. */
function forEachPiece(source: ByteSource, offset: number, length: number, unit: number, use: (bytes: Uint8Array, at: number) => void): void {
  const step = Math.max(unit, Math.floor(CHUNK / unit) * unit);
  for (let at = 0; at + unit <= length; at += step) {
    const n = Math.min(step, Math.floor((length - at) / unit) * unit);
    use(readExact(source, offset + at, n), offset + at);
  }
}

/** Checks `source` as an ELF file (see the module comment for what and in which order). */
export function checkElfLoad(source: ByteSource): ElfCheck {
  const size = source.size;
  if (size < 16) return { kind: "unsupported", reason: "too small to be an ELF file" };
  const ident = readExact(source, 0, 16);
  if (ident[0] !== 0x7f || ident[1] !== 0x45 || ident[2] !== 0x4c || ident[3] !== 0x46) return { kind: "unsupported", reason: "not an ELF file" };
  if (ident[4] !== 2 || ident[5] !== 1) return { kind: "unsupported", reason: `ELF class ${ident[4]}, data encoding ${ident[5]}: only ELF64 little-endian files are checked` };
  const out = new Findings();
  const empty: LoadView = { source, type: 0, machine: 0, segments: [], loads: [], sections: [], dynamic: [] };
  if (size < EHDR_SIZE) {
    out.add("ELF_TRUNCATED", "ELF header", "e_ident", 0, `the file is ${size} bytes, smaller than the 64-byte ELF64 header`);
    return { kind: "checked", findings: out.done(), view: empty };
  }
  const h = viewOf(readExact(source, 0, EHDR_SIZE));
  const type = h.getUint16(16, true);
  const machine = h.getUint16(18, true);
  const phoff = u64(h, 32);
  const shoff = u64(h, 40);
  const ehsize = h.getUint16(52, true);
  const phentsize = h.getUint16(54, true);
  let phnum = h.getUint16(56, true);
  const shentsize = h.getUint16(58, true);
  let shnum = h.getUint16(60, true);
  let shstrndx = h.getUint16(62, true);
  const linked = type === ET_EXEC || type === ET_DYN;

  if (ident[6] !== 1 || h.getUint32(20, true) !== 1) {
    out.add("BAD_ELF_HEADER", "ELF header", "e_version", 20, `invalid ELF version: EI_VERSION = ${ident[6]}, e_version = ${h.getUint32(20, true)} (expected 1)`);
  }
  if (ehsize !== EHDR_SIZE) out.add("BAD_ELF_HEADER", "ELF header", "e_ehsize", 52, `invalid e_ehsize: ${ehsize} (expected 64)`);

  // Section 0 holds the real counts when they do not fit the header (gABI "Extended Section Numbering").
  let section0: DataView | undefined;
  const shdrsFit = shentsize === SHENT_SIZE && shoff > 0 && shoff + SHENT_SIZE <= size;
  if (shdrsFit) section0 = viewOf(readExact(source, shoff, SHENT_SIZE));
  if (shnum === 0 && section0 !== undefined) shnum = u64(section0, 32);
  if (shstrndx === SHN_XINDEX && section0 !== undefined) shstrndx = section0.getUint32(40, true);
  if (phnum === PN_XNUM && section0 !== undefined) phnum = section0.getUint32(44, true);

  // 2. The program header table.
  let segments: Segment[] = [];
  if (phnum > 0 && phentsize !== PHENT_SIZE) {
    out.add("BAD_ELF_HEADER", "ELF header", "e_phentsize", 54, `invalid e_phentsize: ${phentsize} (expected 56)`);
  } else if (phnum > 0) {
    if (phoff + phnum * PHENT_SIZE > size) {
      out.add("PHDRS_PAST_EOF", "program header table", "e_phoff", 32,
        `program headers are longer than binary of size ${size}: e_phoff = ${hex(phoff)}, e_phnum = ${phnum}, e_phentsize = ${phentsize}`);
    } else {
      const table = viewOf(readExact(source, phoff, phnum * PHENT_SIZE));
      segments = Array.from({ length: phnum }, (_, i): Segment => {
        const p = i * PHENT_SIZE;
        return {
          index: i, type: table.getUint32(p, true), flags: table.getUint32(p + 4, true), offset: u64(table, p + 8), vaddr: u64(table, p + 16),
          filesz: u64(table, p + 32), memsz: u64(table, p + 40), align: u64(table, p + 48), at: phoff + p,
        };
      });
    }
  } else if (linked) {
    out.add("NO_PROGRAM_HEADERS", "program header table", "e_phnum", 56, `an ${type === ET_EXEC ? "executable" : "shared object"} has no program headers (e_phnum = 0)`);
  }
  const loads = segments.filter((s) => s.type === PT_LOAD);
  if (linked && segments.length > 0) {
    checkLoads(loads, size, out);
    checkPhdrMapping(segments, loads, phoff, phnum, out);
    checkCovered(segments, loads, size, out);
  }

  // 6. Sections.
  const sections = readSections(source, shoff, shnum, shentsize, shstrndx, out);
  if (linked && loads.length > 0) checkAllocated(sections, loads, out);

  // 7, 8. The dynamic table and relocations.
  let dynamic: DynamicEntry[] = [];
  if (linked) {
    const dyn = segments.find((s) => s.type === PT_DYNAMIC);
    if (dyn !== undefined && dyn.offset + dyn.filesz <= size) {
      dynamic = readDynamic(source, dyn);
      checkDynamic(dynamic, loads, out);
      checkRelocations(source, dynamic, segments, loads, out);
    }
  }
  return { kind: "checked", findings: out.done(), view: { source, type, machine, segments, loads, sections, dynamic } };
}

/** 3. Each PT_LOAD as mmap needs it, and their order. */
function checkLoads(loads: readonly Segment[], size: number, out: Findings): void {
  if (loads.length === 0) out.add("NO_LOAD", "PT_LOAD", "p_type", 0, "no PT_LOAD segment: nothing would be mapped");
  let previous: Segment | undefined;
  for (const l of loads) {
    const where = `PT_LOAD (program header ${l.index})`;
    if (l.offset + l.filesz > size) {
      out.add("LOAD_PAST_EOF", "PT_LOAD", "p_filesz", l.at + 32,
        `${where}: p_offset (${hex(l.offset)}) + p_filesz (${hex(l.filesz)}) is greater than the file size (${hex(size)})`);
    }
    if (l.filesz > l.memsz) {
      out.add("LOAD_FILESZ_GT_MEMSZ", "PT_LOAD", "p_memsz", l.at + 40, `${where}: p_filesz (${hex(l.filesz)}) is greater than p_memsz (${hex(l.memsz)})`);
    }
    if (l.align > 1 && (l.align & (l.align - 1)) !== 0 && Number.isSafeInteger(l.align)) {
      out.add("LOAD_BAD_ALIGN", "PT_LOAD", "p_align", l.at + 48, `${where}: p_align (${hex(l.align)}) is not a power of 2`);
    } else if (l.align > 1 && (BigInt(l.offset) - BigInt(l.vaddr)) % BigInt(l.align) !== 0n) {
      out.add("LOAD_NOT_CONGRUENT", "PT_LOAD", "p_offset", l.at + 8,
        `${where}: p_offset (${hex(l.offset)}) and p_vaddr (${hex(l.vaddr)}) are not congruent modulo p_align (${hex(l.align)})`);
    }
    if (previous !== undefined) {
      if (l.vaddr < previous.vaddr) {
        out.add("LOADS_OUT_OF_ORDER", "PT_LOAD", "p_vaddr", l.at + 16,
          `${where}: p_vaddr (${hex(l.vaddr)}) is below the previous PT_LOAD's (${hex(previous.vaddr)}); PT_LOAD segments must be sorted by p_vaddr`);
      } else if (l.vaddr < previous.vaddr + previous.memsz) {
        out.add("LOADS_OVERLAP", "PT_LOAD", "p_vaddr", l.at + 16,
          `${where}: [${hex(l.vaddr)}, ${hex(l.vaddr + l.memsz)}) overlaps the previous PT_LOAD's [${hex(previous.vaddr)}, ${hex(previous.vaddr + previous.memsz)})`);
      }
    }
    previous = l;
  }
}

/** The PT_LOAD whose memory holds [vaddr, vaddr + memsz) and whose file part holds [offset, offset + filesz) at the same displacement. */
function coverOf(loads: readonly Segment[], s: { offset: number; vaddr: number; filesz: number }): { load?: Segment; problem?: "unmapped" | "beyond" | "displaced" } {
  const load = loadAt(loads, s.vaddr);
  if (load === undefined) return { problem: "unmapped" };
  if (s.vaddr + s.filesz > load.vaddr + load.filesz) return { load, problem: "beyond" };
  if (s.offset - load.offset !== s.vaddr - load.vaddr) return { load, problem: "displaced" };
  return { load };
}

function coverText(what: string, s: { offset: number; vaddr: number; filesz: number }, cover: ReturnType<typeof coverOf>): string {
  const l = cover.load;
  const range = `[${hex(s.vaddr)}, ${hex(s.vaddr + s.filesz)})`;
  if (cover.problem === "unmapped" || l === undefined) return `${what} at ${range} is not inside any PT_LOAD segment`;
  const load = `PT_LOAD (program header ${l.index}: p_offset ${hex(l.offset)}, p_vaddr ${hex(l.vaddr)}, p_filesz ${hex(l.filesz)})`;
  if (cover.problem === "beyond") return `${what} at ${range} runs past the file-backed end (${hex(l.vaddr + l.filesz)}) of ${load}`;
  return `${what}: offset ${hex(s.offset)} would be loaded at ${hex(l.vaddr + (s.offset - l.offset))}, not at its address ${hex(s.vaddr)}, by ${load}`;
}

/** 4. The program header table where the loader finds it in memory. */
function checkPhdrMapping(segments: readonly Segment[], loads: readonly Segment[], phoff: number, phnum: number, out: Findings): void {
  const length = phnum * PHENT_SIZE;
  const phdr = segments.find((s) => s.type === PT_PHDR);
  const mapping = loads.find((l) => phoff >= l.offset && phoff + length <= l.offset + l.filesz);
  if (mapping === undefined) {
    out.add("PHDRS_NOT_LOADED", "program header table", "e_phoff", 32,
      `the program header table (e_phoff = ${hex(phoff)}, ${length} bytes) is not inside any PT_LOAD segment's file range, so it is not in memory (AT_PHDR, dl_iterate_phdr)`);
  }
  if (phdr === undefined) return;
  const firstLoad = loads[0];
  if (firstLoad !== undefined && phdr.index > firstLoad.index) {
    out.add("PHDR_AFTER_LOAD", "PT_PHDR", "p_type", phdr.at, "PT_PHDR comes after a PT_LOAD; it must precede every loadable segment");
  }
  if (phdr.offset !== phoff || phdr.filesz !== length) {
    out.add("PHDR_MISMATCH", "PT_PHDR", "p_offset", phdr.at + 8,
      `PT_PHDR (p_offset ${hex(phdr.offset)}, p_filesz ${hex(phdr.filesz)}) does not describe the program header table (e_phoff ${hex(phoff)}, ${hex(length)} bytes)`);
  }
  const cover = coverOf(loads, phdr);
  if (cover.problem !== undefined) out.add(cover.problem === "displaced" ? "SEGMENT_DISPLACED" : "SEGMENT_NOT_LOADED", "PT_PHDR", "p_vaddr", phdr.at + 16, coverText("PT_PHDR", phdr, cover));
}

/** 5. The segments ld.so and the kernel read in memory at base + p_vaddr. */
function checkCovered(segments: readonly Segment[], loads: readonly Segment[], size: number, out: Findings): void {
  for (const s of segments) {
    if (s.type === PT_LOAD || s.type === PT_PHDR || !SEGMENT_NAMES.has(s.type)) continue;
    const name = segmentName(s.type);
    if (s.offset + s.filesz > size) {
      out.add("SEGMENT_PAST_EOF", name, "p_filesz", s.at + 32, `${name}: p_offset (${hex(s.offset)}) + p_filesz (${hex(s.filesz)}) is greater than the file size (${hex(size)})`);
      continue;
    }
    // Nothing of it comes from the file (a PT_TLS of .tbss only): there is nothing to find mapped.
    if (s.filesz === 0) continue;
    const cover = coverOf(loads, s);
    if (cover.problem !== undefined) out.add(cover.problem === "displaced" ? "SEGMENT_DISPLACED" : "SEGMENT_NOT_LOADED", name, "p_vaddr", s.at + 16, coverText(name, s, cover));
  }
}

function readSections(source: ByteSource, shoff: number, shnum: number, shentsize: number, shstrndx: number, out: Findings): Section[] {
  if (shoff === 0 && shnum === 0) return [];
  if (shentsize !== SHENT_SIZE) {
    out.add("BAD_ELF_HEADER", "ELF header", "e_shentsize", 58, `invalid e_shentsize: ${shentsize} (expected 64)`);
    return [];
  }
  if (shoff + shnum * SHENT_SIZE > source.size) {
    out.add("SHDRS_PAST_EOF", "section header table", "e_shoff", 40,
      `section header table goes past the end of the file: e_shoff = ${hex(shoff)}, e_shnum = ${shnum}, file size = ${hex(source.size)}`);
    return [];
  }
  const table = viewOf(readExact(source, shoff, shnum * SHENT_SIZE));
  const raw = Array.from({ length: shnum }, (_, i) => {
    const p = i * SHENT_SIZE;
    return {
      index: i, nameOffset: table.getUint32(p, true), type: table.getUint32(p + 4, true), flags: u64(table, p + 8), addr: u64(table, p + 16),
      offset: u64(table, p + 24), size: u64(table, p + 32), link: table.getUint32(p + 40, true), at: shoff + p,
    };
  });
  let names: Uint8Array | undefined;
  if (shnum > 0 && shstrndx >= shnum) {
    out.add("BAD_SHSTRNDX", "ELF header", "e_shstrndx", 62, `invalid e_shstrndx: ${shstrndx} (the file has ${shnum} sections)`);
  } else if (shnum > 0 && shstrndx !== 0) {
    const s = raw[shstrndx];
    if (s.offset + s.size <= source.size && s.type !== SHT_NOBITS && s.size <= MAX_NAMES) names = readExact(source, s.offset, s.size);
  }
  const nameOf = (at: number, index: number): string => {
    if (names === undefined || at >= names.length) return `[${index}]`;
    let end = at;
    while (end < names.length && names[end] !== 0) end++;
    let text = "";
    for (let i = at; i < end; i++) text += String.fromCharCode(names[i]);
    return text;
  };
  const sections = raw.map((s): Section => ({ index: s.index, name: nameOf(s.nameOffset, s.index), type: s.type, flags: s.flags, addr: s.addr, offset: s.offset, size: s.size, link: s.link, at: s.at }));
  for (const s of sections.slice(1)) {
    const subject = `section ${s.name}`;
    if (s.type !== SHT_NOBITS && s.size > 0 && s.offset + s.size > source.size) {
      out.add("SECTION_PAST_EOF", subject, "sh_offset", s.at + 24,
        `section [index ${s.index}] ${s.name}: sh_offset (${hex(s.offset)}) + sh_size (${hex(s.size)}) is greater than the file size (${hex(source.size)})`);
    }
    if (s.link >= shnum) out.add("BAD_SH_LINK", subject, "sh_link", s.at + 40, `section [index ${s.index}] ${s.name}: invalid sh_link ${s.link} (the file has ${shnum} sections)`);
  }
  return sections;
}

/** 6. Allocated sections where the PT_LOAD that maps their address puts them. */
function checkAllocated(sections: readonly Section[], loads: readonly Segment[], out: Findings): void {
  for (const s of sections) {
    if ((s.flags & SHF_ALLOC) === 0 || s.size === 0) continue;
    const subject = `section ${s.name}`;
    const what = `section [index ${s.index}] ${s.name}`;
    if (s.type === SHT_NOBITS) {
      // .tbss takes no address space of its own: its address overlaps the sections after it.
      if ((s.flags & SHF_TLS) !== 0) continue;
      const load = loadAt(loads, s.addr);
      if (load === undefined || s.addr + s.size > load.vaddr + load.memsz) {
        out.add("SECTION_NOT_LOADED", subject, "sh_addr", s.at + 16, `${what} at [${hex(s.addr)}, ${hex(s.addr + s.size)}) is not inside any PT_LOAD segment's memory`);
      }
      continue;
    }
    const cover = coverOf(loads, { offset: s.offset, vaddr: s.addr, filesz: s.size });
    if (cover.problem !== undefined) {
      out.add(cover.problem === "displaced" ? "SECTION_DISPLACED" : "SECTION_NOT_LOADED", subject, "sh_addr", s.at + 16, coverText(what, { offset: s.offset, vaddr: s.addr, filesz: s.size }, cover));
    }
  }
}

function readDynamic(source: ByteSource, dyn: Segment): DynamicEntry[] {
  const entries: DynamicEntry[] = [];
  const length = Math.min(dyn.filesz, CHUNK);
  const view = viewOf(readExact(source, dyn.offset, length - (length % 16)));
  for (let p = 0; p + 16 <= view.byteLength; p += 16) {
    const tag = u64(view, p);
    entries.push({ tag, value: u64(view, p + 8), at: dyn.offset + p });
    if (tag === DT_NULL) break;
  }
  return entries;
}

/** The value of the first entry with `tag`. */
export function dynamicValue(dynamic: readonly DynamicEntry[], tag: number): DynamicEntry | undefined {
  return dynamic.find((e) => e.tag === tag);
}

/** 7. Every address the dynamic table gives, with its size where one is given, in a loaded, file-backed range. */
function checkDynamic(dynamic: readonly DynamicEntry[], loads: readonly Segment[], out: Findings): void {
  for (const entry of dynamic) {
    const tag = ADDRESS_TAGS.get(entry.tag);
    if (tag === undefined) continue;
    const sizeEntry = tag.size === undefined ? undefined : dynamicValue(dynamic, tag.size);
    const length = sizeEntry?.value ?? 0;
    const load = loadAt(loads, entry.value);
    if (load === undefined) {
      out.add("DYNAMIC_NOT_LOADED", "PT_DYNAMIC", tag.name, entry.at + 8, `${tag.name} (${hex(entry.value)}) is not inside any PT_LOAD segment`);
    } else if (entry.value + length > load.vaddr + load.filesz || (length === 0 && entry.value >= load.vaddr + load.filesz)) {
      out.add("DYNAMIC_NOT_LOADED", "PT_DYNAMIC", tag.sizeName ?? tag.name, (sizeEntry ?? entry).at + 8,
        `${tag.name} (${hex(entry.value)})${sizeEntry === undefined ? "" : ` + ${tag.sizeName} (${hex(length)})`} runs past the file-backed end (${hex(load.vaddr + load.filesz)}) of PT_LOAD (program header ${load.index})`);
    }
  }
}

/**
 * 8. Every relocation ld.so applies writes 8 bytes (or 4) at base + r_offset: in a writable PT_LOAD, or in
 * PT_GNU_RELRO (made read-only only after relocating). DT_TEXTREL files are allowed to write anywhere mapped.
 */
function checkRelocations(source: ByteSource, dynamic: readonly DynamicEntry[], segments: readonly Segment[], loads: readonly Segment[], out: Findings): void {
  const textrel = dynamicValue(dynamic, DT_TEXTREL) !== undefined || ((dynamicValue(dynamic, DT_FLAGS)?.value ?? 0) & DF_TEXTREL) !== 0;
  const relro = segments.filter((s) => s.type === PT_GNU_RELRO);
  const writable = (address: number): boolean => {
    const load = loadAt(loads, address);
    if (load === undefined || address + 4 > load.vaddr + load.memsz) return false;
    return textrel || (load.flags & PF_W) !== 0 || relro.some((r) => address >= r.vaddr && address + 4 <= r.vaddr + r.memsz);
  };
  forEachRelocation(source, dynamic, loads, (table, r, at) => {
    if (r.type === 0 || writable(r.offset)) return;
    out.add("RELOCATION_NOT_WRITABLE", table, "r_offset", at,
      `${table} entry at file offset ${hex(at)}: r_offset ${hex(r.offset)} is not inside a writable or RELRO PT_LOAD segment`);
  });
}

export interface Relocation {
  readonly offset: number;
  readonly type: number;
  readonly symbol: number;
  /** RELA's addend; undefined for REL and RELR (the addend is in place). */
  readonly addend?: number;
}

/**
 * Every dynamic relocation (DT_RELA, DT_JMPREL, DT_REL; DT_RELR decoded to addresses), as ld.so finds them:
 * through the dynamic table and the PT_LOAD mapping, not the section headers. `at` is the entry's file offset.
 * Tables that are not in the file as mapped are skipped (checkDynamic reports them).
 */
export function forEachRelocation(source: ByteSource, dynamic: readonly DynamicEntry[], loads: readonly Segment[], use: (table: string, r: Relocation, at: number) => void): void {
  const tables: { name: string; address?: number; size?: number; entry: number; rela: boolean }[] = [
    { name: "DT_RELA", address: dynamicValue(dynamic, DT_RELA)?.value, size: dynamicValue(dynamic, DT_RELASZ)?.value, entry: dynamicValue(dynamic, DT_RELAENT)?.value ?? 24, rela: true },
    { name: "DT_REL", address: dynamicValue(dynamic, DT_REL)?.value, size: dynamicValue(dynamic, DT_RELSZ)?.value, entry: dynamicValue(dynamic, DT_RELENT)?.value ?? 16, rela: false },
  ];
  const pltrel = dynamicValue(dynamic, DT_PLTREL)?.value ?? DT_RELA;
  tables.push({ name: "DT_JMPREL", address: dynamicValue(dynamic, DT_JMPREL)?.value, size: dynamicValue(dynamic, DT_PLTRELSZ)?.value, entry: pltrel === DT_RELA ? 24 : 16, rela: pltrel === DT_RELA });
  for (const t of tables) {
    if (t.address === undefined || t.size === undefined || t.size === 0) continue;
    const entry = t.rela ? Math.max(t.entry, 24) : Math.max(t.entry, 16);
    const offset = fileOffsetAt(loads, t.address, t.size);
    if (offset === undefined) continue;
    forEachPiece(source, offset, t.size, entry, (bytes, base) => {
      const view = viewOf(bytes);
      for (let p = 0; p + entry <= bytes.length; p += entry) {
        const info = view.getBigUint64(p + 8, true);
        use(t.name, {
          offset: u64(view, p), type: Number(info & 0xffffffffn), symbol: Number(info >> 32n), addend: t.rela ? Number(view.getBigInt64(p + 16, true)) : undefined,
        }, base + p);
      }
    });
  }
  const relr = dynamicValue(dynamic, DT_RELR)?.value;
  const relrSize = dynamicValue(dynamic, DT_RELRSZ)?.value ?? 0;
  const relrOffset = relr === undefined ? undefined : fileOffsetAt(loads, relr, relrSize);
  if (relrOffset === undefined || relrSize === 0) return;
  // RELR (gABI): an even word is an address; an odd one a bitmap of the 63 words after the last address.
  let where = 0;
  forEachPiece(source, relrOffset, relrSize, 8, (bytes, base) => {
    const view = viewOf(bytes);
    for (let p = 0; p + 8 <= bytes.length; p += 8) {
      const word = view.getBigUint64(p, true);
      if ((word & 1n) === 0n) {
        where = Number(word);
        use("DT_RELR", { offset: where, type: -1, symbol: 0 }, base + p);
        where += 8;
      } else {
        let bits = word >> 1n;
        for (let i = 0; bits !== 0n; i++, bits >>= 1n) if (bits & 1n) use("DT_RELR", { offset: where + i * 8, type: -1, symbol: 0 }, base + p);
        where += 63 * 8;
      }
    }
  });
}

export { ET_DYN, ET_EXEC, ET_REL };
