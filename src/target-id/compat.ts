/**
 * Which code objects may run where, and which target-ID sets may share a bundle (seed 000 "Bundle Entry ID" and
 * "Archive Unbundling"; spec/bundler.md §3.2–3.4; spec/target-id.md §4–5).
 *
 * Follows clang/lib/Driver/OffloadBundler.cpp (`OffloadTargetInfo::isOffloadKindCompatible`, `operator==`,
 * `isCodeObjectCompatible`; the 14 variants from ClangOffloadBundler.cpp) and clang/lib/Basic/TargetID.cpp
 * (`getConflictTargetIDCombination`, `isCompatibleTargetID`) in their pre-2025 form, which is what 19 and 22.1.8
 * run (measured: 22 accepts {gfx906:sramecc+:xnack+, gfx906:xnack+}, which the rewritten upstream would reject).
 *
 * Measured facts that the sources do not make obvious (test/differential/target-id-native.test.ts):
 * - 14 matches archive members by kind equality (hip ≠ hipv4) and exact GPU-name text: a `gfx908` member does not
 *   serve a `gfx908:xnack+` target in 14, while 19/22 apply the any/on/off rule.
 * - The conflict check dereferences the result of a failed parse. What it reads is whatever the previous parse
 *   left behind, which differs between the 19 and 22 builds; `getConflictTargetIdCombination` reproduces both.
 */

import type { LlvmVersion } from "../llvm/triple.js";
import type { OffloadTargetInfo } from "./entry-id.js";
import { compareByteOrder, parseTargetId, parseTargetIdFormat, type TargetIdError } from "./parse.js";

export interface CompatibilityOptions {
  /** `-hip-openmp-compatible` (19/22): hip* kinds and openmp match each other. */
  readonly hipOpenmpCompatible?: boolean;
}

/** Why a code object does not fit a target, or a provided target ID does not satisfy a requested one. */
export type IncompatibilityReason =
  | { readonly code: "kind-mismatch"; readonly codeObjectKind: string; readonly targetKind: string }
  | { readonly code: "triple-mismatch"; readonly codeObjectTriple: string; readonly targetTriple: string }
  | { readonly code: "invalid-target-id"; readonly side: "code-object" | "target"; readonly error: TargetIdError }
  | { readonly code: "processor-mismatch"; readonly codeObjectProcessor: string; readonly targetProcessor: string }
  /** The code object names more features than the target (checked before the features themselves). */
  | { readonly code: "too-many-features"; readonly codeObjectFeatures: number; readonly targetFeatures: number }
  /** The code object needs the feature on/off but the target leaves it unspecified ("any"). */
  | { readonly code: "feature-unspecified"; readonly feature: string; readonly codeObjectSetting: boolean }
  | { readonly code: "feature-mismatch"; readonly feature: string; readonly codeObjectSetting: boolean; readonly targetSetting: boolean }
  /** 14 only: the GPU name texts (with features) differ. */
  | { readonly code: "gpu-arch-mismatch"; readonly codeObjectGpuArch: string; readonly targetGpuArch: string };

export type CompatibilityVerdict =
  | { readonly compatible: true; readonly match: "exact" | "target-id" }
  | { readonly compatible: false; readonly reason: IncompatibilityReason };

/** `isOffloadKindCompatible(CodeObjectKind → TargetKind)`. 14 only accepts equal kinds. */
export function isOffloadKindCompatible(codeObjectKind: string, targetKind: string, hipOpenmpCompatible = false,
  version: LlvmVersion = 19): boolean {
  if (codeObjectKind === targetKind) return true;
  if (version === 14) return false;
  if ((codeObjectKind === "hip" && targetKind === "hipv4") || (codeObjectKind === "hipv4" && targetKind === "hip"))
    return true;
  if (!hipOpenmpCompatible) return false;
  const startsWithHip = (kind: string) => kind.slice(0, 3).toLowerCase() === "hip";
  return (startsWithHip(codeObjectKind) && targetKind === "openmp") ||
    (codeObjectKind === "openmp" && startsWithHip(targetKind));
}

/** `OffloadTargetInfo::operator==`: same kind and target ID, compatible triples. */
function isExactMatch(codeObject: OffloadTargetInfo, target: OffloadTargetInfo): boolean {
  return codeObject.offloadKind === target.offloadKind && codeObject.triple.isCompatibleWith(target.triple) &&
    codeObject.targetId === target.targetId;
}

function incompatible(reason: IncompatibilityReason): CompatibilityVerdict {
  return { compatible: false, reason };
}

/** Features of `codeObject` that `target` does not satisfy: unspecified in the target, or of the other sign. */
function checkFeatures(codeObject: ReadonlyMap<string, boolean>, target: ReadonlyMap<string, boolean>): IncompatibilityReason | undefined {
  for (const [feature, codeObjectSetting] of codeObject) {
    const targetSetting = target.get(feature);
    if (targetSetting === undefined) return { code: "feature-unspecified", feature, codeObjectSetting };
    if (targetSetting !== codeObjectSetting) return { code: "feature-mismatch", feature, codeObjectSetting, targetSetting };
  }
  return undefined;
}

/**
 * `isCodeObjectCompatible` with the reason when it says no. The release is the code object's `llvmVersion`.
 * Order of checks as upstream: exact match; kinds and triples; both target IDs parse (with their own triples) to
 * the same canonical processor; the code object has no more features than the target; each code-object feature
 * is set the same way in the target.
 */
export function explainCodeObjectCompatibility(codeObject: OffloadTargetInfo, target: OffloadTargetInfo,
  options: CompatibilityOptions = {}): CompatibilityVerdict {
  const version = codeObject.llvmVersion;
  if (isExactMatch(codeObject, target)) return { compatible: true, match: "exact" };
  if (!isOffloadKindCompatible(codeObject.offloadKind, target.offloadKind, options.hipOpenmpCompatible ?? false, version))
    return incompatible({ code: "kind-mismatch", codeObjectKind: codeObject.offloadKind, targetKind: target.offloadKind });
  if (!codeObject.triple.isCompatibleWith(target.triple))
    return incompatible({ code: "triple-mismatch", codeObjectTriple: codeObject.triple.str(), targetTriple: target.triple.str() });

  if (version === 14) {
    if (codeObject.targetId !== target.targetId)
      return incompatible({ code: "gpu-arch-mismatch", codeObjectGpuArch: codeObject.targetId, targetGpuArch: target.targetId });
    return { compatible: true, match: "target-id" };
  }

  const codeObjectId = parseTargetId(codeObject.triple, codeObject.targetId, version);
  if (!codeObjectId.ok) return incompatible({ code: "invalid-target-id", side: "code-object", error: codeObjectId.error });
  const targetId = parseTargetId(target.triple, target.targetId, version);
  if (!targetId.ok) return incompatible({ code: "invalid-target-id", side: "target", error: targetId.error });
  if (codeObjectId.value.processor !== targetId.value.processor)
    return incompatible({ code: "processor-mismatch", codeObjectProcessor: codeObjectId.value.processor,
      targetProcessor: targetId.value.processor });

  const codeObjectFeatures = codeObjectId.value.features;
  const targetFeatures = targetId.value.features;
  if (codeObjectFeatures.size > targetFeatures.size)
    return incompatible({ code: "too-many-features", codeObjectFeatures: codeObjectFeatures.size, targetFeatures: targetFeatures.size });
  const featureProblem = checkFeatures(codeObjectFeatures, targetFeatures);
  return featureProblem === undefined ? { compatible: true, match: "target-id" } : incompatible(featureProblem);
}

/** `isCodeObjectCompatible(CodeObjectInfo, TargetInfo)`: may the bundler hand this entry to this target? */
export function isCodeObjectCompatible(codeObject: OffloadTargetInfo, target: OffloadTargetInfo,
  options: CompatibilityOptions = {}): boolean {
  return explainCodeObjectCompatibility(codeObject, target, options).compatible;
}

/**
 * `isCompatibleTargetID(Provided, Requested)` with the reason when it says no: the raw processors must be equal
 * and every feature of `provided` must appear in `requested` with the same sign (a feature `provided` leaves out
 * matches anything). LLVM does not handle malformed IDs here (it dereferences an empty optional); they are
 * reported as invalid instead.
 */
export function explainTargetIdCompatibility(provided: string, requested: string): CompatibilityVerdict {
  const providedParts = parseTargetIdFormat(provided);
  if (!providedParts.ok) return incompatible({ code: "invalid-target-id", side: "code-object", error: providedParts.error });
  const requestedParts = parseTargetIdFormat(requested);
  if (!requestedParts.ok) return incompatible({ code: "invalid-target-id", side: "target", error: requestedParts.error });
  if (providedParts.value.processor !== requestedParts.value.processor)
    return incompatible({ code: "processor-mismatch", codeObjectProcessor: providedParts.value.processor,
      targetProcessor: requestedParts.value.processor });
  const featureProblem = checkFeatures(providedParts.value.features, requestedParts.value.features);
  return featureProblem === undefined ? { compatible: true, match: "target-id" } : incompatible(featureProblem);
}

/** The runtime's `isCompatibleTargetID(Provided, Requested)`. */
export function isCompatibleTargetId(provided: string, requested: string): boolean {
  return explainTargetIdCompatibility(provided, requested).compatible;
}

export interface ConflictOptions {
  /** Which build's handling of malformed IDs to reproduce (the check does not exist in 14). */
  readonly llvmVersion?: 19 | 22;
}

/**
 * `getConflictTargetIDCombination`: walks the distinct IDs in byte order, keyed by the raw processor text (no
 * alias resolution). The first ID of a processor is remembered; a later one conflicts when it names a feature the
 * remembered one does not (sign ignored, one direction only), and the first such pair is returned.
 *
 * A malformed ID (`gfx906:xnack`) is not skipped: LLVM dereferences the empty optional, so its key is whatever
 * the optional's storage last held, with the features read before the error. In both builds that storage holds
 * the processor of the last successful parse (a failed parse leaves it alone; before any success it holds stale
 * stack data, modelled as a key that matches nothing). The 19 build also reuses it for the entry it inserts, so
 * after a new key is remembered it holds that ID's whole text, which equals a processor key only for IDs without
 * ':'. Measured against clang-offload-bundler-19/-22 one set at a time. In a 19 run with many kind-triple
 * groups the initial stale value can come from earlier work, and a later group's verdict may then differ.
 * It is undefined behaviour all the same: the Debian builds 19.1.7-3~deb12u1 and 22.1.8-1~deb12u1 crash (SIGSEGV)
 * on a lone malformed ID, so the differential tests compare well-formed IDs only and this stays our deterministic
 * answer.
 */
export function getConflictTargetIdCombination(ids: Iterable<string>, options: ConflictOptions = {}): [string, string] | undefined {
  const version = options.llvmVersion ?? 19;
  const sorted = [...new Set(ids)].sort(compareByteOrder);
  const remembered = new Map<string | symbol, { readonly id: string; readonly features: ReadonlyMap<string, boolean> }>();
  let staleSlot: string | symbol = Symbol("stale stack data");

  for (const id of sorted) {
    const parsed = parseTargetIdFormat(id);
    if (parsed.ok) staleSlot = parsed.value.processor;
    const key = staleSlot;
    const features = parsed.ok ? parsed.value.features : parsed.error.featuresBeforeError;

    const first = remembered.get(key);
    if (first === undefined) {
      remembered.set(key, { id, features });
      if (version === 19) staleSlot = id;
      continue;
    }
    for (const feature of features.keys()) if (!first.features.has(feature)) return [first.id, id];
  }
  return undefined;
}

/** A conflict found by the bundler's check over all its targets: the `kind-triple` group and the two IDs. */
export interface BundleTargetConflict {
  /** `<kind>-<triple.str()>`: the rebuilt triple text, not 22's normalised one. */
  readonly group: string;
  readonly first: string;
  readonly second: string;
}

/**
 * The bundler's check over its `-targets` (19/22, bundling and unbundling alike): target IDs grouped by
 * `<kind>-<triple.str()>`, groups visited in byte order of that key, each group checked with
 * `getConflictTargetIdCombination`. 14 has no such check. The release is the infos' `llvmVersion`.
 */
export function findConflictingTargets(infos: Iterable<OffloadTargetInfo>): BundleTargetConflict | undefined {
  const groups = new Map<string, string[]>();
  let version: LlvmVersion | undefined;
  for (const info of infos) {
    version = info.llvmVersion;
    const group = `${info.offloadKind}-${info.triple.str()}`;
    const ids = groups.get(group);
    if (ids === undefined) groups.set(group, [info.targetId]);
    else ids.push(info.targetId);
  }
  if (version === undefined || version === 14) return undefined;
  for (const group of [...groups.keys()].sort(compareByteOrder)) {
    const pair = getConflictTargetIdCombination(groups.get(group)!, { llvmVersion: version });
    if (pair !== undefined) return { group, first: pair[0], second: pair[1] };
  }
  return undefined;
}

/** The tool's message for a conflict, word for word. */
export function formatConflictMessage(conflict: BundleTargetConflict): string {
  return `Cannot bundle inputs with conflicting targets: '${conflict.group}-${conflict.first}' and ` +
    `'${conflict.group}-${conflict.second}'`;
}

function onOff(setting: boolean): string {
  return setting ? "on (+)" : "off (-)";
}

/** One sentence for an `IncompatibilityReason`, for reports such as `offload-kit check`. */
export function describeIncompatibility(reason: IncompatibilityReason): string {
  switch (reason.code) {
    case "kind-mismatch":
      return `offload kind '${reason.codeObjectKind}' cannot serve offload kind '${reason.targetKind}'`;
    case "triple-mismatch":
      return `triple '${reason.codeObjectTriple}' is not compatible with '${reason.targetTriple}'`;
    case "invalid-target-id":
      return `the ${reason.side === "code-object" ? "code object's" : "target's"} target ID does not parse: ${reason.error.message}`;
    case "processor-mismatch":
      return `processor '${reason.codeObjectProcessor}' is not '${reason.targetProcessor}'`;
    case "too-many-features":
      return `the code object sets ${reason.codeObjectFeatures} feature(s) but the target only ${reason.targetFeatures}`;
    case "feature-unspecified":
      return `the code object needs ${reason.feature} ${onOff(reason.codeObjectSetting)} but the target leaves it unspecified`;
    case "feature-mismatch":
      return `the code object needs ${reason.feature} ${onOff(reason.codeObjectSetting)} but the target has it ${onOff(reason.targetSetting)}`;
    case "gpu-arch-mismatch":
      return `GPU '${reason.codeObjectGpuArch}' is not '${reason.targetGpuArch}' (LLVM 14 compares the text)`;
  }
}
