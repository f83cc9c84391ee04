// offload-wrapper (the built bin) on an image over 4 GiB: LLVM's reader takes a record's element count as 32 bits,
// so the bitcode such an image needs cannot be read back (llvm-dis 14 and 22: "Malformed global initializer set";
// the native wrappers write it anyway, after holding the image and a 33 GB record in memory). Ours refuses with
// one error naming the image, before creating any output, in both flavours and for -S. The image is a sparse
// file (no disk used) ending in a non-zero byte, so it is classified from its last byte and refused at once.
// A zero image of that size is a zeroinitializer and is written: bench/wrapper-big-image.mjs checks that one
// with llvm-dis (it reads 4 GiB, too slow for the suite).
import { spawnSync } from "node:child_process";
import { closeSync, openSync, readdirSync, writeSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scratchDir } from "./harness.js";
import { HANG_MS } from "../limits.js";

const BIN = new URL("../../dist/bin/offload-wrapper.js", import.meta.url).pathname;
const SIZE = 4_400_000_000;

function sparseImage(path: string, size: number): void {
  const fd = openSync(path, "w");
  try {
    writeSync(fd, Uint8Array.of(1), 0, 1, size - 1);
  } finally {
    closeSync(fd);
  }
}

describe("offload-wrapper: an image over 4 GiB", () => {
  it("is refused with one error naming it, before any output exists (14, 22 and -S)", () => {
    const dir = scratchDir("offload-kit-wrapper-big-");
    sparseImage(join(dir, "big.bin"), SIZE);
    const message = `error: 'big.bin': an image of ${SIZE} bytes does not fit LLVM bitcode: the record holding its bytes has at most 4294967295 elements (LLVM reads the count as 32 bits)\n`;
    const cases = [
      ["--target=x86_64-pc-linux-gnu", "-o", "out.bc", "big.bin"],
      ["--target=x86_64-pc-linux-gnu", "-o", "-", "big.bin"],
      ["--kind=openmp", "-o", "out.bc", "big.bin"],
      ["--kind=hip", "-o", "out.bc", "big.bin"],
      ["--kind=openmp", "-S", "-o", "out.ll", "big.bin"],
    ];
    for (const args of cases) {
      const r = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, encoding: "utf8", timeout: HANG_MS, killSignal: "SIGKILL" });
      expect({ args, status: r.status, stdout: r.stdout }).toEqual({ args, status: 1, stdout: "" });
      expect(r.stderr).toBe(`${BIN}: ${message}`);
      expect(readdirSync(dir)).toEqual(["big.bin"]);
    }
  });
});
