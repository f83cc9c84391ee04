/**
 * Choosing the engine, once: the Wasm core when WebAssembly is available, else the TypeScript twin.
 * `OFFLOAD_KIT_ENGINE=wasm|ts` overrides the choice (wasm fails loudly when it cannot load), and
 * `engine()` tells which one is in use. In a browser main thread, where a synchronous compile is
 * refused, the twin serves until `initEngine()` has compiled the core asynchronously.
 */
import type { Engine, EngineKind } from "./engine.js";
import { OffloadKitError } from "./errors.js";
import { TsEngine } from "../ts-engine/engine.js";
import { WasmEngine } from "../wasm/engine.js";
import { compileAsync, compileInline, wasmAvailable } from "../wasm/load.js";
import type { WasmSource } from "../wasm/load.js";

/** Default window: large enough for any sane bundle header entry, small enough to keep RSS low. */
export const DEFAULT_WINDOW_CAPACITY = 1 << 20;

let current: Engine | undefined;

function requestedKind(): EngineKind | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const value = env?.OFFLOAD_KIT_ENGINE;
  if (value === undefined || value === "" || value === "auto") return undefined;
  if (value === "wasm" || value === "ts") return value;
  throw new OffloadKitError("BAD_ENGINE", `OFFLOAD_KIT_ENGINE must be 'wasm', 'ts' or 'auto', not '${value}'`);
}

/** A fresh engine of the given kind (tests use this to run one case on both). */
export function createEngine(kind: EngineKind, windowCapacity = DEFAULT_WINDOW_CAPACITY): Engine {
  if (kind === "ts") return new TsEngine(windowCapacity);
  if (!wasmAvailable()) throw new OffloadKitError("ENGINE_UNAVAILABLE", "WebAssembly is not available here");
  return new WasmEngine(compileInline(), windowCapacity);
}

/** The engine in use, chosen on first call. */
export function engine(): Engine {
  if (current !== undefined) return current;
  const kind = requestedKind();
  if (kind !== undefined) {
    current = createEngine(kind);
    return current;
  }
  try {
    current = createEngine("wasm");
  } catch {
    current = new TsEngine(DEFAULT_WINDOW_CAPACITY);
  }
  return current;
}

/** Which engine `engine()` uses. */
export function engineKind(): EngineKind {
  return engine().kind;
}

/** Replaces the engine in use (an engine object, or a kind to create). */
export function setEngine(choice: Engine | EngineKind): Engine {
  current = typeof choice === "string" ? createEngine(choice) : choice;
  return current;
}

/**
 * Compiles the Wasm core asynchronously (browsers) and makes it the engine in use: from the bytes inlined
 * in the library by default (no file to serve), or from a URL or bytes the caller gives.
 */
export async function initEngine(source?: WasmSource): Promise<Engine> {
  if (requestedKind() === "ts") return engine();
  try {
    current = new WasmEngine(await compileAsync(source), DEFAULT_WINDOW_CAPACITY);
  } catch (e) {
    // The engine in use (the TS twin until now) stays; a later call may succeed.
    if (e instanceof OffloadKitError) throw e;
    throw new OffloadKitError("ENGINE_UNAVAILABLE", `cannot load the Wasm core: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  return current;
}
