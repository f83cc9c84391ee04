/** What every offload-kit subcommand shares: the command table entry, option helpers, usage errors. */
import { LLVM_COMPAT_VERSION, PACKAGE_VERSION } from "../../version.js";
import type { OptionSpec, OptionValue, ToolSpec } from "../args.js";
import type { CliIO } from "../io.js";
import { printError } from "../io.js";

export const VERSION_TEXT = `offload-kit ${PACKAGE_VERSION} (clang-offload-* ${LLVM_COMPAT_VERSION} compatible)\n`;
export const KIT_CATEGORY = "offload-kit options";

export const FILES_OPTION: OptionSpec = { name: "files", kind: "string", list: true, positional: true, description: "<file>..." };
/** The inputs of ls, sizes, extract and check: files, and folders walked as check walks them (src/inspect/node/folders.ts). */
export const PATHS_OPTION: OptionSpec = { ...FILES_OPTION, description: "<file|dir>..." };
/** What their --help says about folders. */
export const FOLDERS_HELP =
  "A folder is walked as `find DIR` (without -L) walks it: a link named is followed, linked folders inside are not\n" +
  "entered, a linked file counts once; files without offload code are skipped and counted, packages found are\n" +
  "opened as when named, and entries that cannot be read are reported on stderr (and in --json 'unreadable').\n";
export const JSON_OPTION: OptionSpec = { name: "json", kind: "flag", description: "Print JSON instead of a table", category: KIT_CATEGORY };

export interface SubcommandContext {
  /** `<argv0> <command>`, for diagnostics. */
  readonly name: string;
  readonly io: CliIO;
  readonly isTTY: boolean;
}

export interface Subcommand {
  /** One line for `offload-kit --help`. */
  readonly summary: string;
  /** Options, parsed LLVM-style by src/cli/args.ts. */
  readonly spec: () => ToolSpec;
  readonly run: (values: Record<string, OptionValue>, context: SubcommandContext) => number | Promise<number>;
}

/**
 * offload-kit's exit statuses: 0 success (and an OK verdict), 1 a failure or a FAIL verdict, 2 a usage error
 * (unknown command, bad option or option value, no input files), as grep and diff keep "trouble" apart from a
 * negative answer, 70 a bug in offload-kit. The drop-in tools keep the native codes (1 for usage errors too).
 */
export const EXIT_USAGE = 2;

export function usageError(io: CliIO, name: string, message: string): number {
  printError(io, name, `${message} (see '${name} --help')`);
  return EXIT_USAGE;
}

/** `<file>: <message>`, unless the message already starts by naming the file (`'<file>': No such file ...`). */
export function inputMessage(file: string, message: string): string {
  return message.startsWith(`'${file}'`) ? message : `${file}: ${message}`;
}

/** A count and its noun: `1 entry`, `2 entries` (`many` defaults to the noun with an s). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

export function hex(n: number): string {
  return `0x${n.toString(16)}`;
}

export function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}
