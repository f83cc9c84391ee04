/**
 * Standalone AMDGPU code objects: ELF files whose `e_machine` is EM_AMDGPU (224), the `.hsaco` files
 * `hipModuleLoad` takes and the Tensile `.co` files rocBLAS and hipBLASLt ship most of their GPU code in.
 * Such a file is device code as it stands (not a container of it), so it is read from its ELF header alone:
 * the processor and the xnack / sramecc settings from `e_flags`, the code object version from
 * `e_ident[EI_ABIVERSION]`, and the target ID clang would print for them.
 *
 * The layout (llvm/include/llvm/BinaryFormat/ELF.h, llvm/docs/AMDGPUUsage.rst "ELF Header"):
 * - `e_ident[EI_OSABI]`: 64 ELFOSABI_AMDGPU_HSA, 65 _PAL, 66 _MESA3D;
 * - `e_ident[EI_ABIVERSION]` (HSA): 0 = code object v2, 1 = v3, 2 = v4, 3 = v5, 4 = v6;
 * - `e_flags & 0xff` (EF_AMDGPU_MACH): the processor (src/target-id/amdgpu.ts `AMDGPU_MACH_PROCESSORS`);
 * - v4 and later: `e_flags & 0x300` xnack (0 unsupported, 0x100 any, 0x200 off, 0x300 on) and `& 0xc00`
 *   sramecc (0 unsupported, 0x400 any, 0x800 off, 0xc00 on);
 * - v3: bit 0x100 xnack on and 0x200 sramecc on, clear meaning off (LLVM's `setTargetIDFromFlagsV3`);
 *   v2: bit 0x01 xnack on;
 * - v6: `e_flags >> 24` (EF_AMDGPU_GENERIC_VERSION) the version of a generic processor's (`gfx9-generic`) rules.
 *
 * Only the first 52 (ELF32) or 64 (ELF64) bytes are read: a multi-gigabyte Tensile library is sized by its
 * file size, never walked.
 */
import { OffloadKitError } from "../engine/errors.js";
import { AMDGPU_MACH_PROCESSORS, resolveAmdgcnProcessor } from "../target-id/amdgpu.js";

/** `e_machine` of AMDGPU ELF files. */
export const EM_AMDGPU = 224;
/** `e_ident[EI_OSABI]` values of AMDGPU code objects. */
export const ELFOSABI_AMDGPU_HSA = 64;
export const ELFOSABI_AMDGPU_PAL = 65;
export const ELFOSABI_AMDGPU_MESA3D = 66;
/** How many header bytes `parseAmdgpuCodeObject` needs (an ELF64 header). */
export const AMDGPU_CODE_OBJECT_HEADER_SIZE = 64;

const EF_AMDGPU_MACH = 0xff;
const EF_AMDGPU_FEATURE_XNACK_V2 = 0x01;
const EF_AMDGPU_FEATURE_XNACK_V3 = 0x100;
const EF_AMDGPU_FEATURE_SRAMECC_V3 = 0x200;
const EF_AMDGPU_FEATURE_XNACK_V4 = 0x300;
const EF_AMDGPU_FEATURE_SRAMECC_V4 = 0xc00;
const EF_AMDGPU_GENERIC_VERSION_OFFSET = 24;
/** Processors below this mach are R600 ones (EF_AMDGPU_MACH_AMDGCN_FIRST = 0x020). */
const EF_AMDGPU_MACH_AMDGCN_FIRST = 0x020;

/** A target-ID feature as a code object states it: `unsupported` by the processor, `any` (left out of the ID), `on` (+), `off` (-). */
export type FeatureSetting = "unsupported" | "any" | "on" | "off";

export interface AmdgpuCodeObject {
  readonly elfClass: 32 | 64;
  /** `e_type`: 1 ET_REL (a `-c` object), 3 ET_DYN (a linked `.hsaco`). */
  readonly type: number;
  readonly osAbi: number;
  readonly abiVersion: number;
  /** 2 to 6 for HSA code objects; undefined for other OS ABIs or an ABI version not (yet) defined. */
  readonly codeObjectVersion?: number;
  readonly flags: number;
  readonly mach: number;
  /** The canonical processor name; undefined for a mach number not in the table. */
  readonly processor?: string;
  readonly xnack: FeatureSetting;
  readonly sramecc: FeatureSetting;
  /** v6 generic processors: EF_AMDGPU_GENERIC_VERSION (0 when not set). */
  readonly genericVersion: number;
  /** `amdgcn-amd-amdhsa` (or `r600-…`, `…-amdpal`, `…-mesa3d`). */
  readonly triple: string;
  /** The target ID as clang prints it: `gfx90a:sramecc+:xnack-`; undefined when the processor is unknown. */
  readonly targetId?: string;
}

/** Whether `head` (a file's first bytes) starts an AMDGPU ELF file: the ELF magic, little-endian, `e_machine` EM_AMDGPU. */
export function isAmdgpuCodeObject(head: Uint8Array): boolean {
  return head.length >= 20 && head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c && head[3] === 0x46 &&
    head[5] === 1 && (head[4] === 1 || head[4] === 2) && (head[18]! | (head[19]! << 8)) === EM_AMDGPU;
}

function codeObjectVersionOf(osAbi: number, abiVersion: number): number | undefined {
  if (osAbi !== ELFOSABI_AMDGPU_HSA || abiVersion > 4) return undefined;
  return abiVersion + 2;
}

function tripleOf(mach: number, osAbi: number): string {
  const arch = mach !== 0 && mach < EF_AMDGPU_MACH_AMDGCN_FIRST ? "r600" : "amdgcn";
  const os = osAbi === ELFOSABI_AMDGPU_HSA ? "amdhsa" : osAbi === ELFOSABI_AMDGPU_PAL ? "amdpal" : osAbi === ELFOSABI_AMDGPU_MESA3D ? "mesa3d" : "unknown";
  return `${arch}-amd-${os}`;
}

const V4_SETTINGS: readonly FeatureSetting[] = ["unsupported", "any", "off", "on"];

/**
 * The features as the code object states them. v3 and v2 have one bit per feature (set: on, clear: off),
 * which says nothing of a processor without the feature, so the processor table decides "unsupported" there.
 */
function featuresOf(flags: number, version: number | undefined, processor: string | undefined): { xnack: FeatureSetting; sramecc: FeatureSetting } {
  if (version === undefined) return { xnack: "unsupported", sramecc: "unsupported" };
  if (version >= 4) {
    return { xnack: V4_SETTINGS[(flags & EF_AMDGPU_FEATURE_XNACK_V4) >> 8]!, sramecc: V4_SETTINGS[(flags & EF_AMDGPU_FEATURE_SRAMECC_V4) >> 10]! };
  }
  const supports = processor === undefined ? undefined : (resolveAmdgcnProcessor(processor, 19) ?? resolveAmdgcnProcessor(processor, 14))?.features;
  const bit = (set: boolean, supported: boolean | undefined): FeatureSetting => (set ? "on" : supported === true ? "off" : "unsupported");
  if (version === 3) {
    return { xnack: bit((flags & EF_AMDGPU_FEATURE_XNACK_V3) !== 0, supports?.xnack), sramecc: bit((flags & EF_AMDGPU_FEATURE_SRAMECC_V3) !== 0, supports?.sramecc) };
  }
  return { xnack: bit((flags & EF_AMDGPU_FEATURE_XNACK_V2) !== 0, supports?.xnack), sramecc: "unsupported" };
}

/** `gfx90a:sramecc+:xnack-`: features in alphabetical order, each only when set on or off (clang's `getCanonicalTargetID`). */
export function formatCodeObjectTargetId(processor: string, xnack: FeatureSetting, sramecc: FeatureSetting): string {
  let id = processor;
  for (const [name, setting] of [["sramecc", sramecc], ["xnack", xnack]] as const) {
    if (setting === "on") id += `:${name}+`;
    else if (setting === "off") id += `:${name}-`;
  }
  return id;
}

/**
 * Reads an AMDGPU code object's ELF header (`head`: at least its first 52 or 64 bytes). Throws
 * NOT_AMDGPU_CODE_OBJECT for anything `isAmdgpuCodeObject` rejects and TRUNCATED for a short header; an
 * unknown mach number is not an error (`processor` and `targetId` are then undefined).
 */
export function parseAmdgpuCodeObject(head: Uint8Array): AmdgpuCodeObject {
  if (!isAmdgpuCodeObject(head)) {
    throw new OffloadKitError("NOT_AMDGPU_CODE_OBJECT", "not an AMDGPU ELF file (little-endian, e_machine EM_AMDGPU)", { offset: 0, field: "e_machine" });
  }
  const elfClass = head[4] === 2 ? 64 : 32;
  const flagsAt = elfClass === 64 ? 48 : 36;
  if (head.length < flagsAt + 4) {
    throw new OffloadKitError("TRUNCATED", `AMDGPU ELF header needs ${flagsAt + 4} bytes, have ${head.length}`, { offset: head.length, field: "e_flags" });
  }
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const flags = view.getUint32(flagsAt, true);
  const osAbi = head[7]!;
  const abiVersion = head[8]!;
  const codeObjectVersion = codeObjectVersionOf(osAbi, abiVersion);
  const mach = flags & EF_AMDGPU_MACH;
  const processor = AMDGPU_MACH_PROCESSORS.get(mach);
  const { xnack, sramecc } = featuresOf(flags, codeObjectVersion, processor);
  const genericVersion = codeObjectVersion !== undefined && codeObjectVersion >= 6 ? flags >>> EF_AMDGPU_GENERIC_VERSION_OFFSET : 0;
  return {
    elfClass,
    type: view.getUint16(16, true),
    osAbi,
    abiVersion,
    ...(codeObjectVersion !== undefined ? { codeObjectVersion } : {}),
    flags,
    mach,
    ...(processor !== undefined ? { processor, targetId: formatCodeObjectTargetId(processor, xnack, sramecc) } : {}),
    xnack,
    sramecc,
    genericVersion,
    triple: tripleOf(mach, osAbi),
  };
}

/**
 * The ID a code object is listed, sized, checked and extracted under, in the bundler's entry-ID form so
 * `--targets` and `check` read it as they read bundle entries: `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`
 * (`hip-` for code objects v2 and v3, as the bundler names those). Undefined when the processor is unknown.
 */
export function codeObjectEntryId(object: AmdgpuCodeObject): string | undefined {
  if (object.targetId === undefined) return undefined;
  const kind = object.codeObjectVersion !== undefined && object.codeObjectVersion < 4 ? "hip" : "hipv4";
  return `${kind}-${object.triple}--${object.targetId}`;
}
