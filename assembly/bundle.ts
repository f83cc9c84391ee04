/**
 * Binary bundle header walk (clang-offload-bundler's `__CLANG_OFFLOAD_BUNDLE__` format).
 *
 * Follows BinaryFileHandler::ReadHeader in clang/lib/Driver/OffloadBundler.cpp and
 * ../shared/spec/bundler.md §2: the same fields, validated in the same order, except that a failure
 * is reported (status + offending field position) instead of silently ending the walk. Coordinates
 * are bundle-relative: position 0 is the magic, `bufSize` is the number of bytes the bundle may use.
 *
 * | at        | size | field                                  |
 * |-----------|------|----------------------------------------|
 * | 0         | 24   | "__CLANG_OFFLOAD_BUNDLE__"             |
 * | 24        | 8    | entry count N                          |
 * | 32 + ...  | 8    | entry payload offset (from position 0) |
 * |           | 8    | entry payload size                     |
 * |           | 8    | entry ID length L                      |
 * |           | L    | entry ID                               |
 *
 * Records (4 x f64 each): ID position, ID length, payload offset, payload size (the entry starts 24
 * bytes before its ID; not stored, one store fewer per entry).
 */
import {
  RECORDS, RECORDS_BYTES, R_AUX0, R_COUNT, R_ERROR_POS, R_NEXT_INDEX, R_NEXT_POS, R_STATUS,
  getWindowCapacity, setResult, windowPtr,
} from "./layout";
import { Status } from "./status";

export const BUNDLE_MAGIC_SIZE: u64 = 24;
export const BUNDLE_HEAD_SIZE: u64 = 32;
export const BUNDLE_ENTRY_FIXED: u64 = 24;
export const BUNDLE_RECORD_F64S: i32 = 4;

const MAGIC_BYTES = memory.data<u8>([
  0x5f, 0x5f, 0x43, 0x4c, 0x41, 0x4e, 0x47, 0x5f, 0x4f, 0x46, 0x46, 0x4c, 0x4f, 0x41, 0x44, 0x5f,
  0x42, 0x55, 0x4e, 0x44, 0x4c, 0x45, 0x5f, 0x5f,
]);

function finish(status: Status, written: u32, pos: u64, index: u64, errorPos: u64): i32 {
  setResult(R_STATUS, <f64>status);
  setResult(R_COUNT, <f64>written);
  setResult(R_NEXT_POS, <f64>pos);
  setResult(R_NEXT_INDEX, <f64>index);
  setResult(R_ERROR_POS, <f64>errorPos);
  return status;
}

/**
 * Checks the magic and reads the entry count. The window must start at bundle position 0 and hold
 * `winLen` bytes; `bufSize` is the size of the whole bundle area. The count goes to R_AUX0.
 */
export function bundleHead(winLen: u32, bufSize: f64): i32 {
  const size = <u64>bufSize;
  setResult(R_AUX0, 0);
  if (size < BUNDLE_MAGIC_SIZE || <u64>winLen < BUNDLE_MAGIC_SIZE) return finish(Status.NOT_FOUND, 0, 0, 0, 0);
  const win = windowPtr();
  if (memory.compare(win, MAGIC_BYTES, <usize>BUNDLE_MAGIC_SIZE) != 0) return finish(Status.NOT_FOUND, 0, 0, 0, 0);
  if (size < BUNDLE_HEAD_SIZE || <u64>winLen < BUNDLE_HEAD_SIZE) {
    return finish(Status.BUNDLE_COUNT_TRUNCATED, 0, BUNDLE_MAGIC_SIZE, 0, BUNDLE_MAGIC_SIZE);
  }
  setResult(R_AUX0, <f64>load<u64>(win + <usize>BUNDLE_MAGIC_SIZE));
  return finish(Status.DONE, 0, BUNDLE_HEAD_SIZE, 0, 0);
}

/**
 * Walks entries `index` .. `count`-1 starting at bundle position `pos`, with the window holding bundle
 * positions [winPos, winPos + winLen). Writes at most `maxRecords` records. Returns DONE when all
 * entries are read, MORE when the next entry is not inside the window or the records are full (resume
 * from R_NEXT_POS / R_NEXT_INDEX), or a negative status with R_ERROR_POS at the failing field.
 */
export function walkBundle(winPos: f64, winLen: u32, bufSize: f64, pos: f64, index: f64, count: f64, maxRecords: u32): i32 {
  const size = <u64>bufSize;
  const wStart = <u64>winPos;
  const wEnd = wStart + <u64>winLen;
  // Bytes that are both inside the input and in the window: an entry wholly below this passes every
  // bounds check at once (the fast path below; measured 1.97x -> see bench/kernels.mjs).
  const limit = min<u64>(size, wEnd);
  const cap = min<u32>(maxRecords, <u32>(RECORDS_BYTES / (BUNDLE_RECORD_F64S * 8)));
  const win = windowPtr();
  let p = <u64>pos;
  let i = <u64>index;
  let written: u32 = 0;
  // A hostile count near 2^64 must not be converted to u64 by a trapping conversion.
  const total: u64 = count < 18446744073709551616.0 ? <u64>count : u64.MAX_VALUE;
  while (i < total) {
    if (written == cap) return finish(Status.MORE, written, p, i, 0);
    let offset: u64, entrySize: u64, idLen: u64;
    if (p >= wStart && p + BUNDLE_ENTRY_FIXED <= limit) {
      const at = win + <usize>(p - wStart);
      offset = load<u64>(at);
      entrySize = load<u64>(at, 8);
      idLen = load<u64>(at, 16);
      if (idLen > limit - (p + BUNDLE_ENTRY_FIXED)) {
        const status = idSlowPath(p, idLen, size, wEnd);
        if (status != Status.DONE) return finish(status, written, p, i, status == Status.MORE ? 0 : p + 16);
      }
    } else {
      // The same order as ReadHeader: offset, size, ID length, ID bytes, then offset/size sanity.
      if (p + 8 > size) return finish(Status.BUNDLE_OFFSET_TRUNCATED, written, p, i, p);
      if (p + 16 > size) return finish(Status.BUNDLE_SIZE_TRUNCATED, written, p, i, p + 8);
      if (p + 24 > size) return finish(Status.BUNDLE_ID_LENGTH_TRUNCATED, written, p, i, p + 16);
      return finish(Status.MORE, written, p, i, 0);
    }
    if (offset == 0) return finish(Status.BUNDLE_OFFSET_ZERO, written, p, i, p);
    if (entrySize > size || offset > size - entrySize) return finish(Status.BUNDLE_PAYLOAD_OUT_OF_BOUNDS, written, p, i, p);
    const rec = RECORDS + <usize>written * <usize>(BUNDLE_RECORD_F64S * 8);
    store<f64>(rec, <f64>(p + BUNDLE_ENTRY_FIXED));
    store<f64>(rec, <f64>idLen, 8);
    store<f64>(rec, <f64>offset, 16);
    store<f64>(rec, <f64>entrySize, 24);
    p += BUNDLE_ENTRY_FIXED + idLen;
    i++;
    written++;
  }
  return finish(Status.DONE, written, p, i, 0);
}

/** Why an entry's ID does not fit below the fast-path limit: past the input, too long, or just past the window. */
function idSlowPath(p: u64, idLen: u64, size: u64, wEnd: u64): Status {
  if (idLen > size - (p + BUNDLE_ENTRY_FIXED)) return Status.BUNDLE_ID_TRUNCATED;
  if (p + BUNDLE_ENTRY_FIXED + idLen > wEnd) {
    return BUNDLE_ENTRY_FIXED + idLen > <u64>getWindowCapacity() ? Status.BUNDLE_ID_TOO_LONG : Status.MORE;
  }
  return Status.DONE;
}
