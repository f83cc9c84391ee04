/**
 * Where a linked HIP executable or library keeps its device code, and every pointer to it.
 *
 * The HIP host compiler (clang's CGCUDANV.cpp, `makeModuleCtorFunction`) emits, per fat binary, a
 * `__hip_fatbin_wrapper` in `.hipFatBinSegment` and a constructor that hands its address to
 * `__hipRegisterFatBinary` (ROCm/clr hipamd/src/hip_platform.cpp). The runtime reads `binary` and
 * walks the clang-offload-bundle (or CCOB) found there (hip_fatbin.cpp): the bundle bytes sit in
 * `.hip_fatbin`, one per translation unit (one in all with -fgpu-rdc), each 4096-aligned.
 *
 * | at | size | __hip_fatbin_wrapper field |
 * |----|------|----------------------------|
 * | 0  | 4    | magic 0x48495046 ("HIPF")  |
 * | 4  | 4    | version 1                  |
 * | 8  | 8    | binary (-> bundle)         |
 * | 16 | 8    | unused (0)                 |
 *
 * The `binary` field is a link-time address; in position-independent files the dynamic linker adds
 * the load base through a relocation. Which one depends on the linker and options: an
 * `R_X86_64_RELATIVE` / `R_AARCH64_RELATIVE` in `.rela.dyn` (addend = address, the field itself may
 * hold 0 or the same address), a RELR bitmap entry (`.relr.dyn`: the address is stored in place), an
 * `R_X86_64_64` / `R_AARCH64_ABS64` against a symbol (address = symbol + addend), a REL entry (in
 * place), or nothing at all in a non-PIE executable (absolute address in place). Each is a
 * `PointerSite` here: the file bytes to rewrite when the bundle moves.
 */
import { BUNDLE_MAGIC_BYTES, readBinaryBundle } from "../formats/bundle.js";
import { isCompressedBundle, parseCcobHeader } from "../formats/ccob.js";
import { readExact, sliceSource } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import {
  EM_AARCH64, ET_DYN, SHDR_SIZE, SHF_ALLOC, SHT_DYNSYM, SHT_REL, SHT_RELA, SHT_RELR, SHT_SYMTAB, elfEditError, fileOffsetOf, hex, sectionBytes, u64,
} from "./elf64.js";
import type { LinkedElf, SectionHeader } from "./elf64.js";

export const HIP_FATBIN_SECTION = ".hip_fatbin";
export const HIP_FATBIN_SEGMENT_SECTION = ".hipFatBinSegment";
export const HIP_FATBIN_MAGIC = 0x48495046;
export const WRAPPER_SIZE = 24;
const WRAPPER_BINARY = 8;
/** The largest bundle alignment packed at (a page of the largest max-page-size linkers use, 64 KiB). */
const MAX_BUNDLE_ALIGN = 65536;

const R_X86_64_64 = 1;
const R_X86_64_RELATIVE = 8;
const R_AARCH64_ABS64 = 257;
const R_AARCH64_RELATIVE = 1027;
const RELA_SIZE = 24;
const REL_SIZE = 16;
const SYM_SIZE = 24;

/**
 * One place in the file that holds (part of) a pointer into `.hip_fatbin`:
 * - `addend`: a RELA addend; the address is `base + addend` (base: the symbol's value, or 0 for RELATIVE);
 * - `in-place`: the 8 bytes at `fileOffset` are the address (RELR, REL, non-PIE, or the copy a linker
 *   leaves in the field next to a RELA relocation);
 * - `symbol`: an `st_value` of a symbol defined at a bundle's start.
 */
export interface PointerSite {
  readonly kind: "addend" | "in-place" | "symbol";
  readonly fileOffset: number;
  readonly base: number;
  /** The address it points at today. */
  readonly target: number;
  /** What the site belongs to, for messages. */
  readonly what: string;
}

export interface FatbinBundle {
  /** Index in address order. */
  readonly index: number;
  /** Link-time address of its first byte. */
  readonly address: number;
  /** Its bytes' position in the file. */
  readonly fileOffset: number;
  /** Bytes it uses (the bundle header's extent, or the CCOB's total size). */
  readonly size: number;
  /** `nv`: an NVIDIA fatbin container (./nv-fatbin.ts); "offload binaries": a run of them that
   * src/prune/linked-offloading.ts packs as one (no bundle magic to check). */
  readonly format: "bundle" | "ccob" | "nv" | "offload binaries";
  /** Its bytes, as a source over the input. */
  readonly source: ByteSource;
}

export interface HipFatbinLayout {
  readonly elf: LinkedElf;
  readonly fatbin: SectionHeader;
  readonly segment: SectionHeader;
  readonly wrappers: readonly { readonly address: number; readonly target: number }[];
  readonly bundles: readonly FatbinBundle[];
  readonly sites: readonly PointerSite[];
  /** The alignment bundles are packed at: the section's sh_addralign (4096 for HIP). */
  readonly align: number;
  /**
   * What a replacement must start as, when not a clang-offload-bundle or CCOB (NVIDIA's containers), and its
   * name for messages.
   */
  readonly replacementKind?: { readonly name: string; readonly matches: (head: Uint8Array) => boolean };
}

function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function startsWithMagic(head: Uint8Array): boolean {
  return head.length >= BUNDLE_MAGIC_BYTES.length && BUNDLE_MAGIC_BYTES.every((b, i) => head[i] === b);
}

function findSection(elf: LinkedElf, name: string): SectionHeader | undefined {
  return elf.sections.find((s) => s.name === name);
}

/** RELR (gABI): even words are an address, odd words a bitmap of the 63 words after the last one. */
function relrAddresses(bytes: Uint8Array): number[] {
  const view = viewOf(bytes);
  const out: number[] = [];
  let where = 0;
  for (let at = 0; at + 8 <= bytes.length; at += 8) {
    const entry = view.getBigUint64(at, true);
    if ((entry & 1n) === 0n) {
      where = Number(entry);
      out.push(where);
      where += 8;
    } else {
      let bits = entry >> 1n;
      for (let i = 0; bits !== 0n; i++, bits >>= 1n) if (bits & 1n) out.push(where + i * 8);
      where += 63 * 8;
    }
  }
  return out;
}

/**
 * Finds `.hip_fatbin`, the wrappers and every pointer to a bundle. Throws (naming the wrapper, its
 * address and the value) when a wrapper is malformed or points at no bundle, and when `.hip_fatbin`
 * or a bundle runs past the end of the file.
 */
export function readHipFatbinLayout(elf: LinkedElf): HipFatbinLayout {
  const fatbin = findSection(elf, HIP_FATBIN_SECTION);
  if (fatbin === undefined) throw elfEditError("NO_HIP_FATBIN", "the ELF file has no .hip_fatbin section");
  const segment = findSection(elf, HIP_FATBIN_SEGMENT_SECTION);
  if (segment === undefined) throw elfEditError("NO_HIP_FATBIN", "the ELF file has .hip_fatbin but no .hipFatBinSegment (no wrapper points at it)");
  const fileSize = elf.source.size;
  if (fatbin.offset + fatbin.size > fileSize) {
    throw elfEditError(
      "HIP_FATBIN_TRUNCATED",
      `.hip_fatbin (file offset ${hex(fatbin.offset)}, ${fatbin.size} bytes) runs past the end of the ${fileSize}-byte file`,
      fatbin.offset,
      ".hip_fatbin",
    );
  }
  if (segment.size % WRAPPER_SIZE !== 0) {
    throw elfEditError(
      "BAD_HIP_WRAPPER",
      `.hipFatBinSegment is ${segment.size} bytes, not a whole number of 24-byte __hip_fatbin_wrapper structs`,
      segment.offset,
      ".hipFatBinSegment",
    );
  }
  const { wrappers, sites } = readWrapperPointers(elf, fatbin, segment, HIP_WRAPPERS);
  const fatbinEnd = fatbin.addr + fatbin.size;
  const starts = [...new Set(wrappers.map((w) => w.target))].sort((a, b) => a - b);
  const bundles: FatbinBundle[] = starts.map((address, index) => {
    const fileOffset = fileOffsetOf(elf, address, 4) ?? fatbin.offset + (address - fatbin.addr);
    const limit = (index + 1 < starts.length ? starts[index + 1] : fatbinEnd) - address;
    const span = sliceSource(elf.source, fileOffset, limit);
    const head = readExact(span, 0, Math.min(limit, 64));
    const owner = wrappers.findIndex((w) => w.target === address);
    let size: number;
    let format: "bundle" | "ccob";
    if (isCompressedBundle(head)) {
      format = "ccob";
      const header = parseCcobHeader(head, fileOffset);
      size = header.rawTotalSize ?? limit;
    } else {
      const where = `the fat binary at ${hex(address)} (file offset ${hex(fileOffset)})`;
      const truncated = (code: string | undefined): boolean => code === "BUNDLE_PAYLOAD_OUT_OF_BOUNDS" || (code?.endsWith("_TRUNCATED") ?? false);
      let read: ReturnType<typeof readBinaryBundle>;
      try {
        read = readBinaryBundle(span);
      } catch (e) {
        // A header that goes wrong after a good entry: the bundle is cut short by its section or the next bundle.
        const inner = e as { code?: string; offset?: number; message: string };
        throw elfEditError(
          truncated(inner.code) ? "HIP_FATBIN_TRUNCATED" : "BAD_HIP_FATBIN",
          `${where} runs past the ${limit} bytes before ${index + 1 < starts.length ? "the next one" : "the end of .hip_fatbin"}: ${inner.message}`,
          fileOffset + (inner.offset ?? 0),
          ".hip_fatbin",
        );
      }
      if (read.kind === "none") {
        const problem = read.problem;
        if (problem !== undefined && truncated(problem.code) && startsWithMagic(head)) {
          throw elfEditError("HIP_FATBIN_TRUNCATED", `${where} runs past the ${limit} bytes it has: ${problem.message}`, fileOffset + problem.offset, ".hip_fatbin");
        }
        throw elfEditError(
          "WRAPPER_TARGET_NOT_A_BUNDLE",
          `__hip_fatbin_wrapper ${owner} points to ${hex(address)} (file offset ${hex(fileOffset)}), where no offload bundle or CCOB starts` +
            (problem ? `: ${problem.message}` : ""),
          fileOffset,
          "binary",
        );
      }
      format = "bundle";
      size = read.bundle.extent;
    }
    if (size > limit) {
      throw elfEditError(
        "HIP_FATBIN_TRUNCATED",
        `the fat binary at ${hex(address)} (file offset ${hex(fileOffset)}) is ${size} bytes but only ${limit} remain before ${index + 1 < starts.length ? "the next one" : "the end of .hip_fatbin"}`,
        fileOffset,
        ".hip_fatbin",
      );
    }
    return { index, address, fileOffset, size, format, source: sliceSource(elf.source, fileOffset, size) };
  });
  const align = Math.max(1, fatbin.addralign);
  if ((align & (align - 1)) !== 0 || align > MAX_BUNDLE_ALIGN) {
    throw elfEditError(
      "BAD_HIP_FATBIN",
      `.hip_fatbin's sh_addralign ${fatbin.addralign} is not a power of two up to ${MAX_BUNDLE_ALIGN}`,
      elf.shoff + fatbin.index * SHDR_SIZE + 48,
      "sh_addralign",
    );
  }
  return { elf, fatbin, segment, wrappers, bundles, sites, align };
}

/** What tells one kind of wrapper struct from another (HIP's, CUDA's `__fatBinC_Wrapper_t`). */
export interface WrapperKind {
  /** The struct's name in messages. */
  readonly wrapper: string;
  readonly magic: number;
  readonly magicText: string;
  readonly versions: readonly number[];
  readonly badWrapperCode: string;
}

const HIP_WRAPPERS: WrapperKind = { wrapper: "__hip_fatbin_wrapper", magic: HIP_FATBIN_MAGIC, magicText: "HIPF (0x48495046)", versions: [1], badWrapperCode: "BAD_HIP_WRAPPER" };

/**
 * The wrappers of `segment` (24-byte structs: magic, version, pointer at byte 8, one more word) and every
 * place in the file that holds a pointer into `fatbin`: each wrapper's relocation or stored value, other
 * relocations that land in `fatbin`, and symbols defined in it. HIP's and CUDA's wrappers share this shape
 * (clang CGCUDANV.cpp emits both), so one reader serves `.hip_fatbin` and `.nv_fatbin` (./nv-fatbin.ts).
 */
export function readWrapperPointers(elf: LinkedElf, fatbin: SectionHeader, segment: SectionHeader, kind: WrapperKind): { wrappers: { address: number; target: number }[]; sites: PointerSite[] } {
  const segmentBytes = sectionBytes(elf, segment);
  const aarch64 = elf.machine === EM_AARCH64;
  const relative = aarch64 ? R_AARCH64_RELATIVE : R_X86_64_RELATIVE;
  const abs64 = aarch64 ? R_AARCH64_ABS64 : R_X86_64_64;
  const fatbinEnd = fatbin.addr + fatbin.size;
  const inFatbin = (address: number): boolean => address >= fatbin.addr && address < fatbinEnd;
  const segmentEnd = segment.addr + segment.size;

  const sites: PointerSite[] = [];
  /** Wrapper `binary` field address -> how it is relocated. */
  const fieldRelocs = new Map<number, PointerSite | "relr" | "rel">();
  const symbolTables = new Map<number, DataView>();
  const symbolValue = (table: SectionHeader, index: number): number => {
    let view = symbolTables.get(table.index);
    if (view === undefined) {
      view = viewOf(sectionBytes(elf, table));
      symbolTables.set(table.index, view);
    }
    return u64(view, index * SYM_SIZE + 8, table.offset);
  };

  for (const section of elf.sections) {
    if ((section.flags & SHF_ALLOC) === 0) continue;
    if (section.type === SHT_RELA) {
      const view = viewOf(sectionBytes(elf, section));
      const symtab = elf.sections[section.link];
      for (let at = 0; at + RELA_SIZE <= section.size; at += RELA_SIZE) {
        const where = u64(view, at, section.offset);
        const type = view.getUint32(at + 8, true);
        const sym = view.getUint32(at + 12, true);
        const addend = Number(view.getBigInt64(at + 16, true));
        let base: number;
        if (type === relative) base = 0;
        else if (type === abs64 && symtab !== undefined && sym !== 0) base = symbolValue(symtab, sym);
        else continue;
        const target = base + addend;
        const isField = where >= segment.addr && where < segmentEnd && (where - segment.addr) % WRAPPER_SIZE === WRAPPER_BINARY;
        if (!isField && !inFatbin(target)) continue;
        const site: PointerSite = { kind: "addend", fileOffset: section.offset + at + 16, base, target, what: `${section.name} entry ${at / RELA_SIZE} (r_offset ${hex(where)})` };
        if (isField) fieldRelocs.set(where, site);
        else sites.push(site);
      }
    } else if (section.type === SHT_RELR) {
      for (const where of relrAddresses(sectionBytes(elf, section))) fieldRelocs.set(where, "relr");
    } else if (section.type === SHT_REL) {
      const view = viewOf(sectionBytes(elf, section));
      for (let at = 0; at + REL_SIZE <= section.size; at += REL_SIZE) fieldRelocs.set(u64(view, at, section.offset), "rel");
    }
  }

  const wrappers: { address: number; target: number }[] = [];
  const segmentView = viewOf(segmentBytes);
  for (let at = 0; at < segment.size; at += WRAPPER_SIZE) {
    const address = segment.addr + at;
    const magic = segmentView.getUint32(at, true);
    const version = segmentView.getUint32(at + 4, true);
    if (magic !== kind.magic || !kind.versions.includes(version)) {
      throw elfEditError(
        kind.badWrapperCode,
        `${kind.wrapper} ${at / WRAPPER_SIZE} at ${hex(address)} (file offset ${hex(segment.offset + at)}) has magic ${hex(magic)} version ${version}, not ${kind.magicText} version ${kind.versions.join(" or ")}`,
        segment.offset + at,
        "magic",
      );
    }
    const fieldAddress = address + WRAPPER_BINARY;
    const fieldOffset = segment.offset + at + WRAPPER_BINARY;
    const stored = u64(segmentView, at + WRAPPER_BINARY, segment.offset);
    const reloc = fieldRelocs.get(fieldAddress);
    let target: number;
    if (reloc !== undefined && typeof reloc === "object") {
      target = reloc.target;
      sites.push({ ...reloc, what: `${kind.wrapper} ${at / WRAPPER_SIZE} via ${reloc.what}` });
      // Linkers that also apply the relocation statically (lld -z apply-dynamic-relocs, GNU ld) leave the address in the field too.
      if (stored === target) sites.push({ kind: "in-place", fileOffset: fieldOffset, base: 0, target, what: `${kind.wrapper} ${at / WRAPPER_SIZE} (stored copy)` });
    } else {
      if (reloc === undefined && elf.type === ET_DYN && stored === 0) {
        throw elfEditError(
          kind.badWrapperCode,
          `${kind.wrapper} ${at / WRAPPER_SIZE} at ${hex(address)}: its binary field holds 0 and no relocation sets it`,
          fieldOffset,
          "binary",
        );
      }
      target = stored;
      sites.push({ kind: "in-place", fileOffset: fieldOffset, base: 0, target, what: `${kind.wrapper} ${at / WRAPPER_SIZE} (${reloc ?? "absolute"})` });
    }
    if (!inFatbin(target)) {
      throw elfEditError(
        "WRAPPER_TARGET_NOT_A_BUNDLE",
        `${kind.wrapper} ${at / WRAPPER_SIZE} at ${hex(address)} (file offset ${hex(fieldOffset)}) points to ${hex(target)}, outside ${fatbin.name} [${hex(fatbin.addr)}, ${hex(fatbinEnd)})`,
        fieldOffset,
        "binary",
      );
    }
    wrappers.push({ address, target });
  }

  // Symbols defined at a bundle's start (the linker's __hip_fatbin, RDC's per-file names, nvcc's fatbinData) follow it.
  for (const table of elf.sections) {
    if (table.type !== SHT_SYMTAB && table.type !== SHT_DYNSYM) continue;
    const view = viewOf(sectionBytes(elf, table));
    for (let at = SYM_SIZE; at + SYM_SIZE <= table.size; at += SYM_SIZE) {
      if (view.getUint16(at + 6, true) !== fatbin.index) continue;
      const value = u64(view, at + 8, table.offset);
      sites.push({ kind: "symbol", fileOffset: table.offset + at + 8, base: 0, target: value, what: `${table.name} symbol ${at / SYM_SIZE}` });
    }
  }

  return { wrappers, sites };
}
