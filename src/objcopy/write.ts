/**
 * Writing an {@link ElfObject} back the way llvm-objcopy 19 does (llvm/lib/ObjCopy/ELF/ELFObject.cpp,
 * ELFWriter::finalize/assignOffsets/write), which decides every byte of a bundler-made fat object:
 *
 * - sections keep their index order, but their bytes are laid out in the order of their offsets in the input
 *   (a stable sort; added sections, which have none, go last in the order they were added), each at the next
 *   multiple of its alignment after the ELF header, the gaps zero;
 * - SHT_NOBITS sections take an offset but no bytes;
 * - every non-allocated SHT_STRTAB is rebuilt from the names that use it (section names for e_shstrndx, symbol
 *   names for the symbol table's) by StringTableBuilder's rules (src/llvm/string-table.ts, shared with the
 *   offload binary writer); one that nothing uses keeps
 *   only its leading NUL;
 * - the symbol table is rewritten with the new name offsets and section indices (sh_info: one past the last
 *   local), relocation sections get the new sh_link/sh_info, groups their members' new indices;
 * - the section header table follows, aligned to the size of an address; section 0 carries the section count and
 *   e_shstrndx when they do not fit in the ELF header.
 */
import { OffloadKitError } from "../engine/errors.js";
import {
  SHF_ALLOC, SHN_LORESERVE, SHN_XINDEX, SHT_GROUP, SHT_NOBITS, SHT_REL, SHT_RELA, SHT_STRTAB, SHT_SYMTAB, SHT_SYMTAB_SHNDX,
  unsupported, type ElfObject, type ObjSection,
} from "./elf-object.js";
import { buildElfStringTable, type StringTable } from "../llvm/string-table.js";

/** Output files are held in one Uint8Array. */
const MAX_OUTPUT = 2 ** 31 - 1;
/**
 * Alignment padding comes from the input's sh_addralign fields, which nothing else bounds: a hostile 2^30 would
 * make a gigabyte of zeros. Real objects pad a few KiB; more than this is refused instead of allocated.
 */
export const MAX_PADDING = 16 * 1024 * 1024;

function alignTo(value: number, align: bigint): number {
  if (align <= 1n) return value;
  if (align > BigInt(MAX_OUTPUT)) throw new OffloadKitError("OBJCOPY_TOO_LARGE", `a section alignment of ${align} would make the output larger than ${MAX_OUTPUT} bytes`);
  const a = Number(align);
  return Math.ceil(value / a) * a;
}

/**
 * llvm-objcopy keeps local symbols before the others (a stable partition), which compilers already do. For an
 * input that does not, the symbols move and so must every reference to a symbol index: relocation entries
 * and group signatures are renumbered; other sections that hold symbol indices (.llvm_addrsig, call-graph
 * profiles) are refused rather than written wrong.
 */
function localSymbolsFirst(obj: ElfObject): ElfObject {
  // obj.symbols may lack some input symbols: those defined in removed sections, which llvm-objcopy drops too.
  const order = [...obj.symbols.keys()].sort((a, b) => Number(!obj.symbols[a]!.local) - Number(!obj.symbols[b]!.local) || a - b);
  if (order.every((at, k) => at === k && obj.symbols[at]!.index === k)) return obj;
  const newIndex = new Map(order.map((at, k) => [obj.symbols[at]!.index, k]));
  const { layout } = obj;
  const symbolIndex = (old: number, where: string): number => {
    const index = newIndex.get(old);
    if (index === undefined) throw new OffloadKitError("OBJCOPY_SYMBOL_REFERENCED", `${where} refers to symbol ${old}, which is removed or past the end of the symbol table`);
    return index;
  };
  const sections = obj.sections.map((s): ObjSection => {
    if (s.link !== obj.symtabIndex || s.link === undefined || s.link === 0) return s;
    if (s.type === SHT_GROUP) return { ...s, info: symbolIndex(s.info, `group section '${s.name}'`) };
    if ((s.type === SHT_REL || s.type === SHT_RELA) && (s.flags & SHF_ALLOC) === 0n) {
      if (layout.is64 && layout.little && obj.machine === 8) unsupported(`relocations of a little-endian MIPS64 object with unsorted symbols ('${s.name}')`);
      const entry = Number(entrySizeOf(s, layout));
      if (s.data.length % entry !== 0) throw new OffloadKitError("OBJCOPY_MALFORMED", `relocation section '${s.name}' is ${s.data.length} bytes, not a multiple of ${entry}`);
      const data = s.data.slice();
      const view = new DataView(data.buffer);
      for (let at = 0; at < data.length; at += entry) {
        if (layout.is64) {
          const info = view.getBigUint64(at + 8, layout.little);
          const sym = symbolIndex(Number(info >> 32n), `relocation section '${s.name}'`);
          view.setBigUint64(at + 8, (BigInt(sym) << 32n) | (info & 0xffffffffn), layout.little);
        } else {
          const info = view.getUint32(at + 4, layout.little);
          const sym = symbolIndex(info >>> 8, `relocation section '${s.name}'`);
          view.setUint32(at + 4, ((sym << 8) | (info & 0xff)) >>> 0, layout.little);
        }
      }
      return { ...s, data };
    }
    if (s.type !== SHT_SYMTAB_SHNDX) unsupported(`section '${s.name}' (type ${s.type}) refers to the symbol table, whose symbols llvm-objcopy would reorder`);
    return s;
  });
  return { ...obj, sections, symbols: order.map((at) => obj.symbols[at]!) };
}

export function writeElfObject(input: ElfObject): Uint8Array {
  const obj = localSymbolsFirst(input);
  const { layout } = obj;
  const sections = obj.sections;
  // Output index of each input index (0 stays 0); sections are numbered from 1 in their order.
  const newIndex = new Map<number, number>([[0, 0]]);
  sections.forEach((s, i) => { if (s.inputIndex !== 0) newIndex.set(s.inputIndex, i + 1); });
  const count = sections.length + 1;
  const remap = (inputIndex: number, what: string): number => {
    const index = newIndex.get(inputIndex);
    if (index === undefined) unsupported(`${what} refers to section ${inputIndex}, which is removed`);
    return index;
  };
  if (count >= SHN_LORESERVE && obj.symtabIndex !== undefined && !sections.some((s) => s.type === SHT_SYMTAB_SHNDX))
    unsupported(`${count} sections need an SHT_SYMTAB_SHNDX table, which the input does not have`);
  if (count < SHN_LORESERVE && sections.some((s) => s.type === SHT_SYMTAB_SHNDX))
    unsupported(`the input's SHT_SYMTAB_SHNDX table would be dropped (${count} sections no longer need it)`);

  // String tables: which names each rebuilt table holds.
  const tableNames = new Map<number, string[]>();
  for (const s of sections) if (s.type === SHT_STRTAB && (s.flags & SHF_ALLOC) === 0n) tableNames.set(s.inputIndex, []);
  const namesTable = tableNames.get(obj.sectionNamesIndex);
  if (namesTable === undefined) unsupported("the section name table is removed or allocated");
  for (const s of sections) namesTable.push(s.name);
  const symtab = sections.find((s) => s.type === SHT_SYMTAB);
  if (symtab !== undefined) tableNames.get(symtab.link)?.push(...obj.symbols.map((sym) => sym.name));
  const tables = new Map<number, StringTable>();
  for (const [index, names] of tableNames) tables.set(index, buildElfStringTable(names));
  const sectionNames = tables.get(obj.sectionNamesIndex)!;

  // Each section's output bytes.
  const contents = sections.map((s) => contentOf(obj, s, tables, remap));

  // Layout: after the ELF header, in input-offset order.
  const order = sections.map((s, i) => i).sort((a, b) => sections[a]!.originalOffset - sections[b]!.originalOffset || a - b);
  const offsets = new Array<number>(sections.length);
  let offset = layout.ehdrSize;
  let padding = 0;
  for (const i of order) {
    const s = sections[i]!;
    const align = alignmentOf(s, layout);
    const aligned = alignTo(offset, align === 0n ? 1n : align);
    padding += aligned - offset;
    if (padding > MAX_PADDING) {
      throw new OffloadKitError("OBJCOPY_TOO_LARGE", `section '${s.name}' is aligned to ${s.align}: the output would hold more than ${MAX_PADDING} bytes of alignment padding`);
    }
    offset = aligned;
    offsets[i] = offset;
    if (s.type !== SHT_NOBITS) offset += contents[i]!.length;
    if (offset > MAX_OUTPUT) throw new OffloadKitError("OBJCOPY_TOO_LARGE", `the output would be larger than ${MAX_OUTPUT} bytes`);
  }
  const shoff = alignTo(offset, layout.is64 ? 8n : 4n);
  const total = shoff + count * layout.shdrSize;
  if (total > MAX_OUTPUT) throw new OffloadKitError("OBJCOPY_TOO_LARGE", `the output would be larger than ${MAX_OUTPUT} bytes`);

  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  const le = layout.little;
  const word = (at: number, value: bigint | number) => {
    if (layout.is64) view.setBigUint64(at, BigInt(value), le);
    else view.setUint32(at, Number(BigInt.asUintN(32, BigInt(value))), le);
  };
  sections.forEach((s, i) => { if (s.type !== SHT_NOBITS) out.set(contents[i]!, offsets[i]!); });

  // ELF header.
  out.set(obj.ident.subarray(0, 4), 0);
  out[4] = obj.ident[4]!;
  out[5] = obj.ident[5]!;
  out[6] = 1; // EV_CURRENT
  out[7] = obj.ident[7]!; // OS ABI
  out[8] = obj.ident[8]!; // ABI version
  view.setUint16(16, obj.type, le);
  view.setUint16(18, obj.machine, le);
  view.setUint32(20, obj.version, le);
  word(24, obj.entry);
  const w = layout.is64 ? 8 : 4;
  word(24 + 2 * w, shoff); // e_shoff (e_phoff, before it, stays 0: no program headers)
  let at = 24 + 3 * w;
  view.setUint32(at, obj.flags, le);
  view.setUint16(at + 4, layout.ehdrSize, le);
  view.setUint16(at + 10, layout.shdrSize, le);
  const namesIndex = remap(obj.sectionNamesIndex, "e_shstrndx");
  view.setUint16(at + 12, count >= SHN_LORESERVE ? 0 : count, le);
  view.setUint16(at + 14, namesIndex >= SHN_LORESERVE ? SHN_XINDEX : namesIndex, le);

  // Section headers; section 0 carries what does not fit in the ELF header.
  if (count >= SHN_LORESERVE) word(shoff + 8 + 3 * w, count);
  if (namesIndex >= SHN_LORESERVE) view.setUint32(shoff + 8 + 4 * w, namesIndex, le);
  sections.forEach((s, i) => {
    at = shoff + (i + 1) * layout.shdrSize;
    view.setUint32(at, sectionNames.offsets.get(s.name)!, le);
    view.setUint32(at + 4, s.type, le);
    word(at + 8, s.flags);
    word(at + 8 + w, s.addr);
    word(at + 8 + 2 * w, offsets[i]!);
    word(at + 8 + 3 * w, s.type === SHT_NOBITS ? s.size : contents[i]!.length);
    const { link, info } = linkAndInfo(obj, s, remap);
    view.setUint32(at + 8 + 4 * w, link, le);
    view.setUint32(at + 12 + 4 * w, info, le);
    word(at + 16 + 4 * w, alignmentOf(s, layout));
    word(at + 16 + 5 * w, entrySizeOf(s, layout));
  });
  return out;
}

/** Rebuilt symbol and relocation tables: llvm-objcopy aligns them to their largest field (ELFSectionSizer). */
function isRebuiltTable(s: ObjSection): boolean {
  return s.type === SHT_SYMTAB || ((s.type === SHT_REL || s.type === SHT_RELA) && (s.flags & SHF_ALLOC) === 0n);
}

function alignmentOf(s: ObjSection, layout: ElfObject["layout"]): bigint {
  return isRebuiltTable(s) ? (layout.is64 ? 8n : 4n) : s.align;
}

/** ... and give them their entry size. */
function entrySizeOf(s: ObjSection, layout: ElfObject["layout"]): bigint {
  if (s.type === SHT_SYMTAB) return BigInt(layout.symSize);
  if (isRebuiltTable(s)) return s.type === SHT_REL ? (layout.is64 ? 16n : 8n) : (layout.is64 ? 24n : 12n);
  // SectionBase::EntrySize is 32 bits wide in llvm-objcopy: a larger sh_entsize comes out truncated.
  return BigInt.asUintN(32, s.entsize);
}

function linkAndInfo(obj: ElfObject, s: ObjSection, remap: (index: number, what: string) => number): { link: number; info: number } {
  const link = s.link === 0 ? 0 : remap(s.link, `the sh_link of section '${s.name}'`);
  if (s.type === SHT_SYMTAB) {
    let lastLocal = 0;
    obj.symbols.forEach((sym, k) => { if (sym.local) lastLocal = k; });
    return { link, info: lastLocal + 1 };
  }
  if ((s.type === SHT_REL || s.type === SHT_RELA) && (s.flags & SHF_ALLOC) === 0n && s.info !== 0)
    return { link, info: remap(s.info, `relocation section '${s.name}'`) };
  return { link, info: s.info };
}

function contentOf(obj: ElfObject, s: ObjSection, tables: Map<number, StringTable>, remap: (index: number, what: string) => number): Uint8Array {
  const { layout } = obj;
  const table = tables.get(s.inputIndex);
  if (table !== undefined) return table.bytes;
  if (s.type === SHT_SYMTAB) {
    const names = tables.get(s.link);
    const out = new Uint8Array(obj.symbols.length * layout.symSize);
    const view = new DataView(out.buffer);
    obj.symbols.forEach((sym, k) => {
      const at = k * layout.symSize;
      out.set(sym.raw, at);
      view.setUint32(at, names === undefined ? 0 : names.offsets.get(sym.name)!, layout.little);
      let shndx = sym.reserved;
      if (sym.section !== undefined) {
        const index = remap(sym.section, `symbol '${sym.name}'`);
        shndx = index >= SHN_LORESERVE ? SHN_XINDEX : index;
      }
      view.setUint16(at + (layout.is64 ? 6 : 14), shndx, layout.little);
    });
    return out;
  }
  if (s.type === SHT_SYMTAB_SHNDX) {
    const out = new Uint8Array(obj.symbols.length * 4);
    const view = new DataView(out.buffer);
    obj.symbols.forEach((sym, k) => {
      const index = sym.section === undefined ? 0 : remap(sym.section, `symbol '${sym.name}'`);
      view.setUint32(4 * k, index >= SHN_LORESERVE ? index : 0, layout.little);
    });
    return out;
  }
  if (s.type === SHT_GROUP) {
    if (s.data.length % 4 !== 0 || s.data.length === 0)
      throw new OffloadKitError("OBJCOPY_MALFORMED", `group section '${s.name}' has ${s.data.length} bytes, not a flag word and 4-byte indices`);
    const members: number[] = [];
    const view = new DataView(s.data.buffer, s.data.byteOffset, s.data.byteLength);
    for (let at = 4; at < s.data.length; at += 4) members.push(view.getUint32(at, layout.little));
    const out = new Uint8Array(s.data.length);
    const outView = new DataView(out.buffer);
    outView.setUint32(0, view.getUint32(0, layout.little), layout.little);
    members.forEach((member, k) => outView.setUint32(4 + 4 * k, remap(member, `group section '${s.name}'`), layout.little));
    return out;
  }
  return s.data;
}
