/**
 * The parts of `llvm::Triple` that clang-offload-bundler relies on, per LLVM version.
 *
 * Follows llvm/lib/TargetParser/Triple.cpp (parseArch, parseSubArch, parseVendor, parseOS, parseEnvironment,
 * parseFormat, getDefaultFormat, the constructors, isCompatibleWith, normalize) and
 * llvm/lib/TargetParser/ARMTargetParser{,Common}.cpp (the ARM/Thumb/AArch64 arch-name grammar). LLVM 19 is the
 * reference; the 14 and 22 differences that the bundler can observe are gated by `LlvmVersion` and were measured
 * with clang-offload-bundler-14/19/22 (spec/bundler.md §1.1 item 8, §3.3; test/differential/target-id-native.test.ts):
 *
 * - arch names: 14 lacks spirv/spirvN vX, dxil*, loongarch*, xtensa; 19 still has le32/le64 (gone in 22);
 *   22 adds riscv32be/riscv64be and dxilv1.9 (measured).
 * - vendors/OSes/environments: 22 adds intel, meta, managarm, llvm, mlibc, rootsignature and drops nacl; 19 lacks
 *   muslabin32, muslabi64, muslf32, muslsf (they parse as musl) (measured). 14 is modelled with the 19 tables.
 * - isCompatibleWith ignores the vendor for windows-gnu triples from 22 on (measured: 19 says incompatible).
 *
 * Enum values are the names LLVM prints (`getArchTypeName` and friends), so `ArchType.x86 === "i386"`.
 */

/** The LLVM releases whose behaviour this project reproduces. */
export type LlvmVersion = 14 | 19 | 22;

export const ArchType = {
  UnknownArch: "unknown",
  aarch64: "aarch64",
  aarch64_32: "aarch64_32",
  aarch64_be: "aarch64_be",
  amdgcn: "amdgcn",
  amdil64: "amdil64",
  amdil: "amdil",
  arc: "arc",
  arm: "arm",
  armeb: "armeb",
  avr: "avr",
  bpfeb: "bpfeb",
  bpfel: "bpfel",
  csky: "csky",
  dxil: "dxil",
  hexagon: "hexagon",
  hsail64: "hsail64",
  hsail: "hsail",
  kalimba: "kalimba",
  lanai: "lanai",
  le32: "le32",
  le64: "le64",
  loongarch32: "loongarch32",
  loongarch64: "loongarch64",
  m68k: "m68k",
  mips64: "mips64",
  mips64el: "mips64el",
  mips: "mips",
  mipsel: "mipsel",
  msp430: "msp430",
  nvptx64: "nvptx64",
  nvptx: "nvptx",
  ppc64: "powerpc64",
  ppc64le: "powerpc64le",
  ppc: "powerpc",
  ppcle: "powerpcle",
  r600: "r600",
  renderscript32: "renderscript32",
  renderscript64: "renderscript64",
  riscv32: "riscv32",
  riscv64: "riscv64",
  riscv32be: "riscv32be",
  riscv64be: "riscv64be",
  shave: "shave",
  sparc: "sparc",
  sparcel: "sparcel",
  sparcv9: "sparcv9",
  spir64: "spir64",
  spir: "spir",
  spirv: "spirv",
  spirv32: "spirv32",
  spirv64: "spirv64",
  systemz: "s390x",
  tce: "tce",
  tcele: "tcele",
  thumb: "thumb",
  thumbeb: "thumbeb",
  ve: "ve",
  wasm32: "wasm32",
  wasm64: "wasm64",
  x86: "i386",
  x86_64: "x86_64",
  xcore: "xcore",
  xtensa: "xtensa",
} as const;
export type ArchType = (typeof ArchType)[keyof typeof ArchType];

export const SubArchType = {
  NoSubArch: "NoSubArch",
  ARMSubArch_v9_7a: "ARMSubArch_v9_7a",
  ARMSubArch_v9_6a: "ARMSubArch_v9_6a",
  ARMSubArch_v9_5a: "ARMSubArch_v9_5a",
  ARMSubArch_v9_4a: "ARMSubArch_v9_4a",
  ARMSubArch_v9_3a: "ARMSubArch_v9_3a",
  ARMSubArch_v9_2a: "ARMSubArch_v9_2a",
  ARMSubArch_v9_1a: "ARMSubArch_v9_1a",
  ARMSubArch_v9: "ARMSubArch_v9",
  ARMSubArch_v8_9a: "ARMSubArch_v8_9a",
  ARMSubArch_v8_8a: "ARMSubArch_v8_8a",
  ARMSubArch_v8_7a: "ARMSubArch_v8_7a",
  ARMSubArch_v8_6a: "ARMSubArch_v8_6a",
  ARMSubArch_v8_5a: "ARMSubArch_v8_5a",
  ARMSubArch_v8_4a: "ARMSubArch_v8_4a",
  ARMSubArch_v8_3a: "ARMSubArch_v8_3a",
  ARMSubArch_v8_2a: "ARMSubArch_v8_2a",
  ARMSubArch_v8_1a: "ARMSubArch_v8_1a",
  ARMSubArch_v8: "ARMSubArch_v8",
  ARMSubArch_v8r: "ARMSubArch_v8r",
  ARMSubArch_v8m_baseline: "ARMSubArch_v8m_baseline",
  ARMSubArch_v8m_mainline: "ARMSubArch_v8m_mainline",
  ARMSubArch_v8_1m_mainline: "ARMSubArch_v8_1m_mainline",
  ARMSubArch_v7: "ARMSubArch_v7",
  ARMSubArch_v7em: "ARMSubArch_v7em",
  ARMSubArch_v7m: "ARMSubArch_v7m",
  ARMSubArch_v7s: "ARMSubArch_v7s",
  ARMSubArch_v7k: "ARMSubArch_v7k",
  ARMSubArch_v7ve: "ARMSubArch_v7ve",
  ARMSubArch_v6: "ARMSubArch_v6",
  ARMSubArch_v6m: "ARMSubArch_v6m",
  ARMSubArch_v6k: "ARMSubArch_v6k",
  ARMSubArch_v6t2: "ARMSubArch_v6t2",
  ARMSubArch_v5: "ARMSubArch_v5",
  ARMSubArch_v5te: "ARMSubArch_v5te",
  ARMSubArch_v4t: "ARMSubArch_v4t",
  AArch64SubArch_arm64e: "AArch64SubArch_arm64e",
  AArch64SubArch_arm64ec: "AArch64SubArch_arm64ec",
  KalimbaSubArch_v3: "KalimbaSubArch_v3",
  KalimbaSubArch_v4: "KalimbaSubArch_v4",
  KalimbaSubArch_v5: "KalimbaSubArch_v5",
  MipsSubArch_r6: "MipsSubArch_r6",
  PPCSubArch_spe: "PPCSubArch_spe",
  SPIRVSubArch_v10: "SPIRVSubArch_v10",
  SPIRVSubArch_v11: "SPIRVSubArch_v11",
  SPIRVSubArch_v12: "SPIRVSubArch_v12",
  SPIRVSubArch_v13: "SPIRVSubArch_v13",
  SPIRVSubArch_v14: "SPIRVSubArch_v14",
  SPIRVSubArch_v15: "SPIRVSubArch_v15",
  SPIRVSubArch_v16: "SPIRVSubArch_v16",
  DXILSubArch_v1_0: "DXILSubArch_v1_0",
  DXILSubArch_v1_1: "DXILSubArch_v1_1",
  DXILSubArch_v1_2: "DXILSubArch_v1_2",
  DXILSubArch_v1_3: "DXILSubArch_v1_3",
  DXILSubArch_v1_4: "DXILSubArch_v1_4",
  DXILSubArch_v1_5: "DXILSubArch_v1_5",
  DXILSubArch_v1_6: "DXILSubArch_v1_6",
  DXILSubArch_v1_7: "DXILSubArch_v1_7",
  DXILSubArch_v1_8: "DXILSubArch_v1_8",
  DXILSubArch_v1_9: "DXILSubArch_v1_9",
} as const;
export type SubArchType = (typeof SubArchType)[keyof typeof SubArchType];

export const VendorType = {
  UnknownVendor: "unknown",
  Apple: "apple",
  PC: "pc",
  SCEI: "scei",
  Freescale: "fsl",
  IBM: "ibm",
  ImaginationTechnologies: "img",
  Intel: "intel",
  MipsTechnologies: "mti",
  NVIDIA: "nvidia",
  CSR: "csr",
  AMD: "amd",
  Mesa: "mesa",
  SUSE: "suse",
  OpenEmbedded: "oe",
  Meta: "meta",
} as const;
export type VendorType = (typeof VendorType)[keyof typeof VendorType];

export const OSType = {
  UnknownOS: "unknown",
  AIX: "aix",
  AMDHSA: "amdhsa",
  AMDPAL: "amdpal",
  BridgeOS: "bridgeos",
  CUDA: "cuda",
  Darwin: "darwin",
  DragonFly: "dragonfly",
  DriverKit: "driverkit",
  ELFIAMCU: "elfiamcu",
  Emscripten: "emscripten",
  FreeBSD: "freebsd",
  Fuchsia: "fuchsia",
  Haiku: "haiku",
  HermitCore: "hermit",
  Hurd: "hurd",
  IOS: "ios",
  KFreeBSD: "kfreebsd",
  Linux: "linux",
  Lv2: "lv2",
  MacOSX: "macosx",
  Managarm: "managarm",
  Mesa3D: "mesa3d",
  NaCl: "nacl",
  NVCL: "nvcl",
  NetBSD: "netbsd",
  OpenBSD: "openbsd",
  PS4: "ps4",
  PS5: "ps5",
  RTEMS: "rtems",
  Solaris: "solaris",
  Serenity: "serenity",
  TvOS: "tvos",
  UEFI: "uefi",
  WASI: "wasi",
  WatchOS: "watchos",
  Win32: "windows",
  ZOS: "zos",
  ShaderModel: "shadermodel",
  LiteOS: "liteos",
  XROS: "xros",
  Vulkan: "vulkan",
} as const;
export type OSType = (typeof OSType)[keyof typeof OSType];

export const EnvironmentType = {
  UnknownEnvironment: "unknown",
  Android: "android",
  CODE16: "code16",
  CoreCLR: "coreclr",
  Cygnus: "cygnus",
  EABI: "eabi",
  EABIHF: "eabihf",
  GNU: "gnu",
  GNUT64: "gnut64",
  GNUABI64: "gnuabi64",
  GNUABIN32: "gnuabin32",
  GNUEABI: "gnueabi",
  GNUEABIT64: "gnueabit64",
  GNUEABIHF: "gnueabihf",
  GNUEABIHFT64: "gnueabihft64",
  GNUF32: "gnuf32",
  GNUF64: "gnuf64",
  GNUSF: "gnusf",
  GNUX32: "gnux32",
  GNUILP32: "gnu_ilp32",
  Itanium: "itanium",
  MSVC: "msvc",
  MacABI: "macabi",
  Musl: "musl",
  MuslABIN32: "muslabin32",
  MuslABI64: "muslabi64",
  MuslEABI: "musleabi",
  MuslEABIHF: "musleabihf",
  MuslF32: "muslf32",
  MuslSF: "muslsf",
  MuslX32: "muslx32",
  Simulator: "simulator",
  Pixel: "pixel",
  Vertex: "vertex",
  Geometry: "geometry",
  Hull: "hull",
  Domain: "domain",
  Compute: "compute",
  Library: "library",
  RayGeneration: "raygeneration",
  Intersection: "intersection",
  AnyHit: "anyhit",
  ClosestHit: "closesthit",
  Miss: "miss",
  Callable: "callable",
  Mesh: "mesh",
  Amplification: "amplification",
  RootSignature: "rootsignature",
  OpenCL: "opencl",
  OpenHOS: "ohos",
  PAuthTest: "pauthtest",
  LLVM: "llvm",
  Mlibc: "mlibc",
} as const;
export type EnvironmentType = (typeof EnvironmentType)[keyof typeof EnvironmentType];

export const ObjectFormatType = {
  UnknownObjectFormat: "",
  COFF: "coff",
  DXContainer: "dxcontainer",
  ELF: "elf",
  GOFF: "goff",
  MachO: "macho",
  SPIRV: "spirv",
  Wasm: "wasm",
  XCOFF: "xcoff",
} as const;
export type ObjectFormatType = (typeof ObjectFormatType)[keyof typeof ObjectFormatType];

/** `Triple::CanonicalForm`: how many components `normalize` keeps (ANY keeps what it found). */
export const CanonicalForm = { ANY: 0, THREE_IDENT: 3, FOUR_IDENT: 4, FIVE_IDENT: 5 } as const;
export type CanonicalForm = (typeof CanonicalForm)[keyof typeof CanonicalForm];

/** A table row that only exists in some versions: `since`/`until` are inclusive LLVM versions. */
interface Gated {
  readonly since?: LlvmVersion;
  readonly until?: LlvmVersion;
}

function isPresent(row: Gated, version: LlvmVersion): boolean {
  return (row.since === undefined || version >= row.since) && (row.until === undefined || version <= row.until);
}

// ---------------------------------------------------------------------------------------------------------------
// Arch names (Triple.cpp parseArch; names measured per version with the bundlers' "unknown target triple" error).

interface ArchName extends Gated {
  readonly arch: ArchType;
}

const A = ArchType;
const NO_SPIRV_DXIL_IN_14: Gated = { since: 19 };

/** `parseArch`'s exact-name cases, before the ARM/BPF/kalimba fallbacks. */
const ARCH_NAMES: ReadonlyMap<string, ArchName> = new Map<string, ArchName>([
  ...["i386", "i486", "i586", "i686", "i786", "i886", "i986"].map((name) => [name, { arch: A.x86 }] as const),
  ...["amd64", "x86_64", "x86_64h"].map((name) => [name, { arch: A.x86_64 }] as const),
  ...["powerpc", "powerpcspe", "ppc", "ppc32"].map((name) => [name, { arch: A.ppc }] as const),
  ...["powerpcle", "ppcle", "ppc32le"].map((name) => [name, { arch: A.ppcle }] as const),
  ...["powerpc64", "ppu", "ppc64"].map((name) => [name, { arch: A.ppc64 }] as const),
  ...["powerpc64le", "ppc64le"].map((name) => [name, { arch: A.ppc64le }] as const),
  ["xscale", { arch: A.arm }],
  ["xscaleeb", { arch: A.armeb }],
  ["aarch64", { arch: A.aarch64 }],
  ["aarch64_be", { arch: A.aarch64_be }],
  ["aarch64_32", { arch: A.aarch64_32 }],
  ["arc", { arch: A.arc }],
  ["arm64", { arch: A.aarch64 }],
  ["arm64_32", { arch: A.aarch64_32 }],
  ["arm64e", { arch: A.aarch64 }],
  ["arm64ec", { arch: A.aarch64 }],
  ["arm", { arch: A.arm }],
  ["armeb", { arch: A.armeb }],
  ["thumb", { arch: A.thumb }],
  ["thumbeb", { arch: A.thumbeb }],
  ["avr", { arch: A.avr }],
  ["m68k", { arch: A.m68k }],
  ["msp430", { arch: A.msp430 }],
  ...["mips", "mipseb", "mipsallegrex", "mipsisa32r6", "mipsr6"].map((name) => [name, { arch: A.mips }] as const),
  ...["mipsel", "mipsallegrexel", "mipsisa32r6el", "mipsr6el"].map((name) => [name, { arch: A.mipsel }] as const),
  ...["mips64", "mips64eb", "mipsn32", "mipsisa64r6", "mips64r6", "mipsn32r6"].map(
    (name) => [name, { arch: A.mips64 }] as const,
  ),
  ...["mips64el", "mipsn32el", "mipsisa64r6el", "mips64r6el", "mipsn32r6el"].map(
    (name) => [name, { arch: A.mips64el }] as const,
  ),
  ["r600", { arch: A.r600 }],
  ["amdgcn", { arch: A.amdgcn }],
  ["riscv32", { arch: A.riscv32 }],
  ["riscv64", { arch: A.riscv64 }],
  ["riscv32be", { arch: A.riscv32be, since: 22 }],
  ["riscv64be", { arch: A.riscv64be, since: 22 }],
  ["hexagon", { arch: A.hexagon }],
  ["s390x", { arch: A.systemz }],
  ["systemz", { arch: A.systemz }],
  ["sparc", { arch: A.sparc }],
  ["sparcel", { arch: A.sparcel }],
  ["sparcv9", { arch: A.sparcv9 }],
  ["sparc64", { arch: A.sparcv9 }],
  ["tce", { arch: A.tce }],
  ["tcele", { arch: A.tcele }],
  ["xcore", { arch: A.xcore }],
  ["nvptx", { arch: A.nvptx }],
  ["nvptx64", { arch: A.nvptx64 }],
  ["le32", { arch: A.le32, until: 19 }],
  ["le64", { arch: A.le64, until: 19 }],
  ["amdil", { arch: A.amdil }],
  ["amdil64", { arch: A.amdil64 }],
  ["hsail", { arch: A.hsail }],
  ["hsail64", { arch: A.hsail64 }],
  ["spir", { arch: A.spir }],
  ["spir64", { arch: A.spir64 }],
  ...["spirv", "spirv1.5", "spirv1.6"].map((name) => [name, { arch: A.spirv, ...NO_SPIRV_DXIL_IN_14 }] as const),
  ["spirv32", { arch: A.spirv32 }],
  ...["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6"].map(
    (suffix) => [`spirv32v${suffix}`, { arch: A.spirv32, ...NO_SPIRV_DXIL_IN_14 }] as const,
  ),
  ["spirv64", { arch: A.spirv64 }],
  ...["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6"].map(
    (suffix) => [`spirv64v${suffix}`, { arch: A.spirv64, ...NO_SPIRV_DXIL_IN_14 }] as const,
  ),
  ["lanai", { arch: A.lanai }],
  ["renderscript32", { arch: A.renderscript32 }],
  ["renderscript64", { arch: A.renderscript64 }],
  ["shave", { arch: A.shave }],
  ["ve", { arch: A.ve }],
  ["wasm32", { arch: A.wasm32 }],
  ["wasm64", { arch: A.wasm64 }],
  ["csky", { arch: A.csky }],
  ["loongarch32", { arch: A.loongarch32, since: 19 }],
  ["loongarch64", { arch: A.loongarch64, since: 19 }],
  ...["dxil", "dxilv1.0", "dxilv1.1", "dxilv1.2", "dxilv1.3", "dxilv1.4", "dxilv1.5", "dxilv1.6", "dxilv1.7", "dxilv1.8"].map(
    (name) => [name, { arch: A.dxil, ...NO_SPIRV_DXIL_IN_14 }] as const,
  ),
  ["dxilv1.9", { arch: A.dxil, since: 22 }],
  ["xtensa", { arch: A.xtensa, since: 19 }],
]);

/** `parseBPFArch`. A bare "bpf" follows the host's endianness; every supported host is little-endian. */
function parseBpfArch(name: string): ArchType {
  if (name === "bpf" || name === "bpf_le" || name === "bpfel") return A.bpfel;
  if (name === "bpf_be" || name === "bpfeb") return A.bpfeb;
  return A.UnknownArch;
}

/** `Triple::parseArch` (static in Triple.cpp): the arch enum for the first triple component. */
export function parseArch(name: string, version: LlvmVersion = 19): ArchType {
  const row = ARCH_NAMES.get(name);
  if (row !== undefined && isPresent(row, version)) return row.arch;
  if (name.startsWith("kalimba")) return A.kalimba;
  if (name.startsWith("arm") || name.startsWith("thumb") || name.startsWith("aarch64")) return parseArmArch(name, version);
  if (name.startsWith("bpf")) return parseBpfArch(name);
  return A.UnknownArch;
}

// ---------------------------------------------------------------------------------------------------------------
// ARM arch grammar (ARMTargetParserCommon.cpp getCanonicalArchName/getArchSynonym/parseArchISA/parseArchEndian,
// ARMTargetParser.cpp parseArch/parseArchProfile/parseArchVersion, ARMTargetParser.def ARM_ARCH names).

type ArmIsa = "arm" | "thumb" | "aarch64" | "invalid";
type ArmEndian = "little" | "big" | "invalid";

interface ArmArch extends Gated {
  readonly name: string;
  /** The triple sub-arch `parseSubArch` maps this ARM arch kind to. */
  readonly subArch: SubArchType;
  readonly profile: "A" | "R" | "M" | "invalid";
  readonly majorVersion: number;
}

const S = SubArchType;

/** ARMTargetParser.def ARM_ARCH rows in table order (`parseArch` returns the first name ending in the synonym). */
const ARM_ARCHES: readonly ArmArch[] = [
  { name: "invalid", subArch: S.NoSubArch, profile: "invalid", majorVersion: 0 },
  { name: "armv4", subArch: S.NoSubArch, profile: "invalid", majorVersion: 4 },
  { name: "armv4t", subArch: S.ARMSubArch_v4t, profile: "invalid", majorVersion: 4 },
  { name: "armv5t", subArch: S.ARMSubArch_v5, profile: "invalid", majorVersion: 5 },
  { name: "armv5te", subArch: S.ARMSubArch_v5te, profile: "invalid", majorVersion: 5 },
  { name: "armv5tej", subArch: S.ARMSubArch_v5te, profile: "invalid", majorVersion: 5 },
  { name: "armv6", subArch: S.ARMSubArch_v6, profile: "invalid", majorVersion: 6 },
  { name: "armv6k", subArch: S.ARMSubArch_v6k, profile: "invalid", majorVersion: 6 },
  { name: "armv6t2", subArch: S.ARMSubArch_v6t2, profile: "invalid", majorVersion: 6 },
  { name: "armv6kz", subArch: S.ARMSubArch_v6k, profile: "invalid", majorVersion: 6 },
  { name: "armv6-m", subArch: S.ARMSubArch_v6m, profile: "M", majorVersion: 6 },
  { name: "armv7-a", subArch: S.ARMSubArch_v7, profile: "A", majorVersion: 7 },
  { name: "armv7ve", subArch: S.ARMSubArch_v7ve, profile: "A", majorVersion: 7 },
  { name: "armv7-r", subArch: S.ARMSubArch_v7, profile: "R", majorVersion: 7 },
  { name: "armv7-m", subArch: S.ARMSubArch_v7m, profile: "M", majorVersion: 7 },
  { name: "armv7e-m", subArch: S.ARMSubArch_v7em, profile: "M", majorVersion: 7 },
  { name: "armv8-a", subArch: S.ARMSubArch_v8, profile: "A", majorVersion: 8 },
  { name: "armv8.1-a", subArch: S.ARMSubArch_v8_1a, profile: "A", majorVersion: 8 },
  { name: "armv8.2-a", subArch: S.ARMSubArch_v8_2a, profile: "A", majorVersion: 8 },
  { name: "armv8.3-a", subArch: S.ARMSubArch_v8_3a, profile: "A", majorVersion: 8 },
  { name: "armv8.4-a", subArch: S.ARMSubArch_v8_4a, profile: "A", majorVersion: 8 },
  { name: "armv8.5-a", subArch: S.ARMSubArch_v8_5a, profile: "A", majorVersion: 8 },
  { name: "armv8.6-a", subArch: S.ARMSubArch_v8_6a, profile: "A", majorVersion: 8 },
  { name: "armv8.7-a", subArch: S.ARMSubArch_v8_7a, profile: "A", majorVersion: 8 },
  { name: "armv8.8-a", subArch: S.ARMSubArch_v8_8a, profile: "A", majorVersion: 8 },
  { name: "armv8.9-a", subArch: S.ARMSubArch_v8_9a, profile: "A", majorVersion: 8 },
  { name: "armv9-a", subArch: S.ARMSubArch_v9, profile: "A", majorVersion: 9 },
  { name: "armv9.1-a", subArch: S.ARMSubArch_v9_1a, profile: "A", majorVersion: 9 },
  { name: "armv9.2-a", subArch: S.ARMSubArch_v9_2a, profile: "A", majorVersion: 9 },
  { name: "armv9.3-a", subArch: S.ARMSubArch_v9_3a, profile: "A", majorVersion: 9 },
  { name: "armv9.4-a", subArch: S.ARMSubArch_v9_4a, profile: "A", majorVersion: 9 },
  { name: "armv9.5-a", subArch: S.ARMSubArch_v9_5a, profile: "A", majorVersion: 9 },
  // Measured: 19 gives "armv9.6a" no sub-arch (it is then compatible with plain "arm"), 22 does not.
  { name: "armv9.6-a", subArch: S.ARMSubArch_v9_6a, profile: "A", majorVersion: 9, since: 22 },
  { name: "armv9.7-a", subArch: S.ARMSubArch_v9_7a, profile: "A", majorVersion: 9, since: 22 },
  { name: "armv8-r", subArch: S.ARMSubArch_v8r, profile: "R", majorVersion: 8 },
  { name: "armv8-m.base", subArch: S.ARMSubArch_v8m_baseline, profile: "M", majorVersion: 8 },
  { name: "armv8-m.main", subArch: S.ARMSubArch_v8m_mainline, profile: "M", majorVersion: 8 },
  { name: "armv8.1-m.main", subArch: S.ARMSubArch_v8_1m_mainline, profile: "M", majorVersion: 8 },
  { name: "iwmmxt", subArch: S.ARMSubArch_v5te, profile: "invalid", majorVersion: 5 },
  { name: "iwmmxt2", subArch: S.ARMSubArch_v5te, profile: "invalid", majorVersion: 5 },
  { name: "xscale", subArch: S.ARMSubArch_v5te, profile: "invalid", majorVersion: 5 },
  { name: "armv7s", subArch: S.ARMSubArch_v7s, profile: "invalid", majorVersion: 7 },
  { name: "armv7k", subArch: S.ARMSubArch_v7k, profile: "A", majorVersion: 7 },
];

interface ArmSynonym extends Gated {
  readonly to: string;
}

/** `ARM::getArchSynonym`: short spellings of an arch to the name used in the table. */
const ARM_SYNONYMS: ReadonlyMap<string, ArmSynonym> = new Map<string, ArmSynonym>([
  ["v5", { to: "v5t" }],
  ["v5e", { to: "v5te" }],
  ["v6j", { to: "v6" }],
  ["v6hl", { to: "v6k" }],
  ...["v6m", "v6sm", "v6s-m"].map((from) => [from, { to: "v6-m" }] as const),
  ...["v6z", "v6zk"].map((from) => [from, { to: "v6kz" }] as const),
  ...["v7", "v7a", "v7hl", "v7l"].map((from) => [from, { to: "v7-a" }] as const),
  ["v7r", { to: "v7-r" }],
  ["v7m", { to: "v7-m" }],
  ["v7em", { to: "v7e-m" }],
  ...["v8", "v8a", "v8l", "aarch64", "arm64"].map((from) => [from, { to: "v8-a" }] as const),
  ...["1", "2", "3", "4", "5", "6", "7", "8", "9"].map((minor) => [`v8.${minor}a`, { to: `v8.${minor}-a` }] as const),
  ["v8r", { to: "v8-r" }],
  ...["v9", "v9a"].map((from) => [from, { to: "v9-a" }] as const),
  ...["1", "2", "3", "4", "5"].map((minor) => [`v9.${minor}a`, { to: `v9.${minor}-a` }] as const),
  ["v9.6a", { to: "v9.6-a", since: 22 }],
  ["v9.7a", { to: "v9.7-a", since: 22 }],
  ["v8m.base", { to: "v8-m.base" }],
  ["v8m.main", { to: "v8-m.main" }],
  ["v8.1m.main", { to: "v8.1-m.main" }],
]);

function isAsciiDigit(char: string | undefined): boolean {
  return char !== undefined && char >= "0" && char <= "9";
}

/**
 * `ARM::getCanonicalArchName`: strips the arm/thumb/aarch64 prefix and any "eb" marker; "" means invalid. Names
 * with a prefix must continue with 'v' and a digit; names without one pass through (marketing names like xscale).
 */
export function getArmCanonicalArchName(arch: string): string {
  let offset = -1;
  let rest = arch;
  if (rest.startsWith("arm64_32")) offset = 8;
  else if (rest.startsWith("arm64e")) offset = 6;
  else if (rest.startsWith("arm64")) offset = 5;
  else if (rest.startsWith("aarch64_32")) offset = 10;
  else if (rest.startsWith("arm")) offset = 3;
  else if (rest.startsWith("thumb")) offset = 5;
  else if (rest.startsWith("aarch64")) {
    offset = 7;
    // AArch64 spells big-endian "_be"; an "eb" anywhere makes the name invalid.
    if (rest.includes("eb")) return "";
    if (rest.substring(offset, offset + 3) === "_be") offset += 3;
  }

  if (offset !== -1 && rest.substring(offset, offset + 2) === "eb") offset += 2;
  else if (rest.endsWith("eb")) rest = rest.slice(0, -2);
  if (offset !== -1) rest = rest.substring(offset);

  if (rest === "") return arch;
  if (offset !== -1) {
    if (rest.length >= 2 && (rest[0] !== "v" || !isAsciiDigit(rest[1]))) return "";
    if (rest.includes("eb")) return "";
  }
  return rest;
}

function parseArmIsa(arch: string): ArmIsa {
  if (arch.startsWith("aarch64") || arch.startsWith("arm64")) return "aarch64";
  if (arch.startsWith("thumb")) return "thumb";
  if (arch.startsWith("arm")) return "arm";
  return "invalid";
}

function parseArmEndian(arch: string): ArmEndian {
  if (arch.startsWith("armeb") || arch.startsWith("thumbeb") || arch.startsWith("aarch64_be")) return "big";
  if (arch.startsWith("arm") || arch.startsWith("thumb")) return arch.endsWith("eb") ? "big" : "little";
  if (arch.startsWith("aarch64")) return "little";
  return "invalid";
}

/** `ARM::parseArch`: the first ARM_ARCH row whose name ends with the synonym of the canonical name. */
function parseArmArchKind(arch: string, version: LlvmVersion): ArmArch {
  const canonical = getArmCanonicalArchName(arch);
  const synonym = ARM_SYNONYMS.get(canonical);
  const spelled = synonym !== undefined && isPresent(synonym, version) ? synonym.to : canonical;
  for (const row of ARM_ARCHES) if (isPresent(row, version) && row.name.endsWith(spelled)) return row;
  return ARM_ARCHES[0]!;
}

/** `parseARMArch` in Triple.cpp: accepts any well-formed ARM spelling, not only the table's names. */
function parseArmArch(name: string, version: LlvmVersion): ArchType {
  const isa = parseArmIsa(name);
  const endian = parseArmEndian(name);
  let arch: ArchType = A.UnknownArch;
  if (endian === "little") arch = isa === "arm" ? A.arm : isa === "thumb" ? A.thumb : isa === "aarch64" ? A.aarch64 : arch;
  else if (endian === "big")
    arch = isa === "arm" ? A.armeb : isa === "thumb" ? A.thumbeb : isa === "aarch64" ? A.aarch64_be : arch;

  const canonical = getArmCanonicalArchName(name);
  if (canonical === "") return A.UnknownArch;
  // Thumb only exists from v4 on.
  if (isa === "thumb" && (canonical.startsWith("v2") || canonical.startsWith("v3"))) return A.UnknownArch;
  // v6-M only has Thumb, so an "arm" spelling of it is still a thumb triple.
  // parseArchProfile/parseArchVersion canonicalise once more before ARM::parseArch does it again.
  const kind = parseArmArchKind(getArmCanonicalArchName(canonical), version);
  if (kind.profile === "M" && kind.majorVersion === 6) return endian === "big" ? A.thumbeb : A.thumb;
  return arch;
}

/** `Triple::parseSubArch` (static in Triple.cpp). */
export function parseSubArch(name: string, version: LlvmVersion = 19): SubArchType {
  if (name.startsWith("mips") && (name.endsWith("r6el") || name.endsWith("r6"))) return S.MipsSubArch_r6;
  if (name === "powerpcspe") return S.PPCSubArch_spe;
  if (name === "arm64e") return S.AArch64SubArch_arm64e;
  if (name === "arm64ec") return S.AArch64SubArch_arm64ec;
  if (name.startsWith("spirv")) {
    for (const minor of [0, 1, 2, 3, 4, 5, 6])
      if (name.endsWith(`v1.${minor}`)) return `SPIRVSubArch_v1${minor}` as SubArchType;
    return S.NoSubArch;
  }
  if (name.startsWith("dxil")) {
    const lastMinor = version >= 22 ? 9 : 8;
    for (let minor = 0; minor <= lastMinor; minor++)
      if (name.endsWith(`v1.${minor}`)) return `DXILSubArch_v1_${minor}` as SubArchType;
    return S.NoSubArch;
  }
  const armName = getArmCanonicalArchName(name);
  if (armName === "") {
    for (const generation of [3, 4, 5] as const)
      if (name.endsWith(`kalimba${generation}`)) return `KalimbaSubArch_v${generation}` as SubArchType;
    return S.NoSubArch;
  }
  return parseArmArchKind(armName, version).subArch;
}

// ---------------------------------------------------------------------------------------------------------------
// Vendor, OS, environment, object format.

interface NamedValue<T> extends Gated {
  readonly prefix: string;
  readonly value: T;
}

const VENDOR_NAMES: ReadonlyMap<string, NamedValue<VendorType>> = new Map<string, NamedValue<VendorType>>(
  (
    [
      ["apple", VendorType.Apple],
      ["pc", VendorType.PC],
      ["scei", VendorType.SCEI],
      ["sie", VendorType.SCEI],
      ["fsl", VendorType.Freescale],
      ["ibm", VendorType.IBM],
      ["img", VendorType.ImaginationTechnologies],
      ["mti", VendorType.MipsTechnologies],
      ["nvidia", VendorType.NVIDIA],
      ["csr", VendorType.CSR],
      ["amd", VendorType.AMD],
      ["mesa", VendorType.Mesa],
      ["suse", VendorType.SUSE],
      ["oe", VendorType.OpenEmbedded],
    ] as const
  )
    .map(([prefix, value]) => [prefix, { prefix, value }] as [string, NamedValue<VendorType>])
    .concat([
      ["intel", { prefix: "intel", value: VendorType.Intel, since: 22 }],
      ["meta", { prefix: "meta", value: VendorType.Meta, since: 22 }],
    ]),
);

/** `Triple::parseVendor` (static): exact names only. */
export function parseVendor(name: string, version: LlvmVersion = 19): VendorType {
  const row = VENDOR_NAMES.get(name);
  return row !== undefined && isPresent(row, version) ? row.value : VendorType.UnknownVendor;
}

const O = OSType;

/** `parseOS`'s StartsWith cases, in order (order matters for prefixes). */
const OS_PREFIXES: readonly NamedValue<OSType>[] = [
  { prefix: "darwin", value: O.Darwin },
  { prefix: "dragonfly", value: O.DragonFly },
  { prefix: "freebsd", value: O.FreeBSD },
  { prefix: "fuchsia", value: O.Fuchsia },
  { prefix: "ios", value: O.IOS },
  { prefix: "kfreebsd", value: O.KFreeBSD },
  { prefix: "linux", value: O.Linux },
  { prefix: "lv2", value: O.Lv2 },
  { prefix: "macos", value: O.MacOSX },
  { prefix: "managarm", value: O.Managarm, since: 22 },
  { prefix: "netbsd", value: O.NetBSD },
  { prefix: "openbsd", value: O.OpenBSD },
  { prefix: "solaris", value: O.Solaris },
  { prefix: "uefi", value: O.UEFI },
  { prefix: "win32", value: O.Win32 },
  { prefix: "windows", value: O.Win32 },
  { prefix: "zos", value: O.ZOS },
  { prefix: "haiku", value: O.Haiku },
  { prefix: "rtems", value: O.RTEMS },
  { prefix: "nacl", value: O.NaCl, until: 19 },
  { prefix: "aix", value: O.AIX },
  { prefix: "cuda", value: O.CUDA },
  { prefix: "nvcl", value: O.NVCL },
  { prefix: "amdhsa", value: O.AMDHSA },
  { prefix: "ps4", value: O.PS4 },
  { prefix: "ps5", value: O.PS5 },
  { prefix: "elfiamcu", value: O.ELFIAMCU },
  { prefix: "tvos", value: O.TvOS },
  { prefix: "watchos", value: O.WatchOS },
  { prefix: "bridgeos", value: O.BridgeOS },
  { prefix: "driverkit", value: O.DriverKit },
  { prefix: "xros", value: O.XROS },
  { prefix: "visionos", value: O.XROS },
  { prefix: "mesa3d", value: O.Mesa3D },
  { prefix: "amdpal", value: O.AMDPAL },
  { prefix: "hermit", value: O.HermitCore },
  { prefix: "hurd", value: O.Hurd },
  { prefix: "wasi", value: O.WASI },
  { prefix: "emscripten", value: O.Emscripten },
  { prefix: "shadermodel", value: O.ShaderModel },
  { prefix: "liteos", value: O.LiteOS },
  { prefix: "serenity", value: O.Serenity },
  { prefix: "vulkan", value: O.Vulkan },
];

function matchPrefix<T>(rows: readonly NamedValue<T>[], name: string, version: LlvmVersion): T | undefined {
  for (const row of rows) if (isPresent(row, version) && name.startsWith(row.prefix)) return row.value;
  return undefined;
}

/** `Triple::parseOS` (static): first matching prefix, so "linux-gnu"-style suffixes and versions are allowed. */
export function parseOS(name: string, version: LlvmVersion = 19): OSType {
  return matchPrefix(OS_PREFIXES, name, version) ?? O.UnknownOS;
}

const E = EnvironmentType;

/** `parseEnvironment`'s StartsWith cases, in order (longer prefixes first where they share a stem). */
const ENVIRONMENT_PREFIXES: readonly NamedValue<EnvironmentType>[] = [
  { prefix: "eabihf", value: E.EABIHF },
  { prefix: "eabi", value: E.EABI },
  { prefix: "gnuabin32", value: E.GNUABIN32 },
  { prefix: "gnuabi64", value: E.GNUABI64 },
  { prefix: "gnueabihft64", value: E.GNUEABIHFT64 },
  { prefix: "gnueabihf", value: E.GNUEABIHF },
  { prefix: "gnueabit64", value: E.GNUEABIT64 },
  { prefix: "gnueabi", value: E.GNUEABI },
  { prefix: "gnuf32", value: E.GNUF32 },
  { prefix: "gnuf64", value: E.GNUF64 },
  { prefix: "gnusf", value: E.GNUSF },
  { prefix: "gnux32", value: E.GNUX32 },
  { prefix: "gnu_ilp32", value: E.GNUILP32 },
  { prefix: "code16", value: E.CODE16 },
  { prefix: "gnut64", value: E.GNUT64 },
  { prefix: "gnu", value: E.GNU },
  { prefix: "android", value: E.Android },
  { prefix: "muslabin32", value: E.MuslABIN32, since: 22 },
  { prefix: "muslabi64", value: E.MuslABI64, since: 22 },
  { prefix: "musleabihf", value: E.MuslEABIHF },
  { prefix: "musleabi", value: E.MuslEABI },
  { prefix: "muslf32", value: E.MuslF32, since: 22 },
  { prefix: "muslsf", value: E.MuslSF, since: 22 },
  { prefix: "muslx32", value: E.MuslX32 },
  { prefix: "musl", value: E.Musl },
  { prefix: "msvc", value: E.MSVC },
  { prefix: "itanium", value: E.Itanium },
  { prefix: "cygnus", value: E.Cygnus },
  { prefix: "coreclr", value: E.CoreCLR },
  { prefix: "simulator", value: E.Simulator },
  { prefix: "macabi", value: E.MacABI },
  { prefix: "pixel", value: E.Pixel },
  { prefix: "vertex", value: E.Vertex },
  { prefix: "geometry", value: E.Geometry },
  { prefix: "hull", value: E.Hull },
  { prefix: "domain", value: E.Domain },
  { prefix: "compute", value: E.Compute },
  { prefix: "library", value: E.Library },
  { prefix: "raygeneration", value: E.RayGeneration },
  { prefix: "intersection", value: E.Intersection },
  { prefix: "anyhit", value: E.AnyHit },
  { prefix: "closesthit", value: E.ClosestHit },
  { prefix: "miss", value: E.Miss },
  { prefix: "callable", value: E.Callable },
  { prefix: "mesh", value: E.Mesh },
  { prefix: "amplification", value: E.Amplification },
  { prefix: "rootsignature", value: E.RootSignature, since: 22 },
  { prefix: "opencl", value: E.OpenCL },
  { prefix: "ohos", value: E.OpenHOS },
  { prefix: "pauthtest", value: E.PAuthTest },
  { prefix: "llvm", value: E.LLVM, since: 22 },
  { prefix: "mlibc", value: E.Mlibc, since: 22 },
];

/** `Triple::parseEnvironment` (static): first matching prefix. */
export function parseEnvironment(name: string, version: LlvmVersion = 19): EnvironmentType {
  return matchPrefix(ENVIRONMENT_PREFIXES, name, version) ?? E.UnknownEnvironment;
}

const F = ObjectFormatType;

/** `parseFormat`: by suffix of the environment component ("xcoff" is tested before "coff"). */
export function parseObjectFormat(environmentName: string): ObjectFormatType {
  for (const format of [F.XCOFF, F.COFF, F.ELF, F.GOFF, F.MachO, F.Wasm, F.SPIRV])
    if (environmentName.endsWith(format)) return format;
  return F.UnknownObjectFormat;
}

function isDarwinOS(os: OSType): boolean {
  return os === O.Darwin || os === O.MacOSX || os === O.IOS || os === O.TvOS || os === O.WatchOS ||
    os === O.DriverKit || os === O.XROS;
}

/** `getDefaultFormat`: the object format implied by arch and OS when the environment names none. */
function getDefaultObjectFormat(arch: ArchType, os: OSType): ObjectFormatType {
  switch (arch) {
    case A.UnknownArch:
    case A.aarch64:
    case A.aarch64_32:
    case A.arm:
    case A.thumb:
    case A.x86:
    case A.x86_64:
      if (os === O.Win32 || os === O.UEFI) return F.COFF;
      return isDarwinOS(os) ? F.MachO : F.ELF;
    case A.mipsel:
      return os === O.Win32 ? F.COFF : F.ELF;
    case A.ppc64:
    case A.ppc:
      if (os === O.AIX) return F.XCOFF;
      return isDarwinOS(os) ? F.MachO : F.ELF;
    case A.systemz:
      return os === O.ZOS ? F.GOFF : F.ELF;
    case A.wasm32:
    case A.wasm64:
      return F.Wasm;
    case A.spirv:
    case A.spirv32:
    case A.spirv64:
      return F.SPIRV;
    case A.dxil:
      return F.DXContainer;
    default:
      return F.ELF;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The triple.

/** The text of component `index` as `getArchName`/`getVendorName`/`getOSName` see it ("" when absent). */
function componentAt(text: string, index: number): string {
  let rest = text;
  for (let skipped = 0; skipped < index; skipped++) {
    const dash = rest.indexOf("-");
    if (dash === -1) return "";
    rest = rest.substring(dash + 1);
  }
  const dash = rest.indexOf("-");
  return dash === -1 ? rest : rest.substring(0, dash);
}

/** Everything after the third '-' (`getEnvironmentName`), which may itself contain '-'. */
function environmentText(text: string): string {
  let rest = text;
  for (let skipped = 0; skipped < 3; skipped++) {
    const dash = rest.indexOf("-");
    if (dash === -1) return "";
    rest = rest.substring(dash + 1);
  }
  return rest;
}

/** `StringRef::split(Out, '-', MaxSplit)` with empty pieces kept: at most `maxSplit + 1` pieces. */
export function splitLimited(text: string, separator: string, maxSplit: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (pieces.length < maxSplit) {
    const at = rest.indexOf(separator);
    if (at === -1) break;
    pieces.push(rest.substring(0, at));
    rest = rest.substring(at + separator.length);
  }
  pieces.push(rest);
  return pieces;
}

/** The environment that a bare MIPS arch name implies (the one-component case of the string constructor). */
function mipsImpliedEnvironment(archName: string): EnvironmentType {
  if (archName.startsWith("mipsn32")) return E.GNUABIN32;
  if (archName.startsWith("mips64") || archName.startsWith("mipsisa64")) return E.GNUABI64;
  if (archName.startsWith("mipsisa32")) return E.GNU;
  if (archName === "mips" || archName === "mipsel" || archName === "mipsr6" || archName === "mipsr6el") return E.GNU;
  return E.UnknownEnvironment;
}

/**
 * An `llvm::Triple`: the text as given plus the enums parsed from it. Immutable; `version` selects which LLVM
 * release's tables parsed it.
 */
export class Triple {
  readonly data: string;
  readonly arch: ArchType;
  readonly subArch: SubArchType;
  readonly vendor: VendorType;
  readonly os: OSType;
  readonly environment: EnvironmentType;
  readonly objectFormat: ObjectFormatType;
  readonly version: LlvmVersion;

  /** `Triple(const Twine &Str)`: split on '-' into at most four components; the environment keeps the rest. */
  constructor(text: string, version: LlvmVersion = 19) {
    this.data = text;
    this.version = version;
    const components = splitLimited(text, "-", 3);
    const archName = components[0]!;
    this.arch = parseArch(archName, version);
    this.subArch = parseSubArch(archName, version);
    this.vendor = components.length > 1 ? parseVendor(components[1]!, version) : VendorType.UnknownVendor;
    this.os = components.length > 2 ? parseOS(components[2]!, version) : O.UnknownOS;
    let environment: EnvironmentType = E.UnknownEnvironment;
    let format: ObjectFormatType = F.UnknownObjectFormat;
    if (components.length > 3) {
      environment = parseEnvironment(components[3]!, version);
      format = parseObjectFormat(components[3]!);
    } else if (components.length === 1) {
      environment = mipsImpliedEnvironment(archName);
    }
    this.environment = environment;
    this.objectFormat = format === F.UnknownObjectFormat ? getDefaultObjectFormat(this.arch, this.os) : format;
  }

  /**
   * `Triple(Arch, Vendor, OS, Environment)`: joins the four texts with '-' (so the result always has four
   * components, the last possibly empty) and parses each one as its own kind.
   */
  static fromParts(arch: string, vendor: string, os: string, environment: string, version: LlvmVersion = 19): Triple {
    return new Triple(`${arch}-${vendor}-${os}-${environment}`, version);
  }

  /** `str()`: the text exactly as constructed. */
  str(): string {
    return this.data;
  }

  getArchName(): string {
    return componentAt(this.data, 0);
  }

  getVendorName(): string {
    return componentAt(this.data, 1);
  }

  getOSName(): string {
    return componentAt(this.data, 2);
  }

  getEnvironmentName(): string {
    return environmentText(this.data);
  }

  isAMDGCN(): boolean {
    return this.arch === A.amdgcn;
  }

  isAMDGPU(): boolean {
    return this.arch === A.amdgcn || this.arch === A.r600;
  }

  isNVPTX(): boolean {
    return this.arch === A.nvptx || this.arch === A.nvptx64;
  }

  isOSDarwin(): boolean {
    return isDarwinOS(this.os);
  }

  isWindowsGNUEnvironment(): boolean {
    return this.os === O.Win32 && this.environment === E.GNU;
  }

  /** `operator==`: every parsed field equal (the text may differ, e.g. i386 and i686). */
  equals(other: Triple): boolean {
    return this.arch === other.arch && this.subArch === other.subArch && this.vendor === other.vendor &&
      this.os === other.os && this.environment === other.environment && this.objectFormat === other.objectFormat;
  }

  /**
   * `isCompatibleWith`: enum equality, except that ARM and Thumb of the same sub-arch are compatible and Apple
   * triples ignore environment and object format. From 22 on, windows-gnu triples ignore the vendor.
   */
  isCompatibleWith(other: Triple): boolean {
    const ignoreVendor = this.version >= 22 && this.isWindowsGNUEnvironment();
    const sameVendor = this.vendor === other.vendor || ignoreVendor;
    const armThumbPair =
      (this.arch === A.thumb && other.arch === A.arm) ||
      (this.arch === A.arm && other.arch === A.thumb) ||
      (this.arch === A.thumbeb && other.arch === A.armeb) ||
      (this.arch === A.armeb && other.arch === A.thumbeb);
    if (armThumbPair) {
      if (this.vendor === VendorType.Apple)
        return this.subArch === other.subArch && this.vendor === other.vendor && this.os === other.os;
      return this.subArch === other.subArch && sameVendor && this.os === other.os &&
        this.environment === other.environment && this.objectFormat === other.objectFormat;
    }
    if (this.vendor === VendorType.Apple)
      return this.arch === other.arch && this.subArch === other.subArch && sameVendor && this.os === other.os;
    return this.arch === other.arch && this.subArch === other.subArch && sameVendor && this.os === other.os &&
      this.environment === other.environment && this.objectFormat === other.objectFormat;
  }

  /** `normalize(Form)` of this triple's text, with this triple's version tables. */
  normalize(form: CanonicalForm = CanonicalForm.ANY): string {
    return normalizeTriple(this.data, form, this.version);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// normalize (Triple::normalize, LLVM 22 as OffloadTargetInfo::str() uses it).

/** `VersionTuple::tryParse` reduced to what shader-model names need: "6", "6.5"; anything else is empty. */
function parseMajorMinor(text: string): { major: number; minor?: number } | undefined {
  const match = /^(\d+)(?:\.(\d+))?(?:\.\d+){0,2}$/.exec(text);
  if (match === null) return undefined;
  return match[2] === undefined ? { major: Number(match[1]) } : { major: Number(match[1]), minor: Number(match[2]) };
}

/** `getDXILArchNameFromShaderModel`: "shadermodel6.N" picks dxilv1.N. */
function dxilArchFromShaderModel(shaderModel: string, version: LlvmVersion): string {
  const latestMinor = version >= 22 ? 9 : 8;
  const parsed = parseMajorMinor(shaderModel.substring("shadermodel".length));
  if (parsed !== undefined) {
    if (parsed.major === 6 && parsed.minor !== undefined) {
      // LLVM calls report_fatal_error here, which ends the process.
      if (parsed.minor > latestMinor) throw new Error("Unsupported Shader Model version");
      return `dxilv1.${parsed.minor}`;
    }
  } else if (shaderModel === "shadermodel6.x") {
    return `dxilv1.${latestMinor}`;
  }
  return "dxilv1.0";
}

/**
 * `Triple::normalize(Str, Form)`: moves components that parse as arch/vendor/OS/environment into their places,
 * fills gaps with "unknown", applies the Windows/Android/SUSE/DXIL special cases, then pads or truncates to
 * `form` components (ANY keeps the count).
 */
export function normalizeTriple(text: string, form: CanonicalForm = CanonicalForm.ANY, version: LlvmVersion = 22): string {
  let isMinGW32 = false;
  let isCygwin = false;
  const components = text.split("-");

  let arch: ArchType = components.length > 0 ? parseArch(components[0]!, version) : A.UnknownArch;
  let vendor: VendorType = components.length > 1 ? parseVendor(components[1]!, version) : VendorType.UnknownVendor;
  let os: OSType = O.UnknownOS;
  if (components.length > 2) {
    os = parseOS(components[2]!, version);
    isCygwin = components[2]!.startsWith("cygwin");
    isMinGW32 = components[2]!.startsWith("mingw");
  }
  let environment: EnvironmentType = components.length > 3 ? parseEnvironment(components[3]!, version) : E.UnknownEnvironment;
  let objectFormat: ObjectFormatType = components.length > 4 ? parseObjectFormat(components[4]!) : F.UnknownObjectFormat;

  // Components already in their final place are never moved.
  const found = [arch !== A.UnknownArch, vendor !== VendorType.UnknownVendor, os !== O.UnknownOS,
    environment !== E.UnknownEnvironment];

  for (let position = 0; position < found.length; position++) {
    if (found[position]) continue;
    for (let index = 0; index < components.length; index++) {
      if (index < found.length && found[index]) continue;
      const component = components[index]!;
      let valid = false;
      switch (position) {
        case 0:
          arch = parseArch(component, version);
          valid = arch !== A.UnknownArch;
          break;
        case 1:
          vendor = parseVendor(component, version);
          valid = vendor !== VendorType.UnknownVendor;
          break;
        case 2:
          os = parseOS(component, version);
          isCygwin = component.startsWith("cygwin");
          isMinGW32 = component.startsWith("mingw");
          valid = os !== O.UnknownOS || isCygwin || isMinGW32;
          break;
        default:
          environment = parseEnvironment(component, version);
          valid = environment !== E.UnknownEnvironment;
          if (!valid) {
            objectFormat = parseObjectFormat(component);
            valid = objectFormat !== F.UnknownObjectFormat;
          }
          break;
      }
      if (!valid) continue;

      if (position < index) {
        // Insert on the left, pushing the non-fixed components in the way to the right.
        let moving = "";
        [moving, components[index]] = [components[index]!, moving];
        for (let slot = position; moving !== ""; slot++) {
          while (slot < found.length && found[slot]) slot++;
          [moving, components[slot]] = [components[slot] ?? "", moving];
        }
      } else if (position > index) {
        // Push right by inserting empty components until the component reaches its place.
        do {
          let moving = "";
          for (let slot = index; slot < components.length;) {
            [moving, components[slot]] = [components[slot]!, moving];
            if (moving === "") break;
            while (++slot < found.length && found[slot]);
          }
          if (moving !== "") components.push(moving);
          while (++index < found.length && found[index]);
        } while (index < position);
      }
      found[position] = true;
      break;
    }
  }

  // "none" as the middle of a three-component triple is the OS, not the vendor.
  if (found[0] && !found[1] && !found[2] && found[3] && components[1] === "none" && components[2] === "")
    [components[1], components[2]] = [components[2]!, components[1]!];

  for (let index = 0; index < components.length; index++) if (components[index] === "") components[index] = "unknown";

  if (environment === E.Android && components[3]!.startsWith("androideabi")) {
    const androidVersion = components[3]!.substring("androideabi".length);
    components[3] = androidVersion === "" ? "android" : `android${androidVersion}`;
  }

  // SUSE uses "gnueabi" to mean "gnueabihf".
  if (vendor === VendorType.SUSE && environment === E.GNUEABI) components[3] = "gnueabihf";

  if (os === O.Win32) {
    resize(components, 4, "");
    components[2] = "windows";
    if (environment === E.UnknownEnvironment) {
      components[3] = objectFormat === F.UnknownObjectFormat || objectFormat === F.COFF ? "msvc" : objectFormat;
    }
  } else if (isMinGW32) {
    resize(components, 4, "");
    components[2] = "windows";
    components[3] = "gnu";
  } else if (isCygwin) {
    resize(components, 4, "");
    components[2] = "windows";
    components[3] = "cygnus";
  }
  if (isMinGW32 || isCygwin || (os === O.Win32 && environment !== E.UnknownEnvironment)) {
    if (objectFormat !== F.UnknownObjectFormat && objectFormat !== F.COFF) {
      resize(components, 5, "");
      components[4] = objectFormat;
    }
  }

  if (components[0] === "dxil") {
    if (components.length > 4) components.length = 4;
    if (os === O.ShaderModel) components[0] = dxilArchFromShaderModel(components[2]!, version);
  }

  if (form !== CanonicalForm.ANY) resize(components, form, "unknown");
  return components.join("-");
}

/** `SmallVector::resize(N, Value)`: truncate, or pad with `fill`. */
function resize(components: string[], size: number, fill: string): void {
  if (components.length > size) components.length = size;
  while (components.length < size) components.push(fill);
}
