// The proof that an edited library still works: HIP programs built here with clang-19 (shared
// libraries and executables, lld and GNU ld, PIE and non-PIE, -fgpu-rdc, RELR, CCOB) are rewritten
// keeping only the gfx90a entries of each plain fat binary (CCOBs kept as they are, but moved), and a
// stand-in HIP runtime preloaded ahead of libamdhip64 records what their constructors register:
// the same fat binaries, each with exactly the kept entries, byte-identical; the same functions and
// variables. Then `nm -D` is identical, llvm-readelf -a and eu-elflint --gnu-ld report nothing new,
// and `strip` still works on the output (whose stripped copy registers the same).
import { readFileSync, statSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keepBundleEntries, rebundleEntries } from "../../src/elf-edit/compose.js";
import { rewriteHipFatbinFile } from "../../src/elf-edit/node.js";
import type { FatbinBundle } from "../../src/elf-edit/hip-fatbin.js";
import type { RewritePlan } from "../../src/elf-edit/rewrite.js";
import { CASES, Workshop, keepEntries, run, standinTools } from "./standin.js";
import { changedLoadedSections, loadedBytes } from "./synthetic.js";
import { HANG_MS } from "../limits.js";

const available = standinTools();
const keep = (id: string): boolean => id.startsWith("host-") || id.endsWith("gfx90a");
const prune = { bundles: (b: FatbinBundle) => (b.format === "bundle" ? keepBundleEntries(b.source, keep) : undefined) };

/** Diagnostics a checker prints, with the file name taken out (so original and output compare). */
function diagnostics(text: string, file: string): string[] {
  return [...new Set(text.split("\n").map((l) => l.split(file).join("FILE").trim()).filter((l) => l !== ""))].sort();
}

describe.skipIf(!available)("edited HIP programs register the same device code (stand-in runtime)", () => {
  let shop: Workshop;
  beforeAll(() => {
    shop = new Workshop();
  }, HANG_MS);
  afterAll(() => shop?.remove());

  /** The output registers `expected`, and every checker sees what it saw in the original. */
  function verify(original: string, output: string, expected: string, executable: boolean, plan: RewritePlan): void {
    expect(statSync(output).mode).toBe(statSync(original).mode);
    expect(shop.registrations(output, executable)).toBe(expected);
    // Symbols defined at a fat binary (-fgpu-rdc exports __hip_fatbin_<cuid>) follow it; all else is unchanged.
    const newAddress = new Map(plan.bundles.map((m) => [m.oldAddress, m.newAddress]));
    const moved = (line: string): string => {
      const m = /^([0-9a-f]{16}) (.*__hip_fatbin_.*)$/.exec(line);
      const address = m ? newAddress.get(parseInt(m[1], 16)) : undefined;
      return address === undefined ? line : `${address.toString(16).padStart(16, "0")} ${m![2]}`;
    };
    const nm = (f: string) => run("nm", ["-D", f]).stdout.split("\n");
    expect(nm(output)).toEqual(nm(original).map(moved));
    // Everything but the edited sections loads at the same addresses with the same bytes.
    // An executable's .interp and notes may have moved into the freed gap to make room for its longer
    // program header table: the same bytes at their new addresses.
    const edited = [".hip_fatbin", ".hipFatBinSegment", ".rela.dyn", ".dynsym", ...plan.movedSections.map((s) => s.name)];
    expect(changedLoadedSections(readFileSync(original), readFileSync(output), edited)).toEqual([]);
    for (const s of plan.movedSections) {
      expect(Buffer.from(loadedBytes(readFileSync(output), s.newAddress, s.size)!)).toEqual(Buffer.from(loadedBytes(readFileSync(original), s.oldAddress, s.size)!));
    }
    const readelf = (f: string) => run("llvm-readelf-19", ["-a", f]);
    const r0 = readelf(original);
    const r1 = readelf(output);
    expect(r1.status).toBe(r0.status);
    expect(diagnostics(r1.stderr, output).filter((l) => !diagnostics(r0.stderr, original).includes(l))).toEqual([]);
    const lint = (f: string) => run("eu-elflint", ["--gnu-ld", f]);
    expect(diagnostics(lint(output).stdout, output)).toEqual(diagnostics(lint(original).stdout, original));
    const stripped = `${output}.stripped`;
    const strip = run("llvm-strip-19", ["-o", stripped, output]);
    expect(strip.stderr).toBe("");
    expect(strip.status).toBe(0);
    expect(shop.registrations(stripped, executable)).toBe(expected);
  }

  it.each(CASES.map((c, i) => [c.name, c, i] as const))("%s", (_name, c, i) => {
    const original = shop.program(c, `case${i}`);
    const before = shop.registrations(original, c.executable);
    expect(before).toMatch(/^fatbin 0 /m);
    expect(before).toMatch(/^function /m);

    const output = `${original}.pruned`;
    const plan = rewriteHipFatbinFile(original, output, prune);
    expect(plan.shift).toBeGreaterThan(0);
    expect(plan.relocated).toBe(false);
    expect(statSync(output).size).toBe(plan.outputSize);
    expect(plan.outputSize).toBeLessThan(statSync(original).size);
    const expected = keepEntries(before, keep);
    expect(expected).not.toBe(before);
    verify(original, output, expected, c.executable, plan);

    // Bundles that grow (every payload now 16 KiB-aligned) move to a new PT_LOAD at the end of the file.
    const grown = `${original}.grown`;
    const moved = rewriteHipFatbinFile(original, grown, {
      bundles: (b) => (b.format === "bundle" ? rebundleEntries(b.source, () => true, 16384) : undefined),
    });
    expect(moved.relocated).toBe(true);
    expect(statSync(grown).size).toBe(moved.outputSize);
    verify(original, grown, before, c.executable, moved);
  }, HANG_MS);

  // Stripping first and editing then works as well (the other order, every strip tool on edited
  // outputs, is test/elf-edit/strip-tools.test.ts).
  it.each([CASES[1], CASES[7]].map((c) => [c.name, c] as const))("GNU strip, then edit: %s", (_name, c) => {
    const original = shop.program(c, `gnu-strip-${c.executable ? "exe" : "lib"}`);
    const stripped = `${original}.stripped`;
    const strip = run("strip", ["-o", stripped, original]);
    expect([strip.status, strip.stderr]).toEqual([0, ""]);
    const before = shop.registrations(stripped, c.executable);
    const output = `${stripped}.pruned`;
    const plan = rewriteHipFatbinFile(stripped, output, prune);
    expect(plan.shift).toBeGreaterThan(0);
    verify(stripped, output, keepEntries(before, keep), c.executable, plan);
  }, HANG_MS);

  it("a rewrite that replaces nothing gives the input back byte for byte", () => {
    const original = shop.program(CASES[0], "identity");
    const output = `${original}.same`;
    const plan = rewriteHipFatbinFile(original, output);
    expect(plan.shift).toBe(0);
    expect(Buffer.compare(readFileSync(output), readFileSync(original))).toBe(0);
  }, HANG_MS);
});
