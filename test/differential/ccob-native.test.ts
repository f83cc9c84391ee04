// Compressed bundles against the native tools: clang-offload-bundler-19 must unbundle the v2 files we
// write and -22 the v3 ones (including multi-frame files from large bundles), and we must read what
// they write; header fields and hash must equal theirs for the same input. The golden -list outputs of
// both tools on every fixture (test/fixtures/ccob/*.list{19,22}.txt) are compared with ours; where the
// native tools fail and we read the file, the difference is asserted as documented, not skipped.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runBundler } from "../../src/cli/offload-bundler.js";
import { ZSTD_FRAME_CHUNK } from "../../src/bundler/compressed.js";
import { SINGLE_FRAME_MAX } from "../../src/compress/node/compress.js";
import { walkZstdFrames } from "../../src/compress/zstd-frames.js";
import { parseCcobHeader } from "../../src/formats/ccob.js";
import { runInDir } from "../cli/harness.js";
import { hasNative, runNative } from "../native.js";
import { HANG_MS } from "../limits.js";

const FIXTURES = new URL("../fixtures/ccob/", import.meta.url).pathname;
const HOST = "host-x86_64-unknown-linux-gnu";
const G906 = "hip-amdgcn-amd-amdhsa--gfx906";
const G90A = "hip-amdgcn-amd-amdhsa--gfx90a";
const root = mkdtempSync(join(tmpdir(), "offload-kit-ccob-diff-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ENV = { OFFLOAD_BUNDLER_COMPRESS: undefined, OFFLOAD_BUNDLER_VERBOSE: undefined, COMPRESSED_BUNDLE_FORMAT_VERSION: undefined };

async function ours(args: string[], env: Record<string, string | undefined> = {}) {
  const run = await runInDir(root, (io) => runBundler("offload-bundler", args, io), { ...ENV, ...env });
  return { ...run, stderr: run.stderr.replace(/^offload-bundler: /gm, "") };
}

/** Deterministic inputs: text-like (compressible) or xorshift noise, of a given size. */
function makeInput(name: string, size: number, compressible: boolean, seed: number): string {
  const bytes = new Uint8Array(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    bytes[i] = compressible ? 0x61 + (x % 7) : x & 0xff;
  }
  writeFileSync(join(root, name), bytes);
  return name;
}

const sorted = (text: string) => text.split("\n").filter(Boolean).sort().join("\n");

describe("golden -list outputs of LLVM 19 and 22", () => {
  // Files both native tools read: our -list must give the same IDs (we print file order, they print
  // StringMap order; the sets are compared).
  const files = readdirSync(FIXTURES).filter((f) => f.endsWith(".ccob"));
  it.each(files)("%s", async (file) => {
    const n19 = readFileSync(join(FIXTURES, file.replace(/\.ccob$/, ".list19.txt")), "utf8");
    const n22 = readFileSync(join(FIXTURES, file.replace(/\.ccob$/, ".list22.txt")), "utf8");
    const run = await ours(["-type=bc", "-list", `-input=${join(FIXTURES, file)}`]);
    const mine = run.code === 0 ? run.stdout.toString() : `${run.stderr}exit ${run.code}\n`;
    const native19Failed = n19.includes("\nexit 1\n") || n19.startsWith("error:");
    const documented: Record<string, string> = {
      // 22 reads v3 (19 misreads its header): we read every version.
      "host-gfx906.22.ccob": "22",
      "gfx90a.22.ccob": "22",
      "v3-zlib.ccob": "22",
      // Walked by header sizes: both natives fail on a second CCOB or trailing bytes.
      "multi.19.ccob": "all",
      "multi.22.ccob": "all",
      "padded-pair.ccob": "all",
      "trailing-garbage.ccob": "all",
      // 19 reads unknown versions >= 2 as v2; 22 refuses them ("header size too small"); we refuse them.
      "version-9.ccob": "refuse",
    };
    const rule = documented[file];
    if (rule === undefined) {
      if (native19Failed) expect(mine).toBe(n19);
      else expect(sorted(mine)).toBe(sorted(n19));
    } else if (rule === "22") {
      expect(sorted(mine)).toBe(sorted(n22));
    } else if (rule === "all") {
      expect(run.code).toBe(0);
      expect(n19).toMatch(/Src size is incorrect|Unknown frame descriptor/);
      expect(n22).toMatch(/Src size is incorrect/);
    } else {
      expect(mine).toBe("error: Failed to decompress input: Unknown compressed bundle version\nexit 1\n");
    }
  });
});

describe.skipIf(!hasNative("clang-offload-bundler-19") || !hasNative("clang-offload-bundler-22"))("native tools read what we write", () => {
  const cases: [string, () => string[]][] = [
    ["small", () => [makeInput("s-host", 10, true, 1), makeInput("s-dev", 100, true, 2)]],
    ["1 MiB noise", () => [makeInput("m-host", 1000, false, 3), makeInput("m-dev", 1 << 20, false, 4)]],
    ["multi-frame (7 zstd frames)", () => [makeInput("l-host", 4096, true, 5), makeInput("l-dev", SINGLE_FRAME_MAX + 2 * ZSTD_FRAME_CHUNK + 77777, true, 6)]],
  ];
  it.each(cases)("%s: 19 unbundles our v2, 22 our v3; both headers equal theirs", async (_, make) => {
    const [host, dev] = make();
    const bundleArgs = ["-type=bc", `-targets=${HOST},${G906}`, `-input=${host}`, `-input=${dev}`];
    for (const [version, native] of [["2", "clang-offload-bundler-19"], ["3", "clang-offload-bundler-22"]] as const) {
      const out = `ours.v${version}.ccob`;
      const mine = await ours([...bundleArgs, `-output=${out}`, "-compress"], { COMPRESSED_BUNDLE_FORMAT_VERSION: version });
      expect(mine.code, mine.stderr).toBe(0);
      const theirs = runNative(native, [...bundleArgs, `-output=theirs.v${version}.ccob`, "-compress"], { cwd: root, env: { ...process.env, COMPRESSED_BUNDLE_FORMAT_VERSION: version } });
      expect(theirs.status, theirs.stderr).toBe(0);
      const a = new Uint8Array(readFileSync(join(root, out)));
      const b = new Uint8Array(readFileSync(join(root, `theirs.v${version}.ccob`)));
      const ha = parseCcobHeader(a);
      const hb = parseCcobHeader(b);
      expect({ ...ha, rawTotalSize: 0 }).toEqual({ ...hb, rawTotalSize: 0 });
      expect(ha.rawTotalSize).toBe(a.length);
      const frames = walkZstdFrames((p, n) => a.subarray(p, p + n), ha.headerSize, a.length - ha.headerSize);
      expect(frames.length).toBe(ha.uncompressedSize <= SINGLE_FRAME_MAX ? 1 : Math.ceil(ha.uncompressedSize / ZSTD_FRAME_CHUNK));
      const unbundled = runNative(native, ["-type=bc", "-unbundle", `-targets=${HOST},${G906}`, `-input=${out}`, "-output=u-host", "-output=u-dev"], { cwd: root });
      expect(unbundled.status, unbundled.stderr).toBe(0);
      expect(Buffer.compare(readFileSync(join(root, "u-host")), readFileSync(join(root, host)))).toBe(0);
      expect(Buffer.compare(readFileSync(join(root, "u-dev")), readFileSync(join(root, dev)))).toBe(0);
      // And we read theirs.
      const back = await ours(["-type=bc", "-unbundle", `-targets=${G906}`, `-input=theirs.v${version}.ccob`, "-output=o-dev"]);
      expect(back.code, back.stderr).toBe(0);
      expect(Buffer.compare(readFileSync(join(root, "o-dev")), readFileSync(join(root, dev)))).toBe(0);
    }
  }, HANG_MS);

  it("text bundles and zlib-free levels: 19 reads our -compression-level=19 and -type=i output", async () => {
    makeInput("t-host", 300, true, 7);
    makeInput("t-dev", 5000, true, 8);
    for (const args of [["-type=i", "-compression-level=19"], ["-type=bc", "-compression-level=1"]]) {
      const r = await ours([...args, `-targets=${HOST},${G90A}`, "-input=t-host", "-input=t-dev", "-output=t.ccob", "-compress"]);
      expect(r.code, r.stderr).toBe(0);
      const n = runNative("clang-offload-bundler-19", [args[0], "-unbundle", `-targets=${G90A}`, "-input=t.ccob", "-output=t-out"], { cwd: root });
      expect(n.status, n.stderr).toBe(0);
      expect(Buffer.compare(readFileSync(join(root, "t-out")), readFileSync(join(root, "t-dev")))).toBe(0);
    }
  });
});

const BUILT = new URL("../../dist/bin/offload-bundler.js", import.meta.url).pathname;

describe.skipIf(!existsSync(BUILT) || !hasNative("clang-offload-bundler-19") || !hasNative("clang-offload-bundler-22"))(
  "the built CLI (frames compressed and decoded on worker threads)",
  () => {
    it("writes what 19 and 22 unbundle, and reads its own frames back in parallel", () => {
      const host = makeInput("w-host", 1000, true, 9);
      const dev = makeInput("w-dev", SINGLE_FRAME_MAX + 5 * ZSTD_FRAME_CHUNK + 3, true, 10);
      const built = (args: string[], env: Record<string, string> = {}) =>
        spawnSync(process.execPath, [BUILT, ...args], { cwd: root, encoding: "utf8", env: { ...process.env, ...env } });
      for (const [version, native] of [["2", "clang-offload-bundler-19"], ["3", "clang-offload-bundler-22"]] as const) {
        const made = built(["-type=bc", `-targets=${HOST},${G906}`, `-input=${host}`, `-input=${dev}`, `-output=w${version}.ccob`, "-compress"], {
          COMPRESSED_BUNDLE_FORMAT_VERSION: version,
        });
        expect([made.status, made.stderr]).toEqual([0, ""]);
        const file = new Uint8Array(readFileSync(join(root, `w${version}.ccob`)));
        const header = parseCcobHeader(file);
        expect(walkZstdFrames((p, n) => file.subarray(p, p + n), header.headerSize, file.length - header.headerSize)).toHaveLength(
          Math.ceil(header.uncompressedSize / ZSTD_FRAME_CHUNK),
        );
        const theirs = runNative(native, ["-type=bc", "-unbundle", `-targets=${G906}`, `-input=w${version}.ccob`, "-output=w-native"], { cwd: root });
        expect(theirs.status, theirs.stderr).toBe(0);
        const mine = built(["-type=bc", "-unbundle", `-targets=${G906}`, `-input=w${version}.ccob`, "-output=w-ours"]);
        expect([mine.status, mine.stderr]).toEqual([0, ""]);
        for (const out of ["w-native", "w-ours"]) expect(Buffer.compare(readFileSync(join(root, out)), readFileSync(join(root, dev)))).toBe(0);
      }
    }, HANG_MS);
  },
);
