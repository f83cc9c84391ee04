/**
 * The offload wrapper on files: inputs are read through positioned reads (FileSource; stdin "-" is spooled to a
 * temporary file), the bitcode or text streams out through an atomic OutputFile in 1 MiB chunks. A 1 GiB image is
 * never in memory: it is read once to classify it (often only its last byte and a few more), once per pass of the
 * writer that needs its bytes, and shifted into place chunk by chunk.
 *
 * The order of the checks is the native tools': clang-offload-wrapper 14 checks the triple, reads every input,
 * then creates the output; llvm-offload-wrapper 22 reads the inputs, builds the module (the CUDA/HIP single-input
 * check), then opens the output; both build the module (each image classified, and refused if LLVM could not read
 * its record back: over 4 GiB) before the output is opened. A failure at any point leaves no output file.
 */
import { OffloadKitError } from "../engine/errors.js";
import type { OffloadKind22, WrapperFlavour, WrapImagesOptions } from "./index.js";
import { buildWrapperModule, checkWrapperOptions, writeWrapperModule, writeWrapperModuleText } from "./index.js";
import { strerror } from "../node/errors.js";
import { FileSource } from "../node/file-source.js";
import { OutputFile } from "../node/output.js";

export interface WrapFilesOptions {
  readonly flavour?: WrapperFlavour;
  readonly triple?: string;
  readonly kind?: OffloadKind22;
  /** Input paths ("-" is stdin), each with its target ID for the image-info variant. */
  readonly inputs: readonly { readonly path: string; readonly arch?: string }[];
  /**
   * "-" writes to stdout for clang-offload-wrapper 14 (raw_fd_ostream); for llvm-offload-wrapper 22 it is a
   * file named "-", as 22 writes it (FileOutputBuffer).
   */
  readonly output: string;
  /** Write LLVM assembly instead of bitcode. */
  readonly text?: boolean;
}

export function wrapFiles(options: WrapFilesOptions): number {
  const sources: FileSource[] = [];
  try {
    const flavour = options.flavour ?? "clang-offload-wrapper-14";
    const images = options.inputs.map((input) => ({ bytes: { size: 0, read: () => 0 }, arch: input.arch, name: input.path }));
    const base: Omit<WrapImagesOptions, "images"> = { flavour, triple: options.triple, kind: options.kind };
    if (flavour === "clang-offload-wrapper-14") checkWrapperOptions({ ...base, images });
    for (const input of options.inputs) sources.push(FileSource.open(input.path));
    const wrap: WrapImagesOptions = {
      ...base,
      images: sources.map((source, i) => ({ bytes: source, arch: options.inputs[i]!.arch, name: options.inputs[i]!.path })),
    };
    // Built (the options checked again with the images, the images classified, their sizes checked) before the
    // output is opened: an image LLVM cannot read back is refused with nothing created.
    const built = buildWrapperModule(wrap);
    // 22 reports errorCodeToError(EC): the strerror text alone; 14's createFileError names the file.
    if (options.output === "") throw new OffloadKitError("ENOENT", `${flavour === "llvm-offload-wrapper-22" ? "" : "'': "}No such file or directory`);
    let out: OutputFile;
    try {
      out = new OutputFile(options.output, { dashIsFile: flavour === "llvm-offload-wrapper-22" });
    } catch (e) {
      if (flavour === "llvm-offload-wrapper-22" && e instanceof OffloadKitError) throw new OffloadKitError(e.code, strerror(e.cause), { cause: e });
      throw e;
    }
    try {
      const sink = { write: (bytes: Uint8Array) => out.write(bytes) };
      if (options.text === true) writeWrapperModuleText(built, sink);
      else writeWrapperModule(built, sink);
      out.commit();
      return out.position;
    } catch (e) {
      out.discard();
      throw e;
    }
  } finally {
    for (const source of sources) source.close();
  }
}
