// NVIDIA fatbins through the shared locate/report path, on the nvcc 13 fixtures (no NVIDIA tool needed): containers
// and their wrappers (relocations in objects, stored values and RELATIVE addends in linked files, containers no
// wrapper points at), check verdicts by the driver's rules, sizes, extract (zstd entries decode to the plain
// build's bytes), folders and tar packages, and the browser library's readEntry.
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { inspectSource, readEntry } from "../../src/browser/inspect.js";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { parseNvFatbinContainer } from "../../src/formats/nv-fatbin.js";
import { checkEntry, parseGpu } from "../../src/inspect/check.js";
import { locate } from "../../src/inspect/locate.js";
import type { Location } from "../../src/inspect/locate.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { NV_FIXTURES, fatbinSections } from "../fixtures/nv/sections.js";
import { hasNative, runNative } from "../native.js";

const fixture = (name: string) => new Uint8Array(readFileSync(join(NV_FIXTURES, name)));

function containers(location: Location) {
  return location.bundles.map((b) => ({ format: b.format, section: b.section, wrappers: b.nvFatbin?.wrappers, ids: b.entries.map((e) => e.id) }));
}

describe("locating NVIDIA fatbins", () => {
  it("an object: one container, its wrapper found through .rela.nvFatBinSegment", () => {
    const location = locate(fixture("kernels.zstd.o"));
    expect(location.problems).toEqual([]);
    expect(containers(location)).toEqual([{ format: "nv-fatbin", section: ".nv_fatbin", wrappers: 1, ids: ["sm_75", "sm_80", "sm_90", "compute_90"] }]);
    const info = location.bundles[0]!.nvFatbin!;
    expect(info.entries.map((e) => [e.compression, e.kind])).toEqual([["zstd", 2], ["zstd", 2], ["zstd", 2], ["zstd", 1]]);
  });

  it("a shared library: two containers, each registered; the stored pointer, and the RELATIVE addend when the place is unset", () => {
    const bytes = fixture("libkernels.so");
    expect(containers(locate(bytes)).map((c) => c.wrappers)).toEqual([1, 1]);
    // lld leaves RELA places 0: zero both stored pointers (.nvFatBinSegment at 0x4090, data at +8 of each wrapper).
    const unset = bytes.slice();
    unset.fill(0, 0x4090 + 8, 0x4090 + 16);
    unset.fill(0, 0x4090 + 24 + 8, 0x4090 + 24 + 16);
    expect(containers(locate(unset)).map((c) => c.wrappers)).toEqual([1, 1]);
    // Point the second wrapper at the first container (address 0x2010): the second is then registered by none.
    const moved = bytes.slice();
    new DataView(moved.buffer).setUint32(0x4090 + 24 + 8, 0x2010, true);
    expect(containers(locate(moved)).map((c) => c.wrappers)).toEqual([2, 0]);
  });

  it("an -rdc executable: .nv_fatbin registered, __nv_relfatbin's device-link inputs not", () => {
    expect(containers(locate(fixture("app-rdc")))).toEqual([
      { format: "nv-fatbin", section: ".nv_fatbin", wrappers: 1, ids: ["sm_80", "sm_90a"] },
      { format: "nv-fatbin", section: "__nv_relfatbin", wrappers: undefined, ids: ["sm_80", "sm_90a"] },
      { format: "nv-fatbin", section: "__nv_relfatbin", wrappers: undefined, ids: ["sm_80", "sm_90a"] },
    ]);
  });

  it("standalone .fatbin and .cubin files, and an archive member", () => {
    expect(containers(locate(fixture("kernels-sm100.fatbin")))).toEqual([
      { format: "nv-fatbin", section: undefined, wrappers: undefined, ids: ["sm_100f", "sm_100a", "sm_120", "compute_120"] },
    ]);
    const cubin = locate(fixture("kernels.sm_86.cubin"));
    expect(cubin.bundles.map((b) => [b.format, b.cubin?.arch, b.entries.map((e) => [e.id, e.offset, e.size])])).toEqual([["cubin", 86, [["sm_86", 0, 4712]]]]);
    const archive = locate(fixture("libkernels.a"));
    expect(archive.bundles.map((b) => [b.member, b.nvFatbin?.wrappers, b.entries.length])).toEqual([["kernels.zstd.o", 1, 4]]);
  });

  it("a damaged container is a problem with its offset, and the file's other sections are still read", () => {
    const bytes = fixture("app-rdc");
    // The first __nv_relfatbin container's first entry claims a payload past the container (at 0x4ee0 + 16 + 8).
    new DataView(bytes.buffer).setUint32(0x4ee0 + 16 + 8, 0x7fffffff, true);
    const location = locate(bytes);
    expect(location.problems.map((p) => [p.code, p.offset])).toEqual([["NV_ENTRY_SIZE", 0x4ee0 + 16 + 8]]);
    expect(location.bundles.map((b) => b.section)).toEqual([".nv_fatbin"]);
  });
});

describe("check: the driver's rules", () => {
  const verdict = (id: string, gpu: string) => checkEntry(id, parseGpu(gpu));
  it.each([
    ["sm_80", "sm_86", "loadable", "nv-sass"], ["sm_80", "sm_80", "loadable", "nv-sass"], ["sm_86", "sm_80", "not-loadable", "nv-arch-mismatch"],
    ["sm_80", "sm_90", "not-loadable", "nv-arch-mismatch"], ["sm_90a", "sm_90", "loadable", "nv-sass"], ["sm_90a", "sm_100", "not-loadable", "nv-arch-mismatch"],
    ["sm_100f", "sm_103", "loadable", "nv-sass"], ["sm_100a", "sm_103", "not-loadable", "nv-arch-mismatch"], ["sm_120", "sm_121", "loadable", "nv-sass"],
    ["compute_90", "sm_120", "loadable", "nv-ptx-jit"], ["compute_90", "sm_89", "not-loadable", "nv-arch-mismatch"], ["compute_90a", "sm_100", "not-loadable", "nv-arch-mismatch"],
    ["compute_75", "sm_75", "loadable", "nv-ptx-jit"], ["sm_80", "gfx90a", "not-loadable", "not-a-gpu-entry"],
  ])("%s on %s: %s (%s)", (id, gpu, expected, code) => {
    const v = verdict(id, gpu);
    expect([v.verdict, v.reason?.code]).toEqual([expected, code]);
  });

  it("--kind: NVIDIA entries are CUDA's", () => {
    expect(checkEntry("sm_80", parseGpu("sm_80"), { kind: "cuda" }).verdict).toBe("loadable");
    expect(checkEntry("sm_80", parseGpu("sm_80"), { kind: "hip" }).reason?.code).toBe("kind-mismatch");
  });
});

describe("offload-kit on NVIDIA fatbins", () => {
  const dir = scratchDir("offload-kit-nv-");
  const kit = (...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));

  it("check passes where SASS of the same major or PTX below the GPU is present, says which, and fails otherwise", async () => {
    const lib = join(NV_FIXTURES, "libkernels.so");
    const sm86 = await kit("check", "--gpu=sm_86", lib);
    expect(sm86.code).toBe(0);
    expect(sm86.stdout.toString()).toContain("SASS for sm_80 runs on sm_86 (same major version, minor 0 <= 6)");
    const sm120 = await kit("check", "--gpu=sm_120", lib);
    // Only the second container has PTX: the first, registered too, has nothing sm_120 runs.
    expect(sm120.code).toBe(1);
    expect(sm120.stdout.toString()).toContain("PTX for compute_90: the driver JIT-compiles it for sm_120");
    const fatbin = await kit("check", "--gpu=sm_120", join(NV_FIXTURES, "kernels.fatbin"));
    expect(fatbin.code).toBe(0);
    const rdc = await kit("check", "--gpu=sm_90", "--json", join(NV_FIXTURES, "app-rdc"));
    const input = JSON.parse(rdc.stdout.toString()).inputs[0];
    expect(input.ok).toBe(true);
    expect(input.fatBinaries).toHaveLength(1);
  });

  it("sizes: decoded bytes and stored bytes per arch", async () => {
    const run = await kit("sizes", "--json", join(NV_FIXTURES, "kernels.zstd.o"));
    expect(run.code).toBe(0);
    const file = JSON.parse(run.stdout.toString()).files[0];
    const section = parseNvFatbinContainer(fatbinSections("kernels.zstd.o")[0]!.bytes);
    expect(file.targets.find((t: { id: string }) => t.id === "sm_90")).toEqual({ id: "sm_90", entries: 1, bytes: 5464, storedBytes: section.entries[2]!.compressedSize });
    expect(file.bytes).toBe(section.entries.reduce((n, e) => n + e.uncompressedSize, 0));
  });

  it("extract: the zstd object's entries decode to the plain object's bytes (PTX without its NUL)", async () => {
    const zstd = join(dir, "zstd");
    const plain = join(dir, "plain");
    expect((await kit("extract", `--out-dir=${zstd}`, join(NV_FIXTURES, "kernels.zstd.o"))).code).toBe(0);
    expect((await kit("extract", `--out-dir=${plain}`, join(NV_FIXTURES, "kernels.plain.o"))).code).toBe(0);
    const names = readdirSync(zstd).sort();
    expect(names).toEqual(["kernels.zstd.1.sm_75.cubin", "kernels.zstd.1.sm_90.ptx", "kernels.zstd.2.sm_80.cubin", "kernels.zstd.3.sm_90.cubin"]);
    for (const name of names) {
      const ours = readFileSync(join(zstd, name));
      expect(Buffer.compare(ours, readFileSync(join(plain, name.replace("kernels.zstd", "kernels.plain"))))).toBe(0);
    }
    const ptx = readFileSync(join(zstd, "kernels.zstd.1.sm_90.ptx"), "latin1");
    expect(ptx).toContain(".target sm_90");
    expect(ptx.includes("\0")).toBe(false);
    // --targets picks NVIDIA entries by arch name.
    const one = join(dir, "one");
    expect((await kit("extract", `--out-dir=${one}`, "--targets=sm_80", join(NV_FIXTURES, "libkernels.so"))).code).toBe(0);
    expect(readdirSync(one).sort()).toEqual(["libkernels.1.sm_80.cubin", "libkernels.2.sm_80.cubin"]);
  });

  it.runIf(hasNative("tar"))("folders and tar packages: the same containers as the files", async () => {
    const tree = join(dir, "tree");
    mkdirSync(join(tree, "lib"), { recursive: true });
    for (const name of ["libkernels.so", "kernels.sm_86.cubin", "kernels.fatbin"]) copyFileSync(join(NV_FIXTURES, name), join(tree, "lib", name));
    writeFileSync(join(tree, "lib", "notes.txt"), "no device code\n");
    const folder = await kit("ls", "--json", tree);
    expect(folder.code).toBe(0);
    const files = JSON.parse(folder.stdout.toString()).files as { path: string; bundles: { format: string }[] }[];
    expect(files.map((f) => [f.path.substring(tree.length + 1), f.bundles.map((b) => b.format)]).sort()).toEqual([
      ["lib/kernels.fatbin", ["nv-fatbin"]], ["lib/kernels.sm_86.cubin", ["cubin"]], ["lib/libkernels.so", ["nv-fatbin", "nv-fatbin"]],
    ]);
    const tar = runNative("tar", ["cf", join(dir, "tree.tar"), "-C", tree, "lib"]);
    expect(tar.status, tar.stderr).toBe(0);
    const packaged = await kit("check", "--gpu=sm_86", join(dir, "tree.tar"));
    expect(packaged.stdout.toString()).toContain("SASS for sm_80 runs on sm_86");
    const sizes = await kit("sizes", "--json", join(dir, "tree.tar"));
    expect(sizes.code).toBe(0);
    expect(sizes.stdout.toString()).toContain("\"sm_86\"");
  });
});

describe("the browser library", () => {
  it("inspectSource reports the containers; readEntry gives an entry decoded", () => {
    const bytes = fixture("libkernels.so");
    const { report, sizes } = inspectSource(bytes, "libkernels.so", { codecs: nodeCodecs });
    expect(report.bundles.map((b) => [b.format, b.nvFatbin?.wrappers])).toEqual([["nv-fatbin", 1], ["nv-fatbin", 1]]);
    expect(sizes.entries).toBe(7);
    const cubin = readEntry(bytes, { bundle: 1, entry: 2 }, { codecs: nodeCodecs });
    const plain = parseNvFatbinContainer(fatbinSections("kernels.plain.o")[0]!.bytes).entries[2]!.rawPayload;
    expect(Buffer.compare(cubin, plain)).toBe(0);
  });
});
