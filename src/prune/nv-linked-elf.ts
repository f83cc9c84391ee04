/**
 * `prune` of the NVIDIA device code in linked executables and shared libraries: each fatbin container of
 * `.nv_fatbin` (src/formats/nv-fatbin.ts) keeps the entries the selection keeps, rewritten by the format's
 * own writer (kept entries byte for byte, the container's size field restated); the ELF editor
 * (src/elf-edit/: the same packing, pointer patching and page freeing as `.hip_fatbin`) packs the containers
 * 8-aligned, moves every `__fatBinC_Wrapper_t` pointer (RELATIVE addend and stored copy) and nvcc's
 * `fatbinData` symbols with its container, and shrinks the section. Containers no wrapper points at are
 * pruned the same way.
 *
 * Which entries stay (the CUDA driver's rules for what a GPU of compute capability X.y loads, as
 * `check --gpu` applies them: src/inspect/check.ts `checkNvEntry`):
 * - SASS `sm_NN` runs on a GPU of the same major version and a minor at least NN's (sm_80 on sm_86);
 *   `sm_NNa` (arch-specific) only on sm_NN itself; `sm_NNf` (family) like plain.
 * - PTX `compute_NN` is JIT-compiled by the driver for any GPU at NN or above (`a`: NN only; `f`: same major).
 * `--keep`: an entry stays when a listed GPU would load it; PTX a listed GPU could JIT stays too, unless
 * `--drop-ptx`. `--drop`: SASS a listed GPU would load goes; PTX stays (newer GPUs JIT it) unless
 * `--drop-ptx`, which drops the PTX a listed GPU could JIT.
 *
 * A container that would keep no entry: nvcc's device-link container holds only cubins without a single
 * kernel (one per sm_NN, placeholders); when only such cubins go, the container becomes a bare 16-byte
 * header stating size 0, which is what nvcc 13 itself writes for that container in a PTX-only build
 * (observed: `nvcc -gencode arch=compute_90,code=compute_90 -shared`). Any other container left empty is
 * refused (a launch would fail with cudaErrorNoKernelImageForDevice), unless `--allow-empty`.
 */
import { OffloadKitError } from "../engine/errors.js";
import { bytesSource } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { decodeLz4Block } from "../compress/lz4-block.js";
import type { Codecs } from "../compress/codecs.js";
import { openLinkedElf } from "../elf-edit/elf64.js";
import { hasNvFatbin, readNvFatbinLayout } from "../elf-edit/nv-fatbin.js";
import type { NvFatbinLayout } from "../elf-edit/nv-fatbin.js";
import { outputPieces, planHipFatbinRewrite } from "../elf-edit/rewrite.js";
import { NV_KIND_ELF, NV_KIND_PTX, writeNvFatbinContainer } from "../formats/nv-fatbin.js";
import type { NvFatbinContainer, NvFatbinEntry } from "../formats/nv-fatbin.js";
import { placeText } from "./outcome.js";
import type { PruneContext } from "./outcome.js";
import { planOf } from "./plan.js";
import type { OutputPlan, Piece } from "./plan.js";
import { selectionText } from "./select.js";
import type { GpuChoice, Selection } from "./select.js";
import { checkNvEntry, isNvArchId } from "../inspect/check.js";
import { transformNvContainer } from "./nv-compress.js";
import type { NvTransform } from "./nv-compress.js";

export interface NvDecision {
  readonly keep: boolean;
  readonly matched: readonly string[];
}

/** The rule of the module comment for one entry. */
export function decideNvEntry(selection: Selection, entry: Pick<NvFatbinEntry, "kind" | "archName">, dropPtx: boolean): NvDecision {
  const ptx = entry.kind === NV_KIND_PTX;
  // check --gpu's rule (src/inspect/check.ts checkNvEntry), so prune keeps exactly what check calls loadable.
  const loads = (choice: GpuChoice) => isNvArchId(entry.archName) && choice.devices.some((device) => checkNvEntry(entry.archName, device).verdict === "loadable");
  const matched = selection.gpus.filter(loads).map((choice) => choice.text);
  if (selection.mode === "keep") return { keep: matched.length > 0 && !(ptx && dropPtx), matched };
  if (ptx) return { keep: !(dropPtx && matched.length > 0), matched };
  return { keep: matched.length === 0, matched };
}

/** The payload of an entry as the driver reads it (decompressed). */
function decodedPayload(entry: NvFatbinEntry, codecs: Codecs): Uint8Array {
  if (entry.compression === "none") return entry.rawPayload;
  const packed = entry.rawPayload.subarray(0, entry.compressedSize);
  return entry.compression === "lz4" ? decodeLz4Block(packed, entry.uncompressedSize) : codecs.zstdDecompressFrame(packed, entry.uncompressedSize);
}

/**
 * Whether a cubin defines a kernel: an ELF64 section named `.text.<function>` (nvcc puts each function's
 * SASS in one). A cubin that cannot be read counts as holding kernels (nothing is assumed away).
 */
export function cubinHasKernels(entry: NvFatbinEntry, codecs: Codecs): boolean {
  let elf: Uint8Array;
  try {
    elf = decodedPayload(entry, codecs);
  } catch {
    return true;
  }
  if (elf.length < 64 || elf[0] !== 0x7f || elf[1] !== 0x45 || elf[2] !== 0x4c || elf[3] !== 0x46 || elf[4] !== 2) return true;
  const view = new DataView(elf.buffer, elf.byteOffset, elf.byteLength);
  const shoff = Number(view.getBigUint64(0x28, true));
  const shentsize = view.getUint16(0x3a, true);
  const shnum = view.getUint16(0x3c, true);
  const shstrndx = view.getUint16(0x3e, true);
  if (shentsize < 64 || shstrndx >= shnum || shoff + shnum * shentsize > elf.length) return true;
  const strOffset = Number(view.getBigUint64(shoff + shstrndx * shentsize + 24, true));
  const strSize = Number(view.getBigUint64(shoff + shstrndx * shentsize + 32, true));
  if (strOffset + strSize > elf.length) return true;
  const names = elf.subarray(strOffset, strOffset + strSize);
  const prefix = [0x2e, 0x74, 0x65, 0x78, 0x74, 0x2e]; // ".text."
  for (let i = 0; i < shnum; i++) {
    const name = view.getUint32(shoff + i * shentsize, true);
    if (name + prefix.length <= names.length && prefix.every((b, k) => names[name + k] === b)) return true;
  }
  return false;
}

function containerPlace(layout: NvFatbinLayout, index: number, where: string): string {
  const versions = layout.wrapperVersions[index];
  const pointed = versions.length === 0 ? "no wrapper points at it" : versions.includes(2) ? "device link" : "";
  return [where, `fat binary ${index}${pointed === "" ? "" : ` (${pointed})`}`].filter((w) => w !== "").join(", ");
}

/**
 * The new bytes of one container, or undefined when it keeps every entry. Records each decision in
 * `ctx.outcomes`; `inner` names the container in messages (`fat binary 1 (device link)`).
 */
export function pruneNvContainer(index: number, container: NvFatbinContainer, ctx: PruneContext, where: string, inner: string): Uint8Array | undefined {
  // Outcomes name the container by index alone: src/verify reads `fat binary N` to compare entries.
  const outcomeWhere = [where, `fat binary ${index}`].filter((w) => w !== "").join(", ");
  const kept: NvFatbinEntry[] = [];
  for (const entry of container.entries) {
    const decision = decideNvEntry(ctx.selection, entry, ctx.dropPtx ?? false);
    ctx.outcomes.push({ where: outcomeWhere, id: entry.archName, size: entry.headerSize + entry.paddedSize, kept: decision.keep, host: false, matched: decision.matched });
    if (decision.keep) kept.push(entry);
  }
  if (kept.length === container.entries.length) return undefined;
  if (kept.length === 0 && container.entries.length > 0) {
    const placeholders = container.entries.every((e) => e.kind === NV_KIND_ELF && !cubinHasKernels(e, ctx.codecs));
    if (placeholders) {
      ctx.notes.push(`${placeText(ctx.name, inner)}: holds only cubins without kernels; it is left a header stating no entries, as nvcc writes it for a PTX-only build`);
    } else if (!ctx.allowEmpty) {
      throw new OffloadKitError("PRUNE_EMPTY",
        `${placeText(ctx.name, inner)}: ${selectionText(ctx.selection)}${ctx.dropPtx ? " --drop-ptx" : ""} keeps none of the container's entries (${container.entries.map((e) => e.archName).join(", ")}); ` +
        "every launch of its kernels would fail with cudaErrorNoKernelImageForDevice (--allow-empty writes it anyway)", { field: "entries" });
    }
  }
  return writeNvFatbinContainer(kept, { header: container.rawHeader });
}

/**
 * The prune of a linked ELF file's `.nv_fatbin`, planned from the source; undefined when the file has no
 * `.nv_fatbin` (a HIP file: ./linked-elf.ts goes on), "unchanged" when every container keeps every entry.
 */
export function planNvLinkedElfPrune(source: ByteSource, ctx: PruneContext, where: string): OutputPlan | "unchanged" | undefined {
  return planNvLinkedElfEdit(source, ctx.name, where, (layout, index) => pruneNvContainer(index, layout.containers[index], ctx, where, containerPlace(layout, index, where)));
}

/** `compress` / `decompress` of a linked ELF file's NVIDIA entries (./nv-compress.ts), planned as a prune is. */
export function planNvLinkedElfTransform(
  operation: NvTransform, source: ByteSource, ctx: { readonly name: string; readonly codecs: Codecs }, where: string, onNvFatbin?: () => void,
): OutputPlan | "unchanged" | undefined {
  return planNvLinkedElfEdit(source, ctx.name, where, (layout, index) => transformNvContainer(operation, layout.containers[index], ctx.codecs), onNvFatbin);
}

/**
 * Any edit of a linked ELF file's `.nv_fatbin` containers, each replaced by what `edit` makes of it
 * (undefined: kept), packed and pointed at by the ELF editor; undefined when the file has no `.nv_fatbin`.
 * Containers may grow (decompress) as well as shrink.
 */
function planNvLinkedElfEdit(
  source: ByteSource, name: string, where: string, edit: (layout: NvFatbinLayout, index: number) => Uint8Array | undefined, onNvFatbin?: () => void,
): OutputPlan | "unchanged" | undefined {
  const elf = openLinkedElf(source);
  if (!hasNvFatbin(elf)) return undefined;
  onNvFatbin?.();
  if (elf.sections.some((s) => s.name === ".hip_fatbin")) {
    throw new OffloadKitError("UNSUPPORTED_CONTAINER", `${placeText(name, where)}: holds both .hip_fatbin and .nv_fatbin; editing a file with both is not supported`, { field: ".nv_fatbin" });
  }
  const layout = readNvFatbinLayout(elf);
  const made = new Map<ByteSource, Uint8Array>();
  const inputOffset = new Map<ByteSource, number>(layout.bundles.map((b) => [b.source, b.fileOffset]));
  const rewrite = planHipFatbinRewrite(layout, {
    bundles: (bundle) => {
      const bytes = edit(layout, bundle.index);
      if (bytes === undefined) return undefined;
      const replacement = bytesSource(bytes);
      made.set(replacement, bytes);
      return replacement;
    },
  });
  if (rewrite.bundles.every((b) => !b.replaced)) return "unchanged";
  const pieces = outputPieces(rewrite).map((piece): Piece => {
    if (piece.kind === "bytes") return { bytes: piece.bytes };
    if (piece.kind === "zeros") return { zeros: piece.length };
    if (piece.source === source) return { offset: piece.from, size: piece.length };
    const bytes = made.get(piece.source);
    if (bytes !== undefined) return { bytes: bytes.subarray(piece.from, piece.from + piece.length) };
    const offset = inputOffset.get(piece.source);
    if (offset === undefined) throw new OffloadKitError("INTERNAL", "an .nv_fatbin plan names a source it did not make");
    return { offset: offset + piece.from, size: piece.length };
  });
  const plan = planOf(pieces);
  if (plan.size !== rewrite.outputSize) throw new OffloadKitError("INTERNAL", `.nv_fatbin plan: ${plan.size} bytes planned, the editor's plan has ${rewrite.outputSize}`);
  return plan;
}
