// Differential property test (STYLE habit 8) for the locator: the clang-19 host fixtures, synthetic ELF files
// with bundles, compressed bundles and offload binaries back to back, archives of them, and random mutations
// of all of these go through both engines (small windows, so searches and headers cross window edges).
// Results must be identical, problems included; the locator never throws for what it reads, and the entries
// it reports always lie inside the input (or inside the decompressed bundle they came out of).
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { compressBundle } from "../../src/bundler/api.js";
import { writeArchive } from "../../src/formats/archive.js";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { writeOffloadBinary } from "../../src/formats/offload-binary.js";
import { writeTextBundle } from "../../src/formats/text-bundle.js";
import { locate } from "../../src/inspect/locate.js";
import type { LocateOptions, Location } from "../../src/inspect/locate.js";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { decompressMember } from "../../src/compress/node/decompress.js";
import { makeEngine, randomBytes, rng, setU64 } from "../engines.js";
import { buildElf64, fatbin } from "../inspect/elf-builder.js";

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/hosts/${name}`, import.meta.url)));
const IDS = ["host-x86_64-unknown-linux-gnu-", "hip-amdgcn-amd-amdhsa--gfx906", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", "openmp-amdgcn-amd-amdhsa--gfx1030"];
const SHT_LLVM_OFFLOADING = 0x6fff4c0b;
// Decompressed members of mutated inputs stay small: a mutated declared size is refused before decoding.
const options: LocateOptions = { openCompressed: (blob, member) => decompressMember(blob, member, { maxDecompressedSize: 1 << 20 }) };

function randomBundle(next: () => number): Uint8Array {
  const ids = IDS.filter(() => next() < 0.7);
  return writeBinaryBundle(ids.map((id) => ({ id, data: randomBytes(next, Math.floor(next() * 3000)) })), [1, 8, 4096][Math.floor(next() * 3)]);
}

function mutate(next: () => number, input: Uint8Array): Uint8Array {
  const bytes = input.slice();
  const kind = Math.floor(next() * 4);
  if (kind === 0) return bytes.subarray(0, Math.floor(next() * bytes.length));
  if (kind === 1) {
    for (let n = 1 + Math.floor(next() * 6); n > 0; n--) bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 256);
    return bytes;
  }
  // A u64 somewhere (ELF header fields, section headers, bundle header fields) set to an awkward value.
  const at = Math.floor(next() * Math.max(1, bytes.length - 8));
  const values = [0n, 1n, 2n ** 64n - 1n, 2n ** 53n, BigInt(bytes.length), BigInt(bytes.length) + 1n, BigInt(Math.floor(next() * 5000))];
  setU64(bytes, at, values[Math.floor(next() * values.length)]!);
  return bytes;
}

/** What a location says, with every entry's bytes (hashed by length and a checksum) read through the callbacks. */
function run(bytes: Uint8Array, kind: "wasm" | "ts"): unknown {
  const seen: string[] = [];
  let location: Location;
  try {
    location = locate(bytes, {
      ...options,
      engine: makeEngine(kind, 1 << 13),
      onBundle: (bundle, contents) => {
        for (const e of bundle.entries) {
          expect(e.offset + e.size).toBeLessThanOrEqual(contents.size);
          const data = new Uint8Array(e.size);
          contents.read(data, e.offset);
          seen.push(`${bundle.index}:${e.id}:${data.reduce((a, b) => (a * 31 + b) >>> 0, 0)}`);
        }
      },
    });
  } catch (e) {
    return { threw: String(e) };
  }
  return { location, seen };
}

let ccob: Uint8Array;
beforeAll(async () => {
  ccob = await compressBundle(writeBinaryBundle([{ id: IDS[1]!, data: new TextEncoder().encode("compressed payload") }], 4096), { codecs: nodeCodecs });
});

function corpus(next: () => number): Uint8Array[] {
  const offload = writeOffloadBinary({ imageKind: 1, offloadKind: 1, strings: [["triple", "amdgcn-amd-amdhsa"], ["arch", "gfx906"]], image: randomBytes(next, 200) });
  const section = fatbin([randomBundle(next), ccob, randomBundle(next), randomBundle(next)]).bytes;
  const elf = buildElf64([
    { name: ".text", data: randomBytes(next, 700) },
    { name: ".hip_fatbin", data: section, align: 4096 },
    { name: ".llvm.offloading", data: offload, type: SHT_LLVM_OFFLOADING, align: 8 },
  ]);
  const text = writeTextBundle("//", [{ id: IDS[0]!, data: new TextEncoder().encode("host\n") }, { id: IDS[1]!, data: new TextEncoder().encode("dev") }]);
  const archive = writeArchive([
    { name: "a.o", data: elf, symbols: null },
    { name: "b.bc", data: randomBundle(next), symbols: null },
    { name: "c.ll", data: text, symbols: null },
    { name: "d.ccob", data: ccob, symbols: null },
  ]);
  const loose = new Uint8Array(20000);
  loose.set(randomBundle(next).subarray(0, 9000), 77);
  loose.set(offload, 12000);
  return [elf, archive, loose, fixture("app"), fixture("fat.o"), fixture("libboth.a")];
}

describe("locate, Wasm and TypeScript engines, on valid and mutated inputs", () => {
  it("gives identical results and never throws", () => {
    const next = rng(909);
    let inputs = 0;
    const codes = new Set<string>();
    for (let round = 0; round < 40; round++) {
      for (const valid of corpus(next)) {
        for (const bytes of [valid, ...Array.from({ length: 6 }, () => mutate(next, valid))]) {
          const wasm = run(bytes, "wasm");
          expect(wasm).not.toHaveProperty("threw");
          expect(run(bytes, "ts")).toEqual(wasm);
          for (const p of (wasm as { location: Location }).location.problems) codes.add(p.code);
          inputs++;
        }
      }
    }
    expect(inputs).toBe(40 * 6 * 7);
    // The mutations reach the readers' checks, not just the search.
    expect(codes.size).toBeGreaterThan(8);
  });
});
