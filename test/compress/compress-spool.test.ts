// Compressing a library's fat binaries on libuv's thread pool (src/compress/node/compress-spool.ts
// `compressAllAsync`, node:zlib's asynchronous zstd, Node 22.15 and later) must write the bytes the
// synchronous path writes (`compressAll`, which runs in this thread under the TypeScript runner): the
// same frames, the same CCOB headers, in the same order, through the frame ring's wrap-around and for
// bundles cut into several frames. Skipped on Node 20, which has no zstd in node:zlib (CI runs the suite
// on Node 24 too).
import { describe, expect, it } from "vitest";
import { LLVM19_COMPRESSION } from "../../src/bundler/compressed.js";
import { bytesSource, readExact } from "../../src/engine/source.js";
import type { ByteSource } from "../../src/engine/source.js";
import { CompressionMethod } from "../../src/formats/ccob.js";
import { CompressedSpool } from "../../src/compress/node/compress-spool.js";
import { SINGLE_FRAME_MAX } from "../../src/compress/node/compress.js";
import { nativeZstdCompress, nativeZstdCompressAsync, platformHasZstd, releaseFrame } from "../../src/compress/node/zstd-native.js";
import { HANG_MS } from "../limits.js";

/**
 * Compressible data with long-distance repeats (a block copied from far back, as the entries of a fat
 * binary repeat each other), where buffering the input block by block (ZSTD_e_continue) gives other
 * bytes than one call over all of it.
 */
function data(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = (x & 7) === 0 ? x >>> 24 : 0x40 + ((i >> 5) % 7) + (x & 3);
  }
  const block = 256 * 1024;
  for (let at = 3 * block; at + block <= size; at += 5 * block) out.copyWithin(at, at - 3 * block + (at % 4099), at - 3 * block + (at % 4099) + block);
  return out;
}

const all = (source: ByteSource) => readExact(source, 0, source.size);

describe.skipIf(!platformHasZstd())("compressing on libuv's thread pool", () => {
  it("makes the synchronous form's frame for every size", { timeout: HANG_MS }, async () => {
    for (const size of [0, 1, 100, 200_000, 3 * 1024 * 1024 + 17, 9 * 1024 * 1024]) {
      const bytes = data(size, size + 1);
      const frame = await nativeZstdCompressAsync(bytes, 3);
      expect(Buffer.from(frame).equals(Buffer.from(nativeZstdCompress(bytes, 3))), `${size} bytes`).toBe(true);
      // Freed at once (detached) where node:zlib gave it a buffer of its own.
      releaseFrame(frame);
      if (size >= 200_000) expect(frame.length).toBe(0);
    }
  });

  it("spools the same CCOBs as the synchronous path, for one-frame and cut bundles", { timeout: HANG_MS }, async () => {
    // Sizes that fill and wrap the 48 MiB ring: a frame too large for the space left waits for the oldest.
    const sizes = [5_000, 20 * 1024 * 1024, 30 * 1024 * 1024, 1, SINGLE_FRAME_MAX + 3 * 1024 * 1024 + 5, 12 * 1024 * 1024, 0];
    const bundles = sizes.map((size, i) => ({ source: bytesSource(data(size, 7 * i + 3)), settings: LLVM19_COMPRESSION }));
    bundles.push({ source: bytesSource(data(100_000, 99)), settings: { version: 3, method: CompressionMethod.Zlib, level: 6 } });
    const sync = new CompressedSpool();
    const async = new CompressedSpool();
    try {
      const expected = sync.compressAll(bundles).map(all);
      const got = (await async.compressAllAsync(bundles)).map(all);
      expect(got.length).toBe(expected.length);
      got.forEach((ccob, i) => expect(Buffer.from(ccob).equals(Buffer.from(expected[i])), `bundle ${i} (${sizes[i] ?? "zlib"} bytes)`).toBe(true));
    } finally {
      sync.close();
      async.close();
    }
  });
});
