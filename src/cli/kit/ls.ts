/** `offload-kit ls FILE... [--json]`: every offload bundle in each file, at its start or embedded. */
import { isOffloadKitError } from "../../engine/errors.js";
import { byteStringToUnicode } from "../../formats/bytes.js";
import type { ScanReport } from "../../inspect/scan.js";
import { scanBundles } from "../../inspect/scan.js";
import { decompressMember } from "../../node/decompress.js";
import { withFile } from "../../node/file-source.js";
import { flagValue, listValue } from "../args.js";
import { printError, runGuarded } from "../io.js";
import type { Subcommand } from "./common.js";
import { FILES_OPTION, JSON_OPTION, VERSION_TEXT, hex, pad, usageError } from "./common.js";

function formatReport(path: string, report: ScanReport): string {
  let out = "";
  if (report.bundles.length === 0) out += `${path}: no offload bundles found (${report.size} bytes)\n`;
  for (const bundle of report.bundles) {
    const kind = bundle.format === "text" ? `text bundle ('${bundle.comment}' markers)` : "binary bundle";
    const align = bundle.format === "binary" ? `, align ${bundle.align}` : "";
    const count = `${bundle.entries.length} entr${bundle.entries.length === 1 ? "y" : "ies"}`;
    const c = bundle.compressed;
    // Offsets of a compressed bundle's contents are positions in its decompressed bytes.
    const where = c === undefined ? "" : `${c.method} compressed bundle v${c.version} at ${hex(c.offset)}, ${c.size} bytes, hash ${c.storedHash}: `;
    out += `${path}: ${where}${kind} at ${hex(bundle.offset)}, ${bundle.size} bytes${align}, ${count}\n`;
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
      ...(b.compressed !== undefined ? { compressed: b.compressed } : {}),
      entries: b.entries.map((e) => ({ id: byteStringToUnicode(e.id), offset: e.offset, size: e.size, align: e.align })),
    })),
    problems: report.problems,
  };
}

export const ls: Subcommand = {
  summary: "List every offload bundle in each file (at its start or embedded), with entry IDs, offsets, sizes and alignment.",
  spec: () => ({ overview: "offload-kit ls: list the offload bundles in files\n", options: [FILES_OPTION, JSON_OPTION], version: VERSION_TEXT }),
  run(values, { name, io }) {
    const files = listValue(values, "files");
    if (files.length === 0) return usageError(io, name, "no input files");
    const json = flagValue(values, "json");
    return runGuarded(io, name, () => {
      let status = 0;
      const reports: unknown[] = [];
      for (const path of files) {
        try {
          const report = withFile(path, (source) =>
            scanBundles(source, undefined, { openCompressed: (input, member) => decompressMember(input, member, { recalculateHash: true }) }),
          );
          if (json) reports.push(reportJson(path, report));
          else io.stdout(formatReport(path, report));
        } catch (e) {
          if (!isOffloadKitError(e)) throw e;
          status = 1;
          if (json) reports.push({ path, error: { code: e.code, message: e.message } });
          else printError(io, name, e.message);
        }
      }
      if (json) io.stdout(`${JSON.stringify({ files: reports }, null, 2)}\n`);
      return status;
    });
  },
};
