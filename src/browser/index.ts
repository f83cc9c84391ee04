/**
 * offload-kit/browser: reading Files in browsers. A Worker (OffloadKitWorker, src/browser/worker.ts) reads
 * each file slice by slice with the library's readers and reports what `offload-kit ls --json` and
 * `offload-kit sizes` report; BlobSource is the ByteSource it reads through; the check rules of
 * `offload-kit check` answer "will it run on my GPU" for each entry.
 */
export { BlobSource } from "./blob-source.js";
export { OffloadKitWorker, prunedBlob } from "./client.js";
export type { InspectRequestOptions, OffloadKitWorkerOptions } from "./client.js";
export { BROWSER_MAX_DECOMPRESSED, DecodedBundles, inspectSource, openCompressedInMemory, readEntry } from "./inspect.js";
export type { BrowserReadOptions, DecodeProgress, EntryRef, InspectOptions, InspectProgress, Inspection, OpenCompressedOptions } from "./inspect.js";
export type { ExtractStats, InspectResult, PackageMemberResult, PackageResult, PruneReply, PrunedPart, WorkerFailure } from "./protocol.js";
export { browserDecoders, inspectPackage, readPackageMember } from "./packages.js";
export type { PackageInspection, PackageMemberInspection } from "./packages.js";
export { serveWorker } from "./worker.js";
export type { WorkerScope } from "./worker.js";
export { locationJson } from "../inspect/location-json.js";
export type { BundleJson, EntryJson, ImageJson, LocationJson, OffloadRunJson } from "../inspect/location-json.js";
export { GENERIC_PROCESSOR_FAMILIES, checkEntry, describeSettings, judgeEntries, parseGpu } from "../inspect/check.js";
export type { CheckReason, EntryVerdict, FileJudgement, GpuConfig, SettingCase, Verdict } from "../inspect/check.js";
export { fileSizes, processorOf, totalSizes } from "../inspect/sizes.js";
export type { BundleSizeRow, FileSizes, SizeRow, SizesTotal } from "../inspect/sizes.js";
export { imageTargetId } from "../inspect/locate.js";
export { loadBrowserCodecs } from "../compress/browser.js";
export type { CodecSources } from "../compress/browser.js";
export { initEngine } from "../engine/select.js";
export type { DiffKernelLine, DiffSummary, KernelColumn, KernelQuery, KernelRow, KernelRows, KernelTableSummary } from "./kernel-tables.js";
