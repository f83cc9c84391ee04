// `offload-kit unkpack` of rocm-kpack's own output (test/fixtures/kpack/standin, made by
// test/fixtures/make-kpack-standin-fixtures.sh with rocm-kpack e3483286): its zero-paged `.hip_fatbin` gets its
// pages back and the code objects from its archives, and the preloaded stand-in HIP runtime records the same
// registrations as the library or program before rocm-kpack split it; eu-elflint says what it said of the original.
import { cpSync, readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { bytesSource } from "../../src/engine/source.js";
import { readKpackHost } from "../../src/kpack/host.js";
import { Workshop, standinTools } from "../elf-edit/standin.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";

const FIXTURES = join(import.meta.dirname, "../fixtures/kpack/standin");
const TARGETS = [
  { file: "lib/liba.so", executable: false },
  { file: "lib/libccob.so", executable: false },
  { file: "bin/pie", executable: true },
];

/** The log with what only says how a fat binary was stored (a CCOB is put back as a plain bundle) left out. */
const entriesOnly = (log: string) => log.replace(/^fatbin (\d+) .*$/gm, "fatbin $1");

function elflint(file: string): string {
  const r = spawnSync("eu-elflint", ["--gnu-ld", file], { encoding: "latin1", timeout: HANG_MS });
  return r.stdout + r.stderr;
}

describe.runIf(standinTools())("unkpack of rocm-kpack's split", () => {
  const dir = scratchDir("offload-kit-unkpack-rocm-");
  const kit = (...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
  const shop = new Workshop();
  afterAll(() => shop.remove());
  cpSync(FIXTURES, join(dir, "t"), { recursive: true });

  it("registers what the original registered, entry for entry, and lints as the original", async () => {
    for (const { file } of TARGETS) {
      const split = new Uint8Array(readFileSync(join(dir, "t/split", file)));
      expect(readKpackHost(bytesSource(split)), file).toBeDefined();
      // What the split binary registers: wrappers the stand-in cannot read (HIPK), nothing else.
      expect(shop.registrations(join(dir, "t/split", file), file.startsWith("bin/"))).toContain("bad-wrapper");
    }
    const run = await kit("unkpack", ...TARGETS.map(({ file }) => `t/split/${file}`));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.toString()).toContain("t/split/lib/liba.so: 2 wrappers, 6 code objects put back");
    for (const { file, executable } of TARGETS) {
      const back = join(dir, "t/split", file);
      const orig = join(dir, "t/orig", file);
      expect(readKpackHost(bytesSource(new Uint8Array(readFileSync(back)))), file).toBeUndefined();
      const want = shop.registrations(orig, executable);
      expect(want).toContain("entry hipv4-amdgcn-amd-amdhsa--gfx90a");
      const got = shop.registrations(back, executable);
      if (file === "lib/libccob.so") {
        expect(want).toContain("ccob");
        expect(entriesOnly(got), file).toBe(entriesOnly(want));
      } else {
        expect(got, file).toBe(want);
      }
      expect(elflint(back), file).toBe(elflint(orig));
    }
  });

  it("gives back the original's bytes where the bundles fit their old place: only the ELF header differs", () => {
    // liba.so: plain bundles, so clang-offload-bundler's layout puts them where they were; rocm-kpack's marker and
    // program header pages stay after the original's last byte.
    const orig = readFileSync(join(dir, "t/orig/lib/liba.so"));
    const back = readFileSync(join(dir, "t/split/lib/liba.so"));
    expect(back.length).toBeGreaterThan(orig.length);
    expect(back.subarray(64, orig.length).equals(orig.subarray(64))).toBe(true);
  });

  it("refuses, naming the key, a host whose archives lack a wrapper's code objects (rocm-kpack's -fgpu-rdc split)", async () => {
    // rocm-kpack files only wrapper 0 of an -fgpu-rdc library whose two wrappers share one fat binary: wrapper 1's
    // key is in no archive, which check reports too.
    const before = readFileSync(join(dir, "t/split/lib/librdc.so"));
    const run = await kit("unkpack", "t/split/lib/librdc.so");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("no installed archive holds 'stage/lib/librdc.so#1'");
    expect(readFileSync(join(dir, "t/split/lib/librdc.so")).equals(before)).toBe(true);
    expect((await kit("check", "--gpu=gfx90a", "t/split/lib/librdc.so")).code).toBe(1);
  });
});

describe("refilling a damaged rocm-kpack host", () => {
  it("throws only typed errors for mutated headers, and what it returns opens again", async () => {
    const { OffloadKitError } = await import("../../src/engine/errors.js");
    const { openLinkedElf } = await import("../../src/elf-edit/elf64.js");
    const { refillZeroPagedHost } = await import("../../src/kpack/refill.js");
    let seed = 25;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    let refused = 0;
    let accepted = 0;
    for (const file of ["lib/liba.so", "lib/libccob.so", "bin/pie"]) {
      const input = new Uint8Array(readFileSync(join(FIXTURES, "split", file)));
      const view = new DataView(input.buffer);
      const phoff = Number(view.getBigUint64(32, true));
      const shoff = Number(view.getBigUint64(40, true));
      const phnum = view.getUint16(56, true);
      const shnum = view.getUint16(60, true);
      for (let i = 0; i < 150; i++) {
        const bytes = input.slice();
        // One to three bytes of the program or section header tables (offsets, sizes, types) changed.
        for (let n = 1 + (next() % 3); n > 0; n--) {
          const at = next() % 2 === 0 ? phoff + (next() % (phnum * 56)) : shoff + (next() % (shnum * 64));
          bytes[at] = next() % 256;
        }
        let host;
        try {
          host = readKpackHost(bytesSource(bytes));
        } catch (e) {
          expect(e).toBeInstanceOf(OffloadKitError);
          continue;
        }
        if (host === undefined) continue;
        try {
          const out = refillZeroPagedHost(bytes, host);
          openLinkedElf(bytesSource(out));
          accepted++;
        } catch (e) {
          expect(e, String(e)).toBeInstanceOf(OffloadKitError);
          refused++;
        }
      }
    }
    expect(accepted).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });
});
