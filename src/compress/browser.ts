/**
 * Compression in browsers (and anywhere without node:*): the libzstd WebAssembly build, fflate for
 * zlib streams (a well-kept pure-JS inflate/deflate) and hash-wasm's MD5 (hand-tuned WebAssembly;
 * 517 MiB/s here against 502 for js-md5, 238 for spark-md5 and 82 for @noble/hashes). Loading is
 * asynchronous because WebAssembly compilation is, on a browser's main thread.
 */
import { unzlibSync, zlibSync } from "fflate";
import { createMD5 } from "hash-wasm";
import { CodecError, ZLIB_ERRORS } from "./codecs.js";
import type { Codecs } from "./codecs.js";
import { loadZstd, zstdCompress, zstdDecompressFrame } from "./zstd-wasm.js";

let codecs: Promise<Codecs> | undefined;

export function loadBrowserCodecs(): Promise<Codecs> {
  // A failed load is not cached: the next call tries again.
  codecs ??= (async () => {
    await loadZstd();
    // One hash-wasm instance per hasher: its state lives in the instance.
    const hashers = [await createMD5()];
    return {
      name: "browser",
      zstdCompress,
      zstdDecompressFrame,
      zlibCompress(bytes, level) {
        const clamped = level < 0 ? 6 : Math.min(9, level);
        return zlibSync(bytes, { level: clamped as 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 });
      },
      zlibDecompress(stream, capacity) {
        let out: Uint8Array;
        try {
          out = unzlibSync(stream);
        } catch {
          throw new CodecError(ZLIB_ERRORS.Z_DATA_ERROR);
        }
        if (out.length > capacity) throw new CodecError(ZLIB_ERRORS.Z_BUF_ERROR);
        return out;
      },
      md5() {
        const hasher = hashers.pop() ?? null;
        if (hasher === null) throw new CodecError("MD5 hasher busy: finish one hash before starting another");
        hasher.init();
        return {
          update(bytes) {
            hasher.update(bytes);
          },
          digest() {
            const digest = hasher.digest("binary");
            hashers.push(hasher);
            return digest;
          },
        };
      },
    } satisfies Codecs;
  })().catch((e: unknown) => {
    codecs = undefined;
    throw e;
  });
  return codecs;
}
