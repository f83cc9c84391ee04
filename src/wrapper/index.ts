/**
 * The offload wrapper as a library (browser-safe: nothing here imports node:*). `wrapImages` returns the
 * bitcode clang-offload-wrapper 14 or llvm-offload-wrapper 22 would write for the same images, byte for byte;
 * `wrapImagesText` the same module as LLVM assembly (.ll); `writeWrapper` streams the bitcode to a sink so an
 * image given as a random-access source (a file, in src/wrapper/node.ts) is never held whole.
 *
 * Flavours:
 * - `"clang-offload-wrapper-14"` (default): OpenMP, `llvm.global_dtors`, priority 1. Give every image an
 *   `arch` (a target ID) for the image-info variant of seed 004 (`__tgt_image_info`, `.offload_arch_list`,
 *   `__tgt_register_image_info` before `__tgt_register_lib`).
 * - `"llvm-offload-wrapper-22"`: `kind` "openmp" (default), "cuda" or "hip" (exactly one image).
 */
import { OffloadKitError } from "../engine/errors.js";
import { latin1Decode } from "../formats/bytes.js";
import type { ByteSink, PayloadSource } from "../llvm/bitcode/bitstream.js";
import { MAX_RECORD_ELEMENTS } from "../llvm/bitcode/bitstream.js";
import type { Module } from "../llvm/bitcode/ir.js";
import { printModule } from "../llvm/bitcode/text.js";
import { LLVM14, LLVM22 } from "../llvm/bitcode/versions.js";
import { writeBitcode, writeBitcodeToBytes } from "../llvm/bitcode/writer.js";
import { ArchType, Triple } from "../llvm/triple.js";
import { bytesPayload, prepareImages, recordElements } from "./images.js";
import type { OffloadKind22 } from "./offload22.js";
import { buildOffload22Module } from "./offload22.js";
import { buildOpenMP14Module } from "./openmp14.js";

export type WrapperFlavour = "clang-offload-wrapper-14" | "llvm-offload-wrapper-22";
export type { OffloadKind22 } from "./offload22.js";
export type { PayloadSource, ByteSink } from "../llvm/bitcode/bitstream.js";

export interface WrapperImage {
  /** The image's bytes, or a random-access source of them (`{ size, read(dest, position) }`). */
  readonly bytes: Uint8Array | PayloadSource;
  /** Its target ID (clang-offload-wrapper 14 only): selects the image-info variant. */
  readonly arch?: string;
  /** A name for error messages (the input file). */
  readonly name?: string;
}

export interface WrapImagesOptions {
  readonly flavour?: WrapperFlavour;
  /** The host triple the module is for. Required for 14; 22 defaults to `x86_64-pc-linux-gnu`. */
  readonly triple?: string;
  /** llvm-offload-wrapper 22's `--kind`. */
  readonly kind?: OffloadKind22;
  readonly images: readonly WrapperImage[];
}

/** llvm-offload-wrapper's `--triple` default: sys::getDefaultTargetTriple() of the Debian x86-64 build. */
export const DEFAULT_TRIPLE_22 = "x86_64-pc-linux-gnu";

function sourceOf(image: WrapperImage): PayloadSource {
  return image.bytes instanceof Uint8Array ? bytesPayload(image.bytes) : image.bytes;
}

/** Checks the options as the native tools do, before any image is read. */
export function checkWrapperOptions(options: WrapImagesOptions): void {
  const flavour = options.flavour ?? "clang-offload-wrapper-14";
  if (flavour === "clang-offload-wrapper-14") {
    const triple = options.triple;
    if (triple === undefined) throw new OffloadKitError("WRAPPER_TARGET", "for the --target option: must be specified at least once!");
    if (new Triple(triple, 14).arch === ArchType.UnknownArch) throw new OffloadKitError("WRAPPER_TARGET", `'${triple}': unsupported target triple`);
    const given = options.images.filter((image) => image.arch !== undefined).length;
    if (given !== 0 && given !== options.images.length) {
      throw new OffloadKitError(
        "WRAPPER_OFFLOAD_ARCH",
        `${given} --offload-arch value${given === 1 ? "" : "s"} for ${options.images.length} image${options.images.length === 1 ? "" : "s"}: give one before each image, or none`,
      );
    }
    return;
  }
  if (flavour !== "llvm-offload-wrapper-22") throw new OffloadKitError("WRAPPER_FLAVOUR", `unknown wrapper flavour '${String(flavour)}'`);
  const kind = options.kind ?? "openmp";
  if (kind !== "openmp" && kind !== "cuda" && kind !== "hip") throw new OffloadKitError("WRAPPER_KIND", `for the --kind option: Cannot find option named '${String(kind)}'!`);
  if (kind !== "openmp" && options.images.length > 1) {
    throw new OffloadKitError("WRAPPER_SINGLE_FATBIN", "CUDA / HIP offloading uses a single fatbinary or offload bundle");
  }
  if (kind !== "openmp" && options.images.length === 0) throw new OffloadKitError("WRAPPER_SINGLE_FATBIN", "CUDA / HIP offloading needs one fatbinary or offload bundle");
  if (options.images.some((image) => image.arch !== undefined)) {
    throw new OffloadKitError("WRAPPER_OFFLOAD_ARCH", "an image target ID (--offload-arch) belongs to the clang-offload-wrapper 14 flavour");
  }
}

/** A built wrapper module and the LLVM version whose bitcode and text it is written as. */
export interface WrapperModule {
  readonly module: Module;
  readonly version: 14 | 22;
}

/** Builds the wrapper module (validating the options as the native tools do, and the image sizes). */
export function buildWrapperModule(options: WrapImagesOptions): WrapperModule {
  checkWrapperOptions(options);
  const images = prepareImages(options.images.map(sourceOf));
  images.forEach((image, i) => {
    // One record holds the image's bytes (a C string's without its final NUL), and LLVM reads its element
    // count as 32 bits: a bigger image would give bitcode llvm-dis rejects (the native wrappers write it so).
    // An all-zero image is a zeroinitializer, with no record of its bytes, and has no such limit.
    if (recordElements(image) > MAX_RECORD_ELEMENTS) {
      const name = options.images[i]!.name ?? `image ${i}`;
      throw new OffloadKitError(
        "WRAPPER_IMAGE_TOO_LARGE",
        `'${name}': an image of ${image.source.size} bytes does not fit LLVM bitcode: the record holding its bytes has at most ${MAX_RECORD_ELEMENTS} elements (LLVM reads the count as 32 bits)`,
        { field: "image size" },
      );
    }
  });
  if ((options.flavour ?? "clang-offload-wrapper-14") === "clang-offload-wrapper-14") {
    const triple = options.triple!;
    const archs = options.images.map((image) => image.arch);
    const module = buildOpenMP14Module(images, {
      triple,
      nvptx: new Triple(triple, 14).isNVPTX(),
      offloadArchs: archs.every((arch) => arch !== undefined) && archs.length > 0 ? (archs as string[]) : undefined,
    });
    return { module, version: 14 };
  }
  const module = buildOffload22Module(images, {
    triple: options.triple ?? DEFAULT_TRIPLE_22,
    kind: options.kind ?? "openmp",
    names: options.images.map((image, i) => image.name ?? `image ${i}`),
  });
  return { module, version: 22 };
}

/** The wrapper module as bitcode, byte-identical to the native tool's. */
export function wrapImages(options: WrapImagesOptions): Uint8Array {
  const { module, version } = buildWrapperModule(options);
  return writeBitcodeToBytes(module, version === 14 ? LLVM14 : LLVM22);
}

/** Streams the bitcode to `sink` in chunks; returns its size in bytes. */
export function writeWrapper(options: WrapImagesOptions, sink: ByteSink): number {
  return writeWrapperModule(buildWrapperModule(options), sink);
}

/** Streams a built module's bitcode to `sink` (for a caller that builds it before opening its output). */
export function writeWrapperModule(built: WrapperModule, sink: ByteSink): number {
  return writeBitcode(built.module, built.version === 14 ? LLVM14 : LLVM22, sink);
}

/** The same module as LLVM assembly (.ll), in the syntax of that LLVM version (llvm-as accepts it). */
export function wrapImagesText(options: WrapImagesOptions): string {
  const { module, version } = buildWrapperModule(options);
  let text = "";
  printModule(module, version, { write: (bytes) => (text += latin1Decode(bytes)) });
  return text;
}

/** Streams the text form to `sink` (image bytes are escaped chunk by chunk). */
export function writeWrapperText(options: WrapImagesOptions, sink: ByteSink): void {
  writeWrapperModuleText(buildWrapperModule(options), sink);
}

/** Streams a built module's text form to `sink`. */
export function writeWrapperModuleText(built: WrapperModule, sink: ByteSink): void {
  printModule(built.module, built.version, sink);
}
