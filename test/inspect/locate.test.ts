// The locator (src/inspect/locate.ts) on both engines: ELF files by their section tables, files without
// sections walked whole, archives by member, compressed bundles opened, and how little it reads.
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { compressBundle } from "../../src/bundler/api.js";
import type { ByteSource } from "../../src/engine/source.js";
import { writeArchive } from "../../src/formats/archive.js";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { OFFLOAD_BINARY_MAGIC_BYTES, writeOffloadBinary } from "../../src/formats/offload-binary.js";
import { writeTextBundle } from "../../src/formats/text-bundle.js";
import { locate } from "../../src/inspect/locate.js";
import type { LocateOptions, Location } from "../../src/inspect/locate.js";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { decompressMember } from "../../src/compress/node/decompress.js";
import { ENGINE_KINDS, makeEngine, rng, randomBytes } from "../engines.js";
import { buildElf64, fatbin } from "./elf-builder.js";

const HOSTS = new URL("../fixtures/hosts/", import.meta.url);
const fixture = (name: string) => new Uint8Array(readFileSync(new URL(name, HOSTS)));
const enc = (s: string) => new TextEncoder().encode(s);
const HOST = "host-x86_64-unknown-linux--";
const G906 = "hipv4-amdgcn-amd-amdhsa--gfx906";
const G90A = "hipv4-amdgcn-amd-amdhsa--gfx90a";
const SHT_LLVM_OFFLOADING = 0x6fff4c0b;

/** A source over bytes that hides them (so every byte is read through `read`) and counts what is read. */
function countingSource(bytes: Uint8Array): ByteSource & { readonly stats: { bytes: number; reads: number } } {
  const stats = { bytes: 0, reads: 0 };
  return {
    size: bytes.length,
    stats,
    read(dest, position) {
      const n = Math.max(0, Math.min(dest.length, bytes.length - position));
      dest.set(bytes.subarray(position, position + n));
      stats.bytes += n;
      stats.reads++;
      return n;
    },
  };
}

const decompress: LocateOptions["openCompressed"] = (input, member) => decompressMember(input, member);

function entryBytes(location: Location, source: Uint8Array): string[][] {
  return location.bundles.map((b) => b.entries.map((e) => `${e.id}=${new TextDecoder().decode(source.subarray(e.offset, e.offset + e.size))}`));
}

let ccob: Uint8Array;
const inner = writeBinaryBundle([{ id: HOST, data: new Uint8Array(0) }, { id: G906, data: enc("packed gfx906") }], 4096);
beforeAll(async () => {
  ccob = await compressBundle(inner, { codecs: nodeCodecs });
});

describe.each(ENGINE_KINDS)("locate (%s engine)", (kind) => {
  const engine = makeEngine(kind, 1 << 16);

  it("finds the bundles of a .hip_fatbin section from the section table, reading a small fraction of the file", () => {
    const next = rng(7);
    const bundles = Array.from({ length: 40 }, (_, i) => writeBinaryBundle([
      { id: HOST, data: new Uint8Array(0) },
      { id: G906, data: randomBytes(next, 100_000 + i) },
      { id: G90A, data: randomBytes(next, 150_000 - i) },
    ], 4096));
    const section = fatbin(bundles);
    // A stray magic outside the offload sections is not looked at.
    const text = randomBytes(next, 1 << 20);
    text.set(enc("__CLANG_OFFLOAD_BUNDLE__"), 5000);
    const elf = buildElf64([{ name: ".text", data: text, align: 16 }, { name: ".hip_fatbin", data: section.bytes, align: 4096 }]);
    const source = countingSource(elf);
    const found = locate(source, { engine });
    expect(found.container).toBe("elf");
    expect(found.problems).toEqual([]);
    expect(found.bundles).toHaveLength(40);
    expect(found.searched).toEqual([{ offset: found.bundles[0]!.offset, size: section.bytes.length, how: "section", section: ".hip_fatbin" }]);
    expect(found.bundles.map((b) => b.offset - found.bundles[0]!.offset)).toEqual(section.offsets);
    expect(found.bundles.every((b, i) => b.index === i && b.section === ".hip_fatbin" && b.align === 4096)).toBe(true);
    expect(found.bundles[7]!.entries.map((e) => [e.id, e.size])).toEqual([[HOST, 0], [G906, 100_007], [G90A, 149_993]]);
    // 40 headers and 40 short searches: well under a megabyte of a 11 MB file.
    expect(elf.length).toBeGreaterThan(10_000_000);
    expect(source.stats.bytes).toBeLessThan(700_000);
  });

  it("walks a file without sections whole: padding, bundles across window boundaries, offload binaries", () => {
    const a = writeBinaryBundle([{ id: HOST, data: enc("H") }, { id: G906, data: enc("D906") }], 8);
    const b = writeBinaryBundle([{ id: G90A, data: enc("D90A!") }]);
    const binary = writeOffloadBinary({ imageKind: 1, offloadKind: 1, strings: [["triple", "amdgcn-amd-amdhsa"], ["arch", "gfx906"]], image: enc("IMG") });
    const blob = new Uint8Array(3 << 16);
    // Straddling the 64 KiB window and the first 4 KiB stage.
    const at = [4090, (1 << 16) - 10, (2 << 16) - 2];
    blob.set(a, at[0]);
    blob.set(b, at[1]);
    blob.set(binary, at[2]);
    const found = locate(countingSource(blob), { engine });
    expect(found.container).toBe("other");
    expect(found.searched).toEqual([{ offset: 0, size: blob.length, how: "whole" }]);
    expect(found.bundles.map((x) => x.offset)).toEqual([at[0], at[1]]);
    expect(entryBytes(found, blob)).toEqual([[`${HOST}=H`, `${G906}=D906`], [`${G90A}=D90A!`]]);
    expect(found.offloadBinaries).toHaveLength(1);
    expect(found.offloadBinaries[0]!.offset).toBe(at[2]);
    expect(new TextDecoder().decode(blob.subarray(found.offloadBinaries[0]!.images[0]!.offset, found.offloadBinaries[0]!.images[0]!.offset + 3))).toBe("IMG");
  });

  it("reports a damaged bundle in a section and goes on to the next", () => {
    const good = writeBinaryBundle([{ id: G906, data: enc("ok") }], 4096);
    const bad = writeBinaryBundle([{ id: G906, data: enc("cut") }], 4096);
    new DataView(bad.buffer).setBigUint64(40, 1n << 40n, true); // entry 0's size, far past the end
    const section = fatbin([bad, good]);
    const elf = buildElf64([{ name: ".hip_fatbin", data: section.bytes, align: 4096 }]);
    const found = locate(elf, { engine });
    expect(found.bundles).toHaveLength(1);
    expect(found.problems).toHaveLength(1);
    expect(found.problems[0]!.code).toBe("BUNDLE_PAYLOAD_OUT_OF_BOUNDS");
    expect(found.bundles[0]!.offset - found.problems[0]!.offset).toBe(section.offsets[1]);
  });

  it("opens compressed bundles among plain ones, and says so without a decompressor", () => {
    const plain = writeBinaryBundle([{ id: G90A, data: enc("plain") }], 4096);
    const section = fatbin([plain, ccob, plain]);
    const elf = buildElf64([{ name: ".hip_fatbin", data: section.bytes, align: 4096 }]);
    const seen: string[] = [];
    const found = locate(elf, {
      engine,
      openCompressed: decompress,
      onBundle: (bundle, contents) => {
        for (const e of bundle.entries) {
          const bytes = new Uint8Array(e.size);
          contents.read(bytes, e.offset);
          seen.push(`${bundle.index}:${e.id}=${new TextDecoder().decode(bytes)}`);
        }
      },
    });
    expect(found.problems).toEqual([]);
    expect(found.bundles.map((b) => b.compressed !== undefined)).toEqual([false, true, false]);
    const c = found.bundles[1]!.compressed!;
    expect([c.size, c.version, c.method, c.decompressedSize]).toEqual([ccob.length, 2, "zstd", inner.length]);
    expect(c.offset - found.bundles[0]!.offset).toBe(section.offsets[1]);
    expect(seen).toEqual([`0:${G90A}=plain`, `1:${HOST}=`, `1:${G906}=packed gfx906`, `2:${G90A}=plain`]);
    const without = locate(elf, { engine });
    expect(without.bundles).toHaveLength(2);
    expect(without.problems.map((p) => p.code)).toEqual(["CCOB_NO_DECOMPRESSOR"]);
  });

  it("reads .llvm.offloading by type; an ELF file with a section table but no offload section holds no device code", () => {
    const binary = writeOffloadBinary({ imageKind: 1, offloadKind: 1, strings: [["triple", "amdgcn-amd-amdhsa"], ["arch", "gfx90a"]], image: enc("OMP") });
    const omp = locate(buildElf64([{ name: ".odd", data: binary, type: SHT_LLVM_OFFLOADING, align: 8 }], { type: 1 }), { engine });
    expect(omp.offloadBinaries.map((r) => [r.section, r.images.map((i) => i.arch)])).toEqual([[".odd", ["gfx90a"]]]);
    const embedded = writeBinaryBundle([{ id: G906, data: enc("in rodata") }]);
    const rodata = new Uint8Array(300);
    rodata.set(embedded, 100);
    const plain = buildElf64([{ name: ".rodata", data: rodata, align: 16 }]);
    const found = locate(plain, { engine });
    // Issue 19: magics in other sections are data (libamdhip64's .rodata holds the bundle magic as a
    // string), so neither a find nor a problem; nothing but the section table is read.
    expect(found.container).toBe("elf");
    expect(found.searched).toEqual([]);
    expect(found.bundles).toEqual([]);
    expect(found.problems).toEqual([]);
    const stray = new Uint8Array(64);
    stray.set(enc("__CLANG_OFFLOAD_BUNDLE__\0vector::reserve"), 8);
    stray.set(OFFLOAD_BINARY_MAGIC_BYTES, 48);
    const library = locate(buildElf64([{ name: ".rodata", data: stray }, { name: ".text", data: stray }]), { engine });
    expect([library.bundles, library.offloadBinaries, library.problems, library.searched]).toEqual([[], [], [], []]);
    // Without a section table (e_shoff 0, as after sstrip) the file is still walked whole.
    const stripped = plain.slice();
    new DataView(stripped.buffer).setBigUint64(40, 0n, true);
    new DataView(stripped.buffer).setUint16(60, 0, true);
    const whole = locate(stripped, { engine });
    expect(whole.searched).toEqual([{ offset: 0, size: stripped.length, how: "whole" }]);
    expect(entryBytes(whole, stripped)).toEqual([[`${G906}=in rodata`]]);
  });

  it("reads archives member by member: bundles, compressed and text bundles, fat objects", () => {
    const fat = buildElf64([
      { name: `__CLANG_OFFLOAD_BUNDLE__${G906}`, data: enc("obj906") },
      { name: "__CLANG_OFFLOAD_BUNDLE__host-x86_64-unknown-linux-gnu-", data: Uint8Array.of(0) },
    ], { type: 1 });
    const archive = writeArchive([
      { name: "plain.bc", data: writeBinaryBundle([{ id: G90A, data: enc("member") }]), symbols: null },
      { name: "packed.bc", data: ccob, symbols: null },
      { name: "text.ll", data: writeTextBundle(";", [{ id: G906, data: enc("define void @f()\n") }]), symbols: null },
      { name: "fat.o", data: fat, symbols: null },
      { name: "notes.txt", data: enc("__CLANG_OFFLOAD_BUNDLE__ mentioned in passing"), symbols: null },
    ]);
    const found = locate(archive, { engine, openCompressed: decompress });
    expect(found.container).toBe("archive");
    expect(found.bundles.map((b) => [b.member, b.format, b.compressed !== undefined])).toEqual([
      ["plain.bc", "binary", false], ["packed.bc", "binary", true], ["text.ll", "text", false], ["fat.o", "object", false],
    ]);
    expect(entryBytes(found, archive)[3]).toEqual([`${G906}=obj906`, "host-x86_64-unknown-linux-gnu-=\0"]);
    expect(entryBytes(found, archive)[2]).toEqual([`${G906}=define void @f()\n`]);
    // The stray magic in notes.txt does not start a readable header.
    expect(found.problems.map((p) => p.code)).toEqual(["BUNDLE_SIZE_TRUNCATED"]);
  });

  it("keeps LLVM's reading of a file of compressed bundles: walked by size, trailing bytes reported", () => {
    const blob = new Uint8Array(ccob.length * 2 + 8 + 5);
    blob.set(ccob, 0);
    blob.set(ccob, ccob.length + 8);
    blob.set(enc("junk!"), ccob.length * 2 + 8);
    const found = locate(blob, { engine, openCompressed: decompress });
    expect(found.bundles.map((b) => b.compressed!.offset)).toEqual([0, ccob.length + 8]);
    expect(found.problems.map((p) => [p.code, p.offset])).toEqual([["CCOB_TRAILING", ccob.length * 2 + 8]]);
  });

  describe("the clang-19 fixtures (test/fixtures/hosts)", () => {
    it("app: two bundles and a compressed one in .hip_fatbin", () => {
      const app = fixture("app");
      const found = locate(app, { engine, openCompressed: decompress });
      expect(found.problems).toEqual([]);
      expect(found.bundles.map((b) => [b.index, b.section, b.compressed?.method, b.entries.map((e) => e.id)])).toEqual([
        [0, ".hip_fatbin", undefined, [HOST, G906, G90A]],
        [1, ".hip_fatbin", undefined, [HOST, G906, G90A]],
        [2, ".hip_fatbin", "zstd", [HOST, G906, G90A]],
      ]);
    });

    it("fat.o: one fat object, no problems from the section names that spell the magic", () => {
      const found = locate(fixture("fat.o"), { engine });
      expect(found.problems).toEqual([]);
      expect(found.bundles.map((b) => [b.format, b.entries.map((e) => [e.id, e.size])])).toEqual([
        ["object", [["hip-amdgcn-amd-amdhsa--gfx906", 3620], ["hip-amdgcn-amd-amdhsa--gfx90a", 3824], ["host-x86_64-pc-linux-gnu-", 1]]],
      ]);
    });

    it("omp.o and libboth.a: offload binaries in .llvm.offloading, also inside an archive", () => {
      const omp = locate(fixture("omp.o"), { engine });
      expect(omp.bundles).toEqual([]);
      expect(omp.offloadBinaries.map((r) => [r.section, r.images.map((i) => `${i.triple}/${i.arch}`)])).toEqual([[".llvm.offloading", ["amdgcn-amd-amdhsa/gfx906"]]]);
      const lib = locate(fixture("libboth.a"), { engine });
      expect(lib.problems).toEqual([]);
      expect(lib.bundles.map((b) => [b.member, b.format])).toEqual([["fat.o", "object"]]);
      expect(lib.offloadBinaries.map((r) => [r.member, r.section])).toEqual([["omp.o", ".llvm.offloading"]]);
    });
  });
});

describe("locate callbacks", () => {
  it("lets what onBundle throws propagate (it is the caller's, not a problem of the input)", () => {
    const bundle = writeBinaryBundle([{ id: G906, data: enc("x") }]);
    expect(() => locate(bundle, { onBundle: () => { throw new Error("stop"); } })).toThrow("stop");
  });
});
