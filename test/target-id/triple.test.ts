/**
 * src/llvm/triple.ts. Expected values are the native tools' behaviour (measured with clang-offload-bundler-14/19/22
 * as described in test/differential/target-id-native.test.ts) or, where the bundler cannot show a field, LLVM's
 * Triple.cpp.
 */

import { describe, expect, it } from "vitest";
import {
  ArchType,
  CanonicalForm,
  EnvironmentType,
  ObjectFormatType,
  OSType,
  SubArchType,
  Triple,
  VendorType,
  getArmCanonicalArchName,
  normalizeTriple,
  parseArch,
  parseEnvironment,
  parseOS,
  parseSubArch,
  parseVendor,
  splitLimited,
  type LlvmVersion,
} from "../../src/llvm/triple.js";

/** Arch names the bundlers accept ("ok") or reject with "unknown target triple", per version (measured). */
const ARCH_ACCEPTANCE: readonly [name: string, v14: boolean, v19: boolean, v22: boolean][] = [
  ...["i386", "i486", "i586", "i686", "i786", "i886", "i986", "amd64", "x86_64", "x86_64h", "powerpc", "powerpcspe",
    "ppc", "ppc32", "powerpcle", "ppcle", "ppc32le", "powerpc64", "ppu", "ppc64", "powerpc64le", "ppc64le", "xscale",
    "xscaleeb", "aarch64", "aarch64_be", "aarch64_32", "arc", "arm64", "arm64_32", "arm64e", "arm64ec", "arm", "armeb",
    "thumb", "thumbeb", "avr", "m68k", "msp430", "mips", "mipseb", "mipsallegrex", "mipsisa32r6", "mipsr6", "mipsel",
    "mipsallegrexel", "mipsisa32r6el", "mipsr6el", "mips64", "mips64eb", "mipsn32", "mipsisa64r6", "mips64r6",
    "mipsn32r6", "mips64el", "mipsn32el", "mipsisa64r6el", "mips64r6el", "mipsn32r6el", "r600", "amdgcn", "riscv32",
    "riscv64", "hexagon", "s390x", "systemz", "sparc", "sparcel", "sparcv9", "sparc64", "tce", "tcele", "xcore",
    "nvptx", "nvptx64", "amdil", "amdil64", "hsail", "hsail64", "spir", "spir64", "spirv32", "spirv64", "kalimba",
    "kalimba3", "kalimbafoo", "lanai", "renderscript32", "renderscript64", "shave", "ve", "wasm32", "wasm64", "csky",
    "bpf", "bpf_be", "bpfeb", "bpf_le", "bpfel", "armx", "armv", "armv7", "armv7a", "armv7-a", "armv7eb", "armebv7",
    "armv6m", "thumbv6m", "thumbv4t", "armv2", "armv9.5a", "armv9.6a", "armv9.7a", "armv8.1m.main", "armv7k",
    "thumbv7em", "aarch64v8", "aarch64_bev8", "arm64v8", "arm64_32v8", "aarch64_32v8"].map(
    (name) => [name, true, true, true] as [string, boolean, boolean, boolean]),
  ...["spirv", "spirv1.5", "spirv1.6", "spirv32v1.0", "spirv32v1.6", "spirv64v1.3", "dxil", "dxilv1.0", "dxilv1.7",
    "dxilv1.8", "loongarch32", "loongarch64", "xtensa"].map(
    (name) => [name, false, true, true] as [string, boolean, boolean, boolean]),
  ["le32", true, true, false],
  ["le64", true, true, false],
  ["riscv32be", false, false, true],
  ["riscv64be", false, false, true],
  ["dxilv1.9", false, false, true],
  ...["pe", "armvx", "aarch64eb", "bpfx", "c2000", "armfoo", "thumbv3", "spirv1.0", "spirv64v1.7", "unknown", "none",
    "x86", "x86-64", "foo", ""].map((name) => [name, false, false, false] as [string, boolean, boolean, boolean]),
];

describe("parseArch", () => {
  it.each(ARCH_ACCEPTANCE)("%s is known to 14: %s, 19: %s, 22: %s", (name, v14, v19, v22) => {
    expect([14, 19, 22].map((version) => parseArch(name, version as LlvmVersion) !== ArchType.UnknownArch)).toEqual([v14, v19, v22]);
  });

  it.each([
    ["i686", ArchType.x86], ["amd64", ArchType.x86_64], ["ppu", ArchType.ppc64], ["xscale", ArchType.arm],
    ["xscaleeb", ArchType.armeb], ["arm64", ArchType.aarch64], ["arm64_32", ArchType.aarch64_32],
    ["sparc64", ArchType.sparcv9], ["systemz", ArchType.systemz], ["kalimbafoo", ArchType.kalimba],
    ["bpf", ArchType.bpfel], ["bpf_be", ArchType.bpfeb], ["armx", ArchType.arm], ["armv", ArchType.arm],
    ["armv7eb", ArchType.armeb], ["armebv7", ArchType.armeb], ["armv6m", ArchType.thumb], ["armebv6m", ArchType.thumbeb],
    ["thumbv4t", ArchType.thumb], ["aarch64_bev8", ArchType.aarch64_be], ["arm64v8", ArchType.aarch64],
    ["mipsn32r6el", ArchType.mips64el], ["spirv1.6", ArchType.spirv], ["dxilv1.3", ArchType.dxil],
  ] as const)("%s parses as %s", (name, arch) => {
    expect(parseArch(name)).toBe(arch);
  });
});

describe("ARM names", () => {
  it.each([
    ["armv7a", "v7a"], ["armebv7", "v7"], ["armv7eb", "v7"], ["thumbv6m", "v6m"], ["aarch64", "aarch64"],
    ["aarch64_be", "aarch64_be"], ["aarch64_bev8", "v8"], ["aarch64eb", ""], ["arm64e", "arm64e"], ["armx", "x"],
    ["armvx", ""], ["armfoo", ""], ["armv7ebeb", ""], ["xscale", "xscale"], ["x86_64", "x86_64"],
  ])("getCanonicalArchName(%s) = %s", (name, canonical) => {
    expect(getArmCanonicalArchName(name)).toBe(canonical);
  });

  it.each([
    ["armv7", 19, SubArchType.ARMSubArch_v7], ["thumbv7s", 19, SubArchType.ARMSubArch_v7s],
    ["armv7em", 19, SubArchType.ARMSubArch_v7em], ["armv6m", 19, SubArchType.ARMSubArch_v6m],
    ["armv8.1m.main", 19, SubArchType.ARMSubArch_v8_1m_mainline], ["armv9.5a", 19, SubArchType.ARMSubArch_v9_5a],
    ["armv9.6a", 19, SubArchType.NoSubArch], ["armv9.6a", 22, SubArchType.ARMSubArch_v9_6a],
    ["aarch64", 19, SubArchType.ARMSubArch_v8], ["arm64", 19, SubArchType.ARMSubArch_v8],
    ["arm64e", 19, SubArchType.AArch64SubArch_arm64e], ["arm64ec", 19, SubArchType.AArch64SubArch_arm64ec],
    ["xscale", 19, SubArchType.ARMSubArch_v5te], ["arm", 19, SubArchType.NoSubArch],
    ["mipsr6el", 19, SubArchType.MipsSubArch_r6], ["powerpcspe", 19, SubArchType.PPCSubArch_spe],
    ["spirv64v1.3", 19, SubArchType.SPIRVSubArch_v13], ["dxilv1.8", 19, SubArchType.DXILSubArch_v1_8],
    ["dxilv1.9", 19, SubArchType.NoSubArch], ["dxilv1.9", 22, SubArchType.DXILSubArch_v1_9],
    // The kalimba sub-arch is unreachable: any non-ARM name canonicalises to itself, never to "".
    ["kalimba3", 19, SubArchType.NoSubArch],
    // "ve" ends like "armv7ve", so it gets that sub-arch; harmless, both sides of a comparison get it.
    ["ve", 19, SubArchType.ARMSubArch_v7ve],
    ["x86_64", 19, SubArchType.NoSubArch],
  ] as const)("parseSubArch(%s) in %i = %s", (name, version, subArch) => {
    expect(parseSubArch(name, version)).toBe(subArch);
  });
});

describe("vendor, OS and environment tables", () => {
  it.each([
    ["intel", 19, VendorType.UnknownVendor], ["intel", 22, VendorType.Intel], ["meta", 22, VendorType.Meta],
    ["sie", 19, VendorType.SCEI], ["amd", 19, VendorType.AMD], ["AMD", 19, VendorType.UnknownVendor],
  ] as const)("vendor %s in %i", (name, version, vendor) => {
    expect(parseVendor(name, version)).toBe(vendor);
  });

  it.each([
    ["linux", 19, OSType.Linux], ["linux-gnu", 19, OSType.Linux], ["macosx10.4", 19, OSType.MacOSX],
    ["visionos", 19, OSType.XROS], ["nacl", 19, OSType.NaCl], ["nacl", 22, OSType.UnknownOS],
    ["managarm", 19, OSType.UnknownOS], ["managarm", 22, OSType.Managarm], ["win32", 19, OSType.Win32],
    ["mingw32", 19, OSType.UnknownOS], ["amdhsa", 19, OSType.AMDHSA],
  ] as const)("OS %s in %i", (name, version, os) => {
    expect(parseOS(name, version)).toBe(os);
  });

  it.each([
    ["gnueabihft64", 19, EnvironmentType.GNUEABIHFT64], ["gnut64", 19, EnvironmentType.GNUT64],
    ["gnu", 19, EnvironmentType.GNU], ["gnux", 19, EnvironmentType.GNU], ["muslf32", 19, EnvironmentType.Musl],
    ["muslf32", 22, EnvironmentType.MuslF32], ["muslabi64", 19, EnvironmentType.Musl],
    ["muslx32", 19, EnvironmentType.MuslX32], ["llvm", 19, EnvironmentType.UnknownEnvironment],
    ["llvm", 22, EnvironmentType.LLVM], ["androideabi", 19, EnvironmentType.Android],
    ["elf", 19, EnvironmentType.UnknownEnvironment],
  ] as const)("environment %s in %i", (name, version, environment) => {
    expect(parseEnvironment(name, version)).toBe(environment);
  });
});

describe("Triple", () => {
  it("splits into at most four components and keeps the rest in the environment", () => {
    const triple = new Triple("amdgcn-amd-amdhsa--foo");
    expect([triple.getArchName(), triple.getVendorName(), triple.getOSName(), triple.getEnvironmentName()])
      .toEqual(["amdgcn", "amd", "amdhsa", "-foo"]);
    expect(triple.environment).toBe(EnvironmentType.UnknownEnvironment);
    expect(triple.str()).toBe("amdgcn-amd-amdhsa--foo");
  });

  it("reads missing components as empty", () => {
    const triple = new Triple("x86_64");
    expect([triple.getArchName(), triple.getVendorName(), triple.getOSName(), triple.getEnvironmentName()])
      .toEqual(["x86_64", "", "", ""]);
    expect(Triple.fromParts("x86_64", "", "", "").str()).toBe("x86_64---");
    expect(Triple.fromParts("amdgcn", "amd", "amdhsa", "").str()).toBe("amdgcn-amd-amdhsa-");
  });

  it("gives a bare MIPS arch its implied environment", () => {
    expect(new Triple("mips64").environment).toBe(EnvironmentType.GNUABI64);
    expect(new Triple("mipsn32el").environment).toBe(EnvironmentType.GNUABIN32);
    expect(new Triple("mipsisa32r6").environment).toBe(EnvironmentType.GNU);
    expect(new Triple("mips-unknown").environment).toBe(EnvironmentType.UnknownEnvironment);
  });

  it.each([
    ["x86_64-unknown-linux-gnu", ObjectFormatType.ELF], ["x86_64-pc-windows-msvc", ObjectFormatType.COFF],
    ["x86_64-unknown-uefi", ObjectFormatType.COFF], ["x86_64-apple-macosx", ObjectFormatType.MachO],
    ["x86_64-apple-macosx-elf", ObjectFormatType.ELF], ["powerpc64-ibm-aix", ObjectFormatType.XCOFF],
    ["s390x-ibm-zos", ObjectFormatType.GOFF], ["wasm32-unknown-wasi", ObjectFormatType.Wasm],
    ["spirv64-unknown-unknown", ObjectFormatType.SPIRV], ["dxil-unknown-shadermodel6.5", ObjectFormatType.DXContainer],
    ["mipsel-unknown-windows", ObjectFormatType.COFF], ["amdgcn-amd-amdhsa", ObjectFormatType.ELF],
    ["foo-bar-baz", ObjectFormatType.ELF], ["x86_64-unknown-linux-gnu-xcoff", ObjectFormatType.XCOFF],
  ] as const)("%s has object format %s", (text, format) => {
    expect(new Triple(text).objectFormat).toBe(format);
  });

  it("splitLimited keeps empty pieces and the unsplit rest", () => {
    expect(splitLimited("a--b-c-d-e", "-", 3)).toEqual(["a", "", "b", "c-d-e"]);
    expect(splitLimited("", "-", 3)).toEqual([""]);
  });
});

/** Pairs observed through unbundling with an exact target ID (test/differential: COMPAT_CASES). */
const COMPATIBILITY: readonly [left: string, right: string, version: LlvmVersion, compatible: boolean][] = [
  ["x86_64-w64-windows-gnu", "x86_64-pc-windows-gnu", 19, false],
  ["x86_64-w64-windows-gnu", "x86_64-pc-windows-gnu", 22, true],
  ["x86_64-w64-windows-msvc", "x86_64-pc-windows-msvc", 22, false],
  ["x86_64-apple-macosx10.4", "x86_64-apple-macosx11", 19, true],
  ["x86_64-apple-macosx-foo", "x86_64-apple-macosx-elf", 19, true],
  ["armv7-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabi", 19, true],
  ["armv7-unknown-linux-gnueabi", "thumbv7s-unknown-linux-gnueabi", 19, false],
  ["armv6m-unknown-linux-gnueabi", "thumbv6m-unknown-linux-gnueabi", 19, true],
  ["armv7-apple-ios", "thumbv7-apple-ios-whatever", 19, true],
  ["armv9.6a-unknown-linux-gnu", "arm-unknown-linux-gnu", 19, true],
  ["armv9.6a-unknown-linux-gnu", "arm-unknown-linux-gnu", 22, false],
  ["armv9.5a-unknown-linux-gnu", "arm-unknown-linux-gnu", 19, false],
  ["i386-unknown-linux-gnu", "i686-unknown-linux-gnu", 19, true],
  ["amd64-unknown-linux-gnu", "x86_64-unknown-linux-gnu", 19, true],
  ["x86_64-unknown-linux-gnu", "x86_64h-unknown-linux-gnu", 19, true],
  ["aarch64-unknown-linux-gnu", "arm64-unknown-linux-gnu", 19, true],
  ["x86_64-unknown-linux-muslf32", "x86_64-unknown-linux-musl", 19, true],
  ["x86_64-unknown-linux-muslf32", "x86_64-unknown-linux-musl", 22, false],
  ["x86_64-unknown-linux-gnut64", "x86_64-unknown-linux-gnu", 19, false],
  ["x86_64-unknown-uefi-zzz", "x86_64-unknown-uefi-coff", 19, true],
  ["x86_64-unknown-uefi-zzz", "x86_64-unknown-uefi-elf", 19, false],
  ["x86_64-unknown-linux-elf", "x86_64-unknown-linux-zzz", 19, true],
];

describe("isCompatibleWith", () => {
  it.each(COMPATIBILITY)("%s ~ %s in %i: %s", (left, right, version, compatible) => {
    expect(new Triple(left, version).isCompatibleWith(new Triple(right, version))).toBe(compatible);
  });

  it("is reflexive and, off Apple/windows-gnu, equals field equality", () => {
    for (const text of ARCH_ACCEPTANCE.map(([name]) => `${name}-unknown-linux-gnu`)) {
      const triple = new Triple(text);
      expect(triple.isCompatibleWith(triple)).toBe(true);
      const other = new Triple(text.replace("gnu", "musl"));
      expect(triple.isCompatibleWith(other)).toBe(triple.equals(other));
    }
  });
});

/** Observed as 22's stored IDs (test/differential: VALID_TARGET_GROUPS), plus the three-field amdhsa form. */
const NORMALIZE: readonly [text: string, form: CanonicalForm, normalized: string][] = [
  ["x86_64-gnu-linux-pc", CanonicalForm.FOUR_IDENT, "x86_64-pc-linux-gnu"],
  ["x86_64-linux-gnu-", CanonicalForm.FOUR_IDENT, "x86_64-unknown-linux-gnu"],
  ["x86_64-unknown-linux-", CanonicalForm.FOUR_IDENT, "x86_64-unknown-linux-unknown"],
  ["i386-mingw32-unknown-unknown", CanonicalForm.FOUR_IDENT, "i386-unknown-windows-gnu"],
  ["x86_64-w64-mingw32-gnu", CanonicalForm.FOUR_IDENT, "x86_64-w64-windows-gnu"],
  ["x86_64-pc-windows-elf", CanonicalForm.FOUR_IDENT, "x86_64-pc-windows-elf"],
  ["x86_64-pc-win32-gnu", CanonicalForm.FOUR_IDENT, "x86_64-pc-windows-gnu"],
  ["i686-windows-unknown-coff", CanonicalForm.FOUR_IDENT, "i686-unknown-windows-msvc"],
  ["x86_64-unknown-cygwin-unknown", CanonicalForm.FOUR_IDENT, "x86_64-unknown-windows-cygnus"],
  ["armv7-none-unknown-eabi", CanonicalForm.FOUR_IDENT, "armv7-none-unknown-eabi"],
  ["x86_64-unknown-linux-androideabi21", CanonicalForm.FOUR_IDENT, "x86_64-unknown-linux-android21"],
  ["armv7a-linux-androideabi-unknown", CanonicalForm.FOUR_IDENT, "armv7a-unknown-linux-android"],
  ["x86_64-suse-linux-gnueabi", CanonicalForm.FOUR_IDENT, "x86_64-suse-linux-gnueabihf"],
  ["dxil-unknown-shadermodel6.5-compute", CanonicalForm.FOUR_IDENT, "dxilv1.5-unknown-shadermodel6.5-compute"],
  ["amdgcn-amd-amdhsa-", CanonicalForm.THREE_IDENT, "amdgcn-amd-amdhsa"],
  ["amdgcn-amd-amdhsa-unknown", CanonicalForm.THREE_IDENT, "amdgcn-amd-amdhsa"],
  // Upstream unit-test shapes (Triple.cpp comments): moving left, pushing right, "none" as the OS.
  ["a-b-i386", CanonicalForm.ANY, "i386-a-b"],
  ["pc-a", CanonicalForm.ANY, "unknown-pc-a"],
  ["arm-none-eabi", CanonicalForm.ANY, "arm-unknown-none-eabi"],
  ["x86_64-linux", CanonicalForm.ANY, "x86_64-unknown-linux"],
];

describe("normalize", () => {
  it.each(NORMALIZE)("%s (form %i) → %s", (text, form, normalized) => {
    expect(normalizeTriple(text, form)).toBe(normalized);
  });

  it("is idempotent on four-field results", () => {
    for (const [text] of NORMALIZE) {
      const once = normalizeTriple(text, CanonicalForm.FOUR_IDENT);
      expect(normalizeTriple(once, CanonicalForm.FOUR_IDENT), text).toBe(once);
    }
  });
});
