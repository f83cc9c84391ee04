/**
 * `offload-kit ls FILE|DIR... [--json] [--objdump]`: every offload bundle and every offload binary in each file,
 * at its start or embedded; folders are walked as check walks them (src/inspect/node/folders.ts), files
 * found without offload code skipped and counted. `--objdump` prints instead exactly what `llvm-objdump --offloading` (19) prints
 * for offload binaries, raw or in an ELF object's `.llvm.offloading` sections.
 */
import { isOffloadKitError } from "../../engine/errors.js";
import { byteStringToUnicode } from "../../formats/bytes.js";
import { getImageKindName, isOffloadBinary, llvmOffloadErrorText, objdumpImageKindName, offloadKindText } from "../../formats/offload-binary.js";
import { readExact } from "../../engine/source.js";
import { objdumpOffloading } from "../../inspect/objdump.js";
import { locate } from "../../inspect/locate.js";
import { locationJson } from "../../inspect/location-json.js";
import type { Location, LocatedBundle, LocatedOffloadBinaries } from "../../inspect/locate.js";
import type { FoundEntry } from "../../inspect/scan.js";
import { collectOffloadImages } from "../../packager/collect.js";
import { codecDecompressor } from "../../compress/node/packager-codecs.js";
import { withCcobPrefetch } from "../../compress/node/decompress.js";
import { withFile } from "../../node/file-source.js";
import { forEachInput } from "../../packages/node/inputs.js";
import type { InputWalk } from "../../packages/node/inputs.js";
import { holdsOffloadCode } from "../../inspect/node/check.js";
import { forEachPath } from "../../inspect/node/folders.js";
import { withKpackHost } from "../../kpack/node/location.js";
import { flagValue, listValue } from "../args.js";
import { printError, runGuarded } from "../io.js";
import type { Subcommand } from "./common.js";
import { FOLDERS_HELP, PATHS_OPTION, JSON_OPTION, KIT_CATEGORY, VERSION_TEXT, hex, pad, usageError } from "./common.js";
import type { CliIO } from "../io.js";
import { hasErrors, packageLine, printProblems, problemsJson, runGuardedAsync } from "./package-inputs.js";
import { emptyFoldersText, foldersJson, foldersNote, printUnreadable } from "./folders.js";

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

/** `AMDGPU code object v5 (linked, ET_DYN)`: what the ELF header says of a standalone code object. */
function codeObjectKind(bundle: LocatedBundle): string {
  const object = bundle.codeObject!;
  const version = object.codeObjectVersion === undefined ? ` (OS ABI ${object.osAbi}, ABI version ${object.abiVersion})` : ` v${object.codeObjectVersion}`;
  const type = object.type === 1 ? "relocatable, ET_REL" : object.type === 3 ? "linked, ET_DYN" : `e_type ${object.type}`;
  const generic = object.genericVersion > 0 ? `, generic version ${object.genericVersion}` : "";
  return `AMDGPU code object${version} (${type}${generic})`;
}

/** `kpack archive entry 'stage/bin/app#0'`, or for a kpack'd host: `HIPK wrapper 0 (co_index 0), key ...: code objects from ...`. */
function kpackKind(bundle: LocatedBundle): string {
  const info = bundle.kpack!;
  const compression = bundle.entries.some((e) => e.kpack?.compression === "zstd-per-kernel") ? " (zstd-per-kernel)" : "";
  if (info.wrapper === undefined) return `kpack archive key '${info.key}'${compression}`;
  const archives = new Set(bundle.entries.map((e) => e.kpack?.archive)).size;
  const from = archives === 0 ? "no archive found" : `code objects from ${archives} archive${archives === 1 ? "" : "s"}`;
  return `HIPK wrapper ${info.wrapper.index} (co_index ${info.wrapper.coIndex}), key '${info.key}'${compression}, ${from}`;
}

/** A kpack'd host's code object names its archive (its offset is a position there). */
function kpackEntryText(entry: FoundEntry): string {
  const info = entry.kpack;
  if (info?.archive === undefined) return "";
  const stored = info.compression === "zstd-per-kernel" ? `, zstd frame of ${info.storedSize} bytes at ${hex(info.storedOffset)}` : "";
  return `  (in ${info.archive} as ${info.arch}${stored})`;
}

function bundleKind(bundle: LocatedBundle): string {
  if (bundle.format === "text") return `text bundle ('${bundle.comment}' markers)`;
  if (bundle.format === "object") return "fat object (__CLANG_OFFLOAD_BUNDLE__ sections)";
  if (bundle.format === "code-object") return codeObjectKind(bundle);
  if (bundle.format === "kpack") return kpackKind(bundle);
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
      offloadKindText(image.offloadKind, image.version), image.triple, image.arch, other,
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
    const rows = bundle.entries.map((e) => [hex(e.offset), String(e.size), String(e.align), byteStringToUnicode(e.id) + kpackEntryText(e)]);
    const widths = [6, 4, 5].map((w, i) => Math.max(w, ...rows.map((r) => r[i].length)));
    out += `  ${pad("OFFSET", widths[0])}  ${pad("SIZE", widths[1], true)}  ${pad("ALIGN", widths[2], true)}  ID\n`;
    for (const r of rows) out += `  ${pad(r[0], widths[0])}  ${pad(r[1], widths[1], true)}  ${pad(r[2], widths[2], true)}  ${r[3]}\n`;
  }
  for (const run of offload) out += formatOffload(path, run);
  for (const problem of report.problems) out += `${path}: at ${hex(problem.offset)}: ${problem.message}\n`;
  return out;
}

/** One file listed, not yet printed (a file found in a folder is printed only when it holds offload code). */
interface Listed {
  readonly json?: unknown;
  readonly text: string;
  /** The package's walk, for its problems. */
  readonly walk?: InputWalk;
  /** Set when a package member could not be read. */
  readonly failed: boolean;
  /** Whether the file is offload code by check's rule (src/inspect/node/check.ts holdsOffloadCode). */
  readonly offload: boolean;
  /** The file itself could not be read. */
  readonly error?: { readonly code: string; readonly message: string };
}

async function listFile(path: string, json: boolean): Promise<Listed> {
  try {
    const members: unknown[] = [];
    let withCode = 0;
    let text = "";
    let report: unknown;
    let offload = false;
    const walk = await forEachInput(path, ({ name: itemName, member, source }) => {
      const located = withCcobPrefetch({ recalculateHash: true }, (ccob) => locate(source, { ...ccob, decompressOffload: codecDecompressor() }));
      // A kpack'd host's code objects are in archives beside it on disk: looked for only for a file given or found.
      const location = member === undefined ? withKpackHost(path, source, located) : located;
      if (holdsOffloadCode(location)) offload = true;
      if (member === undefined) {
        if (json) report = locationJson(path, location);
        else text = formatReport(path, location);
        return;
      }
      // In a package, only members holding something (or failing) are shown.
      if (location.bundles.length === 0 && location.offloadBinaries.length === 0 && location.problems.length === 0) return;
      withCode++;
      if (json) members.push({ ...locationJson(itemName, location), member });
      else text += formatReport(itemName, location);
    }, { locateOnly: true });
    if (walk.package === undefined) return { json: report, text, failed: false, offload };
    const failed = hasErrors(walk);
    return {
      json: json ? { path, package: walk.package, members, problems: problemsJson(walk) } : undefined,
      text: json ? "" : packageLine(path, walk, withCode) + text,
      walk,
      failed,
      // A package that could not be read to the end counts in a folder, as check counts it.
      offload: offload || failed,
    };
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    return { text: "", failed: true, offload: true, error: { code: e.code, message: e.message } };
  }
}

export const ls: Subcommand = {
  summary: "List every offload bundle and offload binary in each file or folder (at its start or embedded): IDs, offsets, sizes, alignment, image kinds, triples.",
  spec: () => ({
    overview: `offload-kit ls: list the offload bundles and offload binaries in files and folders\n\n${FOLDERS_HELP}`,
    options: [
      PATHS_OPTION,
      JSON_OPTION,
      { name: "objdump", kind: "flag", description: "Print offload binaries exactly as llvm-objdump --offloading (19) does (files only: a folder is 'Is a directory', as there)", category: KIT_CATEGORY },
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
      const run = await forEachPath(files, {
        inspect: (path) => listFile(path, json),
        classify: (listed) => (listed.error !== undefined ? { unreadable: listed.error } : listed.offload ? "input" : "skipped"),
        use: (listed, path) => {
          if (listed.error !== undefined) {
            status = 1;
            if (json) reports.push({ path, error: listed.error });
            else printError(io, name, listed.error.message);
            return;
          }
          if (json) reports.push(listed.json);
          else io.stdout(listed.text);
          if (listed.walk !== undefined && !json) printProblems(io, name, listed.walk);
          if (listed.failed) status = 1;
        },
      });
      if (printUnreadable(io, name, run)) status = 1;
      if (json) io.stdout(`${JSON.stringify({ files: reports, ...foldersJson(run) }, null, 2)}\n`);
      else if (run.folders) io.stdout(`${emptyFoldersText(run)}${foldersNote(run)}\n`);
      return status;
    });
  },
};
