// Differential property test (STYLE habit 8): random valid bundles and random mutations of them go
// through both engines; results must be identical, including the error code and offset, and the
// only error ever thrown must be ours. Both engines get the same small window so resumption and the
// ID-too-long rule are exercised.
import { describe, expect, it } from "vitest";
import { readBinaryBundle, writeBinaryBundle } from "../../src/formats/bundle.js";
import { readTextBundle, writeTextBundle } from "../../src/formats/text-bundle.js";
import { makeEngine, outcome, randomBytes, rng, setU64 } from "../engines.js";

function mutate(next: () => number, input: Uint8Array): Uint8Array {
  const bytes = input.slice();
  const kind = Math.floor(next() * 5);
  if (kind === 0) return bytes.subarray(0, Math.floor(next() * bytes.length));
  if (kind === 1) {
    for (let n = 1 + Math.floor(next() * 4); n > 0; n--) bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 256);
    return bytes;
  }
  // Overwrite a u64 header field with an interesting value.
  const at = 24 + 8 * Math.floor(next() * Math.min(20, (bytes.length - 24) / 8));
  const values = [0n, 1n, 2n ** 64n - 1n, 2n ** 53n, 2n ** 53n + 1n, BigInt(bytes.length), BigInt(bytes.length) + 1n, BigInt(Math.floor(next() * 500))];
  setU64(bytes, at, values[Math.floor(next() * values.length)]);
  return bytes;
}

describe("bundle readers: Wasm and TS engines agree (property)", () => {
  it("binary bundles, valid and mutated", () => {
    const next = rng(20261122);
    const capacity = 160;
    const wasm = makeEngine("wasm", capacity);
    const ts = makeEngine("ts", capacity);
    let errors = 0;
    let bundles = 0;
    for (let round = 0; round < 1500; round++) {
      const count = Math.floor(next() * 6);
      const entries = Array.from({ length: count }, (_, i) => ({
        id: `id${i}-` + "x".repeat(Math.floor(next() * (next() < 0.1 ? 200 : 30))),
        data: randomBytes(next, Math.floor(next() * 40)),
      }));
      const valid = writeBinaryBundle(entries, 1 + Math.floor(next() * 8));
      const before = outcome(() => readBinaryBundle(valid, { engine: wasm }));
      const input = round % 4 === 0 ? valid : mutate(next, valid);
      const a = outcome(() => readBinaryBundle(input, { engine: wasm }));
      const b = outcome(() => readBinaryBundle(input, { engine: ts }));
      expect(a, `round ${round}`).toEqual(b);
      if ("error" in (a as object)) errors++;
      else if ((a as { ok: { kind: string } }).ok.kind === "bundle") bundles++;
      // The reader still works after an error.
      expect(outcome(() => readBinaryBundle(valid, { engine: wasm }))).toEqual(before);
    }
    // The generator must reach both outcomes, or the test proves little.
    expect(errors).toBeGreaterThan(50);
    expect(bundles).toBeGreaterThan(300);
  });

  it("text bundles, valid and mutated", () => {
    const next = rng(7);
    const wasm = makeEngine("wasm", 96);
    const ts = makeEngine("ts", 96);
    for (let round = 0; round < 500; round++) {
      const comment = ["//", "#", ";"][round % 3];
      const entries = Array.from({ length: Math.floor(next() * 4) }, (_, i) => ({
        id: `host-x86_64-unknown-linux-gnu-${i}`,
        data: randomBytes(next, Math.floor(next() * 150), new Uint8Array([0x0a, 0x2f, 0x23, 0x3b, 0x20, 0x5f, 0x41])),
      }));
      const valid = writeTextBundle(comment, entries);
      const input = round % 3 === 0 ? valid : mutate(next, valid);
      const a = outcome(() => readTextBundle(input, comment, { engine: wasm }));
      const b = outcome(() => readTextBundle(input, comment, { engine: ts }));
      expect(a, `round ${round}`).toEqual(b);
    }
  });
});
