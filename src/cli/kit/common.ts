/** What every offload-kit subcommand shares: the command table entry, option helpers, usage errors. */
import { LLVM_COMPAT_VERSION, PACKAGE_VERSION } from "../../version.js";
import { statSync } from "node:fs";
import { resolve } from "node:path";
import type { DetachedValue, OptionSpec, OptionValue, ToolSpec } from "../args.js";
import { printArg } from "../args.js";
import type { CliIO } from "../io.js";
import { printError, printWarning } from "../io.js";

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

/**
 * `--verbose` / `-v`: the rows under each file's summary line. Without it a command prints one line per
 * file and one total, so a library with hundreds of entries answers in a screen; --json is complete either way.
 */
export function verboseOption(rows: string): OptionSpec {
  return { name: "verbose", kind: "flag", description: `Also print ${rows} (--json always holds them)`, category: KIT_CATEGORY, aliases: [{ name: "v", description: "Alias for --verbose" }] };
}

/** One `--help` example: the command line as typed (`offload-kit ...`) and what it does. */
export interface Example {
  readonly command: string;
  readonly what: string;
}

/** The EXAMPLES section every subcommand's --help ends with (ToolSpec.epilogue). */
export function examplesHelp(examples: readonly Example[]): string {
  return `EXAMPLES:\n${examples.map((e) => `  ${e.command}\n      ${e.what}\n`).join("")}`;
}

/** A warning or note as --json carries it: what stderr said, with a code to match on and the file it is about. */
export interface KitWarning {
  readonly code: string;
  readonly message: string;
  readonly path?: string;
}

/**
 * Warnings and notes said on stderr and kept for --json (`warnings: [...]`), so a pipeline reading only stdout
 * sees them too. The stderr text is unchanged: `<name>: warning: <path>: <message>`.
 */
export class Warnings {
  readonly list: KitWarning[] = [];

  constructor(
    private readonly io: CliIO,
    private readonly name: string,
  ) {}

  warn(code: string, message: string, path?: string): void {
    printWarning(this.io, this.name, path === undefined ? message : inputMessage(path, message));
    this.list.push({ code, message, ...(path === undefined ? {} : { path }) });
  }

  /** A note: worth knowing, nothing wrong (`<name>: note: ...`). */
  note(code: string, message: string, path?: string): void {
    this.io.stderr(`${this.name}: note: ${path === undefined ? message : inputMessage(path, message)}\n`);
    this.list.push({ code, message, ...(path === undefined ? {} : { path }) });
  }

  /** Records a warning already printed by code that prints its own (a callback's text). */
  record(code: string, message: string, path?: string): void {
    this.list.push({ code, message, ...(path === undefined ? {} : { path }) });
  }
}

/**
 * An option written without `=` takes the next argument as its value (`--keep r.so`), as LLVM's parser does.
 * When that word names an existing file or folder it was almost surely meant as an input, and taking it
 * silently would run the command on the wrong thing: refuse, saying what was taken. Options whose value is a
 * path (-o <file>, --out-dir=<dir>) are exempt. Returns the usage message, or undefined.
 */
export function detachedInputMessage(detached: readonly DetachedValue[], cwd: string): string | undefined {
  for (const d of detached) {
    if (d.takesPath || d.value === "" || d.value.startsWith("-")) continue;
    let exists = false;
    try {
      statSync(resolve(cwd, d.value));
      exists = true;
    } catch {
      exists = false;
    }
    if (!exists) continue;
    const option = printArg(d.option);
    return `${d.written} took '${d.value}' as its value, but '${d.value}' is an existing file or folder: write ${option}=<value> (or ${option}=${d.value} if that was meant)`;
  }
  return undefined;
}

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

/** `gfx90a:xnack-` for `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`, `host` for a host entry: the part that tells entries apart. */
export function shortTarget(id: string): string {
  if (id.startsWith("host-")) return "host";
  const cut = id.lastIndexOf("--");
  return cut < 0 || cut + 2 === id.length ? id : id.slice(cut + 2);
}

/** Targets named on a summary line: the first `most`, then how many more (`-v` lists every entry). */
export function namedTargets(targets: readonly string[], most = 8): string {
  return targets.slice(0, most).join(", ") + (targets.length > most ? `, +${targets.length - most} more` : "");
}

export function hex(n: number): string {
  return `0x${n.toString(16)}`;
}

export function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}
