/**
 * The containers `prune`, `compress` and `decompress` edit, in the order they are recognised. Each entry
 * says how to recognise its container from the bytes and how to apply each operation; an operation
 * returns the very array it was given when it changes nothing. Adding a container is adding one entry.
 *
 * | container | prune, replace | compress / decompress |
 * |---|---|---|
 * | linked ELF (executable, shared library) | ./linked-elf.ts | ./linked-elf.ts (`.nv_fatbin`: ./nv-linked-elf.ts) |
 * | bundle file: binary, text, CCOB | ./bundle-file.ts | plain ⇄ CCOB |
 * | offload binaries (0x10FF10AD) | ./offload-binary.ts | refused |
 * | archive | each member by the member table below | each bundle member |
 * | ELF fat object (`__CLANG_OFFLOAD_BUNDLE__` sections) | ./fat-object.ts | unchanged, as -type=o -compress |
 * | ELF object with `.llvm.offloading` | ./offload-binary.ts | refused |
 * | CUDA object (`.nv_fatbin`, nvcc -c, `ld -r`) | ./nv-object.ts | ./nv-object.ts (LZ4 ⇄ plain entries) |
 * | linked ELF with an allocated `.llvm.offloading` (OpenMP) | ./linked-offloading.ts | refused / unchanged |
 * | ELF relocatable object with `.hip_fatbin` (`clang -x hip -c`, `ld -r`) | ./relocatable.ts | ./relocatable.ts |
 * | standalone NVIDIA fatbin (`nvcc -fatbin`) | ./nv-fatbin-file.ts | ./nv-fatbin-file.ts |
 * | rocm-kpack `.kpack` archive | src/kpack/prune.ts | refused |
 */
import { OffloadKitError } from "../engine/errors.js";
import type { Codecs } from "../compress/codecs.js";
import type { CcobVersion } from "../formats/ccob.js";
import { editArchive, isArchive } from "./archive.js";
import { bytesSource, readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import {
  compressBundleFile, decompressBundleFile, isBundleFile, planBinaryBundlePrune, planCompressBundleFile, planReplaceInBinaryBundle, pruneBundleFile,
  replaceInBundleFile, startsBinaryBundle,
} from "./bundle-file.js";
import { isFatObject, pruneFatObject, replaceInFatObject } from "./fat-object.js";
import { editLinkedElf, isLinkedElf, planLinkedElf } from "./linked-elf.js";
import type { LinkedElfOperation } from "./linked-elf.js";
import { hasLinkedOffloading, planLinkedOffloading } from "./linked-offloading.js";
import {
  hasOffloadingSection, isOffloadBinary, pruneOffloadBlob, pruneOffloadingSections, replaceInOffloadBlob, replaceInOffloadingSections,
} from "./offload-binary.js";
import { isNvObject, pruneNvObject, transformNvObject } from "./nv-object.js";
import { isNvFatbinFile, pruneNvFatbinFile, transformNvFatbinFile } from "./nv-fatbin-file.js";
import { placeText } from "./outcome.js";
import { editHipFatbinObject, isHipFatbinObject } from "./relocatable.js";
import type { PruneContext } from "./outcome.js";
import { materialize, planOf } from "./plan.js";
import type { OutputPlan } from "./plan.js";
import { pickBundle } from "./swap.js";
import { isKpackArchive } from "../formats/kpack.js";
import { pruneKpackArchive } from "../kpack/prune.js";
import type { ReplaceContext } from "./swap.js";

export interface CompressContext {
  /** compress: the CCOB version (default 2) and zstd level (default 3). */
  readonly version?: CcobVersion;
  readonly level?: number;
  readonly codecs: Codecs;
  readonly name: string;
  readonly notes: string[];
}

export interface Container {
  readonly name: string;
  /** Given the whole file, or (to choose a streaming planner) its first 64 bytes. */
  matches(bytes: Uint8Array): boolean;
  /**
   * Plans the edit straight from the source, without reading it whole: a plan, "unchanged", or undefined
   * when this input must be read whole after all (the operations below then run).
   */
  planPrune?(source: ByteSource, ctx: PruneContext, where: string): OutputPlan | "unchanged" | undefined;
  planCompress?(source: ByteSource, ctx: CompressContext, where: string): OutputPlan | "unchanged" | undefined;
  planDecompress?(source: ByteSource, ctx: CompressContext, where: string): OutputPlan | "unchanged" | undefined;
  planReplace?(source: ByteSource, ctx: ReplaceContext, where: string): OutputPlan | "unchanged" | undefined;
  prune(bytes: Uint8Array, ctx: PruneContext, where: string): Uint8Array;
  /** Swaps `ctx.entry`'s code object in the bundles `--bundle` picks, recording each place in `ctx.replaced`. */
  replace(bytes: Uint8Array, ctx: ReplaceContext, where: string): Uint8Array;
  compress(bytes: Uint8Array, ctx: CompressContext, where: string): Uint8Array;
  decompress(bytes: Uint8Array, ctx: CompressContext, where: string): Uint8Array;
}

function refuse(container: string, operation: string) {
  return (_bytes: Uint8Array, ctx: { name: string }, where: string): Uint8Array => {
    throw new OffloadKitError("UNSUPPORTED_CONTAINER", `${placeText(ctx.name, where)}: ${operation} is not supported for ${container}`, { offset: 0 });
  };
}

const bundleFile: Container = {
  name: "bundle",
  matches: isBundleFile,
  prune: (bytes, ctx, where) => pruneBundleFile(bytes, ctx, where),
  planPrune: (source, ctx, where) => (startsBinaryBundle(source) ? planBinaryBundlePrune(source, ctx, where) ?? "unchanged" : undefined),
  planCompress: (source, ctx, where) => planCompressBundleFile(source, ctx, placeText(ctx.name, where)) ?? "unchanged",
  planReplace: (source, ctx, where) => {
    if (!startsBinaryBundle(source)) return undefined;
    return pickBundle(ctx, where) ? planReplaceInBinaryBundle(source, ctx, where) ?? "unchanged" : "unchanged";
  },
  replace: (bytes, ctx, where) => replaceInBundleFile(bytes, ctx, where),
  compress: (bytes, ctx, where) => compressBundleFile(bytes, { version: ctx.version, level: ctx.level, codecs: ctx.codecs }, placeText(ctx.name, where)) ?? bytes,
  decompress: (bytes, ctx, where) => decompressBundleFile(bytes, ctx.codecs, placeText(ctx.name, where)) ?? bytes,
};

const offloadBinaries: Container = {
  name: "offload binary",
  matches: isOffloadBinary,
  prune: (bytes, ctx, where) => pruneOffloadBlob(bytes, ctx, where),
  replace: (bytes, ctx, where) => replaceInOffloadBlob(bytes, ctx, where),
  compress: refuse("offload binaries", "compressing"),
  decompress: (bytes) => bytes,
};

const fatObject: Container = {
  name: "fat object",
  matches: isFatObject,
  prune: (bytes, ctx, where) => pruneFatObject(bytes, ctx, where),
  replace: (bytes, ctx, where) => replaceInFatObject(bytes, ctx, where),
  // clang-offload-bundler -type=o -compress writes the same object as without -compress (observed with 19).
  compress: (bytes, ctx, where) => {
    ctx.notes.push(`${placeText(ctx.name, where)}: a fat object's sections stay uncompressed (clang-offload-bundler -type=o ignores -compress)`);
    return bytes;
  },
  decompress: (bytes) => bytes,
};

const offloadingObject: Container = {
  name: "object with .llvm.offloading",
  matches: hasOffloadingSection,
  prune: (bytes, ctx, where) => pruneOffloadingSections(bytes, ctx, where),
  replace: (bytes, ctx, where) => replaceInOffloadingSections(bytes, ctx, where),
  compress: refuse("objects with .llvm.offloading", "compressing"),
  decompress: (bytes) => bytes,
};

const nvObject: Container = {
  name: "CUDA object",
  matches: isNvObject,
  prune: (bytes, ctx, where) => pruneNvObject(bytes, ctx, where),
  // Nothing in a CUDA object is an offload bundle entry `replace` could name.
  replace: (bytes) => bytes,
  compress: (bytes, ctx, where) => transformNvObject("compress", bytes, ctx, where),
  decompress: (bytes, ctx, where) => transformNvObject("decompress", bytes, ctx, where),
};

/** A standalone NVIDIA fatbin (`nvcc -fatbin`): its containers back to back (./nv-fatbin-file.ts). */
const nvFatbinFile: Container = {
  name: "NVIDIA fatbin",
  matches: isNvFatbinFile,
  prune: (bytes, ctx, where) => pruneNvFatbinFile(bytes, ctx, where),
  replace: (bytes) => bytes,
  compress: (bytes, ctx, where) => transformNvFatbinFile("compress", bytes, ctx, where),
  decompress: (bytes, ctx, where) => transformNvFatbinFile("decompress", bytes, ctx, where),
};

/**
 * Objects with `.hip_fatbin`; an `ld -r` of mixed objects may also hold bundle sections (old-driver
 * -fgpu-rdc) or `.llvm.offloading` (new-driver -fgpu-rdc), edited after it by their own containers.
 */
function thenOthers(operation: "prune" | "replace", bytes: Uint8Array, ctx: PruneContext & ReplaceContext, where: string): Uint8Array {
  const edited = editHipFatbinObject(operation, bytes, ctx, where);
  return [fatObject, offloadingObject].reduce((out, c) => (c.matches(out) ? c[operation](out, ctx, where) : out), edited);
}

const hipFatbinObject: Container = {
  name: "object with .hip_fatbin",
  matches: isHipFatbinObject,
  prune: (bytes, ctx, where) => thenOthers("prune", bytes, ctx as PruneContext & ReplaceContext, where),
  replace: (bytes, ctx, where) => thenOthers("replace", bytes, ctx as PruneContext & ReplaceContext, where),
  // Offload binaries beside it stay as they are (they have no compressed form clang 22 reads).
  compress: (bytes, ctx, where) => editHipFatbinObject("compress", bytes, ctx, where),
  decompress: (bytes, ctx, where) => editHipFatbinObject("decompress", bytes, ctx, where),
};

/** What an archive member can be; a member that is none of these stays as it is. */
const MEMBER_CONTAINERS: readonly Container[] = [bundleFile, offloadBinaries, hipFatbinObject, fatObject, offloadingObject, nvObject];

function memberContainer(bytes: Uint8Array): Container | undefined {
  return MEMBER_CONTAINERS.find((c) => c.matches(bytes));
}

/** Members whose bundles compress and decompress: bundle files, objects with `.hip_fatbin`, CUDA objects. */
function compressibleMember(bytes: Uint8Array): Container | undefined {
  return [bundleFile, hipFatbinObject, nvObject].find((c) => c.matches(bytes));
}

const archive: Container = {
  name: "archive",
  matches: isArchive,
  prune: (bytes, ctx) => editArchive(bytes, ctx.name, (data, where) => memberContainer(data)?.prune(data, ctx, where) ?? data),
  replace: (bytes, ctx) => editArchive(bytes, ctx.name, (data, where) => memberContainer(data)?.replace(data, ctx, where) ?? data),
  compress: (bytes, ctx) => editArchive(bytes, ctx.name, (data, where) => (compressibleMember(data)?.compress(data, ctx, where) ?? data)),
  decompress: (bytes, ctx) => editArchive(bytes, ctx.name, (data, where) => (compressibleMember(data)?.decompress(data, ctx, where) ?? data)),
};

/** A linked file's images are in `.hip_fatbin` (./linked-elf.ts) or, without one, in `.llvm.offloading` (./linked-offloading.ts). */
function planLinked(operation: LinkedElfOperation, source: ByteSource, ctx: PruneContext | CompressContext | ReplaceContext, where: string): OutputPlan | "unchanged" {
  if (hasLinkedOffloading(source)) return planLinkedOffloading(operation, source, ctx as PruneContext | ReplaceContext, where);
  return planLinkedElf(operation, source, ctx as PruneContext, where);
}

function editLinked(operation: LinkedElfOperation, bytes: Uint8Array, ctx: PruneContext | CompressContext | ReplaceContext, where: string): Uint8Array {
  const source = bytesSource(bytes);
  if (!hasLinkedOffloading(source)) return editLinkedElf(operation, bytes, ctx as PruneContext, where);
  const plan = planLinkedOffloading(operation, source, ctx as PruneContext | ReplaceContext, where);
  return plan === "unchanged" ? bytes : materialize(plan, source, ctx.codecs);
}

const linkedElf: Container = {
  name: "linked ELF",
  matches: isLinkedElf,
  planPrune: (source, ctx, where) => planLinked("prune", source, ctx, where),
  planCompress: (source, ctx, where) => planLinked("compress", source, ctx, where),
  planDecompress: (source, ctx, where) => planLinked("decompress", source, ctx, where),
  planReplace: (source, ctx, where) => planLinked("replace", source, ctx, where),
  replace: (bytes, ctx, where) => editLinked("replace", bytes, ctx, where),
  prune: (bytes, ctx, where) => editLinked("prune", bytes, ctx, where),
  compress: (bytes, ctx, where) => editLinked("compress", bytes, ctx, where),
  decompress: (bytes, ctx, where) => editLinked("decompress", bytes, ctx, where),
};

/** A rocm-kpack `.kpack` archive: its code objects for dropped GPUs leave it (src/kpack/prune.ts). */
const kpackArchive: Container = {
  name: "kpack archive",
  matches: isKpackArchive,
  prune: (bytes, ctx, where) => pruneKpackArchive(bytes, ctx, where),
  replace: refuse("kpack archives", "replacing"),
  compress: refuse("kpack archives", "compressing"),
  decompress: (bytes) => bytes,
};

/** Every container, in the order they are tried. */
export const CONTAINERS: readonly Container[] = [linkedElf, bundleFile, offloadBinaries, archive, hipFatbinObject, fatObject, offloadingObject, nvObject, nvFatbinFile, kpackArchive];

/** The container of a whole file; an error naming the file when it is none of them. */
export function containerOf(bytes: Uint8Array, name: string): Container {
  const found = CONTAINERS.find((c) => c.matches(bytes));
  if (found === undefined) {
    throw new OffloadKitError("NO_OFFLOAD_CONTENT",
      `${name}: holds nothing offload-kit can edit (not an offload bundle, compressed bundle, offload binary, archive, ELF fat object, ELF object with .llvm.offloading or relocatable object with .hip_fatbin)`,
      { offset: 0, field: "magic" });
  }
  return found;
}

const HEAD_SIZE = 64;

/**
 * The container prune would take `source` for (its name, as PlannedEdit.container gives it), chosen as
 * planContainerEdit chooses it: by the first bytes, else by the whole input; undefined when it is none of them.
 */
export function editableContainerOf(source: ByteSource): string | undefined {
  const head = readExact(source, 0, Math.min(source.size, HEAD_SIZE));
  const found = CONTAINERS.find((c) => c.matches(head));
  if (found !== undefined) return found.name;
  const bytes = source.bytes ?? readExact(source, 0, source.size);
  return CONTAINERS.find((c) => c.matches(bytes))?.name;
}

/**
 * Runs `operation` on the container of `source`: through its planner when it has one for this input
 * (reading only what it needs), else over the whole bytes.
 */
export function planContainerEdit<C extends { readonly name: string }>(
  source: ByteSource,
  ctx: C,
  planner: (container: Container) => ((source: ByteSource, ctx: C, where: string) => OutputPlan | "unchanged" | undefined) | undefined,
  operation: (container: Container, bytes: Uint8Array, ctx: C) => Uint8Array,
): { container: string; plan: OutputPlan | undefined } {
  const head = readExact(source, 0, Math.min(source.size, HEAD_SIZE));
  const streaming = CONTAINERS.find((c) => c.matches(head));
  const plan = streaming === undefined ? undefined : planner(streaming)?.(source, ctx, "");
  if (plan !== undefined) return { container: streaming!.name, plan: plan === "unchanged" ? undefined : plan };
  const bytes = source.bytes ?? readExact(source, 0, source.size);
  const container = containerOf(bytes, ctx.name);
  const output = operation(container, bytes, ctx);
  return { container: container.name, plan: output === bytes ? undefined : planOf([{ bytes: output }]) };
}
