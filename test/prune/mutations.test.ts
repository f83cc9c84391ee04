// prune / compress / decompress / replace on damaged inputs: whatever the bytes, the only error is ours
// (OffloadKitError, with a message naming the input), and the functions still work afterwards.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import { writeArchive } from "../../src/formats/archive.js";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { writeTextBundle } from "../../src/formats/text-bundle.js";
import { writeOffloadBinary } from "../../src/formats/offload-binary.js";
import { loadZstd } from "../../src/compress/zstd-wasm.js";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { pruneWith, replaceWith, transformWith } from "../../src/prune/index.js";
import { randomBytes, rng } from "../engines.js";

await loadZstd();
const codecs = nodeCodecs;
const FIXTURES = new URL("../fixtures/", import.meta.url).pathname;
const next = rng(99);
const ENTRIES = [
  { id: "host-x86_64-unknown-linux-gnu-", data: randomBytes(next, 10) },
  { id: "hip-amdgcn-amd-amdhsa--gfx90a:xnack-", data: randomBytes(next, 300) },
  { id: "hip-amdgcn-amd-amdhsa--gfx906", data: randomBytes(next, 200) },
];
const plain = writeBinaryBundle(ENTRIES, 64);
const SEEDS: Record<string, Uint8Array> = {
  binary: plain,
  text: writeTextBundle("//", ENTRIES.map((e) => ({ id: e.id, data: new TextEncoder().encode(`code ${e.id}\n`) }))),
  ccob: transformWith(plain, { codecs }, "compress").output,
  archive: writeArchive([{ name: "a.bc", data: plain, symbols: null }, { name: "b.bc", data: plain, symbols: null }]),
  fat: new Uint8Array(readFileSync(`${FIXTURES}hosts/fat.o`)),
  linked: new Uint8Array(readFileSync(`${FIXTURES}hosts/app`)),
  offload: writeOffloadBinary({ imageKind: 2, offloadKind: 1, strings: [["triple", "amdgcn-amd-amdhsa"], ["arch", "gfx906"]], image: randomBytes(next, 100) }),
};

function mutate(seed: Uint8Array): Uint8Array {
  const bytes = seed.slice();
  const kind = Math.floor(next() * 3);
  if (kind === 0) {
    // Flip a few bytes, mostly in the first 256 (headers).
    for (let i = 0, n = 1 + Math.floor(next() * 4); i < n; i++) {
      const at = next() < 0.8 ? Math.floor(next() * Math.min(256, bytes.length)) : Math.floor(next() * bytes.length);
      bytes[at] = Math.floor(next() * 256);
    }
    return bytes;
  }
  if (kind === 1) return bytes.subarray(0, Math.floor(next() * bytes.length));
  // A large value in an 8-byte field.
  const at = Math.floor(next() * Math.max(1, bytes.length - 8));
  new DataView(bytes.buffer).setBigUint64(at, BigInt(Math.floor(next() * 2 ** 52)), true);
  return bytes;
}

function onlyOurs(run: () => unknown, label: string): void {
  try {
    run();
  } catch (e) {
    if (!(e instanceof OffloadKitError)) throw new Error(`${label}: ${String(e)}`, { cause: e });
    expect(e.message.startsWith("fuzz")).toBe(true);
  }
}

describe.each(Object.keys(SEEDS))("mutated %s inputs", (name) => {
  it("fail only with OffloadKitError naming the input", () => {
    for (let i = 0; i < 150; i++) {
      const bytes = mutate(SEEDS[name]);
      onlyOurs(() => pruneWith(bytes, { keep: ["gfx90a"], codecs, name: "fuzz", allowEmpty: next() < 0.5 }), `${name} #${i} prune`);
      onlyOurs(() => transformWith(bytes, { codecs, name: "fuzz" }, i % 2 === 0 ? "compress" : "decompress"), `${name} #${i} transform`);
      const entry = i % 3 === 0 ? "openmp-amdgcn-amd-amdhsa--gfx906" : ENTRIES[i % ENTRIES.length].id;
      onlyOurs(() => replaceWith(bytes, { entry, payload: randomBytes(next, 50), bundle: i % 4 === 0 ? 0 : undefined, codecs, name: "fuzz" }), `${name} #${i} replace`);
    }
    expect(pruneWith(SEEDS.binary, { keep: ["gfx906"], codecs }).changed).toBe(true);
    expect(replaceWith(SEEDS.binary, { entry: ENTRIES[2].id, payload: new Uint8Array(5), codecs }).replaced).toEqual([""]);
  });
});
