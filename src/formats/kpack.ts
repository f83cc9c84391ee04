/**
 * rocm-kpack's `.kpack` archive: the per-GPU code objects that ROCm's kpack split moves out of host binaries
 * (ROCm/rocm-kpack e3483286: python/rocm_kpack/kpack.py `PackedKernelArchive`, compression.py; the C++ runtime's
 * runtime/src/archive.cpp and toc_parser.cpp read it). Spec notes: /work/shared/spec/kpack.md.
 *
 * | at        | size | field                                                        |
 * |-----------|------|--------------------------------------------------------------|
 * | 0         | 4    | magic `KPAK`                                                 |
 * | 4         | 4    | version (u32 LE, 1)                                          |
 * | 8         | 8    | TOC offset (u64 LE)                                          |
 * | 16        | 48   | zeros up to the first 64-byte boundary                       |
 * | 64        | n    | the blob: plain code objects back to back, or the zstd blob  |
 * | TOC offset| rest | msgpack TOC, to the end of the file                          |
 *
 * TOC: `format_version`, `group_name`, `gfx_arch_family`, `gfx_arches` (what the runtime chooses an archive
 * by), `compression_scheme` (`none` | `zstd-per-kernel`), `toc[key][arch] = {type, ordinal, original_size,
 * metadata?}` where a key is `<kernel_name>#<co_index>`; then `blobs: [{offset, size}]` (absolute offsets,
 * by ordinal) for `none`, or `zstd_offset`/`zstd_size` for `zstd-per-kernel`, whose blob is a u32 LE count
 * followed by that many (u32 LE size, zstd frame) pairs, by ordinal.
 *
 * Everything is checked against the file before use: a blob or frame past the end, an ordinal past the blob
 * list, a frame count the blob cannot hold are typed errors (`KPACK_*`) naming the field and its offset.
 * Unlike the runtime (which skips TOC fields of unexpected types), a field of the wrong type is an error here:
 * an inspector should say what is wrong rather than list less.
 */
import { OffloadKitError } from "../engine/errors.js";
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { decodeMsgpack, encodeMsgpack } from "./msgpack.js";
import type { MsgpackInput, MsgpackValue } from "./msgpack.js";

export const KPACK_MAGIC = Uint8Array.of(0x4b, 0x50, 0x41, 0x4b); // "KPAK"
export const KPACK_VERSION = 1;
export const KPACK_HEADER_SIZE = 16;
export const KPACK_BLOB_ALIGNMENT = 64;
/** The largest TOC read (the runtime reads it whole; 64 MiB is far beyond any real one: rocBLAS's is a few MB). */
export const KPACK_MAX_TOC_SIZE = 64 * 1024 * 1024;

export type KpackCompression = "none" | "zstd-per-kernel";

/** One code object in the archive: `toc[key][arch]`, with where its stored bytes are. */
export interface KpackEntry {
  /** The TOC key, `<kernel_name>#<co_index>`. */
  readonly key: string;
  /** The architecture it is filed under (a gfx_arches name: `gfx90a`, `gfx942:xnack-`). */
  readonly arch: string;
  readonly type: string;
  readonly ordinal: number;
  /** `original_size`, when the TOC has it: the code object's size. */
  readonly originalSize?: number;
  /** `metadata.target` (the bundle entry ID it came from, `hipv4-amdgcn-amd-amdhsa--gfx90a`). */
  readonly target?: string;
  readonly sourcePrefix?: string;
  /** Where its stored bytes are in the file: the code object itself (`none`) or its zstd frame. */
  readonly offset: number;
  readonly size: number;
}

export interface KpackArchive {
  readonly version: number;
  readonly tocOffset: number;
  readonly tocSize: number;
  readonly formatVersion: number | undefined;
  readonly groupName: string | undefined;
  readonly gfxArchFamily: string | undefined;
  readonly gfxArches: readonly string[];
  readonly compression: KpackCompression;
  /** For `zstd-per-kernel`: the blob holding the frames. */
  readonly zstd?: { readonly offset: number; readonly size: number; readonly count: number };
  /** In TOC order (keys, then arches within a key). */
  readonly entries: readonly KpackEntry[];
}

function kpackError(code: string, message: string, offset: number, field: string): OffloadKitError {
  return new OffloadKitError(code, `kpack: ${message}`, { offset, field });
}

/** True when `head` starts with `KPAK`. */
export function isKpackArchive(head: Uint8Array): boolean {
  return head.length >= 4 && KPACK_MAGIC.every((b, i) => head[i] === b);
}

function field(map: Map<MsgpackValue, MsgpackValue>, key: string): MsgpackValue | undefined {
  return map.get(key);
}

function asString(value: MsgpackValue | undefined, what: string, at: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw kpackError("KPACK_BAD_TOC", `${what} is not a string`, at, what);
  return value;
}

function asCount(value: MsgpackValue | undefined, what: string, at: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw kpackError("KPACK_BAD_TOC", `${what} is not a non-negative integer`, at, what);
  }
  return value;
}

function asMap(value: MsgpackValue | undefined, what: string, at: number): Map<MsgpackValue, MsgpackValue> {
  if (!(value instanceof Map)) throw kpackError("KPACK_BAD_TOC", `${what} is not a map`, at, what);
  return value;
}

/**
 * Reads an archive's header and TOC, and checks every blob, frame and ordinal the TOC names against the file
 * (for `zstd-per-kernel`, the frame table is walked: count + 4 bytes per frame header, read in one piece).
 * Never reads a code object.
 */
export function readKpackArchive(source: ByteSource): KpackArchive {
  const size = source.size;
  if (size < KPACK_HEADER_SIZE) throw kpackError("KPACK_TRUNCATED", `the ${size}-byte file is shorter than the 16-byte header`, 0, "header");
  const head = readExact(source, 0, KPACK_HEADER_SIZE);
  if (!isKpackArchive(head)) throw kpackError("KPACK_BAD_MAGIC", "not a kpack archive (no KPAK magic)", 0, "magic");
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const version = view.getUint32(4, true);
  if (version !== KPACK_VERSION) throw kpackError("KPACK_BAD_VERSION", `unsupported version ${version} (rocm-kpack writes ${KPACK_VERSION})`, 4, "version");
  const rawTocOffset = view.getBigUint64(8, true);
  if (rawTocOffset < BigInt(KPACK_HEADER_SIZE) || rawTocOffset >= BigInt(size)) {
    throw kpackError("KPACK_BAD_TOC_OFFSET", `TOC offset ${rawTocOffset} is outside the ${size}-byte file`, 8, "toc_offset");
  }
  const tocOffset = Number(rawTocOffset);
  const tocSize = size - tocOffset;
  if (tocSize > KPACK_MAX_TOC_SIZE) throw kpackError("KPACK_TOC_TOO_LARGE", `TOC of ${tocSize} bytes is larger than ${KPACK_MAX_TOC_SIZE}`, 8, "toc_offset");
  const tocBytes = readExact(source, tocOffset, tocSize);
  let decoded;
  try {
    decoded = decodeMsgpack(tocBytes, 0, { baseOffset: tocOffset });
  } catch (e) {
    if (e instanceof OffloadKitError) throw kpackError("KPACK_BAD_TOC", e.message, e.offset ?? tocOffset, "toc");
    throw e;
  }
  const toc = asMap(decoded.value, "TOC", tocOffset);
  const scheme = asString(field(toc, "compression_scheme"), "compression_scheme", tocOffset) ?? "none";
  if (scheme !== "none" && scheme !== "zstd-per-kernel") {
    throw kpackError("KPACK_UNKNOWN_COMPRESSION", `unknown compression_scheme '${scheme}'`, tocOffset, "compression_scheme");
  }
  const archesValue = field(toc, "gfx_arches") ?? [];
  if (!Array.isArray(archesValue)) throw kpackError("KPACK_BAD_TOC", "gfx_arches is not an array", tocOffset, "gfx_arches");
  const gfxArches = archesValue.map((a) => asString(a, "gfx_arches", tocOffset)!);

  // Where each ordinal's stored bytes are.
  let stored: { offset: number; size: number }[];
  let zstd: KpackArchive["zstd"];
  if (scheme === "none") {
    const blobs = field(toc, "blobs") ?? [];
    if (!Array.isArray(blobs)) throw kpackError("KPACK_BAD_TOC", "blobs is not an array", tocOffset, "blobs");
    stored = blobs.map((blob, i) => {
      const map = asMap(blob, `blobs[${i}]`, tocOffset);
      const offset = asCount(field(map, "offset"), `blobs[${i}].offset`, tocOffset) ?? 0;
      const length = asCount(field(map, "size"), `blobs[${i}].size`, tocOffset) ?? 0;
      if (offset > size || length > size - offset) {
        throw kpackError("KPACK_BLOB_OUT_OF_BOUNDS", `blob ${i} (${length} bytes at ${offset}) runs past the end of the ${size}-byte file`, tocOffset, `blobs[${i}]`);
      }
      return { offset, size: length };
    });
  } else {
    const offset = asCount(field(toc, "zstd_offset"), "zstd_offset", tocOffset);
    const length = asCount(field(toc, "zstd_size"), "zstd_size", tocOffset);
    if (offset === undefined || length === undefined) throw kpackError("KPACK_BAD_TOC", "zstd-per-kernel TOC without zstd_offset and zstd_size", tocOffset, "zstd_offset");
    if (offset > size || length > size - offset) {
      throw kpackError("KPACK_BLOB_OUT_OF_BOUNDS", `zstd blob (${length} bytes at ${offset}) runs past the end of the ${size}-byte file`, tocOffset, "zstd_size");
    }
    stored = readZstdFrameTable(source, offset, length);
    zstd = { offset, size: length, count: stored.length };
  }

  const entries: KpackEntry[] = [];
  const tocMap = asMap(field(toc, "toc") ?? new Map(), "toc", tocOffset);
  for (const [key, arches] of tocMap) {
    if (typeof key !== "string") throw kpackError("KPACK_BAD_TOC", "a toc key is not a string", tocOffset, "toc");
    for (const [arch, value] of asMap(arches, `toc['${key}']`, tocOffset)) {
      if (typeof arch !== "string") throw kpackError("KPACK_BAD_TOC", `an architecture under toc['${key}'] is not a string`, tocOffset, "toc");
      const what = `toc['${key}']['${arch}']`;
      const entry = asMap(value, what, tocOffset);
      const ordinal = asCount(field(entry, "ordinal"), `${what}.ordinal`, tocOffset) ?? 0;
      const where = stored[ordinal];
      if (where === undefined) {
        throw kpackError("KPACK_BAD_ORDINAL", `${what} has ordinal ${ordinal}, but the archive stores ${stored.length} code objects`, tocOffset, `${what}.ordinal`);
      }
      const metadata = field(entry, "metadata");
      const meta = metadata instanceof Map ? metadata : undefined;
      const originalSize = asCount(field(entry, "original_size"), `${what}.original_size`, tocOffset);
      const target = asString(meta?.get("target"), `${what}.metadata.target`, tocOffset);
      const sourcePrefix = asString(meta?.get("source_prefix"), `${what}.metadata.source_prefix`, tocOffset);
      entries.push({
        key, arch, type: asString(field(entry, "type"), `${what}.type`, tocOffset) ?? "hsaco", ordinal,
        ...(originalSize !== undefined ? { originalSize } : {}),
        ...(target !== undefined ? { target } : {}),
        ...(sourcePrefix !== undefined ? { sourcePrefix } : {}),
        offset: where.offset, size: where.size,
      });
    }
  }
  const formatVersion = asCount(field(toc, "format_version"), "format_version", tocOffset);
  return {
    version, tocOffset, tocSize, formatVersion,
    groupName: asString(field(toc, "group_name"), "group_name", tocOffset),
    gfxArchFamily: asString(field(toc, "gfx_arch_family"), "gfx_arch_family", tocOffset),
    gfxArches, compression: scheme, ...(zstd !== undefined ? { zstd } : {}), entries,
  };
}

/** The (offset, size) of each zstd frame of a `zstd-per-kernel` blob, by ordinal, each checked to lie inside the blob. */
function readZstdFrameTable(source: ByteSource, offset: number, length: number): { offset: number; size: number }[] {
  if (length < 4) throw kpackError("KPACK_BAD_ZSTD_BLOB", `zstd blob of ${length} bytes cannot hold its frame count`, offset, "num_kernels");
  const count = new DataView(readExact(source, offset, 4).buffer).getUint32(0, true);
  // Each frame takes at least its 4-byte size: refuse a count the blob cannot hold before reading anything for it.
  if (count > (length - 4) / 4) {
    throw kpackError("KPACK_BAD_ZSTD_BLOB", `zstd blob of ${length} bytes cannot hold ${count} frames`, offset, "num_kernels");
  }
  const frames: { offset: number; size: number }[] = [];
  let at = offset + 4;
  const end = offset + length;
  for (let i = 0; i < count; i++) {
    if (end - at < 4) throw kpackError("KPACK_BAD_ZSTD_BLOB", `frame ${i}'s size runs past the end of the zstd blob`, at, "compressed_size");
    const frameSize = new DataView(readExact(source, at, 4).buffer).getUint32(0, true);
    at += 4;
    if (frameSize > end - at) throw kpackError("KPACK_BAD_ZSTD_BLOB", `frame ${i} (${frameSize} bytes at ${at}) runs past the end of the zstd blob`, at - 4, "compressed_size");
    frames.push({ offset: at, size: frameSize });
    at += frameSize;
  }
  return frames;
}

/** Zstd-decodes one frame to exactly `size` bytes (src/compress; the caller's codec). */
export type KpackZstdDecoder = (frame: Uint8Array, size: number) => Uint8Array;

/**
 * The code object of one entry: its bytes (`none`) or its frame decoded (`zstd-per-kernel`, which needs
 * `decode` and the entry's `original_size`). A decoded size other than `original_size` is an error.
 */
export function readKpackEntry(
  source: ByteSource,
  compression: KpackCompression,
  entry: Pick<KpackEntry, "key" | "arch" | "offset" | "size" | "originalSize">,
  decode?: KpackZstdDecoder,
): Uint8Array {
  const stored = readExact(source, entry.offset, entry.size);
  if (compression === "none") return stored;
  if (decode === undefined) throw kpackError("KPACK_NO_DECODER", "zstd-per-kernel archive and no zstd decoder", entry.offset, "zstd");
  if (entry.originalSize === undefined) {
    throw kpackError("KPACK_BAD_TOC", `toc['${entry.key}']['${entry.arch}'] of a zstd archive has no original_size`, entry.offset, "original_size");
  }
  const out = decode(stored, entry.originalSize);
  if (out.length !== entry.originalSize) {
    throw kpackError("KPACK_SIZE_MISMATCH", `frame decodes to ${out.length} bytes, the TOC says ${entry.originalSize}`, entry.offset, "original_size");
  }
  return out;
}

/** One code object to write: filed under `key` and `arch`. */
export interface KpackWriteEntry {
  readonly key: string;
  readonly arch: string;
  readonly data: Uint8Array;
  /** Stored instead of `data` for `zstd-per-kernel` (one zstd frame of `data`). */
  readonly frame?: Uint8Array;
  /** `original_size` when `data` is not given in full (a frame kept as it was, not decoded); `data.length` by default. */
  readonly originalSize?: number;
  readonly metadata?: { readonly target?: string; readonly source_prefix?: string };
}

export interface KpackWriteOptions {
  readonly groupName: string;
  readonly gfxArchFamily: string;
  readonly gfxArches: readonly string[];
  readonly compression?: KpackCompression;
}

/**
 * An archive laid out as rocm-kpack's `PackedKernelArchive.write` lays it out: header, zeros to 64, the blob
 * (ordinals in `entries` order), then the TOC with its keys in rocm-kpack's order (format_version, group_name,
 * gfx_arch_family, gfx_arches, toc, compression_scheme, then blobs or zstd_offset/zstd_size).
 */
export function writeKpackArchive(entries: readonly KpackWriteEntry[], options: KpackWriteOptions): Uint8Array {
  const compression = options.compression ?? "none";
  const parts: Uint8Array[] = [];
  let blobLength = 0;
  const blobs: { offset: number; size: number }[] = [];
  if (compression === "zstd-per-kernel") {
    const count = new Uint8Array(4);
    new DataView(count.buffer).setUint32(0, entries.length, true);
    parts.push(count);
    blobLength += 4;
  }
  for (const entry of entries) {
    if (compression === "none") {
      blobs.push({ offset: KPACK_BLOB_ALIGNMENT + blobLength, size: entry.data.length });
      parts.push(entry.data);
      blobLength += entry.data.length;
    } else {
      if (entry.frame === undefined) throw new OffloadKitError("KPACK_NO_FRAME", `kpack: ${entry.key} @ ${entry.arch} has no zstd frame`);
      const head = new Uint8Array(4);
      new DataView(head.buffer).setUint32(0, entry.frame.length, true);
      parts.push(head, entry.frame);
      blobLength += 4 + entry.frame.length;
    }
  }
  const toc = new Map<string, Map<string, MsgpackInput>>();
  entries.forEach((entry, ordinal) => {
    const arches = toc.get(entry.key) ?? new Map<string, MsgpackInput>();
    if (arches.has(entry.arch)) throw new OffloadKitError("KPACK_DUPLICATE", `kpack: kernel already exists for ${entry.key} @ ${entry.arch}`);
    arches.set(entry.arch, { type: "hsaco", ordinal, original_size: entry.originalSize ?? entry.data.length, ...(entry.metadata !== undefined ? { metadata: { ...entry.metadata } } : {}) });
    toc.set(entry.key, arches);
  });
  const tocOffset = KPACK_BLOB_ALIGNMENT + blobLength;
  const tocBytes = encodeMsgpack({
    format_version: KPACK_VERSION,
    group_name: options.groupName,
    gfx_arch_family: options.gfxArchFamily,
    gfx_arches: [...options.gfxArches],
    toc,
    compression_scheme: compression,
    ...(compression === "none" ? { blobs } : { zstd_offset: KPACK_BLOB_ALIGNMENT, zstd_size: blobLength }),
  });
  const out = new Uint8Array(tocOffset + tocBytes.length);
  out.set(KPACK_MAGIC, 0);
  const view = new DataView(out.buffer);
  view.setUint32(4, KPACK_VERSION, true);
  view.setBigUint64(8, BigInt(tocOffset), true);
  let at = KPACK_BLOB_ALIGNMENT;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  out.set(tocBytes, tocOffset);
  return out;
}
