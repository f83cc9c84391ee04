/**
 * `prune`, `compress` and `decompress` of NVIDIA device code in relocatable objects (`nvcc -c` and `nvcc -rdc -c`
 * output, `ld -r` of several, and so archive members). An object's `.nv_fatbin` (`__nv_relfatbin` for -rdc
 * code, which nvlink links later) holds one fatbin container per translation unit (src/formats/nv-fatbin.ts), back to back at multiples of 8 (its sh_addralign); nothing holds an
 * address yet, so each `__fatBinC_Wrapper_t` in `.nvFatBinSegment` reaches its container through a RELA
 * entry against the section (or nvcc's local `fatbinData` symbol at the container's start):
 *
 * | relocation section        | offset | type        | symbol       | addend                  |
 * |---------------------------|--------|-------------|--------------|-------------------------|
 * | `.rela.nvFatBinSegment`   | 8      | R_X86_64_64 | `.nv_fatbin` | 0                       |
 * | `.rela.nvFatBinSegment`   | 32     | R_X86_64_64 | `.nv_fatbin` | 0x2b48 (`ld -r`: the second object's) |
 *
 * Each container is edited by ./nv-linked-elf.ts's prune rule or ./nv-compress.ts, the section laid out
 * again (containers in their order, each at the next multiple of 8, as `ld -r` placed them), and every RELA
 * addend and symbol value that named a container's start moved to its new start, as ./relocatable.ts does
 * for `.hip_fatbin`; the object is written again by the in-process llvm-objcopy (src/objcopy/). Refused
 * rather than guessed: a relocation or symbol pointing inside a container, REL entries pointing into
 * `.nv_fatbin`, relocations applied to `.nv_fatbin` itself, bytes after the last container that are not
 * zeros.
 */
import type { Codecs } from "../compress/codecs.js";
import { OffloadKitError } from "../engine/errors.js";
import { parseNvFatbinContainers } from "../formats/nv-fatbin.js";
import type { NvFatbinContainer } from "../formats/nv-fatbin.js";
import { readElfObject } from "../objcopy/index.js";
import { writeElfObject } from "../objcopy/write.js";
import { transformNvContainer } from "./nv-compress.js";
import type { NvTransform } from "./nv-compress.js";
import { pruneNvContainer } from "./nv-linked-elf.js";
import { placeText } from "./outcome.js";
import type { PruneContext } from "./outcome.js";
import { moveReferences, referencesOf } from "./relocatable.js";

const ET_REL = 1;
/** Where objects keep containers: `.nv_fatbin` (whole-program code), `__nv_relfatbin` (`-rdc` code for nvlink). */
const NV_SECTIONS = [".nv_fatbin", "__nv_relfatbin"] as const;
/** Containers start at multiples of 8 (the parser's padding rule; nvcc's sh_addralign). */
const NV_CONTAINER_ALIGN = 8;

/** An ELF64 little-endian relocatable object with a `.nv_fatbin` or `__nv_relfatbin` section. */
export function isNvObject(bytes: Uint8Array): boolean {
  if (bytes.length < 64 || bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46 || bytes[4] !== 2 || bytes[5] !== 1) return false;
  if ((bytes[16] | (bytes[17] << 8)) !== ET_REL) return false;
  try {
    return readElfObject(bytes).sections.some((s) => (NV_SECTIONS as readonly string[]).includes(s.name));
  } catch {
    return false;
  }
}

/**
 * Every container of the object's `.nv_fatbin` and `__nv_relfatbin` replaced by what `edit` makes of it
 * (undefined: kept as it is), each section laid out again and the references moved; `bytes` itself when
 * nothing changes. Containers are numbered across both sections, `.nv_fatbin`'s first.
 */
function editNvObject(bytes: Uint8Array, name: string, where: string, edit: (index: number, container: NvFatbinContainer) => Uint8Array | undefined): Uint8Array {
  const obj = readElfObject(bytes);
  let index = 0;
  let changed = false;
  for (const sectionName of NV_SECTIONS) {
    const position = obj.sections.findIndex((s) => s.name === sectionName);
    if (position < 0) continue;
    const section = obj.sections[position]!;
    const refuse = (message: string): never => {
      throw new OffloadKitError("UNSUPPORTED_CONTAINER", `${placeText(name, where)}: ${message}`, { field: sectionName });
    };
    let run;
    try {
      run = parseNvFatbinContainers(section.data);
    } catch (e) {
      if (!(e instanceof OffloadKitError)) throw e;
      throw new OffloadKitError("BAD_NV_FATBIN", `${placeText(name, where)}: ${sectionName}: ${e.message}`, { offset: e.offset, field: e.field ?? sectionName, cause: e });
    }
    if (run.trailing !== undefined) refuse(`${sectionName} holds ${run.trailing.size} bytes after its last container that are neither zeros nor a container`);
    // Checked before anything is edited: every reference names a container's start.
    const starts = new Set(run.containers.map((c) => c.offset));
    for (const ref of referencesOf(obj, section.inputIndex, sectionName)) {
      if (!starts.has(ref.target)) refuse(`${ref.what} points ${ref.target} bytes into ${sectionName}, where no container starts`);
    }
    const edited = run.containers.map((container) => ({ container, bytes: edit(index++, container) }));
    if (edited.every((e) => e.bytes === undefined)) continue;
    changed = true;
    const moved = new Map<number, number>();
    let size = 0;
    const placed = edited.map((e) => {
      const at = Math.ceil(size / NV_CONTAINER_ALIGN) * NV_CONTAINER_ALIGN;
      const out = e.bytes ?? section.data.subarray(e.container.offset, e.container.offset + e.container.size);
      moved.set(e.container.offset, at);
      size = at + out.length;
      return { at, out };
    });
    // Zeros after the last container (section padding) stay.
    const last = run.containers[run.containers.length - 1]!;
    const data = new Uint8Array(size + section.data.length - (last.offset + last.size));
    for (const p of placed) data.set(p.out, p.at);
    moveReferences(obj, section.inputIndex, moved, sectionName);
    obj.sections[position] = { ...section, size: data.length, data };
  }
  return changed ? writeElfObject(obj) : bytes;
}

function containerLabel(where: string, index: number): string {
  return [where, `fat binary ${index}`].filter((w) => w !== "").join(", ");
}

export function pruneNvObject(bytes: Uint8Array, ctx: PruneContext, where = ""): Uint8Array {
  return editNvObject(bytes, ctx.name, where, (index, container) => pruneNvContainer(index, container, ctx, where, containerLabel(where, index)));
}

/** `compress` / `decompress` of every container's entries (./nv-compress.ts). */
export function transformNvObject(operation: NvTransform, bytes: Uint8Array, ctx: { readonly name: string; readonly codecs: Codecs }, where = ""): Uint8Array {
  return editNvObject(bytes, ctx.name, where, (_index, container) => transformNvContainer(operation, container, ctx.codecs));
}
