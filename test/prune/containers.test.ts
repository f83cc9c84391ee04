// prune / compress / decompress in memory, container by container (the library API, browser codecs and
// Node's): layouts recovered, what goes and what stays, and the errors that name what and where.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import { parseBinaryBundle, readBinaryBundle, writeBinaryBundle } from "../../src/formats/bundle.js";
import { parseCcobHeader } from "../../src/formats/ccob.js";
import { memberData, readArchive, writeArchive } from "../../src/formats/archive.js";
import { readTextBundle, writeTextBundle } from "../../src/formats/text-bundle.js";
import { parseOffloadBinaries, writeOffloadBinary } from "../../src/formats/offload-binary.js";
import { objectBundleEntries } from "../../src/bundler/object-bundle.js";
import { bytesSource } from "../../src/engine/source.js";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { loadZstd } from "../../src/compress/zstd-wasm.js";
import { compress, decompress, prune, pruneWith, transformWith } from "../../src/prune/index.js";
import { openLinkedElf, readHipFatbinLayout } from "../../src/elf-edit/index.js";
import { recoverAlignment } from "../../src/prune/bundle-file.js";
import { rng, randomBytes } from "../engines.js";

const FIXTURES = new URL("../fixtures/", import.meta.url).pathname;
const HOST = "host-x86_64-unknown-linux-gnu-";
const G90A_P = "hip-amdgcn-amd-amdhsa--gfx90a:xnack+";
const G90A_M = "hip-amdgcn-amd-amdhsa--gfx90a:xnack-";
const G906 = "hip-amdgcn-amd-amdhsa--gfx906";
const G1100 = "hip-amdgcn-amd-amdhsa--gfx1100";

const next = rng(17);
const payload = (n: number) => randomBytes(next, n);
const entries = [
  { id: HOST, data: payload(3) },
  { id: G90A_P, data: payload(5000) },
  { id: G906, data: payload(7001) },
  { id: G90A_M, data: payload(100) },
  { id: G1100, data: payload(33) },
];

await loadZstd();
const codecs = nodeCodecs;

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (e) {
    if (e instanceof OffloadKitError) return e.code;
    throw e;
  }
  return undefined;
}

describe("binary bundles", () => {
  it.each([1, 8, 4096])("keeps the kept entries in order with the file's alignment (%i)", (align) => {
    const bytes = writeBinaryBundle(entries, align);
    const result = pruneWith(bytes, { keep: ["gfx90a"], codecs, name: "b.bundle" });
    const kept = entries.filter((e) => [HOST, G90A_P, G90A_M].includes(e.id));
    expect(result.output).toEqual(writeBinaryBundle(kept, align));
    expect(result.entries.map((e) => [e.id, e.kept, e.host])).toEqual([[HOST, true, true], [G90A_P, true, false], [G906, false, false], [G90A_M, true, false], [G1100, false, false]]);
    expect(result.notes).toEqual([]);
    expect(result.container).toBe("bundle");
  });

  it("recovers the alignment that reproduces the offsets, 1 when no payload is padded", () => {
    const read = readBinaryBundle(writeBinaryBundle(entries, 4096));
    expect(read.kind === "bundle" && recoverAlignment(read.bundle.entries)).toBe(4096);
    const small = readBinaryBundle(writeBinaryBundle(entries, 16));
    expect(small.kind === "bundle" && recoverAlignment(small.bundle.entries)).toBe(16);
    // A 128-byte header (32 + two entries of 24 + ID bytes) and payloads of 64 and 128 bytes: every offset
    // is a multiple of 64 with no gap, as any alignment up to 64 would write it.
    const even = [{ id: HOST, data: payload(64) }, { id: "hip-amdgcn--gfx906", data: payload(128) }];
    const unpadded = readBinaryBundle(writeBinaryBundle(even, 1));
    expect(unpadded.kind === "bundle" && unpadded.bundle.entries.map((e) => e.offset)).toEqual([128, 192]);
    expect(unpadded.kind === "bundle" && recoverAlignment(unpadded.bundle.entries)).toBe(1);
  });

  it("notes a layout the bundler would not write, and still prunes it", () => {
    const bytes = writeBinaryBundle(entries.slice(0, 3), 8);
    // Move the last payload 8 bytes further: no alignment reproduces that.
    const moved = new Uint8Array(bytes.length + 8);
    const parsed = parseBinaryBundle(bytes);
    moved.set(bytes.subarray(0, parsed[2].offset), 0);
    moved.set(bytes.subarray(parsed[2].offset), parsed[2].offset + 8);
    new DataView(moved.buffer).setBigUint64(parsed[2].headerOffset, BigInt(parsed[2].offset + 8), true);
    const result = pruneWith(moved, { drop: ["gfx90a"], codecs, name: "odd" });
    expect(result.notes[0]).toMatch(/odd: its payload offsets match no -bundle-align/);
    expect(parseBinaryBundle(result.output).map((e) => e.id)).toEqual([HOST, G906]);
  });

  it("host entries stay and unchanged bundles come back as they are", () => {
    const bytes = writeBinaryBundle(entries, 4096);
    const result = pruneWith(bytes, { drop: ["gfx942"], codecs });
    expect(result.changed).toBe(false);
    expect(result.output).toBe(bytes);
  });

  it("a bundle left with no device entry is an error naming it, unless allowed", () => {
    const bytes = writeBinaryBundle(entries, 1);
    expect(() => pruneWith(bytes, { keep: ["gfx942"], codecs, name: "lib.bundle" })).toThrow(/lib\.bundle: --keep=gfx942 keeps none of the bundle's device entries/);
    const empty = pruneWith(bytes, { keep: ["gfx942"], codecs, allowEmpty: true });
    expect(parseBinaryBundle(empty.output).map((e) => e.id)).toEqual([HOST]);
  });

  it("a truncated bundle is an error with where it breaks", () => {
    const bytes = writeBinaryBundle(entries, 1);
    let error: OffloadKitError | undefined;
    try {
      pruneWith(bytes.subarray(0, 200), { keep: ["gfx90a"], codecs, name: "cut.bundle" });
    } catch (e) {
      error = e as OffloadKitError;
    }
    expect(error).toBeInstanceOf(OffloadKitError);
    expect(error!.message).toMatch(/^cut\.bundle: (truncated|malformed) bundle header/);
    expect(error!.offset).toBeGreaterThan(0);
  });
});

describe("text bundles", () => {
  it("keeps the comment style and the kept entries", () => {
    const text = entries.map((e) => ({ id: e.id, data: new TextEncoder().encode(`; code for ${e.id}\n`) }));
    const bytes = writeTextBundle("#", text);
    const result = pruneWith(bytes, { keep: ["gfx906", "gfx1100"], codecs });
    expect(result.output).toEqual(writeTextBundle("#", text.filter((e) => [HOST, G906, G1100].includes(e.id))));
    expect(readTextBundle(result.output, "#").entries.map((e) => e.id)).toEqual([HOST, G906, G1100]);
  });
});

describe("compressed bundles", () => {
  it.each([2, 3] as const)("re-encodes with the same version and the level found (v%i)", async (version) => {
    const plain = writeBinaryBundle(entries, 4096);
    const ccob = (await compress(plain, { version, level: 7, codecs })).output;
    expect(parseCcobHeader(ccob).version).toBe(version);
    const result = await prune(ccob, { keep: ["gfx90a"], codecs });
    expect(result.notes).toEqual([]);
    const expected = (await compress(writeBinaryBundle(entries.filter((e) => [HOST, G90A_P, G90A_M].includes(e.id)), 4096), { version, level: 7, codecs })).output;
    expect(result.output).toEqual(expected);
    expect((await decompress(result.output, { codecs })).output).toEqual(writeBinaryBundle(entries.filter((e) => [HOST, G90A_P, G90A_M].includes(e.id)), 4096));
  });

  it("compress leaves a compressed file alone and decompress a plain one", async () => {
    const plain = writeBinaryBundle(entries, 1);
    const ccob = (await compress(plain, { codecs })).output;
    expect(parseCcobHeader(ccob)).toMatchObject({ version: 2, method: 1 });
    expect((await compress(ccob, { codecs })).changed).toBe(false);
    expect((await decompress(plain, { codecs })).changed).toBe(false);
    expect((await decompress(ccob, { codecs })).output).toEqual(plain);
  });

  it("works with the browser codecs (the default)", async () => {
    const plain = writeBinaryBundle(entries, 1);
    const ccob = (await compress(plain)).output;
    const result = await prune(ccob, { drop: ["gfx90a"] });
    expect((await decompress(result.output)).output).toEqual(writeBinaryBundle(entries.filter((e) => ![G90A_P, G90A_M].includes(e.id)), 1));
  });
});

describe("other containers", () => {
  it("fat objects: the kept sections, host object unchanged", () => {
    const fat = new Uint8Array(readFileSync(`${FIXTURES}hosts/fat.o`));
    const result = pruneWith(fat, { keep: ["gfx90a"], codecs, name: "fat.o" });
    expect(result.container).toBe("fat object");
    expect(objectBundleEntries(bytesSource(result.output))!.map((e) => e.id)).toEqual(["hip-amdgcn-amd-amdhsa--gfx90a", "host-x86_64-pc-linux-gnu-"]);
    expect(pruneWith(fat, { drop: ["gfx942"], codecs }).output).toBe(fat);
  });

  it("compress leaves fat objects as -type=o -compress does, and says so", async () => {
    const fat = new Uint8Array(readFileSync(`${FIXTURES}hosts/fat.o`));
    const result = await compress(fat, { codecs, name: "fat.o" });
    expect(result.changed).toBe(false);
    expect(result.notes).toEqual(["fat.o: a fat object's sections stay uncompressed (clang-offload-bundler -type=o ignores -compress)"]);
  });

  it("offload binaries: images dropped, in raw files and in .llvm.offloading", () => {
    const image = (arch: string) => writeOffloadBinary({ imageKind: 2, offloadKind: 1, strings: [["triple", "amdgcn-amd-amdhsa"], ["arch", arch]], image: payload(64) });
    const raw = new Uint8Array([...image("gfx906"), ...image("gfx90a:xnack+"), ...image("gfx1100")]);
    const result = pruneWith(raw, { drop: ["gfx906", "gfx1100"], codecs });
    expect(result.container).toBe("offload binary");
    expect(parseOffloadBinaries(result.output).images.map((i) => i.arch)).toEqual(["gfx90a:xnack+"]);
    const omp = new Uint8Array(readFileSync(`${FIXTURES}hosts/omp.o`));
    expect(codeOf(() => pruneWith(omp, { keep: ["gfx90a"], codecs }))).toBe("PRUNE_EMPTY");
    expect(pruneWith(omp, { keep: ["gfx906"], codecs }).changed).toBe(false);
  });

  it("archives: each bundle member pruned, the symbol table rebuilt", () => {
    const a = writeBinaryBundle(entries, 4096);
    const b = writeBinaryBundle([entries[0], entries[2]], 4096);
    const archive = writeArchive([
      { name: "a.bc", data: a, symbols: null },
      { name: "fat.o", data: new Uint8Array(readFileSync(`${FIXTURES}hosts/fat.o`)), symbols: null },
      { name: "b.bc", data: b, symbols: null },
    ]);
    const result = pruneWith(archive, { keep: ["gfx906"], codecs });
    const index = readArchive(result.output);
    expect(index.members.map((m) => m.name)).toEqual(["a.bc", "fat.o", "b.bc"]);
    expect(parseBinaryBundle(memberData(result.output, index.members[0])).map((e) => e.id)).toEqual([HOST, G906]);
    expect(memberData(result.output, index.members[2])).toEqual(b);
    expect(index.symbolTable).toBeDefined();
    expect(result.entries.filter((e) => e.where === "member fat.o").map((e) => e.kept)).toEqual([true, false, true]);
  });

  it("linked ELF files: every fat binary pruned (plain and CCOB), packed by the ELF editor", () => {
    const app = new Uint8Array(readFileSync(`${FIXTURES}hosts/app`));
    const result = pruneWith(app, { keep: ["gfx90a"], codecs, name: "app" });
    expect(result.container).toBe("linked ELF");
    expect(result.outputSize).toBeLessThan(app.length);
    expect(result.entries.filter((e) => !e.kept).map((e) => [e.where, e.id])).toEqual(
      [0, 1, 2].map((i) => [`fat binary ${i}`, "hipv4-amdgcn-amd-amdhsa--gfx906"]));
    // Decompressed in memory, every fat binary is a plain bundle of the host and gfx90a entries.
    const plain = transformWith(result.output, { codecs, name: "app" }, "decompress").output;
    const layout = readHipFatbinLayout(openLinkedElf(bytesSource(plain)));
    expect(layout.bundles.map((b) => b.format)).toEqual(["bundle", "bundle", "bundle"]);
    for (const b of layout.bundles) {
      const read = readBinaryBundle(b.source);
      expect(read.kind === "bundle" ? read.bundle.entries.map((e) => e.id) : []).toEqual(["host-x86_64-unknown-linux--", "hipv4-amdgcn-amd-amdhsa--gfx90a"]);
    }
    // A selection keeping everything leaves the file as it is.
    expect(pruneWith(app, { drop: ["gfx1030"], codecs, name: "app" }).changed).toBe(false);
  });

  it("a file holding no offload code is an error naming it", () => {
    expect(() => pruneWith(new TextEncoder().encode("plain text\n"), { keep: ["gfx90a"], codecs, name: "notes.txt" })).toThrow(/^notes\.txt: holds nothing offload-kit can edit/);
    expect(codeOf(() => pruneWith(new Uint8Array(readFileSync(`${FIXTURES}objcopy/x86_64-linux-gnu.host.o`)), { keep: ["gfx90a"], codecs }))).toBe("NO_OFFLOAD_CONTENT");
  });
});
