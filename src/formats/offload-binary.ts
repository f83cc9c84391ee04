/**
 * Offload binaries: the 0x10FF10AD format clang-offload-packager writes and the offloading linker reads.
 *
 * Follows seed 001 ("Binary Format"), ../shared/spec/offload-binary.md and llvm/lib/Object/OffloadBinary.cpp
 * with llvm/include/llvm/Object/OffloadBinary.h. Version 1 is read and written as LLVM 19.1.7 does, byte for
 * byte; versions 2 and 3 are read as current upstream defines them. All integers little-endian; every offset
 * counts from the start of its own binary.
 *
 * | at       | size  | v1 field                        | v2 / v3                                |
 * |----------|-------|---------------------------------|----------------------------------------|
 * | 0        | 4     | 10 FF 10 AD                     |                                        |
 * | 4        | 4     | version                         |                                        |
 * | 8        | 8     | size of this binary             |                                        |
 * | 16       | 8     | entry offset (32)               | entries offset                         |
 * | 24       | 8     | entry size (40)                 | entries count                          |
 * | 32       | 8     | -                               | v3: inflated size; 0 = not compressed  |
 * | entry    | 2+2+4 | image kind, offload kind, flags |                                        |
 * |          | 8 x 4 | string-entry offset, count,     |                                        |
 * |          |       | image offset, image size        |                                        |
 * | strings  | 16    | key offset, value offset        | 24: adds value size                    |
 *
 * v1 as written: header | entry | string entries | ELF string table (llvm/string-table.ts) | zeros to 8 |
 * image | zeros to 8. Several binaries follow each other in one blob (a file, a `.llvm.offloading`
 * section); each one's `size` says where the next starts (right at the end of a v1 binary, as LLVM 19 does;
 * at the next multiple of 8 after a v2/v3 one, as upstream does). A v3 binary with a non-zero inflated size holds
 * everything after its header as one zlib or zstd stream; the caller supplies the decompressor.
 *
 * The walk runs in the engine (assembly/offload-binary.ts or its TS twin). LLVM reads strings from a
 * NUL-terminated copy of each binary, so an unterminated string ends at the binary's end and an offset
 * equal to the size is the empty string: both are accepted here as there. What LLVM does not check and
 * would read past the binary for (an image or string offset beyond it) is an error here.
 */
import type { Engine } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import {
  OFFLOAD_MAX_RECORDS, OFFLOAD_RECORD_BINARY, OFFLOAD_RECORD_ENTRY, OFFLOAD_RECORD_F64S, OFFLOAD_RECORD_STRING,
  RECORDS, RESULT, R_AUX0, R_AUX1, R_AUX2, R_COUNT, R_ERROR_POS, R_NEXT_INDEX, R_NEXT_POS,
} from "../engine/layout.js";
import { engine as defaultEngine } from "../engine/select.js";
import { bytesSource, readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { Status, statusName } from "../engine/status.js";
import type { StatusName } from "../engine/status.js";
import { Window } from "../engine/window.js";
import { buildElfStringTable } from "../llvm/string-table.js";
import { alignTo, concatBytes, latin1Decode, setU64 } from "./bytes.js";

export const OFFLOAD_BINARY_MAGIC_BYTES: Uint8Array = Uint8Array.of(0x10, 0xff, 0x10, 0xad);
/** OffloadBinary::getAlignment(). */
export const OFFLOAD_BINARY_ALIGNMENT = 8;
/** The version LLVM 19 and 22.1.8 write and read. */
export const OFFLOAD_BINARY_VERSION = 1;
/** The version LLVM 23 writes and the newest it reads (llvm PR #169425; llvm-offload-binary writes it from #197456 on). */
export const OFFLOAD_BINARY_VERSION_23 = 2;
export const OFFLOAD_HEADER_SIZE_V1 = 32;
export const OFFLOAD_HEADER_SIZE_V3 = 40;
export const OFFLOAD_ENTRY_SIZE = 40;
export const OFFLOAD_STRING_ENTRY_SIZE_V1 = 16;
export const OFFLOAD_STRING_ENTRY_SIZE_V2 = 24;

/** `object::ImageKind` (IMG_SPIRV exists from LLVM 20 on). */
export const ImageKind = {
  IMG_None: 0,
  IMG_Object: 1,
  IMG_Bitcode: 2,
  IMG_Cubin: 3,
  IMG_Fatbinary: 4,
  IMG_PTX: 5,
  IMG_SPIRV: 6,
} as const;

/**
 * `object::OffloadKind` as LLVM 19 numbers it (HIP = 3). LLVM 20 and later made the kinds bit flags:
 * see OffloadKind22. A file does not say which numbering wrote it; readers pick one (`llvm` option).
 */
export const OffloadKind19 = { OFK_None: 0, OFK_OpenMP: 1, OFK_Cuda: 2, OFK_HIP: 3 } as const;
/** `object::OffloadKind` in LLVM 22: OpenMP 1, Cuda 2, HIP 4, SYCL 8. */
export const OffloadKind22 = { OFK_None: 0, OFK_OpenMP: 1, OFK_Cuda: 2, OFK_HIP: 4, OFK_SYCL: 8 } as const;

/** Which LLVM's numbering and rules: 19 (the reference) or 22. */
export type LlvmMajor = 19 | 22;

/**
 * `getImageKind` of LLVM 23: as 19's and 22's, and `spv` is IMG_SPIRV (llvm PR #180269; 19 and 22 give IMG_None,
 * measured with 22.1.8).
 */
export function getImageKind23(extension: string): number {
  return extension === "spv" ? ImageKind.IMG_SPIRV : getImageKind(extension);
}

/** `getImageKind`: the image kind for a file extension (without the dot), case-sensitive (LLVM 19 and 22). */
export function getImageKind(extension: string): number {
  switch (extension) {
    case "o":
      return ImageKind.IMG_Object;
    case "bc":
      return ImageKind.IMG_Bitcode;
    case "cubin":
      return ImageKind.IMG_Cubin;
    case "fatbin":
      return ImageKind.IMG_Fatbinary;
    case "s":
      return ImageKind.IMG_PTX;
    default:
      return ImageKind.IMG_None;
  }
}

/** `getImageKindName`: the extension extracted images get; empty for IMG_None and unknown kinds (IMG_SPIRV too, in 19 and 22). */
export function getImageKindName(kind: number): string {
  return ["", "o", "bc", "cubin", "fatbin", "s"][kind] ?? "";
}

/** `getImageKindName` of LLVM 23: IMG_SPIRV is `spv`. */
export function getImageKindName23(kind: number): string {
  return kind === ImageKind.IMG_SPIRV ? "spv" : getImageKindName(kind);
}

/** `getOffloadKind`: `kind=` text to a value; unknown text is OFK_None. `sycl` exists from LLVM 20 on. */
export function getOffloadKind(name: string, llvm: LlvmMajor = 19): number {
  const kinds: Record<string, number> = llvm === 19 ? { openmp: 1, cuda: 2, hip: 3 } : { openmp: 1, cuda: 2, hip: 4, sycl: 8 };
  return Object.hasOwn(kinds, name) ? kinds[name]! : 0;
}

/** `getOffloadKindName`: "openmp", "cuda", "hip", ("sycl"), else "none". */
export function getOffloadKindName(kind: number, llvm: LlvmMajor = 19): string {
  const names: Record<number, string> = llvm === 19 ? { 1: "openmp", 2: "cuda", 3: "hip" } : { 1: "openmp", 2: "cuda", 4: "hip", 8: "sycl" };
  return names[kind] ?? "none";
}

/**
 * The producer of an image as the file itself says it, for offload-kit's own reports (`ls`, IDs, `check`):
 * unlike getOffloadKindName, which prints what one LLVM release prints, this reads both numberings.
 *
 * Evidence (measured here with clang-offload-packager 19.1.7 and llvm-offload-binary 22.1.8, `kind=` written
 * at byte 34 of a v1 binary): 19 writes openmp 1, cuda 2, hip 3 and has no sycl (`kind=sycl` is 0); 22 writes
 * openmp 1, cuda 2, hip 4, sycl 8. Both write format version 1, so the version does not tell them apart.
 * The change is llvm PR #135809 (merged 2025-04-15, so LLVM 21 on: OffloadKind became bit flags and OFK_SYCL
 * was added as 1 << 3); LLVM 20 still numbers HIP 3. llvm-objdump 19 prints `none` for a 4, 22 prints `none`
 * for a 3. The two numberings never give one value two meanings in an upstream release: 3 is only HIP (the
 * bit-flag reading, OpenMP|Cuda, is never written: getOffloadKind yields one kind), 4 is only HIP (19's
 * OFK_LAST, never written), 8 is only SYCL. So a version 1 image decodes 3 and 4 as hip, 8 as sycl. Versions
 * 2 and 3 exist only after the bit-flag change, so they decode by 22's table alone (a 3 there is none).
 */
export function offloadKindText(kind: number, version: number = OFFLOAD_BINARY_VERSION): string {
  if (version <= OFFLOAD_BINARY_VERSION && kind === OffloadKind19.OFK_HIP) return "hip";
  return getOffloadKindName(kind, 22);
}

/** The `kind` column of `llvm-objdump --offloading` (OffloadDump.cpp's getImageName). */
export function objdumpImageKindName(kind: number): string {
  return ["<none>", "elf", "llvm ir", "cubin", "fatbinary", "ptx"][kind] ?? "<none>";
}

export interface OffloadStringEntry {
  readonly key: string;
  readonly value: string;
  /** Positions of the key and value bytes in the image's `source`. */
  readonly keyOffset: number;
  readonly valueOffset: number;
}

/** One image: an entry of an offload binary, with its strings. */
export interface OffloadImage {
  /** Running index over every image read from the input (what llvm-objdump prints as [N]). */
  readonly index: number;
  /** Where the binary holding it starts, in the input. */
  readonly binaryOffset: number;
  readonly binarySize: number;
  readonly version: number;
  /** Position of the entry among its binary's entries (0 for v1). */
  readonly entryIndex: number;
  readonly imageKind: number;
  readonly offloadKind: number;
  readonly flags: number;
  /** Key/value pairs as LLVM's MapVector holds them: first position of a key, last value. */
  readonly strings: ReadonlyMap<string, string>;
  /** The string entries as stored, duplicates included. */
  readonly stringEntries: readonly OffloadStringEntry[];
  readonly triple: string;
  readonly arch: string;
  /** Where the image bytes are: the input itself, or the inflated copy of a compressed binary. */
  readonly source: ByteSource;
  readonly imageOffset: number;
  readonly imageSize: number;
  /** Whether it came out of a compressed (v3) binary. */
  readonly compressed: boolean;
}

export interface OffloadBinaryHeader {
  readonly offset: number;
  readonly version: number;
  readonly size: number;
  readonly entriesOffset: number;
  /** v1: the entry size field; v2 and later: the entry count. */
  readonly entriesField: number;
  readonly inflatedSize: number;
}

export interface OffloadBinaries {
  readonly binaries: readonly OffloadBinaryHeader[];
  readonly images: readonly OffloadImage[];
  /** With `stopAtError`: the binary that could not be read (its start), and why. */
  readonly stopped?: { readonly offset: number; readonly code: string; readonly message: string };
  /** End of the last binary read. */
  readonly end: number;
}

export type Decompressor = (format: "zlib" | "zstd", data: Uint8Array, inflatedSize: number) => Uint8Array;

export interface ReadOffloadOptions {
  engine?: Engine;
  /** Reuse a window over the same source. */
  window?: Window;
  /** Inflates compressed (v3) binaries; without one they are an error. */
  decompress?: Decompressor;
  /** First running index (for callers that number images across several blobs). */
  firstIndex?: number;
  /**
   * How far the engine window may grow when one binary's metadata (header, entries, string entries,
   * strings) is spread wider than it: default 16 MiB. Beyond that the binary is refused as unsupported.
   */
  maxWindow?: number;
  /**
   * Stop at the first binary that cannot be read instead of failing: the binaries before it are returned,
   * and `stopped` says why and where (for scanning files where binaries are followed by other data).
   */
  stopAtError?: boolean;
  /** The newest version accepted: 3 (current upstream, the default) or 1 (what LLVM 19 and 22.1.8 read). */
  maxVersion?: 1 | 2 | 3;
}

/**
 * How much a metadata load reads: binaries are mostly image, and their headers, entries and strings take
 * a few hundred bytes, so reading the whole window (1 MiB) at each binary of a large file would copy
 * megabytes for nothing (measured: 8 x 1 MiB per 8-image file).
 */
const METADATA_PROBE = 64 * 1024;

/** Default limit for growing the window over spread-out metadata. */
export const OFFLOAD_MAX_METADATA_WINDOW = 16 << 20;

export function isOffloadBinary(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && OFFLOAD_BINARY_MAGIC_BYTES.every((b, i) => bytes[i] === b);
}

const PARSE_FAILED = "Invalid data was encountered while parsing the file";
const UNEXPECTED_EOF = "The end of the file was unexpectedly encountered";

const FIELD_NAMES: Partial<Record<StatusName, string>> = {
  OFFLOAD_BAD_MAGIC: "magic",
  OFFLOAD_HEADER_TRUNCATED: "header",
  OFFLOAD_BAD_VERSION: "version",
  OFFLOAD_SIZE_OUT_OF_BOUNDS: "size",
  OFFLOAD_ENTRIES_OUT_OF_BOUNDS: "entries",
  OFFLOAD_COMPRESSED_OUT_OF_BOUNDS: "inflated size",
  OFFLOAD_IMAGE_OUT_OF_BOUNDS: "image",
  OFFLOAD_STRINGS_OUT_OF_BOUNDS: "string entries",
  OFFLOAD_KEY_OUT_OF_BOUNDS: "key offset",
  OFFLOAD_VALUE_OUT_OF_BOUNDS: "value offset",
  OFFLOAD_METADATA_TOO_WIDE: "string entries",
};

/**
 * The text LLVM prints for an offload-binary error code (object_error::parse_failed or unexpected_eof),
 * for CLIs that must print what the native tool prints. Undefined for codes LLVM has no counterpart for.
 */
export function llvmOffloadErrorText(code: string): string | undefined {
  switch (code) {
    case "OFFLOAD_BAD_MAGIC":
    case "OFFLOAD_HEADER_TRUNCATED":
    case "OFFLOAD_BAD_VERSION":
    case "OFFLOAD_INFLATED_SIZE_MISMATCH":
      return PARSE_FAILED;
    case "OFFLOAD_SIZE_OUT_OF_BOUNDS":
    case "OFFLOAD_ENTRIES_OUT_OF_BOUNDS":
    case "OFFLOAD_COMPRESSED_OUT_OF_BOUNDS":
    case "OFFLOAD_IMAGE_OUT_OF_BOUNDS":
    case "OFFLOAD_STRINGS_OUT_OF_BOUNDS":
    case "OFFLOAD_KEY_OUT_OF_BOUNDS":
    case "OFFLOAD_VALUE_OUT_OF_BOUNDS":
      return UNEXPECTED_EOF;
    default:
      return undefined;
  }
}

function describe(code: StatusName, binaryOffset: number, errorPos: number, w: Window): string {
  const at = `offload binary at offset ${binaryOffset}`;
  const u64 = (pos: number): string => {
    if (!w.holds(pos, 8)) return "?";
    const v = w.view(pos, 8);
    let value = 0n;
    for (let i = 7; i >= 0; i--) value = (value << 8n) | BigInt(v[i]!);
    return value.toString();
  };
  switch (code) {
    case "OFFLOAD_BAD_MAGIC":
      return `${PARSE_FAILED}: no offload binary magic (10 FF 10 AD) at offset ${errorPos}`;
    case "OFFLOAD_HEADER_TRUNCATED":
      return `${PARSE_FAILED}: ${at} is truncated (too few bytes left for its header)`;
    case "OFFLOAD_BAD_VERSION":
      return `${PARSE_FAILED}: ${at} has unsupported version ${w.holds(errorPos, 4) ? new DataView(w.view(errorPos, 4).slice().buffer).getUint32(0, true) : "?"}`;
    case "OFFLOAD_SIZE_OUT_OF_BOUNDS":
      return `${UNEXPECTED_EOF}: ${at} declares size ${u64(errorPos)}, outside the bytes available`;
    case "OFFLOAD_METADATA_TOO_WIDE":
      return `unsupported offload binary: the metadata of the ${at} is spread over more than the ${w.engine.windowCapacity}-byte window`;
    default:
      return `${UNEXPECTED_EOF}: the ${FIELD_NAMES[code] ?? "field"} of the ${at} (field at offset ${errorPos}, value ${u64(errorPos)}) is outside the binary`;
  }
}

interface PendingImage {
  binary: OffloadBinaryHeader;
  entryIndex: number;
  imageKind: number;
  offloadKind: number;
  flags: number;
  imageOffset: number;
  imageSize: number;
  stringEntries: OffloadStringEntry[];
}

/** One blob walked by the engine: binaries with their images, compressed ones set aside. */
interface Walked {
  binaries: OffloadBinaryHeader[];
  /** Per binary, its images; null for a compressed binary (inflated afterwards). */
  images: (PendingImage[] | null)[];
  /** The error that ended the walk (the failing binary's records are dropped). */
  error?: { binaryOffset: number; error: OffloadKitError };
}

function walk(source: ByteSource, engine: Engine, w: Window, maxWindow: number, stopAtError: boolean, maxVersion: number): Walked {
  const size = source.size;
  const base = RESULT >>> 3;
  const binaries: OffloadBinaryHeader[] = [];
  const images: (PendingImage[] | null)[] = [];
  let current: PendingImage | undefined;
  let position = 0;
  let entry = -1;
  let string = -1;
  if (size > 0 && !w.holds(0, Math.min(size, OFFLOAD_HEADER_SIZE_V3))) w.load(0, METADATA_PROBE);
  while (position < size) {
    const status = engine.walkOffloadBinaries(w.position, w.length, size, position, entry, string, OFFLOAD_MAX_RECORDS, maxVersion);
    const f64 = engine.views().f64;
    const written = f64[base + R_COUNT]!;
    for (let k = 0; k < written; k++) {
      const r = (RECORDS >>> 3) + k * OFFLOAD_RECORD_F64S;
      const type = f64[r];
      if (type === OFFLOAD_RECORD_BINARY) {
        const inflatedSize = f64[r + 6]!;
        binaries.push({ offset: f64[r + 1]!, version: f64[r + 2]!, size: f64[r + 3]!, entriesOffset: f64[r + 4]!, entriesField: f64[r + 5]!, inflatedSize });
        images.push(inflatedSize !== 0 ? null : []);
      } else if (type === OFFLOAD_RECORD_ENTRY) {
        current = {
          binary: binaries[binaries.length - 1]!,
          entryIndex: f64[r + 9]!,
          imageKind: f64[r + 2]!,
          offloadKind: f64[r + 3]!,
          flags: f64[r + 4]!,
          imageOffset: f64[r + 7]!,
          imageSize: f64[r + 8]!,
          stringEntries: [],
        };
        images[images.length - 1]!.push(current);
      } else if (type === OFFLOAD_RECORD_STRING) {
        const keyOffset = f64[r + 2]!;
        const valueOffset = f64[r + 4]!;
        current!.stringEntries.push({
          key: latin1Decode(w.view(keyOffset, f64[r + 3]!)),
          value: latin1Decode(w.view(valueOffset, f64[r + 5]!)),
          keyOffset,
          valueOffset,
        });
      }
    }
    position = f64[base + R_NEXT_POS]!;
    entry = f64[base + R_NEXT_INDEX]!;
    string = f64[base + R_AUX0]!;
    if (status === Status.DONE) break;
    if (status === Status.MORE) {
      const needLo = f64[base + R_AUX1]!;
      if (needLo >= 0) w.load(needLo, Math.max(METADATA_PROBE, f64[base + R_AUX2]! - needLo));
      continue;
    }
    const code = statusName(status) ?? "OFFLOAD_BAD_MAGIC";
    const errorPos = f64[base + R_ERROR_POS]!;
    if (code === "OFFLOAD_METADATA_TOO_WIDE" && w.length < engine.windowCapacity && w.end < size) {
      // The window was a probe: read all it can hold from the same place before calling it too wide.
      w.load(f64[base + R_AUX1]!);
      continue;
    }
    if (code === "OFFLOAD_METADATA_TOO_WIDE" && engine.windowCapacity < maxWindow) {
      // Rare (LLVM writes metadata contiguously): widen the window and retry the same step.
      // Read the wanted range first: growing Wasm memory detaches the `f64` view.
      const needLo = f64[base + R_AUX1]!;
      const span = f64[base + R_AUX2]! - needLo;
      engine.reserveWindow(Math.min(maxWindow, Math.max(engine.windowCapacity * 2, span)));
      w.load(needLo);
      continue;
    }
    const error = new OffloadKitError(code, describe(code, position, errorPos, w), { offset: errorPos, field: FIELD_NAMES[code] });
    if (!stopAtError) throw error;
    const keep = binaries.findIndex((binary) => binary.offset >= position);
    if (keep >= 0) {
      binaries.length = keep;
      images.length = keep;
    }
    return { binaries, images, error: { binaryOffset: position, error } };
  }
  return { binaries, images };
}

const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

/** Rebuilds a compressed v3 binary as LLVM's decompressOffloadBinary does: header with size = inflated size. */
function inflateBinary(source: ByteSource, header: OffloadBinaryHeader, decompress: Decompressor | undefined): Uint8Array {
  const compressed = readExact(source, header.offset + header.entriesOffset, header.size - header.entriesOffset);
  const format = ZSTD_MAGIC.every((b, i) => compressed[i] === b) ? "zstd" : "zlib";
  if (decompress === undefined) {
    throw new OffloadKitError("UNSUPPORTED_COMPRESSED", `the offload binary at offset ${header.offset} is ${format}-compressed, and no decompressor was given`, {
      offset: header.offset,
    });
  }
  let body: Uint8Array;
  try {
    body = decompress(format, compressed, header.inflatedSize - header.entriesOffset);
  } catch (e) {
    if (e instanceof OffloadKitError) throw e;
    throw new OffloadKitError("OFFLOAD_DECOMPRESS_FAILED", `${format} error: ${e instanceof Error ? e.message : String(e)}`, {
      offset: header.offset + header.entriesOffset,
      field: "compressed data",
      cause: e,
    });
  }
  if (header.entriesOffset + body.length !== header.inflatedSize) {
    throw new OffloadKitError(
      "OFFLOAD_INFLATED_SIZE_MISMATCH",
      `${PARSE_FAILED}: the offload binary at offset ${header.offset} inflates to ${header.entriesOffset + body.length} bytes, not ${header.inflatedSize}`,
      { offset: header.offset + 32, field: "inflated size" },
    );
  }
  const restored = readExact(source, header.offset, header.entriesOffset);
  const view = new DataView(restored.buffer, restored.byteOffset, restored.byteLength);
  setU64(view, 8, header.inflatedSize);
  if (restored.length >= 40) setU64(view, 32, 0);
  return concatBytes([restored, body]);
}

/**
 * Reads every offload binary in `input` (a blob of binaries back to back: a raw file, or a section's
 * contents), in order, like LLVM's extractOffloadFiles. Any malformed binary is an error for the whole
 * input, as there. An empty input holds no binaries.
 */
export function readOffloadBinaries(input: ByteSource | Uint8Array, options: ReadOffloadOptions = {}): OffloadBinaries {
  const source = input instanceof Uint8Array ? bytesSource(input) : input;
  const engine = options.window?.engine ?? options.engine ?? defaultEngine();
  const w = options.window ?? new Window(engine, source);
  const maxWindow = options.maxWindow ?? OFFLOAD_MAX_METADATA_WINDOW;
  const stopAtError = options.stopAtError ?? false;
  const maxVersion = options.maxVersion ?? 3;
  const walked = walk(source, engine, w, maxWindow, stopAtError, maxVersion);
  const images: OffloadImage[] = [];
  let index = options.firstIndex ?? 0;
  const finish = (pending: PendingImage, from: ByteSource, compressed: boolean, binary: OffloadBinaryHeader): void => {
    const strings = new Map<string, string>();
    for (const s of pending.stringEntries) strings.set(s.key, s.value);
    images.push({
      index: index++,
      binaryOffset: binary.offset,
      binarySize: binary.size,
      version: binary.version,
      entryIndex: pending.entryIndex,
      imageKind: pending.imageKind,
      offloadKind: pending.offloadKind,
      flags: pending.flags,
      strings,
      stringEntries: pending.stringEntries,
      triple: strings.get("triple") ?? "",
      arch: strings.get("arch") ?? "",
      source: from,
      imageOffset: pending.imageOffset,
      imageSize: pending.imageSize,
      compressed,
    });
  };
  let stopped = walked.error === undefined ? undefined : { offset: walked.error.binaryOffset, code: walked.error.error.code, message: walked.error.error.message };
  const binaries: OffloadBinaryHeader[] = [];
  for (const [b, binary] of walked.binaries.entries()) {
    const pending = walked.images[b];
    if (pending !== null && pending !== undefined) {
      for (const image of pending) finish(image, source, false, binary);
      binaries.push(binary);
      continue;
    }
    try {
      const inner = bytesSource(inflateBinary(source, binary, options.decompress));
      const innerWalk = walk(inner, engine, new Window(engine, inner), maxWindow, false, maxVersion);
      for (const image of innerWalk.images.flatMap((list) => list ?? [])) finish(image, inner, true, binary);
      binaries.push(binary);
    } catch (e) {
      if (!stopAtError || !(e instanceof OffloadKitError)) throw e;
      stopped = { offset: binary.offset, code: e.code, message: e.message };
      break;
    }
  }
  const last = binaries[binaries.length - 1];
  return { binaries, images, stopped, end: last === undefined ? 0 : last.offset + last.size };
}

/** readOffloadBinaries over bytes in memory. */
export function parseOffloadBinaries(bytes: Uint8Array, options: Omit<ReadOffloadOptions, "window"> = {}): OffloadBinaries {
  return readOffloadBinaries(bytesSource(bytes), options);
}

/** The bytes of an image read by readOffloadBinaries. */
export function readImageBytes(image: OffloadImage): Uint8Array {
  return readExact(image.source, image.imageOffset, image.imageSize);
}

/** What OffloadBinary::write takes, less the image bytes (OffloadBinary::OffloadingImage). */
export interface OffloadingImageInfo {
  readonly imageKind: number;
  readonly offloadKind: number;
  readonly flags?: number;
  /**
   * The string data in the order to write it. A repeated key keeps its first position and takes the last
   * value, as in LLVM's MapVector. Keys and values are byte strings without NUL.
   */
  readonly strings: Iterable<readonly [string, string]>;
}

/** The string data as LLVM's MapVector keeps it; keys (and v1 values) cannot hold a NUL, C strings as they are. */
function stringData(info: OffloadingImageInfo, valuesAreCStrings: boolean): Map<string, string> {
  const data = new Map<string, string>();
  for (const [key, value] of info.strings) {
    for (const text of valuesAreCStrings ? [key, value] : [key]) {
      if (text.includes("\0")) throw new OffloadKitError("BAD_STRING", `offload binary strings cannot contain NUL bytes: ${JSON.stringify(text)}`);
    }
    data.set(key, value);
  }
  return data;
}

function putHeader(view: DataView, version: number, size: number, entriesOffset: number, fifth: number): void {
  OFFLOAD_BINARY_MAGIC_BYTES.forEach((byte, i) => view.setUint8(i, byte));
  view.setUint32(4, version, true);
  setU64(view, 8, size);
  setU64(view, 16, entriesOffset);
  setU64(view, 24, fifth);
}

function putEntry(view: DataView, at: number, info: OffloadingImageInfo, strings: number, count: number, image: number, imageSize: number): void {
  view.setUint16(at, info.imageKind, true);
  view.setUint16(at + 2, info.offloadKind, true);
  view.setUint32(at + 4, info.flags ?? 0, true);
  setU64(view, at + 8, strings);
  setU64(view, at + 16, count);
  setU64(view, at + 24, image);
  setU64(view, at + 32, imageSize);
}

export interface OffloadBinaryLayout {
  /** Everything before the image: header, entry, string entries, string table and padding. */
  readonly head: Uint8Array;
  readonly imageOffset: number;
  /** Zero bytes after the image. */
  readonly tailPadding: number;
  /** Total size of the binary. */
  readonly size: number;
}

/**
 * Lays out a version 1 binary for an image of `imageSize` bytes, byte-identical to LLVM 19's
 * OffloadBinary::write; the image and `tailPadding` zeros follow `head`. Lets callers stream large images.
 */
export function layoutOffloadBinary(info: OffloadingImageInfo, imageSize: number): OffloadBinaryLayout {
  const data = stringData(info, true);
  const table = buildElfStringTable([...data].flat());
  const stringsStart = OFFLOAD_HEADER_SIZE_V1 + OFFLOAD_ENTRY_SIZE;
  const tableStart = stringsStart + OFFLOAD_STRING_ENTRY_SIZE_V1 * data.size;
  const imageOffset = alignTo(tableStart + table.bytes.length, OFFLOAD_BINARY_ALIGNMENT);
  const size = alignTo(imageOffset + imageSize, OFFLOAD_BINARY_ALIGNMENT);
  const head = new Uint8Array(imageOffset);
  const view = new DataView(head.buffer);
  putHeader(view, OFFLOAD_BINARY_VERSION, size, OFFLOAD_HEADER_SIZE_V1, OFFLOAD_ENTRY_SIZE);
  putEntry(view, OFFLOAD_HEADER_SIZE_V1, info, stringsStart, data.size, imageOffset, imageSize);
  let at = stringsStart;
  for (const [key, value] of data) {
    setU64(view, at, tableStart + table.offsets.get(key)!);
    setU64(view, at + 8, tableStart + table.offsets.get(value)!);
    at += OFFLOAD_STRING_ENTRY_SIZE_V1;
  }
  head.set(table.bytes, tableStart);
  return { head, imageOffset, tailPadding: size - imageOffset - imageSize, size };
}

export type Compressor = (format: "zlib" | "zstd", data: Uint8Array) => Uint8Array;

/** Where a multi-entry binary puts each image, laid out before any image byte is read. */
export interface OffloadBinaryMultiLayout {
  /** Header, entries, string entries, string table and padding: everything before the first image. */
  readonly head: Uint8Array;
  /** Where each image starts (they follow each other with no padding between them). */
  readonly imageOffsets: readonly number[];
  /** Zero bytes after the last image. */
  readonly tailPadding: number;
  readonly size: number;
}

/**
 * Lays out a version 2 or 3 binary (`OffloadBinary::write(ArrayRef<OffloadingImage>)`) for images of the given
 * sizes: header (32 bytes in v2, 40 in v3), all entries, then all string entries (24 bytes each, with the value
 * size), one ELF string table over every image's strings, zeros to 8; the images follow back to back, then zeros
 * to 8. Version 2 is what LLVM 23 writes (llvm PR #169425, Version = 2; llvm-offload-binary writes one such binary
 * for all its `--image`s from PR #197456 on); version 3 is current upstream (PR #222774, after LLVM 23).
 * No image at all is allowed: LLVM only asserts against it, so a release build writes a header with entry
 * count 0, the one-byte string table and padding (40 bytes in v2).
 */
export function layoutOffloadBinaryMulti(infos: readonly OffloadingImageInfo[], imageSizes: readonly number[], version: 2 | 3 = 3): OffloadBinaryMultiLayout {
  const headerSize = version >= 3 ? OFFLOAD_HEADER_SIZE_V3 : OFFLOAD_HEADER_SIZE_V1;
  const data = infos.map((info) => stringData(info, false));
  const table = buildElfStringTable(data.flatMap((strings) => [...strings].flat()));
  const totalStrings = data.reduce((n, strings) => n + strings.size, 0);
  const entriesSize = OFFLOAD_ENTRY_SIZE * infos.length;
  const tableStart = headerSize + entriesSize + OFFLOAD_STRING_ENTRY_SIZE_V2 * totalStrings;
  const imagesStart = alignTo(tableStart + table.bytes.length, OFFLOAD_BINARY_ALIGNMENT);
  const imagesEnd = imagesStart + imageSizes.reduce((n, size) => n + size, 0);
  const size = alignTo(imagesEnd, OFFLOAD_BINARY_ALIGNMENT);
  const head = new Uint8Array(imagesStart);
  const view = new DataView(head.buffer);
  putHeader(view, version, size, headerSize, infos.length);
  let stringEntry = headerSize + entriesSize;
  let imageAt = imagesStart;
  const imageOffsets: number[] = [];
  infos.forEach((info, i) => {
    putEntry(view, headerSize + OFFLOAD_ENTRY_SIZE * i, info, stringEntry, data[i]!.size, imageAt, imageSizes[i]!);
    for (const [key, value] of data[i]!) {
      setU64(view, stringEntry, tableStart + table.offsets.get(key)!);
      setU64(view, stringEntry + 8, tableStart + table.offsets.get(value)!);
      setU64(view, stringEntry + 16, value.length);
      stringEntry += OFFLOAD_STRING_ENTRY_SIZE_V2;
    }
    imageOffsets.push(imageAt);
    imageAt += imageSizes[i]!;
  });
  head.set(table.bytes, tableStart);
  return { head, imageOffsets, tailPadding: size - imagesEnd, size };
}

/**
 * The multi-entry writer in memory (layoutOffloadBinaryMulti with the images copied in): version 3 by default,
 * or version 2 (what LLVM 23 writes). With `compress`, a v3 binary's bytes after the header are replaced by one
 * compressed stream and the header records the inflated size (OffloadBinary::write with compression::Params).
 * LLVM 19 and 22 cannot read what this writes; LLVM 23 reads version 2.
 */
export function writeOffloadBinaryMulti(
  images: readonly (OffloadingImageInfo & { readonly image: Uint8Array })[],
  options: { version?: 2 | 3; compress?: { format: "zlib" | "zstd"; compressor: Compressor } } = {},
): Uint8Array {
  const version = options.version ?? 3;
  if (images.length === 0) throw new OffloadKitError("NO_IMAGES", "at least one offloading image is required");
  const headerSize = version >= 3 ? OFFLOAD_HEADER_SIZE_V3 : OFFLOAD_HEADER_SIZE_V1;
  const layout = layoutOffloadBinaryMulti(images, images.map((info) => info.image.length), version);
  const size = layout.size;
  const out = new Uint8Array(size);
  out.set(layout.head, 0);
  images.forEach((info, i) => out.set(info.image, layout.imageOffsets[i]!));
  if (options.compress === undefined) return out;
  if (version < 3) throw new OffloadKitError("BAD_ARGUMENT", "only version 3 offload binaries can be compressed");
  const packed = options.compress.compressor(options.compress.format, out.subarray(headerSize));
  const packedSize = headerSize + packed.length;
  const result = new Uint8Array(alignTo(packedSize, OFFLOAD_BINARY_ALIGNMENT));
  result.set(out.subarray(0, headerSize), 0);
  const header = new DataView(result.buffer);
  setU64(header, 8, packedSize);
  setU64(header, 32, size);
  result.set(packed, headerSize);
  return result;
}

/** OffloadBinary::write (version 1) in memory. */
export function writeOffloadBinary(info: OffloadingImageInfo & { readonly image: Uint8Array }): Uint8Array {
  const layout = layoutOffloadBinary(info, info.image.length);
  const out = new Uint8Array(layout.size);
  out.set(layout.head, 0);
  out.set(info.image, layout.imageOffset);
  return out;
}
