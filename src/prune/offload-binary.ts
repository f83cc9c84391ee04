/**
 * Offload binaries (0x10FF10AD, src/formats/offload-binary.ts): a file of binaries one after another, or
 * the `.llvm.offloading` section of a relocatable object (what clang's new offload driver embeds). Each
 * image is an entry, known by `<kind>-<triple>-<arch>` (src/inspect/locate.ts `imageTargetId`); dropping
 * one drops its binary (version 1 holds one image per binary, as LLVM 19 writes). A version 2/3 binary
 * holding several images keeps its bytes when all stay and is written again with the kept ones
 * (`writeOffloadBinaryMulti`) when some go; a compressed v3 binary losing some images is refused.
 *
 * The whole run of binaries counts as one bundle for the "keeps no device entry" rule. Bytes after the
 * last binary (section padding) stay as they are. In an object, the section gets the new contents and
 * the object is written again by the in-process llvm-objcopy (src/objcopy/), every other section as
 * llvm-objcopy would keep it.
 */
import { OffloadKitError } from "../engine/errors.js";
import { concatBytes } from "../formats/bytes.js";
import { isOffloadBinary, readImageBytes, readOffloadBinaries, writeOffloadBinaryMulti } from "../formats/offload-binary.js";
import type { OffloadImage } from "../formats/offload-binary.js";
import { imageTargetId } from "../inspect/locate.js";
import { readElfObject } from "../objcopy/index.js";
import { writeElfObject } from "../objcopy/write.js";
import { placeText, selectEntries } from "./outcome.js";
import type { PruneContext } from "./outcome.js";

/** ELF section type of `.llvm.offloading` (llvm/BinaryFormat/ELF.h). */
const SHT_LLVM_OFFLOADING = 0x6fff4c0b;

export { isOffloadBinary };

/** Prunes a run of offload binaries held in memory. */
export function pruneOffloadBlob(bytes: Uint8Array, ctx: PruneContext, where = ""): Uint8Array {
  const read = readOffloadBinaries(bytes, { maxVersion: 3 });
  const entries = read.images.map((image) => ({ image, id: imageTargetId(image), size: image.imageSize }));
  const kept = new Set<OffloadImage>(selectEntries(entries, ctx, where).map((e) => e.image));
  if (kept.size === read.images.length) return bytes;
  const parts: Uint8Array[] = [];
  for (const binary of read.binaries) {
    const images = read.images.filter((image) => image.binaryOffset === binary.offset);
    const stay = images.filter((image) => kept.has(image));
    if (stay.length === 0) continue;
    if (stay.length === images.length) {
      parts.push(bytes.subarray(binary.offset, binary.offset + binary.size));
      continue;
    }
    if (binary.inflatedSize !== 0 || binary.version < 2) {
      throw new OffloadKitError("PRUNE_UNSUPPORTED",
        `${placeText(ctx.name, where)}: the offload binary at offset ${binary.offset} is compressed; dropping some of its images is not supported`,
        { offset: binary.offset, field: "inflated size" });
    }
    parts.push(writeOffloadBinaryMulti(stay.map((image) => ({
      imageKind: image.imageKind, offloadKind: image.offloadKind, flags: image.flags, strings: image.strings, image: readImageBytes(image),
    })), { version: binary.version as 2 | 3 }));
  }
  parts.push(bytes.subarray(read.end));
  return concatBytes(parts);
}

/** Does this relocatable object have a `.llvm.offloading` section? */
export function hasOffloadingSection(bytes: Uint8Array): boolean {
  try {
    return readElfObject(bytes).sections.some((s) => s.name === ".llvm.offloading" || s.type === SHT_LLVM_OFFLOADING);
  } catch {
    return false;
  }
}

/** Prunes every `.llvm.offloading` section of a relocatable object. */
export function pruneOffloadingSections(bytes: Uint8Array, ctx: PruneContext, where = ""): Uint8Array {
  const obj = readElfObject(bytes);
  let changed = false;
  obj.sections.forEach((section, i) => {
    if (section.name !== ".llvm.offloading" && section.type !== SHT_LLVM_OFFLOADING) return;
    const inner = where === "" ? `section ${section.name}` : `${where}, section ${section.name}`;
    const pruned = pruneOffloadBlob(section.data, ctx, inner);
    if (pruned === section.data) return;
    obj.sections[i] = { ...section, data: pruned, size: pruned.length };
    changed = true;
  });
  return changed ? writeElfObject(obj) : bytes;
}
