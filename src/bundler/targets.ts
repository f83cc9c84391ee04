/**
 * The bundler's view of bundle entry IDs: one place that turns a -targets string or a stored ID
 * into the parsed form (kind, triple, target ID) the way clang-offload-bundler 19 does, and decides
 * compatibility. The rules themselves live in src/target-id/; this module fixes the version and options
 * the bundler uses.
 */
import {
  bundleIdString, formatInvalidTargetMessage, getConflictTargetIdCombination, hasHostKind, isCodeObjectCompatible,
  parseOffloadTarget,
} from "../target-id/index.js";
import type { OffloadTargetInfo } from "../target-id/index.js";

export type { OffloadTargetInfo };

/** The bundler's behaviour version: what IDs it writes and how it parses them. */
export const BUNDLER_LLVM_VERSION = 19;

export function parseTarget(target: string): OffloadTargetInfo {
  return parseOffloadTarget(target, BUNDLER_LLVM_VERSION);
}

export function storedId(info: OffloadTargetInfo): string {
  return bundleIdString(info, BUNDLER_LLVM_VERSION);
}

export { formatInvalidTargetMessage, getConflictTargetIdCombination, hasHostKind };

export function compatible(codeObject: OffloadTargetInfo, target: OffloadTargetInfo, hipOpenmpCompatible: boolean): boolean {
  return isCodeObjectCompatible(codeObject, target, { hipOpenmpCompatible });
}
