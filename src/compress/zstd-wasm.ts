/**
 * libzstd compiled to WebAssembly (the zstd.wasm of @bokuweb/zstd-wasm: libzstd built with Emscripten
 * -O3, one-shot ZSTD_compress / ZSTD_decompress) behind the Codecs interface, for Node and browsers. It
 * does not expose long-distance matching (LLVM compresses with zstdEnableLdm=true) nor streaming: the
 * frames are still readable by any zstd decoder, LLVM's included, and large bundles are cut into several
 * frames by the caller so no call holds more than one chunk (see src/bundler/compressed.ts).
 *
 * Loading is ours, not the package's: its loader builds `new URL("./zstd.wasm", import.meta.url)` (which
 * throws in an IIFE bundle and 404s in any bundle the file was not copied next to) and never settles when
 * instantiation fails. Here the module comes from bytes inlined at build time (scripts/inline-zstd.mjs,
 * imported only when first needed, so bundlers split them off), or from a URL or bytes the caller gives;
 * the few Emscripten imports it needs are provided below, with the export names the build script read
 * from the package's glue. A failed load rejects with CODEC_UNAVAILABLE and is not cached.
 */
import { OffloadKitError } from "../engine/errors.js";
import { base64Bytes, compileWasm } from "../wasm/load.js";
import type { WasmSource } from "../wasm/load.js";
import { CodecError } from "./codecs.js";
import { ZSTD_EXPORTS, ZSTD_IMPORTS, ZSTD_IMPORT_MODULE } from "./zstd-abi.generated.js";
import { walkZstdFrames, zstdErrorName } from "./zstd-frames.js";

/** The libzstd entry points used, as the module exports them (sizes are wasm32 size_t, so i32). */
interface ZstdCore {
  readonly memory: WebAssembly.Memory;
  isError(code: number): number;
  compressBound(size: number): number;
  compress(dst: number, capacity: number, src: number, size: number, level: number): number;
  decompress(dst: number, capacity: number, src: number, size: number): number;
  malloc(size: number): number;
  free(pointer: number): void;
}

let ready: Promise<void> | undefined;
let zstd: ZstdCore | undefined;

/** Emscripten's heap limit in this build (ALLOW_MEMORY_GROWTH, default maximum). */
const HEAP_MAX = 2 ** 31;

function instantiateZstd(module: WebAssembly.Module): ZstdCore {
  let memory: WebAssembly.Memory | undefined;
  const fail = (what: string) => () => {
    throw new CodecError(`libzstd ${what}`);
  };
  const imports = {
    [ZSTD_IMPORTS.abort]: fail("aborted"),
    [ZSTD_IMPORTS.exit]: fail("exited"),
    [ZSTD_IMPORTS.keepaliveClear]: () => {},
    // Timers are for Emscripten's setitimer(), which libzstd never calls.
    [ZSTD_IMPORTS.setitimer]: () => 0,
    // emscripten_resize_heap: grow to at least the requested size (libzstd's malloc then returns 0 if this fails).
    [ZSTD_IMPORTS.resizeHeap]: (requested: number) => {
      const wanted = requested >>> 0;
      if (memory === undefined || wanted > HEAP_MAX) return 0;
      const current = memory.buffer.byteLength;
      // As Emscripten does: overgrow by 20% (capped at 96 MiB) so a run of small mallocs does not grow page by page.
      const target = Math.min(HEAP_MAX, Math.max(wanted, Math.min(current * 1.2, wanted + 96 * 1024 * 1024)));
      try {
        memory.grow(Math.ceil((target - current) / 65536));
        return 1;
      } catch {
        return 0;
      }
    },
  };
  const instance = new WebAssembly.Instance(module, { [ZSTD_IMPORT_MODULE]: imports });
  const raw = instance.exports as Record<string, unknown>;
  const pick = <T>(name: string): T => {
    if (raw[name] === undefined) throw new Error(`the module has no export '${name}' (not @bokuweb/zstd-wasm's zstd.wasm?)`);
    return raw[name] as T;
  };
  memory = pick<WebAssembly.Memory>(ZSTD_EXPORTS.memory);
  pick<() => void>(ZSTD_EXPORTS.ctors)();
  return {
    memory,
    isError: pick(ZSTD_EXPORTS.isError),
    compressBound: pick(ZSTD_EXPORTS.compressBound),
    compress: pick(ZSTD_EXPORTS.compress),
    decompress: pick(ZSTD_EXPORTS.decompress),
    malloc: pick(ZSTD_EXPORTS.malloc),
    free: pick(ZSTD_EXPORTS.free),
  };
}

function unavailable(e: unknown): OffloadKitError {
  if (e instanceof OffloadKitError) return e;
  return new OffloadKitError("CODEC_UNAVAILABLE", `libzstd could not be loaded: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
}

async function inlineZstdBytes(): Promise<Uint8Array> {
  return base64Bytes((await import("./zstd-bytes.generated.js")).ZSTD_WASM_BASE64);
}

/**
 * Loads libzstd, once: from the inlined bytes by default, or from `source` (a URL such as the package's
 * "offload-kit/zstd.wasm" file, its bytes, or a compiled module). Nothing is loaded before this is
 * called: a run that meets no zstd data pays nothing. A failure rejects (CODEC_UNAVAILABLE) and is
 * forgotten, so a later call tries again; a load that takes longer than ZSTD_LOAD_TIMEOUT_MS (a URL
 * that never answers) counts as failed.
 */
export function loadZstd(source?: WasmSource): Promise<void> {
  if (zstd !== undefined) return Promise.resolve();
  ready ??= settleWithin((async () => {
    const module = await compileWasm(source ?? (await inlineZstdBytes()));
    zstd = instantiateZstd(module);
  })(), ZSTD_LOAD_TIMEOUT_MS).catch((e: unknown) => {
    ready = undefined;
    throw unavailable(e);
  });
  return ready;
}

/** How long loading libzstd may take before it counts as failed (it takes ~5 ms here). */
export const ZSTD_LOAD_TIMEOUT_MS = 30_000;

function settleWithin<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`its WebAssembly module did not initialise within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Has loadZstd() finished (so the functions below can run in this thread)? */
export function zstdLoaded(): boolean {
  return zstd !== undefined;
}

function library(): ZstdCore {
  if (zstd === undefined) throw new CodecError("libzstd is not loaded yet (await loadZstd() first)");
  return zstd;
}

/**
 * Emscripten's heap is 2 GiB at most in this build (ALLOW_MEMORY_GROWTH, default maximum): a frame
 * and its output must fit together. Frames LLVM writes hold the whole bundle, so bundles larger than
 * this are refused before anything is allocated.
 */
export const ZSTD_WASM_MAX_FRAME = 1536 * 1024 * 1024;

/** Copies `bytes` into libzstd's heap; 0 when malloc fails. */
function copyIn(core: ZstdCore, bytes: Uint8Array): number {
  const pointer = core.malloc(Math.max(1, bytes.length));
  if (pointer !== 0) new Uint8Array(core.memory.buffer, pointer, bytes.length).set(bytes);
  return pointer;
}

/** Runs one libzstd call with input and output buffers in its heap, freeing both whatever happens. */
function withBuffers(input: Uint8Array, capacity: number, call: (core: ZstdCore, dst: number, src: number) => number): Uint8Array {
  const core = library();
  const src = copyIn(core, input);
  const dst = src === 0 ? 0 : core.malloc(Math.max(1, capacity));
  try {
    if (dst === 0) throw new CodecError(zstdErrorName(64));
    const result = call(core, dst, src);
    // Errors are (size_t)-code: negative as an i32.
    if (core.isError(result)) throw new CodecError(zstdErrorName(-result));
    // Memory may have grown during the call: a fresh view over the current buffer.
    return new Uint8Array(core.memory.buffer, dst, result >>> 0).slice();
  } finally {
    if (dst !== 0) core.free(dst);
    if (src !== 0) core.free(src);
  }
}

export function zstdCompress(bytes: Uint8Array, level: number): Uint8Array {
  const bound = library().compressBound(bytes.length) >>> 0;
  return withBuffers(bytes, bound, (core, dst, src) => core.compress(dst, bound, src, bytes.length, level));
}

export function zstdDecompressFrame(frame: Uint8Array, capacity: number): Uint8Array {
  // The output buffer is the content size the header states, or `capacity` when it states none, and never
  // more than the frame's blocks can produce: a tiny frame cannot make it allocate gigabytes.
  const [walked] = walkZstdFrames((position, length) => frame.subarray(position, position + length), 0, frame.length);
  if (walked !== undefined) capacity = Math.min(capacity, walked.maxOutput, walked.contentSize ?? Infinity);
  if (capacity > ZSTD_WASM_MAX_FRAME) {
    throw new CodecError(`zstd frame too large for the WebAssembly decoder (${capacity} bytes; at most ${ZSTD_WASM_MAX_FRAME})`);
  }
  return withBuffers(frame, capacity, (core, dst, src) => core.decompress(dst, capacity, src, frame.length));
}
