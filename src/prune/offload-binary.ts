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
 *
 * `replace` writes the binary holding the entry again with the new image and the same kind, flags and strings:
 * what `clang-offload-packager` 19 writes for a version 1 binary given the same images with the new file in
 * place (it writes one binary per image, back to back); a version 2/3 binary is written again whole. Each
 * binary is a bundle for `--bundle`; in an object, the section gets the new run as in prune.
 */
import { OffloadKitError } from "../engine/errors.js";
import { concatBytes } from "../formats/bytes.js";
import { isOffloadBinary, readImageBytes, readOffloadBinaries, writeOffloadBinary, writeOffloadBinaryMulti } from "../formats/offload-binary.js";
import type { OffloadImage } from "../formats/offload-binary.js";
import { imageTargetId } from "../inspect/locate.js";
import { readElfObject } from "../objcopy/index.js";
import { writeElfObject } from "../objcopy/write.js";
import { placeText, selectEntries } from "./outcome.js";
import type { PruneContext } from "./outcome.js";
import { isReplaced, payloadBytes, pickBundle } from "./swap.js";
import type { ReplaceContext } from "./swap.js";

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

/** Replaces an image in a run of offload binaries held in memory; `bytes` itself without the entry. */
export function replaceInOffloadBlob(bytes: Uint8Array, ctx: ReplaceContext, where = ""): Uint8Array {
  const read = readOffloadBinaries(bytes, { maxVersion: 3 });
  let changed = false;
  const parts = read.binaries.map((binary, i) => {
    const original = bytes.subarray(binary.offset, binary.offset + binary.size);
    const inner = read.binaries.length === 1 ? where : [where, `offload binary ${i}`].filter((w) => w !== "").join(", ");
    if (!pickBundle(ctx, inner)) return original;
    const images = read.images.filter((image) => image.binaryOffset === binary.offset);
    const swapped = images.map((image) => isReplaced(ctx, imageTargetId(image), inner));
    if (!swapped.includes(true)) return original;
    if (binary.inflatedSize !== 0) {
      throw new OffloadKitError("REPLACE_UNSUPPORTED",
        `${placeText(ctx.name, inner)}: the offload binary at offset ${binary.offset} is compressed; replacing its images is not supported`,
        { offset: binary.offset, field: "inflated size" });
    }
    changed = true;
    const infos = images.map((image, k) => ({
      imageKind: image.imageKind, offloadKind: image.offloadKind, flags: image.flags, strings: image.strings,
      image: swapped[k] ? payloadBytes(ctx) : readImageBytes(image),
    }));
    return binary.version < 2 ? writeOffloadBinary(infos[0]) : writeOffloadBinaryMulti(infos, { version: binary.version as 2 | 3 });
  });
  if (!changed) return bytes;
  return concatBytes([...parts, bytes.subarray(read.end)]);
}

/** The `.llvm.offloading` sections of a relocatable object, each run through `edit`; `bytes` itself when none changes. */
function editOffloadingSections(bytes: Uint8Array, where: string, edit: (data: Uint8Array, where: string) => Uint8Array): Uint8Array {
  const obj = readElfObject(bytes);
  let changed = false;
  obj.sections.forEach((section, i) => {
    if (section.name !== ".llvm.offloading" && section.type !== SHT_LLVM_OFFLOADING) return;
    const inner = where === "" ? `section ${section.name}` : `${where}, section ${section.name}`;
    const edited = edit(section.data, inner);
    if (edited === section.data) return;
    obj.sections[i] = { ...section, data: edited, size: edited.length };
    changed = true;
  });
  return changed ? writeElfObject(obj) : bytes;
}

/** Replaces an image in the `.llvm.offloading` sections of a relocatable object. */
export function replaceInOffloadingSections(bytes: Uint8Array, ctx: ReplaceContext, where = ""): Uint8Array {
  return editOffloadingSections(bytes, where, (data, inner) => replaceInOffloadBlob(data, ctx, inner));
}

/** Prunes every `.llvm.offloading` section of a relocatable object. */
export function pruneOffloadingSections(bytes: Uint8Array, ctx: PruneContext, where = ""): Uint8Array {
  return editOffloadingSections(bytes, where, (data, inner) => pruneOffloadBlob(data, ctx, inner));
}
