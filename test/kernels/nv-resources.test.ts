/**
 * `offload-kit kernels --json` on NVIDIA cubins against `cuobjdump -res-usage` (12.4): every cubin's Common line
 * (GLOBAL, CONSTANT[n]) and every Function line (REG, STACK, SHARED, LOCAL, CONSTANT[n]) equal, kernel for kernel,
 * on the fixtures nvcc 13.0 made (test/fixtures/nv/, nv-prune/, nv-res/: sm_75..sm_100, plain, LZ4 and zstd
 * entries, standalone cubins, objects, an archive, linked programs and libraries) and on Debian's libnvjpeg12
 * (CUDA 12.4, sm_50..sm_90) where apt can fetch it. TEXTURE, SURFACE and SAMPLER are not read (nvcc 13 has no
 * texture references); the test checks cuobjdump prints 0 for them on these files, so nothing is hidden there.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";
import { hasNative, runNative } from "../native.js";
import { fetchNvjpeg } from "../differential/debian-nv.js";

const FIXTURES = join(__dirname, "../fixtures");
const NOT_READ = ["TEXTURE", "SURFACE", "SAMPLER"];

/** The files of a fixture folder cuobjdump can read (not the sources, scripts or LZ4 vectors). */
function fixtureFiles(folder: string): string[] {
  const dir = join(FIXTURES, folder);
  return readdirSync(dir)
    .filter((f) => !/\.(cu|sh|ts|txt)$/.test(f) && statSync(join(dir, f)).isFile())
    .map((f) => join(dir, f));
}

/** cuobjdump -res-usage as one text block per cubin (`arch`, the Common line, each Function line), in its order. */
function cuobjdumpBlocks(path: string): string[] {
  const run = runNative("cuobjdump", ["-res-usage", path]);
  expect(run.status, run.stderr).toBe(0);
  const blocks: string[][] = [];
  let arch = "";
  let inCommon = false;
  let fn: string | undefined;
  for (const line of run.stdout.toString("latin1").split("\n")) {
    const archLine = /^arch = (\S+)$/.exec(line);
    if (archLine !== null) arch = archLine[1]!;
    else if (line === "Resource usage:") blocks.push([arch]);
    else if (line === " Common:") inCommon = true;
    else if (line.startsWith(" Function ")) fn = line.slice(" Function ".length, -1);
    else if (line.startsWith("  ") && blocks.length > 0) {
      const fields = byBank(line.trim().split(" "));
      if (inCommon) {
        blocks.at(-1)!.push(`Common ${fields.join(" ")}`);
        inCommon = false;
      } else if (fn !== undefined) {
        for (const name of NOT_READ) expect(fields, `${path} ${fn}`).toContain(`${name}:0`);
        blocks.at(-1)!.push(`${fn} ${fields.filter((f) => !NOT_READ.some((n) => f.startsWith(`${n}:`))).join(" ")}`);
        fn = undefined;
      }
    }
  }
  return blocks.map((b) => b.join("\n"));
}

interface JsonKernel {
  name: string;
  nv: { registers?: number; stack?: number; shared: number; local: number; constants: Record<string, number> };
}
interface JsonCodeObject {
  id: string;
  section?: string;
  nvCommon?: { global: number; constants: Record<string, number> };
  kernels: JsonKernel[];
  problem?: unknown;
}

function constants(banks: Record<string, number>): string[] {
  return Object.entries(banks).sort((a, b) => Number(a[0]) - Number(b[0])).map(([n, size]) => `CONSTANT[${n}]:${size}`);
}

/** cuobjdump prints a kernel's banks in section order (CONSTANT[2] before CONSTANT[0] in libnvjpeg); we by bank. */
function byBank(fields: readonly string[]): string[] {
  const bank = (f: string): number => Number(/^CONSTANT\[(\d+)\]/.exec(f)?.[1] ?? -1);
  const others = fields.filter((f) => bank(f) < 0);
  return [...others, ...fields.filter((f) => bank(f) >= 0).sort((a, b) => bank(a) - bank(b))];
}

/** Our JSON as the same blocks; `standalone`: a .cubin file, for which cuobjdump prints no arch. */
function ourBlocks(objects: readonly JsonCodeObject[], standalone: boolean): string[] {
  return objects.map((c) => {
    expect(c.problem, c.id).toBeUndefined();
    const common = c.nvCommon!;
    return [
      // cuobjdump 12.4 predates family-specific code (sm_100f, flag 0x200000) and prints it as sm_100.
      standalone ? "" : c.id.replace(/^(sm_\d+)f$/, "$1"),
      ["Common", `GLOBAL:${common.global}`, ...constants(common.constants)].join(" "),
      ...c.kernels.map((k) => [k.name, `REG:${k.nv.registers}`, `STACK:${k.nv.stack}`, `SHARED:${k.nv.shared}`, `LOCAL:${k.nv.local}`, ...constants(k.nv.constants)].join(" ")),
    ].join("\n");
  });
}

async function ours(path: string): Promise<JsonCodeObject[]> {
  const run = await runInDir(scratchDir("offload-kit-nvres-"), (io) => runOffloadKit("offload-kit", ["kernels", "--json", path], io));
  expect(run.code, run.stderr.toString()).toBe(0);
  return (JSON.parse(run.stdout.toString()) as { codeObjects: JsonCodeObject[] }).codeObjects;
}

/** Compares one file; returns how many kernels it held. */
async function expectSameAsCuobjdump(path: string): Promise<number> {
  // A known difference: in a linked -rdc program cuobjdump does not read `__nv_relfatbin` (the device link's
  // inputs, which `-lelf` does not list either); we list those cubins' kernels too, so they are left out of the
  // comparison. In a relocatable object (`nvcc -rdc -c`, `ld -r` of such) cuobjdump reads it, and so do we.
  const relocatable = readFileSync(path).readUInt16LE(16) === 1 && path.endsWith(".o");
  const objects = (await ours(path)).filter((c) => relocatable || c.section !== "__nv_relfatbin");
  const theirs = cuobjdumpBlocks(path);
  const mine = ourBlocks(objects, path.endsWith(".cubin"));
  // Same cubins in the same order (archive members and containers as cuobjdump walks them).
  expect(mine, path).toEqual(theirs);
  return objects.reduce((sum, c) => sum + c.kernels.length, 0);
}

describe.runIf(hasNative("cuobjdump"))("kernels on NVIDIA cubins vs cuobjdump -res-usage", () => {
  it("every fixture: Common and Function lines equal", async () => {
    let kernels = 0;
    let files = 0;
    for (const folder of ["nv", "nv-prune", "nv-res"]) {
      for (const path of fixtureFiles(folder)) {
        kernels += await expectSameAsCuobjdump(path);
        files++;
      }
    }
    expect(files).toBeGreaterThanOrEqual(15);
    expect(kernels).toBeGreaterThan(50);
  }, HANG_MS);

  it("the resource fixtures show every field with a non-zero value somewhere", async () => {
    const objects = [
      ...await ours(join(FIXTURES, "nv-res/res.sm_90.cubin")),
      ...await ours(join(FIXTURES, "nv-res/res.sm_75.cubin")),
      ...await ours(join(FIXTURES, "nv-res/res.fatbin")),
    ];
    const all = objects.flatMap((c) => c.kernels);
    // Registers from EIATTR_REGCOUNT, stacks from EIATTR_MIN_STACK_SIZE, shared from .nv.shared.*: each non-zero once.
    expect(all.find((k) => k.name === "local_array")?.nv.stack).toBeGreaterThan(300);
    expect(all.find((k) => k.name === "with_printf")?.nv.stack).toBe(8);
    expect(all.find((k) => k.name === "tiled" && k.nv.shared === 1024)).toBeDefined();
    expect(new Set(all.map((k) => k.nv.registers)).size).toBeGreaterThan(3);
    expect(objects.some((c) => c.nvCommon!.constants["3"] === 256)).toBe(true);
  }, HANG_MS);

  it("libnvjpeg12: every cubin equal (LZ4 entries, sm_50..sm_90)", async (ctx) => {
    const fetched = fetchNvjpeg(scratchDir("offload-kit-nvjpeg-res-"));
    if (fetched === undefined) return ctx.skip();
    expect(await expectSameAsCuobjdump(fetched.library)).toBeGreaterThan(100);
  }, HANG_MS);
});

describe("kernels table on NVIDIA cubins", () => {
  it("prints REG/STACK/SHARED/LOCAL/CONST0, sorts by stack, filters by --gpu=sm_NN, demangles", async () => {
    const kit = (...args: string[]) => runInDir(scratchDir("offload-kit-nvres-"), (io) => runOffloadKit("offload-kit", ["kernels", ...args], io));
    const sorted = await kit("--sort=scratch", "--gpu=sm_90", join(FIXTURES, "nv-res/res.fatbin"));
    expect(sorted.code, sorted.stderr.toString()).toBe(0);
    const lines = sorted.stdout.toString().split("\n");
    expect(lines[0]).toMatch(/: 1 code object .*10 kernels$/);
    expect(lines[1]!.trim().split(/\s+/)).toEqual(["TARGET", "REG", "STACK", "SHARED", "LOCAL", "CONST0", "SIZE", "KERNEL"]);
    expect(lines[2]).toMatch(/^\s+sm_90\s+\d+\s+392\s+1024\s+0\s+540\s+\d+\s+local_array$/);
    expect(sorted.stdout.toString()).toContain("void templated<double>(double*, double)");
    expect(sorted.stdout.toString()).not.toContain("sm_86");
    expect(sorted.stdout.toString()).not.toContain("OCC:");
  });
});
