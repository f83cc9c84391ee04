/**
 * The Wasm engine: thin forwarding to the AssemblyScript kernels. Nothing here interprets bytes.
 */
import type { Engine, EngineViews } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import { instantiate } from "./load.js";
import { WasmMemoryViews } from "./memory.js";
import type { WasmExports } from "./load.js";

export class WasmEngine implements Engine {
  readonly kind = "wasm" as const;
  private readonly core: WasmExports;
  private readonly memory: WasmMemoryViews;
  private capacity = 0;

  constructor(module: WebAssembly.Module, windowCapacity: number) {
    this.core = instantiate(module);
    this.memory = new WasmMemoryViews(this.core.memory);
    this.reserveWindow(windowCapacity);
  }

  get windowCapacity(): number {
    return this.capacity;
  }

  reserveWindow(size: number): void {
    if (size <= this.capacity) return;
    const base = this.core.reserveWindow(size);
    if (base === 0) throw new OffloadKitError("OUT_OF_MEMORY", `cannot grow Wasm memory for a ${size}-byte window`);
    this.capacity = this.core.getWindowCapacity();
    this.memory.setWindow(base, this.capacity);
  }

  views(): EngineViews {
    return this.memory.get();
  }

  scan(needleLength: number, start: number, end: number, maxHits: number): number {
    return this.core.scan(needleLength, start, end, maxHits);
  }

  bundleHead(windowLength: number, bufferSize: number): number {
    return this.core.bundleHead(windowLength, bufferSize);
  }

  walkBundle(
    windowPosition: number, windowLength: number, bufferSize: number,
    position: number, index: number, count: number, maxRecords: number,
  ): number {
    return this.core.walkBundle(windowPosition, windowLength, bufferSize, position, index, count, maxRecords);
  }

  walkOffloadBinaries(
    windowPosition: number, windowLength: number, bufferSize: number,
    position: number, entry: number, string: number, maxRecords: number, maxVersion: number,
  ): number {
    return this.core.walkOffloadBinaries(windowPosition, windowLength, bufferSize, position, entry, string, maxRecords, maxVersion);
  }

  archiveHead(windowLength: number, bufferSize: number): number {
    return this.core.archiveHead(windowLength, bufferSize);
  }

  walkArchive(
    windowPosition: number, windowLength: number, bufferSize: number,
    position: number, index: number, flags: number, maxRecords: number,
  ): number {
    return this.core.walkArchive(windowPosition, windowLength, bufferSize, position, index, flags, maxRecords);
  }
}
