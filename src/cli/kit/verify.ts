/**
 * `offload-kit verify FILE... [--json]`: the checks every output of prune, compress, decompress and replace
 * passes before it replaces anything (src/verify/), on any file (one line each, the first finding on it; -v all): a linked ELF file as the loader and the HIP
 * runtime take it (program headers, segments, sections, dynamic table, relocations, every
 * `__hip_fatbin_wrapper`), any other offload container read again by the locator. Prints `OK` or the
 * findings per file. Exit 0 when every file is OK, 1 when any has findings or cannot be read, 2 on a
 * usage error.
 */
import { isOffloadKitError } from "../../engine/errors.js";
import type { VerifyReport } from "../../verify/index.js";
import { verifyFile } from "../../verify/node.js";
import { flagValue, listValue } from "../args.js";
import { printError, runGuarded } from "../io.js";
import type { Subcommand } from "./common.js";
import { FILES_OPTION, JSON_OPTION, VERSION_TEXT, examplesHelp, hex, plural, usageError, verboseOption } from "./common.js";

function summary(report: VerifyReport): string {
  if (report.kind === "linked ELF") {
    const fat = report.wrappers === 0 ? "no fat binaries" : `${plural(report.fatBinaries.length, "fat binary", "fat binaries")}, ${plural(report.wrappers, "wrapper")}`;
    return `linked ELF, ${fat}`;
  }
  const what = report.kind === "ELF" ? "ELF" : "not a 64-bit little-endian ELF file";
  return `${what}, ${plural(report.bundles, "bundle")}, ${plural(report.entries.length, "entry", "entries")}`;
}

export const verify: Subcommand = {
  summary: "Check files as the loader and the HIP runtime would take them (what every output passes before it is written): FILE... [--json].",
  spec: () => ({
    overview:
      "offload-kit verify: the checks every output of prune, compress, decompress and replace passes before it replaces anything.\n" +
      "A linked ELF64 file: the program header table, PT_LOAD segments, the segments ld.so reads, sections, the dynamic\n" +
      "table and relocations as the loader takes them, and every __hip_fatbin_wrapper's bundle. Any other offload file\n" +
      "(bundle, CCOB, archive, offload binaries, fat object): read again, with no problem found.\n",
    options: [FILES_OPTION, JSON_OPTION, verboseOption("every finding of each file, not only the first")],
    version: VERSION_TEXT,
    epilogue: examplesHelp([
      { command: "offload-kit verify examples/sample/app.hipfb", what: "Read the bundle again as every edited output is read: OK, or the findings" },
      { command: "offload-kit verify -v libfoo.so libfoo.pruned.so", what: "Check a library and its pruned copy as the loader and the HIP runtime would take them, every finding listed" },
    ]),
  }),
  run(values, { name, io }) {
    const files = listValue(values, "files");
    if (files.length === 0) return usageError(io, name, "no input files");
    const json = flagValue(values, "json");
    const verbose = flagValue(values, "verbose");
    return runGuarded(io, name, () => {
      let status = 0;
      let passed = 0;
      let withFindings = 0;
      const reports: unknown[] = [];
      for (const path of files) {
        let report: VerifyReport;
        try {
          report = verifyFile(path);
        } catch (e) {
          if (!isOffloadKitError(e)) throw e;
          status = 1;
          if (json) reports.push({ path, ok: false, error: { code: e.code, message: e.message } });
          else printError(io, name, e.message);
          continue;
        }
        const ok = report.findings.length === 0;
        if (!ok) status = 1;
        if (ok) passed++;
        else withFindings++;
        if (json) {
          reports.push({
            path, ok, kind: report.kind, findings: report.findings,
            ...(report.kind === "linked ELF"
              ? { wrappers: report.wrappers, fatBinaries: report.fatBinaries.map((f) => ({ index: f.index, address: f.address, fileOffset: f.fileOffset, format: f.format, entries: f.entries })) }
              : { bundles: report.bundles, entries: report.entries }),
          });
          continue;
        }
        if (ok) {
          io.stdout(`${path}: OK (${summary(report)})\n`);
          continue;
        }
        const findingText = (f: (typeof report.findings)[number]) => `${f.code} at ${hex(f.offset)} (${f.field}): ${f.message}`;
        if (!verbose) {
          // One line: the count, and the first finding, which is often the cause of the rest.
          const more = report.findings.length > 1 ? " (-v lists all)" : "";
          io.stdout(`${path}: ${plural(report.findings.length, "finding")} (${summary(report)}); the first: ${findingText(report.findings[0]!)}${more}\n`);
          continue;
        }
        io.stdout(`${path}: ${plural(report.findings.length, "finding")} (${summary(report)})\n`);
        for (const f of report.findings) io.stdout(`  ${findingText(f)}\n`);
      }
      if (json) io.stdout(`${JSON.stringify({ ok: status === 0, files: reports, warnings: [] }, null, 2)}\n`);
      else if (files.length > 1) {
        const unread = files.length - passed - withFindings;
        const parts = [`${passed} OK`, ...(withFindings > 0 ? [`${withFindings} with findings`] : []), ...(unread > 0 ? [`${unread} could not be read`] : [])];
        io.stdout(`total (${plural(files.length, "file")}): ${parts.join(", ")}\n`);
      }
      return status;
    });
  },
};
