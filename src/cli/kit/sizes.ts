/**
 * `offload-kit sizes FILE... [--by=target|processor|bundle] [--json]`: where the bytes of device code go,
 * per target ID (or processor, or bundle) in each file and in total, largest first (src/inspect/sizes.ts).
 * A file with no device code is reported as such; only a file that cannot be read makes the exit status 1.
 */
import { isOffloadKitError } from "../../engine/errors.js";
import { byteStringToUnicode } from "../../formats/bytes.js";
import { locate } from "../../inspect/locate.js";
import { fileSizes, totalSizes } from "../../inspect/sizes.js";
import type { FileSizes, SizeRow } from "../../inspect/sizes.js";
import { withCcobPrefetch } from "../../node/decompress.js";
import { forEachInput } from "../../node/packages.js";
import { codecDecompressor } from "../../node/packager-codecs.js";
import { formatWithCommas } from "../../bundler/compressed.js";
import { flagValue, listValue, stringValue } from "../args.js";
import { printError, printWarning } from "../io.js";
import { hasErrors, packageLine, printProblems, problemsJson, runGuardedAsync } from "./package-inputs.js";
import type { Subcommand } from "./common.js";
import { FILES_OPTION, JSON_OPTION, KIT_CATEGORY as category, VERSION_TEXT, hex, pad, usageError } from "./common.js";

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

export const sizes: Subcommand = {
  summary: "Where the bytes go: entries and bytes per target ID, processor or bundle, in each file and in total: [--by=target|processor|bundle] [--json].",
  spec: () => ({
    overview: "offload-kit sizes: entries and bytes of device code per target ID, processor or bundle\n",
    options: [
      FILES_OPTION,
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
      const sizedJson = (sized: FileSizes, problems: unknown) => ({
        ...sized,
        targets: rowsJson(sized.targets),
        processors: rowsJson(sized.processors),
        bundles: sized.bundles.map((b) => ({
          ...b,
          ...(b.section !== undefined ? { section: byteStringToUnicode(b.section) } : {}),
          ...(b.member !== undefined ? { member: byteStringToUnicode(b.member) } : {}),
        })),
        problems,
      });
      for (const path of files) {
        try {
          const members: FileSizes[] = [];
          const memberReports: unknown[] = [];
          let text = "";
          const walk = await forEachInput(path, ({ name: itemName, member, source }) => {
            const location = withCcobPrefetch({}, (ccob) => locate(source, { ...ccob, decompressOffload: codecDecompressor() }));
            const sized = fileSizes(itemName, location);
            const warnings = location.problems.map((p) => `${itemName}: at ${hex(p.offset)}: ${p.message}`);
            if (member === undefined) {
              measured.push(sized);
              if (json) reports.push(sizedJson(sized, location.problems));
              else {
                io.stdout(formatFile(sized, by));
                for (const w of warnings) printWarning(io, name, w);
              }
              return;
            }
            // In a package, members without device code are counted but not listed.
            if (sized.bundles.length === 0 && sized.entries === 0 && location.problems.length === 0) return;
            members.push(sized);
            measured.push(sized);
            if (json) memberReports.push({ ...sizedJson(sized, location.problems), member });
            else {
              text += formatFile(sized, by);
              for (const w of warnings) printWarning(io, name, w);
            }
          }, { locateOnly: true });
          if (walk.package !== undefined) {
            const total = totalSizes(members);
            if (json) {
              reports.push({
                path,
                package: walk.package,
                members: memberReports,
                total: { ...total, targets: rowsJson(total.targets), processors: rowsJson(total.processors) },
                problems: problemsJson(walk),
              });
            } else {
              const rows = by === "processor" ? total.processors : total.targets;
              text += `${path}: package total, ${total.entries} entries, ${formatWithCommas(total.bytes)} bytes in ${members.length} member${members.length === 1 ? "" : "s"}\n`;
              if (total.entries > 0) text += groupTable(by === "processor" ? "PROCESSOR" : "TARGET", rows, total.bytes, total.storedBytes !== undefined);
              io.stdout(packageLine(path, walk, members.length) + text);
              printProblems(io, name, walk);
            }
            if (hasErrors(walk)) status = 1;
          }
        } catch (e) {
          if (!isOffloadKitError(e)) throw e;
          status = 1;
          if (json) reports.push({ path, error: { code: e.code, message: e.message } });
          else printError(io, name, e.message);
        }
      }
      const total = totalSizes(measured);
      if (json) {
        io.stdout(`${JSON.stringify({ files: reports, total: { ...total, targets: rowsJson(total.targets), processors: rowsJson(total.processors) } }, null, 2)}\n`);
      } else if (measured.length > 1) {
        const stored = total.storedBytes !== undefined;
        const rows = by === "processor" ? total.processors : total.targets;
        const summary = `${total.entries} entries, ${formatWithCommas(total.bytes)} bytes${stored ? `, ${formatWithCommas(total.storedBytes!)} stored` : ""}`;
        io.stdout(`total (${total.files} files): ${summary}\n${groupTable(by === "processor" ? "PROCESSOR" : "TARGET", rows, total.bytes, stored)}`);
      }
      return status;
    });
  },
};
