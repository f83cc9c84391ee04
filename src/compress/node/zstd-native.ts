/**
 * Zstandard from the platform: node:zlib carries libzstd from Node 22.15 / 23.8 on (1.5.7 in Node 24),
 * 1.6-1.8x faster than the WebAssembly build (src/compress/zstd-wasm.ts) and with LLVM's
 * long-distance matching. Node 20 has none, and keeps the WebAssembly build; so do browsers.
 *
 * Decoding uses the one-shot form with an output buffer of exactly the frame's content size (frames
 * LLVM and we write record it): zstd then decodes straight into that buffer, without the chunk list
 * and final concatenation the default 64 KiB chunkSize costs. Measured on a 200 MiB frame in Node
 * 24.21: 0.30 s, against 0.72 s with the default chunkSize, 0.47 s for the streaming API with 1 MiB
 * chunks copied into one buffer, 0.39 s for the streaming API decoding into one buffer, and 0.89 s for
 * the WebAssembly build. A frame that does not record its size (none of LLVM's) is decoded into
 * block-sized chunks, so nothing is allocated beyond what it produces.
 *
 * Compression sets what llvm::compression::zstd::compress sets (level, long-distance matching) and
 * the pledged size, so the frame header records the content size as ZSTD_compress2 does. The bytes
 * equal LLVM 19's (Debian's libzstd 1.5.4) and the WebAssembly build's for small bundles (up to ~100
 * KB); past that the libzstd versions differ from each other (test/compress/zstd-native.test.ts, README).
 *
 * `OFFLOAD_KIT_ZSTD=wasm|native` picks a side (tests run both); the default is native where present.
 */
import type { Transform } from "node:stream";
import { OffloadKitError } from "../../engine/errors.js";
import { CodecError } from "../codecs.js";
import { ZSTD_BLOCK_SIZE_MAX, walkZstdFrames, zstdErrorName } from "../zstd-frames.js";
import { zlibModule } from "../../node/builtins.js";

/** What node:zlib adds for zstd (absent from Node 20's types and runtime). */
interface ZstdOptions {
  readonly params?: Readonly<Record<number, number>>;
  readonly flush?: number;
  readonly pledgedSrcSize?: number;
  readonly maxOutputLength?: number;
  readonly chunkSize?: number;
}
interface PlatformZstd {
  zstdCompressSync(input: Uint8Array, options?: ZstdOptions): Buffer;
  zstdCompress(input: Uint8Array, options: ZstdOptions, done: (error: Error | null, result: Buffer) => void): void;
  zstdDecompressSync(input: Uint8Array, options?: ZstdOptions): Buffer;
  createZstdDecompress(options?: ZstdOptions): Transform;
}

// node:zlib is loaded when zstd is first asked for (src/node/builtins.ts).
const platform = (): Partial<PlatformZstd> => zlibModule() as unknown as Partial<PlatformZstd>;
const constants = (): Readonly<Record<string, number>> => zlibModule().constants as unknown as Readonly<Record<string, number>>;

export type ZstdBackend = "native" | "wasm";

/** Does this Node have zstd in node:zlib? */
export function platformHasZstd(): boolean {
  const zlib = platform();
  return typeof zlib.zstdDecompressSync === "function" && typeof zlib.createZstdDecompress === "function";
}

/** Which libzstd this process uses: node:zlib's where present, unless OFFLOAD_KIT_ZSTD says otherwise. */
export function zstdBackend(env: Readonly<Record<string, string | undefined>> = process.env): ZstdBackend {
  const asked = env.OFFLOAD_KIT_ZSTD;
  if (asked === "wasm") return "wasm";
  if (asked === "native" && !platformHasZstd()) {
    throw new OffloadKitError("CODEC_UNAVAILABLE", `OFFLOAD_KIT_ZSTD=native, but node:zlib has no zstd in Node ${process.versions.node} (22.15 or later has)`);
  }
  return platformHasZstd() ? "native" : "wasm";
}

let chosen: ZstdBackend | undefined;

/** zstdBackend(), decided once per thread. */
export function useNativeZstd(): boolean {
  chosen ??= zstdBackend();
  return chosen === "native";
}

function zstd(): PlatformZstd {
  if (!platformHasZstd()) throw new OffloadKitError("CODEC_UNAVAILABLE", `node:zlib has no zstd in Node ${process.versions.node}`);
  return platform() as PlatformZstd;
}

function asBytes(buffer: Buffer): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/**
 * node:zlib's errors in libzstd's words (what LLVM prints): its zstd errors carry libzstd's code as
 * errno; an output over the limit is ERR_BUFFER_TOO_LARGE; a stream that ends early is Z_BUF_ERROR.
 */
export function nativeZstdError(error: unknown): CodecError {
  const e = error as NodeJS.ErrnoException;
  if (e.code === "ERR_BUFFER_TOO_LARGE") return new CodecError(zstdErrorName(70));
  if (e.code === "Z_BUF_ERROR") return new CodecError(zstdErrorName(72));
  if (typeof e.code === "string" && e.code.startsWith("ZSTD_error_") && typeof e.errno === "number") return new CodecError(zstdErrorName(Math.abs(e.errno)));
  return new CodecError(e instanceof Error ? e.message : String(error));
}

/** llvm::compression::zstd::compress: the level and long-distance matching (zstdEnableLdm=true). */
function compressParams(level: number): Record<number, number> {
  return {
    [constants().ZSTD_c_compressionLevel]: level,
    [constants().ZSTD_c_enableLongDistanceMatching]: 1,
  };
}

/** ZSTD_compressBound: what one frame of `size` bytes can take at most. */
function compressBound(size: number): number {
  return size + (size >>> 8) + (size < 128 * 1024 ? (128 * 1024 - size) >>> 11 : 0);
}

/**
 * One output chunk the size of the bound: no chunk list to concatenate, and the size that lets libzstd
 * compress the whole input in one call (ZSTD_compressStream2 with ZSTD_e_end and room for the bound),
 * as ZSTD_compress2 does. With less room it buffers the input block by block, and the bytes change
 * (measured on 5, 8 and 30 MiB pieces of librocsparse0's .hip_fatbin with a 1 MiB chunk).
 */
function compressOptions(bytes: Uint8Array, level: number): ZstdOptions {
  return {
    params: compressParams(level),
    pledgedSrcSize: bytes.length,
    chunkSize: Math.max(64, Math.min(compressBound(bytes.length), 64 * 1024 * 1024)),
  };
}

/** One frame of `bytes`, content size recorded, as LLVM's ZSTD_compress2 call makes it. */
export function nativeZstdCompress(bytes: Uint8Array, level: number): Uint8Array {
  try {
    return asBytes(zstd().zstdCompressSync(bytes, compressOptions(bytes, level)));
  } catch (e) {
    throw nativeZstdError(e);
  }
}

/**
 * nativeZstdCompress on libuv's thread pool (node:zlib's asynchronous API): no worker thread, no second
 * V8 isolate, and `bytes` is read in place. The asynchronous stream hands the input to libzstd before it
 * knows it is the last write, so it would be compressed with ZSTD_e_continue, buffered block by block
 * (other bytes than ZSTD_compress2's: 2% larger on a 5 MiB piece of librocsparse0, measured); flushing every write with ZSTD_e_end makes it
 * one call over the whole input, as the synchronous form makes. The stream's own end then adds an empty
 * frame (9 bytes, measured), which is cut off: the result is the first frame only.
 */
export function nativeZstdCompressAsync(bytes: Uint8Array, level: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const options = { ...compressOptions(bytes, level), flush: constants().ZSTD_e_end };
    zstd().zstdCompress(bytes, options, (error, out) => {
      if (error !== null) return reject(nativeZstdError(error));
      try {
        resolve(firstFrame(asBytes(out)));
      } catch (e) {
        reject(e);
      }
    });
  });
}

/**
 * Frees the memory of a frame from nativeZstdCompressAsync now rather than at the next collection:
 * node:zlib gives each call an output buffer the size of the bound (up to 32 MiB, see compressOptions),
 * which the collector would free late. Detaching its ArrayBuffer (`transfer(0)`) frees it at once
 * (measured: sixty 8 MiB buffers half written leave 87 MB resident, 41 MB when each is detached).
 * Small outputs can share Buffer's 8 KiB pool and are left alone.
 */
export function releaseFrame(frame: Uint8Array): void {
  const buffer = frame.buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer };
  if (buffer.byteLength > 64 * 1024 && typeof buffer.transfer === "function") buffer.transfer(0);
}

/** The first frame of `out`, which must be that frame and then only empty frames. */
function firstFrame(out: Uint8Array): Uint8Array {
  const frames = walkZstdFrames((position, length) => out.subarray(position, position + length), 0, out.length);
  if (frames.length === 0 || frames.slice(1).some((f) => f.contentSize !== 0)) {
    throw new OffloadKitError("INTERNAL", `node:zlib's zstd made ${frames.length} frames where one and empty ones were expected`);
  }
  return out.subarray(0, frames[0].size);
}

/** A decoder takes windows up to 2^31 (ZSTD_WINDOWLOG_MAX_64), as ZSTD_decompress, which LLVM calls, does. */
function decompressParams(): Record<number, number> {
  return { [constants().ZSTD_d_windowLogMax]: 31 };
}

/**
 * Decodes one frame into at most `capacity` bytes. The content size its header records (checked
 * against what its blocks can produce by walkZstdFrames) sizes the output buffer exactly; without one
 * the output grows block by block.
 */
export function nativeZstdDecompressFrame(frame: Uint8Array, capacity: number): Uint8Array {
  let contentSize: number | undefined;
  try {
    contentSize = walkZstdFrames((position, length) => frame.subarray(position, position + length), 0, frame.length)[0]?.contentSize;
  } catch {
    // A malformed frame: libzstd names what is wrong with it below.
  }
  const exact = contentSize !== undefined && contentSize <= capacity;
  try {
    const out = zstd().zstdDecompressSync(frame, {
      params: decompressParams(),
      maxOutputLength: Math.max(1, capacity),
      chunkSize: exact ? Math.max(64, contentSize!) : ZSTD_BLOCK_SIZE_MAX,
    });
    return asBytes(out);
  } catch (e) {
    throw nativeZstdError(e);
  }
}
