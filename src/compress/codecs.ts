/**
 * The compression services a compressed offload bundle needs, as one browser-safe interface: zstd and
 * zlib (llvm::compression, llvm/lib/Support/Compression.cpp) and MD5 (llvm/lib/Support/MD5.cpp, for the
 * truncated hash). Two implementations: src/compress/node/codecs.ts (node:zlib, node:crypto and the libzstd
 * WebAssembly build) and src/compress/browser.ts (the same libzstd build, fflate, hash-wasm). Nothing
 * here compresses by itself: zstd and zlib are the libraries', never hand-written.
 */

export interface Md5Hasher {
  update(bytes: Uint8Array): void;
  /** The 16-byte digest. */
  digest(): Uint8Array;
}

export interface Codecs {
  /** Which implementation (for reports and tests). */
  readonly name: string;
  /** One complete zstd frame of `bytes`, content size recorded, at `level`. */
  zstdCompress(bytes: Uint8Array, level: number): Uint8Array;
  /**
   * Decodes one zstd frame (already delimited by walkZstdFrames) into at most `capacity` bytes.
   * Throws CodecError with libzstd's error name ("Destination buffer is too small", ...).
   */
  zstdDecompressFrame(frame: Uint8Array, capacity: number): Uint8Array;
  /** A zlib stream (RFC 1950) of `bytes` at `level` (-1 = zlib's default, 6). */
  zlibCompress(bytes: Uint8Array, level: number): Uint8Array;
  /**
   * Inflates a zlib stream into at most `capacity` bytes, as zlib's uncompress() does for LLVM: bytes
   * after the end of the stream are ignored; errors read `zlib error: Z_DATA_ERROR` and so on.
   */
  zlibDecompress(stream: Uint8Array, capacity: number): Uint8Array;
  md5(): Md5Hasher;
}

/** A decoder's own complaint, worded as LLVM relays it (after "Could not decompress embedded file contents: "). */
export class CodecError extends Error {
  override readonly name = "CodecError";
}

/** llvm::compression::zlib's error texts (convertZlibCodeToString). */
export const ZLIB_ERRORS = {
  Z_MEM_ERROR: "zlib error: Z_MEM_ERROR",
  Z_BUF_ERROR: "zlib error: Z_BUF_ERROR",
  Z_DATA_ERROR: "zlib error: Z_DATA_ERROR",
} as const;
