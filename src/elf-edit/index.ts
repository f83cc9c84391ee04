/**
 * Linked-ELF surgery on `.hip_fatbin` (browser-safe: everything here works over a ByteSource and
 * writes to a ByteSink; src/elf-edit/node.ts adds file I/O).
 */
export { EM_AARCH64, EM_X86_64, openLinkedElf } from "./elf64.js";
export type { LinkedElf, ProgramHeader, SectionHeader } from "./elf64.js";
export { HIP_FATBIN_SECTION, HIP_FATBIN_SEGMENT_SECTION, readHipFatbinLayout } from "./hip-fatbin.js";
export type { FatbinBundle, HipFatbinLayout, PointerSite } from "./hip-fatbin.js";
export { outputPieces, planHipFatbinRewrite, planHipFatbinRewriteOf, rewriteHipFatbin, writeRewrite } from "./rewrite.js";
export type { BundleMove, ByteSink, OutputPiece, PlanPiece, RewriteOptions, RewritePlan } from "./rewrite.js";
export { concatSources, keepBundleEntries, rebundleEntries } from "./compose.js";
export { NV_FATBIN_SECTION, NV_FATBIN_SEGMENT_SECTION, hasNvFatbin, readNvFatbinLayout } from "./nv-fatbin.js";
export type { NvFatbinLayout } from "./nv-fatbin.js";
