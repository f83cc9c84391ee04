/**
 * The TypeScript twin's memory: one ArrayBuffer laid out like the Wasm linear memory (RESULT, NEEDLE,
 * RECORDS below 64 KiB, then the window), so the code that reads records is shared by both engines.
 */
import { RESULT, R_COUNT, R_ERROR_POS, R_NEXT_INDEX, R_NEXT_POS, R_STATUS, TS_WINDOW_BASE } from "../engine/layout.js";

export class TsMemory {
  bytes: Uint8Array;
  data: DataView;
  f64: Float64Array;
  u32: Uint32Array;
  window: Uint8Array;
  readonly windowBase = TS_WINDOW_BASE;
  windowCapacity = 0;

  constructor(windowCapacity: number) {
    this.bytes = new Uint8Array(0);
    this.data = new DataView(this.bytes.buffer);
    this.f64 = new Float64Array(0);
    this.u32 = new Uint32Array(0);
    this.window = this.bytes;
    this.reserve(windowCapacity);
  }

  reserve(size: number): void {
    if (size <= this.windowCapacity && this.bytes.length > 0) return;
    // Typed views need a length that is a multiple of 8; the window keeps its exact capacity.
    const grown = new Uint8Array(Math.ceil((TS_WINDOW_BASE + Math.max(size, this.windowCapacity)) / 8) * 8);
    grown.set(this.bytes.subarray(0, Math.min(this.bytes.length, TS_WINDOW_BASE)));
    this.bytes = grown;
    this.data = new DataView(grown.buffer);
    this.f64 = new Float64Array(grown.buffer);
    this.u32 = new Uint32Array(grown.buffer);
    this.windowCapacity = Math.max(size, this.windowCapacity);
    this.window = grown.subarray(TS_WINDOW_BASE, TS_WINDOW_BASE + this.windowCapacity);
  }

  /** Ends a walk kernel: the RESULT slots every walk reports (as the Wasm kernels' `finish`). */
  finish(status: number, written: number, pos: number, index: number, errorPos: number): number {
    const r = RESULT >>> 3;
    this.f64[r + R_STATUS] = status;
    this.f64[r + R_COUNT] = written;
    this.f64[r + R_NEXT_POS] = pos;
    this.f64[r + R_NEXT_INDEX] = index;
    this.f64[r + R_ERROR_POS] = errorPos;
    return status;
  }

  /** A little-endian u64 as the nearest f64 (the same rounding as Wasm's u64 → f64 conversion). */
  u64(at: number): number {
    return this.data.getUint32(at, true) + this.data.getUint32(at + 4, true) * 4294967296;
  }
}
