/**
 * The msgpack-to-JSON-text writer (src/formats/msgpack-json.ts) gives byte for byte what the object route
 * gives (`JSON.stringify(msgpackToJson(decode(bytes)), null, 2)` at the same depth), or declines (-1) and
 * leaves nothing behind: on random documents and on the cases it must decline (repeated keys, index-like
 * keys, non-string keys, floats, 64-bit integers, bins, non-ASCII strings, large maps).
 */
import { describe, expect, it } from "vitest";
import { JsonByteWriter, transcodeMsgpackJson } from "../../src/formats/msgpack-json.js";
import { decodeMsgpack, encodeMsgpack, msgpackToJson } from "../../src/formats/msgpack.js";
import type { MsgpackInput } from "../../src/formats/msgpack.js";

function objectRoute(bytes: Uint8Array, indent: number): string {
  return JSON.stringify(msgpackToJson(decodeMsgpack(bytes).value), null, 2).replace(/\n/g, `\n${" ".repeat(indent)}`);
}

function transcoded(bytes: Uint8Array, indent: number): { end: number; text: string } {
  const chunks: Uint8Array[] = [];
  const out = new JsonByteWriter((b) => chunks.push(b.slice()));
  out.text("<");
  const end = transcodeMsgpackJson(bytes, 0, indent, out);
  out.flush();
  return { end, text: Buffer.concat(chunks).toString("utf8") };
}

describe("msgpack straight to JSON text", () => {
  it("matches the object route on random documents, or declines cleanly", () => {
    let seed = 11;
    const next = (n: number): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
    const keys = [".name", ".vgpr_count", "a\"b", "tab\there", "\u0001", "12", "0", "01", "__proto__", "naïve", ".args", "x".repeat(40)];
    const value = (depth: number): MsgpackInput => {
      switch (next(depth > 3 ? 6 : 9)) {
        case 0: return next(2) === 0 ? next(300) - 150 : next(2 ** 31) * (next(2) === 0 ? 1 : -1);
        case 1: return keys[next(keys.length)]!;
        case 2: return next(3) === 0 ? null : next(2) === 0;
        case 3: return next(4) === 0 ? 1.5 : next(70000);
        case 4: return next(5) === 0 ? 2n ** 60n : "plain text";
        case 5: return next(6) === 0 ? new Uint8Array([1, 2]) : "";
        case 6: return Array.from({ length: next(4) }, () => value(depth + 1));
        default: {
          const m = new Map<MsgpackInput, MsgpackInput>();
          for (let i = next(5); i > 0; i--) m.set(next(8) === 0 ? next(3) : keys[next(keys.length)]!, value(depth + 1));
          return m;
        }
      }
    };
    let took = 0;
    let declined = 0;
    for (let i = 0; i < 3000; i++) {
      let bytes = encodeMsgpack(value(0));
      if (i % 5 === 0) {
        // A repeated key: msgpack allows it, the object keeps one.
        bytes = Uint8Array.from([0x82, 0xa1, 0x61, 0x01, 0xa1, 0x61, 0x02]);
      }
      const indent = i % 3 === 0 ? 10 : 0;
      const { end, text } = transcoded(bytes, indent);
      if (end < 0) {
        declined++;
        expect(text).toBe("<");
      } else {
        took++;
        expect(end).toBe(bytes.length);
        expect(text).toBe(`<${objectRoute(bytes, indent)}`);
      }
    }
    expect(took).toBeGreaterThan(500);
    expect(declined).toBeGreaterThan(500);
  });

  it("declines what the object route would write differently", () => {
    const big = new Map<MsgpackInput, MsgpackInput>();
    for (let i = 0; i < 65; i++) big.set(`k${i}`, i);
    for (const v of [new Map([["1", 1]]), new Map([[1, 1]]), 0.5, 2n ** 60n, new Uint8Array([1]), "é", big] as MsgpackInput[]) {
      expect(transcoded(encodeMsgpack(v), 0)).toEqual({ end: -1, text: "<" });
    }
    expect(transcoded(Uint8Array.from([0x82, 0xa1, 0x61, 0x01, 0xa1, 0x61, 0x02]), 0).end).toBe(-1);
  });
});
