/**
 * TypeScript twin of assembly/bundle.ts: the binary bundle header walk, with the same checks in the
 * same order, the same records and the same statuses. Positions are exact below 2^53; larger field
 * values round monotonically, which keeps every comparison against the (exact) buffer size correct.
 */
import {
  BUNDLE_MAX_RECORDS, BUNDLE_RECORD_F64S, RECORDS, RESULT,
  R_AUX0,
} from "../engine/layout.js";
import { Status } from "../engine/status.js";
import type { TsMemory } from "./memory.js";

const MAGIC = "__CLANG_OFFLOAD_BUNDLE__";
const MAGIC_SIZE = 24;
const HEAD_SIZE = 32;
const ENTRY_FIXED = 24;


export function bundleHead(mem: TsMemory, windowLength: number, bufferSize: number): number {
  mem.f64[(RESULT >>> 3) + R_AUX0] = 0;
  if (bufferSize < MAGIC_SIZE || windowLength < MAGIC_SIZE) return mem.finish(Status.NOT_FOUND, 0, 0, 0, 0);
  const win = mem.windowBase;
  for (let k = 0; k < MAGIC_SIZE; k++) {
    if (mem.bytes[win + k] !== MAGIC.charCodeAt(k)) return mem.finish(Status.NOT_FOUND, 0, 0, 0, 0);
  }
  if (bufferSize < HEAD_SIZE || windowLength < HEAD_SIZE) {
    return mem.finish(Status.BUNDLE_COUNT_TRUNCATED, 0, MAGIC_SIZE, 0, MAGIC_SIZE);
  }
  mem.f64[(RESULT >>> 3) + R_AUX0] = mem.u64(win + MAGIC_SIZE);
  return mem.finish(Status.DONE, 0, HEAD_SIZE, 0, 0);
}

export function walkBundle(
  mem: TsMemory, windowPosition: number, windowLength: number, bufferSize: number,
  position: number, index: number, count: number, maxRecords: number,
): number {
  const size = bufferSize;
  const wStart = windowPosition;
  const wEnd = wStart + windowLength;
  const cap = Math.min(maxRecords, BUNDLE_MAX_RECORDS);
  const win = mem.windowBase;
  let p = position;
  let i = index;
  let written = 0;
  while (i < count) {
    if (written === cap) return mem.finish(Status.MORE, written, p, i, 0);
    if (p + 8 > size) return mem.finish(Status.BUNDLE_OFFSET_TRUNCATED, written, p, i, p);
    if (p + 16 > size) return mem.finish(Status.BUNDLE_SIZE_TRUNCATED, written, p, i, p + 8);
    if (p + 24 > size) return mem.finish(Status.BUNDLE_ID_LENGTH_TRUNCATED, written, p, i, p + 16);
    if (p < wStart || p + ENTRY_FIXED > wEnd) return mem.finish(Status.MORE, written, p, i, 0);
    const at = win + (p - wStart);
    const offset = mem.u64(at);
    const entrySize = mem.u64(at + 8);
    const idLength = mem.u64(at + 16);
    if (idLength > size - (p + ENTRY_FIXED)) return mem.finish(Status.BUNDLE_ID_TRUNCATED, written, p, i, p + 16);
    if (p + ENTRY_FIXED + idLength > wEnd) {
      if (ENTRY_FIXED + idLength > mem.windowCapacity) {
        return mem.finish(Status.BUNDLE_ID_TOO_LONG, written, p, i, p + 16);
      }
      return mem.finish(Status.MORE, written, p, i, 0);
    }
    if (offset === 0) return mem.finish(Status.BUNDLE_OFFSET_ZERO, written, p, i, p);
    if (entrySize > size || offset > size - entrySize) {
      return mem.finish(Status.BUNDLE_PAYLOAD_OUT_OF_BOUNDS, written, p, i, p);
    }
    const rec = (RECORDS >>> 3) + written * BUNDLE_RECORD_F64S;
    mem.f64[rec] = p + ENTRY_FIXED;
    mem.f64[rec + 1] = idLength;
    mem.f64[rec + 2] = offset;
    mem.f64[rec + 3] = entrySize;
    p += ENTRY_FIXED + idLength;
    i++;
    written++;
  }
  return mem.finish(Status.DONE, written, p, i, 0);
}
