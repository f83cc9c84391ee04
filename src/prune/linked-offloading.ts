/**
 * Linked ELF executables and shared libraries whose device images sit in an allocated `.llvm.offloading`
 * section: what clang's offload driver links for OpenMP (`-fopenmp --offload-arch=...`, LLVM 22's
 * clang-linker-wrapper). The section holds one offload binary per image (version 1: one image each;
 * src/formats/offload-binary.ts), and the wrapper module registers them through one descriptor
 * (llvm/lib/Frontend/Offloading/OffloadWrapper.cpp, openmp/include/omptarget.h):
 *
 * | struct             | at | size | field                                            |
 * |--------------------|----|------|--------------------------------------------------|
 * | __tgt_bin_desc     | 0  | 4    | NumDeviceImages                                  |
 * |                    | 8  | 8    | DeviceImages (-> __tgt_device_image[N])          |
 * |                    | 16 | 16   | HostEntriesBegin / End                           |
 * | __tgt_device_image | 0  | 8    | ImageStart (-> into its offload binary)          |
 * |                    | 8  | 8    | ImageEnd (-> its end)                            |
 * |                    | 16 | 16   | EntriesBegin / End                               |
 *
 * The constructor hands the descriptor to `__tgt_register_lib`. Every pointer is a link-time address: in
 * position-independent files an R_X86_64_RELATIVE / R_AARCH64_RELATIVE in `.rela.dyn` (its addend the
 * address; the field may hold 0 or the same), in RELR files and non-PIE executables the field itself.
 *
 * Pruning drops whole offload binaries: the kept ones are packed from the section's start (8-aligned, as
 * the linker placed them) and the ELF editor (src/elf-edit/rewrite.ts, the same layout rules as for
 * `.hip_fatbin`: the segment split where whole pages are freed) writes the section, the run handed to it
 * as one replaced "fat binary". The descriptor is found from the images themselves: the array whose slots
 * point into each binary in order, and the pointer to that array. Its slots are rewritten for the kept
 * images in order, NumDeviceImages set to their count; slots past it keep their old pointers (never read).
 * Symbols defined in the section (`.omp_offloading.device_image*`) move with their binary; those of dropped
 * binaries are left at the section's new end with size 0. `replace` writes the binary holding the entry
 * again (as ./offload-binary.ts does) and the pointers follow its image. Anything else that points into the
 * section, a multi-image binary losing some images, or a descriptor that does not match the images is
 * refused. Compressing is refused (offload binaries have no compressed form clang 22 reads).
 */
import { OffloadKitError } from "../engine/errors.js";
import { bytesSource, readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { concatBytes } from "../formats/bytes.js";
import { readOffloadBinaries, writeOffloadBinary } from "../formats/offload-binary.js";
import type { OffloadImage } from "../formats/offload-binary.js";
import { imageTargetId } from "../inspect/locate.js";
import { EM_AARCH64, SHF_ALLOC, SHT_RELA, SHT_SYMTAB, fileOffsetOf, hex, openLinkedElf, sectionBytes } from "../elf-edit/elf64.js";
import type { LinkedElf, SectionHeader } from "../elf-edit/elf64.js";
import { outputPieces, planHipFatbinRewrite } from "../elf-edit/rewrite.js";
import { placeText, selectEntries } from "./outcome.js";
import type { PruneContext } from "./outcome.js";
import { planOf } from "./plan.js";
import type { OutputPlan, Piece } from "./plan.js";
import { isReplaced, payloadBytes, pickBundle } from "./swap.js";
import type { ReplaceContext } from "./swap.js";

export const OFFLOADING_SECTION = ".llvm.offloading";
const R_X86_64_RELATIVE = 8;
const R_AARCH64_RELATIVE = 1027;
const RELA_SIZE = 24;
const SYM_SIZE = 24;
const IMAGE_STRUCT = 32;
const BINARY_ALIGN = 8;

export type LinkedOffloadingOperation = "prune" | "replace" | "compress" | "decompress";

/** A pointer-sized field: its value, and the bytes that hold it (a RELA addend and/or the field itself). */
interface Field {
  readonly address: number;
  readonly value: number;
  /** File offset of the RELA entry's addend, if a RELATIVE relocation fills the field. */
  readonly addendAt?: number;
  /** File offset of the field itself; written when it holds the value (no RELA, or a copy beside it). */
  readonly inPlaceAt?: number;
}

function failure(code: string, message: string, offset?: number, field?: string): never {
  throw new OffloadKitError(code, message, { offset, field });
}

/** The allocated `.llvm.offloading` of a linked file, if any. */
export function offloadingSectionOf(elf: LinkedElf): SectionHeader | undefined {
  return elf.sections.find((s) => s.name === OFFLOADING_SECTION && (s.flags & SHF_ALLOC) !== 0 && s.size > 0);
}

/** Does this linked file hold device images in `.llvm.offloading` and no `.hip_fatbin` (which ./linked-elf.ts edits)? */
export function hasLinkedOffloading(source: ByteSource): boolean {
  try {
    const elf = openLinkedElf(source);
    return offloadingSectionOf(elf) !== undefined && !elf.sections.some((s) => s.name === ".hip_fatbin");
  } catch {
    return false;
  }
}

/** Reads pointer fields: RELATIVE relocations by the address they fill, else the 8 bytes in the file. */
class Pointers {
  private readonly relative = new Map<number, { addend: number; at: number }>();
  constructor(private readonly elf: LinkedElf) {
    const relativeType = elf.machine === EM_AARCH64 ? R_AARCH64_RELATIVE : R_X86_64_RELATIVE;
    for (const s of elf.sections) {
      if (s.type !== SHT_RELA || (s.flags & SHF_ALLOC) === 0) continue;
      const bytes = sectionBytes(elf, s);
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let at = 0; at + RELA_SIZE <= bytes.length; at += RELA_SIZE) {
        if (Number(view.getBigUint64(at + 8, true) & 0xffffffffn) !== relativeType) continue;
        this.relative.set(Number(view.getBigUint64(at, true)), { addend: Number(view.getBigInt64(at + 16, true)), at: s.offset + at + 16 });
      }
    }
  }

  /** Every address a RELATIVE relocation fills. */
  relocated(): IterableIterator<number> {
    return this.relative.keys();
  }

  field(address: number): Field | undefined {
    const at = fileOffsetOf(this.elf, address, 8);
    const inPlace = at === undefined ? undefined : Number(new DataView(readExact(this.elf.source, at, 8).buffer).getBigUint64(0, true));
    const rela = this.relative.get(address);
    if (rela !== undefined) return { address, value: rela.addend, addendAt: rela.at, inPlaceAt: inPlace === rela.addend && inPlace !== 0 ? at : undefined };
    if (at === undefined || inPlace === undefined) return undefined;
    return { address, value: inPlace, inPlaceAt: at };
  }

  /** Candidate fields: relocated addresses, and (without relocations) every 8-byte word of writable data. */
  candidates(): number[] {
    const out = [...this.relative.keys()];
    if (out.length > 0) return out;
    for (const s of this.elf.sections) {
      if ((s.flags & SHF_ALLOC) === 0 || (s.flags & 1) === 0 || s.type !== 1) continue;
      for (let a = s.addr + ((8 - (s.addr % 8)) % 8); a + 8 <= s.addr + s.size; a += 8) out.push(a);
    }
    return out;
  }
}

/** One offload binary of the section: where it is (section-relative) and the images it holds. */
interface Binary {
  readonly offset: number;
  readonly size: number;
  readonly images: readonly OffloadImage[];
}

/** The descriptor: the image array's slots (one per image, in order) and NumDeviceImages' file offset. */
interface Descriptor {
  readonly slots: readonly (readonly Field[])[];
  /** Which binary each slot points into. */
  readonly binaryOf: readonly number[];
  readonly countAt: number;
}

function findDescriptor(elf: LinkedElf, section: SectionHeader, binaries: readonly Binary[], pointers: Pointers, images: number): Descriptor {
  const binaryAt = (value: number): number => binaries.findIndex((b) => value >= section.addr + b.offset && value <= section.addr + b.offset + b.size);
  // An image slot: ImageStart and ImageEnd into the same binary, start before end.
  const starts = new Map<number, number>();
  for (const address of pointers.candidates()) {
    const start = pointers.field(address);
    const end = pointers.field(address + 8);
    if (start === undefined || end === undefined) continue;
    const k = binaryAt(start.value);
    if (k < 0 || k !== binaryAt(end.value) || end.value <= start.value) continue;
    starts.set(address, k);
  }
  // The array: consecutive slots, one per image, the binaries in section order.
  const bases = [...starts.keys()].filter((a) => !starts.has(a - IMAGE_STRUCT)).sort((a, b) => a - b);
  const arrays = bases.map((base) => {
    const run: number[] = [];
    for (let a = base; starts.has(a); a += IMAGE_STRUCT) run.push(a);
    return run;
  }).filter((run) => run.length === images);
  if (arrays.length !== 1) {
    failure("OFFLOAD_DESCRIPTOR_NOT_FOUND",
      `no single __tgt_device_image array of ${images} images points into ${OFFLOADING_SECTION} (found ${arrays.length}); offload-kit edits only what it can find`, section.offset);
  }
  const run = arrays[0]!;
  const owners = [...pointers.relocated()].filter((address) => pointers.field(address)?.value === run[0]);
  const descriptors = (owners.length > 0 ? owners : pointers.candidates().filter((a) => pointers.field(a)?.value === run[0])).map((a) => a - 8);
  if (descriptors.length !== 1) failure("OFFLOAD_DESCRIPTOR_NOT_FOUND", `${descriptors.length} __tgt_bin_desc point to the image array at ${hex(run[0]!)}; one is expected`, section.offset);
  const countAt = fileOffsetOf(elf, descriptors[0]!, 4);
  if (countAt === undefined) failure("OFFLOAD_DESCRIPTOR_NOT_FOUND", `the __tgt_bin_desc at ${hex(descriptors[0]!)} is not in the file`, section.offset);
  const count = new DataView(readExact(elf.source, countAt, 4).buffer).getInt32(0, true);
  if (count !== images) failure("OFFLOAD_DESCRIPTOR_MISMATCH", `__tgt_bin_desc.NumDeviceImages is ${count}, but ${OFFLOADING_SECTION} holds ${images} images`, countAt, "NumDeviceImages");
  const slots = run.map((base) => [0, 8, 16, 24].map((f) => pointers.field(base + f) ?? failure("OFFLOAD_DESCRIPTOR_NOT_FOUND", `field ${hex(base + f)} of an image slot is not in the file`)));
  const binaryOf = run.map((base) => starts.get(base)!);
  if (binaryOf.some((k, i) => k !== i)) failure("OFFLOAD_DESCRIPTOR_MISMATCH", `the image array's slots do not follow ${OFFLOADING_SECTION}'s binaries in order`, section.offset);
  return { slots, binaryOf, countAt };
}

function u64Bytes(value: number, signed = false): Uint8Array {
  const out = new Uint8Array(8);
  const view = new DataView(out.buffer);
  if (signed) view.setBigInt64(0, BigInt(value), true);
  else view.setBigUint64(0, BigInt(value), true);
  return out;
}

/** The patches that make `field` hold `value`. */
function writeField(field: Field, value: number): { at: number; bytes: Uint8Array }[] {
  const out: { at: number; bytes: Uint8Array }[] = [];
  if (field.addendAt !== undefined) out.push({ at: field.addendAt, bytes: u64Bytes(value, true) });
  if (field.inPlaceAt !== undefined) out.push({ at: field.inPlaceAt, bytes: u64Bytes(value) });
  return out;
}

/**
 * Plans `operation` on a linked file with `.llvm.offloading`; "unchanged" when nothing changes. The caller
 * (./containers.ts) has checked hasLinkedOffloading.
 */
export function planLinkedOffloading(operation: LinkedOffloadingOperation, source: ByteSource, ctx: (PruneContext | ReplaceContext) & { readonly name: string }, where: string): OutputPlan | "unchanged" {
  if (operation === "decompress") return "unchanged";
  if (operation === "compress") {
    failure("UNSUPPORTED_CONTAINER", `${placeText(ctx.name, where)}: compressing is not supported for ${OFFLOADING_SECTION} in linked files (clang 22 reads no compressed offload binary)`);
  }
  const elf = openLinkedElf(source);
  const section = offloadingSectionOf(elf)!;
  const inner = [where, `section ${OFFLOADING_SECTION}`].filter((w) => w !== "").join(", ");
  const run = readOffloadBinaries(readExact(source, section.offset, section.size), { maxVersion: 3 });
  if (run.stopped !== undefined) failure(run.stopped.code, `${placeText(ctx.name, inner)}: ${run.stopped.message}`, section.offset + run.stopped.offset);
  const binaries: Binary[] = run.binaries.map((b) => ({ offset: b.offset, size: b.size, images: run.images.filter((image) => image.binaryOffset === b.offset) }));

  // Each binary's new bytes (undefined: dropped) and how its offsets map.
  let contents: (Uint8Array | undefined)[];
  let mapOffset: (k: number, offset: number) => number | undefined = (_k, offset) => offset;
  const original = (b: Binary) => readExact(source, section.offset + b.offset, b.size);
  if (operation === "prune") {
    const prune = ctx as PruneContext;
    const entries = run.images.map((image) => ({ image, id: imageTargetId(image), size: image.imageSize }));
    const kept = new Set(selectEntries(entries, prune, inner).map((e) => e.image));
    if (kept.size === run.images.length) return "unchanged";
    contents = binaries.map((b) => {
      const stay = b.images.filter((image) => kept.has(image));
      if (stay.length === 0) return undefined;
      if (stay.length !== b.images.length) {
        failure("PRUNE_UNSUPPORTED", `${placeText(ctx.name, inner)}: the offload binary at offset ${b.offset} holds several images and only some stay; linked files are edited a binary at a time`, section.offset + b.offset);
      }
      return original(b);
    });
  } else {
    const replace = ctx as ReplaceContext;
    let changed = false;
    const maps: ((offset: number) => number | undefined)[] = [];
    contents = binaries.map((b, k) => {
      maps[k] = (offset) => offset;
      const place = binaries.length === 1 ? inner : `${inner}, offload binary ${k}`;
      if (!pickBundle(replace, place)) return original(b);
      const swapped = b.images.map((image) => isReplaced(replace, imageTargetId(image), place));
      if (!swapped.includes(true)) return original(b);
      if (b.images.length !== 1 || b.images[0]!.compressed) {
        failure("REPLACE_UNSUPPORTED", `${placeText(ctx.name, place)}: only a binary holding one uncompressed image is replaced in a linked file`, section.offset + b.offset);
      }
      changed = true;
      const old = b.images[0]!;
      const bytes = writeOffloadBinary({ imageKind: old.imageKind, offloadKind: old.offloadKind, flags: old.flags, strings: old.strings, image: payloadBytes(replace) });
      const fresh = readOffloadBinaries(bytes).images[0]!;
      const oldImage = old.imageOffset - old.binaryOffset;
      const newImage = fresh.imageOffset - fresh.binaryOffset;
      // The fields point at the binary, at its image, or at either one's end.
      const known = new Map([[0, 0], [oldImage, newImage], [oldImage + old.imageSize, newImage + fresh.imageSize], [b.size, bytes.length]]);
      maps[k] = (offset) => known.get(offset);
      return bytes;
    });
    if (!changed) return "unchanged";
    mapOffset = (k, offset) => maps[k]!(offset);
  }

  // The new section: kept binaries packed at their alignment.
  const placed: (number | undefined)[] = [];
  const parts: Uint8Array[] = [];
  let size = 0;
  contents.forEach((bytes, k) => {
    if (bytes === undefined) return;
    const at = Math.ceil(size / BINARY_ALIGN) * BINARY_ALIGN;
    if (at > size) parts.push(new Uint8Array(at - size));
    placed[k] = at;
    parts.push(bytes);
    size = at + bytes.length;
  });
  const packed = concatBytes(parts);

  const pointers = new Pointers(elf);
  const descriptor = findDescriptor(elf, section, binaries, pointers, run.images.length);
  const newAddress = (k: number, value: number): number => {
    const offset = mapOffset(k, value - section.addr - binaries[k]!.offset);
    if (offset === undefined) failure("POINTER_INTO_BUNDLE", `${placeText(ctx.name, inner)}: a pointer to ${hex(value)} is inside an offload binary being replaced, not at its image`, section.offset);
    return section.addr + placed[k]! + offset;
  };
  const patches: { at: number; bytes: Uint8Array }[] = [];
  const keptSlots = descriptor.slots.map((slot, i) => ({ slot, k: descriptor.binaryOf[i]! })).filter(({ k }) => placed[k] !== undefined);
  keptSlots.forEach(({ slot, k }, j) => {
    const target = descriptor.slots[j]!;
    patches.push(...writeField(target[0]!, newAddress(k, slot[0]!.value)), ...writeField(target[1]!, newAddress(k, slot[1]!.value)));
    patches.push(...writeField(target[2]!, slot[2]!.value), ...writeField(target[3]!, slot[3]!.value));
  });
  const count = new Uint8Array(4);
  new DataView(count.buffer).setInt32(0, keptSlots.length, true);
  patches.push({ at: descriptor.countAt, bytes: count });
  // Symbols defined in the section follow their binary.
  for (const table of elf.sections) {
    if (table.type !== SHT_SYMTAB) continue;
    const bytes = sectionBytes(elf, table);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let at = SYM_SIZE; at + SYM_SIZE <= bytes.length; at += SYM_SIZE) {
      if (view.getUint16(at + 6, true) !== section.index) continue;
      const value = Number(view.getBigUint64(at + 8, true));
      const k = binaries.findIndex((b) => value >= section.addr + b.offset && value < section.addr + b.offset + b.size);
      const next = k >= 0 && placed[k] !== undefined ? newAddress(k, value) : section.addr + size;
      if (next !== value) patches.push({ at: table.offset + at + 8, bytes: u64Bytes(next) });
      if (k >= 0 && placed[k] === undefined) patches.push({ at: table.offset + at + 16, bytes: u64Bytes(0) });
    }
  }

  const rewrite = planHipFatbinRewrite({
    elf, fatbin: section, segment: section, wrappers: [], sites: [], align: Math.max(1, section.addralign),
    bundles: [{ index: 0, address: section.addr, fileOffset: section.offset, size: section.size, format: "offload binaries", source: bytesSource(readExact(source, section.offset, section.size)) }],
  }, { bundles: () => bytesSource(packed) });
  if (rewrite.relocated) failure("INTERNAL", `${OFFLOADING_SECTION} would move to a new segment though it shrinks`);
  const all = [...rewrite.patches, ...patches].sort((a, b) => a.at - b.at);
  for (let i = 1; i < all.length; i++) {
    if (all[i]!.at < all[i - 1]!.at + all[i - 1]!.bytes.length) failure("INTERNAL", `two edits overlap at input offset ${hex(all[i]!.at)}`);
  }
  const pieces = outputPieces({ ...rewrite, patches: all }).map((piece): Piece => {
    if (piece.kind === "bytes") return { bytes: piece.bytes };
    if (piece.kind === "zeros") return { zeros: piece.length };
    return piece.source === source ? { offset: piece.from, size: piece.length } : { offset: piece.from, size: piece.length, source: piece.source };
  });
  const plan = planOf(pieces);
  if (plan.size !== rewrite.outputSize) failure("INTERNAL", `linked ${OFFLOADING_SECTION} plan: ${plan.size} bytes planned, the editor's plan has ${rewrite.outputSize}`);
  return plan;
}
