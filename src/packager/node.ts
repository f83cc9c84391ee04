/**
 * clang-offload-packager's two jobs on files, as LLVM 19 does them (ClangOffloadPackager.cpp), streaming
 * through the engine window and writing outputs atomically:
 *
 * - packaging: one version 1 offload binary per file of each `--image`, in command-line order, back to back
 *   in one output. Headers are laid out from the file sizes first, then each image is copied from its file,
 *   so no image is ever held whole (the native tool holds all of them, twice).
 * - extraction: every image of the input (raw binaries, ELF sections, archive members) matching each
 *   filter goes to `file=`, to a static archive at `file=` (`--archive`), or to a generated name in the
 *   current directory.
 *
 * Errors carry LLVM's texts. Differences, on purpose: outputs of one run are committed together or not at
 * all (the native tool keeps the files it wrote before an error); a generated name never leaves the current
 * directory ('/' in a triple or arch becomes '_').
 */
import { join } from "node:path";
import type { Engine } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import { engine as defaultEngine } from "../engine/select.js";
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { ARCHIVE_HEADER_SIZE, layoutArchive } from "../formats/archive.js";
import type { NewArchiveMember } from "../formats/archive.js";
import { isOffloadBinary, layoutOffloadBinary, layoutOffloadBinaryMulti, parseOffloadBinaries, readImageBytes } from "../formats/offload-binary.js";
import type { Decompressor, LlvmMajor, OffloadBinaryLayout, OffloadImage, OffloadingImageInfo } from "../formats/offload-binary.js";
import { archiveMemberSymbols } from "../formats/symbols.js";
import { collectOffloadImages, imageSource } from "./collect.js";
import type { CollectedImage } from "./collect.js";
import {
  extractedFileName, extractedFileName23, imageFiles, imageKindFor, imageOffloadKind, matchesFilter, packagerStringData, parseImageArguments,
} from "./image-args.js";
import { copyRange } from "../node/copy.js";
import { strerror } from "../node/errors.js";
import { FileSource } from "../node/file-source.js";
import { withOutputs } from "../node/output.js";
import type { OutputFile } from "../node/output.js";

export interface PackagerOptions {
  engine?: Engine;
  /** Which tool's rules: kind numbering (HIP is 3 in 19, 4 in 22) and required keys. Default 19. */
  llvm?: LlvmMajor;
  /** Prints a warning the way the native tool does (`<argv0>: warning: <text>`). */
  warn?: (text: string) => void;
  /** Inflates compressed (v3) binaries found while extracting. */
  decompress?: Decompressor;
  /** Newest offload binary version extraction reads: 1 as LLVM 19, 3 (current upstream) by default. */
  maxVersion?: 1 | 2 | 3;
  /**
   * What packaging writes: 1 (default), one version 1 binary per image back to back, as LLVM 19 and 22 do; or 2,
   * one version 2 binary holding every image, as LLVM 23's llvm-offload-binary does (llvm PR #197456).
   */
  writeVersion?: 1 | 2;
  /**
   * LLVM 23's llvm-offload-binary rules besides the format (PRs #180269, #184774): `.spv` files are IMG_SPIRV;
   * extraction without `file=` names images `<stem>-<triple>[-<arch>].<n>.<ext>`, says `Extracted: <name>` for
   * each (through `announce`), and extracts the images of an image that is itself an offload binary instead
   * of the image; with no filter at all, every image is extracted so.
   */
  llvm23?: boolean;
  /** Prints a line on standard output (LLVM 23's `Extracted: <name>`). */
  announce?: (text: string) => void;
}

/**
 * An I/O error as LLVM's `errorCodeToError(EC)` prints it: the strerror text alone, without the path
 * (MemoryBuffer::getFileOrSTDIN for image files, FileOutputBuffer::create for outputs).
 */
function bare(e: unknown): unknown {
  if (e instanceof OffloadKitError && e.cause !== undefined && (e.cause as NodeJS.ErrnoException).code !== undefined) {
    return new OffloadKitError(e.code, strerror(e.cause), { cause: e.cause });
  }
  return e;
}

/** The packager writes through LLVM's FileOutputBuffer: a new file renamed over the destination (mode 0666 less the umask). */
const FILE_OUTPUT_BUFFER = { replace: "rename" } as const;

interface PlannedImage {
  readonly source: FileSource;
  readonly info: OffloadingImageInfo;
}

/**
 * `clang-offload-packager -o <output> --image=...`: `images` are the --image values as byte strings.
 * No image writes an empty output, as natively.
 */
export function packageImages(images: readonly string[], output: string, options: PackagerOptions = {}): void {
  const engine = options.engine ?? defaultEngine();
  const planned: PlannedImage[] = [];
  try {
    for (const image of images) {
      const args = parseImageArguments(image);
      // 19 requires a triple; 22 (llvm-offload-binary) only the file, with its own wording (sic).
      if (options.llvm === 22 ? !args.has("file") : !args.has("triple") || !args.has("file")) {
        const text = options.llvm === 22 ? "'file' is a required image arguments" : "'file' and 'triple' are required image arguments";
        throw new OffloadKitError("PACKAGER_MISSING_KEYS", text);
      }
      for (const file of imageFiles(args)) {
        let source: FileSource;
        try {
          source = FileSource.open(file);
        } catch (e) {
          throw bare(e);
        }
        planned.push({ source, info: imageInfo(args, file, source, options.llvm ?? 19, options.llvm23 ?? false) });
      }
    }
    try {
      withOutputs((open) => {
        const out = open(output, FILE_OUTPUT_BUFFER);
        if (options.writeVersion === 2) {
          // LLVM 23: one binary, every image in it, laid out from the file sizes before any image is copied.
          const multi = layoutOffloadBinaryMulti(planned.map((p) => p.info), planned.map((p) => p.source.size), 2);
          out.write(multi.head);
          for (const { source } of planned) copyRange(engine, source, 0, source.size, out);
          out.writeZeros(multi.tailPadding);
          return;
        }
        for (const { source, info } of planned) {
          const layout: OffloadBinaryLayout = layoutOffloadBinary(info, source.size);
          out.write(layout.head);
          copyRange(engine, source, 0, source.size, out);
          out.writeZeros(layout.tailPadding);
        }
      });
    } catch (e) {
      throw bare(e);
    }
  } finally {
    for (const { source } of planned) source.close();
  }
}

function imageInfo(args: ReturnType<typeof parseImageArguments>, file: string, source: ByteSource, llvm: LlvmMajor, llvm23: boolean): OffloadingImageInfo {
  const head = readExact(source, 0, Math.min(4, source.size));
  return { imageKind: imageKindFor(file, head, llvm23), offloadKind: imageOffloadKind(args, llvm), strings: packagerStringData(args) };
}

/**
 * LLVM 23's `extractBinary`: an image that starts with the offload binary magic is read as offload binaries (v1 and
 * v2, back to back) and each of its images extracted the same way, depth first; any other image is written to its
 * generated name. `index` runs on over every image written.
 */
function extractNested(image: OffloadImage, input: string, index: { next: number }, emit: (name: string, image: OffloadImage) => void): void {
  const head = readExact(image.source, image.imageOffset, Math.min(4, image.imageSize));
  if (isOffloadBinary(head)) {
    const inner = parseOffloadBinaries(readImageBytes(image), { maxVersion: 2 });
    for (const nested of inner.images) extractNested(nested, input, index, emit);
    return;
  }
  emit(extractedFileName23(input, image, index.next++), image);
}

export interface ExtractOptions extends PackagerOptions {
  /** `--archive`: all matches of a filter go into one static archive at its `file=`. */
  archive?: boolean;
  /** Where generated names go (default: the current directory). `file=` paths are used as given. */
  outDir?: string;
  /** With no filters: extract every image, as if one filter matched them all (offload-kit extract). */
  everything?: boolean;
}

/** What one extraction wrote (or would have written), for reports. */
export interface ExtractedOutput {
  readonly path: string;
  readonly images: readonly CollectedImage[];
  readonly archive: boolean;
}

/** `--archive`: the images as one static archive, members named by their buffer identifiers, as the packager writes it. */
export function writeArchiveFile(out: OutputFile, engine: Engine, images: readonly CollectedImage[]): void {
  const members: NewArchiveMember[] = images.map((image) => {
    const symbols = archiveMemberSymbols(imageSource(image));
    return { name: image.identifier, size: image.imageSize, symbols: symbols.kind === "symbols" ? symbols.symbols : null };
  });
  const layout = layoutArchive(members);
  out.write(layout.head);
  images.forEach((image, i) => {
    out.write(layout.headers[i]!.subarray(0, ARCHIVE_HEADER_SIZE));
    copyRange(engine, image.source, image.imageOffset, image.imageSize, out);
    if (layout.padding[i]) out.write(Uint8Array.of(0x0a));
  });
}

/**
 * `clang-offload-packager <input> --image=<filter> [--image=...] [--archive]`. `filters` are byte strings;
 * generated names are relative to the current directory. Returns what was written.
 */
export function extractImages(input: string, filters: readonly string[], options: ExtractOptions = {}): ExtractedOutput[] {
  const engine = options.engine ?? defaultEngine();
  const llvm = options.llvm ?? 19;
  const source = FileSource.open(input);
  try {
    const { images } = collectOffloadImages(source, input, { engine, decompress: options.decompress, maxVersion: options.maxVersion });
    const written: ExtractedOutput[] = [];
    const announced: string[] = [];
    /** LLVM 23: an image to its generated name, the images of a nested offload binary to theirs. */
    const extract23 = (open: (path: string, options: typeof FILE_OUTPUT_BUFFER) => OutputFile, matched: readonly CollectedImage[]) => {
      const index = { next: 0 };
      for (const image of matched) {
        extractNested(image, input, index, (name, leaf) => {
          const path = options.outDir === undefined ? name : join(options.outDir, name);
          copyRange(engine, leaf.source, leaf.imageOffset, leaf.imageSize, open(path, FILE_OUTPUT_BUFFER));
          written.push({ path, images: [{ ...leaf, identifier: image.identifier }], archive: false });
          announced.push(`Extracted: ${name}\n`);
        });
      }
    };
    try {
      withOutputs((open) => {
        if (options.llvm23 && filters.length === 0) {
          extract23(open, images);
          return;
        }
        const all = filters.length === 0 && options.everything === true;
        for (const filter of all ? [""] : filters) {
          const args = parseImageArguments(filter);
          const matched = all ? [...images] : images.filter((image) => matchesFilter(args, image, llvm));
          if (matched.length === 0) continue;
          const file = args.get("file");
          if (options.archive) {
            if (file === undefined) throw new OffloadKitError("PACKAGER_ARCHIVE_NEEDS_FILE", "Image must have a 'file' argument.");
            writeArchiveFile(open(file, FILE_OUTPUT_BUFFER), engine, matched);
            written.push({ path: file, images: matched, archive: true });
          } else if (file !== undefined) {
            if (matched.length > 1) options.warn?.(`Multiple inputs match to a single file, '${file}'`);
            const last = matched[matched.length - 1]!;
            copyRange(engine, last.source, last.imageOffset, last.imageSize, open(file, FILE_OUTPUT_BUFFER));
            written.push({ path: file, images: [last], archive: false });
          } else if (options.llvm23) {
            extract23(open, matched);
          } else {
            matched.forEach((image, i) => {
              const name = extractedFileName(input, image, i);
              const path = options.outDir === undefined ? name : join(options.outDir, name);
              copyRange(engine, image.source, image.imageOffset, image.imageSize, open(path, FILE_OUTPUT_BUFFER));
              written.push({ path, images: [image], archive: false });
            });
          }
        }
      });
    } catch (e) {
      throw bare(e);
    }
    // Said once the outputs are in place (the native tool says each as it writes it; ours are written together).
    for (const line of announced) options.announce?.(line);
    return written;
  } finally {
    source.close();
  }
}
