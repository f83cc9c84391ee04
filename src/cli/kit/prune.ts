/**
 * `offload-kit prune --keep=GPU,... | --drop=GPU,... FILE... (-o OUT | --out-dir=DIR | --in-place) [--allow-empty]
 * [--drop-ptx] [--dry-run] [--json]`: keeps the code objects the listed GPUs would load (or drops them), in bundle
 * files, compressed bundles, archives, fat objects and offload binaries, and NVIDIA fatbins (`sm_NN`) in CUDA
 * executables, libraries, objects and archives (src/prune/).
 */
import { byteStringToUnicode } from "../../formats/bytes.js";
import { loadNodeCodecs } from "../../compress/node/codecs.js";
import { OffloadKitError } from "../../engine/errors.js";
import { parseSelection, planPrune, selectionText } from "../../prune/index.js";
import type { PlannedPrune, Selection } from "../../prune/index.js";
import { editFiles } from "../../prune/node.js";
import type { FileEdit } from "../../prune/node.js";
import { flagValue, listValue } from "../args.js";
import { printError, printWarning, runGuarded } from "../io.js";
import type { CliIO } from "../io.js";
import { describeNativeGpu, findNativeGpus, noNativeGpuMessage } from "../../node/native-gpus.js";
import type { NativeGpuSearch } from "../../node/native-gpus.js";
import type { Subcommand } from "./common.js";
import { FILES_OPTION, JSON_OPTION, KIT_CATEGORY as category, VERSION_TEXT, usageError } from "./common.js";
import { LEVEL_OPTION, OUTPUT_OPTIONS, editJson, editOptions, sizeLine } from "./outputs.js";

/** Across all inputs, the listed GPUs that would load no entry; when none loads anything, the selection matched nothing. */
function unmatchedGpus(selection: Selection, edits: readonly FileEdit<PlannedPrune>[]): string[] {
  const matched = new Set(edits.flatMap((e) => e.planned?.entries.flatMap((o) => o.matched) ?? []));
  return selection.gpus.map((g) => g.text).filter((text) => !matched.has(text));
}

function entryLines(result: PlannedPrune, dryRun: boolean): string {
  const width = Math.max(0, ...result.entries.map((e) => byteStringToUnicode(e.id).length));
  return result.entries.map((e) => {
    const verb = e.kept ? (e.host ? "host" : "kept") : dryRun ? "would drop" : "dropped";
    const where = e.where === "" ? "" : `  (${byteStringToUnicode(e.where)})`;
    return `  ${verb.padEnd(10)} ${byteStringToUnicode(e.id).padEnd(width)} ${String(e.size).padStart(12)} bytes${where}\n`;
  }).join("");
}

/** `native` in the list: this machine's GPUs (src/node/native-gpus.ts), looked for once. */
function resolveNative(list: readonly string[], env: NodeJS.ProcessEnv): NativeGpuSearch | undefined {
  return list.some((g) => g.trim() === "native") ? findNativeGpus(env) : undefined;
}

function printNote(io: CliIO, name: string, message: string): void {
  io.stderr(`${name}: note: ${message}\n`);
}

export const prune: Subcommand = {
  summary: "Keep only the code objects some GPUs load: --keep=GPU,... | --drop=GPU,... FILE... (-o OUT | --out-dir=DIR | --in-place) [--dry-run] [--json].",
  spec: () => ({
    overview: "offload-kit prune: keep the code objects the listed GPUs would load (--keep), or drop them (--drop)\n",
    options: [
      FILES_OPTION,
      { name: "keep", kind: "string", list: true, commaSeparated: true, valueName: "gpu", description: "GPUs to keep code for (gfx90a means either xnack/sramecc setting; gfx1100 also keeps gfx11-generic; native: this machine's)", category },
      { name: "drop", kind: "string", list: true, commaSeparated: true, valueName: "gpu", description: "GPUs whose code goes (the inverse of --keep)", category },
      ...OUTPUT_OPTIONS,
      { name: "allow-empty", kind: "flag", description: "Write a bundle that keeps no device code instead of failing", category },
      { name: "drop-ptx", kind: "flag", description: "NVIDIA fatbins: drop the PTX the listed GPUs could JIT-compile too (kept by default)", category },
      LEVEL_OPTION("Re-encode compressed bundles at this level (default: the level they were written at)"),
      JSON_OPTION,
    ],
    version: VERSION_TEXT,
  }),
  async run(values, { name, io }) {
    const files = listValue(values, "files");
    const keep = listValue(values, "keep");
    const drop = listValue(values, "drop");
    if (files.length === 0) return usageError(io, name, "no input files");
    if ((keep.length > 0) === (drop.length > 0)) return usageError(io, name, "give exactly one of --keep=GPU,... and --drop=GPU,...");
    const options = editOptions(values, io);
    if (typeof options === "string") return usageError(io, name, options);
    const mode = keep.length > 0 ? "keep" : "drop";
    const listed = keep.length > 0 ? keep : drop;
    // Looked for only once the command line is known to be good: it may run offload-arch or rocminfo.
    const native = resolveNative(listed, io.env);
    if (native !== undefined && native.gpus.length === 0) return usageError(io, name, noNativeGpuMessage(native, `--${mode}`));
    const { destination, level, json, dryRun, report } = options;
    const codecs = await loadNodeCodecs();
    return runGuarded(io, name, () => {
      const selection = parseSelection(mode, native === undefined ? listed : listed.flatMap((g) => (g.trim() === "native" ? native.gpus.map((n) => n.targetId) : [g])));
      if (native !== undefined) printNote(io, name, `--${mode}=native: ${native.gpus.map(describeNativeGpu).join(", ")}`);
      const warnings: string[] = [];
      const edits = editFiles(files, destination, codecs, (source, input) =>
        planPrune(source, { selection, allowEmpty: flagValue(values, "allow-empty"), dropPtx: flagValue(values, "drop-ptx"), codecs, name: input, level }), (done) => {
        if (done.length === 0) return;
        const unmatched = unmatchedGpus(selection, done);
        if (unmatched.length === selection.gpus.length) {
          throw new OffloadKitError("SELECTION_MATCHES_NOTHING",
            `${selectionText(selection)} matches no entry in ${files.length === 1 ? files[0] : `any of the ${files.length} inputs`}; nothing ${dryRun ? "would be" : "was"} written`, { field: `--${selection.mode}` });
        }
        for (const gpu of unmatched) warnings.push(`--${selection.mode}: no entry in the inputs is for ${gpu}`);
      });
      for (const warning of warnings) printWarning(io, name, warning);
      if (json) {
        report(`${JSON.stringify({
          selection: {
            mode: selection.mode, gpus: selection.gpus.map((g) => g.text),
            ...(native === undefined ? {} : { native: native.gpus.map((n) => ({ id: n.targetId, source: n.source, where: n.where, count: n.count })) }),
          },
          dryRun,
          files: edits.map((e) => ({
            ...editJson(e),
            ...(e.planned === undefined ? {} : {
              entries: e.planned.entries.map((o) => ({ where: byteStringToUnicode(o.where), id: byteStringToUnicode(o.id), size: o.size, kept: o.kept, host: o.host, matched: o.matched })),
              droppedBytes: e.planned.entries.filter((o) => !o.kept).reduce((n, o) => n + o.size, 0),
            }),
          })),
        }, null, 2)}\n`);
      } else {
        for (const e of edits) {
          if (e.error !== undefined) {
            printError(io, name, e.error.message);
            continue;
          }
          report(sizeLine(e, dryRun));
          report(entryLines(e.planned!, dryRun));
          for (const note of e.planned!.notes) report(`  note: ${note}\n`);
        }
      }
      return edits.some((e) => e.error !== undefined) ? 1 : 0;
    });
  },
};
