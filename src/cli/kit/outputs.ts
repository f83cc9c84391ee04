/** The output options `prune`, `compress` and `decompress` share: -o, --out-dir, --in-place, --dry-run, and their report. */
import type { OptionSpec, OptionValue } from "../args.js";
import { flagValue, parseLlvmInt, stringValue } from "../args.js";
import type { Destination, FileEdit } from "../../prune/node.js";
import type { CliIO } from "../io.js";
import type { PlannedEdit } from "../../prune/index.js";
import { KIT_CATEGORY as category } from "./common.js";

export const OUTPUT_OPTIONS: readonly OptionSpec[] = [
  { name: "o", kind: "string", valueName: "file", description: "Write the output to <file> (one input only)", category },
  { name: "out-dir", kind: "string", valueName: "dir", description: "Write each output to <dir>/<input file name> (the folder must exist)", category },
  { name: "in-place", kind: "flag", description: "Replace each input (written beside it, renamed over it at the end; mode kept)", category },
  { name: "dry-run", kind: "flag", description: "Say what would change and the bytes saved; write nothing", category },
];

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

/** One line per file: sizes before and after, and where it went. */
export function sizeLine(edit: FileEdit<PlannedEdit>, dryRun: boolean): string {
  const p = edit.planned!;
  const inputSize = p.inputSize;
  const outputSize = edit.outputSize ?? inputSize;
  const saved = inputSize - outputSize;
  const where = dryRun ? "" : edit.output === edit.input ? " (in place)" : ` -> ${edit.output}`;
  const change = p.plan === undefined ? "unchanged" : `${inputSize} -> ${outputSize} bytes, ${saved >= 0 ? "saves" : "adds"} ${Math.abs(saved)} (${percent(Math.abs(saved), inputSize)})`;
  return `${edit.input}: ${p.container}, ${change}${where}\n`;
}

export function editJson(edit: FileEdit<PlannedEdit>): Record<string, unknown> {
  const p = edit.planned;
  const outputSize = edit.outputSize ?? p?.inputSize;
  return {
    input: edit.input,
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
  readonly report: (text: string) => void;
}

/** The options prune, compress, decompress and replace share, or the usage message for the first one wrong. */
export function editOptions(values: Record<string, OptionValue>, io: CliIO): EditOptions | string {
  const destination = destinationOf(values);
  if (typeof destination === "string") return destination;
  const level = levelOption(values);
  if (level === null) return `--level must be an integer, not '${stringValue(values, "level")}'`;
  return { destination, level, json: flagValue(values, "json"), dryRun: destination.kind === "dry-run", report: reportStream(destination, io) };
}

/** Where the report goes: stdout, unless the output itself does (`-o -`), then stderr. */
function reportStream(destination: Destination, io: CliIO): (text: string) => void {
  return destination.kind === "output" && destination.path === "-" ? (text) => io.stderr(text) : (text) => io.stdout(text);
}
