// The LZ4 block decoder against frames made by the lz4 tool (test/fixtures/nv/lz4/make-lz4-vectors.sh): each
// frame's blocks decode to the input; every bound (output capacity, input end, match offset) fails with our error.
// The encoder: its blocks decode to their input with our decoder and with liblz4's (the lz4 tool, given each
// block in a frame), keep the format's end rules, and stay within lz4BlockBound.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decodeLz4Block, encodeLz4Block, lz4BlockBound } from "../../src/compress/lz4-block.js";
import { OffloadKitError } from "../../src/engine/errors.js";
import { nativeTool, runNative } from "../native.js";

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

/** Inputs that reach every path of the encoder: empty, shorter than a match may be, runs, long literals, far and overlapping matches. */
function encoderInputs(): [string, Uint8Array][] {
  let state = 7;
  const noise = (n: number) => Uint8Array.from({ length: n }, () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) >>> 24));
  const far = noise(70000);
  far.set(far.subarray(0, 4000), 66000); // a repeat 66,000 bytes back: past the 64 KiB window, so not a match
  far.set(far.subarray(10000, 14000), 60000); // and one 50,000 bytes back: a match
  return [
    ["empty", new Uint8Array(0)],
    ["12 bytes", noise(12)],
    ["13 zeros", new Uint8Array(13)],
    ["zeros", new Uint8Array(100000)],
    ["noise", noise(5000)],
    ["far", far],
    ["cubin", new Uint8Array(readFileSync(join(DIR, "cubin.bin")))],
    ["runs", new Uint8Array(readFileSync(join(DIR, "runs.bin")))],
    ["random", new Uint8Array(readFileSync(join(DIR, "random.bin")))],
  ];
}

describe("encodeLz4Block", () => {
  it.each(encoderInputs())("%s: decodes to its input, within the bound, ending in 5+ literals", (_name, input) => {
    const block = encodeLz4Block(input);
    expect(block.length).toBeLessThanOrEqual(lz4BlockBound(input.length));
    expect(Buffer.compare(decodeLz4Block(block, input.length), input)).toBe(0);
    // The last sequence is literals only: walk the sequences and check the last match ends 5 or more bytes before the end.
    let ip = 0;
    let op = 0;
    let lastMatchEnd = 0;
    while (ip < block.length) {
      const token = block[ip++]!;
      let literals = token >>> 4;
      if (literals === 15) for (let more = 255; more === 255;) literals += more = block[ip++]!;
      ip += literals;
      op += literals;
      if (ip === block.length) break;
      ip += 2;
      let length = (token & 15) + 4;
      if ((token & 15) === 15) for (let more = 255; more === 255;) length += more = block[ip++]!;
      expect(op).toBeLessThanOrEqual(input.length - 12);
      op += length;
      lastMatchEnd = op;
    }
    expect(op).toBe(input.length);
    if (lastMatchEnd > 0) expect(input.length - lastMatchEnd).toBeGreaterThanOrEqual(5);
  });

  it("shrinks what repeats: a cubin to under a third, zeros to under 1%", () => {
    const cubin = new Uint8Array(readFileSync(join(DIR, "cubin.bin")));
    expect(encodeLz4Block(cubin).length).toBeLessThan(cubin.length / 3);
    expect(encodeLz4Block(new Uint8Array(100000)).length).toBeLessThan(1000);
  });

  it.skipIf(nativeTool("lz4") === undefined)("liblz4 (lz4 -d) decodes every block to its input", () => {
    const dir = mkdtempSync(join(tmpdir(), "lz4-encode-"));
    try {
      for (const [name, input] of encoderInputs()) {
        if (input.length === 0) continue;
        const block = encodeLz4Block(input);
        // A frame of one block: magic, FLG (version 1, independent blocks), BD (4 MiB blocks), HC, size, block, end mark.
        const frame = Buffer.concat([Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x70, 0x73]), Buffer.alloc(4), Buffer.from(block), Buffer.alloc(4)]);
        frame.writeUInt32LE(block.length, 7);
        const path = join(dir, `${name.replace(/ /g, "_")}.lz4`);
        writeFileSync(path, frame);
        const r = runNative("lz4", ["-d", "-c", path]);
        expect(r.status, `${name}: ${r.stderr}`).toBe(0);
        expect(Buffer.compare(r.stdout, input), name).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("round trip over random compressible data", () => {
    let state = 99;
    const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) >>> 16;
    for (let round = 0; round < 200; round++) {
      const parts: number[] = [];
      const want = next() % 3000;
      while (parts.length < want) {
        const choice = next() % 3;
        if (choice === 0) parts.push(...new Array(next() % 300).fill(next() & 255));
        else if (choice === 1 && parts.length > 4) {
          const from = next() % parts.length;
          parts.push(...parts.slice(from, from + (next() % 200)));
        } else parts.push(...Array.from({ length: next() % 40 }, () => next() & 255));
      }
      const input = Uint8Array.from(parts.slice(0, want));
      expect(Buffer.compare(decodeLz4Block(encodeLz4Block(input), input.length), input)).toBe(0);
    }
  });
});
