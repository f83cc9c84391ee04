// The page's streaming zip writer (src/inspector/zip.ts) read back by Info-ZIP's unzip and by zlib's CRC:
// names, bytes and CRCs as written, zip64 records where unzip looks for them, Blob parts passed through.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crc32 as zlibCrc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { BlobPartsSink, crc32, writeZip } from "../../src/inspector/zip.js";
import { nativeTool } from "../native.js";

const UNZIP = nativeTool("unzip") !== undefined;

describe("zip writer", () => {
  it("computes zlib's CRC-32 at every length and split", () => {
    const bytes = new Uint8Array(1031).map((_, i) => (i * 7919) & 0xff);
    for (const n of [0, 1, 3, 4, 5, 100, 1031]) expect(crc32(bytes.subarray(0, n)), String(n)).toBe(zlibCrc32(bytes.subarray(0, n)));
    expect(crc32(bytes.subarray(517), crc32(bytes.subarray(0, 517)))).toBe(zlibCrc32(bytes));
  });

  it.skipIf(!UNZIP)("writes a zip unzip tests clean and extracts byte for byte", async () => {
    const dir = mkdtempSync(join(tmpdir(), "offload-kit-zip-"));
    try {
      const big = new Uint8Array(300_000).map((_, i) => (i * 31) & 0xff);
      const entries = [
        { name: "lib.so-0-hipv4-amdgcn-amd-amdhsa--gfx90a_xnack-", data: new Blob([big]).slice(1000, 250_000) },
        { name: "empty", data: new Uint8Array(0) },
        { name: "dir/é.bin", data: new Uint8Array([1, 2, 3]) },
      ];
      const sink = new BlobPartsSink();
      const size = await writeZip(entries, sink);
      const blob = sink.blob();
      expect(blob.size).toBe(size);
      const zip = join(dir, "out.zip");
      writeFileSync(zip, new Uint8Array(await blob.arrayBuffer()));
      const test = spawnSync("unzip", ["-t", zip], { encoding: "utf8" });
      expect(test.status, test.stdout + test.stderr).toBe(0);
      expect(test.stdout).toContain("No errors detected");
      expect(spawnSync("unzip", ["-q", zip, "-d", join(dir, "x")]).status).toBe(0);
      expect(Buffer.compare(readFileSync(join(dir, "x", entries[0]!.name)), Buffer.from(big.subarray(1000, 250_000)))).toBe(0);
      expect(readFileSync(join(dir, "x", "empty")).length).toBe(0);
      expect([...readFileSync(join(dir, "x", "dir/é.bin"))]).toEqual([1, 2, 3]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
