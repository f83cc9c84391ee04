/**
 * Relocatable HIP objects (ET_REL) holding `.hip_fatbin`: what `clang -x hip -c` writes by default (no
 * -fgpu-rdc; clang 19 and 22, old and new driver alike), one bundle or CCOB per translation unit, and what
 * `ld -r` makes of several (one `.hip_fatbin` holding each input's bundle at its input section's alignment).
 * Also archives of them (./archive.ts, through the member table in ./containers.ts).
 *
 * Nothing in such an object holds an address yet: every `__hip_fatbin_wrapper` (in `.hipFatBinSegment`,
 * spec in src/elf-edit/hip-fatbin.ts) reaches its bundle through a relocation left for the linker, e.g.
 *
 * | relocation section       | offset | type          | symbol        | addend          |
 * |--------------------------|--------|---------------|---------------|-----------------|
 * | `.rela.hipFatBinSegment` | 8      | R_X86_64_64   | `.hip_fatbin` | 0               |
 * | `.rela.hipFatBinSegment` | 32     | R_X86_64_64   | `.hip_fatbin` | 0x7000 (`-r`)   |
 *
 * so the bundles are found where those relocations point (symbol value + addend), each edited by the same
 * code as a bundle file (./bundle-file.ts: selection, empty-bundle rule, recovered alignment, CCOB level;
 * each fat binary one bundle for `--bundle`, named `fat binary N` as in a linked file). The section is then
 * laid out again: bundles in their order, each at the next multiple of the section's sh_addralign (4096 from
 * clang; the code objects inside a bundle are aligned relative to its start), zeros between; every
 * relocation whose symbol is defined in `.hip_fatbin` gets its addend moved to the new place of what it
 * pointed at, and every symbol defined there (other than at 0) its new value. An ET_REL file has no
 * addresses and no segments, so the object is simply written again by the in-process llvm-objcopy
 * (src/objcopy/: every section re-laid out at its alignment, string and symbol tables rebuilt).
 *
 * An `ld -r` of mixed objects may also hold bundle sections (old-driver -fgpu-rdc) or `.llvm.offloading`
 * (new-driver -fgpu-rdc): ./containers.ts runs their own containers on the result. Every output is checked
 * before it lands, its relocations included (src/verify/fatbin-relocations.ts).
 *
 * Refused rather than guessed: a relocation or symbol pointing inside a bundle (not at its start), REL
 * (implicit addend) relocations pointing into `.hip_fatbin`, and relocations applied to `.hip_fatbin` itself.
 */
import { OffloadKitError } from "../engine/errors.js";
import { readBinaryBundle } from "../formats/bundle.js";
import { isCompressedBundle, parseCcobHeader } from "../formats/ccob.js";
import { readElfObject } from "../objcopy/index.js";
import type { ElfObject } from "../objcopy/index.js";
import { SHF_ALLOC, SHT_REL, SHT_RELA } from "../objcopy/elf-object.js";
import { writeElfObject } from "../objcopy/write.js";
import { compressBundleFile, decompressBundleFile, pruneBundleFile, replaceInBundleFile } from "./bundle-file.js";
import type { CompressContext } from "./containers.js";
import { placeText } from "./outcome.js";
import type { PruneContext } from "./outcome.js";
import { pickBundle } from "./swap.js";
import type { ReplaceContext } from "./swap.js";

export const HIP_FATBIN = ".hip_fatbin";
const ET_REL = 1;
/** A section alignment above this is refused: it would pad each bundle by that much. */
const MAX_ALIGN = 65536;

export type RelocatableOperation = "prune" | "compress" | "decompress" | "replace";
type Context = (PruneContext | CompressContext | ReplaceContext) & { readonly name: string };

/** One fat binary in `.hip_fatbin`: its offset in the section and the bytes it uses. */
interface SectionBundle {
  readonly index: number;
  readonly offset: number;
  readonly size: number;
}

/** One place that names an offset in `.hip_fatbin`: a RELA entry or a symbol. */
export interface Reference {
  /** Offset in `.hip_fatbin` it points at (symbol value + addend; a symbol's value). */
  readonly target: number;
  readonly what: string;
}

function fail(code: string, message: string, field: string): never {
  throw new OffloadKitError(code, message, { field });
}

/** Is this an ELF relocatable object with a `.hip_fatbin` section? (Any 64-byte head is not: it needs the section table.) */
export function isHipFatbinObject(bytes: Uint8Array): boolean {
  if (bytes.length <= 64 || bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46) return false;
  try {
    const obj = readElfObject(bytes);
    return obj.type === ET_REL && obj.sections.some((s) => s.name === HIP_FATBIN && s.size > 0);
  } catch {
    return false;
  }
}

function fatbinIndexOf(obj: ElfObject): number {
  const sections = obj.sections.filter((s) => s.name === HIP_FATBIN);
  if (sections.length !== 1) fail("BAD_HIP_FATBIN", `the object has ${sections.length} ${HIP_FATBIN} sections; one is expected`, HIP_FATBIN);
  return sections[0]!.inputIndex;
}

/** Relocation sections (non-allocated REL/RELA linked to the symbol table), with the section each applies to. */
export function relocationSections(obj: ElfObject) {
  return obj.sections
    .map((section, position) => ({ section, position }))
    .filter(({ section }) => (section.type === SHT_RELA || section.type === SHT_REL) && (section.flags & SHF_ALLOC) === 0n && section.link === obj.symtabIndex);
}

function symbolValue(obj: ElfObject, raw: Uint8Array): bigint {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  return obj.layout.is64 ? view.getBigUint64(8, obj.layout.little) : BigInt(view.getUint32(4, obj.layout.little));
}

/**
 * Every RELA entry and symbol that names an offset in `.hip_fatbin` (or the section `name`, the input index
 * `fatbin`: ./nv-object.ts passes `.nv_fatbin`); REL entries that do are refused.
 */
export function referencesOf(obj: ElfObject, fatbin: number, name = HIP_FATBIN): Reference[] {
  const refs: Reference[] = [];
  const inFatbin = new Map<number, bigint>();
  for (const sym of obj.symbols) {
    if (sym.section !== fatbin) continue;
    const value = symbolValue(obj, sym.raw);
    inFatbin.set(sym.index, value);
    if (value !== 0n) refs.push({ target: Number(value), what: `symbol '${sym.name}'` });
  }
  const { is64, little } = obj.layout;
  for (const { section } of relocationSections(obj)) {
    if (section.info === fatbin) fail("PRUNE_UNSUPPORTED", `${section.name} relocates ${name} itself; offload-kit does not move relocated bundle bytes`, section.name);
    const entry = section.type === SHT_RELA ? (is64 ? 24 : 12) : (is64 ? 16 : 8);
    const view = new DataView(section.data.buffer, section.data.byteOffset, section.data.byteLength);
    for (let at = 0; at + entry <= section.data.length; at += entry) {
      const symbol = is64 ? Number(view.getBigUint64(at + 8, little) >> 32n) : view.getUint32(at + 4, little) >>> 8;
      const base = inFatbin.get(symbol);
      if (base === undefined) continue;
      if (section.type === SHT_REL) fail("PRUNE_UNSUPPORTED", `${section.name} (REL, implicit addends) points into ${name}; only RELA is edited`, section.name);
      const addend = is64 ? view.getBigInt64(at + 16, little) : BigInt(view.getInt32(at + 8, little));
      refs.push({ target: Number(base + addend), what: `${section.name} entry ${at / entry}` });
    }
  }
  return refs;
}

/** The bytes a bundle or CCOB at the start of `span` uses. */
function bundleSize(span: Uint8Array, where: string): number {
  if (span.length >= 4 && isCompressedBundle(span)) return parseCcobHeader(span, 0, span.length).rawTotalSize ?? span.length;
  const read = readBinaryBundle(span);
  if (read.kind === "none") fail("WRAPPER_TARGET_NOT_A_BUNDLE", `${where}: no offload bundle or CCOB starts there${read.problem ? `: ${read.problem.message}` : ""}`, HIP_FATBIN);
  return read.bundle.extent;
}

/** The fat binaries: where the references point (a lone unreferenced bundle at 0 when none does). */
function bundlesOf(data: Uint8Array, refs: readonly Reference[]): SectionBundle[] {
  const starts = [...new Set(refs.map((r) => r.target))].sort((a, b) => a - b);
  if (starts.length === 0) starts.push(0);
  for (const ref of refs) {
    if (ref.target < 0 || ref.target >= data.length) {
      fail("BAD_HIP_FATBIN", `${ref.what} points at ${ref.target}, outside ${HIP_FATBIN} (${data.length} bytes)`, HIP_FATBIN);
    }
  }
  return starts.map((offset, index) => {
    const limit = (index + 1 < starts.length ? starts[index + 1]! : data.length) - offset;
    const size = bundleSize(data.subarray(offset, offset + limit), `${HIP_FATBIN} offset ${offset}`);
    if (size > limit) {
      fail("HIP_FATBIN_TRUNCATED", `the fat binary at ${HIP_FATBIN} offset ${offset} is ${size} bytes but only ${limit} remain before ${index + 1 < starts.length ? "the next one" : "the section's end"}`, HIP_FATBIN);
    }
    return { index, offset, size };
  });
}

/** One fat binary's new bytes, or the very array given when the operation leaves it as it is. */
function editBundle(operation: RelocatableOperation, bytes: Uint8Array, ctx: Context, where: string): Uint8Array {
  switch (operation) {
    case "prune":
      return pruneBundleFile(bytes, ctx as PruneContext, where);
    case "replace": {
      const replace = ctx as ReplaceContext;
      return pickBundle(replace, where) ? replaceInBundleFile(bytes, replace, where, true) : bytes;
    }
    case "compress": {
      const compress = ctx as CompressContext;
      return compressBundleFile(bytes, { version: compress.version, level: compress.level, codecs: compress.codecs }, placeText(ctx.name, where)) ?? bytes;
    }
    case "decompress":
      return decompressBundleFile(bytes, (ctx as CompressContext).codecs, placeText(ctx.name, where)) ?? bytes;
  }
}

function alignUp(value: number, align: number): number {
  return Math.ceil(value / align) * align;
}

/** Rewrites every RELA addend and symbol value that names a moved bundle start (`moved`: old offset → new) in `.hip_fatbin` (or `name`). */
export function moveReferences(obj: ElfObject, fatbin: number, moved: ReadonlyMap<number, number>, name = HIP_FATBIN): void {
  const { is64, little } = obj.layout;
  const newPlace = (old: number, what: string): number => {
    const place = moved.get(old);
    if (place === undefined) fail("PRUNE_UNSUPPORTED", `${what} points inside a fat binary of ${name} (offset ${old}), not at one's start`, name);
    return place;
  };
  // Symbol index → [old value, new value]; a section symbol (value 0) stays at 0, where the first bundle stays.
  const values = new Map<number, readonly [bigint, bigint]>();
  obj.symbols.forEach((sym, k) => {
    if (sym.section !== fatbin) return;
    const value = symbolValue(obj, sym.raw);
    const next = value === 0n ? 0n : BigInt(newPlace(Number(value), `symbol '${sym.name}'`));
    values.set(sym.index, [value, next]);
    if (next === value) return;
    const raw = sym.raw.slice();
    const view = new DataView(raw.buffer);
    if (is64) view.setBigUint64(8, next, little);
    else view.setUint32(4, Number(next), little);
    obj.symbols[k] = { ...sym, raw };
  });
  for (const { section, position } of relocationSections(obj)) {
    if (section.type !== SHT_RELA) continue;
    const entry = is64 ? 24 : 12;
    const original = new DataView(section.data.buffer, section.data.byteOffset, section.data.byteLength);
    let data: Uint8Array | undefined;
    for (let at = 0; at + entry <= section.data.length; at += entry) {
      const symbol = is64 ? Number(original.getBigUint64(at + 8, little) >> 32n) : original.getUint32(at + 4, little) >>> 8;
      const value = values.get(symbol);
      if (value === undefined) continue;
      const addend = is64 ? original.getBigInt64(at + 16, little) : BigInt(original.getInt32(at + 8, little));
      const next = BigInt(newPlace(Number(value[0] + addend), `${section.name} entry ${at / entry}`)) - value[1];
      if (next === addend) continue;
      data ??= section.data.slice();
      const view = new DataView(data.buffer);
      if (is64) view.setBigInt64(at + 16, next, little);
      else view.setInt32(at + 8, Number(next), little);
    }
    if (data !== undefined) obj.sections[position] = { ...section, data };
  }
}

/**
 * `operation` on every fat binary of the object's `.hip_fatbin`, the section laid out again and the
 * references moved; `bytes` itself when no fat binary changes.
 */
export function editHipFatbinObject(operation: RelocatableOperation, bytes: Uint8Array, ctx: Context, where = ""): Uint8Array {
  const obj = readElfObject(bytes);
  if (obj.type !== ET_REL) fail("PRUNE_UNSUPPORTED", `not a relocatable object (e_type ${obj.type})`, "e_type");
  const fatbin = fatbinIndexOf(obj);
  const position = obj.sections.findIndex((s) => s.inputIndex === fatbin);
  const section = obj.sections[position]!;
  const align = Math.max(1, Number(section.align));
  if ((align & (align - 1)) !== 0 || align > MAX_ALIGN) {
    fail("BAD_HIP_FATBIN", `${HIP_FATBIN}'s sh_addralign ${section.align} is not a power of two up to ${MAX_ALIGN}`, "sh_addralign");
  }
  const bundles = bundlesOf(section.data, referencesOf(obj, fatbin));
  if (bundles[0]!.offset !== 0) fail("PRUNE_UNSUPPORTED", `${HIP_FATBIN} does not start with a fat binary (the first is at offset ${bundles[0]!.offset})`, HIP_FATBIN);
  const edited = bundles.map((bundle) => {
    const inner = [where, `fat binary ${bundle.index}`].filter((w) => w !== "").join(", ");
    const original = section.data.subarray(bundle.offset, bundle.offset + bundle.size);
    return { bundle, original, bytes: editBundle(operation, original, ctx, inner) };
  });
  if (edited.every((e) => e.bytes === e.original)) return bytes;

  // The new section: each fat binary at the next multiple of the section's alignment; bytes after the last stay.
  const moved = new Map<number, number>();
  let size = 0;
  for (const e of edited) {
    const at = e.bundle.index === 0 ? 0 : alignUp(size, align);
    moved.set(e.bundle.offset, at);
    size = at + e.bytes.length;
  }
  const last = bundles[bundles.length - 1]!;
  const tail = section.data.subarray(last.offset + last.size);
  const data = new Uint8Array(size + tail.length);
  edited.forEach((e) => data.set(e.bytes, moved.get(e.bundle.offset)!));
  data.set(tail, size);

  moveReferences(obj, fatbin, moved);
  obj.sections[position] = { ...section, data, size: data.length };
  return writeElfObject(obj);
}
