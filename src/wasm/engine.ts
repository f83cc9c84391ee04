/**
 * The Wasm engine: the AssemblyScript kernels themselves, plus the window. Nothing here interprets bytes.
 */
import type { Engine, EngineViews } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import { KERNELS, instantiate } from "./load.js";
import type { KernelName, WasmExports } from "./load.js";
import { WasmMemoryViews } from "./memory.js";

// The kernel methods are the Wasm exports themselves, assigned in the constructor (no forwarding frame).
export interface WasmEngine extends Pick<Engine, KernelName> {}

export class WasmEngine implements Engine {
  readonly kind = "wasm" as const;
  private readonly core: WasmExports;
  private readonly memory: WasmMemoryViews;
  private capacity = 0;

  constructor(module: WebAssembly.Module, windowCapacity: number) {
    this.core = instantiate(module);
    for (const name of KERNELS) Object.defineProperty(this, name, { value: this.core[name] });
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
}
