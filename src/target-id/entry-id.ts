/**
 * Bundle entry IDs `<kind>-<triple>[-<target id>]` (seed 000 "Bundle Entry ID", seed 002; spec/bundler.md §3.1–3.2):
 * how each release's `OffloadTargetInfo` constructor splits a `-targets` string, and what `str()` stores.
 *
 * Follows `OffloadTargetInfo` in clang/tools/clang-offload-bundler/ClangOffloadBundler.cpp (14) and
 * clang/lib/Driver/OffloadBundler.cpp (19, 22), plus the validation in the tool's main() (the "invalid target"
 * message) and 22's `checkOffloadBundleID`. Every quirk below was measured against the native tools
 * (test/differential/target-id-native.test.ts):
 *
 * - 14: splits like 19 but keeps the triple text as written, and the file stores the `-targets` string verbatim.
 * - 19: split at the first ':', then at the last '-'; if that last field is a known offload arch (and "" is one),
 *   the target ID is the substring from the *first* occurrence of that field, so `host-x86_64-pc-linux-gnu-` has
 *   the whole string as its target ID. The triple is rebuilt from its four fields, so a three-field triple gets an
 *   empty environment and extra fields land in the environment (`amdgcn-amd-amdhsa--foo`).
 * - 22: at most six '-' fields; the sixth is the target ID if its processor is a known offload arch, and the
 *   stored triple is normalised (three fields plus a trailing '-' for amdhsa, four otherwise).
 */

import { ArchType, CanonicalForm, OSType, Triple, splitLimited, type LlvmVersion } from "../llvm/triple.js";
import { isKnownOffloadArch } from "./offload-arch.js";

/** The four offload kinds the bundler accepts (`isOffloadKindValid`). */
export const OFFLOAD_KINDS = ["host", "openmp", "hip", "hipv4"] as const;
export type OffloadKind = (typeof OFFLOAD_KINDS)[number];

/** A parsed `-targets` string or stored bundle entry ID: the fields of LLVM's `OffloadTargetInfo`. */
export interface OffloadTargetInfo {
  /** The string it was parsed from. */
  readonly target: string;
  readonly offloadKind: string;
  readonly triple: Triple;
  /** `TargetID` (19, 22) or `GPUArch` (14): "" when none was recognised. */
  readonly targetId: string;
  readonly llvmVersion: LlvmVersion;
}

/** Text before the first `separator` and after it (`StringRef::split`); no separator gives `[text, ""]`. */
function splitFirst(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  return at === -1 ? [text, ""] : [text.substring(0, at), text.substring(at + separator.length)];
}

/** Text before the last `separator` and after it (`StringRef::rsplit`); no separator gives `[text, ""]`. */
function splitLast(text: string, separator: string): [string, string] {
  const at = text.lastIndexOf(separator);
  return at === -1 ? [text, ""] : [text.substring(0, at), text.substring(at + separator.length)];
}

/** The 14/19 constructor: GPU name after the last '-' of the part before the first ':'. */
function parseBeforeLastDash(target: string, version: 14 | 19): OffloadTargetInfo {
  const [base] = splitFirst(target, ":");
  const [prefix, last] = splitLast(base, "-");
  const known = isKnownOffloadArch(last, version);
  const [offloadKind, tripleText] = splitFirst(known ? prefix : base, "-");
  // The ID runs from the first occurrence of the name anywhere in the target, not from where it was found.
  const targetId = known ? target.substring(target.indexOf(last)) : "";
  const written = new Triple(tripleText, version);
  // 19 rebuilds the triple from four fields "to standardize bundles"; 14 keeps the text.
  const triple = version === 14 ? written
    : Triple.fromParts(written.getArchName(), written.getVendorName(), written.getOSName(), written.getEnvironmentName(), version);
  return { target, offloadKind, triple, targetId, llvmVersion: version };
}

/** The 22 constructor. Fewer than five fields (rejected earlier by the tool) read as empty fields here. */
function parseSixFields(target: string): OffloadTargetInfo {
  const fields = splitLimited(target, "-", 5);
  while (fields.length < 5) fields.push("");
  const withFeatures = fields.length === 6 ? fields[5]! : "";
  const [processor] = splitFirst(withFeatures, ":");
  const targetId = processor !== "" && isKnownOffloadArch(processor, 22) ? withFeatures : "";
  const written = new Triple(fields.slice(1, 5).join("-"), 22);
  const triple = Triple.fromParts(written.getArchName(), written.getVendorName(), written.getOSName(), written.getEnvironmentName(), 22);
  return { target, offloadKind: fields[0]!, triple, targetId, llvmVersion: 22 };
}

/** `OffloadTargetInfo(Target, Config)` of the given release. */
export function parseOffloadTarget(target: string, version: LlvmVersion = 19): OffloadTargetInfo {
  return version === 22 ? parseSixFields(target) : parseBeforeLastDash(target, version);
}

/**
 * What the bundle stores for this target (`OffloadTargetInfo::str()` in 19 and 22; the `-targets` string itself
 * in 14, which stores targets verbatim). The version defaults to the one the info was parsed with.
 */
export function bundleIdString(info: OffloadTargetInfo, version: LlvmVersion = info.llvmVersion): string {
  if (version === 14) return info.target;
  if (version === 19) return `${info.offloadKind}-${info.triple.str()}-${info.targetId}`;
  // The HIP runtime expects "amdgcn-amd-amdhsa-" (empty environment), hence the three-field form plus '-'.
  const tripleText = info.triple.os === OSType.AMDHSA
    ? `${info.triple.normalize(CanonicalForm.THREE_IDENT)}-`
    : info.triple.normalize(CanonicalForm.FOUR_IDENT);
  return `${info.offloadKind}-${tripleText}-${info.targetId}`;
}

/** The entry ID the given release writes for a `-targets` string. */
export function normaliseBundleId(target: string, version: LlvmVersion = 19): string {
  return bundleIdString(parseOffloadTarget(target, version), version);
}

export function isOffloadKindValid(info: OffloadTargetInfo): boolean {
  return (OFFLOAD_KINDS as readonly string[]).includes(info.offloadKind);
}

/** `isTripleValid`: non-empty text and an arch that `Triple::parseArch` knows. */
export function isTripleValid(info: OffloadTargetInfo): boolean {
  return info.triple.str() !== "" && info.triple.arch !== ArchType.UnknownArch;
}

export function hasHostKind(info: OffloadTargetInfo): boolean {
  return info.offloadKind === "host";
}

/** 22's `checkOffloadBundleID`: five or six '-' fields (the sixth keeps any further '-'). */
export function checkOffloadBundleId(target: string): boolean {
  const count = splitLimited(target, "-", 5).length;
  return count === 5 || count === 6;
}

/** 22's message for a target that fails `checkOffloadBundleId`, word for word. */
export const TARGET_FORMAT_MESSAGE =
  "Targets need to follow the format '<offload kind>-<target triple>', where '<target triple>' follows the format " +
  "'<kind>-<arch>-<vendor>-<os>-<env>[-<target id>[:target features]]'.";

/**
 * The tool's message for an invalid kind and/or triple: `invalid target '<T>'` followed by
 * `, unknown offloading kind '<k>'` and/or `, unknown target triple '<triple.str()>'` (the rebuilt, not the
 * normalised, triple). Undefined when both are valid.
 */
export function formatInvalidTargetMessage(target: string, info: OffloadTargetInfo): string | undefined {
  const kindValid = isOffloadKindValid(info);
  const tripleValid = isTripleValid(info);
  if (kindValid && tripleValid) return undefined;
  let message = `invalid target '${target}'`;
  if (!kindValid) message += `, unknown offloading kind '${info.offloadKind}'`;
  if (!tripleValid) message += `, unknown target triple '${info.triple.str()}'`;
  return message;
}

/**
 * The extension archive unbundling gives an extracted member (`getDeviceFileExtension`): `.bc` when the entry's
 * target ID mentions gfx, `.cubin` when it mentions sm_, else the member's own extension.
 */
export function getDeviceFileExtension(targetId: string, memberExtension: string): string {
  if (targetId.includes("gfx")) return ".bc";
  if (targetId.includes("sm_")) return ".cubin";
  return memberExtension;
}
