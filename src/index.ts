/**
 * offload-kit: read, write and inspect LLVM GPU offloading files in Node and browsers.
 * This entry point is browser-safe; file I/O lives in "offload-kit/node".
 */
export { bundle, compressBundle, decompressBundle, decompressBundles, listBundleIds, unbundle } from "./bundler/api.js";
export type { BundleRequest, CompressOptions, DecompressOptions, UnbundleRequest } from "./bundler/api.js";
export {
  CCOB_HEADER_SIZE, CompressionMethod, formatHash, isCompressedBundle, parseCcobHeader, truncatedHash, walkCcobs, writeCcobHeader,
} from "./formats/ccob.js";
export type { CcobHeader, CcobMember, CcobVersion, CcobWalk } from "./formats/ccob.js";
export { loadBrowserCodecs } from "./compress/browser.js";
export { prune, replace } from "./prune/index.js";
export type { PruneOptions, PruneResult, ReplaceOptions, ReplaceResult } from "./prune/index.js";
export type { Codecs, Md5Hasher } from "./compress/codecs.js";
export { validateBundlerOptions } from "./bundler/options.js";
export type { BundlerJob, BundlerOptions } from "./bundler/options.js";
export { planUnbundle } from "./bundler/unbundle-plan.js";
export { readBundleIndex } from "./bundler/read.js";
export type { BundleIndex, IndexedEntry } from "./bundler/read.js";

export {
  BUNDLE_MAGIC, distinctEntries, isBinaryBundle, layoutBinaryBundle, parseBinaryBundle, readBinaryBundle, writeBinaryBundle,
} from "./formats/bundle.js";
export type { BinaryBundle, BinaryBundleRead, BundleEntry, BundleProblem } from "./formats/bundle.js";
export { detectTextComment, readTextBundle, textEndMarker, textStartMarker, writeTextBundle } from "./formats/text-bundle.js";
export type { TextBundle, TextBundleEntry } from "./formats/text-bundle.js";
export { FILE_TYPES, fileTypeInfo } from "./formats/file-types.js";
export type { FileType, FileTypeInfo } from "./formats/file-types.js";
export { scanBundles } from "./inspect/scan.js";
export type { CompressedBundleInfo, FoundBundle, FoundEntry, ScanOptions, ScanProblem, ScanReport } from "./inspect/scan.js";
export { imageTargetId, isOffloadSectionName, locate } from "./inspect/locate.js";
export { MAX_PACKAGE_DEPTH, memberDisplayPath, sniffPackage, walkPackage } from "./packages/walk.js";
export type { PackageFormat, PackageMember, PackageProblem, PackageWalk, WalkOptions } from "./packages/walk.js";
export { compressionOf, memorySpooler } from "./packages/decoders.js";
export type { Compression, Decoders, SpooledMember, Spooler } from "./packages/decoders.js";
export { flattenMemberPath } from "./packages/names.js";
export type { LocateOptions, LocatedBundle, LocatedOffloadBinaries, Location, SearchedRegion } from "./inspect/locate.js";
export { fileSizes, processorOf, totalSizes } from "./inspect/sizes.js";
export { GENERIC_PROCESSOR_FAMILIES, checkEntry, describeSettings, judgeEntries, parseGpu } from "./inspect/check.js";
export type { CheckReason, EntryVerdict, FileJudgement, GpuConfig, SettingCase, Verdict } from "./inspect/check.js";
export { locationJson } from "./inspect/location-json.js";
export type { BundleJson, EntryJson, ImageJson, LocationJson, OffloadRunJson } from "./inspect/location-json.js";
export type { BundleSizeRow, FileSizes, SizeRow, SizesTotal } from "./inspect/sizes.js";
export {
  ImageKind, OFFLOAD_BINARY_MAGIC_BYTES, OffloadKind19, OffloadKind22, getImageKind, getImageKindName, getOffloadKind,
  getOffloadKindName, isOffloadBinary, layoutOffloadBinary, parseOffloadBinaries, readImageBytes, readOffloadBinaries,
  writeOffloadBinary, writeOffloadBinaryMulti,
} from "./formats/offload-binary.js";
export type {
  Decompressor, OffloadBinaries, OffloadBinaryHeader, OffloadImage, OffloadingImageInfo, OffloadStringEntry,
} from "./formats/offload-binary.js";
export { collectOffloadImages } from "./packager/collect.js";
export type { CollectedImage, CollectedInput } from "./packager/collect.js";
export { parseImageArguments, packagerStringData } from "./packager/image-args.js";
export { scanOffloadBinaries } from "./inspect/scan.js";
export type { FoundOffloadBinaries, FoundOffloadImage } from "./inspect/scan.js";
export { objdumpOffloading } from "./inspect/objdump.js";

export { OffloadKitError, isOffloadKitError } from "./engine/errors.js";
export { createEngine, engine, engineKind, initEngine, setEngine } from "./engine/select.js";
export type { Engine, EngineKind } from "./engine/engine.js";
export { bytesSource, sliceSource } from "./engine/source.js";
export type { ByteSource } from "./engine/source.js";
export { PACKAGE_VERSION } from "./version.js";
