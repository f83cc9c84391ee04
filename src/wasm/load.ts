/**
 * Loading the Wasm core: synchronously from the inlined bytes (Node, workers, small modules), or
 * asynchronously from a URL or bytes (browsers, whose main thread refuses large synchronous compiles).
 * The shipped file is build/offload-kit.wasm, next to the package root.
 */
import type { Engine } from "../engine/engine.js";
import { ABI_VERSION } from "../engine/layout.js";
import { OffloadKitError } from "../engine/errors.js";
import { WASM_BASE64 } from "./bytes.generated.js";

/** The kernels: Engine methods that are the Wasm exports themselves. */
export const KERNELS = ["scan", "bundleHead", "walkBundle", "walkOffloadBinaries", "archiveHead", "walkArchive"] as const;
export type KernelName = (typeof KERNELS)[number];

/** The exports of assembly/index.ts: the kernels with the Engine's signatures, plus memory management. */
export type WasmExports = Pick<Engine, KernelName> & {
  readonly memory: WebAssembly.Memory;
  abiVersion(): number;
  reserveWindow(size: number): number;
  getWindowCapacity(): number;
};

/** URL of the shipped .wasm file, for bundlers and `fetch`. */
export const WASM_URL = new URL("../../build/offload-kit.wasm", import.meta.url);

let inlineModule: WebAssembly.Module | undefined;

export function wasmAvailable(): boolean {
  return typeof WebAssembly === "object" && typeof WebAssembly.Module === "function";
}

function inlineBytes(): Uint8Array {
  const text = atob(WASM_BASE64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** Compiles the inlined core once; throws where synchronous compilation is not allowed. */
export function compileInline(): WebAssembly.Module {
  inlineModule ??= new WebAssembly.Module(inlineBytes() as BufferSource);
  return inlineModule;
}

/** Compiles from a URL (default: the shipped file) or from bytes, asynchronously. */
export async function compileAsync(source?: URL | string | BufferSource): Promise<WebAssembly.Module> {
  if (source === undefined || source instanceof URL || typeof source === "string") {
    const response = await fetch(source ?? WASM_URL);
    if (!response.ok) throw new OffloadKitError("ENGINE_UNAVAILABLE", `cannot fetch the Wasm core: HTTP ${response.status}`);
    return WebAssembly.compile(await response.arrayBuffer());
  }
  return WebAssembly.compile(source);
}

/** AssemblyScript's `abort`: reached only through a broken invariant in the core, never through bad input. */
function abort(): never {
  throw new OffloadKitError("INTERNAL", "the Wasm core aborted (a bug in offload-kit: please report it)");
}

export function instantiate(module: WebAssembly.Module): WasmExports {
  const instance = new WebAssembly.Instance(module, { env: { abort } });
  const exports = instance.exports as unknown as WasmExports;
  if (exports.abiVersion() !== ABI_VERSION) {
    throw new OffloadKitError(
      "ENGINE_UNAVAILABLE",
      `the Wasm core has ABI version ${exports.abiVersion()}, this library expects ${ABI_VERSION}: rebuild it`,
    );
  }
  return exports;
}
