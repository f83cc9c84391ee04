/**
 * `offload-kit ls FILE|DIR... [-v] [--json] [--objdump]`: every offload bundle and every offload binary in each
 * file, at its start or embedded; folders are walked as check walks them (src/inspect/node/folders.ts), files
 * found without offload code skipped and counted. One line per file (what it holds, by target) and one total;
 * `-v` lists each bundle's entries and each image, `--json` everything. `--objdump` prints instead exactly what `llvm-objdump --offloading` (19) prints
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
import { FOLDERS_HELP, PATHS_OPTION, JSON_OPTION, KIT_CATEGORY, VERSION_TEXT, Warnings, examplesHelp, hex, namedTargets, pad, plural, shortTarget, usageError, verboseOption } from "./common.js";
import type { CliIO } from "../io.js";
import { hasErrors, packageLine, printProblems, problemsJson, recordPackageWarnings, runGuardedAsync } from "./package-inputs.js";
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
  if (bundle.format === "cubin") return `CUDA cubin (EM_CUDA ELF, ABI version ${bundle.cubin!.abiVersion}, e_flags 0x${bundle.cubin!.flags.toString(16)})`;
  if (bundle.format === "kpack") return kpackKind(bundle);
  return "binary bundle";
}

/** `; registered by 1 wrapper` or `; no wrapper points at it (never registered)`, where the wrappers were read. */
function wrapperText(wrappers: number | undefined): string {
  if (wrappers === undefined) return "";
  return wrappers === 0 ? "; no wrapper points at it (never registered)" : `; registered by ${wrappers} wrapper${wrappers === 1 ? "" : "s"}`;
}

/** An NVIDIA fatbin container: its entries as stored and as they decode (what `extract` writes). */
function formatNvFatbin(path: string, bundle: LocatedBundle): string {
  const info = bundle.nvFatbin!;
  const count = `${bundle.entries.length} entr${bundle.entries.length === 1 ? "y" : "ies"}`;
  let out = `${path}: NVIDIA fatbin container v${info.version} at ${hex(bundle.offset)}, ${bundle.size} bytes, ${count}${whereText(bundle)}${wrapperText(info.wrappers)}\n`;
  const rows = [["OFFSET", "STORED", "DECODED", "KIND", "COMPRESSION", "ID"]];
  bundle.entries.forEach((e, i) => {
    const entry = info.entries[i]!;
    const kind = entry.kind === 1 ? "PTX" : entry.kind === 2 ? "ELF" : `kind ${entry.kind}`;
    rows.push([hex(e.offset), String(e.size), String(entry.decodedSize), kind, entry.compression, e.id]);
  });
  return out + table(rows, [false, true, true, false, false, false]);
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
    if (bundle.format === "nv-fatbin") {
      out += formatNvFatbin(path, bundle);
      continue;
    }
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

/** What a file (or a package's members together) holds, counted: the summary line's words. */
interface Holdings {
  bundles: number;
  codeObjects: number;
  runs: number;
  entries: number;
  images: number;
  problems: number;
  readonly targets: Set<string>;
}

function mergeHoldings(into: Holdings, from: Holdings): void {
  into.bundles += from.bundles;
  into.codeObjects += from.codeObjects;
  into.runs += from.runs;
  into.entries += from.entries;
  into.images += from.images;
  into.problems += from.problems;
  for (const t of from.targets) into.targets.add(t);
}

function emptyHoldings(): Holdings {
  return { bundles: 0, codeObjects: 0, runs: 0, entries: 0, images: 0, problems: 0, targets: new Set() };
}

function addHoldings(into: Holdings, report: Location): void {
  // A standalone code object is found as a one-entry bundle; said as what it is.
  const objects = report.bundles.filter((b) => b.format === "code-object").length;
  into.codeObjects += objects;
  into.bundles += report.bundles.length - objects;
  into.runs += report.offloadBinaries.length;
  into.problems += report.problems.length;
  for (const bundle of report.bundles) {
    into.entries += bundle.entries.length;
    for (const e of bundle.entries) into.targets.add(shortTarget(byteStringToUnicode(e.id)));
  }
  for (const run of report.offloadBinaries) {
    into.images += run.images.length;
    for (const image of run.images) into.targets.add(byteStringToUnicode(image.arch) || byteStringToUnicode(image.triple));
  }
}

function holdingsText(h: Holdings): string {
  if (h.bundles === 0 && h.runs === 0 && h.codeObjects === 0) return `no offload bundles found${h.problems > 0 ? `, ${plural(h.problems, "problem")}` : ""}`;
  const parts = [
    ...(h.bundles > 0 ? [`${plural(h.bundles, "bundle")}, ${plural(h.entries - h.codeObjects, "entry", "entries")}`] : []),
    ...(h.codeObjects > 0 ? [plural(h.codeObjects, "code object")] : []),
    ...(h.runs > 0 ? [`${plural(h.images, "offload image")}`] : []),
    ...(h.problems > 0 ? [plural(h.problems, "problem")] : []),
  ];
  const targets = [...h.targets];
  return `${parts.join(", ")}${targets.length > 0 ? `: ${namedTargets(targets)}` : ""}`;
}

/** The default line for a file: what it holds; problems follow on their own lines, as with -v. */
function summaryLine(path: string, report: Location): string {
  const holdings = emptyHoldings();
  addHoldings(holdings, report);
  const size = report.bundles.length === 0 && report.offloadBinaries.length === 0 ? ` (${report.size} bytes)` : "";
  let out = `${path}: ${holdingsText(holdings)}${size}\n`;
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
  /** What it holds, for the run's total. */
  readonly holdings?: Holdings;
}

async function listFile(path: string, json: boolean, verbose: boolean): Promise<Listed> {
  try {
    const members: unknown[] = [];
    let withCode = 0;
    let text = "";
    let report: unknown;
    let offload = false;
    const holdings = emptyHoldings();
    const walk = await forEachInput(path, ({ name: itemName, member, source }) => {
      const located = withCcobPrefetch({ recalculateHash: true }, (ccob) => locate(source, { ...ccob, decompressOffload: codecDecompressor() }));
      // A kpack'd host's code objects are in archives beside it on disk: looked for only for a file given or found.
      const location = member === undefined ? withKpackHost(path, source, located) : located;
      if (holdsOffloadCode(location)) offload = true;
      if (member === undefined) {
        addHoldings(holdings, location);
        if (json) report = locationJson(path, location);
        else text = verbose ? formatReport(path, location) : summaryLine(path, location);
        return;
      }
      // In a package, only members holding something (or failing) are shown.
      if (location.bundles.length === 0 && location.offloadBinaries.length === 0 && location.problems.length === 0) return;
      withCode++;
      addHoldings(holdings, location);
      if (json) members.push({ ...locationJson(itemName, location), member });
      else if (verbose) text += formatReport(itemName, location);
    }, { locateOnly: true });
    if (walk.package === undefined) return { json: report, text, failed: false, offload, holdings };
    const failed = hasErrors(walk);
    // Without -v a package is one line: the package, then what its members hold together.
    const head = packageLine(path, walk, withCode);
    const packageText = verbose ? head + text : `${head.slice(0, -1)}; ${holdingsText(holdings)}\n`;
    return {
      holdings,
      json: json ? { path, package: walk.package, members, problems: problemsJson(walk) } : undefined,
      text: json ? "" : packageText,
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
      verboseOption("every bundle's entries and every offload image: offset, size, alignment, ID"),
      { name: "objdump", kind: "flag", description: "Print offload binaries exactly as llvm-objdump --offloading (19) does (files only: a folder is 'Is a directory', as there)", category: KIT_CATEGORY },
    ],
    version: VERSION_TEXT,
    epilogue: examplesHelp([
      { command: "offload-kit ls examples/sample/app.hipfb", what: "One line: the bundles and entries the file holds, and their targets" },
      { command: "offload-kit ls -v /opt/rocm/lib", what: "Every offload file in the folder, each bundle's entries listed" },
      { command: "offload-kit ls --json lib/libfoo.so", what: "Everything, for scripts" },
    ]),
  }),
  run(values, { name, io }) {
    const files = listValue(values, "files");
    if (files.length === 0) return usageError(io, name, "no input files");
    const json = flagValue(values, "json");
    const verbose = flagValue(values, "verbose");
    if (flagValue(values, "objdump")) return objdump(files, name, io);
    const warnings = new Warnings(io, name);
    return runGuardedAsync(io, name, async () => {
      let status = 0;
      const reports: unknown[] = [];
      const total = emptyHoldings();
      let count = 0;
      const run = await forEachPath(files, {
        inspect: (path) => listFile(path, json, verbose),
        classify: (listed) => (listed.error !== undefined ? { unreadable: listed.error } : listed.offload ? "input" : "skipped"),
        use: (listed, path) => {
          if (listed.error !== undefined) {
            status = 1;
            if (json) reports.push({ path, error: listed.error });
            else printError(io, name, listed.error.message);
            return;
          }
          count++;
          if (listed.holdings !== undefined) mergeHoldings(total, listed.holdings);
          if (json) reports.push(listed.json);
          else io.stdout(listed.text);
          if (listed.walk !== undefined) recordPackageWarnings(warnings, listed.walk);
          if (listed.walk !== undefined && !json) printProblems(io, name, listed.walk);
          if (listed.failed) status = 1;
        },
      });
      if (printUnreadable(io, name, run)) status = 1;
      if (json) io.stdout(`${JSON.stringify({ files: reports, ...foldersJson(run), warnings: warnings.list }, null, 2)}\n`);
      else {
        io.stdout(emptyFoldersText(run));
        // One total per run, when there is more than one file to add up.
        if (count > 1 || (run.folders && count > 0)) io.stdout(`total (${plural(count, "file")}): ${holdingsText(total)}\n`);
        if (run.folders) io.stdout(`${foldersNote(run)}\n`);
      }
      return status;
    });
  },
};
