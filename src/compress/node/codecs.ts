/**
 * Compression in Node: node:zlib (zlib itself, as LLVM links it), node:crypto's MD5 (OpenSSL, the
 * fastest MD5 measured here: 706 MiB/s against 517 for hash-wasm, 502 for js-md5, 238 for spark-md5,
 * 82 for @noble/hashes; bench/ccob.mjs) and libzstd: node:zlib's where it has one (Node 22.15 and later,
 * src/compress/node/zstd-native.ts), else the WebAssembly build (Node 20).
 *
 * Every reader above is synchronous (openDecompressed is called from synchronous code, once per
 * archive member too), but libzstd loads asynchronously, and loading it costs ~15 ms that a run without
 * zstd data should not pay. So: the CLIs `await loadNodeCodecs()` when their input may need it
 * (src/bin/), and a synchronous call that comes before it has loaded runs on a helper worker thread
 * instead (compress-pool.ts runOnWorker), which is correct, only slower to start.
 */
import { CodecError, ZLIB_ERRORS } from "../codecs.js";
import type { Codecs } from "../codecs.js";
import { loadZstd, zstdCompress, zstdDecompressFrame, zstdLoaded } from "../zstd-wasm.js";
import { cryptoModule, zlibModule } from "../../node/builtins.js";
import { runOnWorker } from "./compress-pool.js";
import { nativeZstdCompress, nativeZstdDecompressFrame, useNativeZstd } from "./zstd-native.js";
import type { ZstdBackend } from "./zstd-native.js";

// A TypeScript runner (the tests) cannot start the helper worker: load libzstd up front there.
if (import.meta.url.endsWith(".ts") && !useNativeZstd()) await loadZstd();

function asBytes(buffer: Buffer): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

function zlibError(error: unknown): CodecError {
  const code = (error as NodeJS.ErrnoException).code;
  // uncompress() reports a stream that ends early as Z_DATA_ERROR and a full output buffer as Z_BUF_ERROR;
  // node reports the first as Z_BUF_ERROR ("unexpected end of file") and the second as ERR_BUFFER_TOO_LARGE.
  if (code === "ERR_BUFFER_TOO_LARGE") return new CodecError(ZLIB_ERRORS.Z_BUF_ERROR);
  if (code === "Z_MEM_ERROR") return new CodecError(ZLIB_ERRORS.Z_MEM_ERROR);
  return new CodecError(ZLIB_ERRORS.Z_DATA_ERROR);
}

function onWorker(op: "compress" | "decompress", bytes: Uint8Array, arg: number): Uint8Array {
  const result = runOnWorker(op, bytes, arg);
  if (result === undefined) throw new CodecError("libzstd is not loaded yet (await loadNodeCodecs() first)");
  return result;
}

/** The Node codecs with libzstd from `native()` ? node:zlib : the WebAssembly build. */
function codecsOn(native: () => boolean, name: string): Codecs {
  return {
    name,
    zstdCompress(bytes, level) {
      if (native()) return nativeZstdCompress(bytes, level);
      return zstdLoaded() ? zstdCompress(bytes, level) : onWorker("compress", bytes, level);
    },
    zstdDecompressFrame(frame, capacity) {
      if (native()) return nativeZstdDecompressFrame(frame, capacity);
      return zstdLoaded() ? zstdDecompressFrame(frame, capacity) : onWorker("decompress", frame, capacity);
    },
    ...common,
  };
}

const common: Omit<Codecs, "name" | "zstdCompress" | "zstdDecompressFrame"> = {
  zlibCompress(bytes, level) {
    return asBytes(zlibModule().deflateSync(bytes, { level }));
  },
  zlibDecompress(stream, capacity) {
    if (stream.length === 0) throw new CodecError(ZLIB_ERRORS.Z_DATA_ERROR);
    try {
      return asBytes(zlibModule().inflateSync(stream, { maxOutputLength: Math.max(1, capacity) }));
    } catch (e) {
      throw zlibError(e);
    }
  },
  md5() {
    const hash = cryptoModule().createHash("md5");
    return {
      update(bytes) {
        hash.update(bytes);
      },
      digest() {
        return asBytes(hash.digest());
      },
    };
  },
};

/** libzstd from node:zlib where this Node has it (zstdBackend()), else the WebAssembly build. */
export const nodeCodecs: Codecs = codecsOn(useNativeZstd, "node");

/** The same with libzstd pinned to one side, whatever zstdBackend() says (tests compare the two). */
export function nodeCodecsUsing(backend: ZstdBackend): Codecs {
  return codecsOn(() => backend === "native", `node (${backend} zstd)`);
}

/** nodeCodecs with libzstd ready in this thread (node:zlib's needs no loading; no helper worker needed afterwards). */
export async function loadNodeCodecs(): Promise<Codecs> {
  if (!useNativeZstd()) await loadZstd();
  return nodeCodecs;
}
