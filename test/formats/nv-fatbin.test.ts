// NVIDIA fatbin containers: every container of the nvcc 13 fixtures parses and rebuilds byte for byte from its
// entries; the fields match what the spec note records (and cuobjdump lists, test/differential/cuobjdump.test.ts);
// each bound is checked with its field and offset.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import {
  NV_FLAG_ZSTD, isNvCubin, parseNvCubin, parseNvFatbinContainer, parseNvFatbinContainers, parseNvFatbinEntry, writeNvFatbinContainer,
} from "../../src/formats/nv-fatbin.js";
import { NV_FATBIN_FIXTURES, NV_FIXTURES, fatbinSections } from "../fixtures/nv/sections.js";

function catches(run: () => unknown): OffloadKitError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(OffloadKitError);
    return e as OffloadKitError;
  }
  throw new Error("expected an OffloadKitError");
}

describe("nv-fatbin containers of the fixtures", () => {
  it.each(NV_FATBIN_FIXTURES)("%s: every container rebuilds byte for byte from its entries", (name) => {
    const sections = fatbinSections(name);
    expect(sections.length).toBeGreaterThan(0);
    for (const section of sections) {
      const run = parseNvFatbinContainers(section.bytes);
      expect(run.trailing).toBeUndefined();
      expect(run.containers.length).toBeGreaterThan(0);
      for (const c of run.containers) {
        const rebuilt = writeNvFatbinContainer(c.entries, { header: c.rawHeader });
        expect(Buffer.from(rebuilt).equals(Buffer.from(section.bytes.subarray(c.offset, c.offset + c.size)))).toBe(true);
        // The default header is the one nvcc writes.
        expect(Buffer.from(writeNvFatbinContainer(c.entries)).equals(Buffer.from(rebuilt))).toBe(true);
      }
    }
  });

  it("a subset of entries makes a container that parses to the same entries", () => {
    const [section] = fatbinSections("kernels.zstd.o");
    const container = parseNvFatbinContainer(section!.bytes);
    const kept = container.entries.filter((e) => e.archName !== "sm_80");
    const again = parseNvFatbinContainer(writeNvFatbinContainer(kept));
    expect(again.entries.map((e) => e.archName)).toEqual(["sm_75", "sm_90", "compute_90"]);
    expect(again.entries.map((e) => Buffer.from(e.rawPayload).toString("hex"))).toEqual(kept.map((e) => Buffer.from(e.rawPayload).toString("hex")));
  });

  it("kernels.plain.o: SASS for sm_75/80/90 and compute_90 PTX, stored plain", () => {
    const [section] = fatbinSections("kernels.plain.o");
    const { containers } = parseNvFatbinContainers(section!.bytes);
    expect(containers).toHaveLength(1);
    const c = containers[0]!;
    expect([c.version, c.headerSize, c.size]).toEqual([1, 16, section!.bytes.length]);
    expect(c.entries.map((e) => [e.kind, e.archName, e.compression, e.headerSize])).toEqual([
      [2, "sm_75", "none", 64], [2, "sm_80", "none", 64], [2, "sm_90", "none", 64], [1, "compute_90", "none", 80],
    ]);
    const ptx = c.entries[3]!;
    expect([ptx.versionMajor, ptx.versionMinor, ptx.optionsOffset]).toEqual([9, 0, 64]);
    // The cubin starts right after the header; the PTX is text.
    expect(Buffer.from(c.entries[0]!.rawPayload.subarray(0, 4)).toString("latin1")).toBe("\x7fELF");
    expect(Buffer.from(ptx.rawPayload).toString("latin1")).toContain(".target sm_90");
  });

  it("kernels.zstd.o: every entry a zstd frame with both sizes", () => {
    const [section] = fatbinSections("kernels.zstd.o");
    const c = parseNvFatbinContainer(section!.bytes);
    for (const e of c.entries) {
      expect(e.compression).toBe("zstd");
      expect((e.flags & NV_FLAG_ZSTD) !== 0).toBe(true);
      expect(e.payloadSize).toBe(e.compressedSize);
      expect(e.uncompressedSize).toBeGreaterThan(e.compressedSize);
      expect(Buffer.from(e.rawPayload.subarray(0, 4)).toString("hex")).toBe("28b52ffd");
    }
  });

  it("app-rdc: the sm_90a cubin is named by the arch-specific flag; kernels-sm100.fatbin: 112-byte headers, a and f", () => {
    const [nv] = fatbinSections("app-rdc");
    expect(parseNvFatbinContainers(nv!.bytes).containers.flatMap((c) => c.entries.map((e) => e.archName))).toEqual(["sm_80", "sm_90a"]);
    const [blackwell] = fatbinSections("kernels-sm100.fatbin");
    const c = parseNvFatbinContainer(blackwell!.bytes);
    expect(c.entries.map((e) => [e.archName, e.headerSize])).toEqual([["sm_100f", 112], ["sm_100a", 112], ["sm_120", 112], ["compute_120", 80]]);
  });

  it("libkernels.so: two containers back to back", () => {
    const [section] = fatbinSections("libkernels.so");
    const run = parseNvFatbinContainers(section!.bytes);
    expect(run.containers.map((c) => c.entries.length)).toEqual([3, 4]);
    expect(run.end).toBe(section!.bytes.length);
  });

  it("a standalone cubin: EM_CUDA, arch from e_flags (CUDA 13 ELF: bits 8..15)", () => {
    const head = new Uint8Array(readFileSync(join(NV_FIXTURES, "kernels.sm_86.cubin")).subarray(0, 64));
    expect(isNvCubin(head)).toBe(true);
    expect(parseNvCubin(head)).toMatchObject({ elfClass: 64, abiVersion: 8, arch: 86, type: 2 });
    // CUDA 12's ELF (ABI version 7): the arch in the low byte.
    const old = head.slice();
    old[8] = 7;
    new DataView(old.buffer).setUint32(48, 0x500550, true);
    expect(parseNvCubin(old).arch).toBe(80);
  });
});

describe("nv-fatbin bounds", () => {
  const [section] = fatbinSections("kernels.zstd.o");
  const good = section!.bytes.slice();

  function patched(at: number, bytes: number[]): Uint8Array {
    const copy = good.slice();
    copy.set(bytes, at);
    return copy;
  }

  it("magic, header size and fat size", () => {
    expect(catches(() => parseNvFatbinContainer(patched(0, [0])))).toMatchObject({ code: "NV_BAD_MAGIC", offset: 0, field: "magic" });
    expect(catches(() => parseNvFatbinContainer(patched(6, [8, 0])))).toMatchObject({ code: "NV_HEADER_SIZE", offset: 6 });
    expect(catches(() => parseNvFatbinContainer(patched(8, [0xff, 0xff, 0xff])))).toMatchObject({ code: "NV_FAT_SIZE", offset: 8 });
    expect(catches(() => parseNvFatbinContainer(patched(12, [0, 0, 0xff, 0xff])))).toMatchObject({ code: "NV_FAT_SIZE", offset: 8 });
    expect(catches(() => parseNvFatbinContainer(good.subarray(0, 10)))).toMatchObject({ code: "NV_TRUNCATED", offset: 0 });
  });

  it("entry header size, padded size, compressed size, options offset, compression flags", () => {
    const e = 16;
    expect(catches(() => parseNvFatbinContainer(patched(e + 4, [8, 0, 0, 0])))).toMatchObject({ code: "NV_ENTRY_HEADER_SIZE", offset: e + 4 });
    expect(catches(() => parseNvFatbinContainer(patched(e + 8, [0, 0, 1, 0])))).toMatchObject({ code: "NV_ENTRY_SIZE", offset: e + 8 });
    expect(catches(() => parseNvFatbinContainer(patched(e + 16, [0, 0x10, 0, 0])))).toMatchObject({ code: "NV_COMPRESSED_SIZE", offset: e + 16 });
    expect(catches(() => parseNvFatbinContainer(patched(e + 20, [8, 0, 0, 0])))).toMatchObject({ code: "NV_OPTIONS_OFFSET", offset: e + 20 });
    expect(catches(() => parseNvFatbinContainer(patched(e + 41, [0xa0])))).toMatchObject({ code: "NV_COMPRESSION", offset: e + 40 });
    expect(catches(() => parseNvFatbinContainer(patched(e + 56, [0, 0, 0, 0, 0, 0, 0, 0])))).toMatchObject({ code: "NV_COMPRESSED_SIZE", offset: e + 16 });
    expect(catches(() => parseNvFatbinContainer(patched(e + 60, [0, 0, 0, 1])))).toMatchObject({ code: "NV_UNCOMPRESSED_SIZE", offset: e + 56 });
    expect(catches(() => parseNvFatbinEntry(good, 16, 40))).toMatchObject({ code: "NV_ENTRY_TRUNCATED", offset: 16 });
  });

  it("bytes after the last container that are not one are reported, zero padding is not", () => {
    const padded = new Uint8Array(good.length + 8);
    padded.set(good);
    expect(parseNvFatbinContainers(padded).trailing).toBeUndefined();
    padded[good.length] = 1;
    expect(parseNvFatbinContainers(padded).trailing).toEqual({ offset: good.length, size: 8 });
  });
});
