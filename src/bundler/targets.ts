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

// Parsing an ID means parsing its triple against LLVM's tables: memoised, because a batch sees the same
// few IDs in every file (a 2000-file batch spent a third of its CPU here before, measured).
const CACHE_LIMIT = 4096;
const parsed = new Map<string, OffloadTargetInfo>();
const verdicts = new Map<string, boolean>();

function remember<K, V>(cache: Map<K, V>, key: K, value: V): V {
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, value);
  return value;
}

export function parseTarget(target: string): OffloadTargetInfo {
  return parsed.get(target) ?? remember(parsed, target, parseOffloadTarget(target, BUNDLER_LLVM_VERSION));
}

export function storedId(info: OffloadTargetInfo): string {
  return bundleIdString(info, BUNDLER_LLVM_VERSION);
}

export { formatInvalidTargetMessage, getConflictTargetIdCombination, hasHostKind };

export function compatible(codeObject: OffloadTargetInfo, target: OffloadTargetInfo, hipOpenmpCompatible: boolean): boolean {
  // Both infos come from parseTarget for the same version, so their source strings identify them.
  const key = `${hipOpenmpCompatible ? 1 : 0}${codeObject.target.length}:${codeObject.target}${target.target}`;
  return verdicts.get(key) ?? remember(verdicts, key, isCodeObjectCompatible(codeObject, target, { hipOpenmpCompatible }));
}
