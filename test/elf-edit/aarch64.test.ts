// AArch64 shared libraries linked with 64 KiB max-page-size (what distributions use there): the rewrite
// must read p_align, move what follows by multiples of 64 KiB, and rewrite R_AARCH64_RELATIVE addends.
// These cannot run here (x86-64 host), so the checks are structural: every allocated section but the
// edited ones maps the same bytes at the same address, the wrappers' relocations point at the kept
// bundles, which hold the kept entries byte for byte, and llvm-readelf reports nothing new.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keepBundleEntries } from "../../src/elf-edit/compose.js";
import { EM_AARCH64, openLinkedElf, PT_LOAD } from "../../src/elf-edit/elf64.js";
import { readHipFatbinLayout } from "../../src/elf-edit/hip-fatbin.js";
import { rewriteHipFatbinFile } from "../../src/elf-edit/node.js";
import { bytesSource } from "../../src/engine/source.js";
import { parseBinaryBundle } from "../../src/formats/bundle.js";
import { nativeTool } from "../native.js";
import { ARCHS, Workshop, run } from "./standin.js";
import { changedLoadedSections } from "./synthetic.js";
import { HANG_MS } from "../limits.js";

const available = ["clang-19", "ld.lld-19", "llvm-readelf-19", "gcc"].every((t) => nativeTool(t) !== undefined);
const keep = (id: string): boolean => id.startsWith("host-") || id.endsWith("gfx90a");

describe.skipIf(!available)("AArch64, 64 KiB pages", () => {
  let shop: Workshop;
  beforeAll(() => {
    shop = new Workshop();
  }, HANG_MS);
  afterAll(() => shop?.remove());

  it.each([["-fno-gpu-rdc"], ["-fgpu-rdc"]])("shared library (%s), pruned to gfx90a", (rdc) => {
    const objects = ["kernels_a.hip", "kernels_big.hip"].map((source, i) =>
      shop.compile(source, `arm-${rdc}-${i}.o`, ["--target=aarch64-linux-gnu", "-fPIC", rdc]),
    );
    const library = join(shop.dir, `arm${rdc}.so`);
    run("clang-19", [
      "--target=aarch64-linux-gnu", "--hip-link", ...ARCHS.map((a) => `--offload-arch=${a}`), "-nogpulib", rdc, "-shared", "-nostdlib",
      "-fuse-ld=lld", "-Wl,-z,max-page-size=65536", ...objects, "-o", library,
    ]);
    const original = readFileSync(library);
    const before = openLinkedElf(bytesSource(original));
    expect(before.machine).toBe(EM_AARCH64);
    expect(before.programHeaders.filter((p) => p.type === PT_LOAD).every((p) => p.align === 65536)).toBe(true);

    const output = `${library}.pruned`;
    const plan = rewriteHipFatbinFile(library, output, { bundles: (b) => (b.format === "bundle" ? keepBundleEntries(b.source, keep) : undefined) });
    const edited = readFileSync(output);
    expect(plan.shift).toBeGreaterThan(0);
    expect(plan.shift % 65536).toBe(0);
    // The grown program header table sits past the file's end, within a page of it (README, "strip").
    expect(edited.length).toBe(plan.outputSize);
    expect(plan.outputSize).toBeLessThan(original.length - plan.shift + 65536);
    expect(changedLoadedSections(original, edited, [".hip_fatbin", ".rela.dyn", ".hipFatBinSegment", ".dynsym"])).toEqual([]);

    const layout = readHipFatbinLayout(openLinkedElf(bytesSource(edited)));
    const oldLayout = readHipFatbinLayout(before);
    expect(layout.wrappers.map((w) => w.target)).toEqual(oldLayout.wrappers.map((w) => plan.bundles.find((m) => m.oldAddress === w.target)!.newAddress));
    layout.bundles.forEach((bundle, i) => {
      const at = bundle.fileOffset;
      const entries = parseBinaryBundle(edited.subarray(at, at + bundle.size));
      const old = parseBinaryBundle(original.subarray(oldLayout.bundles[i].fileOffset, oldLayout.bundles[i].fileOffset + oldLayout.bundles[i].size));
      const kept = old.filter((e) => keep(e.id));
      expect(entries.map((e) => e.id)).toEqual(kept.map((e) => e.id));
      entries.forEach((e, k) => expect(Buffer.compare(e.data, kept[k].data)).toBe(0));
    });
    const readelf = (f: string) => run("llvm-readelf-19", ["-a", f]).stderr.split(f).join("FILE");
    expect(readelf(output)).toBe(readelf(library));
  }, HANG_MS);
});
