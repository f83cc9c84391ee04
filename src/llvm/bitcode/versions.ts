/**
 * What the bitcode writers of LLVM 14 and 22 put in every module, as data. Each table was read off the
 * native tools' output: `clang-offload-wrapper-14` (Debian 14.0.6) and `llvm-offload-wrapper-22` (22.1.8)
 * modules dumped with `llvm-bcanalyzer-22 -dump` and with a DEFINE_ABBREV-level dump of the same files
 * (the abbreviation definitions are in the file: BLOCKINFO and each block's own). Widths written `TYPE_BITS`
 * are `Log2_32_Ceil(number of types + 1)` (the writer's computeBitsRequiredForTypeIndices), which is why they
 * are functions of it; everything else is constant per version.
 */
import type { Abbrev } from "./bitstream.js";
import { ARRAY, CHAR6, fixed, lit, vbr } from "./bitstream.js";

export type BitcodeVersion = 14 | 22;

/** Function-block abbreviations the writer uses, by role (their ids depend on the version's BLOCKINFO list). */
export type FunctionAbbrevRole =
  | "load" | "store" | "binop" | "binopFlags" | "cast" | "retVoid" | "retVal" | "brUncond" | "brCond" | "unreachable" | "gep" | "cmp";

export interface VersionTable {
  readonly version: BitcodeVersion;
  /** IDENTIFICATION_CODE_STRING: "LLVM" + LLVM_VERSION_STRING. */
  readonly producer: string;
  /** irsymtab's kExpectedProducerName: added to the string table even though the symtab itself is dropped. */
  readonly symtabProducer: string;
  readonly metadataKinds: readonly string[];
  readonly operandBundleTags: readonly string[];
  readonly syncScopeNames: readonly string[];
  /** FUNCTION_BLOCK's abbreviation width (EnterSubblock(FUNCTION_BLOCK_ID, n)). */
  readonly functionBlockWidth: number;
  /** The BLOCKINFO abbreviations for VALUE_SYMTAB (14), CONSTANTS (11) and FUNCTION (12) blocks, in order. */
  blockInfo(typeBits: number): { blockId: number; abbrev: Abbrev; role?: FunctionAbbrevRole }[];
  /** Whether TYPE_BLOCK defines the typed POINTER abbreviation (before the opaque one). */
  readonly typedPointerAbbrev: boolean;
  /** GLOBALVAR records of globals that need the full form have 20 fields in 22 (sanitizer metadata, code model). */
  readonly globalVarTail: readonly number[];
  /** CE GEP: 14 writes CE_INBOUNDS_GEP (20) / CE_GEP (12) without flags; 22 writes CE_GEP (32) with a flags word. */
  readonly gepFlagsRecord: boolean;
  /** GEP instruction's first operand: 14 writes isInBounds (0/1); 22 the GEPNoWrapFlags bits (inbounds = 3). */
  readonly gepInBoundsFlags: number;
}

const VST_ABBREVS = (): Abbrev[] => [
  [fixed(3), vbr(8), ARRAY, fixed(8)],
  [lit(1), vbr(8), ARRAY, fixed(7)],
  [lit(1), vbr(8), ARRAY, CHAR6],
  [lit(2), vbr(8), ARRAY, CHAR6],
];

const CONSTANTS_ABBREVS = (typeBits: number): Abbrev[] => [
  [lit(1), fixed(typeBits)],
  [lit(4), vbr(8)],
  [lit(11), fixed(4), fixed(typeBits), vbr(8)],
  [lit(2)],
];

/** Metadata kinds LLVM 14 registers in every context (MD_dbg = 0 ...). */
const METADATA_KINDS_14 = [
  "dbg", "tbaa", "prof", "fpmath", "range", "tbaa.struct", "invariant.load", "alias.scope", "noalias", "nontemporal",
  "llvm.mem.parallel_loop_access", "nonnull", "dereferenceable", "dereferenceable_or_null", "make.implicit", "unpredictable",
  "invariant.group", "align", "llvm.loop", "type", "section_prefix", "absolute_symbol", "associated", "callees", "irr_loop",
  "llvm.access.group", "callback", "llvm.preserve.access.index", "vcall_visibility", "noundef", "annotation",
];

const METADATA_KINDS_22 = [
  ...METADATA_KINDS_14, "nosanitize", "func_sanitize", "exclude", "memprof", "callsite", "kcfi_type", "pcsections", "DIAssignID",
  "coro.outside.frame", "mmra", "noalias.addrspace", "callee_type", "nofree", "captures", "alloc_token", "implicit.ref",
];

const BUNDLE_TAGS_14 = ["deopt", "funclet", "gc-transition", "cfguardtarget", "preallocated", "gc-live", "clang.arc.attachedcall"];
const BUNDLE_TAGS_22 = [...BUNDLE_TAGS_14, "ptrauth", "kcfi", "convergencectrl", "align", "deactivation-symbol"];

export const LLVM14: VersionTable = {
  version: 14,
  producer: "LLVM14.0.6",
  symtabProducer: "14.0.6",
  metadataKinds: METADATA_KINDS_14,
  operandBundleTags: BUNDLE_TAGS_14,
  syncScopeNames: ["singlethread", ""],
  functionBlockWidth: 4,
  typedPointerAbbrev: true,
  globalVarTail: [],
  gepFlagsRecord: false,
  gepInBoundsFlags: 1,
  blockInfo(typeBits) {
    return [
      ...VST_ABBREVS().map((abbrev) => ({ blockId: 14, abbrev })),
      ...CONSTANTS_ABBREVS(typeBits).map((abbrev) => ({ blockId: 11, abbrev })),
      ...([
        [[lit(20), vbr(6), fixed(typeBits), vbr(4), fixed(1)], "load"],
        [[lit(56), vbr(6), fixed(4)]],
        [[lit(56), vbr(6), fixed(4), fixed(8)]],
        [[lit(2), vbr(6), vbr(6), fixed(4)], "binop"],
        [[lit(2), vbr(6), vbr(6), fixed(4), fixed(8)], "binopFlags"],
        [[lit(3), vbr(6), fixed(typeBits), fixed(4)], "cast"],
        [[lit(10)], "retVoid"],
        [[lit(10), vbr(6)], "retVal"],
        [[lit(15)], "unreachable"],
        [[lit(43), fixed(1), fixed(typeBits), ARRAY, vbr(6)], "gep"],
      ] as [Abbrev, FunctionAbbrevRole?][]).map(([abbrev, role]) => ({ blockId: 12, abbrev, role })),
    ];
  },
};

export const LLVM22: VersionTable = {
  version: 22,
  producer: "LLVM22.1.8",
  symtabProducer: "22.1.8",
  metadataKinds: METADATA_KINDS_22,
  operandBundleTags: BUNDLE_TAGS_22,
  syncScopeNames: ["singlethread", ""],
  functionBlockWidth: 5,
  typedPointerAbbrev: false,
  globalVarTail: [0, 0],
  gepFlagsRecord: true,
  gepInBoundsFlags: 3,
  blockInfo(typeBits) {
    return [
      ...VST_ABBREVS().map((abbrev) => ({ blockId: 14, abbrev })),
      ...CONSTANTS_ABBREVS(typeBits).map((abbrev) => ({ blockId: 11, abbrev })),
      ...([
        [[lit(20), vbr(6), fixed(typeBits), vbr(4), fixed(1)], "load"],
        [[lit(44), vbr(6), vbr(6), vbr(4), fixed(1)], "store"],
        [[lit(56), vbr(6), fixed(4)]],
        [[lit(56), vbr(6), fixed(4), fixed(8)]],
        [[lit(2), vbr(6), vbr(6), fixed(4)], "binop"],
        [[lit(2), vbr(6), vbr(6), fixed(4), fixed(8)], "binopFlags"],
        [[lit(3), vbr(6), fixed(typeBits), fixed(4)], "cast"],
        [[lit(3), vbr(6), fixed(typeBits), fixed(4), fixed(8)]],
        [[lit(10)], "retVoid"],
        [[lit(10), vbr(6)], "retVal"],
        [[lit(11), vbr(6)], "brUncond"],
        [[lit(11), vbr(6), vbr(6), vbr(6)], "brCond"],
        [[lit(15)], "unreachable"],
        [[lit(43), fixed(3), fixed(typeBits), ARRAY, vbr(6)], "gep"],
        [[lit(28), vbr(6), vbr(6), fixed(6)], "cmp"],
        [[lit(28), vbr(6), vbr(6), fixed(6), fixed(8)]],
        [[lit(64), vbr(7), vbr(7), vbr(7), vbr(6)]],
        [[lit(35), vbr(6), vbr(8), vbr(6), vbr(6), fixed(1), vbr(6), vbr(3)]],
      ] as [Abbrev, FunctionAbbrevRole?][]).map(([abbrev, role]) => ({ blockId: 12, abbrev, role })),
    ];
  },
};

export function versionTable(version: BitcodeVersion): VersionTable {
  return version === 14 ? LLVM14 : LLVM22;
}
