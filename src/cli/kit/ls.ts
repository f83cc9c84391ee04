/**
 * `offload-kit ls FILE... [--json] [--objdump]`: every offload bundle and every offload binary in each file,
 * at its start or embedded. `--objdump` prints instead exactly what `llvm-objdump --offloading` (19) prints
 * for offload binaries, raw or in an ELF object's `.llvm.offloading` sections.
 */
import { isOffloadKitError } from "../../engine/errors.js";
import { byteStringToUnicode } from "../../formats/bytes.js";
import { getImageKindName, getOffloadKindName, isOffloadBinary, llvmOffloadErrorText, objdumpImageKindName } from "../../formats/offload-binary.js";
import { readExact } from "../../engine/source.js";
import { objdumpOffloading } from "../../inspect/objdump.js";
import { locate } from "../../inspect/locate.js";
import { locationJson } from "../../inspect/location-json.js";
import type { Location, LocatedBundle, LocatedOffloadBinaries } from "../../inspect/locate.js";
import { collectOffloadImages } from "../../packager/collect.js";
import { codecDecompressor } from "../../node/packager-codecs.js";
import { withCcobPrefetch } from "../../node/decompress.js";
import { withFile } from "../../node/file-source.js";
import { forEachInput } from "../../node/packages.js";
import { flagValue, listValue } from "../args.js";
import { printError, runGuarded } from "../io.js";
import type { Subcommand } from "./common.js";
import { FILES_OPTION, JSON_OPTION, KIT_CATEGORY, VERSION_TEXT, hex, pad, usageError } from "./common.js";
import type { CliIO } from "../io.js";
import { hasErrors, packageLine, printProblems, problemsJson, runGuardedAsync } from "./package-inputs.js";

const HEADER_CODES = new Set(["OFFLOAD_BAD_MAGIC", "OFFLOAD_HEADER_TRUNCATED", "OFFLOAD_BAD_VERSION", "OFFLOAD_SIZE_OUT_OF_BOUNDS", "OFFLOAD_ENTRIES_OUT_OF_BOUNDS"]);

function isRawOffloadBinary(path: string): boolean {
  return withFile(path, (source) => isOffloadBinary(readExact(source, 0, Math.min(4, source.size))));
}

/** `--objdump`: llvm-objdump --offloading's output and its error wording, file by file (version 1 only, as 19). */
function objdump(files: readonly string[], name: string, io: CliIO): number {
  return runGuarded(io, name, () => {
    for (const path of files) {
      try {
        const text = withFile(path, (source) => {
          const collected = collectOffloadImages(source, path, { maxVersion: 1 });
          return objdumpOffloading(path, collected.images, collected.kind === "elf" ? collected.elf?.header : undefined);
        });
        io.stdout(text);
      } catch (e) {
        if (!isOffloadKitError(e)) throw e;
        const text = llvmOffloadErrorText(e.code);
        // A raw file whose first header is bad fails when llvm-objdump opens it (OffloadBinary::create), before
        // extraction; every later failure, and any in an object's sections, fails while extracting.
        const opening = HEADER_CODES.has(e.code) && (e.offset ?? Infinity) < 32 && isRawOffloadBinary(path);
        if (text === undefined) printError(io, name, e.message);
        else printError(io, name, `'${path}': ${opening ? "" : "while extracting offloading files: "}${text}`);
        return 1;
      }
    }
    return 0;
  });
}

function table(rows: string[][], right: readonly boolean[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => `  ${r.map((cell, i) => (i === r.length - 1 ? cell : pad(cell, widths[i]!, right[i]))).join("  ")}`.trimEnd() + "\n").join("");
}

/** Where a find sits, when it is inside something: `, in section .hip_fatbin of member x.o`. */
function whereText(found: { readonly section?: string; readonly member?: string }): string {
  const section = found.section === undefined ? "" : `section ${byteStringToUnicode(found.section)}`;
  const member = found.member === undefined ? "" : `member ${byteStringToUnicode(found.member)}`;
  return section === "" && member === "" ? "" : `, in ${[section, member].filter((t) => t !== "").join(" of ")}`;
}

function bundleKind(bundle: LocatedBundle): string {
  if (bundle.format === "text") return `text bundle ('${bundle.comment}' markers)`;
  if (bundle.format === "object") return "fat object (__CLANG_OFFLOAD_BUNDLE__ sections)";
  return "binary bundle";
}

function formatOffload(path: string, run: LocatedOffloadBinaries): string {
  const images = `${run.images.length} image${run.images.length === 1 ? "" : "s"}`;
  let out = `${path}: offload binaries at ${hex(run.offset)}, ${run.size} bytes, ${run.binaries} binar${run.binaries === 1 ? "y" : "ies"}, ${images}${whereText(run)}\n`;
  const rows = [["INDEX", "OFFSET", "SIZE", "KIND", "PRODUCER", "TRIPLE", "ARCH", "OTHER"]];
  for (const image of run.images) {
    const kind = getImageKindName(image.imageKind) || objdumpImageKindName(image.imageKind);
    const other = image.strings.filter(([k]) => k !== "triple" && k !== "arch").map(([k, v]) => `${k}=${v}`).join(",");
    rows.push([
      String(image.index), `${image.compressed ? "(packed) " : ""}${hex(image.offset)}`, String(image.size), kind,
      getOffloadKindName(image.offloadKind), image.triple, image.arch, other,
    ].map(byteStringToUnicode));
  }
  return out + table(rows, [true, false, true, false, false, false, false, false]);
}

function formatReport(path: string, report: Location): string {
  let out = "";
  const offload = report.offloadBinaries;
  if (report.bundles.length === 0 && offload.length === 0) out += `${path}: no offload bundles found (${report.size} bytes)\n`;
  for (const bundle of report.bundles) {
    const kind = bundleKind(bundle);
    const align = bundle.format === "binary" ? `, align ${bundle.align}` : "";
    const count = `${bundle.entries.length} entr${bundle.entries.length === 1 ? "y" : "ies"}`;
    const c = bundle.compressed;
    // Offsets of a compressed bundle's contents are positions in its decompressed bytes.
    const where = c === undefined ? "" : `${c.method} compressed bundle v${c.version} at ${hex(c.offset)}, ${c.size} bytes, hash ${c.storedHash}: `;
    out += `${path}: ${where}${kind} at ${hex(bundle.offset)}, ${bundle.size} bytes${align}, ${count}${whereText(bundle)}\n`;
    const rows = bundle.entries.map((e) => [hex(e.offset), String(e.size), String(e.align), byteStringToUnicode(e.id)]);
    const widths = [6, 4, 5].map((w, i) => Math.max(w, ...rows.map((r) => r[i].length)));
    out += `  ${pad("OFFSET", widths[0])}  ${pad("SIZE", widths[1], true)}  ${pad("ALIGN", widths[2], true)}  ID\n`;
    for (const r of rows) out += `  ${pad(r[0], widths[0])}  ${pad(r[1], widths[1], true)}  ${pad(r[2], widths[2], true)}  ${r[3]}\n`;
  }
  for (const run of offload) out += formatOffload(path, run);
  for (const problem of report.problems) out += `${path}: at ${hex(problem.offset)}: ${problem.message}\n`;
  return out;
}

export const ls: Subcommand = {
  summary: "List every offload bundle and offload binary in each file (at its start or embedded): IDs, offsets, sizes, alignment, image kinds, triples.",
  spec: () => ({
    overview: "offload-kit ls: list the offload bundles and offload binaries in files\n",
    options: [
      FILES_OPTION,
      JSON_OPTION,
      { name: "objdump", kind: "flag", description: "Print offload binaries exactly as llvm-objdump --offloading (19) does", category: KIT_CATEGORY },
    ],
    version: VERSION_TEXT,
  }),
  run(values, { name, io }) {
    const files = listValue(values, "files");
    if (files.length === 0) return usageError(io, name, "no input files");
    const json = flagValue(values, "json");
    if (flagValue(values, "objdump")) return objdump(files, name, io);
    return runGuardedAsync(io, name, async () => {
      let status = 0;
      const reports: unknown[] = [];
      for (const path of files) {
        try {
          const members: unknown[] = [];
          let withCode = 0;
          let text = "";
          const walk = await forEachInput(path, ({ name: itemName, member, source }) => {
            const report = withCcobPrefetch({ recalculateHash: true }, (ccob) => locate(source, { ...ccob, decompressOffload: codecDecompressor() }));
            const found = report.bundles.length > 0 || report.offloadBinaries.length > 0 || report.problems.length > 0;
            if (member === undefined) {
              if (json) reports.push(locationJson(path, report));
              else io.stdout(formatReport(path, report));
              return;
            }
            // In a package, only members holding something (or failing) are shown.
            if (!found) return;
            withCode++;
            if (json) members.push({ ...locationJson(itemName, report), member });
            else text += formatReport(itemName, report);
          }, { locateOnly: true });
          if (walk.package !== undefined) {
            if (json) reports.push({ path, package: walk.package, members, problems: problemsJson(walk) });
            else io.stdout(packageLine(path, walk, withCode) + text);
            if (!json) printProblems(io, name, walk);
            if (hasErrors(walk)) status = 1;
          }
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
