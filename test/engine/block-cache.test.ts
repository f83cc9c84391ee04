// blockCachedSource (src/engine/source.ts): every read returns exactly what the underlying source holds,
// whatever mix of small and large reads, and small reads close together cost one underlying read.
import { describe, expect, it } from "vitest";
import { blockCachedSource, bytesSource } from "../../src/engine/source.js";
import type { ByteSource } from "../../src/engine/source.js";

/** A source that is not in memory (no `bytes`), counting its reads; `chunk` caps what one read returns. */
function countingSource(data: Uint8Array, chunk = Infinity): ByteSource & { reads: number } {
  const inner = bytesSource(data);
  const source = {
    size: data.length,
    reads: 0,
    read(dest: Uint8Array, position: number) {
      source.reads++;
      return inner.read(dest.subarray(0, Math.min(dest.length, chunk)), position);
    },
  };
  return source;
}

function bytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

describe("blockCachedSource", () => {
  it("returns the underlying bytes for 2000 random reads, short reads from the source included", () => {
    for (const chunk of [Infinity, 777]) {
      const data = bytes(100_000, 7);
      const cached = blockCachedSource(countingSource(data, chunk), 4096);
      let x = 1;
      const mismatches: string[] = [];
      for (let i = 0; i < 2000; i++) {
        x = (x * 48271) % 2147483647;
        const position = x % (data.length + 10);
        const length = i % 3 === 0 ? x % 5000 : x % 300;
        const dest = new Uint8Array(length);
        let got = 0;
        for (;;) {
          const n = cached.read(dest.subarray(got), position + got);
          if (n <= 0) break;
          got += n;
          if (got === length) break;
        }
        const expected = data.subarray(Math.min(position, data.length), Math.min(position + length, data.length));
        if (got !== expected.length || !Buffer.from(dest.buffer, 0, got).equals(expected)) mismatches.push(`${position}+${length}`);
      }
      expect(mismatches).toEqual([]);
    }
  });

  it("serves small reads inside the last block without reading again, and passes large ones through", () => {
    const data = bytes(50_000, 3);
    const source = countingSource(data);
    const cached = blockCachedSource(source, 8192);
    const small = new Uint8Array(60);
    cached.read(small, 1000);
    expect(source.reads).toBe(1);
    for (const at of [1000, 1060, 1100, 5000, 1000 + 8192 - 60]) {
      expect(cached.read(small, at)).toBe(60);
      expect(small).toEqual(data.subarray(at, at + 60));
    }
    expect(source.reads).toBe(1);
    const large = new Uint8Array(20_000);
    expect(cached.read(large, 2000)).toBe(20_000);
    expect(large).toEqual(data.subarray(2000, 22_000));
    expect(source.reads).toBe(2);
    // The block still holds what it held.
    cached.read(small, 1100);
    expect(source.reads).toBe(2);
    // A miss near the end fills only what is there.
    expect(cached.read(small, data.length - 10)).toBe(10);
    expect(cached.read(small, data.length)).toBe(0);
  });

  it("leaves in-memory sources as they are", () => {
    const source = bytesSource(new Uint8Array(10));
    expect(blockCachedSource(source)).toBe(source);
  });
});
