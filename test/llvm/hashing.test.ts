// llvm::hash_value(StringRef) and the DenseMap<StringRef> order built on it. The vectors were computed by
// libLLVM-19.so and libLLVM-22.so (identical) with the probe in test/fixtures/make-offload-binary-fixtures.sh.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DenseMapModel, denseMapOrder } from "../../src/llvm/dense-map.js";
import { denseMapStringHash, llvmHashValue } from "../../src/llvm/hashing.js";
import { buildElfStringTable } from "../../src/llvm/string-table.js";
import { latin1Decode } from "../../src/formats/bytes.js";

const vectors = readFileSync(new URL("../fixtures/offload-binary/llvm-hash-value.txt", import.meta.url), "utf8")
  .trim()
  .split("\n")
  .map((line) => {
    const [hex, hash] = line.split(" ");
    return { bytes: Uint8Array.from(Buffer.from(hex === "-" ? "" : hex!, "hex")), hash: BigInt(`0x${hash}`) };
  });

describe("llvm::hash_value(StringRef)", () => {
  it("matches libLLVM on every length class (0 to 300 bytes)", () => {
    expect(vectors.length).toBeGreaterThan(100);
    const lengths = new Set(vectors.map((v) => v.bytes.length));
    for (const length of [0, 1, 3, 4, 8, 9, 16, 17, 32, 33, 64, 65, 127, 128, 129]) {
      if (length <= 70) expect(lengths.has(length), `length ${length}`).toBe(true);
    }
    for (const { bytes, hash } of vectors) expect(llvmHashValue(bytes), latin1Decode(bytes)).toBe(hash);
  });

  it("gives DenseMapInfo<StringRef> the low 32 bits", () => {
    expect(denseMapStringHash(new TextEncoder().encode("triple"))).toBe(0x0819b0d8);
    expect(denseMapStringHash(new TextEncoder().encode("arch"))).toBe(0xf386c709);
  });
});

describe("DenseMap<StringRef> order", () => {
  it("reproduces the packager's observed string-entry orders (spec offload-binary.md §1)", () => {
    const order = (keys: string[]) => denseMapOrder(keys).filter((k) => k !== "file" && k !== "kind");
    expect(order(["file", "triple", "arch"])).toEqual(["arch", "triple"]);
    expect(order(["file", "triple", "arch", "feature"])).toEqual(["feature", "arch", "triple"]);
    expect(order(["file", "a", "b", "c", "d"])).toEqual(["b", "c", "d", "a"]);
    expect(order(["file", "d", "c", "b", "a"])).toEqual(["b", "c", "d", "a"]);
    expect(order(["file", "x", "y", "z"])).toEqual(["y", "x", "z"]);
    // zeta and arch share bucket 9: whichever comes first keeps it, the other probes on.
    expect(order(["file", "triple", "arch", "zeta", "alpha", "kind"])).toEqual(["arch", "zeta", "triple", "alpha"]);
    expect(order(["alpha", "zeta", "kind", "arch", "triple", "file"])).toEqual(["zeta", "arch", "triple", "alpha"]);
  });

  it("starts with 64 buckets and doubles when three quarters would be full", () => {
    const map = new DenseMapModel<number>();
    expect(map.bucketCount).toBe(0);
    for (let i = 0; i < 47; i++) map.set(`k${i}`, i);
    expect(map.bucketCount).toBe(64);
    map.set("k47", 47);
    expect(map.bucketCount).toBe(128);
    expect(map.size).toBe(48);
    map.set("k3", 99);
    expect(map.size).toBe(48);
    expect(map.get("k3")).toBe(99);
    expect([...map.keys()].sort()).toEqual(Array.from({ length: 48 }, (_, i) => `k${i}`).sort());
  });
});

describe("StringTableBuilder (ELF, optimized)", () => {
  const table = (strings: string[]) => latin1Decode(buildElfStringTable(strings).bytes);

  it("sorts from the last character and tail-merges (spec examples)", () => {
    expect(table(["arch", "feature", "triple", "nvptx64-nvidia-cuda", "+ptx70", "sm_70"])).toBe(
      "\0arch\0feature\0triple\0nvptx64-nvidia-cuda\0+ptx70\0sm_70\0",
    );
    const built = buildElfStringTable(["triple", "t", "arch", "gfx906", "q", "x906", "r", ""]);
    expect(latin1Decode(built.bytes)).toBe("\0t\0r\0q\0arch\0triple\0gfx906\0");
    expect(built.offsets.get("x906")).toBe(built.offsets.get("gfx906")! + 2);
    expect(built.offsets.get("")).toBe(0);
  });

  it("puts the longer of two strings sharing a suffix first, and ignores the order strings come in", () => {
    expect(table(["b", "ab", "cab"])).toBe("\0cab\0");
    expect(table(["cab", "b", "ab"])).toBe("\0cab\0");
    expect(table(["ab", "xb"])).toBe("\0xb\0ab\0");
    expect(table([])).toBe("\0");
  });
});
