/**
 * Every AMDGPU code object in a file, found by the one locator ls/sizes/extract/check use (src/inspect/locate.ts:
 * bundle entries, compressed bundles, fat objects, offload binaries, standalone code objects, archive members),
 * and its kernels (src/kernels/kernels.ts). Browser-safe: compressed bundles are opened by whatever
 * `openCompressed` the caller gives (src/compress/node/decompress.ts in Node). NVIDIA cubins (a fatbin's SASS
 * entries, decoded; standalone `.cubin` files) are listed too (src/kernels/nv-kernels.ts), by their arch (`sm_90`);
 * zstd entries need the caller's `nvZstd`.
 *
 * A code object is read while its bytes are open (a compressed bundle's decompressed contents live only
 * during the locator's call), so only the notes, headers and symbol table of one code object are held at once.
 */
import { readExact, sliceSource } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { isAmdgpuCodeObject } from "../formats/amdgpu-code-object.js";
import { imageTargetId, locate } from "../inspect/locate.js";
import type { LocateOptions, Location } from "../inspect/locate.js";
import { listCodeObjectKernels } from "./kernels.js";
import { NV_KIND_ELF, decodeNvEntry } from "../formats/nv-fatbin.js";
import type { NvZstdDecoder } from "../formats/nv-fatbin.js";
import { bytesSource } from "../engine/source.js";
import { isOffloadKitError } from "../engine/errors.js";
import { listNvCubinKernels } from "./nv-kernels.js";
import type { CodeObjectKernels, KernelListOptions } from "./kernels.js";

/** A code object and where it was found. */
export interface FoundCodeObject extends CodeObjectKernels {
  /** The bundle's index in the file (as ls and extract count them), for bundle entries and standalone code objects. */
  readonly bundle?: number;
  /** The offload image's index, for offload binaries. */
  readonly image?: number;
  readonly section?: string;
  readonly member?: string;
  /** Set when it came out of a compressed bundle: that bundle's offset in the file. */
  readonly compressedAt?: number;
}

export interface FileKernels {
  readonly codeObjects: readonly FoundCodeObject[];
  readonly location: Location;
}

function isCodeObject(source: ByteSource): boolean {
  return source.size >= 64 && isAmdgpuCodeObject(readExact(source, 0, 20));
}

export interface CollectOptions {
  /**
   * Hands each code object on as soon as it is read instead of keeping it in `codeObjects` (left empty): a
   * library's kernels, with their metadata maps, are never all held at once (`kernels --json` streams them).
   */
  readonly onCodeObject?: (codeObject: FoundCodeObject) => void;
}

export interface NvKernelOptions {
  /** Decodes zstd-compressed fatbin entries (src/compress/node/codecs.ts in Node); without it they are reported, not read. */
  readonly nvZstd?: NvZstdDecoder;
}

/** Lists the kernels of every code object in `input`. */
export function collectKernels(input: ByteSource, options: Omit<LocateOptions, "onBundle" | "onOffloadBinaries"> & KernelListOptions & NvKernelOptions & CollectOptions = {}): FileKernels {
  const codeObjects: FoundCodeObject[] = [];
  const use = options.onCodeObject;
  const found = { push: (c: FoundCodeObject): void => void (use !== undefined ? use(c) : codeObjects.push(c)) };
  const location = locate(input, {
    ...options,
    onBundle: (bundle, contents) => {
      const where = {
        bundle: bundle.index,
        ...(bundle.section !== undefined ? { section: bundle.section } : {}),
        ...(bundle.member !== undefined ? { member: bundle.member } : {}),
      };
      if (bundle.format === "cubin") {
        const entry = bundle.entries[0]!;
        found.push({ ...listNvCubinKernels(sliceSource(contents, entry.offset, entry.size), entry.id, options), ...where });
        return;
      }
      if (bundle.format === "nv-fatbin") {
        bundle.entries.forEach((entry, i) => {
          const info = bundle.nvFatbin?.entries[i];
          if (info === undefined || info.kind !== NV_KIND_ELF) return;
          let cubin: ByteSource;
          try {
            // SASS entries are read decoded (LZ4 / zstd); a plain one is the stored bytes less the header.
            cubin = bytesSource(decodeNvEntry({ ...info, payloadOffset: info.headerOffset + info.headerSize }, readExact(contents, entry.offset, entry.size), options.nvZstd));
          } catch (e) {
            if (!isOffloadKitError(e)) throw e;
            found.push({ id: entry.id, processor: entry.id, size: entry.size, kernels: [], problem: { code: e.code, message: e.message, ...(e.offset !== undefined ? { offset: e.offset } : {}) }, ...where });
            return;
          }
          found.push({ ...listNvCubinKernels(cubin, entry.id, options), ...where });
        });
        return;
      }
      for (const entry of bundle.entries) {
        const bytes = sliceSource(contents, entry.offset, entry.size);
        if (!isCodeObject(bytes)) continue;
        found.push({
          ...listCodeObjectKernels(bytes, entry.id, options),
          bundle: bundle.index,
          ...(bundle.section !== undefined ? { section: bundle.section } : {}),
          ...(bundle.member !== undefined ? { member: bundle.member } : {}),
          ...(bundle.compressed !== undefined ? { compressedAt: bundle.compressed.offset } : {}),
        });
      }
    },
    onOffloadBinaries: (run, images) => {
      images.forEach((image, i) => {
        const bytes = sliceSource(image.source, image.imageOffset, image.imageSize);
        if (!isCodeObject(bytes)) return;
        found.push({
          ...listCodeObjectKernels(bytes, imageTargetId(run.images[i] ?? image), options),
          image: run.images[i]?.index ?? image.index,
          ...(run.section !== undefined ? { section: run.section } : {}),
          ...(run.member !== undefined ? { member: run.member } : {}),
        });
      });
    },
  });
  return { codeObjects, location };
}
