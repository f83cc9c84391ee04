/**
 * A kpack'd host binary: one whose `__hip_fatbin_wrapper`s rocm-kpack turned from HIPF into HIPK
 * (ROCm/rocm-kpack e3483286 python/rocm_kpack/elf/kpack_transform.py; read by ROCm/clr when it registers the
 * fat binary, and by runtime/src/loader.cpp `kpack_load_code_object`).
 *
 * | at | size | HIPK wrapper field                                                           |
 * |----|------|------------------------------------------------------------------------------|
 * | 0  | 4    | magic 0x4B504948 ("HIPK")                                                    |
 * | 4  | 4    | version 1                                                                    |
 * | 8  | 8    | pointer to the `.rocm_kpack_ref` marker (0 in a PIE/DSO: R_*_RELATIVE addend)|
 * | 16 | 8    | low 32 bits: the wrapper's index, `co_index` (TOC key `kernel_name#co_index`)|
 *
 * `.hip_fatbin` is zero-paged by the same tool (whole pages leave the file, the section becomes NOBITS) but the
 * partial pages at its ends keep their old bytes: the device code is where the wrappers say, never there.
 * Browser-safe: reads the file through a `ByteSource`; finding the archives is src/kpack/resolve.ts.
 */
import { OffloadKitError } from "../engine/errors.js";
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { EM_AARCH64, SHF_ALLOC, SHT_RELA, SHT_RELR, fileOffsetOf, hex, openLinkedElf, sectionBytes } from "../elf-edit/elf64.js";
import type { LinkedElf } from "../elf-edit/elf64.js";
import { KPACK_MARKER_MAX_SIZE, KPACK_MARKER_SECTION, parseKpackMarker } from "../formats/kpack-marker.js";
import type { KpackMarker } from "../formats/kpack-marker.js";

export const HIPK_MAGIC = 0x4b504948;
const HIPF_MAGIC = 0x48495046;
const WRAPPER_SIZE = 24;
const R_X86_64_RELATIVE = 8;
const R_AARCH64_RELATIVE = 1027;
const RELA_SIZE = 24;

export interface KpackWrapper {
  /** Position in `.hipFatBinSegment`, from 0. */
  readonly index: number;
  /** File offset of the wrapper. */
  readonly offset: number;
  /** `co_index`: the low 32 bits at +16. */
  readonly coIndex: number;
  /** The address the pointer holds once relocated, and the file offset of that address. */
  readonly markerAddress: number;
  readonly markerOffset: number;
  readonly marker: KpackMarker;
}

export interface KpackHost {
  readonly wrappers: readonly KpackWrapper[];
  /** Wrappers still HIPF (a binary partly kpack'd): their device code is in `.hip_fatbin` as usual. */
  readonly hipfWrappers: number;
  /** Whether the file has a `.rocm_kpack_ref` section (the marker section rocm-kpack adds). */
  readonly markerSection: boolean;
}

function hostError(message: string, offset: number, field: string): OffloadKitError {
  return new OffloadKitError("KPACK_BAD_WRAPPER", message, { offset, field });
}

/** Relocated value of each RELATIVE-relocated or RELR-listed 8-byte field, by address (the rest hold their value in place). */
function relativeTargets(elf: LinkedElf): Map<number, number | "in-place"> {
  const relative = elf.machine === EM_AARCH64 ? R_AARCH64_RELATIVE : R_X86_64_RELATIVE;
  const out = new Map<number, number | "in-place">();
  for (const section of elf.sections) {
    if ((section.flags & SHF_ALLOC) === 0) continue;
    if (section.type === SHT_RELA) {
      const bytes = sectionBytes(elf, section);
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let at = 0; at + RELA_SIZE <= bytes.length; at += RELA_SIZE) {
        if (view.getUint32(at + 8, true) !== relative) continue;
        out.set(Number(view.getBigUint64(at, true)), Number(view.getBigInt64(at + 16, true)));
      }
    } else if (section.type === SHT_RELR) {
      // RELR stores the address in place: the field's own value is the target.
      const bytes = sectionBytes(elf, section);
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      let where = 0;
      for (let at = 0; at + 8 <= bytes.length; at += 8) {
        const entry = view.getBigUint64(at, true);
        if ((entry & 1n) === 0n) {
          where = Number(entry);
          out.set(where, "in-place");
          where += 8;
        } else {
          let bits = entry >> 1n;
          for (let i = 0; bits !== 0n; i++, bits >>= 1n) if (bits & 1n) out.set(where + i * 8, "in-place");
          where += 63 * 8;
        }
      }
    }
  }
  return out;
}

/** True when `head` (the first bytes of the file) is a 64-bit little-endian ELF file, the only kind rocm-kpack edits. */
function isElf64Le(head: Uint8Array): boolean {
  return head.length >= 6 && head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c && head[3] === 0x46 && head[4] === 2 && head[5] === 1;
}

/**
 * The HIPK wrappers of a kpack'd host binary and the marker each points at; `undefined` for a file that is not
 * one (not a 64-bit LE ELF file, no `.hipFatBinSegment`, or no HIPK wrapper in it). Throws our error when a
 * HIPK wrapper's pointer leads nowhere readable or to something that is not a marker.
 */
export function readKpackHost(source: ByteSource): KpackHost | undefined {
  if (!isElf64Le(readExact(source, 0, Math.min(source.size, 6)))) return undefined;
  // Only a linked ELF file rocm-kpack could have edited is looked at: any other (an object, a file the ELF
  // editor cannot read) is simply not a kpack'd host, and the locator reports what is wrong with it.
  let elf: LinkedElf;
  try {
    elf = openLinkedElf(source);
  } catch (e) {
    if (e instanceof OffloadKitError) return undefined;
    throw e;
  }
  const segment = elf.sections.find((s) => s.name === ".hipFatBinSegment");
  const markerSection = elf.sections.some((s) => s.name === KPACK_MARKER_SECTION);
  if (segment === undefined) return undefined;
  let bytes: Uint8Array;
  try {
    bytes = sectionBytes(elf, segment);
  } catch (e) {
    if (e instanceof OffloadKitError) return undefined;
    throw e;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let relocs: Map<number, number | "in-place"> | undefined;
  const wrappers: KpackWrapper[] = [];
  let hipfWrappers = 0;
  for (let at = 0; at + WRAPPER_SIZE <= bytes.length; at += WRAPPER_SIZE) {
    const magic = view.getUint32(at, true);
    if (magic === HIPF_MAGIC) hipfWrappers++;
    if (magic !== HIPK_MAGIC) continue;
    const index = at / WRAPPER_SIZE;
    const offset = segment.offset + at;
    const version = view.getUint32(at + 4, true);
    if (version !== 1) throw hostError(`HIPK wrapper ${index} at file offset ${hex(offset)} has version ${version}, not 1`, offset + 4, "version");
    relocs ??= relativeTargets(elf);
    const fieldAddress = segment.addr + at + 8;
    const stored = view.getBigUint64(at + 8, true);
    const reloc = relocs.get(fieldAddress);
    const markerAddress = typeof reloc === "number" ? reloc : Number(stored);
    const markerOffset = fileOffsetOf(elf, markerAddress);
    if (markerOffset === undefined) {
      throw hostError(`HIPK wrapper ${index} at file offset ${hex(offset)} points at ${hex(markerAddress)}, which no PT_LOAD maps from the file`, offset + 8, "binary");
    }
    const markerBytes = readExact(source, markerOffset, Math.min(KPACK_MARKER_MAX_SIZE, source.size - markerOffset));
    wrappers.push({ index, offset, coIndex: view.getUint32(at + 16, true), markerAddress, markerOffset, marker: parseKpackMarker(markerBytes, markerOffset) });
  }
  if (wrappers.length === 0) return undefined;
  return { wrappers, hipfWrappers, markerSection };
}

/** The TOC key the runtime looks up for a wrapper: `kernel_name#co_index`. */
export function kpackKey(wrapper: KpackWrapper): string {
  return `${wrapper.marker.kernelName}#${wrapper.coIndex}`;
}
