// NVIDIA fatbins judged by NVIDIA's cuobjdump (12.4, from Debian's nvidia-cuda-toolkit; scripts/fetch-cuobjdump.sh):
// for every fixture nvcc 13 made, `offload-kit ls --json` lists the cubins and PTX `cuobjdump -all -lelf -lptx` lists,
// in the same order with the same archs, and `offload-kit extract` writes the files `cuobjdump -all -xelf all -xptx all`
// writes, same names, same bytes (zstd entries decoded). Skips without cuobjdump; fails under OFFLOAD_KIT_REQUIRE_NATIVE=1.
import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { NV_FATBIN_FIXTURES, NV_FIXTURES } from "../fixtures/nv/sections.js";
import { hasNative, runNative } from "../native.js";

const CUOBJDUMP = "cuobjdump";
const FIXTURES = [...NV_FATBIN_FIXTURES, "kernels.sm_86.cubin"];

/** `ELF file    1: kernels.1.sm_75.cubin` lines, as [kind, name]; archive member headers dropped. */
function cuobjdumpListing(path: string): string[][] {
  const run = runNative(CUOBJDUMP, ["-all", "-lelf", "-lptx", path]);
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.toString().split("\n").flatMap((line) => {
    const m = /^(ELF|PTX) file\s+\d+: (.*)$/.exec(line);
    return m === null ? [] : [[m[1]!, m[2]!]];
  });
}

describe.runIf(hasNative(CUOBJDUMP))("NVIDIA fatbins vs cuobjdump", () => {
  const dir = scratchDir("offload-kit-cuobjdump-");
  const kit = (...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));

  it.each(FIXTURES)("%s: ls lists the cubins and PTX cuobjdump -all lists, in its order", async (name) => {
    const path = join(NV_FIXTURES, name);
    const listed = cuobjdumpListing(path);
    expect(listed.length).toBeGreaterThan(0);
    const run = await kit("ls", "--json", path);
    expect(run.code, run.stderr.toString()).toBe(0);
    const report = JSON.parse(run.stdout.toString()).files[0];
    const ours: string[][] = [];
    for (const bundle of report.bundles) {
      bundle.entries.forEach((e: { id: string }, i: number) => {
        const kind = bundle.format === "cubin" || bundle.nvFatbin.entries[i].kind === 2 ? "ELF" : "PTX";
        ours.push([kind, e.id]);
      });
    }
    // cuobjdump 12.4 names an entry by its arch number (sm_90a is "sm_90"; PTX is "sm_NN" too): compare by number.
    const number = (id: string) => /_(\d+)/.exec(id)![1];
    const byKind = (rows: string[][], kind: string) => rows.filter((r) => r[0] === kind).map((r) => number(r[1]!.replace(/^.*\.sm_/, "sm_")));
    for (const kind of ["ELF", "PTX"]) expect(byKind(ours, kind), kind).toEqual(byKind(listed, kind));
  });

  it.each(FIXTURES)("%s: extract writes what cuobjdump -all -xelf all -xptx all writes, byte for byte", async (name) => {
    const path = join(NV_FIXTURES, name);
    const theirs = join(dir, `${name}.cuobjdump`);
    const ours = join(dir, `${name}.ours`);
    mkdirSync(theirs);
    const native = runNative(CUOBJDUMP, ["-all", "-xelf", "all", "-xptx", "all", path], { cwd: theirs });
    expect(native.status, native.stderr).toBe(0);
    const run = await kit("extract", `--out-dir=${ours}`, path);
    expect(run.code, run.stderr.toString()).toBe(0);
    const names = readdirSync(theirs).sort();
    expect(names.length).toBeGreaterThan(0);
    expect(readdirSync(ours).sort()).toEqual(names);
    for (const file of names) {
      expect(Buffer.compare(readFileSync(join(ours, file)), readFileSync(join(theirs, file))), file).toBe(0);
    }
  });
});
