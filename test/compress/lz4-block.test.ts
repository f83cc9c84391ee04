// The LZ4 block decoder against frames made by the lz4 tool (test/fixtures/nv/lz4/make-lz4-vectors.sh): each
// frame's blocks decode to the input; every bound (output capacity, input end, match offset) fails with our error.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decodeLz4Block } from "../../src/compress/lz4-block.js";
import { OffloadKitError } from "../../src/engine/errors.js";

const DIR = join(import.meta.dirname, "../fixtures/nv/lz4");

/** The blocks of an LZ4 frame (lz4_Frame_format.md): magic, FLG, BD, [content size], HC, then u32-sized blocks to a 0 end mark. */
function frameBlocks(frame: Uint8Array): { bytes: Uint8Array; stored: boolean }[] {
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  expect(view.getUint32(0, true)).toBe(0x184d2204);
  const flg = frame[4]!;
  expect(flg & 0x20).toBe(0x20); // independent blocks
  let at = 4 + 2 + ((flg & 0x08) !== 0 ? 8 : 0) + 1;
  const blocks: { bytes: Uint8Array; stored: boolean }[] = [];
  for (;;) {
    const word = view.getUint32(at, true);
    at += 4;
    if (word === 0) break;
    const size = word & 0x7fffffff;
    blocks.push({ bytes: frame.subarray(at, at + size), stored: (word & 0x80000000) !== 0 });
    at += size;
  }
  return blocks;
}

const BLOCK = 64 * 1024;

function decodeFrame(frame: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const block of frameBlocks(frame)) {
    const part = block.stored ? block.bytes : decodeLz4Block(block.bytes, Math.min(BLOCK, size - at));
    out.set(part, at);
    at += part.length;
  }
  expect(at).toBe(size);
  return out;
}

function catches(run: () => unknown): OffloadKitError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(OffloadKitError);
    return e as OffloadKitError;
  }
  throw new Error("expected an OffloadKitError");
}

describe("decodeLz4Block", () => {
  it.each(["cubin", "runs", "random"].flatMap((n) => [`${n}.1`, `${n}.12`]))("%s.lz4 decodes to its input", (name) => {
    const input = readFileSync(join(DIR, `${name.split(".")[0]}.bin`));
    const frame = new Uint8Array(readFileSync(join(DIR, `${name}.lz4`)));
    expect(frameBlocks(frame).some((b) => !b.stored)).toBe(true);
    expect(Buffer.from(decodeFrame(frame, input.length)).equals(input)).toBe(true);
  });

  const frame = new Uint8Array(readFileSync(join(DIR, "cubin.12.lz4")));
  const block = frameBlocks(frame)[0]!.bytes;
  const size = readFileSync(join(DIR, "cubin.bin")).length;

  it("never writes past the capacity, at any capacity below the size", () => {
    for (const capacity of [0, 1, 15, 100, size - 1]) {
      expect(catches(() => decodeLz4Block(block, capacity)).code).toBe("LZ4_CORRUPT");
    }
    expect(decodeLz4Block(block, size + 100).length).toBe(size);
  });

  it("never reads past the input: every truncation fails with our error or decodes less", () => {
    for (let cut = 0; cut < block.length; cut += 7) {
      try {
        expect(decodeLz4Block(block.subarray(0, cut), size).length).toBeLessThanOrEqual(size);
      } catch (e) {
        expect(e).toBeInstanceOf(OffloadKitError);
      }
    }
  });

  it("match offsets outside the output, truncated lengths", () => {
    // One literal, then a match at offset 2 (only 1 byte produced).
    expect(catches(() => decodeLz4Block(Uint8Array.of(0x10, 0x41, 0x02, 0x00), 100))).toMatchObject({ code: "LZ4_CORRUPT", offset: 2, field: "offset" });
    expect(catches(() => decodeLz4Block(Uint8Array.of(0x10, 0x41, 0x00, 0x00), 100))).toMatchObject({ offset: 2, field: "offset" });
    expect(catches(() => decodeLz4Block(Uint8Array.of(0xf0, 0xff), 100))).toMatchObject({ field: "literal length" });
    expect(catches(() => decodeLz4Block(Uint8Array.of(0x1f, 0x41, 0x01, 0x00), 100))).toMatchObject({ field: "match length" });
    expect(catches(() => decodeLz4Block(Uint8Array.of(0x10, 0x41, 0x01), 100))).toMatchObject({ field: "offset" });
    // An overlapping match: 'A' then 7 more copies of it.
    expect(Buffer.from(decodeLz4Block(Uint8Array.of(0x14, 0x41, 0x01, 0x00, 0x00), 100)).toString()).toBe("AAAAAAAAA");
  });
});
