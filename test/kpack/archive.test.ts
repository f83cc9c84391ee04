// .kpack archives made by rocm-kpack (test/fixtures/kpack, make-kpack-fixtures.sh): the TOC read, every code
// object equal to what clang-offload-bundler-19 extracted from the fat binary before the split
// (test/fixtures/hosts/expected.tsv), our writer byte-identical to rocm-kpack's, and hostile archives refused
// with typed errors.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import { bytesSource } from "../../src/engine/source.js";
import { isAmdgpuCodeObject } from "../../src/formats/amdgpu-code-object.js";
import { readKpackArchive, readKpackEntry, writeKpackArchive } from "../../src/formats/kpack.js";
import type { KpackArchive } from "../../src/formats/kpack.js";
import { encodeMsgpack } from "../../src/formats/msgpack.js";
import { codecDecompressor } from "../../src/compress/node/packager-codecs.js";

const FIXTURES = join(import.meta.dirname, "../fixtures");
const read = (path: string) => new Uint8Array(readFileSync(join(FIXTURES, path)));
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const decompress = codecDecompressor();
const zstd = (frame: Uint8Array, size: number) => decompress("zstd", frame, size);

/** `hosts/app` bundle index -> entry ID -> sha256, as the native bundler extracted them before the split. */
function expectedApp(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync(join(FIXTURES, "hosts/expected.tsv"), "utf8").trim().split("\n")) {
    const [file, index, id, , hash] = line.split("\t");
    if (file === "app") out.set(`${index} ${id}`, hash!);
  }
  return out;
}

function codeObjects(bytes: Uint8Array, archive: KpackArchive): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const e of archive.entries) out.set(`${e.key} ${e.arch}`, readKpackEntry(bytesSource(bytes), archive.compression, e, zstd));
  return out;
}

describe("kpack archives written by rocm-kpack", () => {
  for (const [tree, compression] of [["tree", "none"], ["zstd", "zstd-per-kernel"]] as const) {
    for (const arch of ["gfx906", "gfx90a"]) {
      it(`${tree}/…/test_lib_${arch}.kpack (${compression}): the TOC, and each code object the native bundler's`, () => {
        const bytes = read(`kpack/${tree}/stage/.kpack/test_lib_${arch}.kpack`);
        const archive = readKpackArchive(bytesSource(bytes));
        expect(archive).toMatchObject({ version: 1, formatVersion: 1, groupName: "test_lib", gfxArchFamily: arch, gfxArches: [arch], compression });
        expect(archive.entries.map((e) => e.key)).toEqual(["stage/bin/app#0", "stage/bin/app#1", "stage/bin/app#2"]);
        const expected = expectedApp();
        for (const [i, e] of archive.entries.entries()) {
          expect(e).toMatchObject({ arch, type: "hsaco", ordinal: i, target: `hipv4-amdgcn-amd-amdhsa--${arch}`, sourcePrefix: "stage" });
          const code = readKpackEntry(bytesSource(bytes), archive.compression, e, zstd);
          expect(isAmdgpuCodeObject(code)).toBe(true);
          expect(code.length).toBe(e.originalSize);
          expect(sha256(code)).toBe(expected.get(`${i} hipv4-amdgcn-amd-amdhsa--${arch}`));
        }
        if (compression === "none") expect(archive.entries[0]!.offset).toBe(64);
        else expect(archive.zstd).toEqual({ offset: 64, size: archive.tocOffset - 64, count: 3 });
      });
    }
  }

  it("rocm-kpack's runtime test archives: several gfx_arches, keys with two arches", () => {
    const noop = readKpackArchive(bytesSource(read("kpack/runtime/test_noop.kpack")));
    expect(noop.gfxArches).toEqual(["gfx900", "gfx906"]);
    expect(noop.entries.map((e) => `${e.key}@${e.arch}`)).toEqual(["lib/libtest.so#0@gfx900", "lib/libtest.so#0@gfx906", "bin/testapp#0@gfx900"]);
    const bytes = read("kpack/runtime/test_zstd.kpack");
    const archive = readKpackArchive(bytesSource(bytes));
    const objects = codeObjects(bytes, archive);
    // generate_test_data.py's payloads.
    expect(new TextDecoder().decode(objects.get("lib/libhip.so#0 gfx1100"))).toBe(`HIP_KERNEL_GFX1100_${"A".repeat(500)}${"B".repeat(500)}`);
    expect(new TextDecoder().decode(objects.get("bin/hiptest#0 gfx1100"))).toBe(`TEST_APP_KERNEL___${"B".repeat(1000)}`);
  });

  it("writeKpackArchive lays out an archive byte for byte as rocm-kpack's PackedKernelArchive.write", () => {
    for (const path of ["kpack/tree/stage/.kpack/test_lib_gfx90a.kpack", "kpack/tree/stage/.kpack/test_lib_gfx90a:xnack-.kpack", "kpack/zstd/stage/.kpack/test_lib_gfx906.kpack", "kpack/runtime/test_noop.kpack", "kpack/runtime/test_zstd.kpack"]) {
      const bytes = read(path);
      const archive = readKpackArchive(bytesSource(bytes));
      const objects = codeObjects(bytes, archive);
      const written = writeKpackArchive(
        archive.entries.map((e) => ({
          key: e.key, arch: e.arch, data: objects.get(`${e.key} ${e.arch}`)!,
          // The zstd frames are rocm-kpack's (zstandard level 3): the writer stores frames, it does not make them.
          ...(archive.compression === "zstd-per-kernel" ? { frame: bytes.subarray(e.offset, e.offset + e.size) } : {}),
          ...(e.target !== undefined ? { metadata: { target: e.target, source_prefix: e.sourcePrefix! } } : {}),
        })),
        { groupName: archive.groupName!, gfxArchFamily: archive.gfxArchFamily!, gfxArches: archive.gfxArches, compression: archive.compression },
      );
      expect(Buffer.from(written).equals(Buffer.from(bytes)), path).toBe(true);
    }
  });
});

/** An archive with `toc` as its TOC after a 64-byte blob area holding `blob`. */
function archiveWith(toc: Parameters<typeof encodeMsgpack>[0], blob = new Uint8Array(0), tocOffset?: bigint): Uint8Array {
  const tocBytes = encodeMsgpack(toc);
  const out = new Uint8Array(64 + blob.length + tocBytes.length);
  out.set([0x4b, 0x50, 0x41, 0x4b, 1, 0, 0, 0]);
  new DataView(out.buffer).setBigUint64(8, tocOffset ?? BigInt(64 + blob.length), true);
  out.set(blob, 64);
  out.set(tocBytes, 64 + blob.length);
  return out;
}

function errorOf(bytes: Uint8Array): OffloadKitError {
  try {
    readKpackArchive(bytesSource(bytes));
  } catch (e) {
    expect(e).toBeInstanceOf(OffloadKitError);
    return e as OffloadKitError;
  }
  throw new Error("no error");
}

describe("hostile kpack archives give typed errors", () => {
  const entry = { toc: { "k#0": { gfx900: { type: "hsaco", ordinal: 0, original_size: 4 } } } };

  it("too short, wrong magic, wrong version, TOC offset outside", () => {
    expect(errorOf(new Uint8Array(8)).code).toBe("KPACK_TRUNCATED");
    expect(errorOf(new Uint8Array(64)).code).toBe("KPACK_BAD_MAGIC");
    const v2 = archiveWith({});
    v2[4] = 2;
    expect(errorOf(v2)).toMatchObject({ code: "KPACK_BAD_VERSION", offset: 4 });
    expect(errorOf(archiveWith({}, undefined, 1n << 62n))).toMatchObject({ code: "KPACK_BAD_TOC_OFFSET", offset: 8 });
    expect(errorOf(archiveWith({}, undefined, 3n)).code).toBe("KPACK_BAD_TOC_OFFSET");
  });

  it("a blob past the end, an ordinal past the blobs, a TOC that is not msgpack", () => {
    expect(errorOf(archiveWith({ ...entry, compression_scheme: "none", blobs: [{ offset: 64, size: 1 << 30 }] })).code).toBe("KPACK_BLOB_OUT_OF_BOUNDS");
    expect(errorOf(archiveWith({ toc: { "k#0": { gfx900: { ordinal: 7 } } }, blobs: [] })).code).toBe("KPACK_BAD_ORDINAL");
    const bad = archiveWith({});
    bad[64] = 0xc1; // reserved msgpack type
    expect(errorOf(bad).code).toBe("KPACK_BAD_TOC");
    // A map32 header claiming four billion pairs is refused before anything is allocated for it.
    const huge = archiveWith({ group_name: "test" });
    huge.set([0xdf, 0xff, 0xff, 0xff, 0xff], 64);
    expect(errorOf(huge).code).toBe("KPACK_BAD_TOC");
    expect(errorOf(archiveWith({ ...entry, compression_scheme: "lz4" })).code).toBe("KPACK_UNKNOWN_COMPRESSION");
    expect(errorOf(archiveWith({ gfx_arches: "gfx900" })).code).toBe("KPACK_BAD_TOC");
  });

  it("a zstd blob with a huge frame count, or a frame past the blob's end", () => {
    const count = new Uint8Array(8);
    new DataView(count.buffer).setUint32(0, 0xffffffff, true);
    expect(errorOf(archiveWith({ ...entry, compression_scheme: "zstd-per-kernel", zstd_offset: 64, zstd_size: 8 }, count)).code).toBe("KPACK_BAD_ZSTD_BLOB");
    const frame = new Uint8Array(12);
    new DataView(frame.buffer).setUint32(0, 1, true);
    new DataView(frame.buffer).setUint32(4, 1000, true);
    expect(errorOf(archiveWith({ ...entry, compression_scheme: "zstd-per-kernel", zstd_offset: 64, zstd_size: 12 }, frame))).toMatchObject({ code: "KPACK_BAD_ZSTD_BLOB", offset: 68 });
    expect(errorOf(archiveWith({ ...entry, compression_scheme: "zstd-per-kernel", zstd_offset: 64, zstd_size: 1 << 20 }, frame)).code).toBe("KPACK_BLOB_OUT_OF_BOUNDS");
  });

  it("a frame that decodes to another size than original_size", () => {
    const bytes = read("kpack/runtime/test_zstd.kpack");
    const archive = readKpackArchive(bytesSource(bytes));
    const e = archive.entries[0]!;
    expect(() => readKpackEntry(bytesSource(bytes), archive.compression, { ...e, originalSize: e.originalSize! + 1 }, zstd)).toThrow(OffloadKitError);
  });
});
