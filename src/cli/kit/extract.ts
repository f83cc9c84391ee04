/**
 * `offload-kit extract FILE... [--out-dir=DIR] [--targets=T1,T2] [--image=<filter>]... [--archive] [--json]`:
 * every entry of every bundle and every offload image in each file, wherever the file holds them (a bundle,
 * a compressed bundle, an executable's or library's `.hip_fatbin`, a fat object, `.llvm.offloading`, an
 * archive), written to `DIR/<file name>-<bundle index>-<entry ID>` and, for offload images,
 * clang-offload-packager's `DIR/<stem>-<triple>-<arch>.<n>.<ext>` (src/inspect/node/extract.ts).
 *
 * An input with nothing to extract (or nothing the filters select) is an error, like an unreadable one;
 * the other inputs go on and the exit status is 1. What could not be read inside an input that gave
 * outputs (a damaged bundle among good ones) is a warning.
 */
import { OffloadKitError, isOffloadKitError } from "../../engine/errors.js";
import { byteStringToUnicode, utf8ToByteString } from "../../formats/bytes.js";
import { checkNameCollisions, normaliseBatchTargets } from "../../bundler/node/batch.js";
import { prepareOutputDirectory, removeDirectories } from "../../node/directories.js";
import { extractSource } from "../../inspect/node/extract.js";
import { forEachInput } from "../../packages/node/inputs.js";
import { flattenMemberPath } from "../../packages/names.js";
import type { ExtractedOutput } from "../../inspect/node/extract.js";
import type { ScanProblem } from "../../inspect/scan.js";
import { flagValue, listValue, stringValue } from "../args.js";
import { printError, printWarning } from "../io.js";
import { hasErrors, printProblems, runGuardedAsync } from "./package-inputs.js";
import type { Subcommand } from "./common.js";
import { FILES_OPTION, JSON_OPTION, KIT_CATEGORY as category, VERSION_TEXT, hex, inputMessage, plural, usageError } from "./common.js";

function outputJson(output: ExtractedOutput): unknown {
  return {
    ...output,
    id: byteStringToUnicode(output.id),
    ...(output.section !== undefined ? { section: byteStringToUnicode(output.section) } : {}),
    ...(output.member !== undefined ? { member: byteStringToUnicode(output.member) } : {}),
  };
}

export const extract: Subcommand = {
  summary: "Write every bundle entry and offload image in each file, wherever it is held: [--out-dir=DIR] [--targets=T1,T2] [--image=<key>=<value>,...]... [--json].",
  spec: () => ({
    overview: "offload-kit extract: write every bundle entry and offload image in files to files\n",
    options: [
      FILES_OPTION,
      { name: "out-dir", kind: "string", valueName: "dir", description: "Directory for the outputs (created if missing; default: .)", category },
      { name: "targets", kind: "string", list: true, commaSeparated: true, description: "Only entries compatible with one of [<offload kind>-<target triple>,...], by the bundler's rules", category },
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
    ],
    version: VERSION_TEXT,
  }),
  run(values, { name, io }) {
    const files = listValue(values, "files");
    if (files.length === 0) return usageError(io, name, "no input files");
    const outDir = stringValue(values, "out-dir") || ".";
    const rawTargets = listValue(values, "targets");
    const imageFilters = listValue(values, "image").map(utf8ToByteString);
    const json = flagValue(values, "json");
    return runGuardedAsync(io, name, async () => {
      // Both refuse before anything is written.
      if (rawTargets.length > 0) normaliseBatchTargets(rawTargets);
      checkNameCollisions(files);
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
        warn: (text: string) => printWarning(io, name, text),
      };
      for (const file of files) {
        try {
          let fromPackage = 0;
          const walk = await forEachInput(file, ({ name: itemName, member, source }) => {
            let result;
            try {
              // A member is written under its whole path, flattened to one safe file name.
              result = extractSource(source, member === undefined ? file : flattenMemberPath(file, member), options);
            } catch (e) {
              // A package member with no device code (most of them) is not an error; the package with none is.
              if (member !== undefined && isOffloadKitError(e) && e.code === "NOTHING_TO_EXTRACT") return;
              if (member === undefined || !isOffloadKitError(e)) throw e;
              errors.push({ file: itemName, code: e.code, message: e.message });
              if (!json) printError(io, name, `${itemName}: ${e.message}`);
              return;
            }
            fromPackage += result.outputs.length;
            outputs.push(...result.outputs.map((o) => (member === undefined ? o : { ...o, file: itemName, packageMember: member })));
            for (const problem of result.problems) {
              problems.push({ file: itemName, ...problem });
              if (!json) printWarning(io, name, `${itemName}: at ${hex(problem.offset)}: ${problem.message}`);
            }
          });
          if (walk.package !== undefined) {
            for (const p of walk.problems) problems.push({ file: p.name, code: p.code, message: p.message, offset: p.offset });
            if (!json) printProblems(io, name, walk);
            if (hasErrors(walk)) errors.push({ file, code: "PACKAGE_PROBLEMS", message: `${walk.problems.length} member(s) could not be read` });
            if (fromPackage === 0) {
              const e = new OffloadKitError("NOTHING_TO_EXTRACT", `no offload bundles or offload binaries found in the ${walk.package.members} members of the package`);
              errors.push({ file, code: e.code, message: e.message });
              if (!json) printError(io, name, `${file}: ${e.message}`);
            }
          }
        } catch (e) {
          if (!isOffloadKitError(e)) throw e;
          errors.push({ file, code: e.code, message: e.message });
          if (!json) printError(io, name, inputMessage(file, e.message));
        }
      }
      // A folder this run made and left empty (every input failed) goes again, as if never asked for.
      removeDirectories(created);
      if (json) {
        io.stdout(`${JSON.stringify({ outputs: outputs.map(outputJson), problems, errors }, null, 2)}\n`);
      } else {
        const bytes = outputs.reduce((n, o) => n + o.size, 0);
        const seconds = (performance.now() - started) / 1000;
        const inputs = `${files.length - errors.length} of ${plural(files.length, "file")}`;
        io.stdout(`extracted ${plural(outputs.length, "output")} (${bytes} bytes) from ${inputs} into ${outDir} in ${seconds.toFixed(2)} s\n`);
      }
      return errors.length > 0 ? 1 : 0;
    });
  },
};
