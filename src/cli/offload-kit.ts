/**
 * `offload-kit`: our own front door. Subcommands take LLVM-style options (`-opt=v`, `--opt=v`,
 * `--opt v`) like the drop-in tools, and print tables for people or `--json` for pipelines.
 *
 *   ls FILE...          every bundle in each file (at byte 0 or embedded), with entries, offsets, sizes
 *   unbundle FILE...    batch unbundling: -targets=T1,T2 [-type=t] --out-dir=DIR
 */
import { mkdirSync } from "node:fs";
import type { ScanReport } from "../inspect/scan.js";
import { scanBundles } from "../inspect/scan.js";
import { byteStringToUnicode } from "../formats/bytes.js";
import { unbundleBatch } from "../node/batch.js";
import type { BatchFileResult } from "../node/batch.js";
import { withFile } from "../node/file-source.js";
import { isOffloadKitError } from "../engine/errors.js";
import { engineKind } from "../engine/select.js";
import { LLVM_COMPAT_VERSION, PACKAGE_VERSION } from "../version.js";
import { flagValue, listValue, numberValue, parseCommandLine, stringValue } from "./args.js";
import type { OptionSpec, ToolSpec } from "./args.js";
import type { CliIO } from "./io.js";
import { printError, responseFileReader, runGuarded } from "./io.js";
import { ProgressBar } from "./progress.js";

const VERSION_TEXT = `offload-kit ${PACKAGE_VERSION} (clang-offload-* ${LLVM_COMPAT_VERSION} compatible)\n`;
const category = "offload-kit options";

const USAGE = `offload-kit: inspect and extract LLVM offload bundles

USAGE: offload-kit <command> [options] FILE...

COMMANDS:
  ls        List every offload bundle in each file (at its start or embedded), with entry IDs,
            offsets, sizes and alignment. --json for machine-readable output.
  unbundle  Unbundle many files at once: -targets=T1,T2 --out-dir=DIR [-type=t] [--json]
            writes DIR/<file name>-<target ID with ':' replaced by '_'>.
  version   Print the version.

Run 'offload-kit <command> --help' for a command's options.
`;

const FILES: OptionSpec = { name: "files", kind: "string", list: true, positional: true, description: "<file>..." };
const JSON_FLAG: OptionSpec = { name: "json", kind: "flag", description: "Print JSON instead of a table", category };

function lsSpec(): ToolSpec {
  return {
    overview: "offload-kit ls: list the offload bundles in files\n",
    options: [FILES, JSON_FLAG],
    version: VERSION_TEXT,
  };
}

function unbundleSpec(): ToolSpec {
  return {
    overview: "offload-kit unbundle: unbundle many files for the same targets\n",
    options: [
      FILES,
      { name: "targets", kind: "string", list: true, commaSeparated: true, description: "[<offload kind>-<target triple>,...]", category },
      { name: "type", kind: "string", description: "File type (i, ii, cui, hipi, d, ll, bc, s, o, gch, ast); detected when omitted", category },
      { name: "out-dir", kind: "string", valueName: "dir", description: "Directory for the outputs (created if missing)", category },
      { name: "allow-missing-bundles", kind: "flag", description: "Create empty files if bundles are missing", category },
      { name: "hip-openmp-compatible", kind: "flag", description: "Treat hip and hipv4 offload kinds as compatible with openmp kind, and vice versa", category },
      { name: "jobs", kind: "uint", valueName: "n", description: "Worker threads (default: by batch size and cores)", category },
      { name: "progress", kind: "flag", description: "Show a progress bar (default: on a terminal, for long runs)", category },
      JSON_FLAG,
    ],
    version: VERSION_TEXT,
  };
}

function hex(n: number): string {
  return `0x${n.toString(16)}`;
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

function formatReport(path: string, report: ScanReport): string {
  let out = "";
  if (report.bundles.length === 0) out += `${path}: no offload bundles found (${report.size} bytes)\n`;
  for (const bundle of report.bundles) {
    const kind = bundle.format === "text" ? `text bundle ('${bundle.comment}' markers)` : "binary bundle";
    const align = bundle.format === "binary" ? `, align ${bundle.align}` : "";
    const count = `${bundle.entries.length} entr${bundle.entries.length === 1 ? "y" : "ies"}`;
    out += `${path}: ${kind} at ${hex(bundle.offset)}, ${bundle.size} bytes${align}, ${count}\n`;
    const rows = bundle.entries.map((e) => [hex(e.offset), String(e.size), String(e.align), byteStringToUnicode(e.id)]);
    const widths = [6, 4, 5].map((w, i) => Math.max(w, ...rows.map((r) => r[i].length)));
    out += `  ${pad("OFFSET", widths[0])}  ${pad("SIZE", widths[1], true)}  ${pad("ALIGN", widths[2], true)}  ID\n`;
    for (const r of rows) out += `  ${pad(r[0], widths[0])}  ${pad(r[1], widths[1], true)}  ${pad(r[2], widths[2], true)}  ${r[3]}\n`;
  }
  for (const problem of report.problems) out += `${path}: at ${hex(problem.offset)}: ${problem.message}\n`;
  return out;
}

function reportJson(path: string, report: ScanReport): unknown {
  return {
    path,
    size: report.size,
    bundles: report.bundles.map((b) => ({
      format: b.format,
      offset: b.offset,
      size: b.size,
      ...(b.comment !== undefined ? { comment: b.comment } : {}),
      ...(b.align !== undefined ? { align: b.align } : {}),
      entries: b.entries.map((e) => ({ id: byteStringToUnicode(e.id), offset: e.offset, size: e.size, align: e.align })),
    })),
    problems: report.problems,
  };
}

function runLs(argv0: string, files: string[], json: boolean, io: CliIO): number {
  let status = 0;
  const reports: unknown[] = [];
  for (const path of files) {
    try {
      const report = withFile(path, (source) => scanBundles(source));
      if (json) reports.push(reportJson(path, report));
      else io.stdout(formatReport(path, report));
    } catch (e) {
      if (!isOffloadKitError(e)) throw e;
      status = 1;
      if (json) reports.push({ path, error: { code: e.code, message: e.message } });
      else printError(io, argv0, e.message);
    }
  }
  if (json) io.stdout(`${JSON.stringify({ files: reports }, null, 2)}\n`);
  return status;
}

async function runUnbundle(argv0: string, values: Record<string, unknown>, io: CliIO, isTTY: boolean): Promise<number> {
  const v = values as Parameters<typeof listValue>[0];
  const files = listValue(v, "files");
  const outDir = stringValue(v, "out-dir");
  const targets = listValue(v, "targets");
  if (files.length === 0) return usageError(io, argv0, "no input files");
  if (outDir === "") return usageError(io, argv0, "--out-dir is required");
  if (targets.length === 0) return usageError(io, argv0, "-targets is required");
  const json = flagValue(v, "json");
  const showProgress = flagValue(v, "progress") || (isTTY && files.length >= 50);
  const bar = showProgress ? new ProgressBar(io, "unbundling") : undefined;
  mkdirSync(outDir, { recursive: true });
  const started = performance.now();
  let results: BatchFileResult[];
  try {
    results = await unbundleBatch(files, {
      targets,
      type: stringValue(v, "type") || undefined,
      outDir,
      allowMissingBundles: flagValue(v, "allow-missing-bundles"),
      hipOpenmpCompatible: flagValue(v, "hip-openmp-compatible"),
      jobs: (v.jobs as number | undefined) === undefined || numberValue(v, "jobs") === 0 ? undefined : numberValue(v, "jobs"),
      onProgress: bar ? (done, total) => bar.update(done, total) : undefined,
    });
  } finally {
    bar?.finish();
  }
  const failed = results.filter((r) => r.error !== undefined);
  if (json) {
    io.stdout(`${JSON.stringify({ engine: engineKind(), results: results.map(resultJson) }, null, 2)}\n`);
  } else {
    for (const r of failed) printError(io, argv0, `${r.input}: ${r.error!.message}`);
    const outputs = results.reduce((n, r) => n + r.outputs.length, 0);
    const bytes = results.reduce((n, r) => n + r.outputs.reduce((m, o) => m + Math.max(o.size, 0), 0), 0);
    const seconds = (performance.now() - started) / 1000;
    io.stderr(
      `unbundled ${results.length - failed.length} of ${results.length} files into ${outDir}: ` +
        `${outputs} outputs, ${bytes} bytes, ${seconds.toFixed(2)} s\n`,
    );
  }
  return failed.length > 0 ? 1 : 0;
}

function resultJson(r: BatchFileResult): unknown {
  return {
    input: r.input,
    outputs: r.outputs.map((o) => ({ ...o, target: byteStringToUnicode(o.target), entry: o.entry === null ? null : byteStringToUnicode(o.entry) })),
    ...(r.error ? { error: r.error } : {}),
  };
}

function usageError(io: CliIO, argv0: string, message: string): number {
  printError(io, argv0, `${message} (see '${argv0} --help')`);
  return 1;
}

export async function runOffloadKit(argv0: string, args: readonly string[], io: CliIO, isTTY = false): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined || command === "help" || command === "--help" || command === "-help" || command === "-h") {
    io.stdout(USAGE);
    return command === undefined ? 1 : 0;
  }
  if (command === "version" || command === "--version" || command === "-version") {
    io.stdout(VERSION_TEXT);
    return 0;
  }
  const spec = command === "ls" ? lsSpec() : command === "unbundle" ? unbundleSpec() : undefined;
  if (spec === undefined) {
    printError(io, argv0, `unknown command '${command}' (see '${argv0} --help')`);
    return 1;
  }
  const name = `${argv0} ${command}`;
  const parsed = parseCommandLine(spec, name, rest, responseFileReader(io.cwd));
  if (parsed.kind === "exit") {
    if (parsed.stdout) io.stdout(parsed.stdout);
    if (parsed.stderr) io.stderr(parsed.stderr);
    return parsed.code;
  }
  if (command === "ls") {
    const files = listValue(parsed.values, "files");
    if (files.length === 0) return usageError(io, name, "no input files");
    return runGuarded(io, name, () => runLs(name, files, flagValue(parsed.values, "json"), io));
  }
  try {
    return await runUnbundle(name, parsed.values, io, isTTY);
  } catch (e) {
    return runGuarded(io, name, () => {
      throw e;
    });
  }
}
