// The Node decompression hook (src/compress/node/decompress.ts) and the offload-bundler / offload-kit paths
// built on it: bounded memory (limit, temporary file), concatenated CCOBs, -verbose, environment.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runBundler } from "../../src/cli/offload-bundler.js";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { bytesSource, readExact } from "../../src/engine/source.js";
import { OffloadKitError } from "../../src/engine/errors.js";
import { FileSource } from "../../src/node/file-source.js";
import { forEachDecompressed, openDecompressed } from "../../src/compress/node/decompress.js";
import { runInDir } from "../cli/harness.js";

const FIXTURES = new URL("../fixtures/ccob/", import.meta.url).pathname;
const fixture = (name: string) => new Uint8Array(readFileSync(join(FIXTURES, name)));
const plain = fixture("host-gfx906.bc");
const HOST = "host-x86_64-unknown-linux-gnu";
const G906 = "hip-amdgcn-amd-amdhsa--gfx906";
const G90A = "hip-amdgcn-amd-amdhsa--gfx90a";
const root = mkdtempSync(join(tmpdir(), "offload-kit-ccob-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("openDecompressed", () => {
  it("passes uncompressed inputs and short CCOB-looking ones through, as LLVM 19 does", () => {
    const input = openDecompressed(bytesSource(plain));
    expect(input.member).toBeUndefined();
    expect(input.source.size).toBe(plain.length);
    const tiny = new Uint8Array([0x43, 0x43, 0x4f, 0x42, 3, 0, 1, 0, 0, 0, 0, 0]);
    expect(openDecompressed(bytesSource(tiny)).source.size).toBe(12);
  });

  it("decodes big members into a temporary file, removed on close", () => {
    const input = openDecompressed(bytesSource(fixture("host-gfx906.19.ccob")), { inMemoryLimit: 10 });
    expect(input.source).toBeInstanceOf(FileSource);
    const path = (input.source as FileSource).path;
    expect(readExact(input.source, 0, input.source.size)).toEqual(plain);
    input.close();
    expect(existsSync(path)).toBe(false);
  });

  it("refuses a member declaring more than the limit before decoding it", () => {
    let error: unknown;
    try {
      openDecompressed(bytesSource(fixture("host-gfx906.22.ccob")), { maxDecompressedSize: 145 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OffloadKitError);
    expect((error as OffloadKitError).message).toBe(
      "Failed to decompress input: compressed bundle at offset 0 declares 146 uncompressed bytes, more than the limit of 145",
    );
    expect((error as OffloadKitError).offset).toBe(16);
  });

  it("gives the first CCOB to readers and every one to listings", () => {
    const multi = bytesSource(fixture("padded-pair.ccob"));
    expect(openDecompressed(multi).source.size).toBe(plain.length);
    const sizes: number[] = [];
    forEachDecompressed(multi, {}, (input) => sizes.push(input.source.size));
    expect(sizes).toEqual([plain.length, plain.length]);
  });
});

async function bundler(args: string[], env: Record<string, string | undefined> = {}) {
  return runInDir(root, (io) => runBundler("offload-bundler", args, io), { OFFLOAD_BUNDLER_COMPRESS: undefined, OFFLOAD_BUNDLER_VERBOSE: undefined, ...env });
}

describe("offload-bundler on compressed bundles", () => {
  writeFileSync(join(root, "host.txt"), "HOST");
  writeFileSync(join(root, "dev.txt"), "DEV");

  it("lists every CCOB of a concatenation, in file order", async () => {
    const run = await bundler(["-type=bc", "-list", `-input=${join(FIXTURES, "multi.19.ccob")}`]);
    expect(run.code).toBe(0);
    expect(run.stdout.toString()).toBe(`${HOST}-\n${G906}\n${G90A}\n`);
  });

  it("unbundles a v3 file and reports it under -verbose", async () => {
    const run = await bundler(["-type=bc", "-unbundle", `-targets=${G906}`, "-output=out.txt", `-input=${join(FIXTURES, "host-gfx906.22.ccob")}`, "-verbose"]);
    expect(run.code).toBe(0);
    expect(readFileSync(join(root, "out.txt"), "utf8")).toBe("DEV");
    expect(run.stderr).toMatch(/^Compressed bundle format version: 3\nTotal file size \(from header\): 160 bytes\nDecompression method: zstd\n/);
    expect(run.stderr).toContain("Hashes match: Yes\n===---");
    expect(run.stderr).toContain("Decompression time\n");
  });

  it("writes v2 by default, v3 on request, and honours the environment", async () => {
    const args = ["-type=bc", `-targets=${HOST},${G906}`, "-input=host.txt", "-input=dev.txt"];
    expect((await bundler([...args, "-output=c2.ccob", "-compress"])).code).toBe(0);
    expect(new Uint8Array(readFileSync(join(root, "c2.ccob")))).toEqual(fixture("host-gfx906.19.ccob"));
    expect((await bundler([...args, "-output=c3.ccob"], { OFFLOAD_BUNDLER_COMPRESS: "1", COMPRESSED_BUNDLE_FORMAT_VERSION: "3" })).code).toBe(0);
    expect(new Uint8Array(readFileSync(join(root, "c3.ccob")))).toEqual(fixture("host-gfx906.22.ccob"));
    const off = await bundler([...args, "-output=c0.bc", "-compress=false"], { OFFLOAD_BUNDLER_COMPRESS: "1", OFFLOAD_BUNDLER_COMPRESSION_LEVEL: "x" });
    expect(off.stderr).toBe("Warning: Invalid value for OFFLOAD_BUNDLER_COMPRESSION_LEVEL: x. Ignoring it.\n");
    expect(new Uint8Array(readFileSync(join(root, "c0.bc")))).toEqual(plain);
  });

  it("prints LLVM's lines for a compressing -verbose run", async () => {
    const run = await bundler(["-type=bc", `-targets=${HOST},${G906}`, "-input=host.txt", "-input=dev.txt", "-output=v.ccob", "-compress", "-verbose"]);
    const native = readFileSync(join(FIXTURES, "compress.19.stderr"), "utf8");
    const lines = (s: string) => s.split("\n").filter((l) => !/speed|Time|time|^ *-|^ *[\d.]+ \(/.test(l));
    expect(lines(run.stderr)).toEqual(lines(native));
  });

  it("leaves no temporary files behind", () => {
    expect(readdirSync(root).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });
});

describe("offload-kit ls", () => {
  it("shows each compressed bundle and what LLVM would not check", async () => {
    const run = await runInDir(root, (io) => runOffloadKit("offload-kit", ["ls", "-v", join(FIXTURES, "multi.22.ccob"), join(FIXTURES, "hash-zero.ccob")], io));
    expect(run.code).toBe(0);
    const out = run.stdout.toString();
    expect(out).toContain("multi.22.ccob: zstd compressed bundle v3 at 0x0, 160 bytes, hash 0x851c587cb2a6b344: binary bundle at 0x0, 146 bytes");
    expect(out).toContain("multi.22.ccob: zstd compressed bundle v3 at 0xa0,");
    expect(out).toContain("hash-zero.ccob: at 0x0: stored hash 0x00000000000000 does not match the contents (0x851c587cb2a6b344); LLVM does not check it");
  });
});
