/** offload-kit's Node layer: file-backed sources, atomic outputs, bundler jobs on files, batches. */
export { FileSource, withFile } from "./file-source.js";
export { OutputFile, withOutputs } from "./output.js";
export { bundleFiles, detectBundleType, listBundle, unbundleFile, unbundleToFiles } from "./bundler.js";
export type { UnbundleOptions, UnbundleResult } from "./bundler.js";
export { outputFileName, unbundleBatch } from "./batch.js";
export type { BatchFileResult, BatchOptions, BatchOutput } from "./batch.js";
export { decompressMember, forEachDecompressed, openDecompressed } from "./decompress.js";
export type { DecompressOptions, DecompressedInput, VerboseSink } from "./decompress.js";
export { nodeCodecs } from "./codecs.js";
export type { BundleOptions } from "./bundler.js";
export { extractImages, packageImages } from "./packager.js";
export type { ExtractOptions, ExtractedOutput, PackagerOptions } from "./packager.js";
export { wrapFiles } from "./wrapper.js";
export type { WrapFilesOptions } from "./wrapper.js";
export { extractFile } from "./extract.js";
export type { ExtractAllOptions, ExtractFileResult, ExtractedOutput as ExtractedFileOutput } from "./extract.js";
