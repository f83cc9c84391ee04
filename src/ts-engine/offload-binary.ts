/**
 * TypeScript twin of assembly/offload-binary.ts: the offload binary walk, with the same steps, checks in
 * the same order, records and statuses (test/fuzz/offload-binary-engines.test.ts proves they agree).
 * Positions are exact below 2^53; larger field values round monotonically, so every comparison against
 * the (exact) binary size decides as the Wasm core's u64 comparison does.
 */
import {
  OFFLOAD_MAX_RECORDS, OFFLOAD_RECORD_BINARY, OFFLOAD_RECORD_ENTRY, OFFLOAD_RECORD_F64S, OFFLOAD_RECORD_STRING,
  RECORDS, RESULT, R_AUX0, R_AUX1, R_AUX2,
} from "../engine/layout.js";
import { Status } from "../engine/status.js";
import type { TsMemory } from "./memory.js";

const MAGIC = 0xad10ff10;
const ENTRY_SIZE = 40;
const STRING_ENTRY_V1 = 16;
const STRING_ENTRY_V2 = 24;
const V1_MINIMUM = 72;
const V2_MINIMUM = 40;

/** One call's view of the window and the byte range its current step has asked for. */
class Step {
  needLo = 0;
  needHi = 0;
  constructor(readonly mem: TsMemory, readonly wStart: number, readonly wEnd: number) {}

  want(at: number, length: number): boolean {
    if (at < this.needLo) this.needLo = at;
    if (at + length > this.needHi) this.needHi = at + length;
    return at >= this.wStart && at + length <= this.wEnd;
  }

  u16(at: number): number {
    return this.mem.data.getUint16(this.mem.windowBase + (at - this.wStart), true);
  }

  u32(at: number): number {
    return this.mem.data.getUint32(this.mem.windowBase + (at - this.wStart), true);
  }

  u64(at: number): number {
    return this.mem.u64(this.mem.windowBase + (at - this.wStart));
  }

  /** See cStringLength in the kernel: -1 when the window ends before the NUL and before `limit`. */
  cStringLength(at: number, limit: number): number {
    const stop = Math.min(limit, this.wEnd);
    const bytes = this.mem.bytes;
    const base = this.mem.windowBase - this.wStart;
    for (let p = at; p < stop; p++) if (bytes[base + p] === 0) return p - at;
    return stop === limit ? limit - at : -1;
  }
}

/** The walk's RESULT slots: the common ones, plus the string index in R_AUX0. */
function finish(mem: TsMemory, status: number, written: number, pos: number, entry: number, str: number, errorPos: number): number {
  mem.f64[(RESULT >>> 3) + R_AUX0] = str;
  return mem.finish(status, written, pos, entry, errorPos);
}

function missing(step: Step, written: number, pos: number, entry: number, str: number): number {
  const r = RESULT >>> 3;
  step.mem.f64[r + R_AUX1] = step.needLo;
  step.mem.f64[r + R_AUX2] = step.needHi;
  if (step.wStart === step.needLo) return finish(step.mem, Status.OFFLOAD_METADATA_TOO_WIDE, written, pos, entry, str, step.needLo);
  return finish(step.mem, Status.MORE, written, pos, entry, str, 0);
}

function put(mem: TsMemory, index: number, values: readonly number[]): void {
  const at = (RECORDS >>> 3) + index * OFFLOAD_RECORD_F64S;
  for (let k = 0; k < OFFLOAD_RECORD_F64S; k++) mem.f64[at + k] = values[k] ?? 0;
}

export function walkOffloadBinaries(
  mem: TsMemory, windowPosition: number, windowLength: number, bufferSize: number,
  position: number, entry: number, string: number, maxRecords: number, maxVersion: number,
): number {
  const size = bufferSize;
  const wStart = windowPosition;
  const cap = Math.min(maxRecords, OFFLOAD_MAX_RECORDS);
  let p = position;
  let e = entry;
  let s = string;
  let written = 0;
  const r = RESULT >>> 3;
  mem.f64[r + R_AUX1] = -1;
  mem.f64[r + R_AUX2] = -1;
  while (p < size) {
    if (written === cap) return finish(mem, Status.MORE, written, p, e, s, 0);
    const rem = size - p;
    const step = new Step(mem, wStart, wStart + windowLength);
    step.needLo = p;
    step.needHi = p;
    if (rem < 4) return finish(mem, Status.OFFLOAD_HEADER_TRUNCATED, written, p, e, s, p);
    if (!step.want(p, Math.min(rem, V2_MINIMUM))) return missing(step, written, p, e, s);
    if (step.u32(p) !== MAGIC) return finish(mem, Status.OFFLOAD_BAD_MAGIC, written, p, e, s, p);
    if (rem < 8) return finish(mem, Status.OFFLOAD_HEADER_TRUNCATED, written, p, e, s, p);
    const version = step.u32(p + 4);
    if (version === 0 || version > maxVersion) return finish(mem, Status.OFFLOAD_BAD_VERSION, written, p, e, s, p + 4);
    if (rem < (version === 1 ? V1_MINIMUM : V2_MINIMUM)) return finish(mem, Status.OFFLOAD_HEADER_TRUNCATED, written, p, e, s, p);
    const binSize = step.u64(p + 8);
    if (binSize > rem || binSize < ENTRY_SIZE) return finish(mem, Status.OFFLOAD_SIZE_OUT_OF_BOUNDS, written, p, e, s, p + 8);
    const entriesOffset = step.u64(p + 16);
    const fifth = step.u64(p + 24);
    const inflated = version >= 3 ? step.u64(p + 32) : 0;
    let count = 1;
    if (inflated !== 0) {
      if (entriesOffset > binSize || inflated < entriesOffset) {
        return finish(mem, Status.OFFLOAD_COMPRESSED_OUT_OF_BOUNDS, written, p, e, s, p + 16);
      }
      count = 0;
    } else if (version === 1) {
      if (entriesOffset > binSize - ENTRY_SIZE) return finish(mem, Status.OFFLOAD_ENTRIES_OUT_OF_BOUNDS, written, p, e, s, p + 16);
      if (fifth > binSize - 32) return finish(mem, Status.OFFLOAD_ENTRIES_OUT_OF_BOUNDS, written, p, e, s, p + 24);
    } else {
      count = fifth;
      if (count > Math.floor((binSize - 32) / ENTRY_SIZE)) return finish(mem, Status.OFFLOAD_ENTRIES_OUT_OF_BOUNDS, written, p, e, s, p + 24);
      if (entriesOffset > binSize - count * ENTRY_SIZE) return finish(mem, Status.OFFLOAD_ENTRIES_OUT_OF_BOUNDS, written, p, e, s, p + 16);
    }
    const binEnd = p + binSize;

    if (e < 0) {
      put(mem, written++, [OFFLOAD_RECORD_BINARY, p, version, binSize, entriesOffset, fifth, inflated, version >= 3 ? 40 : 32]);
      e = 0;
      s = -1;
    } else {
      const k = e;
      const at = p + entriesOffset + k * ENTRY_SIZE;
      if (!step.want(at, ENTRY_SIZE)) return missing(step, written, p, e, s);
      const stringOffset = step.u64(at + 8);
      const numStrings = step.u64(at + 16);
      const imageOffset = step.u64(at + 24);
      const imageSize = step.u64(at + 32);
      const stringEntrySize = version === 1 ? STRING_ENTRY_V1 : STRING_ENTRY_V2;
      if (s < 0) {
        if (imageOffset > binSize) return finish(mem, Status.OFFLOAD_IMAGE_OUT_OF_BOUNDS, written, p, e, s, at + 24);
        if (stringOffset > binSize) return finish(mem, Status.OFFLOAD_STRINGS_OUT_OF_BOUNDS, written, p, e, s, at + 8);
        if (numStrings > Math.floor((binSize - stringOffset) / stringEntrySize)) {
          return finish(mem, Status.OFFLOAD_STRINGS_OUT_OF_BOUNDS, written, p, e, s, at + 16);
        }
        if (imageSize > binSize - imageOffset) return finish(mem, Status.OFFLOAD_IMAGE_OUT_OF_BOUNDS, written, p, e, s, at + 32);
        put(mem, written++, [
          OFFLOAD_RECORD_ENTRY, at, step.u16(at), step.u16(at + 2), step.u32(at + 4),
          p + stringOffset, numStrings, p + imageOffset, imageSize, k,
        ]);
        s = 0;
      } else {
        const j = s;
        const se = p + stringOffset + j * stringEntrySize;
        if (!step.want(se, stringEntrySize)) return missing(step, written, p, e, s);
        const keyOffset = step.u64(se);
        const valueOffset = step.u64(se + 8);
        if (keyOffset > binSize) return finish(mem, Status.OFFLOAD_KEY_OUT_OF_BOUNDS, written, p, e, s, se);
        let valueLength = 0;
        if (valueOffset > binSize) return finish(mem, Status.OFFLOAD_VALUE_OUT_OF_BOUNDS, written, p, e, s, se + 8);
        if (version > 1) {
          const valueSize = step.u64(se + 16);
          if (valueSize > binSize - valueOffset) return finish(mem, Status.OFFLOAD_VALUE_OUT_OF_BOUNDS, written, p, e, s, se + 16);
          valueLength = valueSize;
          if (!step.want(p + valueOffset, valueSize)) return missing(step, written, p, e, s);
        }
        if (!step.want(p + keyOffset, 0)) return missing(step, written, p, e, s);
        const keyLength = step.cStringLength(p + keyOffset, binEnd);
        if (keyLength < 0) {
          step.needHi = binEnd;
          return missing(step, written, p, e, s);
        }
        step.want(p + keyOffset, keyLength);
        if (version === 1) {
          if (!step.want(p + valueOffset, 0)) return missing(step, written, p, e, s);
          valueLength = step.cStringLength(p + valueOffset, binEnd);
          if (valueLength < 0) {
            step.needHi = binEnd;
            return missing(step, written, p, e, s);
          }
        }
        put(mem, written++, [OFFLOAD_RECORD_STRING, se, p + keyOffset, keyLength, p + valueOffset, valueLength, j]);
        s += 1;
      }
      if (s >= 0 && s >= numStrings) {
        e += 1;
        s = -1;
      }
    }
    if (e >= 0 && e >= count) {
      p = version === 1 ? binEnd : Math.ceil(binEnd / 8) * 8;
      e = -1;
      s = -1;
    }
  }
  return finish(mem, Status.DONE, written, p, e, s, 0);
}
