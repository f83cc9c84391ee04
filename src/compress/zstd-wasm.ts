/**
 * The libzstd WebAssembly build (@bokuweb/zstd-wasm: libzstd compiled with Emscripten -O3, one-shot
 * ZSTD_compress / ZSTD_decompress) behind the Codecs interface. Both the Node and the browser codecs
 * use it; the package picks its Node or browser entry by export condition. It does not expose
 * long-distance matching (LLVM compresses with zstdEnableLdm=true) nor streaming: the frames are
 * still readable by any zstd decoder, LLVM's included, and large bundles are cut into several frames
 * by the caller so no call holds more than one chunk (see src/bundler/compressed.ts).
 */
import { OffloadKitError } from "../engine/errors.js";
import { CodecError } from "./codecs.js";
import { walkZstdFrames, zstdErrorName } from "./zstd-frames.js";

type ZstdLibrary = typeof import("@bokuweb/zstd-wasm");

let ready: Promise<void> | undefined;
let zstd: ZstdLibrary | undefined;

/**
 * Imports the library and instantiates its WebAssembly module, once (the library's init is
 * asynchronous). Nothing is loaded before this is called: a run that meets no zstd data pays nothing
 * (importing and compiling it costs about 15 ms per process, measured).
 */
export function loadZstd(): Promise<void> {
  ready ??= import("@bokuweb/zstd-wasm")
    .then(async (library) => {
      // The library's init never settles when its WebAssembly fails to instantiate (Emscripten aborts
      // and the "initialized" promise is left waiting): bound the wait so every caller hears back.
      await settleWithin(library.init(), ZSTD_LOAD_TIMEOUT_MS);
      zstd = library;
    })
    .catch((e: unknown) => {
      // Not cached: a later call tries again (the failure may have been passing).
      ready = undefined;
      throw new OffloadKitError("CODEC_UNAVAILABLE", `libzstd could not be loaded: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    });
  return ready;
}

/** How long loading libzstd may take before it counts as failed (it takes ~15 ms here). */
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

function library(): ZstdLibrary {
  if (zstd === undefined) throw new CodecError("libzstd is not loaded yet (await loadZstd() first)");
  return zstd;
}

/**
 * Emscripten's heap is 2 GiB at most in this build (ALLOW_MEMORY_GROWTH, default maximum): a frame
 * and its output must fit together. Frames LLVM writes hold the whole bundle, so bundles larger than
 * this are refused before anything is allocated.
 */
export const ZSTD_WASM_MAX_FRAME = 1536 * 1024 * 1024;

function codeOf(error: unknown): number {
  const match = /code (-?\d+)/.exec(error instanceof Error ? error.message : String(error));
  return match === null ? 1 : Math.abs(Number(match[1]));
}

export function zstdCompress(bytes: Uint8Array, level: number): Uint8Array {
  const lib = library();
  try {
    return lib.compress(bytes, level);
  } catch (e) {
    throw new CodecError(zstdErrorName(codeOf(e)));
  }
}

export function zstdDecompressFrame(frame: Uint8Array, capacity: number): Uint8Array {
  // The library allocates the header's content size, or `capacity` when there is none: bound both by
  // what the frame's blocks can produce, so a tiny frame cannot make it allocate gigabytes.
  const [walked] = walkZstdFrames((position, length) => frame.subarray(position, position + length), 0, frame.length);
  if (walked !== undefined) capacity = Math.min(capacity, walked.maxOutput);
  if (capacity > ZSTD_WASM_MAX_FRAME) {
    throw new CodecError(`zstd frame too large for the WebAssembly decoder (${capacity} bytes; at most ${ZSTD_WASM_MAX_FRAME})`);
  }
  const lib = library();
  try {
    // The library sizes its output from the frame header, or from defaultHeapSize when the header has none.
    return lib.decompress(frame, { defaultHeapSize: capacity });
  } catch (e) {
    throw new CodecError(zstdErrorName(codeOf(e)));
  }
}
