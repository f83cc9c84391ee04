/**
 * `prune` of NVIDIA device code in relocatable objects (`nvcc -c` output, and so archive members): the
 * object's `.nv_fatbin` holds one fatbin container, reached by a relocation against the section (or nvcc's
 * `fatbinData` symbol at its start) from the `__fatBinC_Wrapper_t` in `.nvFatBinSegment`. The container is
 * pruned by ./nv-linked-elf.ts's rule and writer, and the section's contents replaced through the in-process
 * llvm-objcopy (src/objcopy/, as `--update-section` would): the container stays at offset 0, so no relocation
 * or symbol changes. A `.nv_fatbin` of several containers (`ld -r` of CUDA objects), or a relocation that
 * points anywhere but its start, is refused rather than guessed at.
 */
import { OffloadKitError } from "../engine/errors.js";
import { parseNvFatbinContainers } from "../formats/nv-fatbin.js";
import { readElfObject } from "../objcopy/index.js";
import { writeElfObject } from "../objcopy/write.js";
import { pruneNvContainer } from "./nv-linked-elf.js";
import { placeText } from "./outcome.js";
import type { PruneContext } from "./outcome.js";

const ET_REL = 1;
const SHT_RELA = 4;
const SHT_REL = 9;
const NV_FATBIN = ".nv_fatbin";

/** An ELF64 little-endian relocatable object with a `.nv_fatbin` section. */
export function isNvObject(bytes: Uint8Array): boolean {
  if (bytes.length < 64 || bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46 || bytes[4] !== 2 || bytes[5] !== 1) return false;
  if ((bytes[16] | (bytes[17] << 8)) !== ET_REL) return false;
  try {
    return readElfObject(bytes).sections.some((s) => s.name === NV_FATBIN);
  } catch {
    return false;
  }
}

export function pruneNvObject(bytes: Uint8Array, ctx: PruneContext, where = ""): Uint8Array {
  const obj = readElfObject(bytes);
  const at = obj.sections.findIndex((s) => s.name === NV_FATBIN);
  const section = obj.sections[at];
  const refuse = (message: string): never => {
    throw new OffloadKitError("UNSUPPORTED_CONTAINER", `${placeText(ctx.name, where)}: ${message}`, { field: NV_FATBIN });
  };
  const run = parseNvFatbinContainers(section.data);
  if (run.trailing !== undefined) refuse(`.nv_fatbin holds ${run.trailing.size} bytes after its last container that are neither zeros nor a container`);
  if (run.containers.length !== 1) refuse(`.nv_fatbin holds ${run.containers.length} containers; only an object with one (nvcc -c output) is pruned`);
  // Every relocation into .nv_fatbin must name its start: the container stays there.
  const value = new Map(obj.symbols.map((sym) => [sym.index, { section: sym.section, value: Number(new DataView(sym.raw.buffer, sym.raw.byteOffset, sym.raw.byteLength).getBigUint64(8, true)) }]));
  for (const rel of obj.sections) {
    if (rel.type !== SHT_RELA && rel.type !== SHT_REL) continue;
    if (rel.info === section.inputIndex) refuse(`${rel.name} relocates bytes inside .nv_fatbin`);
    const size = rel.type === SHT_RELA ? 24 : 16;
    const view = new DataView(rel.data.buffer, rel.data.byteOffset, rel.data.byteLength);
    for (let i = 0; i + size <= rel.data.length; i += size) {
      const symbol = value.get(Number(view.getBigUint64(i + 8, true) >> 32n));
      if (symbol?.section !== section.inputIndex) continue;
      const addend = rel.type === SHT_RELA ? Number(view.getBigInt64(i + 16, true)) : 0;
      if (symbol.value + addend !== 0) refuse(`${rel.name} entry ${i / size} points ${symbol.value + addend} bytes into .nv_fatbin, not at its container`);
    }
  }
  const label = [where, "fat binary 0"].filter((w) => w !== "").join(", ");
  const pruned = pruneNvContainer(0, run.containers[0], ctx, where, label);
  if (pruned === undefined) return bytes;
  obj.sections[at] = { ...section, size: pruned.length, data: pruned };
  return writeElfObject(obj);
}
