import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import { decodeMsgpack, decodeMsgpackExactly, encodeMsgpack, msgpackField, msgpackToJson } from "../../src/formats/msgpack.js";

const hex = (s: string): Uint8Array => Uint8Array.from(s.replace(/\s+/g, "").match(/../g)!.map((b) => parseInt(b, 16)));
const toHex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

function malformed(bytes: Uint8Array): OffloadKitError {
  try {
    decodeMsgpackExactly(bytes);
  } catch (error) {
    expect(error).toBeInstanceOf(OffloadKitError);
    expect((error as OffloadKitError).code).toBe("malformed-msgpack");
    return error as OffloadKitError;
  }
  throw new Error("decoded");
}

describe("msgpack", () => {
  // Byte forms from the msgpack spec, as msgpack-python 1.0 (rocm-kpack's writer) emits them.
  const forms: Array<[unknown, string]> = [
    [null, "c0"],
    [true, "c3"],
    [false, "c2"],
    [0, "00"],
    [127, "7f"],
    [128, "cc80"],
    [256, "cd0100"],
    [65536, "ce00010000"],
    [2 ** 32, "cf0000000100000000"],
    [-1, "ff"],
    [-32, "e0"],
    [-33, "d0df"],
    [-129, "d1ff7f"],
    [-32769, "d2ffff7fff"],
    [-(2 ** 31) - 1, "d3ffffffff7fffffff"],
    [1.5, "cb3ff8000000000000"],
    ["", "a0"],
    ["a".repeat(31), "bf" + "61".repeat(31)],
    ["a".repeat(32), "d920" + "61".repeat(32)],
    ["a".repeat(256), "da0100" + "61".repeat(256)],
    [[], "90"],
    [[1, 2], "920102"],
  ];
  it.each(forms)("encodes %j in its smallest form and decodes it back", (value, form) => {
    expect(toHex(encodeMsgpack(value as never))).toBe(form);
    expect(decodeMsgpackExactly(hex(form))).toEqual(value);
  });

  it("round-trips maps, bins, exts, 64-bit integers and nesting", () => {
    const value = new Map<unknown, unknown>([
      ["amdhsa.version", [1, 2]],
      ["amdhsa.kernels", [new Map<string, unknown>([[".name", "k"], [".vgpr_count", 10], [".sgpr_count", 300]])]],
      ["bin", new Uint8Array([1, 2, 3])],
      ["big", 2n ** 63n + 5n],
      ["neg", -(2n ** 62n)],
      ["ext", { ext: 5, data: new Uint8Array(3) }],
      [7, "int key"],
    ]);
    const bytes = encodeMsgpack(value as never);
    expect(decodeMsgpackExactly(bytes)).toEqual(value);
    const long = Array.from({ length: 70000 }, (_, i) => i % 200);
    expect(decodeMsgpackExactly(encodeMsgpack(long))).toEqual(long);
    const wide = new Map(Array.from({ length: 20 }, (_, i) => [`k${i}`, i] as [string, number]));
    expect(encodeMsgpack(wide)[0]).toBe(0xde);
    expect(decodeMsgpackExactly(encodeMsgpack(wide))).toEqual(wide);
  });

  it("writes plain objects as maps in key order, skipping undefined", () => {
    expect(toHex(encodeMsgpack({ a: 1, b: undefined, c: "x" }))).toBe("82a16101a163a178");
  });

  it("keeps a __proto__ key as data", () => {
    const decoded = decodeMsgpackExactly(encodeMsgpack(new Map([["__proto__", new Map([["polluted", true]])]])));
    expect(msgpackField(decoded, "__proto__")).toBeInstanceOf(Map);
    const json = msgpackToJson(decoded) as Record<string, unknown>;
    expect(Object.getPrototypeOf(json)).toBe(null);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("reads a stream of values one after another", () => {
    const bytes = hex("01 a161 c0");
    const first = decodeMsgpack(bytes);
    const second = decodeMsgpack(bytes, first.end);
    const third = decodeMsgpack(bytes, second.end);
    expect([first.value, second.value, third.value, third.end]).toEqual([1, "a", null, 4]);
  });

  it("refuses counts and lengths the input cannot hold, before allocating", () => {
    // array32 and map32 claiming four billion elements in a 5-byte input.
    expect(malformed(hex("ddffffffff")).message).toMatch(/cannot fit/);
    expect(malformed(hex("dfffffffff")).message).toMatch(/cannot fit/);
    expect(malformed(hex("dbffffffff")).message).toMatch(/needs 4294967295 bytes/);
    expect(malformed(hex("c6ffffffff00")).offset).toBe(5);
    expect(malformed(hex("d9 05 6161")).offset).toBe(2);
    // A map whose second value is missing.
    expect(malformed(hex("82 a161 01 a162")).message).toMatch(/needs 1 bytes, 0 left/);
  });

  it("reports the offending offset, shifted by baseOffset", () => {
    const error = (() => {
      try {
        decodeMsgpack(hex("92 01 c1"), 0, { baseOffset: 1000 });
      } catch (e) {
        return e as OffloadKitError;
      }
      throw new Error("decoded");
    })();
    expect(error.message).toBe("msgpack: reserved type byte 0xc1 at offset 1002");
    expect(error.offset).toBe(1002);
  });

  it("limits nesting", () => {
    const deep = new Uint8Array(200).fill(0x91);
    expect(malformed(deep).message).toMatch(/nesting deeper than 64/);
    expect(() => decodeMsgpack(hex("919190"), 0, { maxDepth: 2 })).toThrow(/nesting deeper than 2/);
    expect(decodeMsgpack(hex("919190"), 0, { maxDepth: 3 }).value).toEqual([[[]]]);
  });

  it("refuses bytes after the value when decoding exactly", () => {
    expect(malformed(hex("0102")).message).toBe("msgpack: 1 bytes after the value at offset 1");
  });

  it("never throws anything but OffloadKitError on random input", () => {
    let seed = 12345;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed >>> 16;
    };
    for (let i = 0; i < 20000; i++) {
      const bytes = Uint8Array.from({ length: 1 + (random() % 24) }, () => random() & 0xff);
      try {
        decodeMsgpack(bytes);
      } catch (error) {
        expect(error).toBeInstanceOf(OffloadKitError);
      }
    }
  });

  it("decodes strings as TextDecoder does, on the short ASCII path and off it", () => {
    const strings = ["", "a", ".vgpr_count", "x".repeat(64), "y".repeat(65), "\u00e9t\u00e9", "k\u{1f600}", "\u0000\u007f"];
    for (const text of strings) expect(decodeMsgpackExactly(encodeMsgpack(text))).toBe(text);
    // Bytes that are not UTF-8, short and long: replacement characters, as the non-fatal decoder gives.
    for (const bytes of [Uint8Array.of(0x61, 0xff, 0x62), Uint8Array.of(...new Array(70).fill(0x61), 0xc3)]) {
      const packed = Uint8Array.of(0xd9, bytes.length, ...bytes);
      expect(decodeMsgpackExactly(packed)).toBe(new TextDecoder().decode(bytes));
    }
  });

  it("skipKeys: the entries are left out unbuilt, with the same checks as when built", () => {
    const doc = new Map<string, unknown>([
      ["keep", 1],
      [".args", [new Map([["a", "x".repeat(300)]]), Uint8Array.of(1, 2), 2.5, -70000, { ext: 3, data: Uint8Array.of(9) }, null, true]],
      ["also", new Map<string, unknown>([[".args", [1, 2]], ["k", "v"]])],
    ]);
    const bytes = encodeMsgpack(doc as never);
    const skipped = decodeMsgpackExactly(bytes, { skipKeys: new Set([".args"]) });
    expect(msgpackToJson(skipped)).toEqual({ keep: 1, also: { k: "v" } });
    // A count the bytes cannot hold, inside a skipped value, is still refused (and at its offset).
    const hostile = Uint8Array.of(0x81, 0xa5, 0x2e, 0x61, 0x72, 0x67, 0x73, 0xdd, 0xff, 0xff, 0xff, 0xff);
    expect(() => decodeMsgpackExactly(hostile, { skipKeys: new Set([".args"]) })).toThrow(/offset 7/);
    const deep = Uint8Array.of(0x81, 0xa1, 0x61, ...new Array(100).fill(0x91), 0);
    expect(() => decodeMsgpackExactly(deep, { skipKeys: new Set(["a"]), maxDepth: 16 })).toThrow(/nesting deeper than 16/);
    const truncated = Uint8Array.of(0x81, 0xa1, 0x61, 0xd9, 10, 0x41);
    expect(() => decodeMsgpackExactly(truncated, { skipKeys: new Set(["a"]) })).toThrow(OffloadKitError);
  });
});
