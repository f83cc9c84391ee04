/**
 * `offload-kit sizes FILE|DIR... [--by=target|processor|bundle] [-v] [--json]`: where the bytes of device code
 * go, per target ID (or processor, or bundle), largest first (src/inspect/sizes.ts): one line per file and one
 * total table per run; `-v` adds each file's own table (a package's: each member's).
 * Folders are walked as check walks them (src/inspect/node/folders.ts): the total covers the files found.
 * A file with no device code is reported as such; only a file that cannot be read makes the exit status 1.
 */
import { isOffloadKitError } from "../../engine/errors.js";
import { byteStringToUnicode } from "../../formats/bytes.js";
import { locate } from "../../inspect/locate.js";
import { fileSizes, totalSizes } from "../../inspect/sizes.js";
import type { FileSizes, SizeRow } from "../../inspect/sizes.js";
import { withCcobPrefetch } from "../../compress/node/decompress.js";
import { forEachInput } from "../../packages/node/inputs.js";
import type { InputWalk } from "../../packages/node/inputs.js";
import { holdsOffloadCode } from "../../inspect/node/check.js";
import { forEachPath } from "../../inspect/node/folders.js";
import { codecDecompressor } from "../../compress/node/packager-codecs.js";
import { formatWithCommas } from "../../bundler/compressed.js";
import { flagValue, listValue, stringValue } from "../args.js";
import { printError } from "../io.js";
import { hasErrors, packageLine, printProblems, problemsJson, recordPackageWarnings, runGuardedAsync } from "./package-inputs.js";
import { emptyFoldersText, foldersJson, foldersNote, printUnreadable } from "./folders.js";
import type { KitWarning, Subcommand } from "./common.js";
import { FOLDERS_HELP, PATHS_OPTION, JSON_OPTION, KIT_CATEGORY as category, VERSION_TEXT, Warnings, examplesHelp, hex, pad, plural, usageError, verboseOption } from "./common.js";
import { withKpackHost } from "../../kpack/node/location.js";

const GROUPINGS = ["target", "processor", "bundle"] as const;
type Grouping = (typeof GROUPINGS)[number];

function table(header: readonly string[], rows: readonly string[][], right: readonly boolean[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  return all.map((r) => `  ${r.map((cell, i) => pad(cell, widths[i]!, right[i])).join("  ")}`.trimEnd() + "\n").join("");
}

function percent(part: number, whole: number): string {
  return whole === 0 ? "-" : ((100 * part) / whole).toFixed(1);
}

function groupTable(label: string, rows: readonly SizeRow[], total: number, stored: boolean): string {
  const header = [label, "ENTRIES", "BYTES", "%", ...(stored ? ["STORED"] : [])];
  const body = rows.map((r) => [
    byteStringToUnicode(r.id), String(r.entries), formatWithCommas(r.bytes), percent(r.bytes, total),
    ...(stored ? [formatWithCommas(r.storedBytes ?? r.bytes)] : []),
  ]);
  return table(header, body, [false, true, true, true, true]);
}

function bundleTable(file: FileSizes): string {
  const header = ["INDEX", "OFFSET", "FORMAT", "ENTRIES", "BYTES", "SIZE", "STORED", "WHERE"];
  const body = file.bundles.map((b) => {
    const where = [b.section, b.member].filter((w) => w !== undefined).map((w) => byteStringToUnicode(w!)).join(" of ");
    const c = b.compressed;
    return [
      String(b.index), c === undefined ? hex(b.offset) : hex(c.offset), c === undefined ? b.format : `${b.format}, ${c.method}`,
      String(b.entries), formatWithCommas(b.bytes), formatWithCommas(b.size), formatWithCommas(c === undefined ? b.size : c.size), where,
    ];
  });
  return table(header, body, [true, false, false, true, true, true, true, false]);
}

function fileSummary(file: FileSizes): string {
  const parts = [
    `${file.bundles.length} bundle${file.bundles.length === 1 ? "" : "s"}`,
    ...(file.images > 0 ? [`${file.images} offload image${file.images === 1 ? "" : "s"}`] : []),
    `${file.entries} entr${file.entries === 1 ? "y" : "ies"}`,
    `${formatWithCommas(file.bytes)} bytes`,
    ...(file.storedBytes !== undefined ? [`${formatWithCommas(file.storedBytes)} stored`] : []),
  ];
  return `${file.path}: ${parts.join(", ")} (file: ${formatWithCommas(file.size)} bytes)\n`;
}

function formatFile(file: FileSizes, by: Grouping, verbose: boolean): string {
  if (file.entries === 0 && file.bundles.length === 0) return `${file.path}: no offload bundles or offload binaries (${formatWithCommas(file.size)} bytes)\n`;
  if (!verbose) return fileSummary(file);
  const stored = file.storedBytes !== undefined;
  if (by === "bundle") return fileSummary(file) + bundleTable(file);
  return fileSummary(file) + (by === "processor"
    ? groupTable("PROCESSOR", file.processors, file.bytes, stored)
    : groupTable("TARGET", file.targets, file.bytes, stored));
}

function rowsJson(rows: readonly SizeRow[]): unknown[] {
  return rows.map((r) => ({ ...r, id: byteStringToUnicode(r.id) }));
}

function sizedJson(sized: FileSizes, problems: unknown) {
  return {
    ...sized,
    targets: rowsJson(sized.targets),
    processors: rowsJson(sized.processors),
    bundles: sized.bundles.map((b) => ({
      ...b,
      ...(b.section !== undefined ? { section: byteStringToUnicode(b.section) } : {}),
      ...(b.member !== undefined ? { member: byteStringToUnicode(b.member) } : {}),
    })),
    problems,
  };
}

/** One file measured, not yet printed (a file found in a folder is printed only when it holds offload code). */
interface Sized {
  readonly json?: unknown;
  readonly text: string;
  readonly warnings: readonly KitWarning[];
  /** What goes into the total: the file, or a package's members with device code. */
  readonly measured: readonly FileSizes[];
  /** The package's walk, for its problems. */
  readonly walk?: InputWalk;
  /** Set when a package member could not be read. */
  readonly failed: boolean;
  /** Whether the file is offload code by check's rule (src/inspect/node/check.ts holdsOffloadCode). */
  readonly offload: boolean;
  /** The file itself could not be read. */
  readonly error?: { readonly code: string; readonly message: string };
}

async function sizeFile(path: string, json: boolean, by: Grouping, verbose: boolean): Promise<Sized> {
  try {
    const members: FileSizes[] = [];
    const memberReports: unknown[] = [];
    const warnings: KitWarning[] = [];
    let text = "";
    let report: unknown;
    let offload = false;
    const walk = await forEachInput(path, ({ name: itemName, member, source }) => {
      const located = withCcobPrefetch({}, (ccob) => locate(source, { ...ccob, decompressOffload: codecDecompressor() }));
      const location = member === undefined ? withKpackHost(path, source, located) : located;
      if (holdsOffloadCode(location)) offload = true;
      const sized = fileSizes(itemName, location);
      if (member === undefined) {
        members.push(sized);
        if (json) report = sizedJson(sized, location.problems);
        else text = formatFile(sized, by, verbose);
      } else {
        // In a package, members without device code are counted but not listed.
        if (sized.bundles.length === 0 && sized.entries === 0 && location.problems.length === 0) return;
        members.push(sized);
        if (json) memberReports.push({ ...sizedJson(sized, location.problems), member });
        else if (verbose) text += formatFile(sized, by, true);
      }
      warnings.push(...location.problems.map((p) => ({ code: p.code, message: `at ${hex(p.offset)}: ${p.message}`, path: itemName })));
    }, { locateOnly: true });
    if (walk.package === undefined) return { json: report, text, warnings, measured: members, failed: false, offload };
    const total = totalSizes(members);
    const failed = hasErrors(walk);
    const common = { warnings, measured: members, walk, failed, offload: offload || failed };
    if (json) {
      const totalJson = { ...total, targets: rowsJson(total.targets), processors: rowsJson(total.processors) };
      return { ...common, text: "", json: { path, package: walk.package, members: memberReports, total: totalJson, problems: problemsJson(walk) } };
    }
    const head = packageLine(path, walk, members.length);
    const counted = `${plural(total.entries, "entry", "entries")}, ${formatWithCommas(total.bytes)} bytes in ${plural(members.length, "member")}`;
    // Without -v a package is one line; with it, its members and the package's own total.
    if (!verbose) return { ...common, text: `${head.slice(0, -1)}; ${counted}\n` };
    const rows = by === "processor" ? total.processors : total.targets;
    text += `${path}: package total, ${counted}\n`;
    if (total.entries > 0) text += groupTable(by === "processor" ? "PROCESSOR" : "TARGET", rows, total.bytes, total.storedBytes !== undefined);
    return { ...common, text: head + text };
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    return { text: "", warnings: [], measured: [], failed: true, offload: true, error: { code: e.code, message: e.message } };
  }
}

export const sizes: Subcommand = {
  summary: "Where the bytes go: entries and bytes per target ID, processor or bundle, in each file (or folder) and in total: [--by=target|processor|bundle] [--json].",
  spec: () => ({
    overview: `offload-kit sizes: entries and bytes of device code per target ID, processor or bundle, in files and folders\n\n${FOLDERS_HELP}`,
    options: [
      PATHS_OPTION,
      { name: "by", kind: "string", valueName: "target|processor|bundle", description: "Group the table by target ID (default), processor or bundle", category },
      JSON_OPTION,
      verboseOption("each file's own table (a package's: each member's) before the total"),
    ],
    version: VERSION_TEXT,
    epilogue: examplesHelp([
      { command: "offload-kit sizes examples/sample/app.hipfb", what: "The file's entries and bytes per target ID" },
      { command: "offload-kit sizes --by=processor /opt/rocm/lib", what: "One line per library, then the bytes per processor over the folder" },
      { command: "offload-kit sizes -v --by=bundle lib/libfoo.so", what: "Each bundle of the file: offset, format, entries, bytes" },
    ]),
  }),
  run(values, { name, io }) {
    const files = listValue(values, "files");
    if (files.length === 0) return usageError(io, name, "no input files");
    const by = (stringValue(values, "by") || "target") as Grouping;
    if (!GROUPINGS.includes(by)) return usageError(io, name, `--by must be one of ${GROUPINGS.join(", ")}, not '${by}'`);
    const json = flagValue(values, "json");
    const verbose = flagValue(values, "verbose");
    const warnings = new Warnings(io, name);
    return runGuardedAsync(io, name, async () => {
      const measured: FileSizes[] = [];
      let inputs = 0;
      const reports: unknown[] = [];
      let status = 0;
      const run = await forEachPath(files, {
        inspect: (path) => sizeFile(path, json, by, verbose),
        classify: (sized) => (sized.error !== undefined ? { unreadable: sized.error } : sized.offload ? "input" : "skipped"),
        use: (sized, path) => {
          if (sized.error !== undefined) {
            status = 1;
            if (json) reports.push({ path, error: sized.error });
            else printError(io, name, sized.error.message);
            return;
          }
          inputs++;
          measured.push(...sized.measured);
          if (sized.walk !== undefined) recordPackageWarnings(warnings, sized.walk);
          if (json) {
            reports.push(sized.json);
            for (const w of sized.warnings) warnings.record(w.code, w.message, w.path);
          } else {
            io.stdout(sized.text);
            for (const w of sized.warnings) warnings.warn(w.code, w.message, w.path);
            if (sized.walk !== undefined) printProblems(io, name, sized.walk);
          }
          if (sized.failed) status = 1;
        },
      });
      if (printUnreadable(io, name, run)) status = 1;
      const total = totalSizes(measured);
      if (json) {
        const totalJson = { ...total, targets: rowsJson(total.targets), processors: rowsJson(total.processors) };
        io.stdout(`${JSON.stringify({ files: reports, total: totalJson, ...foldersJson(run), warnings: warnings.list }, null, 2)}\n`);
      } else {
        io.stdout(emptyFoldersText(run));
        const stored = total.storedBytes !== undefined;
        const rows = by === "processor" ? total.processors : total.targets;
        const label = by === "processor" ? "PROCESSOR" : "TARGET";
        // One total per run: over several inputs (or a folder's, even with one file found, with what was looked
        // at); for one input without -v, its table is the total; with -v it was printed with the input.
        if (inputs > 1 || run.folders) {
          const summary = `${total.entries} entries, ${formatWithCommas(total.bytes)} bytes${stored ? `, ${formatWithCommas(total.storedBytes!)} stored` : ""}`;
          const table = total.entries > 0 || !run.folders ? groupTable(label, rows, total.bytes, stored) : "";
          io.stdout(`total (${total.files} files): ${summary}\n${table}`);
        } else if (!verbose && total.entries > 0 && by !== "bundle") {
          io.stdout(groupTable(label, rows, total.bytes, stored));
        } else if (!verbose && by === "bundle" && measured.length === 1) {
          io.stdout(bundleTable(measured[0]!));
        }
        if (run.folders) io.stdout(`${foldersNote(run)}\n`);
      }
      return status;
    });
  },
};
