/**
 * Offload binary walk (the 0x10FF10AD format of clang-offload-packager / llvm-offload-binary).
 *
 * Follows ../shared/spec/offload-binary.md and llvm/lib/Object/OffloadBinary.cpp: version 1 validated as
 * LLVM 19 validates it, versions 2 and 3 as current LLVM does, plus the checks LLVM leaves out (image end,
 * string offsets), where it would read past the binary. Several binaries may follow each other in one
 * blob (a section, a file); each is found by its own `size` field. After a v1 binary the next one
 * starts at pos + size, as LLVM 19 and 22.1.8 do (measured: a size that is not a multiple of 8 makes them
 * look for the next magic at the unaligned end); after a v2 or v3 binary at alignTo(pos + size, 8), as
 * current upstream does (a compressed v3 binary's size is usually not a multiple of 8). Coordinates are blob-relative: position 0 is the blob's first byte, `bufSize` its size.
 *
 * | at (from pos) | size | field (v1)         | v2 / v3                           |
 * |---------------|------|--------------------|-----------------------------------|
 * | 0             | 4    | 10 FF 10 AD        |                                   |
 * | 4             | 4    | version            |                                   |
 * | 8             | 8    | size               |                                   |
 * | 16            | 8    | entry offset       | entries offset                    |
 * | 24            | 8    | entry size         | entries count                     |
 * | 32            | 8    | -                  | v3: inflated size (0: not packed) |
 * entry (40): u16 image kind, u16 offload kind, u32 flags, u64 string offset, u64 string count,
 *             u64 image offset, u64 image size
 * string entry: v1 (16) u64 key offset, u64 value offset; v2+ (24) adds u64 value size
 *
 * State (in and out): pos = binary start; entry = -1 before the header record, else the entry; string =
 * -1 before the entry record, else the next string entry. Records (10 x f64), first slot the type:
 *   BINARY  1, pos, version, size, entries offset, 5th field (v1 entry size, v2+ count), inflated size,
 *           header size
 *   ENTRY   2, entry position, image kind, offload kind, flags, string-entry array position, string
 *           count, image position, image size, entry index
 *   STRING  3, string-entry position, key position, key length, value position, value length, index
 * Positions in records are blob-relative (binary start + field). A compressed v3 binary gets only its
 * BINARY record: TypeScript inflates it and walks the result as a blob of its own.
 *
 * Everything one step reads (header, entry, string entry, key, value) must be in the window together.
 * When it is not, the walk returns MORE with R_AUX1/R_AUX2 = the byte range wanted; a window that already
 * starts there and still lacks it means the metadata is spread wider than the window (TOO_WIDE).
 */
import {
  OFFLOAD_RECORD_BINARY, OFFLOAD_RECORD_ENTRY, OFFLOAD_RECORD_F64S, OFFLOAD_RECORD_STRING,
  RECORDS, RECORDS_BYTES, R_AUX0, R_AUX1, R_AUX2, R_COUNT, R_ERROR_POS, R_NEXT_INDEX, R_NEXT_POS, R_STATUS,
  setResult, windowPtr,
} from "./layout";
import { Status } from "./status";

/** 10 FF 10 AD read as a little-endian u32. */
const MAGIC: u32 = 0xad10ff10;
const ENTRY_SIZE: u64 = 40;
const STRING_ENTRY_V1: u64 = 16;
const STRING_ENTRY_V2: u64 = 24;
/** LLVM 19 wants room for a header and an entry before it looks at a v1 header. */
const V1_MINIMUM: u64 = 72;
/** sizeof(Header) since version 3; current LLVM asks every version for it. */
const V2_MINIMUM: u64 = 40;

// Step-local view of the window and the bytes the step has asked for so far.
let wStart: u64 = 0;
let wEnd: u64 = 0;
let needLo: u64 = 0;
let needHi: u64 = 0;

@inline function want(at: u64, length: u64): bool {
  if (at < needLo) needLo = at;
  if (at + length > needHi) needHi = at + length;
  return at >= wStart && at + length <= wEnd;
}

@inline function u16At(at: u64): u64 {
  return <u64>load<u16>(windowPtr() + <usize>(at - wStart));
}

@inline function u32At(at: u64): u64 {
  return <u64>load<u32>(windowPtr() + <usize>(at - wStart));
}

@inline function u64At(at: u64): u64 {
  return load<u64>(windowPtr() + <usize>(at - wStart));
}

function finish(status: i32, written: u32, pos: u64, entry: f64, str: f64, errorPos: u64): i32 {
  setResult(R_STATUS, <f64>status);
  setResult(R_COUNT, <f64>written);
  setResult(R_NEXT_POS, <f64>pos);
  setResult(R_NEXT_INDEX, entry);
  setResult(R_AUX0, str);
  setResult(R_ERROR_POS, <f64>errorPos);
  return status;
}

/** MORE for a missing range, or TOO_WIDE when the window already starts where the step needs it. */
function missing(written: u32, pos: u64, entry: f64, str: f64): i32 {
  setResult(R_AUX1, <f64>needLo);
  setResult(R_AUX2, <f64>needHi);
  if (wStart == needLo) return finish(Status.OFFLOAD_METADATA_TOO_WIDE, written, pos, entry, str, needLo);
  return finish(Status.MORE, written, pos, entry, str, 0);
}

@inline function record(index: u32): usize {
  return RECORDS + <usize>index * <usize>(OFFLOAD_RECORD_F64S * 8);
}

/**
 * Length of the NUL-terminated string at `at`, which ends at the binary's end `limit` at the latest (LLVM
 * reads binaries from a NUL-terminated copy, so an unterminated string runs to the end). -1 when the
 * window ends first.
 */
function cStringLength(at: u64, limit: u64): i64 {
  const stop = limit < wEnd ? limit : wEnd;
  const base = windowPtr() - <usize>wStart;
  for (let p = at; p < stop; p++) {
    if (load<u8>(base + <usize>p) == 0) return <i64>(p - at);
  }
  if (stop == limit) return <i64>(limit - at);
  return -1;
}

/**
 * Walks binaries from state (pos, entry, str) with the window holding blob bytes [winPos, winPos + winLen).
 * Versions above `maxVersion` are refused (1: LLVM 19 and 22.1.8; 3: current upstream).
 * Returns DONE at the end of the blob, MORE (records full: R_AUX1 = -1; or bytes missing: R_AUX1/R_AUX2),
 * or a negative status with R_ERROR_POS at the failing field and the state at the failing step.
 */
export function walkOffloadBinaries(
  winPos: f64, winLen: u32, bufSize: f64, pos: f64, entry: f64, str: f64, maxRecords: u32, maxVersion: u32,
): i32 {
  const size = <u64>bufSize;
  wStart = <u64>winPos;
  wEnd = wStart + <u64>winLen;
  const cap = min<u32>(maxRecords, <u32>(RECORDS_BYTES / (OFFLOAD_RECORD_F64S * 8)));
  let p = <u64>pos;
  let e = entry;
  let s = str;
  let written: u32 = 0;
  setResult(R_AUX1, -1);
  setResult(R_AUX2, -1);
  while (p < size) {
    if (written == cap) return finish(Status.MORE, written, p, e, s, 0);
    const rem = size - p;
    needLo = p;
    needHi = p;
    if (rem < 4) return finish(Status.OFFLOAD_HEADER_TRUNCATED, written, p, e, s, p);
    if (!want(p, rem < V2_MINIMUM ? rem : V2_MINIMUM)) return missing(written, p, e, s);
    if (<u32>u32At(p) != MAGIC) return finish(Status.OFFLOAD_BAD_MAGIC, written, p, e, s, p);
    if (rem < 8) return finish(Status.OFFLOAD_HEADER_TRUNCATED, written, p, e, s, p);
    const version = u32At(p + 4);
    if (version == 0 || version > <u64>maxVersion) return finish(Status.OFFLOAD_BAD_VERSION, written, p, e, s, p + 4);
    if (rem < (version == 1 ? V1_MINIMUM : V2_MINIMUM)) return finish(Status.OFFLOAD_HEADER_TRUNCATED, written, p, e, s, p);
    const binSize = u64At(p + 8);
    if (binSize > rem || binSize < ENTRY_SIZE) return finish(Status.OFFLOAD_SIZE_OUT_OF_BOUNDS, written, p, e, s, p + 8);
    const entriesOffset = u64At(p + 16);
    const fifth = u64At(p + 24);
    const inflated = version >= 3 ? u64At(p + 32) : 0;
    const compressed = inflated != 0;
    let count: u64 = 1;
    if (compressed) {
      if (entriesOffset > binSize || inflated < entriesOffset) {
        return finish(Status.OFFLOAD_COMPRESSED_OUT_OF_BOUNDS, written, p, e, s, p + 16);
      }
      count = 0;
    } else if (version == 1) {
      if (entriesOffset > binSize - ENTRY_SIZE) return finish(Status.OFFLOAD_ENTRIES_OUT_OF_BOUNDS, written, p, e, s, p + 16);
      if (fifth > binSize - 32) return finish(Status.OFFLOAD_ENTRIES_OUT_OF_BOUNDS, written, p, e, s, p + 24);
    } else {
      count = fifth;
      if (count > (binSize - 32) / ENTRY_SIZE) return finish(Status.OFFLOAD_ENTRIES_OUT_OF_BOUNDS, written, p, e, s, p + 24);
      if (entriesOffset > binSize - count * ENTRY_SIZE) return finish(Status.OFFLOAD_ENTRIES_OUT_OF_BOUNDS, written, p, e, s, p + 16);
    }
    const binEnd = p + binSize;

    if (e < 0) {
      const r = record(written++);
      store<f64>(r, <f64>OFFLOAD_RECORD_BINARY);
      store<f64>(r, <f64>p, 8);
      store<f64>(r, <f64>version, 16);
      store<f64>(r, <f64>binSize, 24);
      store<f64>(r, <f64>entriesOffset, 32);
      store<f64>(r, <f64>fifth, 40);
      store<f64>(r, <f64>inflated, 48);
      store<f64>(r, version >= 3 ? 40.0 : 32.0, 56);
      e = 0;
      s = -1;
    } else {
      const k = <u64>e;
      const at = p + entriesOffset + k * ENTRY_SIZE;
      if (!want(at, ENTRY_SIZE)) return missing(written, p, e, s);
      const stringOffset = u64At(at + 8);
      const numStrings = u64At(at + 16);
      const imageOffset = u64At(at + 24);
      const imageSize = u64At(at + 32);
      const stringEntrySize = version == 1 ? STRING_ENTRY_V1 : STRING_ENTRY_V2;
      if (s < 0) {
        // LLVM's order (image offset, string offset, string array), then the image end LLVM never checks.
        if (imageOffset > binSize) return finish(Status.OFFLOAD_IMAGE_OUT_OF_BOUNDS, written, p, e, s, at + 24);
        if (stringOffset > binSize) return finish(Status.OFFLOAD_STRINGS_OUT_OF_BOUNDS, written, p, e, s, at + 8);
        if (numStrings > (binSize - stringOffset) / stringEntrySize) {
          return finish(Status.OFFLOAD_STRINGS_OUT_OF_BOUNDS, written, p, e, s, at + 16);
        }
        if (imageSize > binSize - imageOffset) return finish(Status.OFFLOAD_IMAGE_OUT_OF_BOUNDS, written, p, e, s, at + 32);
        const r = record(written++);
        store<f64>(r, <f64>OFFLOAD_RECORD_ENTRY);
        store<f64>(r, <f64>at, 8);
        store<f64>(r, <f64>u16At(at), 16);
        store<f64>(r, <f64>u16At(at + 2), 24);
        store<f64>(r, <f64>u32At(at + 4), 32);
        store<f64>(r, <f64>(p + stringOffset), 40);
        store<f64>(r, <f64>numStrings, 48);
        store<f64>(r, <f64>(p + imageOffset), 56);
        store<f64>(r, <f64>imageSize, 64);
        store<f64>(r, <f64>k, 72);
        s = 0;
      } else {
        const j = <u64>s;
        const se = p + stringOffset + j * stringEntrySize;
        if (!want(se, stringEntrySize)) return missing(written, p, e, s);
        const keyOffset = u64At(se);
        const valueOffset = u64At(se + 8);
        // Offset == size is the NUL LLVM's buffer copy ends with: an empty string, not an error.
        if (keyOffset > binSize) return finish(Status.OFFLOAD_KEY_OUT_OF_BOUNDS, written, p, e, s, se);
        let valueLength: i64 = 0;
        if (valueOffset > binSize) return finish(Status.OFFLOAD_VALUE_OUT_OF_BOUNDS, written, p, e, s, se + 8);
        if (version > 1) {
          const valueSize = u64At(se + 16);
          if (valueSize > binSize - valueOffset) return finish(Status.OFFLOAD_VALUE_OUT_OF_BOUNDS, written, p, e, s, se + 16);
          valueLength = <i64>valueSize;
          if (!want(p + valueOffset, valueSize)) return missing(written, p, e, s);
        }
        if (!want(p + keyOffset, 0)) return missing(written, p, e, s);
        const keyLength = cStringLength(p + keyOffset, binEnd);
        if (keyLength < 0) {
          needHi = binEnd;
          return missing(written, p, e, s);
        }
        want(p + keyOffset, <u64>keyLength);
        if (version == 1) {
          if (!want(p + valueOffset, 0)) return missing(written, p, e, s);
          valueLength = cStringLength(p + valueOffset, binEnd);
          if (valueLength < 0) {
            needHi = binEnd;
            return missing(written, p, e, s);
          }
        }
        const r = record(written++);
        store<f64>(r, <f64>OFFLOAD_RECORD_STRING);
        store<f64>(r, <f64>se, 8);
        store<f64>(r, <f64>(p + keyOffset), 16);
        store<f64>(r, <f64>keyLength, 24);
        store<f64>(r, <f64>(p + valueOffset), 32);
        store<f64>(r, <f64>valueLength, 40);
        store<f64>(r, <f64>j, 48);
        s += 1;
      }
      if (s >= 0 && <u64>s >= numStrings) {
        e += 1;
        s = -1;
      }
    }
    if (e >= 0 && <u64>e >= count) {
      p = version == 1 ? binEnd : (binEnd + 7) & ~(<u64>7);
      e = -1;
      s = -1;
    }
  }
  return finish(Status.DONE, written, p, e, s, 0);
}
