/**
 * The pure-TypeScript engine: used where WebAssembly is unavailable (or forced with
 * OFFLOAD_KIT_ENGINE=ts), and the reference the Wasm core is tested against.
 */
import type { Engine, EngineViews } from "../engine/engine.js";
import { archiveHead, walkArchive } from "./ar.js";
import { bundleHead, walkBundle } from "./bundle.js";
import { walkOffloadBinaries } from "./offload-binary.js";
import { TsMemory } from "./memory.js";
import { scan } from "./scan.js";

export class TsEngine implements Engine {
  readonly kind = "ts" as const;
  private readonly mem: TsMemory;

  constructor(windowCapacity: number) {
    this.mem = new TsMemory(windowCapacity);
  }

  get windowCapacity(): number {
    return this.mem.windowCapacity;
  }

  reserveWindow(size: number): void {
    this.mem.reserve(size);
  }

  views(): EngineViews {
    const { bytes, f64, u32, window } = this.mem;
    return { bytes, f64, u32, window };
  }

  scan(needleLength: number, start: number, end: number, maxHits: number): number {
    return scan(this.mem, needleLength, start, end, maxHits);
  }

  bundleHead(windowLength: number, bufferSize: number): number {
    return bundleHead(this.mem, windowLength, bufferSize);
  }

  walkBundle(
    windowPosition: number, windowLength: number, bufferSize: number,
    position: number, index: number, count: number, maxRecords: number,
  ): number {
    return walkBundle(this.mem, windowPosition, windowLength, bufferSize, position, index, count, maxRecords);
  }

  walkOffloadBinaries(
    windowPosition: number, windowLength: number, bufferSize: number,
    position: number, entry: number, string: number, maxRecords: number, maxVersion: number,
  ): number {
    return walkOffloadBinaries(this.mem, windowPosition, windowLength, bufferSize, position, entry, string, maxRecords, maxVersion);
  }

  archiveHead(windowLength: number, bufferSize: number): number {
    return archiveHead(this.mem, windowLength, bufferSize);
  }

  walkArchive(
    windowPosition: number, windowLength: number, bufferSize: number,
    position: number, index: number, flags: number, maxRecords: number,
  ): number {
    return walkArchive(this.mem, windowPosition, windowLength, bufferSize, position, index, flags, maxRecords);
  }
}
