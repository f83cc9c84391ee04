// CCOB header format and the size-driven walk (src/formats/ccob.ts), on native-made fixtures and
// on headers written here; round-trips and a mutation fuzz that only our error may escape.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import {
  CCOB_HEADER_SIZE,
  CompressionMethod,
  formatHash,
  isCompressedBundle,
  parseCcobHeader,
  truncatedHash,
  walkCcobs,
  writeCcobHeader,
} from "../../src/formats/ccob.js";
import type { CcobVersion } from "../../src/formats/ccob.js";

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/ccob/${name}`, import.meta.url)));
const readerOf = (bytes: Uint8Array) => (position: number, length: number) => bytes.subarray(position, position + length);

function errorOf(run: () => unknown): OffloadKitError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(OffloadKitError);
    return e as OffloadKitError;
  }
  throw new Error("expected an OffloadKitError");
}

describe("CCOB headers", () => {
  it("reads LLVM 19's v2 and LLVM 22's v3 headers", () => {
    const v2 = parseCcobHeader(fixture("host-gfx906.19.ccob"));
    expect(v2).toEqual({ version: 2, method: CompressionMethod.Zstd, headerSize: 24, rawTotalSize: 152, uncompressedSize: 146, hash: 0x851c587cb2a6b344n });
    const v3 = parseCcobHeader(fixture("host-gfx906.22.ccob"));
    expect(v3).toEqual({ version: 3, method: CompressionMethod.Zstd, headerSize: 32, rawTotalSize: 160, uncompressedSize: 146, hash: 0x851c587cb2a6b344n });
    expect(parseCcobHeader(fixture("v1-zlib.ccob"))).toMatchObject({ version: 1, method: CompressionMethod.Zlib, headerSize: 20, rawTotalSize: undefined });
  });

  it("writes the header LLVM writes, byte for byte", () => {
    for (const name of ["host-gfx906.19.ccob", "host-gfx906.22.ccob", "host-gfx906.22v2.ccob", "gfx90a.19.ccob"]) {
      const file = fixture(name);
      const h = parseCcobHeader(file);
      const written = writeCcobHeader({ ...h, compressedSize: file.length - h.headerSize });
      expect(written).toEqual(file.subarray(0, h.headerSize));
    }
  });

  it("round-trips every version and field", () => {
    for (const version of [1, 2, 3] as CcobVersion[]) {
      for (const method of [CompressionMethod.Zlib, CompressionMethod.Zstd]) {
        const fields = { version, method, compressedSize: 1234, uncompressedSize: 0xfffffff0, hash: 0xfedcba9876543210n };
        const h = parseCcobHeader(writeCcobHeader(fields));
        expect(h).toMatchObject({ version, method, uncompressedSize: fields.uncompressedSize, hash: fields.hash, headerSize: CCOB_HEADER_SIZE[version] });
        if (version !== 1) expect(h.rawTotalSize).toBe(CCOB_HEADER_SIZE[version] + 1234);
      }
    }
  });

  it("refuses v2 sizes over 4 GiB with LLVM's messages", () => {
    expect(errorOf(() => writeCcobHeader({ version: 2, method: 1, compressedSize: 10, uncompressedSize: 2 ** 32, hash: 0n })).message).toBe(
      "Uncompressed size exceeds version 2 limit",
    );
    expect(errorOf(() => writeCcobHeader({ version: 2, method: 1, compressedSize: 2 ** 32, uncompressedSize: 1, hash: 0n })).message).toBe(
      "Total file size exceeds version 2 limit",
    );
    expect(parseCcobHeader(writeCcobHeader({ version: 3, method: 1, compressedSize: 2 ** 33, uncompressedSize: 2 ** 34, hash: 0n })).uncompressedSize).toBe(2 ** 34);
  });

  it("fails like LLVM, in LLVM's order, naming offset and field", () => {
    let e = errorOf(() => parseCcobHeader(fixture("short-header.ccob")));
    expect([e.message, e.offset, e.field]).toEqual(["Compressed bundle header size too small", 0, "header"]);
    e = errorOf(() => parseCcobHeader(fixture("method-7.ccob")));
    expect([e.message, e.offset, e.field]).toEqual(["Unknown compressing method", 6, "method"]);
    e = errorOf(() => parseCcobHeader(fixture("version-9.ccob")));
    expect([e.message, e.offset, e.field]).toEqual(["Unknown compressed bundle version", 4, "version"]);
    e = errorOf(() => parseCcobHeader(new TextEncoder().encode("CCOX\x02\x00\x01\x00")));
    expect(e.code).toBe("CCOB_BAD_MAGIC");
  });

  it("formats hashes as llvm::format_hex(v, 16)", () => {
    expect(formatHash(0x851c587cb2a6b344n)).toBe("0x851c587cb2a6b344");
    expect(formatHash(0n)).toBe("0x00000000000000");
    expect(formatHash(0x1n)).toBe("0x00000000000001");
    const digest = new Uint8Array([0x23, 0xda, 0x2a, 0x35, 0x6e, 0x7a, 0xcb, 0x6c, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(formatHash(truncatedHash(digest))).toBe("0x6ccb7a6e352ada23");
  });

  it("knows the magic", () => {
    expect(isCompressedBundle(fixture("host-gfx906.19.ccob"))).toBe(true);
    expect(isCompressedBundle(fixture("host-gfx906.bc"))).toBe(false);
    expect(isCompressedBundle(new Uint8Array([0x43, 0x43, 0x4f]))).toBe(false);
  });
});

describe("walking several CCOBs by their sizes", () => {
  it("splits a concatenation at the stored total sizes", () => {
    for (const name of ["multi.19.ccob", "multi.22.ccob"]) {
      const blob = fixture(name);
      const walk = walkCcobs(readerOf(blob), blob.length);
      const v = name.includes("19") ? "19" : "22";
      const first = fixture(`host-gfx906.${v}.ccob`).length;
      const second = fixture(`gfx90a.${v}.ccob`).length;
      expect(walk.members.map((m) => [m.offset, m.size, m.header.version])).toEqual([
        [0, first, v === "19" ? 2 : 3],
        [first, second, v === "19" ? 2 : 3],
      ]);
      expect(walk.trailing).toBeUndefined();
    }
  });

  it("skips zero padding between members and reports other trailing bytes", () => {
    const padded = fixture("padded-pair.ccob");
    const walk = walkCcobs(readerOf(padded), padded.length);
    expect(walk.members.map((m) => m.offset)).toEqual([0, 192]);
    expect(walk.padding).toBe(40);
    const trailing = fixture("trailing-garbage.ccob");
    expect(walkCcobs(readerOf(trailing), trailing.length).trailing).toEqual({ offset: 152, size: 8 });
  });

  it("reads a member to the end when its total size is impossible, and v1 always (it has none)", () => {
    const bad = fixture("total-too-small.ccob");
    const walk = walkCcobs(readerOf(bad), bad.length);
    expect(walk.members).toHaveLength(1);
    expect(walk.members[0]).toMatchObject({ size: bad.length, totalSizeIgnored: true, dataOffset: 24 });
    const v1 = fixture("v1-zstd.ccob");
    const twice = new Uint8Array([...v1, ...v1]);
    const v1walk = walkCcobs(readerOf(twice), twice.length);
    expect(v1walk.members).toHaveLength(1);
    expect(v1walk.members[0]).toMatchObject({ size: twice.length, dataSize: twice.length - 20, totalSizeIgnored: false });
  });

  it("never throws anything but OffloadKitError on mutated headers, and still works afterwards", () => {
    const base = fixture("multi.22.ccob");
    let seed = 12345;
    const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 0x1000000;
    for (let i = 0; i < 3000; i++) {
      const bytes = base.slice(0, 1 + Math.floor(random() * base.length));
      for (let k = 0; k < 3; k++) bytes[Math.floor(random() * Math.min(bytes.length, 40))] = Math.floor(random() * 256);
      if (random() < 0.3 && bytes.length >= 4) bytes.set([0x43, 0x43, 0x4f, 0x42]);
      try {
        const walk = walkCcobs(readerOf(bytes), bytes.length);
        let end = 0;
        for (const m of walk.members) {
          expect(m.offset).toBeGreaterThanOrEqual(end);
          expect(m.dataOffset + m.dataSize).toBeLessThanOrEqual(bytes.length);
          end = m.offset + m.size;
        }
      } catch (e) {
        expect(e).toBeInstanceOf(OffloadKitError);
      }
    }
    expect(walkCcobs(readerOf(base), base.length).members).toHaveLength(2);
  });
});
