// `strip` still works on what `offload-kit prune` writes: GNU strip (binutils/BFD), eu-strip (elfutils'
// libelf) and llvm-strip-19 each run on the pruned output of every HIP program the elf-edit tests build
// (lld and GNU ld, PIE and non-PIE, shared libraries and executables, -fgpu-rdc, RELR, CCOB), on what
// `offload-kit replace` writes when the new code object no longer fits (.hip_fatbin relocated), and on
// the pruned output of Debian's librocrand1 and librocsparse0. Each tool must succeed without a word, and its output must still
// work: the stand-in HIP runtime registers the same fat binaries with the same entries, byte-identical,
// as the pruned file; `nm -D` is the original's; llvm-readelf -a and eu-elflint --gnu-ld find nothing
// that the same tool's output of the original did not show. The tools' layout rules this holds against
// are in README ("strip").
import { spawnSync } from "node:child_process";
import { existsSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CASES, Workshop, keepEntries, run, standinTools } from "./standin.js";
import { nativeTool } from "../native.js";
import { HANG_MS } from "../limits.js";

const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;
const required = process.env.OFFLOAD_KIT_REQUIRE_NATIVE === "1";
const STRIPS = ["strip", "eu-strip", "llvm-strip-19"] as const;
const available = standinTools() && STRIPS.every((t) => nativeTool(t) !== undefined);
/** What --keep=gfx90a keeps (src/prune/select.ts). */
const keep90a = (id: string): boolean => id.startsWith("host-") || /--gfx90a(:|$)/.test(id);

function prune(input: string, output: string): { saved: number; dropped: number } {
  const r = spawnSync(process.execPath, [BIN, "prune", "--keep=gfx90a", "--json", input, "-o", output], { encoding: "utf8", timeout: HANG_MS, maxBuffer: 1 << 28 });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  const file = JSON.parse(r.stdout).files[0];
  const dropped = file.entries.filter((e: { kept: boolean }) => !e.kept).reduce((n: number, e: { size: number }) => n + e.size, 0);
  return { saved: file.saved, dropped };
}

/** Diagnostics a checker prints, with the file name taken out (so two files compare). */
function diagnostics(text: string, file: string): string[] {
  return [...new Set(text.split("\n").map((l) => l.split(file).join("FILE").trim()).filter((l) => l !== ""))].sort();
}

const readelfDiagnostics = (f: string): string[] => diagnostics(run("llvm-readelf-19", ["-a", f]).stderr, f);
const elflintDiagnostics = (f: string): string[] => diagnostics(run("eu-elflint", ["--gnu-ld", f]).stdout, f);

function strip(tool: string, input: string, output: string): void {
  rmSync(output, { force: true });
  const r = run(tool, ["-o", output, input]);
  expect({ tool, status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ tool, status: 0, stdout: "", stderr: "" });
}

describe.skipIf(!available)("strip tools on pruned HIP programs (stand-in runtime)", () => {
  let shop: Workshop;
  beforeAll(() => {
    shop = new Workshop();
  }, HANG_MS);
  afterAll(() => shop?.remove());

  /**
   * Strips `pruned` with each tool and checks the result against the pruned file (`nm -D`: RDC's
   * __hip_fatbin_<cuid> symbols follow their fat binary, registration.test.ts checks that against the
   * original) and the original stripped by the same tool.
   */
  function verifyStripped(original: string, pruned: string, executable: boolean, registered: string): void {
    const nm = run("nm", ["-D", pruned]).stdout;
    for (const tool of STRIPS) {
      const stripped = `${pruned}.${tool}`;
      strip(tool, pruned, stripped);
      expect({ tool, log: shop.registrations(stripped, executable) }).toEqual({ tool, log: registered });
      expect({ tool, nm: run("nm", ["-D", stripped]).stdout }).toEqual({ tool, nm });
      // The same tool's output of the original is the baseline for what the checkers may report.
      const baseline = `${original}.${tool}`;
      strip(tool, original, baseline);
      const newReadelf = readelfDiagnostics(stripped).filter((l) => !readelfDiagnostics(baseline).includes(l));
      expect({ tool, newReadelf }).toEqual({ tool, newReadelf: [] });
      const newLint = elflintDiagnostics(stripped).filter((l) => !elflintDiagnostics(baseline).includes(l));
      expect({ tool, newLint }).toEqual({ tool, newLint: [] });
      rmSync(stripped, { force: true });
      rmSync(baseline, { force: true });
    }
  }

  it.each(CASES.map((c, i) => [c.name, c, i] as const))("%s", (_name, c, i) => {
    const original = shop.program(c, `strip${i}`);
    const before = shop.registrations(original, c.executable);
    const pruned = `${original}.pruned`;
    const { saved } = prune(original, pruned);
    expect(saved).toBeGreaterThan(0);
    const registered = shop.registrations(pruned, c.executable);
    expect(registered).toBe(keepEntries(before, keep90a, true));
    verifyStripped(original, pruned, c.executable, registered);

    // A code object larger than the fat binary: .hip_fatbin moves to a new PT_LOAD at the end.
    const code = join(shop.dir, `strip${i}-big.co`);
    writeFileSync(code, new Uint8Array(300_000).map((_, k) => (k * 13 + i) & 0xff));
    const replaced = `${original}.replaced`;
    const r = spawnSync(process.execPath, [BIN, "replace", "--entry=hipv4-amdgcn-amd-amdhsa--gfx90a", "--bundle=0", `--with=${code}`, original, "-o", replaced], { encoding: "utf8", timeout: HANG_MS });
    expect([r.status, r.stderr]).toEqual([0, ""]);
    const swapped = shop.registrations(replaced, c.executable);
    expect(swapped).not.toBe(before);
    verifyStripped(original, replaced, c.executable, swapped);
  }, HANG_MS);

  // librocsparse0 is 1.3 GB: its pruned copy (370 MB) and each stripped copy go to /dev/shm when there is
  // one, one at a time, and are removed as soon as they are checked.
  it.each([
    ["/usr/lib/x86_64-linux-gnu/librocrand.so.1.1"],
    ["/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1"],
  ])("Debian: %s", (library) => {
    if (!existsSync(library)) {
      if (required) throw new Error(`${library} is required (OFFLOAD_KIT_REQUIRE_NATIVE=1)`);
      return;
    }
    const scratch = existsSync("/dev/shm") ? "/dev/shm" : shop.dir;
    const pruned = join(scratch, `offload-kit-${process.pid}-strip.so`);
    try {
      const { saved, dropped } = prune(library, pruned);
      // Page rounding and the table's own page cost a little: at least 95% of the dropped bytes leave the file.
      expect(saved).toBeGreaterThanOrEqual(0.95 * dropped);
      expect(statSync(pruned).size).toBe(statSync(library).size - saved);
      const registered = shop.registrations(pruned, false);
      expect(registered).toBe(keepEntries(shop.registrations(library, false), keep90a, true));
      const nm = run("nm", ["-D", library]).stdout;
      for (const tool of STRIPS) {
        const stripped = `${pruned}.${tool}`;
        try {
          strip(tool, pruned, stripped);
          expect({ tool, log: shop.registrations(stripped, false) }).toEqual({ tool, log: registered });
          expect({ tool, nm: run("nm", ["-D", stripped]).stdout }).toEqual({ tool, nm });
          const newLint = elflintDiagnostics(stripped).filter((l) => !elflintDiagnostics(library).includes(l));
          expect({ tool, newLint }).toEqual({ tool, newLint: [] });
        } finally {
          rmSync(stripped, { force: true });
        }
      }
    } finally {
      rmSync(pruned, { force: true });
    }
  }, HANG_MS);
});
