import { describe, expect, it } from "vitest";
import { NEEDLE, RECORDS } from "../../src/engine/layout.js";
import { bytesSource } from "../../src/engine/source.js";
import { findAll, findFirst } from "../../src/engine/find.js";
import { Window } from "../../src/engine/window.js";
import { ENGINE_KINDS, makeEngine, randomBytes, rng } from "../engines.js";

function naive(hay: Uint8Array, needle: Uint8Array, from: number, to: number): number[] {
  const out: number[] = [];
  outer: for (let i = from; i + needle.length <= to; i++) {
    for (let k = 0; k < needle.length; k++) if (hay[i + k] !== needle[k]) continue outer;
    out.push(i);
  }
  return out;
}

function kernelHits(kind: "wasm" | "ts", hay: Uint8Array, needle: Uint8Array, start: number, end: number, maxHits: number): number[] {
  const engine = makeEngine(kind, Math.max(hay.length, 64));
  const views = engine.views();
  views.window.set(hay);
  views.bytes.set(needle, NEEDLE);
  const count = engine.scan(needle.length, start, end, maxHits);
  return Array.from(engine.views().u32.subarray(RECORDS >>> 2, (RECORDS >>> 2) + count));
}

describe.each(ENGINE_KINDS)("scan kernel (%s)", (kind) => {
  it("finds every occurrence, including overlapping ones and ones at the range edges", () => {
    const hay = new TextEncoder().encode("aaaabaaaab__CLANG__CLANG_");
    expect(kernelHits(kind, hay, new TextEncoder().encode("aa"), 0, hay.length, 100)).toEqual([0, 1, 2, 5, 6, 7]);
    expect(kernelHits(kind, hay, new TextEncoder().encode("__CLANG_"), 0, hay.length, 100)).toEqual([10, 17]);
    expect(kernelHits(kind, hay, new TextEncoder().encode("__CLANG_"), 11, hay.length, 100)).toEqual([17]);
    expect(kernelHits(kind, hay, new TextEncoder().encode("__CLANG_"), 0, 24, 100)).toEqual([10]);
  });

  it("stops at maxHits and returns nothing for empty or too-long needles", () => {
    const hay = new Uint8Array(100).fill(7);
    expect(kernelHits(kind, hay, new Uint8Array([7]), 0, 100, 5)).toEqual([0, 1, 2, 3, 4]);
    expect(kernelHits(kind, hay, new Uint8Array([7]), 10, 5, 5)).toEqual([]);
  });

  it("agrees with a naive search on random inputs (property)", () => {
    const next = rng(1234);
    for (let round = 0; round < 300; round++) {
      const alphabet = new Uint8Array(Array.from({ length: 1 + Math.floor(next() * 4) }, () => Math.floor(next() * 256)));
      const hay = randomBytes(next, Math.floor(next() * 300), alphabet);
      const needle = randomBytes(next, 1 + Math.floor(next() * 12), alphabet);
      const start = Math.floor(next() * 20);
      const end = Math.max(0, hay.length - Math.floor(next() * 20));
      expect(kernelHits(kind, hay, needle, start, end, 1 << 20), `round ${round}`).toEqual(naive(hay, needle, start, end));
    }
  });

  it("finds matches across window boundaries when streaming a source", () => {
    const next = rng(99);
    for (let round = 0; round < 40; round++) {
      const hay = randomBytes(next, 5000 + Math.floor(next() * 5000), new Uint8Array([0x5f, 0x41, 0x42]));
      const needle = randomBytes(next, 2 + Math.floor(next() * 6), new Uint8Array([0x5f, 0x41, 0x42]));
      const engine = makeEngine(kind, 64 + Math.floor(next() * 200));
      const w = new Window(engine, bytesSource(hay));
      const hits: number[] = [];
      findAll(w, needle, 3, hay.length - 2, (p) => {
        hits.push(p);
      });
      expect(hits).toEqual(naive(hay, needle, 3, hay.length - 2));
      const first = naive(hay, needle, 100, hay.length)[0] ?? -1;
      expect(findFirst(w, needle, 100)).toBe(first);
    }
  });
});
