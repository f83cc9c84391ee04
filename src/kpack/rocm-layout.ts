/**
 * A host binary made kpack'd the way rocm-kpack makes it, byte for byte: ROCm/rocm-kpack e3483286
 * python/rocm_kpack/elf/kpack_transform.py `kpack_offload_binary`, with its ElfSurgery, ProgramHeaderManager and
 * `conservative_zero_page` steps in their order, so that a tree split by `offload-kit kpack` is the tree
 * rocm-kpack's `split_artifacts` writes (its archives are src/formats/kpack.ts). Those steps, as that code does
 * them:
 * 1. `add_section`: the marker appended at the end of the file, then `.shstrtab` with `.rocm_kpack_ref\0` appended
 *    again after it, then the whole section header table again after that (unaligned: rocm-kpack does not pad),
 *    e_shoff pointing there. The old table and string table stay in the file as dead bytes.
 * 2. `map_section_to_load`: the marker gets the first page-aligned address past every PT_LOAD; as the file offset
 *    of step 1 is not congruent with it, the marker is appended a second time at the next offset that is, and a
 *    read-only PT_LOAD maps that copy. The table has no room for one more entry (a linker leaves none), so it
 *    moves to the end of the file too: at the next page-aligned address, a capacity rounded up to 16 entries,
 *    PT_PHDR re-pointed, and a PT_LOAD of its own appended.
 * 3. Each wrapper's RELATIVE relocation (found by r_offset in any SHT_RELA section) becomes
 *    `R_X86_64_RELATIVE` with the marker's address as addend; the wrapper becomes HIPK, its pointer 0, its index
 *    (32 bits) at +16.
 * 4. `conservative_zero_page`: the whole pages of `.hip_fatbin` cut out of the file (one page fewer when it ends on
 *    a page boundary), its PT_LOAD split around them (before it, its unaligned head, a file-less piece, after it),
 *    offsets past the cut moved down, `.hip_fatbin` NOBITS. The section offsets the table-fits test reads are the
 *    ones before the cut, as rocm-kpack reads them.
 *
 * Where rocm-kpack writes a file that cannot work, this does not copy it: a wrapper pointer that no RELA entry
 * relocates (a non-PIE executable, or RELR) keeps the marker's address in the field (rocm-kpack zeroes it, so
 * such a wrapper points at address 0), and on AArch64 the relocation type is R_AARCH64_RELATIVE (rocm-kpack writes
 * the x86-64 number). Anything else rocm-kpack refuses is refused here, as `KPACK_SPLIT_REFUSED`.
 */
import { OffloadKitError } from "../engine/errors.js";
import { EM_AARCH64, ET_DYN, PHDR_SIZE, PT_LOAD, PT_PHDR, SHDR_SIZE, SHF_ALLOC, SHT_NOBITS, SHT_RELA } from "../elf-edit/elf64.js";
import { KPACK_MARKER_SECTION } from "../formats/kpack-marker.js";
import { HIPK_MAGIC } from "./host.js";

const PAGE = 4096;
const SHT_PROGBITS = 1;
const PF_R = 4;
const HIPF_MAGIC = 0x48495046;
const WRAPPER_SIZE = 24;
/** ProgramHeaderManager's spare_slots: a relocated table's capacity is a multiple of this. */
const SPARE_SLOTS = 16;

interface Phdr { type: number; flags: number; offset: number; vaddr: number; paddr: number; filesz: number; memsz: number; align: number }
interface Shdr { name: number; type: number; flags: number; addr: number; offset: number; size: number; link: number; info: number; addralign: number; entsize: number }

const roundUp = (n: number) => Math.ceil(n / PAGE) * PAGE;
const roundDown = (n: number) => Math.floor(n / PAGE) * PAGE;

/** types.py page_align_offset: the first offset at or past `offset` congruent with `vaddr` modulo a page. */
function pageAlignOffset(offset: number, vaddr: number): number {
  const want = vaddr % PAGE;
  const have = offset % PAGE;
  if (have === want) return offset;
  return have < want ? roundDown(offset) + want : roundUp(offset) + want;
}

function refused(message: string): OffloadKitError {
  return new OffloadKitError("KPACK_SPLIT_REFUSED", message);
}

/** The file as rocm-kpack's ElfSurgery holds it: a growable byte array and the parsed headers it keeps. */
class Surgery {
  data: Uint8Array;
  length: number;
  readonly type: number;
  readonly machine: number;
  phoff: number;
  shoff: number;
  phnum: number;
  readonly shstrndx: number;
  phdrs: Phdr[];
  shdrs: Shdr[];

  constructor(input: Uint8Array) {
    this.data = new Uint8Array(Math.max(input.length * 2, 1 << 16));
    this.data.set(input);
    this.length = input.length;
    const v = this.view();
    this.type = v.getUint16(16, true);
    this.machine = v.getUint16(18, true);
    this.phoff = Number(v.getBigUint64(32, true));
    this.shoff = Number(v.getBigUint64(40, true));
    this.phnum = v.getUint16(56, true);
    this.shstrndx = v.getUint16(62, true);
    const shnum = v.getUint16(60, true);
    this.phdrs = [];
    for (let i = 0; i < this.phnum; i++) this.phdrs.push(this.readPhdr(this.phoff + i * PHDR_SIZE));
    this.shdrs = [];
    for (let i = 0; i < shnum; i++) this.shdrs.push(this.readShdr(this.shoff + i * SHDR_SIZE));
  }

  view(): DataView {
    return new DataView(this.data.buffer, 0, this.length);
  }

  private readPhdr(at: number): Phdr {
    const v = this.view();
    const u = (o: number) => Number(v.getBigUint64(at + o, true));
    return { type: v.getUint32(at, true), flags: v.getUint32(at + 4, true), offset: u(8), vaddr: u(16), paddr: u(24), filesz: u(32), memsz: u(40), align: u(48) };
  }

  private readShdr(at: number): Shdr {
    const v = this.view();
    const u = (o: number) => Number(v.getBigUint64(at + o, true));
    return {
      name: v.getUint32(at, true), type: v.getUint32(at + 4, true), flags: u(8), addr: u(16), offset: u(24), size: u(32),
      link: v.getUint32(at + 40, true), info: v.getUint32(at + 44, true), addralign: u(48), entsize: u(56),
    };
  }

  append(bytes: Uint8Array): number {
    const at = this.length;
    if (at + bytes.length > this.data.length) {
      const grown = new Uint8Array(Math.max(this.data.length * 2, at + bytes.length));
      grown.set(this.data.subarray(0, at));
      this.data = grown;
    }
    this.data.set(bytes, at);
    this.length += bytes.length;
    return at;
  }

  /** `del data[at:at+size]`. */
  cut(at: number, size: number): void {
    this.data.copyWithin(at, at + size, this.length);
    this.length -= size;
  }

  bytes(at: number, size: number): Uint8Array {
    return this.data.slice(at, at + size);
  }

  writeEhdr(): void {
    const v = this.view();
    v.setBigUint64(32, BigInt(this.phoff), true);
    v.setBigUint64(40, BigInt(this.shoff), true);
    v.setUint16(56, this.phnum, true);
    v.setUint16(60, this.shdrs.length, true);
  }

  writePhdr(at: number, p: Phdr): void {
    const v = this.view();
    v.setUint32(at, p.type, true);
    v.setUint32(at + 4, p.flags, true);
    [p.offset, p.vaddr, p.paddr, p.filesz, p.memsz, p.align].forEach((x, i) => v.setBigUint64(at + 8 + i * 8, BigInt(x), true));
  }

  static shdrBytes(s: Shdr): Uint8Array {
    const out = new Uint8Array(SHDR_SIZE);
    const v = new DataView(out.buffer);
    v.setUint32(0, s.name, true);
    v.setUint32(4, s.type, true);
    [s.flags, s.addr, s.offset, s.size].forEach((x, i) => v.setBigUint64(8 + i * 8, BigInt(x), true));
    v.setUint32(40, s.link, true);
    v.setUint32(44, s.info, true);
    v.setBigUint64(48, BigInt(s.addralign), true);
    v.setBigUint64(56, BigInt(s.entsize), true);
    return out;
  }

  static phdrBytes(p: Phdr): Uint8Array {
    const out = new Uint8Array(PHDR_SIZE);
    const v = new DataView(out.buffer);
    v.setUint32(0, p.type, true);
    v.setUint32(4, p.flags, true);
    [p.offset, p.vaddr, p.paddr, p.filesz, p.memsz, p.align].forEach((x, i) => v.setBigUint64(8 + i * 8, BigInt(x), true));
    return out;
  }

  updateShdr(index: number, s: Shdr): void {
    this.shdrs[index] = s;
    this.data.set(Surgery.shdrBytes(s), this.shoff + index * SHDR_SIZE);
  }

  sectionName(s: Shdr): string {
    const table = this.shdrs[this.shstrndx]!;
    let end = table.offset + s.name;
    while (end < table.offset + table.size && this.data[end] !== 0) end++;
    return String.fromCharCode(...this.data.subarray(table.offset + s.name, end));
  }

  findSection(name: string): number {
    return this.shdrs.findIndex((s) => this.sectionName(s) === name);
  }

  /** find_phdr_containing_vaddr: the first program header of any type whose memory covers `vaddr`. */
  phdrContaining(vaddr: number): number {
    return this.phdrs.findIndex((p) => p.vaddr <= vaddr && vaddr < p.vaddr + p.memsz);
  }

  vaddrToOffset(vaddr: number): number {
    const i = this.phdrContaining(vaddr);
    if (i < 0) throw refused(`address 0x${vaddr.toString(16)} is in no segment`);
    return this.phdrs[i]!.offset + (vaddr - this.phdrs[i]!.vaddr);
  }

  /** get_min_content_offset: the first section or file-backed PT_LOAD past e_phoff, as the headers held now say. */
  minContentOffset(): number {
    let min = this.length;
    for (const s of this.shdrs) if (s.type !== 0 && s.offset > this.phoff) min = Math.min(min, s.offset);
    for (const p of this.phdrs) if (p.type === PT_LOAD && p.filesz > 0 && p.offset > this.phoff) min = Math.min(min, p.offset);
    return min;
  }

  /** ProgramHeaderManager.apply: the table in place when it fits before the next content, else at the end of the file. */
  applyPhdrs(table: Phdr[]): void {
    if (table.length * PHDR_SIZE <= this.minContentOffset() - this.phoff) {
      this.phnum = table.length;
      table.forEach((p, i) => this.writePhdr(this.phoff + i * PHDR_SIZE, p));
      this.phdrs = table;
      this.writeEhdr();
      return;
    }
    const vaddr = roundUp(Math.max(0, ...table.filter((p) => p.type === PT_LOAD).map((p) => p.vaddr + p.memsz)));
    const at = pageAlignOffset(this.length, vaddr);
    if (at > this.length) this.append(new Uint8Array(at - this.length));
    const capacity = Math.ceil((table.length + 1) / SPARE_SLOTS) * SPARE_SLOTS;
    const size = capacity * PHDR_SIZE;
    const moved = [...table];
    const phdrIndex = moved.findIndex((p) => p.type === PT_PHDR);
    if (phdrIndex >= 0) moved[phdrIndex] = { ...moved[phdrIndex]!, offset: at, vaddr, paddr: vaddr, filesz: size, memsz: size };
    moved.push({ type: PT_LOAD, flags: PF_R, offset: at, vaddr, paddr: vaddr, filesz: size, memsz: size, align: PAGE });
    for (const p of moved) this.append(Surgery.phdrBytes(p));
    this.append(new Uint8Array((capacity - moved.length) * PHDR_SIZE));
    this.phoff = at;
    this.phnum = moved.length;
    this.phdrs = moved;
    this.writeEhdr();
  }
}

/**
 * `input` (a linked host with `.hip_fatbin` and HIPF wrappers) kpack'd as rocm-kpack's `kpack_offload_binary`
 * writes it, with `marker` (the msgpack `.rocm_kpack_ref` bytes) as its marker.
 */
export function rocmKpackHost(input: Uint8Array, marker: Uint8Array): Uint8Array {
  const elf = new Surgery(input);
  const fatbinIndex = elf.findSection(".hip_fatbin");
  if (fatbinIndex < 0) throw refused("no .hip_fatbin section");
  if (elf.findSection(KPACK_MARKER_SECTION) >= 0) throw refused(`a ${KPACK_MARKER_SECTION} section is already there`);

  // 1. add_section
  const contentOffset = elf.append(marker);
  const strtab = elf.shdrs[elf.shstrndx]!;
  const name = new TextEncoder().encode(`${KPACK_MARKER_SECTION}\0`);
  const strings = new Uint8Array(strtab.size + name.length);
  strings.set(elf.bytes(strtab.offset, strtab.size));
  strings.set(name, strtab.size);
  const stringsOffset = elf.append(strings);
  elf.shdrs[elf.shstrndx] = { ...strtab, offset: stringsOffset, size: strings.length };
  const markerIndex = elf.shdrs.length;
  elf.shdrs.push({ name: strtab.size, type: SHT_PROGBITS, flags: 0, addr: 0, offset: contentOffset, size: marker.length, link: 0, info: 0, addralign: 1, entsize: 0 });
  elf.shoff = elf.length;
  for (const s of elf.shdrs) elf.append(Surgery.shdrBytes(s));
  elf.writeEhdr();

  // 2. map_section_to_load
  const markerAddress = roundUp(Math.max(0, ...elf.phdrs.filter((p) => p.type === PT_LOAD).map((p) => p.vaddr + p.memsz)));
  let markerOffset = contentOffset;
  if (contentOffset % PAGE !== markerAddress % PAGE) {
    markerOffset = pageAlignOffset(elf.length, markerAddress);
    if (markerOffset > elf.length) elf.append(new Uint8Array(markerOffset - elf.length));
    elf.append(elf.bytes(contentOffset, marker.length));
  }
  elf.applyPhdrs([...elf.phdrs, { type: PT_LOAD, flags: PF_R, offset: markerOffset, vaddr: markerAddress, paddr: markerAddress, filesz: marker.length, memsz: marker.length, align: PAGE }]);
  elf.updateShdr(markerIndex, { ...elf.shdrs[markerIndex]!, flags: SHF_ALLOC, addr: markerAddress, offset: markerOffset });

  // 3. set_pointer and rewrite_hipfatbin_magic
  const segmentIndex = elf.findSection(".hipFatBinSegment");
  if (segmentIndex < 0) throw refused(".hipFatBinSegment section not found");
  const segment = elf.shdrs[segmentIndex]!;
  if (segment.size % WRAPPER_SIZE !== 0) throw refused(`.hipFatBinSegment size ${segment.size} is not a multiple of ${WRAPPER_SIZE}`);
  const relative = elf.machine === EM_AARCH64 ? 1027 : 8;
  const relaAt = (vaddr: number): number | undefined => {
    const v = elf.view();
    for (const s of elf.shdrs) {
      if (s.type !== SHT_RELA) continue;
      if (s.offset + s.size > elf.length) throw refused(`relocation section at 0x${s.offset.toString(16)} runs past the end of the file`);
      const step = s.entsize || 24;
      if (step < 24) throw refused(`relocation section at 0x${s.offset.toString(16)} has entries of ${step} bytes`);
      for (let at = s.offset; at + 24 <= s.offset + s.size; at += step) if (Number(v.getBigUint64(at, true)) === vaddr) return at;
    }
    return undefined;
  };
  const wrappers = segment.size / WRAPPER_SIZE;
  const segmentOffset = elf.vaddrToOffset(segment.addr);
  if (segmentOffset + segment.size > elf.length) throw refused(".hipFatBinSegment runs past the end of the file");
  for (let i = 0; i < wrappers; i++) {
    const field = segment.addr + i * WRAPPER_SIZE + 8;
    const rela = elf.type === ET_DYN ? relaAt(field) : undefined;
    if (rela !== undefined) {
      const v = elf.view();
      v.setBigUint64(rela + 8, BigInt(relative), true);
      v.setBigInt64(rela + 16, BigInt(markerAddress), true);
    }
    const at = segmentOffset + i * WRAPPER_SIZE;
    const v = elf.view();
    const magic = v.getUint32(at, true);
    if (magic === HIPK_MAGIC) continue;
    if (magic !== HIPF_MAGIC) throw refused(`wrapper ${i} has magic 0x${magic.toString(16).padStart(8, "0")}, not HIPF`);
    v.setUint32(at, HIPK_MAGIC, true);
    // rocm-kpack zeroes the pointer; where nothing relocates it, that would leave the wrapper pointing at 0.
    v.setBigUint64(at + 8, rela === undefined ? BigInt(markerAddress) : 0n, true);
    v.setUint32(at + 16, i, true);
  }
  const fatbin = elf.shdrs[fatbinIndex]!;
  {
    const v = elf.view();
    for (const s of elf.shdrs) {
      if (s.type !== SHT_RELA) continue;
      for (let at = s.offset; at + 24 <= s.offset + s.size; at += Math.max(24, s.entsize)) {
        const target = Number(v.getBigInt64(at + 16, true));
        if (v.getUint32(at + 8, true) === relative && target >= fatbin.addr && target < fatbin.addr + fatbin.size) {
          throw refused(`a relocation at 0x${Number(v.getBigUint64(at, true)).toString(16)} still points into .hip_fatbin`);
        }
      }
    }
  }

  // 4. conservative_zero_page
  const start = fatbin.addr;
  const end = fatbin.addr + fatbin.size;
  const alignedStart = roundUp(start);
  const alignedEnd = roundDown(end);
  if (alignedStart >= alignedEnd) return elf.data.slice(0, elf.length);
  let alignedSize = alignedEnd - alignedStart;
  if (end - roundDown(end) === 0) {
    alignedSize -= PAGE;
    if (alignedSize === 0) return elf.data.slice(0, elf.length);
  }
  const alignedOffset = fatbin.offset + (alignedStart - start);
  const targetIndex = elf.phdrContaining(start);
  const target = elf.phdrs[targetIndex];
  if (target === undefined || target.type !== PT_LOAD) throw refused(".hip_fatbin is not in a PT_LOAD first");
  elf.cut(alignedOffset, alignedSize);
  if (elf.phoff > alignedOffset) elf.phoff -= alignedSize;
  if (elf.shoff > alignedOffset) elf.shoff -= alignedSize;
  const pieces: Phdr[] = [];
  const piece = (vaddr: number, memsz: number, offset: number, filesz: number) =>
    pieces.push({ type: PT_LOAD, flags: target.flags, offset, vaddr, paddr: vaddr, filesz, memsz, align: target.align });
  if (target.vaddr < start) piece(target.vaddr, start - target.vaddr, target.offset, Math.min(start - target.vaddr, target.filesz));
  if (start < alignedStart) piece(start, alignedStart - start, fatbin.offset, alignedStart - start);
  piece(alignedStart, end - alignedStart, alignedOffset, 0);
  if (end < target.vaddr + target.memsz) {
    const sectionFileEnd = fatbin.offset + fatbin.size;
    const filesz = target.offset + target.filesz - sectionFileEnd;
    if (filesz > 0) piece(end, target.vaddr + target.memsz - end, sectionFileEnd - alignedSize, filesz);
  }
  const table: Phdr[] = [];
  elf.phdrs.forEach((p, i) => {
    if (i === targetIndex) table.push(...pieces);
    else table.push(p.offset > alignedOffset ? { ...p, offset: p.offset - alignedSize } : p);
  });
  elf.phdrs = table;
  elf.phnum = table.length;
  elf.applyPhdrs(table);
  elf.shdrs.forEach((s, i) => {
    if (i === fatbinIndex) elf.updateShdr(i, { ...s, type: SHT_NOBITS });
    else if (s.offset > alignedOffset) elf.updateShdr(i, { ...s, offset: s.offset - alignedSize });
  });
  elf.writeEhdr();
  return elf.data.slice(0, elf.length);
}
