// Differential property test (STYLE habit 8) for the offload binary walk: random valid blobs (v1 as LLVM 19
// writes them, v2 and v3 multi-entry binaries, compressed v3) and random mutations of them go through both
// engines; results must be identical, error code, offset and message included, the only error thrown must be
// ours, and the reader must still work afterwards. Small windows exercise resumption and TOO_WIDE.
import { deflateSync, inflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import {
  parseOffloadBinaries, readImageBytes, writeOffloadBinary, writeOffloadBinaryMulti,
} from "../../src/formats/offload-binary.js";
import type { Decompressor, OffloadBinaries } from "../../src/formats/offload-binary.js";
import { concatBytes } from "../../src/formats/bytes.js";
import { makeEngine, outcome, randomBytes, rng, setU64 } from "../engines.js";

const decompress: Decompressor = (format, data) => {
  if (format !== "zlib") throw new OffloadKitError("UNSUPPORTED_COMPRESSED", "zstd is not in this test");
  return new Uint8Array(inflateSync(data));
};

function plain(result: OffloadBinaries): unknown {
  return {
    binaries: result.binaries,
    images: result.images.map(({ source: _source, strings, ...rest }) => ({ ...rest, strings: [...strings] })),
    bytes: result.images.map((image) => Buffer.from(readImageBytes(image)).toString("hex")),
  };
}

function outcomeOf(run: () => OffloadBinaries): unknown {
  return outcome(() => plain(run()));
}

function mutate(next: () => number, input: Uint8Array): Uint8Array {
  const bytes = input.slice();
  const kind = Math.floor(next() * 5);
  if (kind === 0) return bytes.subarray(0, Math.floor(next() * bytes.length));
  if (kind === 1) {
    for (let n = 1 + Math.floor(next() * 4); n > 0; n--) bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 256);
    return bytes;
  }
  if (kind === 2 && bytes.length > 8) {
    // The version field of some binary-looking spot.
    bytes[4] = [0, 1, 2, 3, 4, 0xff][Math.floor(next() * 6)]!;
    return bytes;
  }
  // A u64 field (header, entry or string entry) set to an interesting value.
  const at = 8 * Math.floor(next() * Math.min(24, bytes.length / 8));
  const values = [0n, 1n, 2n ** 64n - 1n, 2n ** 53n, 2n ** 53n + 1n, BigInt(bytes.length), BigInt(bytes.length) + 1n, BigInt(Math.floor(next() * 300))];
  setU64(bytes, at, values[Math.floor(next() * values.length)]!);
  return bytes;
}

const WORDS = ["triple", "arch", "feature", "amdgcn-amd-amdhsa", "gfx906", "x906", "sm_70", "", "kind", "a"];

function randomStrings(next: () => number): [string, string][] {
  return Array.from({ length: Math.floor(next() * 5) }, () => {
    const pick = () => (next() < 0.7 ? WORDS[Math.floor(next() * WORDS.length)]! : "k".repeat(Math.floor(next() * (next() < 0.1 ? 150 : 12))));
    return [pick(), pick()];
  });
}

function randomBlob(next: () => number): Uint8Array {
  const parts: Uint8Array[] = [];
  for (let n = Math.floor(next() * 4); n > 0; n--) {
    const kind = next();
    const image = () => ({
      imageKind: Math.floor(next() * 7),
      offloadKind: [0, 1, 2, 3, 4, 8][Math.floor(next() * 6)]!,
      flags: next() < 0.1 ? 1 : 0,
      strings: randomStrings(next),
      image: randomBytes(next, Math.floor(next() * 40)),
    });
    if (kind < 0.6) parts.push(writeOffloadBinary(image()));
    else {
      const images = Array.from({ length: 1 + Math.floor(next() * 3) }, image);
      const compress = kind > 0.85 ? { format: "zlib" as const, compressor: (_f: string, d: Uint8Array) => new Uint8Array(deflateSync(d)) } : undefined;
      parts.push(writeOffloadBinaryMulti(images, { version: kind < 0.7 ? 2 : 3, compress }));
    }
  }
  return concatBytes(parts);
}

describe("offload binary walk: Wasm and TS engines agree (property)", () => {
  it("valid and mutated blobs, small windows", () => {
    const next = rng(0x10ff10ad);
    let errors = 0;
    let images = 0;
    let compressed = 0;
    let tooWide = 0;
    for (let round = 0; round < 1500; round++) {
      const capacity = [96, 160, 4096][round % 3]!;
      const wasm = makeEngine("wasm", capacity);
      const ts = makeEngine("ts", capacity);
      const valid = randomBlob(next);
      const before = outcomeOf(() => parseOffloadBinaries(valid, { engine: wasm, decompress, maxWindow: capacity }));
      const input = round % 4 === 0 ? valid : mutate(next, valid);
      const a = outcomeOf(() => parseOffloadBinaries(input, { engine: wasm, decompress, maxWindow: capacity }));
      const b = outcomeOf(() => parseOffloadBinaries(input, { engine: ts, decompress, maxWindow: capacity }));
      expect(a, `round ${round}`).toEqual(b);
      if ("error" in (a as object)) {
        errors++;
        if ((a as { error: string }).error === "OFFLOAD_METADATA_TOO_WIDE") tooWide++;
      } else {
        const ok = (a as { ok: { images: { compressed: boolean }[] } }).ok;
        images += ok.images.length;
        compressed += ok.images.filter((i) => i.compressed).length;
      }
      expect(outcomeOf(() => parseOffloadBinaries(valid, { engine: wasm, decompress, maxWindow: capacity }))).toEqual(before);
    }
    expect(errors).toBeGreaterThan(200);
    expect(images).toBeGreaterThan(500);
    expect(compressed).toBeGreaterThan(20);
    expect(tooWide).toBeGreaterThan(5);
  });

  it("many string entries overflow the record area and resume; spread metadata widens the window", () => {
    const strings: [string, string][] = Array.from({ length: 3000 }, (_, i) => [`key${i}`, `value${i}`]);
    const blob = writeOffloadBinary({ imageKind: 1, offloadKind: 1, strings, image: new Uint8Array([1, 2, 3]) });
    for (const kind of ["wasm", "ts"] as const) {
      const result = parseOffloadBinaries(blob, { engine: makeEngine(kind) });
      expect(result.images[0]!.strings.size).toBe(3000);
      expect(result.images[0]!.strings.get("key2999")).toBe("value2999");
    }
  });
});
