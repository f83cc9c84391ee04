/**
 * NVIDIA fatbins: the containers nvcc and clang put in `.nv_fatbin` (and `__nv_relfatbin`, for `-rdc`
 * device links) and write as standalone `.fatbin` files, each a 16-byte header and entries back to back:
 * SASS cubins (ELF, one per sm_NN) and PTX text (one per compute_NN), each entry optionally compressed.
 *
 * Learnt from NVIDIA's `fatbinary_section.h` (the wrapper), ZLUDA's zluda_dump and the nvopen-tools and
 * cuda-fatbin-decompression readers (facts only), every field confirmed against cuobjdump 12.4 on files
 * made by nvcc 13.0 (test/fixtures/nv/); ../shared/spec/nv-fatbin.md keeps the observations.
 *
 * Container (all little-endian):
 * | at | size | field |
 * |---|---|---|
 * | 0 | 4 | magic 0xBA55ED50 |
 * | 4 | 2 | version (1) |
 * | 6 | 2 | header size (16) |
 * | 8 | 8 | size of the entries that follow the header |
 *
 * Entry (header size varies: 64, 72, 80, 96, 104, 112 seen; only the first 64 bytes are interpreted):
 * | at | size | field |
 * |---|---|---|
 * | 0 | 2 | kind: 1 PTX, 2 ELF |
 * | 2 | 2 | 0x0101 (kept raw) |
 * | 4 | 4 | header size |
 * | 8 | 8 | padded payload size: the next entry starts at entry + header size + padded size |
 * | 16 | 4 | compressed size (0 when stored plain) |
 * | 20 | 4 | options offset, relative to the entry (0: none) |
 * | 24 | 2 | minor version (PTX ISA / ELF) |
 * | 26 | 2 | major version |
 * | 28 | 4 | arch (90 for sm_90 / compute_90) |
 * | 40 | 8 | flags: 0x1 64-bit, 0x10 Linux, 0x2000 LZ4 raw block, 0x8000 zstd frame, 0x100000 arch-specific (`sm_90a`), 0x200000 family-specific (`sm_100f`), 0x1000000 sm_100+ ELF |
 * | 56 | 8 | uncompressed size (0 for plain entries written by older toolkits) |
 *
 * Each entry keeps its header and padded payload as raw bytes, so `writeNvFatbinContainer(entries)` rebuilds
 * a container byte for byte from any subset of them (what pruning does). Validation runs in a fixed order,
 * each check naming the field and the offset of its bytes; the only error thrown is OffloadKitError.
 *
 * Written in TypeScript, not as a Wasm kernel: a container is a handful of fixed-size headers read once
 * each (a 1 GB library has a few thousand), never a scan over payload bytes, so there is nothing for a
 * kernel to win. Decompressing entries (src/compress/lz4-block.ts, zstd through the project's codecs) is
 * the only per-byte work, done on demand.
 */
import { decodeLz4Block } from "../compress/lz4-block.js";
import { OffloadKitError } from "../engine/errors.js";

export const NV_FATBIN_MAGIC = 0xba55ed50;
export const NV_FATBIN_MAGIC_BYTES = Uint8Array.of(0x50, 0xed, 0x55, 0xba);
export const NV_FATBIN_HEADER_SIZE = 16;
/** The first 64 bytes of an entry header are the fields above; longer headers carry more we keep raw. */
export const NV_ENTRY_HEADER_MIN = 64;
/** `__fatBinC_Wrapper_t` (fatbinary_section.h): `{ int magic; int version; const void *data; void *filename_or_fatbins; }`. */
export const NV_WRAPPER_MAGIC = 0x466243b1;
export const NV_WRAPPER_SIZE = 24;
/** `e_machine` of CUDA ELF files (cubins). */
export const EM_CUDA = 190;

export const NV_KIND_PTX = 1;
export const NV_KIND_ELF = 2;

export const NV_FLAG_64BIT = 0x1;
export const NV_FLAG_LINUX = 0x10;
export const NV_FLAG_LZ4 = 0x2000;
export const NV_FLAG_ZSTD = 0x8000;
export const NV_FLAG_ARCH_SPECIFIC = 0x100000;
export const NV_FLAG_FAMILY_SPECIFIC = 0x200000;

const CONTAINER = { MAGIC: 0, VERSION: 4, HEADER_SIZE: 6, FAT_SIZE: 8 } as const;
const ENTRY = {
  KIND: 0, HEADER_SIZE: 4, PADDED_SIZE: 8, COMPRESSED_SIZE: 16, OPTIONS_OFFSET: 20,
  MINOR: 24, MAJOR: 26, ARCH: 28, FLAGS: 40, UNCOMPRESSED_SIZE: 56,
} as const;

export type NvCompression = "none" | "lz4" | "zstd";

/** An entry as its header describes it (what a walk that skips payloads returns). */
export interface NvFatbinEntryHeader {
  /** Where the entry's header starts, relative to the bytes given to the parser. */
  readonly offset: number;
  /** 1 PTX, 2 ELF; other values are kept and named `kind N`. */
  readonly kind: number;
  readonly headerSize: number;
  readonly paddedSize: number;
  readonly compressedSize: number;
  readonly optionsOffset: number;
  readonly versionMajor: number;
  readonly versionMinor: number;
  readonly arch: number;
  readonly flags: number;
  readonly uncompressedSize: number;
  readonly compression: NvCompression;
  /** `sm_90`, `sm_90a`, `compute_90`: what the entry is for (see `nvEntryArchName`). */
  readonly archName: string;
  /** Where the stored payload (compressed or not) starts, relative to the parser's input, and its stored size. */
  readonly payloadOffset: number;
  readonly payloadSize: number;
  /** The header exactly as stored. */
  readonly rawHeader: Uint8Array;
}

export interface NvFatbinEntry extends NvFatbinEntryHeader {
  /** The padded payload exactly as stored (a view into the input). */
  readonly rawPayload: Uint8Array;
}

export interface NvFatbinContainer<E extends NvFatbinEntryHeader = NvFatbinEntry> {
  readonly offset: number;
  readonly version: number;
  readonly headerSize: number;
  /** Bytes of entries after the header, as declared. */
  readonly fatSize: number;
  /** Header plus entries. */
  readonly size: number;
  readonly rawHeader: Uint8Array;
  readonly entries: readonly E[];
}

/** Reads `length` bytes at `position` of the input (fewer only at its end). */
export type NvReadAt = (position: number, length: number) => Uint8Array;

function bytesReader(bytes: Uint8Array): NvReadAt {
  return (position, length) => bytes.subarray(position, position + length);
}

function fail(code: string, message: string, offset: number, field: string): never {
  throw new OffloadKitError(code, message, { offset, field });
}

function u16(b: Uint8Array, at: number): number {
  return b[at]! | (b[at + 1]! << 8);
}

function u32(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}

/** A u64 as a number; above 2^53 it is a format error (no size or flag we know comes near). */
function u64(b: Uint8Array, at: number, code: string, field: string, base = 0): number {
  const high = u32(b, at + 4);
  if (high >= 0x200000) fail(code, `${field} ${high.toString(16)}${u32(b, at).toString(16).padStart(8, "0")} (hex) is too large`, base + at, field);
  return high * 0x100000000 + u32(b, at);
}

/** Whether `head` starts with the container magic. */
export function isNvFatbin(head: Uint8Array): boolean {
  return head.length >= 4 && u32(head, 0) === NV_FATBIN_MAGIC;
}

/** `sm_NN` for SASS, `compute_NN` for PTX, with `a` (arch-specific) or `f` (family-specific) as the flags say. */
export function nvEntryArchName(kind: number, arch: number, flags: number): string {
  const suffix = (flags & NV_FLAG_ARCH_SPECIFIC) !== 0 ? "a" : (flags & NV_FLAG_FAMILY_SPECIFIC) !== 0 ? "f" : "";
  if (kind === NV_KIND_PTX) return `compute_${arch}${suffix}`;
  if (kind === NV_KIND_ELF) return `sm_${arch}${suffix}`;
  return `kind${kind}_${arch}${suffix}`;
}

/** The bytes an entry's payload decodes to: its uncompressed size, or for plain entries the padded payload. */
export function nvEntryDecodedSize(entry: NvFatbinEntryHeader): number {
  return entry.compression === "none" ? entry.paddedSize : entry.uncompressedSize;
}

/**
 * One entry at `at` of `bytes`, which must end where the container's entries end. Checks, in order: the
 * 64 interpreted header bytes fit; header size at least 64 and within the container; padded size within
 * the container; compressed size within the padded payload; options offset within the entry; not both
 * compressions; a compressed entry states both sizes.
 */
export function readNvFatbinEntryHeader(read: NvReadAt, at: number, end: number): NvFatbinEntryHeader {
  if (end - at < NV_ENTRY_HEADER_MIN) {
    fail("NV_ENTRY_TRUNCATED", `fatbin entry header needs ${NV_ENTRY_HEADER_MIN} bytes, ${Math.max(0, end - at)} left in the container`, at, "entry header");
  }
  const first = read(at, NV_ENTRY_HEADER_MIN);
  if (first.length < NV_ENTRY_HEADER_MIN) fail("NV_ENTRY_TRUNCATED", `fatbin entry header needs ${NV_ENTRY_HEADER_MIN} bytes, ${first.length} left`, at, "entry header");
  const headerSize = u32(first, ENTRY.HEADER_SIZE);
  if (headerSize < NV_ENTRY_HEADER_MIN || headerSize > end - at) {
    fail("NV_ENTRY_HEADER_SIZE", `fatbin entry header size ${headerSize} is not between ${NV_ENTRY_HEADER_MIN} and the ${end - at} bytes left in the container`, at + ENTRY.HEADER_SIZE, "header size");
  }
  const header = headerSize === NV_ENTRY_HEADER_MIN ? first : read(at, headerSize);
  if (header.length < headerSize) fail("NV_ENTRY_TRUNCATED", `fatbin entry header of ${headerSize} bytes has ${header.length} left`, at, "entry header");
  // Fields are read from `header`; errors name the field's place in the input.
  const kind = u16(header, ENTRY.KIND);
  const paddedSize = u64(header, ENTRY.PADDED_SIZE, "NV_ENTRY_SIZE", "padded size", at);
  if (paddedSize > end - at - headerSize) {
    fail("NV_ENTRY_SIZE", `fatbin entry payload of ${paddedSize} bytes runs past the container's end (${end - at - headerSize} bytes left)`, at + ENTRY.PADDED_SIZE, "padded size");
  }
  const compressedSize = u32(header, ENTRY.COMPRESSED_SIZE);
  if (compressedSize > paddedSize) {
    fail("NV_COMPRESSED_SIZE", `fatbin entry compressed size ${compressedSize} exceeds its padded payload of ${paddedSize} bytes`, at + ENTRY.COMPRESSED_SIZE, "compressed size");
  }
  const optionsOffset = u32(header, ENTRY.OPTIONS_OFFSET);
  if (optionsOffset !== 0 && (optionsOffset < NV_ENTRY_HEADER_MIN || optionsOffset >= headerSize + paddedSize)) {
    fail("NV_OPTIONS_OFFSET", `fatbin entry options offset ${optionsOffset} is outside the entry (${headerSize + paddedSize} bytes)`, at + ENTRY.OPTIONS_OFFSET, "options offset");
  }
  const flags = u64(header, ENTRY.FLAGS, "NV_FLAGS", "flags", at);
  const uncompressedSize = u64(header, ENTRY.UNCOMPRESSED_SIZE, "NV_UNCOMPRESSED_SIZE", "uncompressed size", at);
  const lz4 = (flags & NV_FLAG_LZ4) !== 0;
  const zstd = (flags & NV_FLAG_ZSTD) !== 0;
  if (lz4 && zstd) fail("NV_COMPRESSION", `fatbin entry flags 0x${flags.toString(16)} ask for both LZ4 and zstd`, at + ENTRY.FLAGS, "flags");
  const compression: NvCompression = lz4 ? "lz4" : zstd ? "zstd" : "none";
  if (compression !== "none" && (compressedSize === 0 || uncompressedSize === 0)) {
    fail("NV_COMPRESSED_SIZE", `compressed (${compression}) fatbin entry states compressed size ${compressedSize} and uncompressed size ${uncompressedSize}`, at + ENTRY.COMPRESSED_SIZE, "compressed size");
  }
  const arch = u32(header, ENTRY.ARCH);
  const payloadOffset = at + headerSize;
  return {
    offset: at,
    kind,
    headerSize,
    paddedSize,
    compressedSize,
    optionsOffset,
    versionMajor: u16(header, ENTRY.MAJOR),
    versionMinor: u16(header, ENTRY.MINOR),
    arch,
    flags,
    uncompressedSize,
    compression,
    archName: nvEntryArchName(kind, arch, flags),
    payloadOffset,
    payloadSize: compression === "none" ? paddedSize : compressedSize,
    rawHeader: header,
  };
}

/** `readNvFatbinEntryHeader` over bytes in memory, with the padded payload as a view. */
export function parseNvFatbinEntry(bytes: Uint8Array, at: number, end: number = bytes.length): NvFatbinEntry {
  const entry = readNvFatbinEntryHeader(bytesReader(bytes), at, Math.min(end, bytes.length));
  return { ...entry, rawPayload: bytes.subarray(entry.payloadOffset, entry.payloadOffset + entry.paddedSize) };
}

/**
 * The container at `at` of an input of `size` bytes, its entries' headers only (payloads are skipped, never
 * read): the header (magic, then a header size of at least 16 that fits, then entries that fit), then its
 * entries back to back until the declared size is used up exactly.
 */
export function readNvFatbinContainerHeaders(read: NvReadAt, size: number, at = 0): NvFatbinContainer<NvFatbinEntryHeader> {
  if (size - at < NV_FATBIN_HEADER_SIZE) {
    fail("NV_TRUNCATED", `fatbin container header needs ${NV_FATBIN_HEADER_SIZE} bytes, ${Math.max(0, size - at)} left`, at, "header");
  }
  const head = read(at, NV_FATBIN_HEADER_SIZE);
  if (head.length < NV_FATBIN_HEADER_SIZE) fail("NV_TRUNCATED", `fatbin container header needs ${NV_FATBIN_HEADER_SIZE} bytes, ${head.length} left`, at, "header");
  const magic = u32(head, CONTAINER.MAGIC);
  if (magic !== NV_FATBIN_MAGIC) fail("NV_BAD_MAGIC", `fatbin container magic 0x${magic.toString(16)} is not 0xba55ed50`, at, "magic");
  const version = u16(head, CONTAINER.VERSION);
  const headerSize = u16(head, CONTAINER.HEADER_SIZE);
  if (headerSize < NV_FATBIN_HEADER_SIZE || headerSize > size - at) {
    fail("NV_HEADER_SIZE", `fatbin container header size ${headerSize} is not between ${NV_FATBIN_HEADER_SIZE} and the ${size - at} bytes left`, at + CONTAINER.HEADER_SIZE, "header size");
  }
  const fatSize = u64(head, CONTAINER.FAT_SIZE, "NV_FAT_SIZE", "fat size", at);
  if (fatSize > size - at - headerSize) {
    fail("NV_FAT_SIZE", `fatbin container declares ${fatSize} bytes of entries, ${size - at - headerSize} left`, at + CONTAINER.FAT_SIZE, "fat size");
  }
  const rawHeader = headerSize === NV_FATBIN_HEADER_SIZE ? head : read(at, headerSize);
  const end = at + headerSize + fatSize;
  const entries: NvFatbinEntryHeader[] = [];
  let position = at + headerSize;
  while (position < end) {
    const entry = readNvFatbinEntryHeader(read, position, end);
    entries.push(entry);
    position += entry.headerSize + entry.paddedSize;
  }
  return { offset: at, version, headerSize, fatSize, size: headerSize + fatSize, rawHeader, entries };
}

/** `readNvFatbinContainerHeaders` over bytes in memory, each entry with its padded payload as a view. */
export function parseNvFatbinContainer(bytes: Uint8Array, at = 0): NvFatbinContainer {
  const container = readNvFatbinContainerHeaders(bytesReader(bytes), bytes.length, at);
  return { ...container, entries: container.entries.map((e) => ({ ...e, rawPayload: bytes.subarray(e.payloadOffset, e.payloadOffset + e.paddedSize) })) };
}

export interface NvFatbinRun<E extends NvFatbinEntryHeader = NvFatbinEntry> {
  readonly containers: readonly NvFatbinContainer<E>[];
  /** Where reading stopped: the end of the input, or bytes after the last container that are not one. */
  readonly end: number;
  /** Set when bytes other than zero padding follow the last container (a problem the caller reports). */
  readonly trailing?: { readonly offset: number; readonly size: number };
}

/** Whether [from, size) holds only zero bytes, read a page at a time. */
function zerosToEnd(read: NvReadAt, from: number, size: number): boolean {
  for (let at = from; at < size; at += 65536) {
    const chunk = read(at, Math.min(65536, size - at));
    if (chunk.length === 0 || chunk.some((b) => b !== 0)) return false;
  }
  return true;
}

/**
 * The containers back to back in an input of `size` bytes (a `.nv_fatbin` section, a `.fatbin` file), headers
 * only: after each, zero bytes up to the next multiple of 8 are padding, and so are zero bytes to the end.
 * The first container must read; an error in a later one throws too (a section is one linker's output: a
 * broken container is damage, not data).
 */
export function walkNvFatbinContainers(read: NvReadAt, size: number): NvFatbinRun<NvFatbinEntryHeader> {
  const containers: NvFatbinContainer<NvFatbinEntryHeader>[] = [];
  let at = 0;
  while (at < size) {
    if (containers.length > 0) {
      const padding = (8 - (at % 8)) % 8;
      const gap = read(at, Math.min(padding + 4, size - at));
      let next = at;
      while (next - at < padding && next - at < gap.length && gap[next - at] === 0) next++;
      if (zerosToEnd(read, next, size)) return { containers, end: size };
      if (!isNvFatbin(gap.subarray(next - at, next - at + 4))) return { containers, end: at, trailing: { offset: at, size: size - at } };
      at = next;
    }
    const container = readNvFatbinContainerHeaders(read, size, at);
    containers.push(container);
    at += container.size;
  }
  return { containers, end: at };
}

/** `walkNvFatbinContainers` over bytes in memory, entries with their payloads. */
export function parseNvFatbinContainers(bytes: Uint8Array): NvFatbinRun {
  const run = walkNvFatbinContainers(bytesReader(bytes), bytes.length);
  const containers = run.containers.map((c) => ({
    ...c,
    entries: c.entries.map((e) => ({ ...e, rawPayload: bytes.subarray(e.payloadOffset, e.payloadOffset + e.paddedSize) })),
  }));
  return { ...run, containers };
}

/**
 * A container of `entries` (from any parse, in the order given): a 16-byte header (version 1, or the
 * version and extra header bytes of `options.header`, a parsed container's `rawHeader`) stating the
 * entries' total size, then each entry's raw header and padded payload. Rebuilding every container a parse
 * returned gives its bytes back exactly.
 */
export function writeNvFatbinContainer(entries: readonly NvFatbinEntry[], options: { header?: Uint8Array } = {}): Uint8Array {
  const header = options.header ?? Uint8Array.of(0x50, 0xed, 0x55, 0xba, 1, 0, NV_FATBIN_HEADER_SIZE, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  if (header.length < NV_FATBIN_HEADER_SIZE || u32(header, 0) !== NV_FATBIN_MAGIC || u16(header, CONTAINER.HEADER_SIZE) !== header.length) {
    throw new OffloadKitError("NV_HEADER_SIZE", "writeNvFatbinContainer: the header given is not a container header of its own stated size", { field: "header" });
  }
  let fatSize = 0;
  for (const entry of entries) {
    if (entry.rawHeader.length !== entry.headerSize || entry.rawPayload.length !== entry.paddedSize) {
      throw new OffloadKitError("NV_ENTRY_SIZE", `writeNvFatbinContainer: the entry at ${entry.offset} does not hold its raw header and padded payload`, { offset: entry.offset, field: "entry" });
    }
    fatSize += entry.headerSize + entry.paddedSize;
  }
  const out = new Uint8Array(header.length + fatSize);
  out.set(header, 0);
  const view = new DataView(out.buffer);
  view.setUint32(CONTAINER.FAT_SIZE, fatSize % 0x100000000, true);
  view.setUint32(CONTAINER.FAT_SIZE + 4, Math.floor(fatSize / 0x100000000), true);
  let at = header.length;
  for (const entry of entries) {
    out.set(entry.rawHeader, at);
    out.set(entry.rawPayload, at + entry.headerSize);
    at += entry.headerSize + entry.paddedSize;
  }
  return out;
}

/** Payloads are stored padded with zeros to a multiple of 8 (every entry nvcc 12.4 and 13 write: padded size = align8(stored size)). */
export const NV_PAYLOAD_ALIGN = 8;

/**
 * The entry with its payload stored differently: `stored` as plain bytes (`compression` "none") or as one
 * LZ4 block / zstd frame of `uncompressedSize` bytes. The header is the entry's own with four fields
 * restated as nvcc 13 writes them (observed: `--compress-mode=none` against `--compress-mode=speed
 * -Xfatbin -compress-all` builds differ in exactly these): padded size = the stored size rounded up to 8,
 * compressed size (0 plain), the LZ4/zstd flag, uncompressed size (0 plain). Everything else, the options
 * after the 64 bytes included, stays. Read back by the parser, so the result passes its checks.
 */
export function restoreNvEntry(entry: NvFatbinEntry, stored: Uint8Array, compression: NvCompression, uncompressedSize: number): NvFatbinEntry {
  const paddedSize = Math.ceil(stored.length / NV_PAYLOAD_ALIGN) * NV_PAYLOAD_ALIGN;
  const bytes = new Uint8Array(entry.headerSize + paddedSize);
  bytes.set(entry.rawHeader, 0);
  bytes.set(stored, entry.headerSize);
  const view = new DataView(bytes.buffer);
  view.setBigUint64(ENTRY.PADDED_SIZE, BigInt(paddedSize), true);
  view.setUint32(ENTRY.COMPRESSED_SIZE, compression === "none" ? 0 : stored.length, true);
  const flags = (BigInt(entry.flags) & ~BigInt(NV_FLAG_LZ4 | NV_FLAG_ZSTD)) | BigInt(compression === "lz4" ? NV_FLAG_LZ4 : compression === "zstd" ? NV_FLAG_ZSTD : 0);
  view.setBigUint64(ENTRY.FLAGS, flags, true);
  view.setBigUint64(ENTRY.UNCOMPRESSED_SIZE, BigInt(compression === "none" ? 0 : uncompressedSize), true);
  const parsed = parseNvFatbinEntry(bytes, 0);
  return { ...parsed, offset: entry.offset, payloadOffset: entry.offset + entry.headerSize };
}

/**
 * The bytes an entry's payload stands for, whole (unlike `decodeNvEntry`, PTX keeps its NUL): a compressed
 * entry's decoded bytes, exactly its uncompressed size; a plain entry's as a compressed one would state
 * them: PTX up to and including its first NUL (nvcc 13's uncompressed size for PTX: the text and one NUL),
 * a cubin or anything else the whole padded payload (so `cuobjdump -xelf` writes the same bytes either way).
 */
export function nvEntryContents(entry: NvFatbinEntry, zstd?: NvZstdDecoder): Uint8Array {
  if (entry.compression === "none") {
    if (entry.kind !== NV_KIND_PTX) return entry.rawPayload;
    const nul = entry.rawPayload.indexOf(0);
    return nul < 0 ? entry.rawPayload : entry.rawPayload.subarray(0, nul + 1);
  }
  return decodeNvEntry({ ...entry, kind: NV_KIND_ELF }, entry.rawPayload, zstd);
}

/** What decoding an entry needs to know of it (a parsed entry, or the locator's `NvEntryInfo` with its payload offset). */
export type NvEntrySizes = Pick<NvFatbinEntryHeader, "kind" | "compression" | "paddedSize" | "compressedSize" | "uncompressedSize" | "payloadOffset">;

/** Decodes one zstd frame into at most `capacity` bytes (the project's codecs: src/compress/codecs.ts `Codecs`). */
export type NvZstdDecoder = (frame: Uint8Array, capacity: number) => Uint8Array;

/**
 * The bytes of an entry as cuobjdump `-xelf` / `-xptx` writes them, from its stored payload (`rawPayload`, or
 * the `payloadSize` bytes at `payloadOffset`): decompressed to exactly the stated uncompressed size (a
 * shorter or longer result is an error, NV_DECODED_SIZE), a plain cubin with its padding, PTX up to its
 * terminating NUL.
 */
export function decodeNvEntry(entry: NvEntrySizes, stored: Uint8Array, zstd?: NvZstdDecoder): Uint8Array {
  const payloadSize = entry.compression === "none" ? entry.paddedSize : entry.compressedSize;
  if (stored.length < payloadSize) {
    throw new OffloadKitError("NV_TRUNCATED", `fatbin entry payload needs ${payloadSize} bytes, ${stored.length} given`, { offset: entry.payloadOffset, field: "payload" });
  }
  let bytes: Uint8Array;
  if (entry.compression === "none") {
    bytes = stored.subarray(0, entry.paddedSize);
  } else {
    const compressed = stored.subarray(0, entry.compressedSize);
    // Neither format can expand further than this, so a larger stated size is damage, refused before
    // anything is allocated: an LZ4 length byte adds at most 255 bytes of output, and a 4-byte zstd RLE
    // block stands for at most 128 KiB.
    const most = entry.compression === "lz4" ? 255 * compressed.length + 16 : 32768 * compressed.length + 65536;
    if (entry.uncompressedSize > most) {
      throw new OffloadKitError("NV_DECODED_SIZE", `fatbin entry states ${entry.uncompressedSize} uncompressed bytes, more than ${compressed.length} bytes of ${entry.compression} can hold`, { offset: entry.payloadOffset, field: "uncompressed size" });
    }
    if (entry.compression === "lz4") {
      bytes = decodeLz4Block(compressed, entry.uncompressedSize);
    } else {
      if (zstd === undefined) throw new OffloadKitError("NV_NO_DECOMPRESSOR", "zstd-compressed fatbin entry; no zstd decoder given", { offset: entry.payloadOffset, field: "payload" });
      try {
        bytes = zstd(compressed, entry.uncompressedSize);
      } catch (e) {
        if (e instanceof OffloadKitError) throw e;
        throw new OffloadKitError("NV_ZSTD", `zstd-compressed fatbin entry: ${(e as Error).message}`, { offset: entry.payloadOffset, field: "payload", cause: e });
      }
    }
    if (bytes.length !== entry.uncompressedSize) {
      throw new OffloadKitError("NV_DECODED_SIZE", `fatbin entry decodes to ${bytes.length} bytes, its header says ${entry.uncompressedSize}`, { offset: entry.payloadOffset, field: "uncompressed size" });
    }
  }
  if (entry.kind === NV_KIND_PTX) {
    const nul = bytes.indexOf(0);
    if (nul >= 0) bytes = bytes.subarray(0, nul);
  }
  return bytes;
}

export interface NvWrapper {
  /** Offset of the wrapper in the `.nvFatBinSegment` section. */
  readonly offset: number;
  readonly version: number;
  /** The stored `data` pointer (0 in objects and in linked files whose linker left RELA places unset). */
  readonly data: number;
}

/**
 * The `__fatBinC_Wrapper_t` structs of a `.nvFatBinSegment` section (24 bytes each, 8-aligned); a slot
 * without the wrapper magic ends the list (nothing else has been seen in the section).
 */
export function parseNvWrappers(segment: Uint8Array): NvWrapper[] {
  const wrappers: NvWrapper[] = [];
  for (let at = 0; at + NV_WRAPPER_SIZE <= segment.length; at += NV_WRAPPER_SIZE) {
    if (u32(segment, at) !== NV_WRAPPER_MAGIC) break;
    wrappers.push({ offset: at, version: u32(segment, at + 4), data: u64(segment, at + 8, "NV_WRAPPER", "data") });
  }
  return wrappers;
}

/**
 * What a standalone cubin's ELF header says: a CUDA ELF (EM_CUDA) is SASS for one sm_NN. Its `e_flags`
 * hold the arch at bits 8..15 when `e_ident[EI_ABIVERSION]` is 8 or more (CUDA 13's ELF), in the low byte
 * before (CUDA 12 and older). The `a`/`f` variants are not recorded in the header (an `sm_90a` cubin has
 * sm_90's flags), so a standalone cubin is named by its number alone.
 */
export interface NvCubin {
  readonly elfClass: 32 | 64;
  readonly type: number;
  readonly abiVersion: number;
  readonly flags: number;
  readonly arch: number;
}

/** Whether `head` (at least 20 bytes) is an ELF header with e_machine EM_CUDA. */
export function isNvCubin(head: Uint8Array): boolean {
  return head.length >= 20 && head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c && head[3] === 0x46
    && head[5] === 1 && u16(head, 18) === EM_CUDA;
}

export function parseNvCubin(head: Uint8Array): NvCubin {
  if (!isNvCubin(head)) fail("NV_NOT_CUBIN", "not a little-endian ELF file for EM_CUDA", 0, "e_machine");
  const elfClass = head[4] === 2 ? 64 : 32;
  const flagsAt = elfClass === 64 ? 48 : 36;
  if (head.length < flagsAt + 4) fail("NV_TRUNCATED", `CUDA ELF header needs ${flagsAt + 4} bytes, ${head.length} given`, 0, "e_flags");
  const flags = u32(head, flagsAt);
  const abiVersion = head[8]!;
  const arch = abiVersion >= 8 ? (flags >>> 8) & 0xff : flags & 0xff;
  return { elfClass, type: u16(head, 16), abiVersion, flags, arch };
}
