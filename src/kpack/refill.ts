/**
 * Undoes the zero-paging rocm-kpack does to a host's `.hip_fatbin` (ROCm/rocm-kpack e3483286
 * python/rocm_kpack/elf/zero_page.py `conservative_zero_page`), so that `unkpack` can put device code back
 * into it through the same `.hip_fatbin` rewrite it uses for the files `offload-kit kpack` writes.
 *
 * What rocm-kpack leaves, and what this takes back:
 * - the whole pages of `.hip_fatbin` (`aligned_size` bytes at `aligned_offset`: from its first page boundary to its
 *   last, one page fewer when the section ends on a boundary) were cut out of the file, and every offset past
 *   `aligned_offset` (e_phoff, e_shoff, p_offset, sh_offset) moved down by that much: they move back up, and the
 *   cut becomes zeros again;
 * - the PT_LOAD that held `.hip_fatbin` was split into up to four (before it, its unaligned head, a file-less
 *   piece over the rest of it, after it; same flags and alignment, adjacent addresses): they become one again,
 *   as the linker wrote it, and the table keeps its length with PT_NULL entries at its end (the ELF editor takes
 *   a spare PT_NULL before it grows a table);
 * - `.hip_fatbin` became NOBITS: it is PROGBITS again, holding, for each wrapper, a header-only bundle followed
 *   by the wrapper's marker, the wrapper's pointer (its RELATIVE addend, or the field where nothing relocates
 *   it) at that marker. That is the layout `offload-kit kpack` writes itself (src/kpack/node/split.ts), so from
 *   here `unkpack` is one path for both.
 * `.rocm_kpack_ref` and its PT_LOAD stay: nothing points at them once the wrappers are HIPF again, and removing a
 * segment from the middle of the address space would buy a few hundred bytes at the price of a second layout rule.
 *
 * Anything that does not match exactly (no file-less piece where the arithmetic puts it, pieces that do not meet)
 * is refused with `KPACK_LAYOUT_UNKNOWN`: a guess here would write a file that loads the wrong bytes.
 */
import { OffloadKitError } from "../engine/errors.js";
import { bytesSource } from "../engine/source.js";
import {
  EM_AARCH64, PHDR_SIZE, PT_LOAD, PT_NULL, SHDR_SIZE, SHF_ALLOC, SHT_NOBITS, SHT_RELA, hex, openLinkedElf, setU64, writeProgramHeaders,
} from "../elf-edit/elf64.js";
import type { ProgramHeader } from "../elf-edit/elf64.js";
import { BUNDLE_MAGIC_BYTES } from "../formats/bundle.js";
import type { KpackHost } from "./host.js";

const PAGE = 4096;
const SHT_PROGBITS = 1;
/** A header-only bundle: magic (24) and entry count (8); the marker follows it. */
export const EMPTY_BUNDLE_SIZE = 32;
const R_X86_64_RELATIVE = 8;
const R_AARCH64_RELATIVE = 1027;

function layoutError(message: string, offset?: number, field?: string): OffloadKitError {
  return new OffloadKitError("KPACK_LAYOUT_UNKNOWN", `rocm-kpack layout: ${message}`, { offset, field });
}

/** True when the host's `.hip_fatbin` is NOBITS: rocm-kpack zero-paged it (ours stays PROGBITS). */
export function isZeroPaged(input: Uint8Array): boolean {
  const elf = openLinkedElf(bytesSource(input));
  return elf.sections.some((s) => s.name === ".hip_fatbin" && s.type === SHT_NOBITS);
}

/**
 * The host with rocm-kpack's cut pages back in `.hip_fatbin`, each wrapper's marker copied behind a header-only
 * bundle there and its pointer moved to that copy. `host` is what `readKpackHost` read from `input`.
 */
export function refillZeroPagedHost(input: Uint8Array, host: KpackHost): Uint8Array {
  const elf = openLinkedElf(bytesSource(input));
  const fatbin = elf.sections.find((s) => s.name === ".hip_fatbin");
  if (fatbin === undefined || fatbin.type !== SHT_NOBITS) throw layoutError(".hip_fatbin is not NOBITS (not zero-paged)");
  const start = fatbin.addr;
  const end = fatbin.addr + fatbin.size;
  // zero_page.py calculate_aligned_range and its one-page-back rule for a section ending on a page boundary.
  const alignedStart = Math.ceil(start / PAGE) * PAGE;
  let removed = Math.max(0, Math.floor(end / PAGE) * PAGE - alignedStart);
  if (removed > 0 && end % PAGE === 0) removed -= PAGE;
  const alignedOffset = fatbin.offset + (alignedStart - start);
  // The cut comes back as zeros in memory: a header claiming more than any file we edit is refused, not allocated.
  if (removed > 0x1_0000_0000 || alignedOffset > input.length || fatbin.offset + fatbin.size > input.length + removed) {
    throw layoutError(`.hip_fatbin (${hex(fatbin.offset)}+${hex(fatbin.size)}) does not fit the ${input.length}-byte file with its ${removed} cut bytes back`, elf.shoff + fatbin.index * SHDR_SIZE + 24, "sh_offset");
  }
  const loads = elf.programHeaders.map((p, i) => ({ p, i })).filter(({ p }) => p.type === PT_LOAD);
  const hole = loads.find(({ p }) => p.vaddr === alignedStart && p.filesz === 0 && p.vaddr + p.memsz === end);
  if (removed > 0 && (hole === undefined || hole.p.offset !== alignedOffset)) {
    throw layoutError(`no file-less PT_LOAD at ${hex(alignedStart)} (file offset ${hex(alignedOffset)}) over the rest of .hip_fatbin`, elf.phoff, "p_offset");
  }
  const shift = (offset: number) => (offset > alignedOffset ? offset + removed : offset);

  // The pieces of the split PT_LOAD, in address order: those that meet at .hip_fatbin's start, end and page boundary.
  const pieces: { p: ProgramHeader; i: number }[] = [];
  const before = loads.find(({ p }) => p.vaddr + p.memsz === start && p.vaddr < start);
  const head = loads.find(({ p }) => p.vaddr === start && alignedStart > start && p.memsz === alignedStart - start);
  const after = loads.find(({ p }) => p.vaddr === end);
  for (const piece of [before, head, hole, after]) if (piece !== undefined) pieces.push(piece);
  if (pieces.length === 0) throw layoutError(`no PT_LOAD maps .hip_fatbin at ${hex(start)}`, elf.phoff, "p_vaddr");
  const first = pieces[0]!.p;
  const last = pieces[pieces.length - 1]!.p;
  for (const { p, i } of pieces) {
    if (p.flags !== first.flags || p.align !== first.align) throw layoutError(`PT_LOAD ${i} does not share the flags and alignment of the segment it was split from`, elf.phoff + i * PHDR_SIZE, "p_flags");
    // Back in place, every piece with bytes must sit in the file where the merged segment puts it.
    if (p.filesz > 0 && shift(p.offset) - first.offset !== p.vaddr - first.vaddr) {
      throw layoutError(`PT_LOAD ${i} (${hex(p.vaddr)}) does not line up with the segment it was split from`, elf.phoff + i * PHDR_SIZE, "p_offset");
    }
  }
  const lastEnd = last.filesz > 0 ? last.vaddr + last.filesz : end;
  const merged: ProgramHeader = {
    ...first,
    filesz: lastEnd - first.vaddr,
    memsz: last.vaddr + last.memsz - first.vaddr,
  };

  const output = new Uint8Array(input.length + removed);
  output.set(input.subarray(0, alignedOffset), 0);
  output.set(input.subarray(alignedOffset), alignedOffset + removed);
  const view = new DataView(output.buffer);
  const phoff = shift(elf.phoff);
  const shoff = shift(elf.shoff);
  setU64(view, 32, phoff);
  setU64(view, 40, shoff);

  const pieceIndexes = new Set(pieces.map(({ i }) => i));
  const table: ProgramHeader[] = [];
  elf.programHeaders.forEach((p, i) => {
    if (i === pieces[0]!.i) table.push(merged);
    else if (!pieceIndexes.has(i)) table.push({ ...p, offset: shift(p.offset) });
  });
  while (table.length < elf.programHeaders.length) table.push({ type: PT_NULL, flags: 0, offset: 0, vaddr: 0, paddr: 0, filesz: 0, memsz: 0, align: 0 });
  output.set(writeProgramHeaders(table), phoff);

  for (const s of elf.sections) {
    const at = shoff + s.index * SHDR_SIZE;
    if (s.index === fatbin.index) view.setUint32(at + 4, SHT_PROGBITS, true);
    else setU64(view, at + 24, shift(s.offset));
  }

  // .hip_fatbin: zeros, then a header-only bundle and the marker per wrapper, one page apart where they fit.
  output.fill(0, fatbin.offset, fatbin.offset + fatbin.size);
  const markers = host.wrappers.map((w) => input.subarray(w.markerOffset, w.markerOffset + w.marker.size));
  const slot = Math.max(...markers.map((m) => EMPTY_BUNDLE_SIZE + m.length));
  const stride = (host.wrappers.length - 1) * PAGE + slot <= fatbin.size ? PAGE : Math.ceil(slot / 8) * 8;
  if ((host.wrappers.length - 1) * stride + slot > fatbin.size) {
    throw layoutError(`.hip_fatbin (${fatbin.size} bytes) has no room for ${host.wrappers.length} markers`, elf.shoff + fatbin.index * SHDR_SIZE + 32, "sh_size");
  }
  const relocatedElf = openLinkedElf(bytesSource(output));
  const relative = elf.machine === EM_AARCH64 ? R_AARCH64_RELATIVE : R_X86_64_RELATIVE;
  const addends = new Map<number, number>();
  for (const section of relocatedElf.sections) {
    if ((section.flags & SHF_ALLOC) === 0 || section.type !== SHT_RELA) continue;
    for (let at = section.offset; at + 24 <= section.offset + section.size; at += 24) {
      if (view.getUint32(at + 8, true) === relative) addends.set(Number(view.getBigUint64(at, true)), at + 16);
    }
  }
  const segment = relocatedElf.sections.find((s) => s.name === ".hipFatBinSegment")!;
  host.wrappers.forEach((w, n) => {
    const bundleAt = fatbin.offset + n * stride;
    output.set(BUNDLE_MAGIC_BYTES, bundleAt);
    output.set(markers[n]!, bundleAt + EMPTY_BUNDLE_SIZE);
    const markerAddress = start + n * stride + EMPTY_BUNDLE_SIZE;
    const field = segment.offset + w.index * 24 + 8;
    const addendAt = addends.get(segment.addr + w.index * 24 + 8);
    if (addendAt !== undefined) view.setBigInt64(addendAt, BigInt(markerAddress), true);
    // Where no RELA entry relocates it (RELR, a non-PIE executable), the field itself holds the address.
    if (addendAt === undefined || view.getBigUint64(field, true) !== 0n) view.setBigUint64(field, BigInt(markerAddress), true);
  });
  return output;
}
