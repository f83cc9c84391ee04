/**
 * The parts of `llvm::Triple` that clang-offload-bundler relies on, per LLVM version.
 *
 * Follows llvm/lib/TargetParser/Triple.cpp (parseArch, parseSubArch, parseVendor, parseOS, parseEnvironment,
 * parseFormat, getDefaultFormat, the constructors, isCompatibleWith, normalize) and
 * llvm/lib/TargetParser/ARMTargetParser{,Common}.cpp (the ARM/Thumb/AArch64 arch-name grammar). LLVM 19 is the
 * reference; the 14 and 22 differences that the bundler can observe are gated by `LlvmVersion` and were measured
 * with clang-offload-bundler-14/19/22 (spec/bundler.md §1.1 item 8, §3.3;
 * test/differential/target-id-native.test.ts):
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

const NO_SPIRV_DXIL_IN_14: Gated = { since: 19 };

/** `parseArch`'s exact-name cases, before the ARM/BPF/kalimba fallbacks. */
const ARCH_NAMES: ReadonlyMap<string, ArchName> = new Map<string, ArchName>([
  ...["i386", "i486", "i586", "i686", "i786", "i886", "i986"].map((name) => [name, { arch: ArchType.x86 }] as const),
  ...["amd64", "x86_64", "x86_64h"].map((name) => [name, { arch: ArchType.x86_64 }] as const),
  ...["powerpc", "powerpcspe", "ppc", "ppc32"].map((name) => [name, { arch: ArchType.ppc }] as const),
  ...["powerpcle", "ppcle", "ppc32le"].map((name) => [name, { arch: ArchType.ppcle }] as const),
  ...["powerpc64", "ppu", "ppc64"].map((name) => [name, { arch: ArchType.ppc64 }] as const),
  ...["powerpc64le", "ppc64le"].map((name) => [name, { arch: ArchType.ppc64le }] as const),
  ["xscale", { arch: ArchType.arm }],
  ["xscaleeb", { arch: ArchType.armeb }],
  ["aarch64", { arch: ArchType.aarch64 }],
  ["aarch64_be", { arch: ArchType.aarch64_be }],
  ["aarch64_32", { arch: ArchType.aarch64_32 }],
  ["arc", { arch: ArchType.arc }],
  ["arm64", { arch: ArchType.aarch64 }],
  ["arm64_32", { arch: ArchType.aarch64_32 }],
  ["arm64e", { arch: ArchType.aarch64 }],
  ["arm64ec", { arch: ArchType.aarch64 }],
  ["arm", { arch: ArchType.arm }],
  ["armeb", { arch: ArchType.armeb }],
  ["thumb", { arch: ArchType.thumb }],
  ["thumbeb", { arch: ArchType.thumbeb }],
  ["avr", { arch: ArchType.avr }],
  ["m68k", { arch: ArchType.m68k }],
  ["msp430", { arch: ArchType.msp430 }],
  ...["mips", "mipseb", "mipsallegrex", "mipsisa32r6", "mipsr6"].map(
    (name) => [name, { arch: ArchType.mips }] as const,
  ),
  ...["mipsel", "mipsallegrexel", "mipsisa32r6el", "mipsr6el"].map(
    (name) => [name, { arch: ArchType.mipsel }] as const,
  ),
  ...["mips64", "mips64eb", "mipsn32", "mipsisa64r6", "mips64r6", "mipsn32r6"].map(
    (name) => [name, { arch: ArchType.mips64 }] as const,
  ),
  ...["mips64el", "mipsn32el", "mipsisa64r6el", "mips64r6el", "mipsn32r6el"].map(
    (name) => [name, { arch: ArchType.mips64el }] as const,
  ),
  ["r600", { arch: ArchType.r600 }],
  ["amdgcn", { arch: ArchType.amdgcn }],
  ["riscv32", { arch: ArchType.riscv32 }],
  ["riscv64", { arch: ArchType.riscv64 }],
  ["riscv32be", { arch: ArchType.riscv32be, since: 22 }],
  ["riscv64be", { arch: ArchType.riscv64be, since: 22 }],
  ["hexagon", { arch: ArchType.hexagon }],
  ["s390x", { arch: ArchType.systemz }],
  ["systemz", { arch: ArchType.systemz }],
  ["sparc", { arch: ArchType.sparc }],
  ["sparcel", { arch: ArchType.sparcel }],
  ["sparcv9", { arch: ArchType.sparcv9 }],
  ["sparc64", { arch: ArchType.sparcv9 }],
  ["tce", { arch: ArchType.tce }],
  ["tcele", { arch: ArchType.tcele }],
  ["xcore", { arch: ArchType.xcore }],
  ["nvptx", { arch: ArchType.nvptx }],
  ["nvptx64", { arch: ArchType.nvptx64 }],
  ["le32", { arch: ArchType.le32, until: 19 }],
  ["le64", { arch: ArchType.le64, until: 19 }],
  ["amdil", { arch: ArchType.amdil }],
  ["amdil64", { arch: ArchType.amdil64 }],
  ["hsail", { arch: ArchType.hsail }],
  ["hsail64", { arch: ArchType.hsail64 }],
  ["spir", { arch: ArchType.spir }],
  ["spir64", { arch: ArchType.spir64 }],
  ...["spirv", "spirv1.5", "spirv1.6"].map((name) => [name, { arch: ArchType.spirv, ...NO_SPIRV_DXIL_IN_14 }] as const),
  ["spirv32", { arch: ArchType.spirv32 }],
  ...["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6"].map(
    (suffix) => [`spirv32v${suffix}`, { arch: ArchType.spirv32, ...NO_SPIRV_DXIL_IN_14 }] as const,
  ),
  ["spirv64", { arch: ArchType.spirv64 }],
  ...["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6"].map(
    (suffix) => [`spirv64v${suffix}`, { arch: ArchType.spirv64, ...NO_SPIRV_DXIL_IN_14 }] as const,
  ),
  ["lanai", { arch: ArchType.lanai }],
  ["renderscript32", { arch: ArchType.renderscript32 }],
  ["renderscript64", { arch: ArchType.renderscript64 }],
  ["shave", { arch: ArchType.shave }],
  ["ve", { arch: ArchType.ve }],
  ["wasm32", { arch: ArchType.wasm32 }],
  ["wasm64", { arch: ArchType.wasm64 }],
  ["csky", { arch: ArchType.csky }],
  ["loongarch32", { arch: ArchType.loongarch32, since: 19 }],
  ["loongarch64", { arch: ArchType.loongarch64, since: 19 }],
  ...["dxil", ...["0", "1", "2", "3", "4", "5", "6", "7", "8"].map((minor) => `dxilv1.${minor}`)].map(
    (name) => [name, { arch: ArchType.dxil, ...NO_SPIRV_DXIL_IN_14 }] as const,
  ),
  ["dxilv1.9", { arch: ArchType.dxil, since: 22 }],
  ["xtensa", { arch: ArchType.xtensa, since: 19 }],
]);

/** `parseBPFArch`. A bare "bpf" follows the host's endianness; every supported host is little-endian. */
function parseBpfArch(name: string): ArchType {
  if (name === "bpf" || name === "bpf_le" || name === "bpfel") return ArchType.bpfel;
  if (name === "bpf_be" || name === "bpfeb") return ArchType.bpfeb;
  return ArchType.UnknownArch;
}

/** `Triple::parseArch` (static in Triple.cpp): the arch enum for the first triple component. */
export function parseArch(name: string, version: LlvmVersion = 19): ArchType {
  const row = ARCH_NAMES.get(name);
  if (row !== undefined && isPresent(row, version)) return row.arch;
  if (name.startsWith("kalimba")) return ArchType.kalimba;
  if (name.startsWith("arm") || name.startsWith("thumb") || name.startsWith("aarch64"))
    return parseArmArch(name, version);
  if (name.startsWith("bpf")) return parseBpfArch(name);
  return ArchType.UnknownArch;
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

/** ARMTargetParser.def ARM_ARCH rows in table order (`parseArch` returns the first name ending in the synonym). */
const ARM_ARCHES: readonly ArmArch[] = [
  { name: "invalid", subArch: SubArchType.NoSubArch, profile: "invalid", majorVersion: 0 },
  { name: "armv4", subArch: SubArchType.NoSubArch, profile: "invalid", majorVersion: 4 },
  { name: "armv4t", subArch: SubArchType.ARMSubArch_v4t, profile: "invalid", majorVersion: 4 },
  { name: "armv5t", subArch: SubArchType.ARMSubArch_v5, profile: "invalid", majorVersion: 5 },
  { name: "armv5te", subArch: SubArchType.ARMSubArch_v5te, profile: "invalid", majorVersion: 5 },
  { name: "armv5tej", subArch: SubArchType.ARMSubArch_v5te, profile: "invalid", majorVersion: 5 },
  { name: "armv6", subArch: SubArchType.ARMSubArch_v6, profile: "invalid", majorVersion: 6 },
  { name: "armv6k", subArch: SubArchType.ARMSubArch_v6k, profile: "invalid", majorVersion: 6 },
  { name: "armv6t2", subArch: SubArchType.ARMSubArch_v6t2, profile: "invalid", majorVersion: 6 },
  { name: "armv6kz", subArch: SubArchType.ARMSubArch_v6k, profile: "invalid", majorVersion: 6 },
  { name: "armv6-m", subArch: SubArchType.ARMSubArch_v6m, profile: "M", majorVersion: 6 },
  { name: "armv7-a", subArch: SubArchType.ARMSubArch_v7, profile: "A", majorVersion: 7 },
  { name: "armv7ve", subArch: SubArchType.ARMSubArch_v7ve, profile: "A", majorVersion: 7 },
  { name: "armv7-r", subArch: SubArchType.ARMSubArch_v7, profile: "R", majorVersion: 7 },
  { name: "armv7-m", subArch: SubArchType.ARMSubArch_v7m, profile: "M", majorVersion: 7 },
  { name: "armv7e-m", subArch: SubArchType.ARMSubArch_v7em, profile: "M", majorVersion: 7 },
  { name: "armv8-a", subArch: SubArchType.ARMSubArch_v8, profile: "A", majorVersion: 8 },
  { name: "armv8.1-a", subArch: SubArchType.ARMSubArch_v8_1a, profile: "A", majorVersion: 8 },
  { name: "armv8.2-a", subArch: SubArchType.ARMSubArch_v8_2a, profile: "A", majorVersion: 8 },
  { name: "armv8.3-a", subArch: SubArchType.ARMSubArch_v8_3a, profile: "A", majorVersion: 8 },
  { name: "armv8.4-a", subArch: SubArchType.ARMSubArch_v8_4a, profile: "A", majorVersion: 8 },
  { name: "armv8.5-a", subArch: SubArchType.ARMSubArch_v8_5a, profile: "A", majorVersion: 8 },
  { name: "armv8.6-a", subArch: SubArchType.ARMSubArch_v8_6a, profile: "A", majorVersion: 8 },
  { name: "armv8.7-a", subArch: SubArchType.ARMSubArch_v8_7a, profile: "A", majorVersion: 8 },
  { name: "armv8.8-a", subArch: SubArchType.ARMSubArch_v8_8a, profile: "A", majorVersion: 8 },
  { name: "armv8.9-a", subArch: SubArchType.ARMSubArch_v8_9a, profile: "A", majorVersion: 8 },
  { name: "armv9-a", subArch: SubArchType.ARMSubArch_v9, profile: "A", majorVersion: 9 },
  { name: "armv9.1-a", subArch: SubArchType.ARMSubArch_v9_1a, profile: "A", majorVersion: 9 },
  { name: "armv9.2-a", subArch: SubArchType.ARMSubArch_v9_2a, profile: "A", majorVersion: 9 },
  { name: "armv9.3-a", subArch: SubArchType.ARMSubArch_v9_3a, profile: "A", majorVersion: 9 },
  { name: "armv9.4-a", subArch: SubArchType.ARMSubArch_v9_4a, profile: "A", majorVersion: 9 },
  { name: "armv9.5-a", subArch: SubArchType.ARMSubArch_v9_5a, profile: "A", majorVersion: 9 },
  // Measured: 19 gives "armv9.6a" no sub-arch (it is then compatible with plain "arm"), 22 does not.
  { name: "armv9.6-a", subArch: SubArchType.ARMSubArch_v9_6a, profile: "A", majorVersion: 9, since: 22 },
  { name: "armv9.7-a", subArch: SubArchType.ARMSubArch_v9_7a, profile: "A", majorVersion: 9, since: 22 },
  { name: "armv8-r", subArch: SubArchType.ARMSubArch_v8r, profile: "R", majorVersion: 8 },
  { name: "armv8-m.base", subArch: SubArchType.ARMSubArch_v8m_baseline, profile: "M", majorVersion: 8 },
  { name: "armv8-m.main", subArch: SubArchType.ARMSubArch_v8m_mainline, profile: "M", majorVersion: 8 },
  { name: "armv8.1-m.main", subArch: SubArchType.ARMSubArch_v8_1m_mainline, profile: "M", majorVersion: 8 },
  { name: "iwmmxt", subArch: SubArchType.ARMSubArch_v5te, profile: "invalid", majorVersion: 5 },
  { name: "iwmmxt2", subArch: SubArchType.ARMSubArch_v5te, profile: "invalid", majorVersion: 5 },
  { name: "xscale", subArch: SubArchType.ARMSubArch_v5te, profile: "invalid", majorVersion: 5 },
  { name: "armv7s", subArch: SubArchType.ARMSubArch_v7s, profile: "invalid", majorVersion: 7 },
  { name: "armv7k", subArch: SubArchType.ARMSubArch_v7k, profile: "A", majorVersion: 7 },
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
  const little = { arm: ArchType.arm, thumb: ArchType.thumb, aarch64: ArchType.aarch64 } as const;
  const big = { arm: ArchType.armeb, thumb: ArchType.thumbeb, aarch64: ArchType.aarch64_be } as const;
  const arch: ArchType = isa === "invalid" || endian === "invalid" ? ArchType.UnknownArch
    : endian === "little" ? little[isa] : big[isa];

  const canonical = getArmCanonicalArchName(name);
  if (canonical === "") return ArchType.UnknownArch;
  // Thumb only exists from v4 on.
  if (isa === "thumb" && (canonical.startsWith("v2") || canonical.startsWith("v3"))) return ArchType.UnknownArch;
  // v6-M only has Thumb, so an "arm" spelling of it is still a thumb triple.
  // parseArchProfile/parseArchVersion canonicalise once more before ARM::parseArch does it again.
  const kind = parseArmArchKind(getArmCanonicalArchName(canonical), version);
  if (kind.profile === "M" && kind.majorVersion === 6) return endian === "big" ? ArchType.thumbeb : ArchType.thumb;
  return arch;
}

/** `Triple::parseSubArch` (static in Triple.cpp). */
export function parseSubArch(name: string, version: LlvmVersion = 19): SubArchType {
  if (name.startsWith("mips") && (name.endsWith("r6el") || name.endsWith("r6"))) return SubArchType.MipsSubArch_r6;
  if (name === "powerpcspe") return SubArchType.PPCSubArch_spe;
  if (name === "arm64e") return SubArchType.AArch64SubArch_arm64e;
  if (name === "arm64ec") return SubArchType.AArch64SubArch_arm64ec;
  if (name.startsWith("spirv")) {
    for (const minor of [0, 1, 2, 3, 4, 5, 6])
      if (name.endsWith(`v1.${minor}`)) return `SPIRVSubArch_v1${minor}` as SubArchType;
    return SubArchType.NoSubArch;
  }
  if (name.startsWith("dxil")) {
    const lastMinor = version >= 22 ? 9 : 8;
    for (let minor = 0; minor <= lastMinor; minor++)
      if (name.endsWith(`v1.${minor}`)) return `DXILSubArch_v1_${minor}` as SubArchType;
    return SubArchType.NoSubArch;
  }
  const armName = getArmCanonicalArchName(name);
  if (armName === "") {
    for (const generation of [3, 4, 5] as const)
      if (name.endsWith(`kalimba${generation}`)) return `KalimbaSubArch_v${generation}` as SubArchType;
    return SubArchType.NoSubArch;
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

/** `parseOS`'s StartsWith cases, in order (order matters for prefixes). */
const OS_PREFIXES: readonly NamedValue<OSType>[] = [
  { prefix: "darwin", value: OSType.Darwin },
  { prefix: "dragonfly", value: OSType.DragonFly },
  { prefix: "freebsd", value: OSType.FreeBSD },
  { prefix: "fuchsia", value: OSType.Fuchsia },
  { prefix: "ios", value: OSType.IOS },
  { prefix: "kfreebsd", value: OSType.KFreeBSD },
  { prefix: "linux", value: OSType.Linux },
  { prefix: "lv2", value: OSType.Lv2 },
  { prefix: "macos", value: OSType.MacOSX },
  { prefix: "managarm", value: OSType.Managarm, since: 22 },
  { prefix: "netbsd", value: OSType.NetBSD },
  { prefix: "openbsd", value: OSType.OpenBSD },
  { prefix: "solaris", value: OSType.Solaris },
  { prefix: "uefi", value: OSType.UEFI },
  { prefix: "win32", value: OSType.Win32 },
  { prefix: "windows", value: OSType.Win32 },
  { prefix: "zos", value: OSType.ZOS },
  { prefix: "haiku", value: OSType.Haiku },
  { prefix: "rtems", value: OSType.RTEMS },
  { prefix: "nacl", value: OSType.NaCl, until: 19 },
  { prefix: "aix", value: OSType.AIX },
  { prefix: "cuda", value: OSType.CUDA },
  { prefix: "nvcl", value: OSType.NVCL },
  { prefix: "amdhsa", value: OSType.AMDHSA },
  { prefix: "ps4", value: OSType.PS4 },
  { prefix: "ps5", value: OSType.PS5 },
  { prefix: "elfiamcu", value: OSType.ELFIAMCU },
  { prefix: "tvos", value: OSType.TvOS },
  { prefix: "watchos", value: OSType.WatchOS },
  { prefix: "bridgeos", value: OSType.BridgeOS },
  { prefix: "driverkit", value: OSType.DriverKit },
  { prefix: "xros", value: OSType.XROS },
  { prefix: "visionos", value: OSType.XROS },
  { prefix: "mesa3d", value: OSType.Mesa3D },
  { prefix: "amdpal", value: OSType.AMDPAL },
  { prefix: "hermit", value: OSType.HermitCore },
  { prefix: "hurd", value: OSType.Hurd },
  { prefix: "wasi", value: OSType.WASI },
  { prefix: "emscripten", value: OSType.Emscripten },
  { prefix: "shadermodel", value: OSType.ShaderModel },
  { prefix: "liteos", value: OSType.LiteOS },
  { prefix: "serenity", value: OSType.Serenity },
  { prefix: "vulkan", value: OSType.Vulkan },
];

function matchPrefix<T>(rows: readonly NamedValue<T>[], name: string, version: LlvmVersion): T | undefined {
  for (const row of rows) if (isPresent(row, version) && name.startsWith(row.prefix)) return row.value;
  return undefined;
}

/** `Triple::parseOS` (static): first matching prefix, so "linux-gnu"-style suffixes and versions are allowed. */
export function parseOS(name: string, version: LlvmVersion = 19): OSType {
  return matchPrefix(OS_PREFIXES, name, version) ?? OSType.UnknownOS;
}

/** `parseEnvironment`'s StartsWith cases, in order (longer prefixes first where they share a stem). */
const ENVIRONMENT_PREFIXES: readonly NamedValue<EnvironmentType>[] = [
  { prefix: "eabihf", value: EnvironmentType.EABIHF },
  { prefix: "eabi", value: EnvironmentType.EABI },
  { prefix: "gnuabin32", value: EnvironmentType.GNUABIN32 },
  { prefix: "gnuabi64", value: EnvironmentType.GNUABI64 },
  { prefix: "gnueabihft64", value: EnvironmentType.GNUEABIHFT64 },
  { prefix: "gnueabihf", value: EnvironmentType.GNUEABIHF },
  { prefix: "gnueabit64", value: EnvironmentType.GNUEABIT64 },
  { prefix: "gnueabi", value: EnvironmentType.GNUEABI },
  { prefix: "gnuf32", value: EnvironmentType.GNUF32 },
  { prefix: "gnuf64", value: EnvironmentType.GNUF64 },
  { prefix: "gnusf", value: EnvironmentType.GNUSF },
  { prefix: "gnux32", value: EnvironmentType.GNUX32 },
  { prefix: "gnu_ilp32", value: EnvironmentType.GNUILP32 },
  { prefix: "code16", value: EnvironmentType.CODE16 },
  { prefix: "gnut64", value: EnvironmentType.GNUT64 },
  { prefix: "gnu", value: EnvironmentType.GNU },
  { prefix: "android", value: EnvironmentType.Android },
  { prefix: "muslabin32", value: EnvironmentType.MuslABIN32, since: 22 },
  { prefix: "muslabi64", value: EnvironmentType.MuslABI64, since: 22 },
  { prefix: "musleabihf", value: EnvironmentType.MuslEABIHF },
  { prefix: "musleabi", value: EnvironmentType.MuslEABI },
  { prefix: "muslf32", value: EnvironmentType.MuslF32, since: 22 },
  { prefix: "muslsf", value: EnvironmentType.MuslSF, since: 22 },
  { prefix: "muslx32", value: EnvironmentType.MuslX32 },
  { prefix: "musl", value: EnvironmentType.Musl },
  { prefix: "msvc", value: EnvironmentType.MSVC },
  { prefix: "itanium", value: EnvironmentType.Itanium },
  { prefix: "cygnus", value: EnvironmentType.Cygnus },
  { prefix: "coreclr", value: EnvironmentType.CoreCLR },
  { prefix: "simulator", value: EnvironmentType.Simulator },
  { prefix: "macabi", value: EnvironmentType.MacABI },
  { prefix: "pixel", value: EnvironmentType.Pixel },
  { prefix: "vertex", value: EnvironmentType.Vertex },
  { prefix: "geometry", value: EnvironmentType.Geometry },
  { prefix: "hull", value: EnvironmentType.Hull },
  { prefix: "domain", value: EnvironmentType.Domain },
  { prefix: "compute", value: EnvironmentType.Compute },
  { prefix: "library", value: EnvironmentType.Library },
  { prefix: "raygeneration", value: EnvironmentType.RayGeneration },
  { prefix: "intersection", value: EnvironmentType.Intersection },
  { prefix: "anyhit", value: EnvironmentType.AnyHit },
  { prefix: "closesthit", value: EnvironmentType.ClosestHit },
  { prefix: "miss", value: EnvironmentType.Miss },
  { prefix: "callable", value: EnvironmentType.Callable },
  { prefix: "mesh", value: EnvironmentType.Mesh },
  { prefix: "amplification", value: EnvironmentType.Amplification },
  { prefix: "rootsignature", value: EnvironmentType.RootSignature, since: 22 },
  { prefix: "opencl", value: EnvironmentType.OpenCL },
  { prefix: "ohos", value: EnvironmentType.OpenHOS },
  { prefix: "pauthtest", value: EnvironmentType.PAuthTest },
  { prefix: "llvm", value: EnvironmentType.LLVM, since: 22 },
  { prefix: "mlibc", value: EnvironmentType.Mlibc, since: 22 },
];

/** `Triple::parseEnvironment` (static): first matching prefix. */
export function parseEnvironment(name: string, version: LlvmVersion = 19): EnvironmentType {
  return matchPrefix(ENVIRONMENT_PREFIXES, name, version) ?? EnvironmentType.UnknownEnvironment;
}

/** `parseFormat`: by suffix of the environment component ("xcoff" is tested before "coff"). */
export function parseObjectFormat(environmentName: string): ObjectFormatType {
  const suffixes = [ObjectFormatType.XCOFF, ObjectFormatType.COFF, ObjectFormatType.ELF, ObjectFormatType.GOFF,
    ObjectFormatType.MachO, ObjectFormatType.Wasm, ObjectFormatType.SPIRV];
  for (const format of suffixes) if (environmentName.endsWith(format)) return format;
  return ObjectFormatType.UnknownObjectFormat;
}

function isDarwinOS(os: OSType): boolean {
  const darwinFamily: readonly OSType[] = [OSType.Darwin, OSType.MacOSX, OSType.IOS, OSType.TvOS, OSType.WatchOS,
    OSType.DriverKit, OSType.XROS];
  return darwinFamily.includes(os);
}

/** `getDefaultFormat`: the object format implied by arch and OS when the environment names none. */
function getDefaultObjectFormat(arch: ArchType, os: OSType): ObjectFormatType {
  switch (arch) {
    case ArchType.UnknownArch:
    case ArchType.aarch64:
    case ArchType.aarch64_32:
    case ArchType.arm:
    case ArchType.thumb:
    case ArchType.x86:
    case ArchType.x86_64:
      if (os === OSType.Win32 || os === OSType.UEFI) return ObjectFormatType.COFF;
      return isDarwinOS(os) ? ObjectFormatType.MachO : ObjectFormatType.ELF;
    case ArchType.mipsel:
      return os === OSType.Win32 ? ObjectFormatType.COFF : ObjectFormatType.ELF;
    case ArchType.ppc64:
    case ArchType.ppc:
      if (os === OSType.AIX) return ObjectFormatType.XCOFF;
      return isDarwinOS(os) ? ObjectFormatType.MachO : ObjectFormatType.ELF;
    case ArchType.systemz:
      return os === OSType.ZOS ? ObjectFormatType.GOFF : ObjectFormatType.ELF;
    case ArchType.wasm32:
    case ArchType.wasm64:
      return ObjectFormatType.Wasm;
    case ArchType.spirv:
    case ArchType.spirv32:
    case ArchType.spirv64:
      return ObjectFormatType.SPIRV;
    case ArchType.dxil:
      return ObjectFormatType.DXContainer;
    default:
      return ObjectFormatType.ELF;
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
  if (archName.startsWith("mipsn32")) return EnvironmentType.GNUABIN32;
  if (archName.startsWith("mips64") || archName.startsWith("mipsisa64")) return EnvironmentType.GNUABI64;
  if (archName.startsWith("mipsisa32")) return EnvironmentType.GNU;
  if (["mips", "mipsel", "mipsr6", "mipsr6el"].includes(archName)) return EnvironmentType.GNU;
  return EnvironmentType.UnknownEnvironment;
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
    this.os = components.length > 2 ? parseOS(components[2]!, version) : OSType.UnknownOS;
    let environment: EnvironmentType = EnvironmentType.UnknownEnvironment;
    let format: ObjectFormatType = ObjectFormatType.UnknownObjectFormat;
    if (components.length > 3) {
      environment = parseEnvironment(components[3]!, version);
      format = parseObjectFormat(components[3]!);
    } else if (components.length === 1) {
      environment = mipsImpliedEnvironment(archName);
    }
    this.environment = environment;
    this.objectFormat = format === ObjectFormatType.UnknownObjectFormat
      ? getDefaultObjectFormat(this.arch, this.os)
      : format;
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
    return this.arch === ArchType.amdgcn;
  }

  isAMDGPU(): boolean {
    return this.arch === ArchType.amdgcn || this.arch === ArchType.r600;
  }

  isNVPTX(): boolean {
    return this.arch === ArchType.nvptx || this.arch === ArchType.nvptx64;
  }

  isOSDarwin(): boolean {
    return isDarwinOS(this.os);
  }

  isWindowsGNUEnvironment(): boolean {
    return this.os === OSType.Win32 && this.environment === EnvironmentType.GNU;
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
      (this.arch === ArchType.thumb && other.arch === ArchType.arm) ||
      (this.arch === ArchType.arm && other.arch === ArchType.thumb) ||
      (this.arch === ArchType.thumbeb && other.arch === ArchType.armeb) ||
      (this.arch === ArchType.armeb && other.arch === ArchType.thumbeb);
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
export function normalizeTriple(text: string, form: CanonicalForm = CanonicalForm.ANY,
  version: LlvmVersion = 22): string {
  let isMinGW32 = false;
  let isCygwin = false;
  const components = text.split("-");

  let arch: ArchType = components.length > 0 ? parseArch(components[0]!, version) : ArchType.UnknownArch;
  let vendor: VendorType = components.length > 1 ? parseVendor(components[1]!, version) : VendorType.UnknownVendor;
  let os: OSType = OSType.UnknownOS;
  if (components.length > 2) {
    os = parseOS(components[2]!, version);
    isCygwin = components[2]!.startsWith("cygwin");
    isMinGW32 = components[2]!.startsWith("mingw");
  }
  let environment: EnvironmentType = components.length > 3
    ? parseEnvironment(components[3]!, version)
    : EnvironmentType.UnknownEnvironment;
  let objectFormat: ObjectFormatType = components.length > 4
    ? parseObjectFormat(components[4]!)
    : ObjectFormatType.UnknownObjectFormat;

  // Components already in their final place are never moved.
  const found = [arch !== ArchType.UnknownArch, vendor !== VendorType.UnknownVendor, os !== OSType.UnknownOS,
    environment !== EnvironmentType.UnknownEnvironment];

  for (let position = 0; position < found.length; position++) {
    if (found[position]) continue;
    for (let index = 0; index < components.length; index++) {
      if (index < found.length && found[index]) continue;
      const component = components[index]!;
      let valid = false;
      switch (position) {
        case 0:
          arch = parseArch(component, version);
          valid = arch !== ArchType.UnknownArch;
          break;
        case 1:
          vendor = parseVendor(component, version);
          valid = vendor !== VendorType.UnknownVendor;
          break;
        case 2:
          os = parseOS(component, version);
          isCygwin = component.startsWith("cygwin");
          isMinGW32 = component.startsWith("mingw");
          valid = os !== OSType.UnknownOS || isCygwin || isMinGW32;
          break;
        default:
          environment = parseEnvironment(component, version);
          valid = environment !== EnvironmentType.UnknownEnvironment;
          if (!valid) {
            objectFormat = parseObjectFormat(component);
            valid = objectFormat !== ObjectFormatType.UnknownObjectFormat;
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

  if (environment === EnvironmentType.Android && components[3]!.startsWith("androideabi")) {
    const androidVersion = components[3]!.substring("androideabi".length);
    components[3] = androidVersion === "" ? "android" : `android${androidVersion}`;
  }

  // SUSE uses "gnueabi" to mean "gnueabihf".
  if (vendor === VendorType.SUSE && environment === EnvironmentType.GNUEABI) components[3] = "gnueabihf";

  if (os === OSType.Win32) {
    resize(components, 4, "");
    components[2] = "windows";
    if (environment === EnvironmentType.UnknownEnvironment) {
      const impliesMsvc =
        objectFormat === ObjectFormatType.UnknownObjectFormat || objectFormat === ObjectFormatType.COFF;
      components[3] = impliesMsvc ? "msvc" : objectFormat;
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
  if (isMinGW32 || isCygwin || (os === OSType.Win32 && environment !== EnvironmentType.UnknownEnvironment)) {
    if (objectFormat !== ObjectFormatType.UnknownObjectFormat && objectFormat !== ObjectFormatType.COFF) {
      resize(components, 5, "");
      components[4] = objectFormat;
    }
  }

  if (components[0] === "dxil") {
    if (components.length > 4) components.length = 4;
    if (os === OSType.ShaderModel) components[0] = dxilArchFromShaderModel(components[2]!, version);
  }

  if (form !== CanonicalForm.ANY) resize(components, form, "unknown");
  return components.join("-");
}

/** `SmallVector::resize(N, Value)`: truncate, or pad with `fill`. */
function resize(components: string[], size: number, fill: string): void {
  if (components.length > size) components.length = size;
  while (components.length < size) components.push(fill);
}
