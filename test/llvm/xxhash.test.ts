/**
 * XXH3-64 (src/llvm/xxhash.ts) against xxHash's own `xxhsum -H3`: a committed table of vectors, made with
 * xxhsum 0.8.1 (Debian bookworm package `xxhash`), so the test means something without the tool; and,
 * when xxhsum is on PATH, thousands of random inputs of every length class compared in one batch.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { xxh3Low32, xxh3_64 } from "../../src/llvm/xxhash.js";
import { hasNative } from "../native.js";

/** The LCG x' = 1103515245x + 12345 mod 2^32; a step's top byte is one input byte. */
function makeLcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state;
  };
}

/**
 * The bytes the table was made from: the LCG seeded with the length. Regenerate by writing
 * patternBytes(n) to a file and running `xxhsum -H3 <file>`.
 */
function patternBytes(length: number): Uint8Array {
  const next = makeLcg(length);
  const bytes = new Uint8Array(length);
  for (let index = 0; index < length; index++) bytes[index] = next() >>> 24;
  return bytes;
}

// [length, xxhsum -H3 of patternBytes(length)]: both sides of every length-class boundary (3/4, 8/9,
// 16/17, 32/33, 64/65, 96/97, 128/129, 240/241), stripe and block edges of the long path (64-byte
// stripes, 1024-byte blocks, so 1024/1025, 1088/1089, 2048/2049, 3072/3073) and a few large sizes.
const PATTERN_VECTORS: [number, string][] = [
  [0, "2d06800538d394c2"],
  [1, "d0d496e05c553485"],
  [2, "5ebd76638ddd10b0"],
  [3, "35c8b8cb9daa8c4b"],
  [4, "ba7bf5e7088fd8de"],
  [5, "28c87927e4e70198"],
  [6, "1a9e4f4a246724fb"],
  [7, "3743028c3ad1fcc5"],
  [8, "3d7f8bbc91c4d8fb"],
  [9, "04d746e73b7e0eae"],
  [10, "bc08f73299f988da"],
  [12, "6840d6b9df597903"],
  [15, "88ba98e06c85ac2e"],
  [16, "66c27e1c3c912202"],
  [17, "90503a7e3b745236"],
  [18, "8226488574773408"],
  [24, "d86e12cc9b9415ec"],
  [31, "d42217520ff8de95"],
  [32, "9f0baf705f5b2240"],
  [33, "e2fa991f47c5b1f9"],
  [47, "2f9eee2cb6921395"],
  [48, "8a10111871373ee9"],
  [49, "481d24b2181a93d9"],
  [63, "73c08432049206ad"],
  [64, "64061d7f061c96cd"],
  [65, "da95bd5708f8e5ca"],
  [80, "5e87d44041bfb84d"],
  [95, "c0d4741391ceec33"],
  [96, "1cb2f1073d0ba6af"],
  [97, "21f4fbc075dffef7"],
  [112, "3a200ba0fd8fe96b"],
  [127, "3d57ae146cf62181"],
  [128, "81e8b03e45a6a967"],
  [129, "5101e553e46cf46b"],
  [130, "ba408fe700bd0491"],
  [143, "2ed9fb0deea9d35b"],
  [144, "3e63e7663ba08276"],
  [145, "b3163beffc3177db"],
  [160, "8cb7f37852a2fa24"],
  [176, "0e42369140c2d1c9"],
  [192, "2ba6ed33d4aeb32f"],
  [200, "75d0cf2b93b72a7b"],
  [208, "f6a5c11ea4a2828c"],
  [224, "15cb42565533bb99"],
  [239, "6a206f8d2d2d5d5b"],
  [240, "75a2ed0516be5b99"],
  [241, "b21a6bbbae7ed0ed"],
  [242, "d8d12726e16c6a0f"],
  [255, "47e3a5508ef62747"],
  [256, "7fcdd7331028a032"],
  [257, "a49f1b98440e9932"],
  [320, "2ab790a1c3d63e84"],
  [448, "160aa1c37b06075e"],
  [511, "263d8d38e52feeae"],
  [512, "e57f5d56d9c6590e"],
  [513, "4a8ac65528e91e24"],
  [1000, "d66f45e48a81180b"],
  [1023, "46e8f3e90756fc11"],
  [1024, "b066be21c85dfca4"],
  [1025, "64d3c9ccafa72da4"],
  [1087, "b39dd913594025d8"],
  [1088, "47e61283c200f30e"],
  [1089, "226093e5b275a661"],
  [1151, "55dcd3c05fc90cb4"],
  [1152, "84c92d72a9fbe7d8"],
  [2047, "1ff26527258260f0"],
  [2048, "bacbab2f8e55d463"],
  [2049, "3b51ff4852dc6449"],
  [3071, "171ed6de0120f64c"],
  [3072, "7893f28a882a6025"],
  [3073, "11ce9e4f7b709334"],
  [4096, "d3e2ba14642ce161"],
  [4097, "e242b7f888790085"],
  [5000, "24cbc99d0d236a9d"],
  [10000, "5f1fd5fc9ba1a1e8"],
  [65536, "4dbf5c9f0d9635aa"],
  [100003, "c232728e63b2ce35"],
];

// [latin1 text, xxhsum -H3 of its bytes]: bundle entry IDs as LLVM 19 and 22 store them, among others.
const TEXT_VECTORS: [string, string][] = [
  ["a", "e6c632b61e964e1f"],
  ["abc", "78af5f94892f3950"],
  ["host-x86_64-unknown-linux-gnu", "71f01c68fbc4f99f"],
  ["host-x86_64-unknown-linux-gnu-", "9545cb069ec060ac"],
  ["hip-amdgcn-amd-amdhsa--gfx906", "50546ca7d375ad52"],
  ["hip-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "a9fd902614bf3257"],
  ["openmp-nvptx64-nvidia-cuda--sm_70", "0c3cbe8286ae6aea"],
  ["hipv4-amdgcn-amd-amdhsa--gfx1030", "ed6cb9e4ee79b0c0"],
];

function latin1(text: string): Uint8Array {
  return Uint8Array.from(text, (char) => char.charCodeAt(0));
}

function hex64(value: bigint): string {
  return value.toString(16).padStart(16, "0");
}

function hasXxhsum(): boolean {
  // test/native.ts: under OFFLOAD_KIT_REQUIRE_NATIVE=1 (CI) a missing xxhsum fails instead of skipping.
  if (!hasNative("xxhsum")) return false;
  try {
    return execFileSync("xxhsum", ["-H3", "-"], { input: "", stdio: ["pipe", "pipe", "ignore"] }).toString().includes("2d06800538d394c2");
  } catch {
    return false;
  }
}

describe("xxh3_64: committed xxhsum vectors", () => {
  it.each(PATTERN_VECTORS)("pattern of %i bytes", (length, expected) => {
    expect(hex64(xxh3_64(patternBytes(length)))).toBe(expected);
  });

  it.each(TEXT_VECTORS)("%j", (text, expected) => {
    expect(hex64(xxh3_64(latin1(text)))).toBe(expected);
  });

  it("xxh3Low32 is the low 32 bits, unsigned", () => {
    for (const [length, expected] of PATTERN_VECTORS) {
      const low = xxh3Low32(patternBytes(length));
      expect(low).toBe(Number(BigInt("0x" + expected) & 0xffffffffn));
      expect(low).toBeGreaterThanOrEqual(0);
    }
  });

  it("hashes a view by its own bytes, whatever its offset in the buffer", () => {
    for (const [length, expected] of PATTERN_VECTORS) {
      if (length > 5000) continue;
      const buffer = new Uint8Array(length + 7).fill(0xa5);
      buffer.set(patternBytes(length), 3);
      expect(hex64(xxh3_64(buffer.subarray(3, 3 + length)))).toBe(expected);
    }
  });
});

describe.skipIf(!hasXxhsum())("xxh3_64 against xxhsum -H3 on random inputs", () => {
  it("agrees on 4000 random inputs of every length class", () => {
    const seed = 0x5eed1234;
    const next = makeLcg(seed);
    // Top bits: the LCG's low bits have short periods.
    const random = () => next() / 4294967296;
    const lengths: number[] = [];
    // Every short length many times, then the mid classes and the long path, with the block edges.
    for (let length = 0; length <= 16; length++) for (let copy = 0; copy < 24; copy++) lengths.push(length);
    for (let count = 0; count < 1582; count++) lengths.push(17 + Math.floor(random() * (128 - 17 + 1)));
    for (let count = 0; count < 900; count++) lengths.push(129 + Math.floor(random() * (240 - 129 + 1)));
    for (let count = 0; count < 1100; count++) lengths.push(241 + Math.floor(random() * 4096));
    for (const edge of [1023, 1024, 1025, 1087, 1088, 1089, 2048, 2049, 4096, 4097]) lengths.push(edge);
    expect(lengths.length).toBe(4000);

    const dir = mkdtempSync(join(tmpdir(), "xxh3-"));
    try {
      const inputs = lengths.map((length, index) => {
        const bytes = new Uint8Array(length);
        for (let at = 0; at < length; at++) bytes[at] = next() >>> 24;
        const path = join(dir, String(index));
        writeFileSync(path, bytes);
        return { path, bytes };
      });
      const expected = new Map<string, string>();
      // Batches keep each command line well under ARG_MAX.
      for (let start = 0; start < inputs.length; start += 1000) {
        const batch = inputs.slice(start, start + 1000).map((input) => input.path);
        const lines = execFileSync("xxhsum", ["-H3", ...batch], { maxBuffer: 1 << 24 }).toString().trim().split("\n");
        for (const line of lines) {
          // xxhsum 0.8.1 prints "XXH3 (<path>) = <hex>".
          const match = /^XXH3 \((.*)\) = ([0-9a-f]{16})$/.exec(line);
          if (!match) throw new Error(`unexpected xxhsum output: ${line}`);
          expected.set(match[1]!, match[2]!);
        }
      }
      expect(expected.size).toBe(inputs.length);
      const mismatches: string[] = [];
      for (const { path, bytes } of inputs) {
        const mine = hex64(xxh3_64(bytes));
        if (mine !== expected.get(path)) mismatches.push(`length ${bytes.length} (seed ${seed}): ${mine} != ${expected.get(path)}`);
      }
      expect(mismatches).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
