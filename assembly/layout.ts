/**
 * The ABI between the Wasm kernels and TypeScript: fixed regions of linear memory.
 *
 * Only numbers cross the boundary. TypeScript writes inputs (needle bytes, window bytes) into these
 * regions, calls a kernel with offsets and lengths, and reads fixed-size records back. The regions
 * live below `memoryBase` (64 KiB, see asconfig.json), so AssemblyScript's own static data never
 * overlaps them; the window sits above `__heap_base`, and grows with `reserveWindow`.
 *
 * Mirrored by src/engine/layout.ts; test/engine/abi.test.ts checks the two agree.
 *
 * | region  | offset  | size          | holds                                              |
 * |---------|---------|---------------|----------------------------------------------------|
 * | RESULT  | 0x0100  | 16 x f64      | status, record count, resume position, error info  |
 * | NEEDLE  | 0x0200  | 256 bytes     | the byte string `scan` looks for                   |
 * | RECORDS | 0x0400  | 63 KiB        | kernel output records (f64 or u32 arrays)          |
 * | WINDOW  | dynamic | reserveWindow | a window of the input file, filled by TypeScript   |
 */

export const ABI_VERSION: u32 = 1;

export const RESULT: usize = 0x100;
export const RESULT_SLOTS: i32 = 16;
export const NEEDLE: usize = 0x200;
export const NEEDLE_MAX: i32 = 256;
export const RECORDS: usize = 0x400;
export const RECORDS_BYTES: i32 = 0x10000 - 0x400;

/** RESULT slots, each an f64 (exact for every file position below 2^53). */
export const R_STATUS: i32 = 0;
/** Records written by the last call. */
export const R_COUNT: i32 = 1;
/** Where the next call resumes (a position in the caller's coordinates). */
export const R_NEXT_POS: i32 = 2;
/** Index of the next item (entry, member) to read. */
export const R_NEXT_INDEX: i32 = 3;
/** Position of the field that failed validation. */
export const R_ERROR_POS: i32 = 4;
/** Kernel-specific extra values. */
export const R_AUX0: i32 = 5;
export const R_AUX1: i32 = 6;
export const R_AUX2: i32 = 7;

/** Archive member walk records (assembly/ar.ts): eight f64 per member. */
export const AR_RECORD_F64S: i32 = 8;

/** Offload binary walk records (assembly/offload-binary.ts): ten f64 each, the first one the record type. */
export const OFFLOAD_RECORD_F64S: i32 = 10;
export const OFFLOAD_RECORD_BINARY: i32 = 1;
export const OFFLOAD_RECORD_ENTRY: i32 = 2;
export const OFFLOAD_RECORD_STRING: i32 = 3;

@inline export function setResult(slot: i32, value: f64): void {
  store<f64>(RESULT + (<usize>slot << 3), value);
}

@inline export function getResult(slot: i32): f64 {
  return load<f64>(RESULT + (<usize>slot << 3));
}

/** Base address of the window; 0 until reserveWindow is called. */
let windowBase: usize = 0;
let windowCapacity: u32 = 0;

@inline export function windowPtr(): usize {
  return windowBase;
}

export function getWindowCapacity(): u32 {
  return windowCapacity;
}

/**
 * Makes room for a window of `size` bytes and returns its address (0 if memory cannot grow). The
 * window comes from the runtime's heap, so it never overlaps the runtime's own data; a larger window
 * replaces the old one. Growing memory detaches every JS view of it: callers rebuild their views.
 */
export function reserveWindow(size: u32): usize {
  if (size <= windowCapacity && windowBase != 0) return windowBase;
  const pagesNeeded = <i32>(((<usize>size + 0xffff) >>> 16) + 1);
  // Check growth up front: a failing heap.alloc would trap instead of reporting.
  if (memory.size() + pagesNeeded > 65536) return 0;
  windowBase = heap.alloc(<usize>size);
  windowCapacity = size;
  return windowBase;
}
