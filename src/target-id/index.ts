/**
 * Target IDs and bundle entry IDs (spec/target-id.md, spec/bundler.md §3): the public API of src/target-id.
 */

export {
  AMDGCN_PROCESSORS,
  R600_PROCESSORS,
  AMDGPU_MACH_PROCESSORS,
  isNvptxSmName,
  listProcessorFeatures,
  resolveAmdgcnProcessor,
  resolveR600Processor,
  type AmdgpuProcessor,
  type ProcessorFeatures,
  type ResolvedProcessor,
} from "./amdgpu.js";
export { OFFLOAD_ARCH_NAMES, isKnownOffloadArch } from "./offload-arch.js";
export {
  compareByteOrder,
  formatCanonicalTargetId,
  formatClangInvalidTargetIdMessage,
  getAllPossibleTargetIdFeatures,
  getProcessorFromTargetId,
  parseTargetId,
  parseTargetIdFormat,
  type ParsedTargetId,
  type TargetIdError,
  type TargetIdErrorCode,
  type TargetIdParts,
  type TargetIdResult,
} from "./parse.js";
export {
  OFFLOAD_KINDS,
  TARGET_FORMAT_MESSAGE,
  bundleIdString,
  checkOffloadBundleId,
  formatInvalidTargetMessage,
  getDeviceFileExtension,
  hasHostKind,
  isOffloadKindValid,
  isTripleValid,
  normaliseBundleId,
  parseOffloadTarget,
  type OffloadKind,
  type OffloadTargetInfo,
} from "./entry-id.js";
export {
  describeIncompatibility,
  explainCodeObjectCompatibility,
  explainTargetIdCompatibility,
  findConflictingTargets,
  formatConflictMessage,
  getConflictTargetIdCombination,
  isCodeObjectCompatible,
  isCompatibleTargetId,
  isOffloadKindCompatible,
  type BundleTargetConflict,
  type CompatibilityOptions,
  type CompatibilityVerdict,
  type ConflictOptions,
  type IncompatibilityReason,
} from "./compat.js";
export { Triple, type LlvmVersion } from "../llvm/triple.js";
