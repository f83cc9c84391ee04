/**
 * The output options `prune`, `compress` and `decompress` share: -o, --out-dir, --in-place, --dry-run, --copy,
 * --verbose, and their report: by default one line per file (what it holds, bytes before and after, saved)
 * and one total; per-entry rows under --verbose; everything, warnings and notes included, in --json.
 */
import { byteStringToUnicode } from "../../formats/bytes.js";
import { parseOffloadTarget } from "../../target-id/entry-id.js";
import type { PathsEdit, TreeOutcome } from "../../trees/apply.js";
import type { EntryOutcome } from "../../prune/index.js";
import type { OptionSpec, OptionValue } from "../args.js";
import { flagValue, parseLlvmInt, stringValue } from "../args.js";
import type { Destination, FileEdit, OpenedInputs } from "../../prune/node.js";
import { destinations } from "../../prune/node.js";
import type { Codecs } from "../../compress/codecs.js";
import { OffloadKitError } from "../../engine/errors.js";
import { namedDirectory } from "../../inspect/node/folders.js";
import { editZipPackage, isZipFile } from "../../packages/node/edit-zip.js";
import { editDebPackage, isDebFile } from "../../packages/node/edit-deb.js";
import { editImageLayout, editImagePackage, isImageFile, isImageLayout } from "../../packages/node/edit-image.js";
import { nestedEditor, packageEditor } from "../../packages/node/editors.js";
import type { PackageEditor } from "../../packages/node/editors.js";
import type { ZipPackageEdit } from "../../packages/node/edit-zip.js";
import type { ByteSource } from "../../engine/source.js";
import { openNamedMember } from "../../packages/node/inputs.js";
import type { CliIO } from "../io.js";
import type { PlannedEdit } from "../../prune/index.js";
import { printError, printWarning } from "../io.js";
import { KIT_CATEGORY as category, plural } from "./common.js";

export const OUTPUT_OPTIONS: readonly OptionSpec[] = [
  { name: "o", kind: "string", valueName: "file", description: "Write the output to <file> (one input only)", category },
  { name: "out-dir", kind: "string", valueName: "dir", description: "Write each output to <dir>/<input file name> (the folder must exist)", category },
  { name: "in-place", kind: "flag", description: "Replace each input (written beside it, renamed over it at the end; mode kept)", category },
  { name: "dry-run", kind: "flag", description: "Say what would change and the bytes saved; write nothing", category },
  { name: "copy", kind: "flag", description: "With --out-dir and a folder: copy the files left unchanged instead of hard-linking them", category },
  { name: "verbose", kind: "flag", aliases: [{ name: "v", description: "Alias for --verbose" }], description: "Print every entry and note under each file", category },
];

/** What --help says of folders for the editing commands. */
export const EDIT_FOLDERS_HELP =
  "A folder is walked as ls and check walk it, links not followed: its files with device code are edited\n" +
  "(--in-place) or the folder is mirrored at <dir>/<folder name> (--out-dir; files left unchanged hard-linked,\n" +
  "or copied with --copy; symbolic links kept as links); other files are not touched.\n";

/** The destination the options name, or a usage message. */
export function destinationOf(values: Record<string, OptionValue>): Destination | string {
  const output = stringValue(values, "o");
  const outDir = stringValue(values, "out-dir");
  const inPlace = flagValue(values, "in-place");
  const dryRun = flagValue(values, "dry-run");
  const given = [output !== "", outDir !== "", inPlace].filter(Boolean).length;
  if (given > 1) return "give only one of -o, --out-dir and --in-place";
  if (dryRun) return { kind: "dry-run" };
  if (output !== "") return { kind: "output", path: output };
  if (outDir !== "") return { kind: "out-dir", dir: outDir };
  if (inPlace) return { kind: "in-place" };
  return "say where the output goes: -o <file>, --out-dir=<dir> or --in-place (or --dry-run)";
}

export function percent(part: number, whole: number): string {
  return whole === 0 ? "0.0%" : `${((100 * part) / whole).toFixed(1)}%`;
}

/** The GPU an entry is for (`gfx90a:xnack-`), `host`, or the ID itself when it names none. */
export function entryGpu(entry: EntryOutcome): string {
  if (entry.host) return "host";
  const id = byteStringToUnicode(entry.id);
  try {
    const targetId = parseOffloadTarget(id).targetId;
    return targetId === "" ? id : targetId;
  } catch {
    return id;
  }
}

/** ` (host, gfx906, gfx90a:xnack-)`: the GPUs a file holds code for, each once, in file order. */
function holdsText(entries: readonly EntryOutcome[] | undefined): string {
  if (entries === undefined || entries.length === 0) return "";
  const gpus = [...new Set(entries.map(entryGpu))];
  return ` (${entries.length} ${entries.length === 1 ? "entry" : "entries"}: ${gpus.join(", ")})`;
}

/** `; drops gfx906, gfx1100`: the GPUs whose every entry goes. */
function dropsText(entries: readonly EntryOutcome[] | undefined, dryRun: boolean): string {
  if (entries === undefined) return "";
  const dropped = [...new Set(entries.filter((e) => !e.kept).map(entryGpu))];
  return dropped.length === 0 ? "" : `; ${dryRun ? "would drop" : "dropped"} ${dropped.join(", ")}`;
}

/** One line per file: what it holds, sizes before and after, the bytes saved, and where it went. */
export function sizeLine(edit: FileEdit<PlannedEdit>, dryRun: boolean): string {
  const p = edit.planned!;
  const entries = (p as { readonly entries?: readonly EntryOutcome[] }).entries;
  if (p.container === "not editable") return `${edit.input}: ${p.notes[0] ?? "left as it is"}\n`;
  const inputSize = p.inputSize;
  const outputSize = edit.outputSize ?? inputSize;
  const saved = inputSize - outputSize;
  // Unchanged in place: nothing was written, so no "(in place)".
  const where = dryRun || edit.output === undefined ? "" : edit.output === edit.input ? (p.plan === undefined ? "" : " (in place)") : ` -> ${edit.output}`;
  const verb = saved >= 0 ? (dryRun ? "would save" : "saves") : dryRun ? "would add" : "adds";
  const change = p.plan === undefined ? `${inputSize} bytes, unchanged` : `${inputSize} -> ${outputSize} bytes, ${verb} ${Math.abs(saved)} (${percent(Math.abs(saved), inputSize)})`;
  return `${edit.input}: ${p.container}${holdsText(entries)}, ${change}${dropsText(entries, dryRun)}${where}\n`;
}

/** Bytes of code dropped, per GPU, over every file (prune). */
export function droppedByGpu(edits: readonly FileEdit<PlannedEdit>[]): { gpu: string; entries: number; bytes: number }[] {
  const byGpu = new Map<string, { gpu: string; entries: number; bytes: number }>();
  for (const edit of edits) {
    for (const entry of (edit.planned as { readonly entries?: readonly EntryOutcome[] } | undefined)?.entries ?? []) {
      if (entry.kept) continue;
      const gpu = entryGpu(entry);
      const row = byGpu.get(gpu) ?? { gpu, entries: 0, bytes: 0 };
      row.entries++;
      row.bytes += entry.size;
      byGpu.set(gpu, row);
    }
  }
  return [...byGpu.values()];
}

export interface EditTotal {
  readonly files: number;
  readonly changed: number;
  readonly inputSize: number;
  readonly outputSize: number;
  readonly saved: number;
}

/** The run's one total: files edited (or that would be), bytes before and after. */
export function editTotal(edits: readonly FileEdit<PlannedEdit>[]): EditTotal {
  const done = edits.filter((e) => e.planned !== undefined);
  const inputSize = done.reduce((n, e) => n + e.planned!.inputSize, 0);
  const outputSize = done.reduce((n, e) => n + (e.outputSize ?? e.planned!.inputSize), 0);
  return { files: done.length, changed: done.filter((e) => e.planned!.plan !== undefined).length, inputSize, outputSize, saved: inputSize - outputSize };
}

/** `venv: 1200 files, 12 with device code, ...`: one line per folder named. */
export function treeLine(tree: TreeOutcome, dryRun: boolean): string {
  const parts = [
    plural(tree.files, "file"),
    `${tree.withDeviceCode} with device code`,
    ...(tree.notEditable.length > 0 ? [`${tree.notEditable.length} of them left as they are (nothing this command edits)`] : []),
    ...(tree.symlinks > 0 ? [`${plural(tree.symlinks, "symbolic link")} kept as links`] : []),
    ...(tree.linksLeavingTree.length > 0 ? [`${tree.linksLeavingTree.length} of them pointing outside the folder (not followed)`] : []),
    ...(tree.linkedFromOutside.length > 0 ? [`${plural(tree.linkedFromOutside.length, "file")} also hard-linked from outside the folder`] : []),
    ...(tree.hardLinked > 0 ? [`${plural(tree.hardLinked, "hard-linked file")} (edited once)`] : []),
    ...(tree.special.length > 0 ? [`${plural(tree.special.length, "special file")} skipped`] : []),
    ...(tree.unreadable.length > 0 ? [`${plural(tree.unreadable.length, "entry", "entries")} could not be read`] : []),
    ...(tree.removed.length > 0 ? [`${plural(tree.removed.length, "file")} ${dryRun ? "would be removed" : "removed"} (all its code for dropped GPUs)`] : []),
  ];
  const mirror = tree.mirror === undefined || dryRun ? "" : ` -> ${tree.mirror} (${tree.linked} unchanged files hard-linked, ${tree.copied} copied)`;
  const removed = tree.removed.map((r) => `  ${dryRun ? "would remove" : "removed"} ${r.path} (${r.reason})\n`).join("");
  return `${tree.root}: folder, ${parts.join(", ")}${mirror}\n${removed}`;
}

/** The closing lines: one total, and for prune the code dropped per GPU. */
export function totalText(total: EditTotal, byGpu: readonly { gpu: string; entries: number; bytes: number }[] | undefined, dryRun: boolean): string {
  const verb = total.saved >= 0 ? (dryRun ? "would save" : "saves") : dryRun ? "would add" : "adds";
  let text = `total: ${plural(total.files, "file")}, ${total.changed} ${dryRun ? "would change" : "changed"}, ${total.inputSize} -> ${total.outputSize} bytes, ${verb} ${Math.abs(total.saved)} (${percent(Math.abs(total.saved), total.inputSize)})\n`;
  if (byGpu !== undefined && byGpu.length > 0) {
    text += `  code ${dryRun ? "that would be " : ""}dropped, by GPU: ${byGpu.map((g) => `${g.gpu} ${plural(g.entries, "entry", "entries")} ${g.bytes} bytes`).join("; ")}\n`;
  }
  return text;
}

/** The tree's report for --json. */
export function treeJson(tree: TreeOutcome): Record<string, unknown> {
  return { ...tree };
}

/** Whether the run's report closes with a total: more than one file, or a folder. */
export function wantsTotal(result: PathsEdit<PlannedEdit>): boolean {
  return result.edits.length > 1 || result.trees.length > 0;
}

export function editJson(edit: FileEdit<PlannedEdit> & { readonly tree?: number }, trees: readonly TreeOutcome[] = []): Record<string, unknown> {
  const p = edit.planned;
  const outputSize = edit.outputSize ?? p?.inputSize;
  return {
    input: edit.input,
    ...(edit.tree === undefined ? {} : { folder: trees[edit.tree]?.root }),
    output: edit.output ?? null,
    ...(p === undefined ? {} : {
      container: p.container, changed: p.plan !== undefined, inputSize: p.inputSize, outputSize, saved: p.inputSize - outputSize!, notes: p.notes,
    }),
    ...(edit.error === undefined ? {} : { error: { code: edit.error.code, message: edit.error.message } }),
  };
}

export function LEVEL_OPTION(description: string): OptionSpec {
  return { name: "level", kind: "string", valueName: "n", description, category };
}

/** --level: undefined when not given, null when not an integer. */
function levelOption(values: Record<string, OptionValue>): number | undefined | null {
  const text = stringValue(values, "level");
  if (text === "") return undefined;
  return parseLlvmInt(text) ?? null;
}

/** What every editing subcommand reads from its options: where the output goes, --level, --json and the report. */
export interface EditOptions {
  readonly destination: Destination;
  readonly level: number | undefined;
  readonly json: boolean;
  readonly dryRun: boolean;
  readonly verbose: boolean;
  readonly copy: boolean;
  readonly report: (text: string) => void;
}

/** The options prune, compress, decompress and replace share, or the usage message for the first one wrong. */
export function editOptions(values: Record<string, OptionValue>, io: CliIO): EditOptions | string {
  const destination = destinationOf(values);
  if (typeof destination === "string") return destination;
  const level = levelOption(values);
  if (level === null) return `--level must be an integer, not '${stringValue(values, "level")}'`;
  const copy = flagValue(values, "copy");
  if (copy && destination.kind !== "out-dir" && destination.kind !== "dry-run") return "--copy goes with --out-dir (it says how a mirrored folder's unchanged files are made)";
  return {
    destination, level, json: flagValue(values, "json"), dryRun: destination.kind === "dry-run", verbose: flagValue(values, "verbose"), copy,
    report: reportStream(destination, io),
  };
}

/** Where the report goes: stdout, unless the output itself does (`-o -`), then stderr. */
function reportStream(destination: Destination, io: CliIO): (text: string) => void {
  return destination.kind === "output" && destination.path === "-" ? (text) => io.stderr(text) : (text) => io.stdout(text);
}

/** The zip packages named (src/packages/node/edit-zip.ts), edited before the other inputs. */
export type PackageEdits<P extends PlannedEdit> = readonly ZipPackageEdit<P>[];

/**
 * Edits each zip package among `files` into a package of the same kind at its destination (as a file's:
 * -o, --out-dir, --in-place; nothing in a dry run); returns them and the other inputs.
 */
export async function editZipPackages<P extends PlannedEdit>(
  files: readonly string[],
  destination: Destination,
  options: { readonly codecs: Codecs; readonly plan: (source: ByteSource, name: string) => P; readonly check?: (edits: readonly FileEdit<P>[]) => void; readonly progress?: (member: string, edit?: FileEdit<P>) => void; readonly copy?: boolean },
): Promise<{ readonly packages: ZipPackageEdit<P>[]; readonly rest: readonly string[] }> {
  // .deb, .conda and tarball packages too (src/packages/node/editors.ts), and image tarballs and OCI layout
  // folders (edit-image.ts: before the tarball writer, which refuses images because their digests would go stale).
  const editors = new Map<string, PackageEditor>();
  for (const f of files) {
    const editor = namedDirectory(f) ? (isImageLayout(f) ? editImageLayout : undefined) : isImageFile(f) ? editImagePackage : isDebFile(f) ? editDebPackage : (await packageEditor(f)) ?? (isZipFile(f) ? editZipPackage : undefined);
    if (editor !== undefined) editors.set(f, editor);
  }
  const zips = files.filter((f) => editors.has(f));
  if (zips.length === 0) return { packages: [], rest: files };
  if (destination.kind === "output" && files.length > 1) {
    throw new OffloadKitError("BAD_OPTIONS", `-o names one output, but ${files.length} inputs were given (use --out-dir or --in-place)`, { field: "-o" });
  }
  const outputs = destinations(zips, destination);
  const packages: ZipPackageEdit<P>[] = [];
  for (let i = 0; i < zips.length; i++) packages.push(await editors.get(zips[i]!)!(zips[i]!, outputs[i], { ...options, nested: nestedEditor(options) }));
  return { packages, rest: files.filter((f) => !zips.includes(f)) };
}

/** `x.whl: zip package, 5 members, 2 with device code, RECORD rewritten, 1000 -> 800 bytes, saves 200 (20.0%) -> y.whl`. */
export function packageEditLine(edit: ZipPackageEdit<PlannedEdit>, dryRun: boolean): string {
  const saved = edit.inputSize - edit.outputSize;
  const verb = saved >= 0 ? (dryRun ? "would save" : "saves") : dryRun ? "would add" : "adds";
  const changed = edit.edits.filter((e) => e.planned?.plan !== undefined).length;
  const parts = [
    `${(edit as { kind?: string }).kind ?? "zip"} package, ${plural(edit.members, "member")}, ${edit.withDeviceCode} with device code, ${changed} ${dryRun ? "would change" : "changed"}`,
    ...(edit.record === undefined ? [] : [`${edit.record} ${dryRun ? "would be " : ""}rewritten`]),
    changed === 0 ? `${edit.inputSize} bytes, unchanged` : `${edit.inputSize} -> ${edit.outputSize} bytes, ${verb} ${Math.abs(saved)} (${percent(Math.abs(saved), edit.inputSize)})`,
  ];
  const where = dryRun || edit.output === undefined ? "" : edit.output === edit.input ? (changed === 0 ? "" : " (in place)") : ` -> ${edit.output}`;
  return `${edit.input}: ${parts.join(", ")}${where}\n`;
}

export interface ReportOptions<P extends PlannedEdit> {
  readonly json: boolean;
  readonly dryRun: boolean;
  readonly verbose: boolean;
  readonly report: (text: string) => void;
  /** Said on stderr (and in --json `warnings`). */
  readonly warnings: readonly string[];
  /** Said on stderr as notes (and in --json `notes`). */
  readonly notes: readonly string[];
  /** Keys at the top of the --json report (the selection, the operation). */
  readonly head: Record<string, unknown>;
  /** --verbose rows under a file (prune's entries). */
  readonly rows?: (planned: P) => string;
  /** Keys added to a file's --json (prune's entries). */
  readonly fileJson?: (planned: P) => Record<string, unknown>;
  /** prune: the code dropped per GPU in the total. */
  readonly byGpu: boolean;
}

/** The report of prune, compress and decompress; returns the exit status (1 when some file failed). */
export function printEditReport<P extends PlannedEdit>(io: CliIO, name: string, result: PathsEdit<P>, options: ReportOptions<P>, packages: PackageEdits<P> = []): number {
  const { trees } = result;
  const { json, dryRun, verbose, report } = options;
  const memberEdits = packages.flatMap((p) => p.edits);
  const edits = [...memberEdits, ...result.edits];
  // The total counts packages by their own bytes (members are inside them).
  const files = editTotal(result.edits);
  const total: EditTotal = {
    files: files.files + packages.length,
    changed: files.changed + packages.filter((p) => p.edits.some((e) => e.planned?.plan !== undefined)).length,
    inputSize: files.inputSize + packages.reduce((n, p) => n + p.inputSize, 0),
    outputSize: files.outputSize + packages.reduce((n, p) => n + p.outputSize, 0),
    saved: files.saved + packages.reduce((n, p) => n + p.inputSize - p.outputSize, 0),
  };
  const byGpu = options.byGpu ? droppedByGpu(edits) : undefined;
  const unreadable = trees.some((t) => t.unreadable.length > 0);
  for (const warning of options.warnings) printWarning(io, name, warning);
  if (json) {
    report(`${JSON.stringify({
      ...options.head,
      dryRun,
      files: edits.map((e) => ({ ...editJson(e, trees), ...(e.planned === undefined || options.fileJson === undefined ? {} : options.fileJson(e.planned)) })),
      ...(trees.length === 0 ? {} : { folders: trees.map(treeJson) }),
      ...(packages.length === 0 ? {} : { packages: packages.map((p) => ({ input: p.input, output: p.output ?? null, format: (p as { kind?: string }).kind ?? "zip", members: p.members, withDeviceCode: p.withDeviceCode, record: p.record ?? null, inputSize: p.inputSize, outputSize: p.outputSize, saved: p.inputSize - p.outputSize })) }),
      total,
      ...(byGpu === undefined ? {} : { droppedByGpu: byGpu }),
      warnings: options.warnings,
      notes: options.notes,
    }, null, 2)}\n`);
  } else {
    for (const note of options.notes) io.stderr(`${name}: note: ${note}\n`);
    for (const tree of trees) for (const u of tree.unreadable) printError(io, name, u.message);
    for (const e of edits) {
      if (e.error !== undefined) {
        printError(io, name, e.error.message);
        continue;
      }
      report(sizeLine(e, dryRun));
      if (!verbose) continue;
      if (options.rows !== undefined) report(options.rows(e.planned!));
      for (const note of e.planned!.notes) report(`  note: ${note}\n`);
    }
    if (!verbose) {
      const notes = edits.reduce((n, e) => n + (e.planned?.container === "not editable" ? 0 : e.planned?.notes.length ?? 0), 0);
      if (notes > 0) report(`(${plural(notes, "note")} on these files: see --verbose)\n`);
    }
    for (const tree of trees) report(treeLine(tree, dryRun));
    for (const p of packages) if (p.refused === undefined) report(packageEditLine(p, dryRun));
    if (wantsTotal(result) || packages.length > 0) report(totalText(total, byGpu, dryRun));
  }
  return edits.some((e) => e.error !== undefined) || unreadable ? 1 : 0;
}

/**
 * The inputs named `pkg!member` (as `ls` prints them), each member kept for the edit (memory, or a temporary
 * file past 16 MiB); `close` drops them all. Only the members' own bytes are edited: the output is a plain file.
 */
export async function openMembers(files: readonly string[]): Promise<{ readonly opened: OpenedInputs; close(): void }> {
  const opened = new Map<string, ByteSource & { close(): void }>();
  const close = () => {
    for (const member of opened.values()) member.close();
  };
  try {
    for (const file of files) {
      const member = await openNamedMember(file);
      if (member !== undefined) opened.set(file, member);
    }
  } catch (e) {
    close();
    throw e;
  }
  return { opened, close };
}
