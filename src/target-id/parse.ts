/**
 * Target-ID grammar: `processor ( ":" feature ("+" | "-") )*` (seed 000 "Target ID"; spec/target-id.md §1).
 *
 * Follows clang/lib/Basic/TargetID.cpp as the 19/22 tools behave: `parseTargetIDWithFormatCheckingOnly`
 * (parseTargetIdFormat), `parseTargetID` (parseTargetId: alias → canonical processor through the AMDGPU table,
 * features limited to what the processor allows), `getCanonicalTargetID` (formatCanonicalTargetId) and
 * `getProcessorFromTargetID`. Failures are values naming the offending part, never exceptions.
 */

import { Triple, type LlvmVersion } from "../llvm/triple.js";
import { listProcessorFeatures, resolveAmdgcnProcessor, resolveR600Processor } from "./amdgpu.js";

export type TargetIdErrorCode =
  /** A ':' with nothing before it (`:xnack+`), or an empty processor where a full parse needs one. */
  | "empty-processor"
  /** A feature item that does not end in '+' or '-' (`gfx906:xnack`, or an empty item as in `gfx906::xnack+`). */
  | "missing-sign"
  /** The same feature named twice (`gfx906:xnack+:xnack-`). */
  | "repeated-feature"
  /** An AMDGPU processor name that the processor table does not know (aliases are known). */
  | "unknown-processor"
  /** A feature the processor does not have; non-AMDGPU triples allow no features at all. */
  | "unsupported-feature";

export interface TargetIdError {
  readonly code: TargetIdErrorCode;
  /** The whole target ID as given. */
  readonly targetId: string;
  /** The offending part: the processor, the feature item (with its sign) or the feature name. */
  readonly part: string;
  readonly message: string;
  /**
   * Features read before the error, in ID order. LLVM fills its feature map as it goes and some callers use it
   * after a failure (the conflict check of compat.ts reproduces that).
   */
  readonly featuresBeforeError: ReadonlyMap<string, boolean>;
}

export interface TargetIdParts {
  readonly processor: string;
  /** Feature name → on (`+`) or off (`-`), in the order written. */
  readonly features: ReadonlyMap<string, boolean>;
}

export interface ParsedTargetId extends TargetIdParts {
  /** The canonical form: canonical processor, features sorted (`gfx908:sramecc+:xnack-`). */
  readonly canonical: string;
}

export type TargetIdResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: TargetIdError };

/** clang's diagnostic for a target ID that does not parse (err_drv_bad_target_id), word for word. */
export function formatClangInvalidTargetIdMessage(targetId: string): string {
  return `invalid target ID '${targetId}'; format is a processor name followed by an optional colon-delimited list of ` +
    `features followed by an enable/disable sign (e.g., 'gfx908:sramecc+:xnack-')`;
}

function fail<T>(code: TargetIdErrorCode, targetId: string, part: string, message: string,
  featuresBeforeError: ReadonlyMap<string, boolean> = new Map()): TargetIdResult<T> {
  return { ok: false, error: { code, targetId, part, message, featuresBeforeError } };
}

/**
 * `parseTargetIDWithFormatCheckingOnly`: split at the first ':', then each ':'-separated item must end in a sign.
 * "" is valid (empty processor, no features) because the host's entry has an empty target ID. A trailing ':' is
 * accepted (`gfx906:` and `gfx906:xnack+:` parse), an empty item elsewhere is not: LLVM reads the sign as the byte
 * before the empty item, which is the ':' separator.
 */
export function parseTargetIdFormat(targetId: string): TargetIdResult<TargetIdParts> {
  const features = new Map<string, boolean>();
  if (targetId === "") return { ok: true, value: { processor: "", features } };
  const colon = targetId.indexOf(":");
  const processor = colon === -1 ? targetId : targetId.substring(0, colon);
  if (processor === "") return fail("empty-processor", targetId, "", `target ID '${targetId}' has no processor name`);

  let rest = colon === -1 ? "" : targetId.substring(colon + 1);
  while (rest !== "") {
    const next = rest.indexOf(":");
    const item = next === -1 ? rest : rest.substring(0, next);
    const sign = item.at(-1);
    if (sign !== "+" && sign !== "-")
      return fail("missing-sign", targetId, item,
        `feature '${item}' in target ID '${targetId}' does not end in '+' or '-'`, features);
    const name = item.slice(0, -1);
    if (features.has(name))
      return fail("repeated-feature", targetId, name,
        `feature '${name}' appears more than once in target ID '${targetId}'`, features);
    features.set(name, sign === "+");
    rest = next === -1 ? "" : rest.substring(next + 1);
  }
  return { ok: true, value: { processor, features } };
}

function asTriple(triple: Triple | string, version: LlvmVersion): Triple {
  return typeof triple === "string" ? new Triple(triple, version) : triple;
}

/** The processor-table entry for an AMDGPU triple (amdgcn or r600); undefined when unknown or not AMDGPU. */
function resolveForTriple(triple: Triple, processor: string, version: LlvmVersion) {
  if (triple.isAMDGCN()) return resolveAmdgcnProcessor(processor, version);
  if (triple.isAMDGPU()) return resolveR600Processor(processor, version);
  return undefined;
}

/**
 * `getCanonicalProcessorName` as `getProcessorFromTargetID` uses it: for AMDGPU triples the table's canonical
 * name ("" when unknown), for other triples the processor text unchanged.
 */
export function getProcessorFromTargetId(triple: Triple | string, targetId: string, version: LlvmVersion = 19): string {
  const tripleValue = asTriple(triple, version);
  const colon = targetId.indexOf(":");
  const processor = colon === -1 ? targetId : targetId.substring(0, colon);
  if (!tripleValue.isAMDGPU()) return processor;
  return resolveForTriple(tripleValue, processor, version)?.canonical ?? "";
}

/** `getAllPossibleTargetIDFeatures`: the features a processor allows, alphabetically; none off AMDGPU. */
export function getAllPossibleTargetIdFeatures(triple: Triple | string, processor: string, version: LlvmVersion = 19): string[] {
  const resolved = resolveForTriple(asTriple(triple, version), processor, version);
  return resolved === undefined ? [] : listProcessorFeatures(resolved.features);
}

/** `parseTargetID`: format check, canonical processor, then every feature must be allowed for it. */
export function parseTargetId(triple: Triple | string, targetId: string, version?: LlvmVersion): TargetIdResult<ParsedTargetId> {
  const tripleValue = asTriple(triple, version ?? 19);
  const llvmVersion = version ?? tripleValue.version;
  const format = parseTargetIdFormat(targetId);
  if (!format.ok) return format;
  const { processor: written, features } = format.value;

  let processor = written;
  let allowed: readonly string[] = [];
  if (tripleValue.isAMDGPU()) {
    const resolved = resolveForTriple(tripleValue, written, llvmVersion);
    if (resolved === undefined)
      return fail("unknown-processor", targetId, written,
        `unknown processor '${written}' in target ID '${targetId}' for triple '${tripleValue.str()}'`, features);
    processor = resolved.canonical;
    allowed = listProcessorFeatures(resolved.features);
  } else if (processor === "") {
    return fail("empty-processor", targetId, "", `target ID '${targetId}' has no processor name`, features);
  }

  for (const name of features.keys()) {
    if (!allowed.includes(name)) {
      const why = allowed.length === 0 ? "allows no features" : `allows only ${allowed.join(", ")}`;
      return fail("unsupported-feature", targetId, name,
        `feature '${name}' in target ID '${targetId}' is not supported: processor '${processor}' ${why}`, features);
    }
  }
  return { ok: true, value: { processor, features, canonical: formatCanonicalTargetId(processor, features) } };
}

/**
 * Orders strings as LLVM's StringRef comparison does (bytes of the UTF-8 encoding), which is code-point order.
 * Plain `<` on JS strings compares UTF-16 units and differs above U+FFFF.
 */
export function compareByteOrder(left: string, right: string): number {
  const leftPoints = Array.from(left, (char) => char.codePointAt(0)!);
  const rightPoints = Array.from(right, (char) => char.codePointAt(0)!);
  const shared = Math.min(leftPoints.length, rightPoints.length);
  for (let index = 0; index < shared; index++) {
    const difference = leftPoints[index]! - rightPoints[index]!;
    if (difference !== 0) return difference;
  }
  return leftPoints.length - rightPoints.length;
}

/** `getCanonicalTargetID`: processor, then `:name+`/`:name-` for each feature in byte order of the names. */
export function formatCanonicalTargetId(processor: string, features: ReadonlyMap<string, boolean>): string {
  const names = [...features.keys()].sort(compareByteOrder);
  return processor + names.map((name) => `:${name}${features.get(name) ? "+" : "-"}`).join("");
}
