/**
 * The occupancy estimate: the rules' steps by hand (LLVM's own tables), and, where clang-19 is installed, our
 * estimate from each kernel's metadata against the "Occupancy [waves/SIMD]" clang itself reports
 * (`-Rpass-analysis=kernel-resource-usage`) for kernels from light to heavy register and LDS use, on gfx906,
 * gfx90a (unified VGPR+AGPR file), gfx1030 (wave32 and wave64) and gfx1100 (full VGPRs).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extractFile } from "../../src/inspect/node/extract.js";
import { listCodeObjectKernels } from "../../src/kernels/kernels.js";
import { estimateOccupancy, processorLimits, wavesWithLds, wavesWithSgprs, wavesWithVgprs } from "../../src/kernels/occupancy.js";
import { withFile } from "../../src/node/file-source.js";
import { scratchDir } from "../cli/harness.js";
import { hasNative, runNative } from "../native.js";
import { HANG_MS } from "../limits.js";
import { HIP_STANDIN, TEST_KERNELS } from "./native-notes.js";
import { writeFileSync } from "node:fs";

const limits = (p: string) => processorLimits(p)!;

describe("occupancy rules", () => {
  it("VGPRs: granule and file size per generation", () => {
    expect(wavesWithVgprs(limits("gfx906"), 24, 64)).toBe(10);
    expect(wavesWithVgprs(limits("gfx906"), 25, 64)).toBe(9); // 28 allocated: 256/28
    expect(wavesWithVgprs(limits("gfx906"), 128, 64)).toBe(2);
    expect(wavesWithVgprs(limits("gfx90a"), 79, 64)).toBe(6); // 80 of a 512-entry unified file
    expect(wavesWithVgprs(limits("gfx90a"), 512, 64)).toBe(1);
    expect(wavesWithVgprs(limits("gfx942"), 3, 64)).toBe(8); // under one granule: the processor's maximum
    expect(wavesWithVgprs(limits("gfx1030"), 64, 32)).toBe(16);
    expect(wavesWithVgprs(limits("gfx1030"), 65, 32)).toBe(12); // 80 of 1024
    expect(wavesWithVgprs(limits("gfx1030"), 65, 64)).toBe(7); // 72 of 512
    expect(wavesWithVgprs(limits("gfx1100"), 96, 32)).toBe(16);
    expect(wavesWithVgprs(limits("gfx1100"), 97, 32)).toBe(12); // granule 24: 120 of 1536
    expect(wavesWithVgprs(limits("gfx1102"), 97, 32)).toBe(9); // no full VGPRs: 112 of 1024
    expect(wavesWithVgprs(limits("gfx1010"), 9, 32)).toBe(20);
  });

  it("SGPRs: the gfx8/gfx9 and gfx6/gfx7 tables; none from gfx10", () => {
    expect([80, 81, 88, 89, 100, 101].map((n) => wavesWithSgprs(limits("gfx906"), n))).toEqual([10, 9, 9, 8, 8, 7]);
    expect(wavesWithSgprs(limits("gfx90a"), 10)).toBe(8);
    expect([48, 49, 57, 65, 73, 81].map((n) => wavesWithSgprs(limits("gfx700"), n))).toEqual([10, 9, 8, 7, 6, 5]);
    expect(wavesWithSgprs(limits("gfx1100"), 106)).toBe(16);
  });

  it("LDS: workgroups per CU (WGP on gfx10+) times their waves, over 4 SIMDs", () => {
    expect(wavesWithLds(limits("gfx90a"), 16384, 256, 64)).toBe(4);
    expect(wavesWithLds(limits("gfx90a"), 0, 256, 64)).toBe(8);
    expect(wavesWithLds(limits("gfx906"), 65536, 1024, 64)).toBe(4);
    expect(wavesWithLds(limits("gfx906"), 70000, 64, 64)).toBe(1);
    expect(wavesWithLds(limits("gfx1030"), 32768, 256, 32)).toBe(8); // 128 KiB per WGP: 4 groups of 8 waves
  });

  it("the least bound, and which", () => {
    const o = estimateOccupancy(limits("gfx90a"), { vgprs: 79, sgprs: 54, ldsBytes: 4096, wavefrontSize: 64, maxFlatWorkgroupSize: 256 });
    expect(o).toMatchObject({ waves: 6, limitedBy: "vgprs", maxWaves: 8 });
    expect(processorLimits("r600")).toBeUndefined();
    expect(processorLimits("gfx9-4-generic")?.maxWavesPerEu).toBe(8);
  });
});

/** `Function Name` / `Occupancy [waves/SIMD]` pairs from clang's resource-usage remarks. */
function remarkedOccupancy(stderr: string): Map<string, number> {
  const out = new Map<string, number>();
  let current: string | undefined;
  for (const line of stderr.split("\n")) {
    const name = /remark: Function Name: (\S+)/.exec(line);
    if (name !== null) current = name[1];
    const occ = /remark:\s+Occupancy \[waves\/SIMD\]: (\d+)/.exec(line);
    if (occ !== null && current !== undefined) out.set(current, Number(occ[1]));
  }
  return out;
}

describe.skipIf(!hasNative("clang-19"))("occupancy against clang-19's own remarks", () => {
  const cases: readonly (readonly [string, readonly string[]])[] = [
    ["gfx906", []], ["gfx90a", []], ["gfx1030", []], ["gfx1030", ["-mwavefrontsize64"]], ["gfx1100", []],
  ];
  for (const [arch, flags] of cases) {
    it(`${arch} ${flags.join(" ")}`, () => {
      const dir = scratchDir("kernels-occ-");
      const src = join(dir, "k.hip");
      writeFileSync(src, `#include "hip_runtime.h"\n#define __shared__ __attribute__((shared))\n${TEST_KERNELS}`);
      const out = join(dir, "k.o");
      const run = runNative("clang-19", [
        "-x", "hip", `--offload-arch=${arch}`, "-nogpulib", "-nogpuinc", `-I${HIP_STANDIN}`, "--cuda-device-only", "-c", "-O2",
        "-Rpass-analysis=kernel-resource-usage", "-o", out, src, ...flags,
      ]);
      expect(run.status, run.stderr).toBe(0);
      const expected = remarkedOccupancy(run.stderr);
      expect(expected.size).toBe(8);
      const [object] = extractFile(out, { outDir: join(dir, "out") }).outputs.filter((o) => o.id.includes("amdgcn"));
      const listed = withFile(object!.path, (s) => listCodeObjectKernels(s, object!.id));
      expect(listed.kernels.length).toBe(8);
      const seen = new Set<number>();
      for (const k of listed.kernels) {
        expect(k.occupancy?.waves, `${arch} ${k.name}: ${JSON.stringify(k.occupancy)} vgprs ${k.vgprs} sgprs ${k.sgprs} lds ${k.lds}`).toBe(expected.get(k.name));
        seen.add(k.occupancy!.waves);
      }
      // The kernels reach different occupancies, so the comparison covers more than the processor's maximum.
      expect(seen.size).toBeGreaterThan(1);
    }, HANG_MS);
  }
});
