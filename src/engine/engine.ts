/**
 * The interface both engines implement: the Wasm core (src/wasm/) and its pure-TypeScript twin
 * (src/ts-engine/). A kernel reads the engine's window and writes RESULT slots and RECORDS in the
 * layout of src/engine/layout.ts; it takes and returns numbers only.
 *
 * Views over the engine memory are valid until the next `reserveWindow` (Wasm memory growth detaches
 * the old buffer), so callers ask `views()` again after reserving.
 */

export type EngineKind = "wasm" | "ts";

export interface EngineViews {
  /** The whole engine memory. */
  readonly bytes: Uint8Array;
  readonly f64: Float64Array;
  readonly u32: Uint32Array;
  /** The window: `windowCapacity` bytes the kernels read. */
  readonly window: Uint8Array;
}

export interface Engine {
  readonly kind: EngineKind;
  readonly windowCapacity: number;
  /** Makes the window at least `size` bytes. Invalidates earlier views. */
  reserveWindow(size: number): void;
  views(): EngineViews;

  /** Occurrences of the NEEDLE bytes starting in window [start, end - needleLength]; see assembly/scan.ts. */
  scan(needleLength: number, start: number, end: number, maxHits: number): number;
  /** Binary bundle magic + entry count; see assembly/bundle.ts. */
  bundleHead(windowLength: number, bufferSize: number): number;
  /** Binary bundle entry walk; see assembly/bundle.ts. */
  walkBundle(
    windowPosition: number, windowLength: number, bufferSize: number,
    position: number, index: number, count: number, maxRecords: number,
  ): number;
  /** Offload binary walk (0x10FF10AD), resumable; see assembly/offload-binary.ts. */
  walkOffloadBinaries(
    windowPosition: number, windowLength: number, bufferSize: number,
    position: number, entry: number, string: number, maxRecords: number, maxVersion: number,
  ): number;
  /** Archive magic and kind; see assembly/ar.ts. */
  archiveHead(windowLength: number, bufferSize: number): number;
  /** Archive member walk; see assembly/ar.ts. */
  walkArchive(
    windowPosition: number, windowLength: number, bufferSize: number,
    position: number, index: number, flags: number, maxRecords: number,
  ): number;
}
