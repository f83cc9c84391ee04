// AMDGPU code objects: the ELF header decoding (processor, xnack/sramecc, code object version, generic version)
// against what clang-19 writes and llvm-readelf-19 prints, and against hand-made headers for the older encodings.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  codeObjectEntryId, formatCodeObjectTargetId, isAmdgpuCodeObject, parseAmdgpuCodeObject,
} from "../../src/formats/amdgpu-code-object.js";
import { OffloadKitError } from "../../src/engine/errors.js";
import { locate } from "../../src/inspect/locate.js";
import { AMDGPU_MACH_PROCESSORS, resolveAmdgcnProcessor, resolveR600Processor } from "../../src/target-id/index.js";
import { hasNative, runNative } from "../native.js";

/** An ELF64 header with the given AMDGPU fields (the rest zero). */
function header(flags: number, abiVersion: number, options: { osAbi?: number; type?: number; machine?: number } = {}): Uint8Array {
  const bytes = new Uint8Array(64);
  bytes.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, options.osAbi ?? 64, abiVersion]);
  const view = new DataView(bytes.buffer);
  view.setUint16(16, options.type ?? 3, true);
  view.setUint16(18, options.machine ?? 224, true);
  view.setUint32(48, flags, true);
  return bytes;
}

/** What llvm-readelf-19 -h prints after the flags' hex: `gfx90a, xnack+, sramecc` read as a target ID. */
function readelfTargetId(path: string): { targetId: string; generic?: number; abiVersion: number; type: string } {
  const run = runNative("llvm-readelf-19", ["-h", path]);
  expect(run.status).toBe(0);
  const text = run.stdout.toString();
  const flags = /Flags:\s+0x[0-9A-Fa-f]+, (.*)/.exec(text)![1]!.split(", ");
  const processor = flags[0]!;
  const features = flags.slice(1).filter((f) => /^(xnack|sramecc)[+-]$/.test(f)).sort();
  const generic = flags.find((f) => f.startsWith("generic_v"));
  return {
    targetId: [processor, ...features].join(":"),
    ...(generic !== undefined ? { generic: Number(generic.substring("generic_v".length)) } : {}),
    abiVersion: Number(/ABI Version:\s+(\d+)/.exec(text)![1]),
    type: /Type:\s+(\w+)/.exec(text)![1]!,
  };
}

describe("AMDGPU code object headers", () => {
  it("reads v4+ feature settings from the two-bit fields", () => {
    // 0x73F: gfx90a, xnack on (0x300), sramecc any (0x400); code object v5.
    const object = parseAmdgpuCodeObject(header(0x73f, 3));
    expect(object).toMatchObject({
      elfClass: 64, type: 3, codeObjectVersion: 5, mach: 0x3f, processor: "gfx90a", xnack: "on", sramecc: "any",
      triple: "amdgcn-amd-amdhsa", targetId: "gfx90a:xnack+", genericVersion: 0,
    });
    expect(codeObjectEntryId(object)).toBe("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+");
    expect(parseAmdgpuCodeObject(header(0xa3f, 2)).targetId).toBe("gfx90a:sramecc-:xnack-");
    expect(parseAmdgpuCodeObject(header(0xf4c, 2)).targetId).toBe("gfx942:sramecc+:xnack+");
    expect(formatCodeObjectTargetId("gfx942", "on", "off")).toBe("gfx942:sramecc-:xnack+");
    expect(formatCodeObjectTargetId("gfx942", "any", "unsupported")).toBe("gfx942");
    expect(parseAmdgpuCodeObject(header(0x036, 3))).toMatchObject({ targetId: "gfx1030", xnack: "unsupported", sramecc: "unsupported" });
  });

  it("reads v3's on bits (clear is off where the processor has the feature) and v6's generic version", () => {
    expect(parseAmdgpuCodeObject(header(0x12f, 1))).toMatchObject({ codeObjectVersion: 3, targetId: "gfx906:sramecc-:xnack+" });
    expect(codeObjectEntryId(parseAmdgpuCodeObject(header(0x22f, 1)))).toBe("hip-amdgcn-amd-amdhsa--gfx906:sramecc+:xnack-");
    expect(parseAmdgpuCodeObject(header(0x036, 1)).targetId).toBe("gfx1030");
    expect(parseAmdgpuCodeObject(header(0x1000151, 4))).toMatchObject({ codeObjectVersion: 6, processor: "gfx9-generic", genericVersion: 1, targetId: "gfx9-generic" });
  });

  it("says what it does not know instead of guessing", () => {
    const unknownMach = parseAmdgpuCodeObject(header(0x4d, 3));
    expect(unknownMach.processor).toBeUndefined();
    expect(codeObjectEntryId(unknownMach)).toBeUndefined();
    const pal = parseAmdgpuCodeObject(header(0x36, 0, { osAbi: 65 }));
    expect(pal).toMatchObject({ triple: "amdgcn-amd-amdpal", xnack: "unsupported" });
    expect(pal.codeObjectVersion).toBeUndefined();
  });

  it("recognises EM_AMDGPU only, and rejects short or foreign headers with typed errors", () => {
    expect(isAmdgpuCodeObject(header(0x3f, 3))).toBe(true);
    expect(isAmdgpuCodeObject(header(0x3f, 3, { machine: 62 }))).toBe(false); // EM_X86_64
    expect(() => parseAmdgpuCodeObject(header(0, 0, { machine: 62 }))).toThrow(OffloadKitError);
    try {
      parseAmdgpuCodeObject(header(0x3f, 3).subarray(0, 40));
      expect.unreachable();
    } catch (e) {
      expect((e as OffloadKitError).code).toBe("TRUNCATED");
    }
  });

  it("names every mach number by a processor the target-ID tables know", () => {
    for (const [, name] of AMDGPU_MACH_PROCESSORS) {
      const known = resolveAmdgcnProcessor(name, 22) ?? resolveAmdgcnProcessor(name, 19) ?? resolveR600Processor(name, 19);
      expect(known?.canonical, name).toBe(name);
    }
  });
});

describe.runIf(hasNative("clang-19") && hasNative("llvm-readelf-19"))("AMDGPU code objects clang-19 writes", () => {
  const dir = mkdtempSync(join(tmpdir(), "offload-kit-code-object-"));
  writeFileSync(join(dir, "k.hip"), "__attribute__((global)) void k(int *p) { p[0] = 1; }\n");
  writeFileSync(join(dir, "r.c"), "void f(int *p) { p[0] = 1; }\n");
  const hip = ["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output", "-nogpulib", "-nogpuinc", join(dir, "k.hip")];
  const cases: [string, string[], string][] = [
    ["linked-xnack-on.hsaco", [...hip, "--offload-arch=gfx90a:xnack+"], "gfx90a:xnack+"],
    ["linked-v4.hsaco", [...hip, "--offload-arch=gfx90a:sramecc-:xnack-", "-mcode-object-version=4"], "gfx90a:sramecc-:xnack-"],
    ["linked-v5.hsaco", [...hip, "--offload-arch=gfx1030", "-mcode-object-version=5"], "gfx1030"],
    ["linked-any.hsaco", [...hip, "--offload-arch=gfx942"], "gfx942"],
    ["generic-v6.hsaco", [...hip, "--offload-arch=gfx9-generic", "-mcode-object-version=6"], "gfx9-generic"],
    ["relocatable.o", ["--target=amdgcn-amd-amdhsa", "-mcpu=gfx90a:xnack+", "-nogpulib", "-c", join(dir, "r.c")], "gfx90a:xnack+"],
  ];

  for (const [name, args, expected] of cases) {
    it(`${name}: the target ID llvm-readelf-19 prints, the code object version, one located entry`, () => {
      const path = join(dir, name);
      const built = runNative("clang-19", [...args, "-o", path]);
      expect(built.status, built.stderr).toBe(0);
      const bytes = new Uint8Array(readFileSync(path));
      const object = parseAmdgpuCodeObject(bytes.subarray(0, 64));
      const native = readelfTargetId(path);
      expect(object.targetId).toBe(native.targetId);
      expect(object.targetId).toBe(expected);
      expect(object.abiVersion).toBe(native.abiVersion);
      expect(object.codeObjectVersion).toBe(native.abiVersion + 2);
      expect(object.type).toBe(native.type === "REL" ? 1 : 3);
      expect(object.genericVersion).toBe(native.generic ?? 0);

      const location = locate(bytes);
      expect(location.container).toBe("elf");
      expect(location.problems).toEqual([]);
      expect(location.offloadBinaries).toEqual([]);
      expect(location.bundles).toHaveLength(1);
      expect(location.bundles[0]).toMatchObject({
        format: "code-object", offset: 0, size: bytes.length,
        entries: [{ id: `hipv4-amdgcn-amd-amdhsa--${expected}`, offset: 0, size: bytes.length, align: 4096 }],
      });
    });
  }

  it("a code object inside an offload bundle stays that bundle's entry (not counted twice)", () => {
    const path = join(dir, "bundled.hipfb");
    const built = runNative("clang-19", [...hip.filter((a) => a !== "--no-gpu-bundle-output"), "--offload-arch=gfx90a", "--offload-arch=gfx1030", "-o", path]);
    expect(built.status, built.stderr).toBe(0);
    const location = locate(new Uint8Array(readFileSync(path)));
    expect(location.bundles.map((b) => b.format)).toEqual(["binary"]);
    expect(location.bundles[0]!.entries.map((e) => e.id).filter((id) => id.startsWith("hipv4")).sort()).toEqual([
      "hipv4-amdgcn-amd-amdhsa--gfx1030", "hipv4-amdgcn-amd-amdhsa--gfx90a",
    ]);
  });
});
