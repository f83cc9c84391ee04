/**
 * `offload-kit sizes FILE|DIR... [--by=target|processor|bundle] [--json]`: where the bytes of device code go,
 * per target ID (or processor, or bundle) in each file and in total, largest first (src/inspect/sizes.ts).
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
import { printError, printWarning } from "../io.js";
import { hasErrors, packageLine, printProblems, problemsJson, runGuardedAsync } from "./package-inputs.js";
import { emptyFoldersText, foldersJson, foldersNote, printUnreadable } from "./folders.js";
import type { Subcommand } from "./common.js";
import { FOLDERS_HELP, PATHS_OPTION, JSON_OPTION, KIT_CATEGORY as category, VERSION_TEXT, hex, pad, usageError } from "./common.js";
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

function formatFile(file: FileSizes, by: Grouping): string {
  if (file.entries === 0 && file.bundles.length === 0) return `${file.path}: no offload bundles or offload binaries (${formatWithCommas(file.size)} bytes)\n`;
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
  readonly warnings: readonly string[];
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

async function sizeFile(path: string, json: boolean, by: Grouping): Promise<Sized> {
  try {
    const members: FileSizes[] = [];
    const memberReports: unknown[] = [];
    const warnings: string[] = [];
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
        else text = formatFile(sized, by);
      } else {
        // In a package, members without device code are counted but not listed.
        if (sized.bundles.length === 0 && sized.entries === 0 && location.problems.length === 0) return;
        members.push(sized);
        if (json) memberReports.push({ ...sizedJson(sized, location.problems), member });
        else text += formatFile(sized, by);
      }
      if (!json) warnings.push(...location.problems.map((p) => `${itemName}: at ${hex(p.offset)}: ${p.message}`));
    }, { locateOnly: true });
    if (walk.package === undefined) return { json: report, text, warnings, measured: members, failed: false, offload };
    const total = totalSizes(members);
    const failed = hasErrors(walk);
    const common = { warnings, measured: members, walk, failed, offload: offload || failed };
    if (json) {
      const totalJson = { ...total, targets: rowsJson(total.targets), processors: rowsJson(total.processors) };
      return { ...common, text: "", json: { path, package: walk.package, members: memberReports, total: totalJson, problems: problemsJson(walk) } };
    }
    const rows = by === "processor" ? total.processors : total.targets;
    text += `${path}: package total, ${total.entries} entries, ${formatWithCommas(total.bytes)} bytes in ${members.length} member${members.length === 1 ? "" : "s"}\n`;
    if (total.entries > 0) text += groupTable(by === "processor" ? "PROCESSOR" : "TARGET", rows, total.bytes, total.storedBytes !== undefined);
    return { ...common, text: packageLine(path, walk, members.length) + text };
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
    ],
    version: VERSION_TEXT,
  }),
  run(values, { name, io }) {
    const files = listValue(values, "files");
    if (files.length === 0) return usageError(io, name, "no input files");
    const by = (stringValue(values, "by") || "target") as Grouping;
    if (!GROUPINGS.includes(by)) return usageError(io, name, `--by must be one of ${GROUPINGS.join(", ")}, not '${by}'`);
    const json = flagValue(values, "json");
    return runGuardedAsync(io, name, async () => {
      const measured: FileSizes[] = [];
      const reports: unknown[] = [];
      let status = 0;
      const run = await forEachPath(files, {
        inspect: (path) => sizeFile(path, json, by),
        classify: (sized) => (sized.error !== undefined ? { unreadable: sized.error } : sized.offload ? "input" : "skipped"),
        use: (sized, path) => {
          if (sized.error !== undefined) {
            status = 1;
            if (json) reports.push({ path, error: sized.error });
            else printError(io, name, sized.error.message);
            return;
          }
          measured.push(...sized.measured);
          if (json) reports.push(sized.json);
          else {
            io.stdout(sized.text);
            for (const w of sized.warnings) printWarning(io, name, w);
            if (sized.walk !== undefined) printProblems(io, name, sized.walk);
          }
          if (sized.failed) status = 1;
        },
      });
      if (printUnreadable(io, name, run)) status = 1;
      const total = totalSizes(measured);
      if (json) {
        const totalJson = { ...total, targets: rowsJson(total.targets), processors: rowsJson(total.processors) };
        io.stdout(`${JSON.stringify({ files: reports, total: totalJson, ...foldersJson(run) }, null, 2)}\n`);
      } else {
        io.stdout(emptyFoldersText(run));
        // A folder's total is printed even when it held one file with device code, with what was looked at.
        if (measured.length > 1 || run.folders) {
          const stored = total.storedBytes !== undefined;
          const rows = by === "processor" ? total.processors : total.targets;
          const summary = `${total.entries} entries, ${formatWithCommas(total.bytes)} bytes${stored ? `, ${formatWithCommas(total.storedBytes!)} stored` : ""}`;
          const table = total.entries > 0 || !run.folders ? groupTable(by === "processor" ? "PROCESSOR" : "TARGET", rows, total.bytes, stored) : "";
          io.stdout(`total (${total.files} files): ${summary}\n${table}`);
        }
        if (run.folders) io.stdout(`${foldersNote(run)}\n`);
      }
      return status;
    });
  },
};
