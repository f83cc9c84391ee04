/**
 * `offload-kit compress FILE... (-o OUT | --out-dir=DIR | --in-place) [--format=2|3] [--level=N] [--dry-run] [--json]`:
 * plain bundles become compressed bundles (CCOB) with LLVM's parameters, in bundle files and in archives'
 * members (src/prune/). Also the shared shell of `offload-kit decompress` (./decompress.ts).
 */
import { loadNodeCodecs } from "../../compress/node/codecs.js";
import { planTransform } from "../../prune/index.js";
import { compressAhead } from "../../prune/node.js";
import type { CompressedAheads } from "../../prune/node.js";
import type { ByteSource } from "../../engine/source.js";
import { editPrepared } from "../../trees/apply.js";
import { editTreePackages } from "../../trees/packages.js";
import { PROGRESS_OPTION, packageProgress } from "./package-progress.js";
import { prepareInputs } from "../../trees/plan.js";
import type { OptionSpec, OptionValue, ToolSpec } from "../args.js";
import { flagValue, listValue, stringValue } from "../args.js";
import { runGuardedAsync } from "./package-inputs.js";
import type { Subcommand, SubcommandContext } from "./common.js";
import type { Example } from "./common.js";
import { PATHS_OPTION, JSON_OPTION, KIT_CATEGORY as category, VERSION_TEXT, examplesHelp, usageError } from "./common.js";
import { EDIT_FOLDERS_HELP, LEVEL_OPTION, OUTPUT_OPTIONS, editOptions, editZipPackages, openMembers, printEditReport } from "./outputs.js";

export function transformSpec(overview: string, extra: readonly OptionSpec[], examples: readonly Example[]): ToolSpec {
  return { overview: `${overview}\n${EDIT_FOLDERS_HELP}`, options: [PATHS_OPTION, ...OUTPUT_OPTIONS, PROGRESS_OPTION, ...extra, JSON_OPTION], version: VERSION_TEXT, epilogue: examplesHelp(examples) };
}

export async function runTransform(operation: "compress" | "decompress", values: Record<string, OptionValue>, { name, io, isTTY }: SubcommandContext): Promise<number> {
  const files = listValue(values, "files");
  if (files.length === 0) return usageError(io, name, "no input files");
  const options = editOptions(values, io);
  if (typeof options === "string") return usageError(io, name, options);
  const { destination, level, dryRun } = options;
  let version: 2 | 3 | undefined;
  const format = stringValue(values, "format");
  if (format !== "") {
    if (format !== "2" && format !== "3") return usageError(io, name, `--format must be 2 (read by LLVM 19 and later) or 3 (LLVM 22 and later), not '${format}'`);
    version = format === "2" ? 2 : 3;
  }
  const codecs = await loadNodeCodecs();
  const plan = (source: ByteSource, input: string) => planTransform(source, { version, level, codecs, name: input }, operation);
  return runGuardedAsync(io, name, async () => {
    // Wheels and zips first: each is written whole, as a package of its kind (src/packages/node/edit-zip.ts).
    const shown = packageProgress(io, name, flagValue(values, "progress"), isTTY);
    const zipped = await editZipPackages(files, destination, { codecs, plan, progress: shown.progress, copy: options.copy }).finally(() => shown.finish());
    const members = await openMembers(zipped.rest);
    let ahead: CompressedAheads | undefined;
    try {
      const prepared = prepareInputs(zipped.rest, destination);
      // A library's fat binaries are compressed before its plan runs, on libuv's thread pool where node:zlib has zstd.
      ahead = operation === "compress" ? await compressAhead(prepared.inputs, prepared.destination, plan) : undefined;
      const result = zipped.rest.length === 0 ? { edits: [], trees: [] } : editPrepared(prepared, { codecs, dryRun, copy: options.copy, plan, ahead, opened: members.opened });
      // Packages inside the folders (a wheel in a venv): each by its own writer (src/trees/packages.ts).
      const inTrees = await editTreePackages(prepared, result, dryRun, { codecs, plan, progress: shown.progress }).finally(() => shown.finish());
      return printEditReport(io, name, result, { ...options, warnings: [], notes: [], byGpu: false, head: { operation } }, [...zipped.packages, ...inTrees]);
    } finally {
      ahead?.close();
      members.close();
    }
  });
}

export const compress: Subcommand = {
  summary: "Compress plain bundles into CCOBs (LLVM's parameters), plain NVIDIA fatbin entries into LZ4: FILE... (-o OUT | --out-dir=DIR | --in-place) [--format=2|3] [--level=N].",
  spec: () => transformSpec("offload-kit compress: turn plain offload bundles into compressed ones (CCOB), in bundle files and archives;\nNVIDIA fatbin entries (PTX, cubins) into LZ4 blocks, as nvcc --compress-mode=speed -Xfatbin -compress-all stores them (--format, --level do not apply)\n", [
    { name: "format", kind: "string", valueName: "2|3", description: "CCOB version: 2 (LLVM 19 reads it; the default) or 3 (LLVM 22)", category },
    LEVEL_OPTION("zstd level (default 3, LLVM's)"),
  ], [
    { command: "offload-kit compress -o app.ccob.hipfb examples/sample/app.hipfb", what: "Write a compressed copy of the bundle (CCOB version 2, zstd level 3, as clang does)" },
    { command: "offload-kit compress --dry-run examples/sample", what: "Say what compressing the folder's bundles would save; write nothing" },
    { command: "offload-kit compress --format=3 --level=19 --in-place lib/libfoo.so", what: "Compress the library's bundles in place, as LLVM 22 writes them, at zstd level 19" },
  ]),
  run: (values, context) => runTransform("compress", values, context),
};
