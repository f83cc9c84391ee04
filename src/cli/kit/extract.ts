/**
 * `offload-kit extract FILE... [--image=<filter>]... [--out-dir=DIR] [--archive] [--json]`: the images of
 * offload binaries (raw, in ELF objects' `.llvm.offloading` sections, in archives) written to files, many
 * inputs in one process. Filters and names are clang-offload-packager's (src/node/packager.ts): without a
 * filter every image is written, to `DIR/<input stem>-<triple>-<arch>.<n>.<ext>`; a filter with `file=`
 * writes its last match there (or all of them, as an archive, with --archive).
 */
import { mkdirSync } from "node:fs";
import { isOffloadKitError } from "../../engine/errors.js";
import { byteStringToUnicode, utf8ToByteString } from "../../formats/bytes.js";
import { getImageKindName } from "../../formats/offload-binary.js";
import { codecDecompressor } from "../../node/packager-codecs.js";
import { extractImages } from "../../node/packager.js";
import type { ExtractedOutput } from "../../node/packager.js";
import { flagValue, listValue, stringValue } from "../args.js";
import { printError, printWarning, runGuarded } from "../io.js";
import type { Subcommand } from "./common.js";
import { FILES_OPTION, JSON_OPTION, KIT_CATEGORY as category, VERSION_TEXT, usageError } from "./common.js";

function outputJson(output: ExtractedOutput): unknown {
  return {
    path: output.path,
    archive: output.archive,
    images: output.images.map((image) => ({
      index: image.index,
      triple: byteStringToUnicode(image.triple),
      arch: byteStringToUnicode(image.arch),
      kind: getImageKindName(image.imageKind),
      size: image.imageSize,
    })),
  };
}

export const extract: Subcommand = {
  summary: "Extract the images of offload binaries (raw, in ELF objects, in archives): [--image=<key>=<value>,...]... [--out-dir=DIR] [--archive] [--json].",
  spec: () => ({
    overview: "offload-kit extract: write the images of offload binaries to files\n",
    options: [
      FILES_OPTION,
      {
        name: "image",
        kind: "string",
        list: true,
        valueName: "<key>=<value>,...",
        description: "Images to extract, as clang-offload-packager filters them (default: all)",
        category,
      },
      { name: "out-dir", kind: "string", valueName: "dir", description: "Directory for generated names (created if missing; default: .)", category },
      { name: "archive", kind: "flag", description: "Write each filter's matches to a static archive at its file=", category },
      JSON_OPTION,
    ],
    version: VERSION_TEXT,
  }),
  run(values, { name, io }) {
    const files = listValue(values, "files");
    if (files.length === 0) return usageError(io, name, "no input files");
    const filters = listValue(values, "image").map(utf8ToByteString);
    const outDir = stringValue(values, "out-dir") || undefined;
    const json = flagValue(values, "json");
    const archive = flagValue(values, "archive");
    return runGuarded(io, name, () => {
      if (outDir !== undefined) mkdirSync(outDir, { recursive: true });
      const decompress = codecDecompressor();
      const results: unknown[] = [];
      let status = 0;
      for (const input of files) {
        try {
          const written = extractImages(input, filters, {
            archive, outDir, everything: true, decompress, warn: (text) => printWarning(io, name, `${input}: ${text}`),
          });
          if (json) results.push({ input, outputs: written.map(outputJson) });
          else for (const output of written) io.stdout(`${input}: ${output.images.length} image${output.images.length === 1 ? "" : "s"} -> ${output.path}\n`);
        } catch (e) {
          if (!isOffloadKitError(e)) throw e;
          status = 1;
          if (json) results.push({ input, error: { code: e.code, message: e.message } });
          else printError(io, name, `${input}: ${e.message}`);
        }
      }
      if (json) io.stdout(`${JSON.stringify({ results }, null, 2)}\n`);
      return status;
    });
  },
};
