/**
 * Where a linked CUDA executable or library keeps its device code, and every pointer to it: the same
 * editor as `.hip_fatbin` (./rewrite.ts packs containers and patches pointers), fed a layout read here.
 *
 * nvcc (and clang's CUDA path, CGCUDANV.cpp) emits, per translation unit, a `__fatBinC_Wrapper_t` in
 * `.nvFatBinSegment` and a constructor that hands its address to `__cudaRegisterFatBinary`; nvcc's device
 * link adds one more, version 2, for the linked device code (`__cudaRegisterLinkedBinary`). Each wrapper's
 * `data` pointer leads to one fatbin container in `.nv_fatbin` (src/formats/nv-fatbin.ts); containers sit
 * back to back, each at a multiple of 8.
 *
 * | at | size | __fatBinC_Wrapper_t field (fatbinary_section.h) |
 * |----|------|--------------------------------------------------|
 * | 0  | 4    | magic 0x466243B1                                 |
 * | 4  | 4    | version (1; 2 for the device link's)             |
 * | 8  | 8    | data (-> container)                              |
 * | 16 | 8    | filename_or_fatbins (not into `.nv_fatbin`)       |
 *
 * The pointer is found as for HIP (./hip-fatbin.ts `readWrapperPointers`: a RELATIVE addend and the copy
 * the linker stores in place, RELR, ABS64, or the stored value), and nvcc's local `fatbinData` symbols at
 * each container's start follow it. Unlike `.hip_fatbin`, every container is a fat binary to edit, whether
 * a wrapper points at it or not (nothing reads one no wrapper points at, so pruning it is safe).
 */
import { OffloadKitError } from "../engine/errors.js";
import { sliceSource } from "../engine/source.js";
import { NV_WRAPPER_MAGIC, NV_WRAPPER_SIZE, isNvFatbin, parseNvFatbinContainers } from "../formats/nv-fatbin.js";
import type { NvFatbinContainer } from "../formats/nv-fatbin.js";
import { elfEditError, hex, sectionBytes } from "./elf64.js";
import type { LinkedElf } from "./elf64.js";
import { readWrapperPointers } from "./hip-fatbin.js";
import type { FatbinBundle, HipFatbinLayout } from "./hip-fatbin.js";

export const NV_FATBIN_SECTION = ".nv_fatbin";
export const NV_FATBIN_SEGMENT_SECTION = ".nvFatBinSegment";
/** Containers are 8-aligned (the parser's padding rule; nvcc's sh_addralign). */
const NV_CONTAINER_ALIGN = 8;

export interface NvFatbinLayout extends HipFatbinLayout {
  /** Each container as parsed (offsets relative to the section), in address order, `bundles[i]` its place. */
  readonly containers: readonly NvFatbinContainer[];
  /** The versions of the wrappers pointing at each container, by index (empty: no wrapper points at it). */
  readonly wrapperVersions: readonly (readonly number[])[];
}

/** Whether the file has a `.nv_fatbin` section (what picks this layout over `.hip_fatbin`). */
export function hasNvFatbin(elf: LinkedElf): boolean {
  return elf.sections.some((s) => s.name === NV_FATBIN_SECTION);
}

/**
 * Finds `.nv_fatbin`, its containers, the wrappers and every pointer to a container. The section is read
 * whole (its containers' headers are spread through it). Throws when a wrapper is malformed or points
 * anywhere but the start of a container, and when the section does not parse as containers end to end.
 */
export function readNvFatbinLayout(elf: LinkedElf): NvFatbinLayout {
  const fatbin = elf.sections.find((s) => s.name === NV_FATBIN_SECTION);
  if (fatbin === undefined) throw elfEditError("NO_NV_FATBIN", "the ELF file has no .nv_fatbin section");
  const segment = elf.sections.find((s) => s.name === NV_FATBIN_SEGMENT_SECTION);
  if (segment === undefined) throw elfEditError("NO_NV_FATBIN", "the ELF file has .nv_fatbin but no .nvFatBinSegment (no wrapper points at it)");
  if (fatbin.offset + fatbin.size > elf.source.size) {
    throw elfEditError("NV_FATBIN_TRUNCATED", `.nv_fatbin (file offset ${hex(fatbin.offset)}, ${fatbin.size} bytes) runs past the end of the ${elf.source.size}-byte file`, fatbin.offset, ".nv_fatbin");
  }
  if (segment.size % NV_WRAPPER_SIZE !== 0) {
    throw elfEditError("BAD_NV_WRAPPER", `.nvFatBinSegment is ${segment.size} bytes, not a whole number of 24-byte __fatBinC_Wrapper_t structs`, segment.offset, ".nvFatBinSegment");
  }
  const { wrappers, sites } = readWrapperPointers(elf, fatbin, segment, {
    wrapper: "__fatBinC_Wrapper_t", magic: NV_WRAPPER_MAGIC, magicText: "0x466243B1", versions: [1, 2], badWrapperCode: "BAD_NV_WRAPPER",
  });
  let run;
  try {
    run = parseNvFatbinContainers(sectionBytes(elf, fatbin));
  } catch (e) {
    if (!(e instanceof OffloadKitError)) throw e;
    throw elfEditError("BAD_NV_FATBIN", `.nv_fatbin: ${e.message}`, fatbin.offset + (e.offset ?? 0), e.field ?? ".nv_fatbin");
  }
  if (run.trailing !== undefined) {
    throw elfEditError("BAD_NV_FATBIN", `.nv_fatbin holds ${run.trailing.size} bytes after its last container that are neither zeros nor a container`, fatbin.offset + run.trailing.offset, ".nv_fatbin");
  }
  const segmentBytes = sectionBytes(elf, segment);
  const segmentView = new DataView(segmentBytes.buffer, segmentBytes.byteOffset, segmentBytes.byteLength);
  const versionAt = (address: number) => segmentView.getUint32(address - segment.addr + 4, true);
  const bundles: FatbinBundle[] = run.containers.map((c, index) => ({
    index,
    address: fatbin.addr + c.offset,
    fileOffset: fatbin.offset + c.offset,
    size: c.size,
    format: "nv",
    source: sliceSource(elf.source, fatbin.offset + c.offset, c.size),
  }));
  const byAddress = new Map(bundles.map((b) => [b.address, b.index]));
  const wrapperVersions: number[][] = bundles.map(() => []);
  for (const [i, w] of wrappers.entries()) {
    const index = byAddress.get(w.target);
    if (index === undefined) {
      throw elfEditError(
        "WRAPPER_TARGET_NOT_A_BUNDLE",
        `__fatBinC_Wrapper_t ${i} at ${hex(w.address)} points to ${hex(w.target)}, where no fatbin container of .nv_fatbin starts`,
        segment.offset + (w.address - segment.addr) + 8,
        "data",
      );
    }
    wrapperVersions[index].push(versionAt(w.address));
  }
  return {
    elf, fatbin, segment, wrappers, bundles, sites,
    align: Math.max(NV_CONTAINER_ALIGN, fatbin.addralign),
    replacementKind: { name: "an NVIDIA fatbin container", matches: isNvFatbin },
    containers: run.containers,
    wrapperVersions,
  };
}
