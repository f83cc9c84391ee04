/**
 * What finding bundles reports (the shapes `offload-kit ls` prints), `scanBundles` (now the locator of
 * src/inspect/locate.ts under its first name), and `scanOffloadBinaries`: offload binaries (0x10FF10AD,
 * clang-offload-packager's format) anywhere in a file by a magic scan of every byte; at each magic, the
 * binaries that follow one another from there are read until one cannot be (a section's end, say);
 * images are numbered across the file.
 */
import type { Engine } from "../engine/engine.js";
import { findFirst } from "../engine/find.js";
import { engine as defaultEngine } from "../engine/select.js";
import { bytesSource, sliceSource } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { Window } from "../engine/window.js";
import type { AmdgpuCodeObject } from "../formats/amdgpu-code-object.js";
import type { CcobMember } from "../formats/ccob.js";
import type { NvCompression, NvCubin } from "../formats/nv-fatbin.js";
import { OFFLOAD_BINARY_MAGIC_BYTES, readOffloadBinaries } from "../formats/offload-binary.js";
import type { Decompressor } from "../formats/offload-binary.js";
import { foundImages, locate } from "./locate.js";
import type { SalvagedEntry } from "./salvage.js";

export interface FoundEntry {
  readonly id: string;
  /** Absolute position of the payload in the file. */
  readonly offset: number;
  readonly size: number;
  /** Largest power of two (up to 4096) dividing the payload's offset from the bundle start. */
  readonly align: number;
  /** Entries of `kpack` bundles: which archive entry it is, and what it takes there. */
  readonly kpack?: KpackEntryInfo;
}

/** A code object in a rocm-kpack `.kpack` archive (src/formats/kpack.ts). */
export interface KpackEntryInfo {
  /** The archive's path, for code objects a kpack'd host binary's wrapper finds in another file (src/kpack/node/resolve.ts). */
  readonly archive?: string;
  readonly key: string;
  readonly arch: string;
  readonly compression: "none" | "zstd-per-kernel";
  /** Where its stored bytes (the code object, or its zstd frame) are in the archive. */
  readonly storedOffset: number;
  readonly storedSize: number;
}

/** A `kpack` bundle: one TOC key of a `.kpack` archive, or one HIPK wrapper of a kpack'd host binary and what serves it. */
export interface KpackBundleInfo {
  /** The TOC key (`kernel_name#co_index`). */
  readonly key: string;
  /** For a host binary's wrapper: its index and `co_index`, and the marker it points at. */
  readonly wrapper?: { readonly index: number; readonly coIndex: number; readonly markerOffset: number; readonly searchPaths: readonly string[] };
}

export interface FoundBundle {
  /**
   * `object`: a fat object's entries, each an ELF section named `__CLANG_OFFLOAD_BUNDLE__<id>`;
   * `code-object`: a standalone AMDGPU code object (src/formats/amdgpu-code-object.ts), one entry that is the whole file or member;
   * `nv-fatbin`: one NVIDIA fatbin container (src/formats/nv-fatbin.ts), its entries' IDs `sm_NN` / `compute_NN`, their
   * offsets and sizes those of the payloads as stored (compressed or not; `nvFatbin` says how each decodes);
   * `cubin`: a standalone CUDA ELF file (EM_CUDA), one entry `sm_NN` that is the whole file or member.
   */
  readonly format: "binary" | "text" | "object" | "code-object" | "nv-fatbin" | "cubin" | "kpack";
  /** Where the bundle starts in the file. */
  readonly offset: number;
  /** Bytes the bundle spans (header to last payload byte). */
  readonly size: number;
  /** Text bundles: the comment that starts marker lines. */
  readonly comment?: string;
  /** Binary bundles: the alignment every payload offset is a multiple of (largest power of two up to 4096). */
  readonly align?: number;
  readonly entries: readonly FoundEntry[];
  /**
   * Set when the bundle came out of a compressed bundle (CCOB): `offset` and `size` above and the
   * entries' offsets are then positions in the decompressed bytes.
   */
  readonly compressed?: CompressedBundleInfo;
  /** `code-object`: what its ELF header says (processor, features, code object version). */
  readonly codeObject?: AmdgpuCodeObject;
  /** `nv-fatbin`: the container's version, its wrappers and each entry's header (parallel to `entries`). */
  readonly nvFatbin?: NvFatbinInfo;
  /** `cubin`: what its ELF header says. */
  readonly cubin?: NvCubin;
  /**
   * `kpack`: a TOC key of a `.kpack` archive (entries: its code objects by architecture; for zstd-per-kernel the
   * entries' offsets are positions in the decoded code objects, back to back), or a kpack'd host's HIPK wrapper.
   */
  readonly kpack?: KpackBundleInfo;
}

/** What an NVIDIA fatbin container's headers say (src/formats/nv-fatbin.ts). */
export interface NvFatbinInfo {
  readonly version: number;
  /**
   * How many `__fatBinC_Wrapper_t` point at it (0: no wrapper does, the runtime never registers it);
   * absent where no wrapper table was read (a standalone `.fatbin`, `__nv_relfatbin`, an ELF file without `.nvFatBinSegment`).
   */
  readonly wrappers?: number;
  readonly entries: readonly NvEntryInfo[];
}

export interface NvEntryInfo {
  /** 1 PTX, 2 ELF (SASS). */
  readonly kind: number;
  readonly arch: number;
  readonly flags: number;
  readonly compression: NvCompression;
  /** Where the entry's header starts in the file, and its size. */
  readonly headerOffset: number;
  readonly headerSize: number;
  readonly paddedSize: number;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  /** Bytes it decodes to (what `extract` writes, before PTX loses its NUL): the uncompressed size, or the padded size of a plain entry. */
  readonly decodedSize: number;
  readonly versionMajor: number;
  readonly versionMinor: number;
  readonly optionsOffset: number;
}

export interface CompressedBundleInfo {
  /** Where the CCOB starts in the file, and the bytes it spans (header + compressed stream). */
  readonly offset: number;
  readonly size: number;
  readonly version: number;
  readonly method: "zlib" | "zstd";
  /** As declared in the header, and as actually decompressed (LLVM accepts fewer). */
  readonly declaredSize: number;
  readonly decompressedSize: number;
  readonly storedHash: string;
  /** The truncated MD5 of the decompressed bytes, when the decompressor computed it. */
  readonly recalculatedHash?: string;
}

/** Decompresses one CCOB of the input (src/compress/node/decompress.ts in Node); scan.ts itself stays browser-safe. */
export type OpenCompressed = (
  source: ByteSource,
  member: CcobMember,
) => { readonly source: ByteSource; readonly recalculatedHash?: bigint; close(): void };

/** A CCOB found ahead of the walk: `member` offsets are relative to `blob`. */
export interface CompressedAhead {
  readonly blob: ByteSource;
  readonly member: CcobMember;
}

export interface ScanOptions {
  /** Without it, compressed bundles are reported as problems ("compressed; no decompressor given"). */
  readonly openCompressed?: OpenCompressed;
  /**
   * Told about the compressed bundles that follow the one being opened (the next run of them in a section,
   * found by their headers alone), before the walk reaches them: a decompressor may start decoding them (on
   * other threads) so they are ready when `openCompressed` is called with the same `member` objects.
   */
  readonly prefetchCompressed?: (ahead: readonly CompressedAhead[]) => void;
  /** Inflates compressed (v3) offload binaries; without it they are reported as problems. */
  readonly decompressOffload?: Decompressor;
}

/** One image of an offload binary found in a file. */
export interface FoundOffloadImage {
  /** Running index over the file's images (what llvm-objdump --offloading prints as [N]). */
  readonly index: number;
  /** Where its binary starts in the file. */
  readonly binaryOffset: number;
  readonly version: number;
  readonly imageKind: number;
  readonly offloadKind: number;
  readonly flags: number;
  readonly triple: string;
  readonly arch: string;
  /** Every key/value pair (byte strings), in stored order, a repeated key once with its last value. */
  readonly strings: readonly (readonly [string, string])[];
  /** Position of the image in the file; in the inflated bytes when `compressed`. */
  readonly offset: number;
  readonly size: number;
  readonly compressed: boolean;
}

/** Offload binaries that follow one another from one magic. */
export interface FoundOffloadBinaries {
  readonly offset: number;
  /** Bytes from the first binary's start to the last one's end. */
  readonly size: number;
  readonly binaries: number;
  readonly images: readonly FoundOffloadImage[];
}

export interface ScanProblem {
  /** Where the bundle that could not be read starts. */
  readonly offset: number;
  readonly code: string;
  readonly message: string;
  /**
   * A binary bundle whose header the strict walk rejected: the entries a lenient reading of its header
   * still finds (src/inspect/salvage.ts), each marked intact or not. Never part of `bundles`.
   */
  readonly entries?: readonly SalvagedEntry[];
}

export interface ScanReport {
  readonly size: number;
  readonly bundles: readonly FoundBundle[];
  /** Offload binaries found in the file. */
  readonly offloadBinaries?: readonly FoundOffloadBinaries[];
  /** Magic occurrences that did not lead to a readable bundle. */
  readonly problems: readonly ScanProblem[];
}

/**
 * Every bundle and offload binary in `input`, wherever it is held: the locator's answer (src/inspect/locate.ts),
 * kept under its first name.
 */
export function scanBundles(input: ByteSource | Uint8Array, engine: Engine = defaultEngine(), options: ScanOptions = {}): ScanReport {
  return locate(input, { ...options, engine });
}

/**
 * Every run of offload binaries in `input`: at each magic, the binaries back to back from there, until the
 * end or one that cannot be read. A magic where not even one binary can be read is a problem; the end of a
 * run is not (a `.llvm.offloading` section is followed by other data). Scanning resumes after each run.
 */
export function scanOffloadBinaries(
  input: ByteSource | Uint8Array, engine: Engine = defaultEngine(), options: ScanOptions = {},
): { found: FoundOffloadBinaries[]; problems: ScanProblem[] } {
  const source = input instanceof Uint8Array ? bytesSource(input) : input;
  const found: FoundOffloadBinaries[] = [];
  const problems: ScanProblem[] = [];
  const w = new Window(engine, source);
  let from = 0;
  let index = 0;
  for (;;) {
    const base = findFirst(w, OFFLOAD_BINARY_MAGIC_BYTES, from);
    if (base < 0) break;
    const read = readOffloadBinaries(sliceSource(source, base, source.size - base), {
      engine, decompress: options.decompressOffload, stopAtError: true,
    });
    if (read.binaries.length === 0) {
      const stopped = read.stopped!;
      problems.push({ offset: base, code: stopped.code, message: `offload binary: ${stopped.message}` });
      from = base + 1;
      continue;
    }
    const images = foundImages(read.images, base, index);
    index += images.length;
    found.push({ offset: base, size: read.end, binaries: read.binaries.length, images });
    from = base + read.end;
  }
  return { found, problems };
}
