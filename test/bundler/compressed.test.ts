// Compression semantics over both codec sets (Node: node:zlib/node:crypto; browser: fflate/hash-wasm;
// both with the libzstd WebAssembly build): round-trips, multi-frame bundles, LLVM's size rules, the
// -verbose report text and the environment variables. Golden inputs come from test/fixtures/ccob/.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compressBundle, decompressBundle, decompressBundles, unbundle } from "../../src/bundler/api.js";
import {
  ZSTD_FRAME_CHUNK,
  ccobBytes,
  compressBundleBytes,
  compressionConfig,
  formatCompressionReport,
  formatDecompressionReport,
  formatWithCommas,
} from "../../src/bundler/compressed.js";
import { loadBrowserCodecs } from "../../src/compress/browser.js";
import type { Codecs } from "../../src/compress/codecs.js";
import { walkZstdFrames } from "../../src/compress/zstd-frames.js";
import { OffloadKitError } from "../../src/engine/errors.js";
import { CompressionMethod, parseCcobHeader, walkCcobs } from "../../src/formats/ccob.js";
import { nodeCodecs, nodeCodecsUsing } from "../../src/compress/node/codecs.js";
import { platformHasZstd } from "../../src/compress/node/zstd-native.js";
import { loadZstd } from "../../src/compress/zstd-wasm.js";

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/ccob/${name}`, import.meta.url)));
const text = (name: string) => readFileSync(new URL(`../fixtures/ccob/${name}`, import.meta.url), "utf8");
const plain = fixture("host-gfx906.bc");
// Node's libzstd is node:zlib's from Node 22.15 on and the WebAssembly build before: both are run
// wherever they exist (CI runs the suite on Node 20 and 24).
const codecSets: [string, () => Promise<Codecs>][] = [
  ["node", async () => nodeCodecs],
  ["node, WebAssembly libzstd", async () => (await loadZstd(), nodeCodecsUsing("wasm"))],
  ...(platformHasZstd() ? [["node, node:zlib libzstd", async () => nodeCodecsUsing("native")] as [string, () => Promise<Codecs>]] : []),
  ["browser", loadBrowserCodecs],
];

async function rejection(promise: Promise<unknown>): Promise<OffloadKitError> {
  try {
    await promise;
  } catch (e) {
    expect(e).toBeInstanceOf(OffloadKitError);
    return e as OffloadKitError;
  }
  throw new Error("expected a rejection");
}

describe.each(codecSets)("%s codecs", (_, load) => {
  it("reads every native and hand-made fixture to the same bundle", async () => {
    const codecs = await load();
    for (const name of ["host-gfx906.19.ccob", "host-gfx906.22.ccob", "host-gfx906.22v2.ccob", "v1-zstd.ccob", "v1-zlib.ccob", "v2-zlib.ccob", "v3-zlib.ccob", "hash-zero.ccob", "declared-larger.ccob", "total-too-small.ccob"]) {
      expect(await decompressBundle(fixture(name), { codecs }), name).toEqual(plain);
    }
  });

  it("writes LLVM 19's file byte for byte for a small bundle (same libzstd level, one frame)", async () => {
    const codecs = await load();
    expect(await compressBundle(plain, { codecs })).toEqual(fixture("host-gfx906.19.ccob"));
    expect(await compressBundle(plain, { codecs, version: 3 })).toEqual(fixture("host-gfx906.22.ccob"));
  });

  it("round-trips zlib and every version, with LLVM's hash", async () => {
    const codecs = await load();
    for (const version of [1, 2, 3] as const) {
      for (const method of ["zstd", "zlib"] as const) {
        const ccob = await compressBundle(plain, { codecs, version, method });
        const header = parseCcobHeader(ccob);
        expect(header).toMatchObject({ version, method: method === "zlib" ? 0 : 1, uncompressedSize: plain.length, hash: 0x851c587cb2a6b344n });
        expect(await decompressBundle(ccob, { codecs })).toEqual(plain);
      }
    }
  });

  it("cuts large bundles into one zstd frame per chunk and reads them back", async () => {
    const codecs = await load();
    const big = new Uint8Array(ZSTD_FRAME_CHUNK * 2 + 12345);
    for (let i = 0; i < big.length; i += 4096) big[i] = (i >> 12) & 0xff;
    const result = compressBundleBytes(big, codecs, { version: 3, method: CompressionMethod.Zstd, level: 1 });
    expect(result.frames).toHaveLength(3);
    const ccob = ccobBytes(result);
    const frames = walkZstdFrames((p, n) => ccob.subarray(p, p + n), 32, ccob.length - 32);
    expect(frames.map((f) => f.contentSize)).toEqual([ZSTD_FRAME_CHUNK, ZSTD_FRAME_CHUNK, 12345]);
    // toEqual walks 64 MiB element by element: compare the bytes directly.
    expect(Buffer.compare(await decompressBundle(ccob, { codecs }), big)).toBe(0);
  });

  it("fails where LLVM fails, with LLVM's messages", async () => {
    const codecs = await load();
    const cases: [string, string][] = [
      ["declared-smaller.ccob", "Failed to decompress input: Could not decompress embedded file contents: Destination buffer is too small"],
      ["method-7.ccob", "Failed to decompress input: Unknown compressing method"],
      ["short-header.ccob", "Failed to decompress input: Compressed bundle header size too small"],
    ];
    for (const [name, message] of cases) expect((await rejection(decompressBundle(fixture(name), { codecs }))).message, name).toBe(message);
    const truncated = fixture("host-gfx906.19.ccob").slice(0, 100);
    new DataView(truncated.buffer).setUint32(8, 100, true);
    expect((await rejection(decompressBundle(truncated, { codecs }))).message).toBe(
      "Failed to decompress input: Could not decompress embedded file contents: Src size is incorrect",
    );
    const zlibShort = fixture("v2-zlib.ccob");
    new DataView(zlibShort.buffer).setUint32(12, 10, true);
    expect((await rejection(decompressBundle(zlibShort, { codecs }))).message).toBe(
      "Failed to decompress input: Could not decompress embedded file contents: zlib error: Z_BUF_ERROR",
    );
  });

  it("refuses a declared size over the limit before allocating", async () => {
    const codecs = await load();
    const e = await rejection(decompressBundle(fixture("host-gfx906.19.ccob"), { codecs, maxDecompressedSize: 100 }));
    expect(e.code).toBe("CCOB_TOO_LARGE");
    expect([e.offset, e.field]).toEqual([12, "uncompressed size"]);
  });

  it("gives each bundle of a concatenation", async () => {
    const codecs = await load();
    const parts = await decompressBundles(fixture("multi.22.ccob"), { codecs });
    expect(parts).toHaveLength(2);
    expect(parts[0]).toEqual(plain);
    expect(unbundle(parts[1], { type: "bc", targets: ["hip-amdgcn-amd-amdhsa--gfx90a"] })[0]).toEqual(fixture("in-gfx90a.txt"));
  });
});

describe("the synchronous in-memory readers", () => {
  it("point at decompressBundle instead of reporting no bundle", () => {
    expect(() => unbundle(fixture("host-gfx906.19.ccob"), { type: "bc", targets: ["hip-amdgcn-amd-amdhsa--gfx906"] })).toThrow(/decompressBundle/);
  });
});

describe("-verbose reports", () => {
  const speed = (s: string) => s.replace(/(speed: )[\d.]+/, "$1X");
  it("match LLVM 19's lines except the speed", () => {
    const native = text("compress.19.stderr").split("===")[0];
    const ours = formatCompressionReport({ version: 2, method: 1, level: 3, uncompressedSize: 146, compressedSize: 128, hash: 0x851c587cb2a6b344n, compressSeconds: 0.001 });
    expect(speed(ours)).toBe(speed(native));
    const list = text("list.19.stderr").split("===")[0];
    const blob = fixture("host-gfx906.22v2.ccob");
    const member = walkCcobs((p, n) => blob.subarray(p, p + n), blob.length).members[0];
    expect(speed(formatDecompressionReport({ member, seconds: 0.001, recalculatedHash: 0x851c587cb2a6b344n }))).toBe(speed(list));
  });

  it("format numbers with commas like formatWithCommas", () => {
    expect([0, 999, 1000, 209715338, 33866833].map(formatWithCommas)).toEqual(["0", "999", "1,000", "209,715,338", "33,866,833"]);
  });
});

describe("OffloadBundlerConfig's environment", () => {
  it("reads the variables, lets the command line win, and warns like LLVM", () => {
    expect(compressionConfig({}, {})).toEqual({ compress: false, verbose: false, level: 3, version: 2, warnings: [] });
    expect(compressionConfig({ OFFLOAD_BUNDLER_COMPRESS: "1", OFFLOAD_BUNDLER_VERBOSE: "1", OFFLOAD_BUNDLER_COMPRESSION_LEVEL: "-5" }, {})).toMatchObject({
      compress: true,
      verbose: true,
      level: -5,
    });
    expect(compressionConfig({ OFFLOAD_BUNDLER_COMPRESS: "yes" }, {}).compress).toBe(false);
    expect(compressionConfig({ OFFLOAD_BUNDLER_COMPRESS: "1" }, { compress: false }).compress).toBe(false);
    expect(compressionConfig({ OFFLOAD_BUNDLER_COMPRESSION_LEVEL: "9" }, { compressionLevel: 3 }).level).toBe(3);
    expect(compressionConfig({ OFFLOAD_BUNDLER_IGNORE_ENV_VAR: "1", OFFLOAD_BUNDLER_COMPRESS: "1", COMPRESSED_BUNDLE_FORMAT_VERSION: "3" }, {})).toMatchObject({
      compress: false,
      version: 2,
    });
    expect(compressionConfig({ COMPRESSED_BUNDLE_FORMAT_VERSION: "3" }, {}).version).toBe(3);
    expect(compressionConfig({ OFFLOAD_BUNDLER_COMPRESSION_LEVEL: "x", COMPRESSED_BUNDLE_FORMAT_VERSION: "7" }, {}).warnings).toEqual([
      "Warning: Invalid value for OFFLOAD_BUNDLER_COMPRESSION_LEVEL: x. Ignoring it.\n",
      "Warning: Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: 7. Valid values are 2 or 3. Using default version 2.\n",
    ]);
    expect(compressionConfig({ COMPRESSED_BUNDLE_FORMAT_VERSION: "abc" }, {}).warnings).toEqual([
      "Warning: Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: abc. Using default version 2.\n",
    ]);
  });
});

describe("mutated compressed bundles", () => {
  it("decode or fail with OffloadKitError only, and the codecs still work afterwards", async () => {
    const bases = [fixture("host-gfx906.19.ccob"), fixture("host-gfx906.22.ccob"), fixture("v2-zlib.ccob"), fixture("multi.19.ccob")];
    let seed = 99;
    const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 0x1000000;
    for (let i = 0; i < 600; i++) {
      const base = bases[i % bases.length];
      const bytes = base.slice(0, random() < 0.2 ? Math.floor(random() * base.length) : base.length);
      for (let k = 0; k < 1 + Math.floor(random() * 4); k++) {
        if (bytes.length > 8) bytes[8 + Math.floor(random() * (bytes.length - 8))] = Math.floor(random() * 256);
      }
      try {
        const out = await decompressBundle(bytes, { codecs: nodeCodecs, maxDecompressedSize: 1 << 20 });
        expect(out.length).toBeLessThanOrEqual(Math.max(bytes.length, 1 << 20));
      } catch (e) {
        expect(e, String(e)).toBeInstanceOf(OffloadKitError);
      }
    }
    expect(await decompressBundle(fixture("host-gfx906.19.ccob"), { codecs: nodeCodecs })).toEqual(plain);
  });
});
