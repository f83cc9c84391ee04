import { NEEDLE, RECORDS, reserveWindow } from "../layout";
import { scan } from "../scan";

function setNeedle(text: string): i32 {
  const bytes = String.UTF8.encode(text);
  memory.copy(NEEDLE, changetype<usize>(bytes), <usize>bytes.byteLength);
  return bytes.byteLength;
}

function setWindow(text: string): usize {
  const bytes = String.UTF8.encode(text);
  const base = reserveWindow(4096);
  memory.copy(base, changetype<usize>(bytes), <usize>bytes.byteLength);
  return bytes.byteLength;
}

function hit(i: i32): u32 {
  return load<u32>(RECORDS + (<usize>i << 2));
}

describe("scan", () => {
  test("finds overlapping occurrences", () => {
    const len = <u32>setWindow("aaaabaaaab");
    const n = setNeedle("aa");
    expect(scan(n, 0, len, 100)).toBe(6);
    expect(hit(0)).toBe(0);
    expect(hit(3)).toBe(5);
    expect(hit(5)).toBe(7);
  });

  test("finds a needle across the SIMD and scalar parts", () => {
    // 40 filler bytes put the second hit in the scalar tail, the first in the 32-byte vector loop.
    const len = <u32>setWindow("__CLANG_OFFLOAD_BUNDLE__" + "x".repeat(40) + "__CLANG_OFFLOAD_BUNDLE__");
    const n = setNeedle("__CLANG_OFFLOAD_BUNDLE__");
    expect(scan(n, 0, len, 100)).toBe(2);
    expect(hit(0)).toBe(0);
    expect(hit(1)).toBe(64);
    expect(scan(n, 1, len, 100)).toBe(1);
    expect(scan(n, 0, len - 1, 100)).toBe(1);
  });

  test("respects maxHits and rejects bad needle lengths", () => {
    const len = <u32>setWindow("z".repeat(100));
    expect(scan(setNeedle("z"), 0, len, 7)).toBe(7);
    expect(scan(0, 0, len, 7)).toBe(0);
    expect(scan(300, 0, len, 7)).toBe(0);
    expect(scan(1, 50, 40, 7)).toBe(0);
  });
});
