// `compress` / `decompress` of NVIDIA fatbin entries, and edits of objects holding several containers, on nvcc
// 13 builds (test/fixtures/nv-prune/, make-nv-prune-fixtures.sh): one compile's fatbin stored plain, as LZ4
// (`--compress-mode=speed -Xfatbin -compress-all`) and as zstd (`-Xfatbin -compress-all`); libraries in each
// form; `ld -r` of two `nvcc -c` objects and of two `-rdc` objects. Judged by our parser and decoders, by
// nvcc's own uncompressed output (byte for byte), by src/verify, and where fetched by NVIDIA's cuobjdump 12.4
// (listings, and the cubins and PTX `-xelf all -xptx all` writes, byte for byte); where nvcc 13 is installed,
// pruned objects are linked by it and the program's fatbin listed.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeLz4Block } from "../../src/compress/lz4-block.js";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { openLinkedElf, sectionBytes } from "../../src/elf-edit/elf64.js";
import { bytesSource } from "../../src/engine/source.js";
import { OffloadKitError } from "../../src/engine/errors.js";
import { NV_FLAG_LZ4, NV_FLAG_ZSTD, nvEntryContents, parseNvFatbinContainers } from "../../src/formats/nv-fatbin.js";
import type { NvFatbinEntry } from "../../src/formats/nv-fatbin.js";
import { pruneWith, transformWith } from "../../src/prune/index.js";
import { readElfObject } from "../../src/objcopy/index.js";
import { verifySource } from "../../src/verify/index.js";
import { HANG_MS } from "../limits.js";
import { nativeTool, runNative } from "../native.js";

const FIXTURES = new URL("../fixtures/nv-prune/", import.meta.url).pathname;
const NV = new URL("../fixtures/nv/", import.meta.url).pathname;
const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;
const NVCC = "/usr/local/cuda-13.0/bin/nvcc";
const fixture = (name: string, dir = FIXTURES): Uint8Array => new Uint8Array(readFileSync(join(dir, name)));
const zstd = (frame: Uint8Array, capacity: number) => nodeCodecs.zstdDecompressFrame(frame, capacity);

function transform(operation: "compress" | "decompress", bytes: Uint8Array): Uint8Array {
  return transformWith(bytes, { codecs: nodeCodecs, name: "input" }, operation).output;
}

/** The `.nv_fatbin` (or, for an object, a named section) bytes of an ELF file. */
function sectionOf(bytes: Uint8Array, name = ".nv_fatbin"): Uint8Array {
  if (bytes[16] === 1) return readElfObject(bytes).sections.find((s) => s.name === name)!.data;
  const elf = openLinkedElf(bytesSource(bytes));
  return sectionBytes(elf, elf.sections.find((s) => s.name === name)!);
}

function entriesOf(fatbin: Uint8Array): NvFatbinEntry[][] {
  return parseNvFatbinContainers(fatbin).containers.map((c) => [...c.entries]);
}

/** What each entry stands for, decoded whole (PTX with its NUL), per container. */
function contentsOf(fatbin: Uint8Array): { arch: string; hex: string }[][] {
  return entriesOf(fatbin).map((c) => c.map((e) => ({ arch: e.archName, hex: Buffer.from(nvEntryContents(e, zstd)).toString("hex") })));
}

describe("decompress: entries stored as nvcc --compress-mode=none stores them", () => {
  it("an LZ4 and a zstd fatbin of one compile decompress to nvcc's uncompressed fatbin, byte for byte", () => {
    const none = fixture("nvk.none.fatbin");
    for (const name of ["nvk.lz4.fatbin", "nvk.zstd.fatbin"]) {
      const input = fixture(name);
      const flags = entriesOf(input).flat().map((e) => e.compression);
      expect(flags.every((c) => c === (name.includes("lz4") ? "lz4" : "zstd"))).toBe(true);
      expect(Buffer.compare(transform("decompress", input), none)).toBe(0);
    }
  });

  it("an object's .nv_fatbin decompresses to the one nvcc writes with --compress-mode=none", () => {
    const out = transform("decompress", fixture("kernels.zstd.o", NV));
    expect(Buffer.compare(sectionOf(out), sectionOf(fixture("kernels.plain.o", NV)))).toBe(0);
    expect(verifySource(bytesSource(out)).findings).toEqual([]);
  });

  it("a library's containers (LZ4 and zstd builds) decompress to the same plain entries", () => {
    const lz4 = transform("decompress", fixture("libnvk-lz4.so"));
    const z = transform("decompress", fixture("libnvk-z.so"));
    for (const out of [lz4, z]) {
      expect(verifySource(bytesSource(out)).findings).toEqual([]);
      expect(entriesOf(sectionOf(out)).flat().every((e) => e.compression === "none" && e.uncompressedSize === 0 && e.compressedSize === 0)).toBe(true);
    }
    expect(Buffer.compare(sectionOf(lz4), sectionOf(z))).toBe(0);
    expect(contentsOf(sectionOf(lz4))).toEqual(contentsOf(sectionOf(fixture("libnvk-lz4.so"))));
  });

  it("leaves a file without compressed entries as it is", () => {
    const none = fixture("nvk.none.fatbin");
    expect(transformWith(none, { codecs: nodeCodecs }, "decompress").changed).toBe(false);
    expect(transformWith(fixture("libnvk-lz4.so"), { codecs: nodeCodecs }, "compress").changed).toBe(false);
  });
});

describe("compress: LZ4 entries with the header nvcc 13 writes for them", () => {
  it("stores every entry as one LZ4 block, header fields as nvcc's LZ4 build sets them, and decompresses back to the input", () => {
    const none = fixture("nvk.none.fatbin");
    const out = transform("compress", none);
    const ours = entriesOf(out).flat();
    const nvcc = entriesOf(fixture("nvk.lz4.fatbin")).flat();
    expect(ours.map((e) => e.archName)).toEqual(nvcc.map((e) => e.archName));
    ours.forEach((e, i) => {
      const theirs = nvcc[i]!;
      expect(e.compression).toBe("lz4");
      expect(e.flags).toBe(theirs.flags);
      expect(e.flags & (NV_FLAG_LZ4 | NV_FLAG_ZSTD)).toBe(NV_FLAG_LZ4);
      expect(e.uncompressedSize).toBe(theirs.uncompressedSize);
      // The padded size is the block's size rounded up to 8, with zeros after it, as nvcc pads its blocks.
      expect(e.paddedSize).toBe(Math.ceil(e.compressedSize / 8) * 8);
      expect(theirs.paddedSize).toBe(Math.ceil(theirs.compressedSize / 8) * 8);
      expect(e.rawPayload.subarray(e.compressedSize).every((b) => b === 0)).toBe(true);
      // Every header byte but padded size (8..15), compressed size (16..19) and the flags and uncompressed size nvcc also sets is the input's.
      const header = (h: Uint8Array) => [...h.subarray(0, 8), ...h.subarray(20, 40), ...h.subarray(48, 56), ...h.subarray(64)];
      expect(header(e.rawHeader)).toEqual(header(theirs.rawHeader));
      // Our block decodes to what nvcc's block decodes to.
      expect(Buffer.compare(decodeLz4Block(e.rawPayload.subarray(0, e.compressedSize), e.uncompressedSize), decodeLz4Block(theirs.rawPayload.subarray(0, theirs.compressedSize), theirs.uncompressedSize))).toBe(0);
    });
    expect(Buffer.compare(transform("decompress", out), none)).toBe(0);
  });

  it("compresses a library, an executable, an object and an archive's members; decompressing gives the entries back", () => {
    for (const [name, dir] of [["libnvk.so", FIXTURES], ["nvapp", FIXTURES], ["kernels.plain.o", NV], ["nvk-r.o", FIXTURES], ["nvk-rdc-r.o", FIXTURES]] as const) {
      // nvcc 13 stores -rdc code zstd-compressed already: that object is compressed from its decompressed form.
      const input = name === "nvk-rdc-r.o" ? transform("decompress", fixture(name, dir)) : fixture(name, dir);
      const out = transform("compress", input);
      expect(out.length, name).toBeLessThan(input.length);
      expect(verifySource(bytesSource(out)).findings, name).toEqual([]);
      const section = name === "nvk-rdc-r.o" ? "__nv_relfatbin" : ".nv_fatbin";
      const entries = entriesOf(sectionOf(out, section)).flat();
      expect(entries.filter((e) => e.compression === "none").length, name).toBe(0);
      expect(contentsOf(sectionOf(out, section)), name).toEqual(contentsOf(sectionOf(input, section)));
      expect(contentsOf(sectionOf(transform("decompress", out), section)), name).toEqual(contentsOf(sectionOf(input, section)));
    }
    const archive = fixture("libkernels.a", NV);
    const plain = transform("decompress", archive);
    expect(plain.length).toBeGreaterThan(archive.length);
    expect(transform("compress", plain).length).toBeLessThan(plain.length);
  });

  it("src/verify decodes every LZ4 entry: a damaged block is a finding", () => {
    const out = transform("compress", fixture("libnvk.so"));
    expect(verifySource(bytesSource(out)).findings).toEqual([]);
    const elf = openLinkedElf(bytesSource(out));
    const section = elf.sections.find((s) => s.name === ".nv_fatbin")!;
    const entry = parseNvFatbinContainers(sectionOf(out)).containers[1]!.entries[0]!;
    const damaged = out.slice();
    // The header states one byte less of block: its last literal is lost, so it decodes one byte short.
    new DataView(damaged.buffer).setUint32(section.offset + entry.offset + 16, entry.compressedSize - 1, true);
    const findings = verifySource(bytesSource(damaged)).findings;
    expect(findings.map((f) => f.code)).toEqual(["NV_ENTRY_UNDECODABLE"]);
    expect(findings[0]!.message).toMatch(/fat binary 1's sm_75 entry \(LZ4, \d+ bytes\) does not decode/);
  });

  it("leaves an entry plain when LZ4 would not make it smaller", () => {
    const none = fixture("nvk.none.fatbin");
    // Replace the PTX text (the last entry) with bytes that do not repeat: LZ4 can only add to them.
    const [container] = parseNvFatbinContainers(none).containers;
    const ptx = container!.entries[container!.entries.length - 1]!;
    const noise = none.slice();
    let state = 12345;
    for (let i = 0; i < ptx.paddedSize - 8; i++) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      noise[ptx.payloadOffset + i] = 1 + (state >>> 24) % 255;
    }
    noise.fill(0, ptx.payloadOffset + ptx.paddedSize - 8, ptx.payloadOffset + ptx.paddedSize);
    const entries = entriesOf(transform("compress", noise)).flat();
    expect(entries.map((e) => e.compression)).toEqual(["lz4", "lz4", "lz4", "none"]);
  });
});

describe("objects with several containers (ld -r of nvcc -c objects, and of -rdc objects)", () => {
  const starts = (bytes: Uint8Array, section: string) => parseNvFatbinContainers(sectionOf(bytes, section)).containers.map((c) => c.offset);
  /** Where the object's RELA entries against the section, and its symbols in it, point. */
  function references(bytes: Uint8Array, section: string): number[] {
    const obj = readElfObject(bytes);
    const index = obj.sections.find((s) => s.name === section)!.inputIndex;
    const values = new Map<number, bigint>();
    const targets: number[] = [];
    for (const sym of obj.symbols) {
      if (sym.section !== index) continue;
      const value = new DataView(sym.raw.buffer, sym.raw.byteOffset, sym.raw.byteLength).getBigUint64(8, true);
      values.set(sym.index, value);
      if (sym.name !== "") targets.push(Number(value));
    }
    for (const rel of obj.sections.filter((s) => s.type === 4)) {
      const view = new DataView(rel.data.buffer, rel.data.byteOffset, rel.data.byteLength);
      for (let at = 0; at + 24 <= rel.data.length; at += 24) {
        const value = values.get(Number(view.getBigUint64(at + 8, true) >> 32n));
        if (value !== undefined) targets.push(Number(value + view.getBigInt64(at + 16, true)));
      }
    }
    return targets.sort((a, b) => a - b);
  }

  it.each([["nvk-r.o", ".nv_fatbin"], ["nvk-rdc-r.o", "__nv_relfatbin"]])("%s: each container pruned, every relocation and symbol moved to its container's new start", (name, section) => {
    const input = fixture(name);
    expect(starts(input, section)).toHaveLength(2);
    expect(starts(input, section)[1]).toBeGreaterThan(0);
    const result = pruneWith(input, { keep: ["sm_90"], dropPtx: true, codecs: nodeCodecs, name });
    const out = result.output;
    expect(entriesOf(sectionOf(out, section)).map((c) => c.map((e) => e.archName))).toEqual([["sm_90"], ["sm_90"]]);
    // Both containers are referenced before and after, at their starts; the second moved.
    const before = references(input, section);
    const after = references(out, section);
    expect(new Set(before)).toEqual(new Set(starts(input, section)));
    expect(new Set(after)).toEqual(new Set(starts(out, section)));
    expect(starts(out, section)[1]).toBeLessThan(starts(input, section)[1]!);
    expect(verifySource(bytesSource(out)).findings).toEqual([]);
    // The kept cubins are the input's, byte for byte.
    const kept = (bytes: Uint8Array) => contentsOf(sectionOf(bytes, section)).map((c) => c.filter((e) => e.arch === "sm_90"));
    expect(kept(out)).toEqual(kept(input));
  });

  it("refuses a relocation that points inside a container", () => {
    const input = fixture("nvk-r.o").slice();
    const obj = readElfObject(input);
    const rela = obj.sections.find((s) => s.name === ".rela.nvFatBinSegment")!;
    // The second entry's addend (offset 24 + 16 of the section's data), moved 8 bytes into the container.
    const fileOffset = findSubarray(input, rela.data);
    expect(fileOffset).toBeGreaterThan(0);
    const view = new DataView(input.buffer, input.byteOffset);
    view.setBigInt64(fileOffset + 24 + 16, view.getBigInt64(fileOffset + 24 + 16, true) + 8n, true);
    let error: unknown;
    try {
      pruneWith(input, { keep: ["sm_90"], codecs: nodeCodecs, name: "nvk-r.o" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OffloadKitError);
    expect((error as OffloadKitError).message).toMatch(/points \d+ bytes into \.nv_fatbin, where no container starts/);
  });
});

function findSubarray(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let k = 0; k < needle.length; k++) if (haystack[i + k] !== needle[k]) continue outer;
    return i;
  }
  return -1;
}

describe("as NVIDIA's tools see the outputs", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "nv-compress-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function kit(...args: string[]) {
    const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: HANG_MS });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  /** cuobjdump's listing with the file's stem taken out, and the bytes of what it extracts, by name without the stem. */
  function cuobjdumpView(path: string): { listing: string; files: Record<string, string> } {
    const stem = path.split("/").pop()!.replace(/\.[^.]*$/, "");
    const listing = runNative("cuobjdump", ["-lelf", "-lptx", path]).stdout.toString().replaceAll(`${stem}.`, "");
    const out = join(dir, `x-${Math.random().toString(36).slice(2)}`);
    mkdirSync(out);
    runNative("cuobjdump", ["-xelf", "all", "-xptx", "all", path], { cwd: out });
    const files: Record<string, string> = {};
    for (const f of readdirSync(out)) files[f.slice(stem.length + 1)] = Buffer.from(readFileSync(join(out, f))).toString("hex");
    return { listing, files };
  }

  it.skipIf(nativeTool("cuobjdump") === undefined)("cuobjdump lists and extracts the same cubins and PTX from compressed and decompressed outputs", () => {
    const cases: [string, string, string][] = [
      ["compress", join(FIXTURES, "nvk.none.fatbin"), "fatbin"],
      ["decompress", join(FIXTURES, "nvk.lz4.fatbin"), "fatbin"],
      ["compress", join(FIXTURES, "libnvk.so"), "so"],
      ["decompress", join(FIXTURES, "libnvk-lz4.so"), "so"],
      ["decompress", join(FIXTURES, "libnvk-z.so"), "so"],
      ["compress", join(FIXTURES, "nvapp"), "exe"],
      ["compress", join(NV, "kernels.plain.o"), "o"],
      ["compress", join(FIXTURES, "nvk-r.o"), "o"],
    ];
    for (const [operation, input, ext] of cases) {
      const out = join(dir, `${operation}-${input.split("/").pop()!.replace(/\./g, "_")}.${ext}`);
      const r = kit(operation, input, "-o", out);
      expect(r.stderr, out).toBe("");
      expect(r.code, out).toBe(0);
      const theirs = cuobjdumpView(input);
      const ours = cuobjdumpView(out);
      expect(Object.keys(ours.files).length, out).toBeGreaterThan(0);
      expect(ours.listing.replaceAll(out.split("/").pop()!.replace(/\.[^.]*$/, "") + ".", ""), out).toBe(theirs.listing);
      expect(ours.files, out).toEqual(theirs.files);
    }
  });

  it.skipIf(!existsSync(NVCC) || nativeTool("cuobjdump") === undefined)("nvcc links the pruned and compressed ld -r objects; the program's fatbin holds the kept entries", () => {
    const cases: [string, string[], string[]][] = [
      ["nvk-r.o", ["prune", "--keep=sm_90"], ["--cudart=shared"]],
      ["nvk-r.o", ["compress"], ["--cudart=shared"]],
      ["nvk-rdc-r.o", ["prune", "--keep=sm_90", "--drop-ptx"], ["-rdc=true", "-arch=sm_90", "--cudart=shared"]],
    ];
    for (const [name, edit, link] of cases) {
      const object = join(dir, `${edit.join("").replace(/[^a-z0-9]/gi, "")}-${name}`);
      expect(kit(edit[0]!, ...edit.slice(1), join(FIXTURES, name), "-o", object).code).toBe(0);
      const program = `${object}.exe`;
      const linked = spawnSync(NVCC, [...link, "-o", program, object], { encoding: "utf8", timeout: HANG_MS });
      expect(linked.stderr + linked.stdout, name).not.toMatch(/error/i);
      expect(linked.status, name).toBe(0);
      const listing = runNative("cuobjdump", ["-lelf", "-lptx", program]).stdout.toString();
      const archs = [...listing.matchAll(/\.(sm_\d+)\.(cubin|ptx)/g)].map((m) => `${m[2]} ${m[1]}`);
      if (edit[0] === "compress") {
        // The two containers of the object keep all their entries (nvcc's device link adds its own container).
        expect(archs.filter((a) => a === "cubin sm_75").length, name).toBeGreaterThanOrEqual(2);
        expect(archs.filter((a) => a === "ptx sm_90").length, name).toBe(2);
      } else if (name === "nvk-r.o") {
        // Both of the object's containers hold sm_90 only; nvcc's device-link container adds one kernel-less cubin for its default arch.
        expect(archs.filter((a) => a === "cubin sm_90").length, archs.join(", ")).toBe(2);
        expect(archs.filter((a) => a === "ptx sm_90").length, archs.join(", ")).toBe(2);
        expect(archs.filter((a) => !a.endsWith("sm_90")), archs.join(", ")).toEqual(["cubin sm_75"]);
      } else {
        // nvlink linked the -rdc code it was left: sm_90 only, no PTX.
        expect(archs, archs.join(", ")).toEqual(["cubin sm_90"]);
      }
      const listed = kit("ls", program);
      expect(listed.code, name).toBe(0);
    }
  });
});
