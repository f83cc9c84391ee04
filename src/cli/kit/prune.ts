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
import type { FileEdit } from "../../prune/node.js";
import { decideEntry } from "../../prune/select.js";
import { editPrepared } from "../../trees/apply.js";
import { editTreePackages } from "../../trees/packages.js";
import { PROGRESS_OPTION, packageProgress } from "./package-progress.js";
import { prepareInputs } from "../../trees/plan.js";
import { flagValue, listValue } from "../args.js";
import { runGuardedAsync } from "./package-inputs.js";
import type { ByteSource } from "../../engine/source.js";
import { describeNativeGpu, findNativeGpus, noNativeGpuMessage } from "../../node/native-gpus.js";
import type { NativeGpuSearch } from "../../node/native-gpus.js";
import type { Subcommand } from "./common.js";
import { PATHS_OPTION, JSON_OPTION, KIT_CATEGORY as category, VERSION_TEXT, examplesHelp, usageError } from "./common.js";
import { EDIT_FOLDERS_HELP, LEVEL_OPTION, OUTPUT_OPTIONS, editOptions, editZipPackages, entryGpu, openMembers, printEditReport } from "./outputs.js";

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

export const prune: Subcommand = {
  summary: "Keep only the code objects some GPUs load: --keep=GPU,... | --drop=GPU,... FILE... (-o OUT | --out-dir=DIR | --in-place) [--dry-run] [--json].",
  spec: () => ({
    overview: `offload-kit prune: keep the code objects the listed GPUs would load (--keep), or drop them (--drop)\n\n${EDIT_FOLDERS_HELP}`,
    options: [
      PATHS_OPTION,
      { name: "keep", kind: "string", list: true, commaSeparated: true, valueName: "gpu", description: "GPUs to keep code for (gfx90a means either xnack/sramecc setting; gfx1100 also keeps gfx11-generic; native: this machine's)", category },
      { name: "drop", kind: "string", list: true, commaSeparated: true, valueName: "gpu", description: "GPUs whose code goes (the inverse of --keep)", category },
      ...OUTPUT_OPTIONS,
      PROGRESS_OPTION,
      { name: "allow-empty", kind: "flag", description: "Write a bundle that keeps no device code instead of failing", category },
      { name: "remove-files", kind: "flag", description: "In folders: also remove standalone code objects (.hsaco, Tensile .co) and per-arch library files (TensileLibrary_*_gfxN.dat) for dropped GPUs, listing each", category },
      { name: "drop-ptx", kind: "flag", description: "NVIDIA fatbins: drop the PTX the listed GPUs could JIT-compile too (kept by default)", category },
      LEVEL_OPTION("Re-encode compressed bundles at this level (default: the level they were written at)"),
      JSON_OPTION,
    ],
    version: VERSION_TEXT,
    epilogue: examplesHelp([
      { command: "offload-kit prune --keep=gfx90a -o app.gfx90a.hipfb examples/sample/app.hipfb", what: "Keep only the code a gfx90a loads (either xnack setting), into a new file" },
      { command: "offload-kit prune --drop=gfx906 --out-dir=out examples/sample", what: "Mirror the folder at out/sample without the gfx906 code (unchanged files hard-linked)" },
      { command: "offload-kit prune --keep=native --dry-run /opt/rocm/lib", what: "Say what keeping only this machine's GPUs would save over the folder; write nothing" },
      { command: "offload-kit prune --keep=gfx90a,gfx1100 --in-place lib/libfoo.so", what: "Edit the library in place (written beside it, renamed over it at the end)" },
    ]),
  }),
  async run(values, { name, io, isTTY }) {
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
    const { destination, level, dryRun } = options;
    const codecs = await loadNodeCodecs();
    return runGuardedAsync(io, name, async () => {
      const selection = parseSelection(mode, native === undefined ? listed : listed.flatMap((g) => (g.trim() === "native" ? native.gpus.map((n) => n.targetId) : [g])));
      const notes = native === undefined ? [] : [`--${mode}=native: ${native.gpus.map(describeNativeGpu).join(", ")}`];
      const warnings: string[] = [];
      const plan = (source: ByteSource, input: string) => planPrune(source, { selection, allowEmpty: flagValue(values, "allow-empty"), dropPtx: flagValue(values, "drop-ptx"), codecs, name: input, level });
      const check = (done: readonly FileEdit<PlannedPrune>[]) => {
        if (done.length === 0) return;
        const unmatched = unmatchedGpus(selection, done);
        if (unmatched.length === selection.gpus.length) {
          const what = done.length === 1 ? done[0]!.input : `any of the ${done.length} inputs`;
          throw new OffloadKitError("SELECTION_MATCHES_NOTHING",
            `${selectionText(selection)} matches no entry in ${what}; nothing ${dryRun ? "would be" : "was"} written`, { field: `--${selection.mode}` });
        }
        for (const gpu of unmatched) {
          const warning = `--${selection.mode}: no entry in the inputs is for ${gpu}`;
          if (!warnings.includes(warning)) warnings.push(warning);
        }
      };
      // Wheels and zips first: each is written whole, as a package of its kind (src/packages/node/edit-zip.ts).
      const shown = packageProgress(io, name, flagValue(values, "progress"), isTTY);
      const zipped = await editZipPackages(files, destination, { codecs, plan, check, progress: shown.progress, copy: options.copy }).finally(() => shown.finish());
      const members = await openMembers(zipped.rest);
      try {
        const prepared = prepareInputs(zipped.rest, destination);
        const result = zipped.rest.length === 0 ? { edits: [], trees: [] } : editPrepared(prepared, {
          codecs, dryRun, copy: options.copy, opened: members.opened, plan, check,
          ...(flagValue(values, "remove-files") ? { removeFiles: (id: string) => !decideEntry(selection, id).keep } : {}),
        });
        // Packages inside the folders (a wheel in a venv): each by its own writer (src/trees/packages.ts).
        const inTrees = await editTreePackages(prepared, result, dryRun, { codecs, plan, progress: shown.progress }).finally(() => shown.finish());
        return printEditReport(io, name, result, {
          ...options, warnings, notes, byGpu: true,
          head: {
            selection: {
              mode: selection.mode, gpus: selection.gpus.map((g) => g.text),
              ...(native === undefined ? {} : { native: native.gpus.map((n) => ({ id: n.targetId, source: n.source, where: n.where, count: n.count })) }),
            },
          },
          rows: (planned) => entryLines(planned, dryRun),
          fileJson: (planned) => ({
            entries: planned.entries.map((o) => ({ where: byteStringToUnicode(o.where), id: byteStringToUnicode(o.id), gpu: entryGpu(o), size: o.size, kept: o.kept, host: o.host, matched: o.matched })),
            droppedBytes: planned.entries.filter((o) => !o.kept).reduce((n, o) => n + o.size, 0),
          }),
        }, [...zipped.packages, ...inTrees]);
      } finally {
        members.close();
      }
    });
  },
};
