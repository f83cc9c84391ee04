/**
 * The one place that holds views over the Wasm linear memory. Growing the memory detaches the old
 * ArrayBuffer, so every view is rebuilt when the buffer changes; everything else asks here.
 */
import type { EngineViews } from "../engine/engine.js";

export class WasmMemoryViews {
  private buffer: ArrayBuffer | undefined;
  private cached: EngineViews | undefined;
  private windowBase = 0;
  private windowCapacity = 0;

  constructor(private readonly memory: WebAssembly.Memory) {}

  setWindow(base: number, capacity: number): void {
    this.windowBase = base;
    this.windowCapacity = capacity;
    this.cached = undefined;
  }

  get(): EngineViews {
    const buffer = this.memory.buffer as ArrayBuffer;
    if (this.cached === undefined || buffer !== this.buffer) {
      this.buffer = buffer;
      const bytes = new Uint8Array(buffer);
      this.cached = {
        bytes,
        f64: new Float64Array(buffer),
        u32: new Uint32Array(buffer),
        window: bytes.subarray(this.windowBase, this.windowBase + this.windowCapacity),
      };
    }
    return this.cached;
  }
}
