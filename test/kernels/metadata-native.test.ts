/**
 * The metadata note as we decode it against `llvm-readelf-19 --notes` and `llvm-readelf-22 --notes`: every
 * value of every kernel (and the document's other keys), for the code objects of Debian's librocrand and of
 * clang-19/22 builds at code object v4, v5 and v6, and clang-14 OpenCL objects at v3 (a relocatable object:
 * notes from its SHT_NOTE section) and v2 (its YAML note, against llvm-readelf-14). Code objects are taken out of their
 * bundles with our own extract (src/inspect/node/extract.ts).
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readAmdgpuMetadata, metadataKernels } from "../../src/formats/amdgpu-metadata.js";
import { msgpackToJson } from "../../src/formats/msgpack.js";
import { extractFile } from "../../src/inspect/node/extract.js";
import { listCodeObjectKernels } from "../../src/kernels/kernels.js";
import { withFile } from "../../src/node/file-source.js";
import { readExact } from "../../src/engine/source.js";
import { isAmdgpuCodeObject } from "../../src/formats/amdgpu-code-object.js";
import { scratchDir } from "../cli/harness.js";
import { hasNative, runNative } from "../native.js";
import { HANG_MS } from "../limits.js";
import { TEST_KERNELS, asYamlText, buildHip, readelfMetadata } from "./native-notes.js";

const LIBROCRAND = "/usr/lib/x86_64-linux-gnu/librocrand.so.1.1";
const READELFS = ["llvm-readelf-19", "llvm-readelf-22"] as const;
const NATIVE = READELFS.every(hasNative) && hasNative("clang-19");

/** The AMDGPU code objects among `file`'s extracted entries. */
function extractCodeObjects(file: string, dir: string): string[] {
  const result = extractFile(file, { outDir: dir });
  return result.outputs.map((o) => o.path).filter((p) => withFile(p, (s) => s.size >= 64 && isAmdgpuCodeObject(readExact(s, 0, 20))));
}

function expectSameAsReadelf(path: string): number {
  const ours = withFile(path, (s) => readAmdgpuMetadata(s));
  expect(ours?.format, path).toBe("msgpack");
  if (ours?.format !== "msgpack") return 0;
  const decoded = asYamlText(msgpackToJson(ours.document));
  for (const tool of READELFS) {
    const theirs = readelfMetadata(tool, path);
    expect(theirs.length, `${tool} ${path}`).toBe(1);
    expect(decoded, `${tool} ${path}`).toEqual(theirs[0]);
  }
  // The kernel list's names are the note's, in its order.
  const listed = withFile(path, (s) => listCodeObjectKernels(s, "x"));
  expect(listed.problem).toBeUndefined();
  expect(listed.kernels.map((k) => k.name)).toEqual(metadataKernels(ours.document).map((k) => k.get(".name")));
  return listed.kernels.length;
}

describe.skipIf(!NATIVE)("AMDGPU metadata against llvm-readelf --notes", () => {
  it.skipIf(!existsSync(LIBROCRAND))("every code object of librocrand", () => {
    const dir = scratchDir("kernels-rocrand-");
    const objects = extractCodeObjects(LIBROCRAND, dir);
    expect(objects.length).toBe(7);
    let kernels = 0;
    for (const path of objects) kernels += expectSameAsReadelf(path);
    expect(kernels).toBe(560);
  }, HANG_MS);

  for (const version of [4, 5, 6]) {
    it(`clang-19 builds, code object v${version}`, () => {
      const dir = scratchDir(`kernels-v${version}-`);
      const bundle = buildHip(dir, "k", TEST_KERNELS, ["gfx906", "gfx90a", "gfx1030", "gfx1100"], ["-O2", `-mcode-object-version=${version}`]);
      const objects = extractCodeObjects(bundle, join(dir, "out"));
      expect(objects.length).toBe(4);
      for (const path of objects) {
        expect(withFile(path, (s) => listCodeObjectKernels(s, "x")).codeObjectVersion).toBe(version);
        expect(expectSameAsReadelf(path)).toBe(8);
      }
    }, HANG_MS);
  }

  it.skipIf(!hasNative("clang-22"))("clang-22 builds, code object v5 and v6", () => {
    for (const version of [5, 6]) {
      const dir = scratchDir(`kernels-22-v${version}-`);
      const bundle = buildHip(dir, "k", TEST_KERNELS, ["gfx942", "gfx1201"], ["-O3", `-mcode-object-version=${version}`], "clang-22");
      const objects = extractCodeObjects(bundle, join(dir, "out"));
      expect(objects.length).toBe(2);
      for (const path of objects) expect(expectSameAsReadelf(path)).toBe(8);
    }
  }, HANG_MS);

  it.skipIf(!hasNative("clang-14") || !hasNative("llvm-readelf-14"))("clang-14 OpenCL: v3 relocatable object (section notes); v2's YAML note against llvm-readelf-14", () => {
    const dir = scratchDir("kernels-cl-");
    const src = join(dir, "k.cl");
    writeFileSync(src, "kernel void add(global float *x, float s) { x[get_global_id(0)] += s; }\n" +
      "kernel void mul(global float *x) { local float t[64]; t[get_local_id(0)] = x[0]; barrier(CLK_LOCAL_MEM_FENCE); x[1] = t[3]; }\n");
    for (const version of [2, 3]) {
      const out = join(dir, `k${version}.o`);
      const run = runNative("clang-14", ["-x", "cl", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx906", `-mcode-object-version=${version}`, "-nogpulib", "-c", src, "-o", out]);
      expect(run.status, run.stderr).toBe(0);
      if (version === 3) {
        expect(expectSameAsReadelf(out)).toBe(2);
        const listed = withFile(out, (s) => listCodeObjectKernels(s, "x"));
        expect(listed.codeObjectVersion).toBe(3);
        expect(listed.metadataVersion).toEqual([1, 0]);
        expect(listed.kernels.map((k) => k.codeSize! > 0)).toEqual([true, true]);
      } else {
        const ours = withFile(out, (s) => readAmdgpuMetadata(s));
        expect(ours?.format).toBe("yaml");
        const theirs = readelfMetadata("llvm-readelf-14", out, "AMD HSA Metadata:");
        expect(theirs.length).toBe(1);
        expect(asYamlText(msgpackToJson(ours!.document))).toEqual(theirs[0]);
        const listed = withFile(out, (s) => listCodeObjectKernels(s, "x"));
        expect(listed.problem).toBeUndefined();
        expect(listed.codeObjectVersion).toBe(2);
        expect(listed.metadataVersion).toEqual([1, 0]);
        // The friendly fields are the note's CodeProps under their v3 names (checked against the YAML text).
        const notes = (theirs[0] as { Kernels: { Name: string; SymbolName: string; CodeProps: Record<string, string> }[] }).Kernels;
        expect(listed.kernels.map((k) => k.name)).toEqual(["add", "mul"]);
        listed.kernels.forEach((k, i) => {
          const props = notes[i]!.CodeProps;
          expect(k.symbol).toBe(notes[i]!.SymbolName);
          expect(String(k.vgprs)).toBe(props.NumVGPRs);
          expect(String(k.sgprs)).toBe(props.NumSGPRs);
          expect(String(k.lds)).toBe(props.GroupSegmentFixedSize);
          expect(String(k.scratch)).toBe(props.PrivateSegmentFixedSize);
          expect(String(k.kernargSize)).toBe(props.KernargSegmentSize);
          expect(String(k.wavefrontSize)).toBe(props.WavefrontSize);
          expect(String(k.maxFlatWorkgroupSize)).toBe(props.MaxFlatWorkGroupSize);
          expect(k.dynamicStack).toBe(props.IsDynamicCallStack === undefined ? undefined : props.IsDynamicCallStack === "true");
          expect(k.codeSize).toBeGreaterThan(0);
          expect(k.metadata.get("Name")).toBe(k.name);
        });
        expect(listed.kernels[1]!.lds).toBeGreaterThan(0);
      }
    }
  }, HANG_MS);
});
