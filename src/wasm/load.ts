/**
 * Loading the Wasm core: synchronously from the inlined bytes (Node, workers, small modules), or
 * asynchronously from the inlined bytes, a URL or bytes (browsers, whose main thread refuses large
 * synchronous compiles). Nothing here touches `import.meta.url`: a bundle in any format (an esbuild IIFE,
 * where `import.meta` is empty, included) loads the core with no file beside it. The shipped file
 * build/offload-kit.wasm (export "offload-kit/offload-kit.wasm") is for callers who prefer a URL.
 * The codecs (src/compress/) load their WebAssembly through the same helpers.
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

/** Where WebAssembly comes from: a URL to fetch, the bytes, or a module compiled already. */
export type WasmSource = URL | string | BufferSource | WebAssembly.Module;

let inlineModule: WebAssembly.Module | undefined;

export function wasmAvailable(): boolean {
  return typeof WebAssembly === "object" && typeof WebAssembly.Module === "function";
}

/** Decodes base64 (the inlined modules): the engine's own decoder where there is one (Chrome 140+, Node 25+). */
export function base64Bytes(text: string): Uint8Array {
  const native = (Uint8Array as unknown as { fromBase64?: (text: string) => Uint8Array }).fromBase64;
  if (native !== undefined) return native(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function inlineBytes(): Uint8Array {
  return base64Bytes(WASM_BASE64);
}

/**
 * Compiles WebAssembly from a source, asynchronously. A URL is fetched (an HTTP error status is an
 * error, not bytes); the error is left to the caller to word, as it knows what was being loaded.
 */
export async function compileWasm(source: WasmSource): Promise<WebAssembly.Module> {
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof URL || typeof source === "string") {
    const response = await fetch(source);
    if (!response.ok) throw new Error(`HTTP ${response.status} for ${String(source)}`);
    return WebAssembly.compile(await response.arrayBuffer());
  }
  return WebAssembly.compile(source);
}

/** Compiles the inlined core once; throws where synchronous compilation is not allowed. */
export function compileInline(): WebAssembly.Module {
  inlineModule ??= new WebAssembly.Module(inlineBytes() as BufferSource);
  return inlineModule;
}

/** Compiles the core asynchronously: from the inlined bytes by default, or from the caller's URL or bytes. */
export async function compileAsync(source?: WasmSource): Promise<WebAssembly.Module> {
  if (source === undefined) {
    inlineModule ??= await WebAssembly.compile(inlineBytes() as BufferSource);
    return inlineModule;
  }
  return compileWasm(source);
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
