/**
 * `offload-kit unbundle -targets=T1,T2 --out-dir=DIR [-type=t] FILE...`: batch unbundling, one
 * process for many inputs, `DIR/<file name>-<target ID, ':' → '_'>` per target (src/bundler/node/batch.ts). An input
 * that is not a bundle but holds some (a shared library, say) fails as the bundler fails, and the message
 * says where its bundles are and that `offload-kit extract` writes them. One line per file written (-v: each
 * output); the run's total on stderr, as before.
 */
import { engineKind } from "../../engine/select.js";
import { byteStringToUnicode } from "../../formats/bytes.js";
import { locate } from "../../inspect/locate.js";
import { unbundleBatch } from "../../bundler/node/batch.js";
import { prepareOutputDirectory, removeDirectories } from "../../node/directories.js";
import { withFile } from "../../node/file-source.js";
import type { BatchFileResult } from "../../bundler/node/batch.js";
import { flagValue, listValue, numberValue, stringValue } from "../args.js";
import { printError, runGuarded } from "../io.js";
import { ProgressBar } from "../progress.js";
import type { Subcommand } from "./common.js";
import { FILES_OPTION, JSON_OPTION, KIT_CATEGORY as category, VERSION_TEXT, examplesHelp, inputMessage, plural, usageError, verboseOption } from "./common.js";
import { formatWithCommas } from "../../bundler/compressed.js";

/**
 * For an input that failed because it is not a bundle but holds some (a library's `.hip_fatbin`, a fat
 * object's sections, `.llvm.offloading`): where they are, and the command that writes them.
 */
function embeddedHint(input: string, targets: readonly string[]): string | undefined {
  let found;
  try {
    found = withFile(input, (source) => locate(source));
  } catch {
    return undefined;
  }
  const compressed = found.problems.filter((p) => p.code === "CCOB_NO_DECOMPRESSOR").length;
  const objects = found.bundles.filter((b) => b.format === "object").length;
  const bundles = found.bundles.length - objects + compressed;
  const images = found.offloadBinaries.reduce((n, r) => n + r.images.length, 0);
  const first = found.bundles[0];
  if (bundles + objects + images === 0 || (first !== undefined && first.offset === 0 && first.format !== "object")) return undefined;
  const places = [...new Set([...found.bundles, ...found.offloadBinaries].map((f) => f.member ?? f.section).filter((w) => w !== undefined))];
  const what = [
    ...(bundles > 0 ? [plural(bundles, "bundle")] : []),
    ...(objects > 0 ? [`${plural(objects, "fat object")} (__CLANG_OFFLOAD_BUNDLE__ sections)`] : []),
    ...(images > 0 ? [plural(images, "offload image")] : []),
  ].join(" and ");
  const where = places.length === 0 ? "" : ` in ${places.map(byteStringToUnicode).join(", ")}`;
  return `the file holds ${what}${where}; 'offload-kit extract --targets=${targets.join(",")} --out-dir=<dir> ${input}' writes them`;
}

function resultJson(r: BatchFileResult): unknown {
  return {
    input: r.input,
    outputs: r.outputs.map((o) => ({ ...o, target: byteStringToUnicode(o.target), entry: o.entry === null ? null : byteStringToUnicode(o.entry) })),
    ...(r.error ? { error: r.error } : {}),
  };
}

export const unbundle: Subcommand = {
  summary: "Unbundle many files at once: -targets=T1,T2 --out-dir=DIR [-type=t] [--json]; writes DIR/<file name>-<target ID with ':' replaced by '_'>.",
  spec: () => ({
    overview: "offload-kit unbundle: unbundle many files for the same targets\n",
    options: [
      FILES_OPTION,
      { name: "targets", kind: "string", list: true, commaSeparated: true, description: "[<offload kind>-<target triple>,...]", category },
      { name: "type", kind: "string", description: "File type (i, ii, cui, hipi, d, ll, bc, s, o, gch, ast); detected when omitted", category },
      { name: "out-dir", kind: "string", valueName: "dir", description: "Directory for the outputs (created if missing)", category },
      { name: "allow-missing-bundles", kind: "flag", description: "Create empty files if bundles are missing", category },
      { name: "hip-openmp-compatible", kind: "flag", description: "Treat hip and hipv4 offload kinds as compatible with openmp kind, and vice versa", category },
      { name: "jobs", kind: "uint", valueName: "n", description: "Worker threads (default: by batch size and cores)", category },
      { name: "progress", kind: "flag", description: "Show a progress bar (default: on a terminal, for long runs)", category },
      JSON_OPTION,
      verboseOption("every output written: its path, size and the entry it holds"),
    ],
    version: VERSION_TEXT,
    epilogue: examplesHelp([
      {
        command: "offload-kit unbundle --targets=hipv4-amdgcn-amd-amdhsa--gfx906,hipv4-amdgcn-amd-amdhsa--gfx90a:xnack- --out-dir=out examples/sample/app.hipfb",
        what: "Write out/app.hipfb-hipv4-amdgcn-amd-amdhsa--gfx906 and ...gfx90a_xnack-, as clang-offload-bundler -unbundle would, one file each",
      },
      { command: "offload-kit unbundle -v --targets=hip-amdgcn-amd-amdhsa--gfx90a --out-dir=out --jobs=4 obj/*.o", what: "Many fat objects at once, on 4 threads, each output listed" },
    ]),
  }),
  async run(values, { name, io, isTTY }) {
    const files = listValue(values, "files");
    const outDir = stringValue(values, "out-dir");
    const targets = listValue(values, "targets");
    if (files.length === 0) return usageError(io, name, "no input files");
    if (outDir === "") return usageError(io, name, "--out-dir is required");
    if (targets.length === 0) return usageError(io, name, "-targets is required");
    const json = flagValue(values, "json");
    const verbose = flagValue(values, "verbose");
    const showProgress = flagValue(values, "progress") || (isTTY && files.length >= 50);
    const jobs = numberValue(values, "jobs");
    let results: BatchFileResult[] | undefined;
    const started = performance.now();
    const bar = showProgress ? new ProgressBar(io, "unbundling") : undefined;
    let failure: unknown;
    let created: string[] = [];
    try {
      created = prepareOutputDirectory(outDir);
      results = await unbundleBatch(files, {
        targets,
        type: stringValue(values, "type") || undefined,
        outDir,
        allowMissingBundles: flagValue(values, "allow-missing-bundles"),
        hipOpenmpCompatible: flagValue(values, "hip-openmp-compatible"),
        jobs: jobs === 0 ? undefined : jobs,
        onProgress: bar ? (done, total) => bar.update(done, total) : undefined,
      });
    } catch (e) {
      failure = e;
    } finally {
      bar?.finish();
      // A folder this run made and left empty (every input failed) goes again.
      removeDirectories(created);
    }
    return runGuarded(io, name, () => {
      if (failure !== undefined) throw failure;
      const all = results!.map((r) => {
        if (r.error === undefined) return r;
        const hint = embeddedHint(r.input, targets);
        return hint === undefined ? r : { ...r, error: { ...r.error, message: `${r.error.message}: ${hint}` } };
      });
      const failed = all.filter((r) => r.error !== undefined);
      if (json) {
        io.stdout(`${JSON.stringify({ engine: engineKind(), results: all.map(resultJson), warnings: [] }, null, 2)}\n`);
      } else {
        // One line per file unbundled (-v: and each output); a file that failed is its error line on stderr.
        for (const r of all) {
          if (r.error !== undefined) continue;
          io.stdout(`${r.input}: ${plural(r.outputs.length, "output")}, ${formatWithCommas(r.outputs.reduce((n, o) => n + o.size, 0))} bytes\n`);
          if (verbose) for (const o of r.outputs) io.stdout(`  ${o.path}  ${formatWithCommas(o.size)} bytes  ${o.content === "entry" ? byteStringToUnicode(o.entry ?? "") : o.content}\n`);
        }
        for (const r of failed) printError(io, name, inputMessage(r.input, r.error!.message));
        const outputs = all.reduce((n, r) => n + r.outputs.length, 0);
        const bytes = all.reduce((n, r) => n + r.outputs.reduce((m, o) => m + o.size, 0), 0);
        const seconds = (performance.now() - started) / 1000;
        io.stderr(`unbundled ${all.length - failed.length} of ${all.length} files into ${outDir}: ${outputs} outputs, ${bytes} bytes, ${seconds.toFixed(2)} s\n`);
      }
      return failed.length > 0 ? 1 : 0;
    });
  },
};
