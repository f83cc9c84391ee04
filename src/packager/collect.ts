/**
 * Every offload image in an input, the way LLVM 19's `extractOffloadBinaries` finds them
 * (llvm/lib/Object/OffloadBinary.cpp): by the input's magic (`identify_magic`),
 *
 * - an offload binary (10 FF 10 AD): the binaries back to back from byte 0;
 * - an ELF relocatable, executable or shared object: the contents of each section of type
 *   SHT_LLVM_OFFLOADING (0x6fff4c0b), in section order, each a blob of binaries;
 * - an archive: each regular member, in order, by the same rules (nested archives included);
 * - LLVM bitcode (globals listed in `!llvm.embedded.objects`): not supported here, an error;
 * - a COFF object (sections named `.llvm.offloading*`): not supported here, an error;
 * - anything else: no images, no error.
 *
 * Images are numbered across the whole input. Each carries the identifier LLVM gives its buffer (the
 * input path as given; an archive member's name), which `--archive` uses as the member name. Any malformed
 * binary is an error for the whole input, as in LLVM. Browser-safe.
 */
import type { Engine } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import { readExact, sliceSource } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { isArchive, readArchive } from "../formats/archive.js";
import { isBitcode } from "../formats/bitcode.js";
import { isElf, openElf, sectionRange } from "../formats/elf.js";
import type { ElfFile } from "../formats/elf.js";
import { isOffloadBinary, readOffloadBinaries } from "../formats/offload-binary.js";
import type { Decompressor, OffloadImage } from "../formats/offload-binary.js";

/** ELF section type of `.llvm.offloading` (llvm/BinaryFormat/ELF.h). */
export const SHT_LLVM_OFFLOADING = 0x6fff4c0b;

export type InputKind = "offload-binary" | "elf" | "archive" | "bitcode" | "coff" | "other";

export interface CollectedImage extends OffloadImage {
  /** LLVM's buffer identifier for the image: the input path, or the archive member's name. */
  readonly identifier: string;
}

export interface CollectedInput {
  readonly kind: InputKind;
  /** For ELF inputs: the parsed header (llvm-objdump prints its format). */
  readonly elf?: ElfFile;
  readonly images: readonly CollectedImage[];
}

export interface CollectOptions {
  engine?: Engine;
  decompress?: Decompressor;
  /** Newest offload binary version read: 1 as LLVM 19 (clang-offload-packager, llvm-objdump), 3 by default. */
  maxVersion?: 1 | 2 | 3;
}

const COFF_MACHINES = new Set([0x014c, 0x8664, 0x01c0, 0x01c4, 0xaa64, 0xa641, 0xa64e, 0x0200, 0x01f0, 0x01f1, 0x0166, 0x0169]);

/** `identify_magic`, narrowed to the kinds extractOffloadBinaries acts on. */
export function identifyInput(head: Uint8Array, size: number): InputKind {
  if (size < 4) return "other";
  if (isOffloadBinary(head)) return "offload-binary";
  if (isBitcode(head)) return "bitcode";
  if (isArchive(head)) return "archive";
  if (isElf(head, size)) {
    // e_type: relocatable, executable or shared object (a core file, or a high byte, is just "elf").
    const bigEndian = head[5] === 2;
    const high = head[bigEndian ? 16 : 17];
    const low = head[bigEndian ? 17 : 16];
    return high === 0 && low !== undefined && low >= 1 && low <= 3 ? "elf" : "other";
  }
  if (head.length >= 20 && COFF_MACHINES.has(head[0]! | (head[1]! << 8))) return "coff";
  return "other";
}

function collectInto(
  source: ByteSource, identifier: string, options: CollectOptions, out: CollectedImage[], depth: number,
): { kind: InputKind; elf?: ElfFile } {
  const head = readExact(source, 0, Math.min(source.size, 64));
  const kind = identifyInput(head, source.size);
  const push = (blob: ByteSource) => {
    const read = readOffloadBinaries(blob, {
      engine: options.engine, decompress: options.decompress, maxVersion: options.maxVersion, firstIndex: out.length,
    });
    for (const image of read.images) out.push({ ...image, identifier });
  };
  switch (kind) {
    case "offload-binary":
      push(source);
      return { kind };
    case "elf": {
      const elf = openElf(source);
      for (const section of elf.sections) {
        if (section.type !== SHT_LLVM_OFFLOADING) continue;
        const range = sectionRange(elf, section);
        push(sliceSource(source, range.offset, range.size));
      }
      return { kind, elf };
    }
    case "archive": {
      if (depth > 8) throw new OffloadKitError("UNSUPPORTED_ARCHIVE", "archives nested more than 8 deep are not supported");
      const archive = readArchive(source, { engine: options.engine });
      if (archive.thin) throw new OffloadKitError("UNSUPPORTED_ARCHIVE", "thin archives are not supported for offload extraction");
      for (const member of archive.members) {
        collectInto(sliceSource(source, member.dataOffset, member.size), member.name, options, out, depth + 1);
      }
      return { kind };
    }
    case "bitcode":
      throw new OffloadKitError(
        "UNSUPPORTED_BITCODE",
        "reading offload binaries embedded in LLVM bitcode (!llvm.embedded.objects) is not supported",
      );
    case "coff":
      throw new OffloadKitError("UNSUPPORTED_COFF", "reading offload binaries from COFF objects is not supported");
    default:
      return { kind };
  }
}

/** Every offload image in `source`, numbered across it; `identifier` is what LLVM would call the buffer. */
export function collectOffloadImages(source: ByteSource, identifier: string, options: CollectOptions = {}): CollectedInput {
  const images: CollectedImage[] = [];
  const { kind, elf } = collectInto(source, identifier, options, images, 0);
  return { kind, elf, images };
}

/** The bytes of an image as a source of its own (zero-copy where possible). */
export function imageSource(image: OffloadImage): ByteSource {
  return sliceSource(image.source, image.imageOffset, image.imageSize);
}
