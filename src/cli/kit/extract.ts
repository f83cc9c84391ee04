/**
 * `offload-kit extract FILE|DIR... [--out-dir=DIR] [--targets=T1,T2] [--image=<filter>]... [--archive] [--json]`:
 * every entry of every bundle and every offload image in each file or folder, wherever the file holds them (a bundle,
 * a compressed bundle, an executable's or library's `.hip_fatbin`, a fat object, `.llvm.offloading`, an
 * archive), written to `DIR/<file name>-<bundle index>-<entry ID>` and, for offload images,
 * clang-offload-packager's `DIR/<stem>-<triple>-<arch>.<n>.<ext>` (src/inspect/node/extract.ts).
 * Folders are walked as check walks them (src/inspect/node/folders.ts); a file found there is named after
 * its path below the folder, flattened to one component (`sub/libfoo.so` gives `sub_libfoo.so-0-<ID>`),
 * and any name already given in the run gets `.1`, `.2`, ..., so two same-named files never meet.
 *
 * The report: one line per input (outputs, bytes), `-v` each output under it, then the total.
 *
 * An input with nothing to extract (or nothing the filters select) is an error, like an unreadable one;
 * the other inputs go on and the exit status is 1. What could not be read inside an input that gave
 * outputs (a damaged bundle among good ones) is a warning.
 */
import { isNvArchId } from "../../inspect/check.js";
import { OffloadKitError, isOffloadKitError } from "../../engine/errors.js";
import { byteStringToUnicode, utf8ToByteString } from "../../formats/bytes.js";
import { checkNameCollisions, normaliseBatchTargets } from "../../bundler/node/batch.js";
import { prepareOutputDirectory, removeDirectories } from "../../node/directories.js";
import { extractSource } from "../../inspect/node/extract.js";
import { forEachInput } from "../../packages/node/inputs.js";
import type { InputWalk } from "../../packages/node/inputs.js";
import { flattenFoundPath, forEachPath, namedDirectory } from "../../inspect/node/folders.js";
import type { ExtractAllOptions } from "../../inspect/node/extract.js";
import { flattenMemberPath } from "../../packages/names.js";
import type { ExtractedOutput } from "../../inspect/node/extract.js";
import type { ScanProblem } from "../../inspect/scan.js";
import { flagValue, listValue, stringValue } from "../args.js";
import { printError, printWarning } from "../io.js";
import { hasErrors, printProblems, recordPackageWarnings, runGuardedAsync } from "./package-inputs.js";
import { foldersJson, foldersNote, printUnreadable } from "./folders.js";
import type { Subcommand } from "./common.js";
import { FOLDERS_HELP, PATHS_OPTION, JSON_OPTION, KIT_CATEGORY as category, VERSION_TEXT, Warnings, examplesHelp, hex, inputMessage, plural, usageError, verboseOption } from "./common.js";
import { formatWithCommas } from "../../bundler/compressed.js";

function outputJson(output: ExtractedOutput): unknown {
  return {
    ...output,
    id: byteStringToUnicode(output.id),
    ...(output.section !== undefined ? { section: byteStringToUnicode(output.section) } : {}),
    ...(output.member !== undefined ? { member: byteStringToUnicode(output.member) } : {}),
  };
}

/** One input extracted, not yet reported (a file found in a folder is reported only when it holds offload code). */
interface Extracted {
  readonly outputs: ExtractedOutput[];
  readonly problems: (ScanProblem & { file: string })[];
  readonly errors: { file: string; code: string; message: string }[];
  /** What the text report prints, in order (a warning's code and file kept for --json). */
  readonly messages: { error: boolean; text: string; code?: string; file?: string; message?: string }[];
  /** The package's walk, for its problems. */
  walk?: InputWalk;
  /** Printed after the package's problems: that the package gave nothing. */
  closing?: string;
  /** Whether the file is offload code (gave outputs, or failed where offload code is). */
  offload: boolean;
  /** The file itself could not be opened. */
  readError?: { code: string; message: string };
}

/**
 * Extracts one file, named on the command line or found in a folder: `file` names it in reports, `naming` is
 * what its outputs are named after (the file itself when named; its flattened path below the folder when found).
 */
async function extractInput(file: string, naming: string, options: ExtractAllOptions): Promise<Extracted> {
  const done: Extracted = { outputs: [], problems: [], errors: [], messages: [], offload: false };
  const fail = (itemName: string, e: OffloadKitError) => {
    done.errors.push({ file: itemName, code: e.code, message: e.message });
    done.messages.push({ error: true, text: inputMessage(itemName, e.message) });
  };
  let opened = false;
  try {
    let fromPackage = 0;
    const walk = await forEachInput(file, ({ name: itemName, member, source }) => {
      opened = true;
      let result;
      try {
        // A member is written under its whole path, flattened to one safe file name.
        result = member === undefined
          ? extractSource(source, naming, { ...options, kpackHostPath: file })
          : extractSource(source, flattenMemberPath(naming, member), options);
      } catch (e) {
        // A package member with no device code (most of them) is not an error; the package with none is.
        if (member !== undefined && isOffloadKitError(e) && e.code === "NOTHING_TO_EXTRACT") return;
        if (member === undefined || !isOffloadKitError(e)) throw e;
        fail(itemName, e);
        return;
      }
      fromPackage += result.outputs.length;
      done.outputs.push(...result.outputs.map((o) => (member === undefined ? { ...o, file } : { ...o, file: itemName, packageMember: member })));
      for (const problem of result.problems) {
        done.problems.push({ file: itemName, ...problem });
        const message = `at ${hex(problem.offset)}: ${problem.message}`;
        if (result.outputs.length > 0) done.messages.push({ error: false, text: `${itemName}: ${message}`, code: problem.code, file: itemName, message });
      }
    });
    if (walk.package === undefined) {
      done.offload = done.outputs.length > 0;
      return done;
    }
    done.walk = walk;
    for (const p of walk.problems) done.problems.push({ file: p.name, code: p.code, message: p.message, offset: p.offset });
    if (hasErrors(walk)) done.errors.push({ file, code: "PACKAGE_PROBLEMS", message: `${walk.problems.length} member(s) could not be read` });
    // In a folder, a package counts when a member gave outputs or failed, or it could not be read to the end.
    done.offload = fromPackage > 0 || done.errors.length > 0;
    if (fromPackage === 0 && (done.offload || options.skipWithoutOffloadCode !== true)) {
      const e = new OffloadKitError("NOTHING_TO_EXTRACT", `no offload bundles or offload binaries found in the ${walk.package.members} members of the package`);
      done.errors.push({ file, code: e.code, message: e.message });
      done.closing = `${file}: ${e.message}`;
    }
    return done;
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    if (!opened) done.readError = { code: e.code, message: e.message };
    else fail(file, e);
    done.offload = true;
    return done;
  }
}

export const extract: Subcommand = {
  summary: "Write every bundle entry and offload image in each file or folder, wherever it is held: [--out-dir=DIR] [--targets=T1,T2] [--image=<key>=<value>,...]... [--json].",
  spec: () => ({
    overview: `offload-kit extract: write every bundle entry and offload image in files and folders to files\n\n${FOLDERS_HELP}` +
      "A file found in a folder names its outputs after its path below the folder, '/' made '_' (sub/libfoo.so: sub_libfoo.so-0-<ID>).\n",
    options: [
      PATHS_OPTION,
      { name: "out-dir", kind: "string", valueName: "dir", description: "Directory for the outputs (created if missing; default: .)", category },
      { name: "targets", kind: "string", list: true, commaSeparated: true, description: "Only entries compatible with one of [<offload kind>-<target triple>,...], by the bundler's rules; NVIDIA fatbin entries by arch (sm_80, compute_90)", category },
      { name: "hip-openmp-compatible", kind: "flag", description: "Treat hip and hipv4 offload kinds as compatible with openmp kind, and vice versa", category },
      {
        name: "image",
        kind: "string",
        list: true,
        valueName: "<key>=<value>,...",
        description: "Offload images to extract, as clang-offload-packager filters them (bundle entries then only with --targets)",
        category,
      },
      { name: "archive", kind: "flag", description: "Write each --image filter's matches to a static archive at its file=", category },
      JSON_OPTION,
      verboseOption("every output written: its path, size and the entry it holds"),
    ],
    version: VERSION_TEXT,
    epilogue: examplesHelp([
      { command: "offload-kit extract --out-dir=out examples/sample/app.hipfb", what: "Write each entry of the bundle to out/app.hipfb-0-<entry ID>" },
      { command: "offload-kit extract --targets=hipv4-amdgcn-amd-amdhsa--gfx90a --out-dir=out lib/libfoo.so", what: "Only the gfx90a code objects held in the library's .hip_fatbin" },
      { command: "offload-kit extract -v --image=arch=gfx90a --out-dir=out app.o", what: "Offload images for gfx90a, each output listed" },
    ]),
  }),
  run(values, { name, io }) {
    const files = listValue(values, "files");
    if (files.length === 0) return usageError(io, name, "no input files");
    const outDir = stringValue(values, "out-dir") || ".";
    const rawTargets = listValue(values, "targets");
    const imageFilters = listValue(values, "image").map(utf8ToByteString);
    const json = flagValue(values, "json");
    const verbose = flagValue(values, "verbose");
    const warnings = new Warnings(io, name);
    return runGuardedAsync(io, name, async () => {
      // Both refuse before anything is written.
      // NVIDIA archs (`sm_80`, `compute_90`) name fatbin entries as they are; the rest are the bundler's targets.
      const bundlerTargets = rawTargets.filter((t) => !isNvArchId(t));
      if (bundlerTargets.length > 0) normaliseBatchTargets(bundlerTargets);
      // Files found in folders are named after their path below the folder (src/inspect/node/folders.ts).
      checkNameCollisions(files.filter((f) => !namedDirectory(f)));
      // A folder asked for that takes no files is one error now, not one per input; the current folder (the
      // default) is not probed, since `--image=file=` outputs may all go elsewhere.
      const created = prepareOutputDirectory(outDir, stringValue(values, "out-dir") !== "");
      const started = performance.now();
      const outputs: ExtractedOutput[] = [];
      const problems: (ScanProblem & { file: string })[] = [];
      const errors: { file: string; code: string; message: string }[] = [];
      const taken = new Set<string>();
      const options = {
        outDir,
        targets: rawTargets.map(utf8ToByteString),
        hipOpenmpCompatible: flagValue(values, "hip-openmp-compatible"),
        imageFilters,
        archive: flagValue(values, "archive"),
        hash: json,
        taken,
        warn: (text: string) => (json ? warnings.record : warnings.warn).call(warnings, "IMAGE_FILE_SHARED", text),
      };
      let inputs = 0;
      let failedInputs = 0;
      const run = await forEachPath(files, {
        inspect: (file, found) => extractInput(file, found === undefined ? file : flattenFoundPath(found.folder, file), { ...options, skipWithoutOffloadCode: found !== undefined }),
        classify: (done) => (done.readError !== undefined ? { unreadable: done.readError } : done.offload ? "input" : "skipped"),
        use: (done, file) => {
          inputs++;
          if (done.readError !== undefined) done.errors.push({ file, ...done.readError });
          if (done.errors.length > 0) failedInputs++;
          outputs.push(...done.outputs);
          problems.push(...done.problems);
          errors.push(...done.errors);
          for (const m of done.messages) if (!m.error && json) warnings.record(m.code ?? "WARNING", m.message ?? m.text, m.file);
          if (done.walk !== undefined) recordPackageWarnings(warnings, done.walk);
          if (json) return;
          // One line per input (-v: and each output), before what went wrong in it.
          const mine = done.outputs;
          if (mine.length > 0 || done.errors.length === 0) {
            io.stdout(`${file}: ${plural(mine.length, "output")}, ${formatWithCommas(mine.reduce((n, o) => n + o.size, 0))} bytes\n`);
            if (verbose) for (const o of mine) io.stdout(`  ${o.path}  ${formatWithCommas(o.size)} bytes  ${byteStringToUnicode(o.id)}\n`);
          }
          for (const m of done.messages) {
            if (m.error) printError(io, name, m.text);
            else if (m.code !== undefined) warnings.warn(m.code, m.message!, m.file);
            else printWarning(io, name, m.text);
          }
          if (done.walk !== undefined) printProblems(io, name, done.walk);
          if (done.closing !== undefined) printError(io, name, done.closing);
          if (done.readError !== undefined) printError(io, name, inputMessage(file, done.readError.message));
        },
      });
      const unreadable = printUnreadable(io, name, run);
      // A folder with no offload file gives nothing to extract, as a file with none does.
      for (const dir of run.emptyDirectories) {
        const message = "no offload bundles or offload binaries found in any file of the folder";
        errors.push({ file: dir, code: "NOTHING_TO_EXTRACT", message });
        if (!json) printError(io, name, `${dir}: ${message}`);
      }
      // A folder this run made and left empty (every input failed) goes again, as if never asked for.
      removeDirectories(created);
      if (json) {
        io.stdout(`${JSON.stringify({ outputs: outputs.map(outputJson), problems, errors, ...foldersJson(run), warnings: warnings.list }, null, 2)}\n`);
      } else {
        const bytes = outputs.reduce((n, o) => n + o.size, 0);
        const seconds = (performance.now() - started) / 1000;
        const from = `${inputs - failedInputs} of ${plural(inputs, "file")}`;
        const note = run.folders ? `; ${foldersNote(run)}` : "";
        io.stdout(`extracted ${plural(outputs.length, "output")} (${bytes} bytes) from ${from} into ${outDir} in ${seconds.toFixed(2)} s${note}\n`);
      }
      return errors.length > 0 || unreadable ? 1 : 0;
    });
  },
};
