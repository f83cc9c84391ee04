// The bitstream writer: field encodings against hand-computed bits, the measure pass against the write pass,
// and the shifted payload path against the per-element one at every bit offset.
import { describe, expect, it } from "vitest";
import type { PayloadSource } from "../../src/llvm/bitcode/bitstream.js";
import { ARRAY, BitstreamWriter, MAX_RECORD_ELEMENTS, checkRecordLength, fixed, isChar6, lit, log2Ceil, vbr } from "../../src/llvm/bitcode/bitstream.js";
import { rng } from "../engines.js";

function run(body: (w: BitstreamWriter) => void): Uint8Array {
  const measure = BitstreamWriter.measure();
  body(measure);
  const parts: Uint8Array[] = [];
  const writer = BitstreamWriter.write({ write: (b) => parts.push(b.slice()) }, measure.layout);
  body(writer);
  expect(writer.bitNo).toBe(measure.bitNo);
  return new Uint8Array(Buffer.concat(parts));
}

function source(bytes: Uint8Array, chunked: boolean): PayloadSource {
  return chunked
    ? { size: bytes.length, read: (dest, at) => (dest.set(bytes.subarray(at, at + dest.length)), Math.min(dest.length, bytes.length - at)) }
    : { size: bytes.length, bytes, read: () => 0 };
}

describe("bitstream writer", () => {
  it("packs fixed fields LSB first and VBR chunks with continuation bits", () => {
    const bytes = run((w) => {
      w.emit(0b101, 3);
      w.emit(0b11, 2);
      w.emitVbr(100, 6); // 100 = 0b1100100: chunk 00100 | 32, then 00011
      w.alignTo32();
      w.finish();
    });
    // Bit 0 first: 1,0,1 then 1,1 then 0,0,1,0,0,1 (4 + 32) then 1,1,0,0,0,0 (3).
    expect([...bytes]).toEqual([0b10011101, 0b00011100, 0, 0]);
  });

  it("gives blocks the length the measure pass found", () => {
    const bytes = run((w) => {
      w.enterSubblock(8, 3);
      w.emitRecord(1, [2]);
      w.exitBlock();
      w.finish();
    });
    const words = new DataView(bytes.buffer).getUint32(4, true);
    expect(words * 4).toBe(bytes.length - 8);
  });

  it("writes a payload at every bit offset like the per-element path", () => {
    const next = rng(7);
    for (let shift = 0; shift < 8; shift++) {
      for (const size of [0, 1, 5, 4096, 70_001]) {
        const payload = new Uint8Array(size).map(() => Math.floor(next() * 256));
        const scratch = new Uint8Array(1000);
        const fast = run((w) => {
          w.defineAbbrev([lit(8), ARRAY, fixed(8)]);
          w.emit(0, shift);
          w.emitPayload(source(payload, true), 0, size, "fixed8", scratch);
          w.alignTo32();
          w.finish();
        });
        const slow = run((w) => {
          w.defineAbbrev([lit(8), ARRAY, fixed(8)]);
          w.emit(0, shift);
          for (const byte of payload) w.emit(byte, 8);
          w.alignTo32();
          w.finish();
        });
        expect(Buffer.from(fast).equals(Buffer.from(slow)), `shift ${shift} size ${size}`).toBe(true);
      }
    }
  });

  it("counts VBR6 payload bits exactly in the measure pass", () => {
    const payload = Uint8Array.from([1, 31, 32, 200, 7, 255]);
    const bytes = run((w) => {
      w.emitPayload(source(payload, false), 0, payload.length, "vbr6", new Uint8Array(4));
      w.emitVbr(5, 6);
      w.alignTo32();
      w.finish();
    });
    expect(bytes.length).toBe(Math.ceil((6 * 6 + 3 * 6 + 6) / 32) * 4);
  });

  it("knows char6 and Log2_32_Ceil", () => {
    expect([..."az.Z_09"].every((c) => isChar6(c.charCodeAt(0)))).toBe(true);
    expect(isChar6("-".charCodeAt(0))).toBe(false);
    expect([0, 1, 2, 3, 4, 5, 32, 33].map(log2Ceil)).toEqual([0, 0, 1, 2, 2, 3, 5, 6]);
    expect(vbr(6)).toEqual({ vbr: 6 });
  });
});

describe("field widths LLVM's reader imposes", () => {
  // A payload the measure pass counts without reading (fixed 8-bit elements): no 4 GiB in memory.
  const unread = (size: number): PayloadSource => ({ size, read: () => { throw new Error("not read"); } });

  it("an array record holds at most 2^32 - 1 elements (ReadVBR(6) into a uint32_t)", () => {
    expect(MAX_RECORD_ELEMENTS).toBe(2 ** 32 - 1);
    const measure = BitstreamWriter.measure();
    measure.enterSubblock(11, 4);
    const abbrev = measure.defineAbbrev([lit(8), ARRAY, fixed(8)]);
    measure.emitArrayRecordHead(abbrev, 8, 2 ** 32 - 1);
    measure.emitPayload(unread(2 ** 32 - 1), 0, 2 ** 32 - 1, "fixed8", new Uint8Array(16));
    expect(() => measure.emitArrayRecordHead(abbrev, 8, 2 ** 32)).toThrow(/array of record 8 of 4294967296 elements does not fit LLVM bitcode: a record holds at most 4294967295/);
    expect(() => measure.emitUnabbrevRecordHead(9, 2 ** 32)).toThrow(expect.objectContaining({ code: "BITCODE_FIELD_OVERFLOW" }));
    expect(() => checkRecordLength(2 ** 32 - 1, "x")).not.toThrow();
    expect(() => checkRecordLength(2 ** 32, "x")).toThrow(/x of 4294967296 elements/);
  });

  it("a block holds at most 2^32 - 1 words, and a fixed field no more than its width", () => {
    const measure = BitstreamWriter.measure();
    measure.enterSubblock(11, 4);
    const abbrev = measure.defineAbbrev([lit(8), ARRAY, fixed(8)]);
    for (let i = 0; i < 4; i++) {
      measure.emitArrayRecordHead(abbrev, 8, 2 ** 32 - 1);
      measure.emitPayload(unread(2 ** 32 - 1), 0, 2 ** 32 - 1, "fixed8", new Uint8Array(16));
    }
    expect(() => measure.exitBlock()).toThrow(/block 11 of \d+ bytes does not fit LLVM bitcode: a block's length is a 32-bit count of 32-bit words/);
    const small = BitstreamWriter.measure();
    const vst = small.defineAbbrev([lit(13), fixed(32)]);
    small.emitRecord(13, [2 ** 32 - 1], vst);
    expect(() => small.emitRecord(13, [2 ** 32], vst)).toThrow(/value 4294967296 does not fit a 32-bit field/);
  });
});
