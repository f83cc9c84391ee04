// Reading an xz file again from the middle (src/packages/xz-index.ts): the stream made of blocks k..n
// with an index of their own decodes, by the xz program, to the original's bytes from block k on; files
// that are not one stream of indexed blocks are not read this way.
import { describe, expect, it } from "vitest";
import { bytesSource } from "../../src/engine/source.js";
import { nodeDecoders } from "../../src/packages/node/io.js";
import { crc32, readXzLayout, xzStreamFrom } from "../../src/packages/xz-index.js";
import { haveTools, tool } from "./build.js";

/** Bytes that compress a little (so blocks are of varied compressed sizes). */
function data(size: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = 12345;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = (x >>> 24) & (i % 3 === 0 ? 0xff : 0x0f);
  }
  return out;
}

async function collect(stream: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of stream) parts.push(chunk.slice());
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

describe("xz-index", () => {
  const plain = data(600_000);

  it("crc32 is IEEE's (the check value of '123456789')", () => {
    expect(crc32(new TextEncoder().encode("123456789"))).toBe(0xcbf43926);
  });

  it("reads the blocks of a file written in blocks, and decodes from any block", async () => {
    if (!haveTools("xz")) return;
    const xz = new Uint8Array(tool("xz", ["-1", "-T1", "--block-size=100000", "-c"], { input: plain })!);
    const layout = readXzLayout(bytesSource(xz))!;
    expect(layout.blocks.length).toBe(6);
    expect(layout.blocks.map((b) => b.start)).toEqual([0, 100_000, 200_000, 300_000, 400_000, 500_000]);
    for (const from of [0, 99_999, 100_000, 250_001, 599_999]) {
      const seek = xzStreamFrom(bytesSource(xz), from);
      if (from < 100_000) {
        // In the first block: decoding from the start is the same.
        expect(seek).toBeUndefined();
        continue;
      }
      expect(seek!.skip).toBe(from % 100_000);
      const decoded = await collect(nodeDecoders().decode("xz", seek!.chunks));
      expect(decoded.subarray(seek!.skip)).toEqual(plain.subarray(from));
    }
  });

  it("does not read a file of one block, with stream padding, of two streams, or with a damaged index", () => {
    if (!haveTools("xz")) return;
    const one = new Uint8Array(tool("xz", ["-1", "-T1", "-c"], { input: plain })!);
    expect(readXzLayout(bytesSource(one))!.blocks.length).toBe(1);
    expect(xzStreamFrom(bytesSource(one), 500_000)).toBeUndefined();
    const blocks = new Uint8Array(tool("xz", ["-1", "-T1", "--block-size=100000", "-c"], { input: plain })!);
    const padded = new Uint8Array(blocks.length + 4);
    padded.set(blocks);
    expect(readXzLayout(bytesSource(padded))).toBeUndefined();
    const two = new Uint8Array(blocks.length * 2);
    two.set(blocks);
    two.set(blocks, blocks.length);
    expect(readXzLayout(bytesSource(two))).toBeUndefined();
    const damaged = blocks.slice();
    // The first record's unpadded size, inside the index (12-byte footer, then the index's CRC before it).
    const layout = readXzLayout(bytesSource(blocks))!;
    damaged[layout.indexOffset + 2]! ^= 1;
    expect(readXzLayout(bytesSource(damaged))).toBeUndefined();
    expect(readXzLayout(bytesSource(plain))).toBeUndefined();
  });
});
