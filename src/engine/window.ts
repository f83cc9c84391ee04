/**
 * The window: a reused region of engine memory that holds one stretch of a source at a time. Kernels
 * only ever see the window, so memory stays bounded whatever the input size. Positioned reads go
 * straight into engine memory (for the Wasm engine, into linear memory: no copy back and forth).
 *
 * Several Window objects may share one engine; a generation counter per engine notices when another
 * window has overwritten the bytes, and the next `ensure` reloads them.
 */
import type { Engine } from "./engine.js";
import { OffloadKitError } from "./errors.js";
import type { ByteSource } from "./source.js";

const generations = new WeakMap<Engine, number>();
const lastLoaded = new WeakMap<Engine, Window>();

/** The window whose bytes the engine holds now, if any (lets a copy reuse bytes already read). */
export function loadedWindow(engine: Engine): Window | undefined {
  const w = lastLoaded.get(engine);
  return w !== undefined && w.holds(w.position, 0) ? w : undefined;
}

function bump(engine: Engine): number {
  const generation = (generations.get(engine) ?? 0) + 1;
  generations.set(engine, generation);
  return generation;
}

/**
 * Takes the raw window for scratch use (copying): every Window over this engine will reload before
 * trusting its bytes again. Valid until the next load or reserve.
 */
export function claimWindow(engine: Engine): Uint8Array {
  bump(engine);
  return engine.views().window;
}

export class Window {
  /** Source position of window byte 0. */
  position = 0;
  /** Number of valid bytes in the window. */
  length = 0;
  private generation = -1;

  constructor(readonly engine: Engine, readonly source: ByteSource) {}

  get end(): number {
    return this.position + this.length;
  }

  private valid(): boolean {
    return this.generation === (generations.get(this.engine) ?? 0);
  }

  /**
   * Fills the window from `position` with as many bytes as fit, or `limit` bytes when given (fewer only
   * at the end of the source). A small limit lets a header be read without reading a whole window.
   */
  load(position: number, limit = Infinity): number {
    const engine = this.engine;
    const want = Math.max(0, Math.min(engine.windowCapacity, limit, this.source.size - position));
    const window = engine.views().window;
    let got = 0;
    while (got < want) {
      const n = this.source.read(window.subarray(got, want), position + got);
      if (n <= 0) break;
      got += n;
    }
    if (got < want) {
      throw new OffloadKitError("SHORT_READ", `the input ended early: expected ${this.source.size} bytes, got ${position + got}`, {
        offset: position + got,
      });
    }
    this.generation = bump(engine);
    lastLoaded.set(engine, this);
    this.position = position;
    this.length = got;
    return got;
  }

  /** Whether source bytes [position, position + length) are in the window now. */
  holds(position: number, length: number): boolean {
    return this.valid() && position >= this.position && position + length <= this.end;
  }

  /**
   * Makes sure source bytes [position, position + need) are in the window, reloading at `position`
   * when they are not. Returns false when the source ends before position + need.
   */
  ensure(position: number, need: number): boolean {
    if (position + need > this.source.size) return false;
    if (this.holds(position, need)) return true;
    this.load(position);
    return position + need <= this.end;
  }

  /** A view of window bytes for source range [position, position + length); valid until the next load. */
  view(position: number, length: number): Uint8Array {
    const start = position - this.position;
    return this.engine.views().window.subarray(start, start + length);
  }
}
