/**
 * Which containers of a `.nv_fatbin` section the CUDA runtime registers: each `__fatBinC_Wrapper_t` in
 * `.nvFatBinSegment` (src/formats/nv-fatbin.ts `parseNvWrappers`) points at one container, and
 * `__cudaRegisterFatBinary` is called with the wrapper. A container no wrapper points at is never loaded
 * (nvcc-linked files carry such; ../shared/spec/nv-fatbin.md).
 *
 * Where the `data` pointer comes from:
 * - a relocatable object (ET_REL): the place holds 0; a RELA entry of the section that applies to
 *   `.nvFatBinSegment` (`.rela.nvFatBinSegment`, R_X86_64_64) names a symbol in `.nv_fatbin` (its section
 *   symbol) plus an addend;
 * - a linked file: the stored value is the container's address (GNU ld writes it even under
 *   R_X86_64_RELATIVE); a linker that leaves RELA places unset (lld's default) stores 0, and then the
 *   R_X86_64_RELATIVE entry for the place gives the address as its addend.
 * Only ELF64 little-endian files are read (CUDA hosts are); anything else answers "unknown" (undefined).
 */
import { readExact } from "../engine/source.js";
import { ET_REL } from "../formats/elf.js";
import type { ElfFile, ElfSection } from "../formats/elf.js";
import { parseNvWrappers } from "../formats/nv-fatbin.js";

export const NV_WRAPPER_SECTION = ".nvFatBinSegment";
const SHT_RELA = 4;
const RELA_SIZE = 24;
const SYMBOL_SIZE = 24;
const R_X86_64_64 = 1;
const R_X86_64_RELATIVE = 8;
/** More wrappers than any file holds (one per translation unit): a larger section is not a wrapper table. */
const MAX_SEGMENT = 16 * 1024 * 1024;
/** Relocation sections read to find an unset place: bounded so a damaged header cannot ask for gigabytes. */
const MAX_RELA = 256 * 1024 * 1024;

function u32(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}

function u64(b: Uint8Array, at: number): number {
  return u32(b, at + 4) * 0x100000000 + u32(b, at);
}

/** A signed 64-bit addend as a number (addends here are addresses and offsets, far below 2^53). */
function i64(b: Uint8Array, at: number): number {
  const high = u32(b, at + 4);
  return high >= 0x80000000 ? (high - 0x100000000) * 0x100000000 + u32(b, at) : high * 0x100000000 + u32(b, at);
}

function sectionData(elf: ElfFile, section: ElfSection, limit: number): Uint8Array | undefined {
  if (section.size > limit || section.offset + section.size > elf.source.size) return undefined;
  return readExact(elf.source, section.offset, section.size);
}

/**
 * For the fatbin section `fatbin` of `elf`: how many wrappers point at each offset in it (container starts,
 * offsets relative to the section). Undefined when the file has no wrapper table or it cannot be read.
 */
export function nvWrapperTargets(elf: ElfFile, names: readonly string[], fatbin: ElfSection): Map<number, number> | undefined {
  if (!elf.header.is64 || !elf.header.littleEndian) return undefined;
  const segment = elf.sections.find((s, i) => names[i] === NV_WRAPPER_SECTION);
  if (segment === undefined) return undefined;
  const bytes = sectionData(elf, segment, MAX_SEGMENT);
  if (bytes === undefined) return undefined;
  const wrappers = parseNvWrappers(bytes);
  const targets = new Map<number, number>();
  const count = (offset: number | undefined): void => {
    if (offset !== undefined && offset >= 0 && offset < fatbin.size) targets.set(offset, (targets.get(offset) ?? 0) + 1);
  };
  if (elf.header.type === ET_REL) {
    const rela = elf.sections.find((s) => s.type === SHT_RELA && s.info === segment.index);
    const relocations = rela === undefined ? undefined : sectionData(elf, rela, MAX_RELA);
    const symtab = rela === undefined ? undefined : elf.sections[rela.link];
    if (relocations === undefined || symtab === undefined) return targets;
    for (const wrapper of wrappers) {
      for (let at = 0; at + RELA_SIZE <= relocations.length; at += RELA_SIZE) {
        if (u64(relocations, at) !== wrapper.offset + 8 || u32(relocations, at + 8) !== R_X86_64_64) continue;
        const symbol = u32(relocations, at + 12);
        if ((symbol + 1) * SYMBOL_SIZE > symtab.size || symtab.offset + (symbol + 1) * SYMBOL_SIZE > elf.source.size) continue;
        const entry = readExact(elf.source, symtab.offset + symbol * SYMBOL_SIZE, SYMBOL_SIZE);
        const shndx = entry[6]! | (entry[7]! << 8);
        if (shndx === fatbin.index) count(u64(entry, 8) + i64(relocations, at + 16));
      }
    }
    return targets;
  }
  let relative: Map<number, number> | undefined;
  for (const wrapper of wrappers) {
    if (wrapper.data >= fatbin.addr && wrapper.data < fatbin.addr + fatbin.size) {
      count(wrapper.data - fatbin.addr);
      continue;
    }
    // The place was left unset: the RELATIVE relocation for it says where it points.
    relative ??= relativeAddends(elf);
    const addend = relative.get(segment.addr + wrapper.offset + 8);
    if (addend !== undefined) count(addend - fatbin.addr);
  }
  return targets;
}

/** Every R_X86_64_RELATIVE place of the file and its addend. */
function relativeAddends(elf: ElfFile): Map<number, number> {
  const places = new Map<number, number>();
  for (const section of elf.sections) {
    if (section.type !== SHT_RELA) continue;
    const bytes = sectionData(elf, section, MAX_RELA);
    if (bytes === undefined) continue;
    for (let at = 0; at + RELA_SIZE <= bytes.length; at += RELA_SIZE) {
      if (u32(bytes, at + 8) === R_X86_64_RELATIVE) places.set(u64(bytes, at), i64(bytes, at + 16));
    }
  }
  return places;
}
