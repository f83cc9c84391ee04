/**
 * LLVM `cl::` command-line parsing as LLVM 19 does it, so that our CLIs accept the same spellings and fail
 * with the same words, order and exit codes as the native clang-offload-* tools.
 *
 * Follows llvm/lib/Support/CommandLine.cpp: `CommandLineParser::ParseCommandLineOptions` (the main loop,
 * positional distribution, required-option check), `LookupOption`, `HandlePrefixedOrGroupedOption`,
 * `LookupNearestOption` (the "Did you mean" suggestion), `ProvideOption`, `CommaSeparateAndAddOccurrence`,
 * `Option::error`, the `parser<T>::parse` specialisations, `ExpansionContext::expandResponseFiles` and
 * `TokenizeGNUCommandLine`; and llvm/lib/Support/StringRef.cpp for `getAsInteger` (radix sensing, overflow).
 * Every rule below was checked against clang-offload-bundler-19 and clang-offload-packager-19
 * (test/differential/args-native.test.ts).
 *
 * The module is pure: response files are read through the caller's `ResponseFileReader`, and output is
 * returned as text, never written. What is deliberately not modelled: subcommands, cl::Sink, cl::ConsumeAfter,
 * cl::Prefix / cl::AlwaysPrefix, PositionalEatsArgs, environment-variable options, Windows tokenisation, and the
 * `-h` DefaultOption alias of --help (every offload tool declares its own hidden `-h` flag instead).
 */

import { renderHelp, type HelpMode } from "./help.js";

export type OptionKind = "flag" | "string" | "uint" | "int" | "enum";

/** `true` is cl::Hidden (shown by --help-hidden); "really" is cl::ReallyHidden (never shown, never suggested). */
export type Visibility = boolean | "really";

export interface EnumValueSpec {
  name: string;
  description: string;
}

/** A cl::alias: its own name, description and visibility, forwarding values to the option it names. */
export interface AliasSpec {
  name: string;
  description: string;
  hidden?: Visibility;
}

export type OptionValue = boolean | number | string | Array<boolean | number | string>;

export interface OptionSpec {
  /** The cl::opt ArgStr ("type", "###", "o"); for a positional option only the key in `values`. */
  name: string;
  kind: OptionKind;
  /** cl::list: repeatable, values accumulate. */
  list?: boolean;
  /** cl::CommaSeparated: each occurrence is split at every ',' (empty pieces kept). */
  commaSeparated?: boolean;
  /** cl::Required (cl::OneOrMore for a list). */
  required?: boolean;
  /** cl::Positional: takes the arguments that do not start with '-'. */
  positional?: boolean;
  /** cl::value_desc, shown in help as `=<valueName>`; defaults to LLVM's parser name (string, uint, int). */
  valueName?: string;
  /** cl::desc; may hold '\n', continuation lines are indented under the first. */
  description: string;
  hidden?: Visibility;
  /** cl::cat name; options without one belong to LLVM's "General options". */
  category?: string;
  aliases?: AliasSpec[];
  /** cl::values for kind "enum", in declaration order. */
  values?: EnumValueSpec[];
  /** cl::init; otherwise false, 0, "" or []. */
  default?: OptionValue;
  /**
   * A flag the tool tests right after parsing with `if (Help) { cl::PrintHelpMessage(); return 0; }`, as the
   * bundler and packager do for their hidden `-h`: when set, a successful parse answers with the uncategorised
   * help list and exit code 0.
   */
  helpAfterParse?: boolean;
}

export interface ToolSpec {
  /** The overview passed to cl::ParseCommandLineOptions, printed after "OVERVIEW: " verbatim. */
  overview: string;
  options: OptionSpec[];
  /** Exactly what --version prints on stdout, final newline included. */
  version: string;
  /**
   * The order in which the native tool's option table (an llvm::StringMap, so hash order) lists the option
   * names that are not ReallyHidden, generic options included. It breaks ties between equally near
   * suggestions and orders "must be specified" errors. Measured against the native binary; names left out
   * follow in declaration order, after the listed ones.
   */
  mapOrder?: string[];
  /** LLVM <= 14 rejected a repeated cl::opt ("may only occur zero or one times!"); LLVM 15+ keeps the last. */
  singleOccurrence?: boolean;
  /**
   * LLVM 14's help layout: a single-letter option's value is shown as `-o=<file>` (not `-o <file>`), and
   * --help-hidden lists every registered category, empty ones included ("This option category has no
   * options."), with its description. The categories the tool's libraries register are listed here.
   */
  llvm14Help?: { categories: { name: string; description?: string }[] };
  /** Text printed after the options by --help (offload-kit's EXAMPLES); LLVM's tools have none. */
  epilogue?: string;
}

/** A value taken from the argument after its option (`--keep r.so`), not written with `=`. */
export interface DetachedValue {
  /** The option's name as declared (an alias's target). */
  readonly option: string;
  /** The option as written (`--keep`, `-o`). */
  readonly written: string;
  readonly value: string;
  /** Whether the option's cl::value_desc names a path (`file`, `dir`, `path`): such a value may well exist. */
  readonly takesPath: boolean;
}

export type ParseResult =
  | {
      kind: "ok";
      values: Record<string, OptionValue>;
      occurrences: Record<string, number>;
      /** Where each value came from: its argument's index (after response-file expansion), like cl::list getPosition. */
      positions: Record<string, number[]>;
      /** Values taken from the next argument, for offload-kit's rule against taking an input as a value. */
      detached: DetachedValue[];
      /**
       * Text LLVM printed without stopping the tool. Only a response-file failure does that: the message is
       * printed, nothing is parsed, and the tool carries on with every option at its default.
       */
      stderr: string;
    }
  | { kind: "exit"; code: number; stdout: string; stderr: string };

/**
 * Reads `@file` response files. Returns the file's bytes (preferred: BOMs are then handled as LLVM does) or
 * text; `undefined` when the file does not exist (LLVM then keeps `@file` as a plain argument); or
 * `{ error }` with the strerror text ("Is a directory") when it exists but cannot be read.
 */
export interface ResponseFileReader {
  /** Absolute current directory; relative names, nested ones included, resolve against it. */
  cwd: string;
  readFile(absolutePath: string): Uint8Array | string | undefined | { error: string };
}

type ValueExpected = "required" | "optional" | "disallowed";
type GenericAction = "help" | "help-hidden" | "help-list" | "help-list-hidden" | "version" | "none";

/** One named entry of the option table (an option, a cl::alias, or a generic option), or a positional. */
export interface TableEntry {
  name: string;
  kind: OptionKind;
  list: boolean;
  commaSeparated: boolean;
  required: boolean;
  positional: boolean;
  valueName: string;
  description: string;
  visibility: "shown" | "hidden" | "really";
  category: string;
  values: EnumValueSpec[];
  valueExpected: ValueExpected;
  action: GenericAction;
  /** The option a cl::alias forwards to; the key under which values are stored otherwise. */
  target: TableEntry | undefined;
  /** Single-letter names get cl::Grouping (Option::setArgStr). */
  grouping: boolean;
  spec: OptionSpec | undefined;
}

export interface OptionTable {
  tool: ToolSpec;
  /** Named entries in the native map order. */
  named: TableEntry[];
  byName: Map<string, TableEntry>;
  positionals: TableEntry[];
}

export const GENERAL_CATEGORY = "General options";
export const GENERIC_CATEGORY = "Generic Options";

interface GenericSpec {
  name: string;
  description: string;
  hidden: boolean;
  action: GenericAction;
}

// The options CommandLine.cpp registers in every tool (CommandLineCommonOptions), in that order.
const GENERIC_OPTIONS: GenericSpec[] = [
  { name: "help-list", description: "Display list of available options (--help-list-hidden for more)", hidden: true, action: "help-list" },
  { name: "help-list-hidden", description: "Display list of all available options", hidden: true, action: "help-list-hidden" },
  { name: "help", description: "Display available options (--help-hidden for more)", hidden: false, action: "help" },
  { name: "help-hidden", description: "Display all available options", hidden: true, action: "help-hidden" },
  { name: "print-options", description: "Print non-default options after command line parsing", hidden: true, action: "none" },
  { name: "print-all-options", description: "Print all option values after command line parsing", hidden: true, action: "none" },
  { name: "version", description: "Display the version of this program", hidden: false, action: "version" },
];

/** cl::value_desc texts that say the value is a path. */
const PATH_VALUE_NAMES = new Set(["file", "dir", "path", "filename", "directory"]);

const DEFAULT_VALUE_NAMES: Record<OptionKind, string> = { flag: "", string: "string", uint: "uint", int: "int", enum: "value" };

function visibilityOf(hidden: Visibility | undefined): TableEntry["visibility"] {
  if (hidden === "really") return "really";
  return hidden ? "hidden" : "shown";
}

/** Builds the option table of a tool: its own options and aliases, then LLVM's generic options. */
export function buildOptionTable(tool: ToolSpec): OptionTable {
  const declared: TableEntry[] = [];
  const positionals: TableEntry[] = [];
  for (const spec of tool.options) {
    const entry: TableEntry = {
      name: spec.name,
      kind: spec.kind,
      list: spec.list ?? false,
      commaSeparated: spec.commaSeparated ?? false,
      required: spec.required ?? false,
      positional: spec.positional ?? false,
      valueName: spec.valueName ?? DEFAULT_VALUE_NAMES[spec.kind],
      description: spec.description,
      visibility: visibilityOf(spec.hidden),
      category: spec.category ?? GENERAL_CATEGORY,
      values: spec.values ?? [],
      valueExpected: spec.kind === "flag" ? "optional" : "required",
      action: "none",
      target: undefined,
      grouping: spec.name.length === 1 && !spec.positional,
      spec,
    };
    if (entry.positional) {
      positionals.push(entry);
      continue;
    }
    declared.push(entry);
    for (const alias of spec.aliases ?? []) {
      declared.push({
        ...entry,
        name: alias.name,
        description: alias.description,
        visibility: visibilityOf(alias.hidden),
        target: entry,
        grouping: alias.name.length === 1,
        required: false,
      });
    }
  }
  for (const generic of GENERIC_OPTIONS) {
    declared.push({
      name: generic.name,
      kind: "flag",
      list: false,
      commaSeparated: false,
      required: false,
      positional: false,
      valueName: "",
      description: generic.description,
      visibility: generic.hidden ? "hidden" : "shown",
      category: GENERIC_CATEGORY,
      values: [],
      // The help printers and --version are declared cl::ValueDisallowed; the two print flags are plain bools.
      valueExpected: generic.action === "none" ? "optional" : "disallowed",
      action: generic.action,
      target: undefined,
      grouping: false,
      spec: undefined,
    });
  }
  const byName = new Map<string, TableEntry>();
  for (const entry of declared) {
    if (byName.has(entry.name)) throw new Error(`option '${entry.name}' registered more than once`);
    byName.set(entry.name, entry);
  }
  const named: TableEntry[] = [];
  for (const name of tool.mapOrder ?? []) {
    const entry = byName.get(name);
    if (entry && !named.includes(entry)) named.push(entry);
  }
  for (const entry of declared) if (!named.includes(entry)) named.push(entry);
  return { tool, named, byName, positionals };
}

/** basename as llvm::sys::path::filename gives it (the program name in messages and USAGE). */
export function programName(argv0: string): string {
  if (argv0 === "") return "";
  if (/^\/+$/.test(argv0)) return "/";
  if (argv0.endsWith("/")) return ".";
  return argv0.slice(argv0.lastIndexOf("/") + 1);
}

/** PrintArg: one dash before a one-letter name, two before longer ones. */
export function printArg(name: string): string {
  return (name.length === 1 ? "-" : "--") + name;
}

/** Formats the help text LLVM prints for --help (categorized) or --help-list (not), hidden or not. */
export function formatHelp(tool: ToolSpec, argv0: string, mode: HelpMode): string {
  return renderHelp(buildOptionTable(tool), programName(argv0), mode);
}

// ---------------------------------------------------------------------------------------------------------
// Scalar parsers (parser<bool>, parser<unsigned>, parser<int>, generic enum parser)

const U64 = 1n << 64n;

function autoSenseRadix(text: string): [number, string] {
  if (text === "") return [10, text];
  const lower = text.slice(0, 2).toLowerCase();
  if (lower === "0x") return [16, text.slice(2)];
  if (lower === "0b") return [2, text.slice(2)];
  // "0o" is matched case-sensitively in StringRef.cpp, unlike 0x and 0b.
  if (text.startsWith("0o")) return [8, text.slice(2)];
  if (text[0] === "0" && text.length > 1 && text[1]! >= "0" && text[1]! <= "9") return [8, text.slice(1)];
  return [10, text];
}

function digitValue(char: string): number {
  const code = char.charCodeAt(0);
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 122) return code - 97 + 10;
  if (code >= 65 && code <= 90) return code - 65 + 10;
  return 99;
}

/** getAsUnsignedInteger with radix 0: the whole text must be consumed, 64-bit overflow is an error. */
function parseUnsigned64(text: string): bigint | undefined {
  const [radix, digits] = autoSenseRadix(text);
  if (digits === "") return undefined;
  const bigRadix = BigInt(radix);
  let result = 0n;
  let consumed = 0;
  for (const char of digits) {
    const value = digitValue(char);
    if (value >= radix) break;
    const previous = result;
    result = (result * bigRadix + BigInt(value)) % U64;
    // The same wrap-around test as consumeUnsignedInteger, so the same texts count as overflow.
    if (result / bigRadix < previous) return undefined;
    consumed++;
  }
  if (consumed === 0 || consumed !== digits.length) return undefined;
  return result;
}

function parseSigned64(text: string): bigint | undefined {
  if (!text.startsWith("-")) {
    const value = parseUnsigned64(text);
    if (value === undefined || value >= 1n << 63n) return undefined;
    return value;
  }
  const magnitude = parseUnsigned64(text.slice(1));
  if (magnitude === undefined || magnitude > 1n << 63n) return undefined;
  return -magnitude;
}

export function parseLlvmUnsigned(text: string): number | undefined {
  const value = parseUnsigned64(text);
  return value === undefined || value > 0xffffffffn ? undefined : Number(value);
}

export function parseLlvmInt(text: string): number | undefined {
  const value = parseSigned64(text);
  return value === undefined || value < -(1n << 31n) || value >= 1n << 31n ? undefined : Number(value);
}

/** Levenshtein distance with replacements, as StringRef::edit_distance computes it. */
export function editDistance(from: string, to: string): number {
  let previous = Array.from({ length: to.length + 1 }, (_, index) => index);
  for (let row = 1; row <= from.length; row++) {
    const current = [row];
    for (let column = 1; column <= to.length; column++) {
      const replace = previous[column - 1]! + (from[row - 1] === to[column - 1] ? 0 : 1);
      current.push(Math.min(replace, previous[column]! + 1, current[column - 1]! + 1));
    }
    previous = current;
  }
  return previous[to.length]!;
}

// ---------------------------------------------------------------------------------------------------------
// Response files

function isGnuWhitespace(char: string): boolean {
  return char === " " || char === "\t" || char === "\r" || char === "\n";
}

/**
 * TokenizeGNUCommandLine: whitespace separates, '\' escapes the next character (inside quotes too), single
 * and double quotes group. An empty token ('' or "") vanishes, and an unterminated quote runs to the end.
 */
export function tokenizeGnuCommandLine(source: string): string[] {
  const tokens: string[] = [];
  let token = "";
  const end = source.length;
  for (let index = 0; index < end; index++) {
    if (token === "") {
      while (index < end && isGnuWhitespace(source[index]!)) index++;
      if (index === end) break;
    }
    const char = source[index]!;
    if (index + 1 < end && char === "\\") {
      index++;
      token += source[index];
      continue;
    }
    if (char === '"' || char === "'") {
      index++;
      while (index !== end && source[index] !== char) {
        if (source[index] === "\\" && index + 1 !== end) index++;
        token += source[index];
        index++;
      }
      if (index === end) break;
      continue;
    }
    if (isGnuWhitespace(char)) {
      if (token !== "") tokens.push(token);
      token = "";
      continue;
    }
    token += char;
  }
  if (token !== "") tokens.push(token);
  return tokens;
}

function decodeResponseFile(content: Uint8Array | string): string {
  if (typeof content === "string") return content.startsWith("\ufeff") ? content.slice(1) : content;
  if (content.length >= 2 && ((content[0] === 0xff && content[1] === 0xfe) || (content[0] === 0xfe && content[1] === 0xff))) {
    return new TextDecoder(content[0] === 0xff ? "utf-16le" : "utf-16be").decode(content.subarray(2));
  }
  // TextDecoder drops a UTF-8 BOM, as expandResponseFile does.
  return new TextDecoder("utf-8").decode(content);
}

/** llvm::sys::path::append for one component (no normalisation: "./x" stays in the path). */
function appendPath(directory: string, name: string): string {
  if (name === "") return directory;
  return directory.endsWith("/") ? directory + name : `${directory}/${name}`;
}

/** A stand-in for comparing file identities (sys::fs::equivalent): the lexically normalised absolute path. */
function fileIdentity(path: string): string {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return `/${parts.join("/")}`;
}

/**
 * ExpansionContext::expandResponseFiles: every argument starting with '@' whose file exists is replaced by
 * the file's tokens, recursively, before any option is looked at (so even after `--`, and even as the value
 * of `-input`). Nested names resolve against the current directory, not the including file's.
 */
export function expandResponseFiles(args: readonly string[], reader: ResponseFileReader): { args: string[] } | { error: string } {
  const argv = [...args];
  const stack: Array<{ file: string; end: number }> = [{ file: "", end: argv.length }];
  for (let index = 0; index !== argv.length; ) {
    while (index === stack[stack.length - 1]!.end) stack.pop();
    const arg = argv[index]!;
    if (!arg.startsWith("@")) {
      index++;
      continue;
    }
    let fileName = arg.slice(1);
    if (!fileName.startsWith("/")) fileName = appendPath(reader.cwd, fileName);
    const content = reader.readFile(fileName);
    if (content === undefined) {
      index++;
      continue;
    }
    for (const record of stack.slice(1)) {
      if (fileIdentity(record.file) === fileIdentity(fileName)) return { error: `recursive expansion of: '${record.file}'` };
    }
    if (typeof content === "object" && !(content instanceof Uint8Array)) {
      return { error: `cannot not open file '${fileName}': ${content.error}` };
    }
    const expanded = tokenizeGnuCommandLine(decodeResponseFile(content));
    for (const record of stack) record.end += expanded.length - 1;
    stack.push({ file: fileName, end: index + expanded.length });
    argv.splice(index, 1, ...expanded);
  }
  return { args: argv };
}

// ---------------------------------------------------------------------------------------------------------
// The parser

class CommandLineParse {
  readonly values: Record<string, OptionValue> = {};
  readonly occurrences: Record<string, number> = {};
  readonly positions: Record<string, number[]> = {};
  /** The index of the argument being handled, for `positions`. */
  private position = 0;
  stderr = "";
  detached: DetachedValue[] = [];
  errorParsing = false;
  /** Set when --help or --version answered: LLVM exits 0 on the spot. */
  finished: { stdout: string } | undefined;

  constructor(
    private readonly table: OptionTable,
    private readonly argv0: string,
    private readonly args: string[],
  ) {
    for (const entry of [...table.named, ...table.positionals]) {
      if (entry.target || entry.action !== "none") continue;
      this.values[entry.name] = initialValue(entry);
      this.occurrences[entry.name] = 0;
    }
    for (const generic of GENERIC_OPTIONS) this.occurrences[generic.name] = 0;
  }

  private get program(): string {
    return programName(this.argv0);
  }

  /** Option::error: "<prog>: for the --name option: <message>", or the description for a positional. */
  error(entry: TableEntry, message: string): true {
    if (entry.positional) this.stderr += `${entry.description} option: ${message}\n`;
    else this.stderr += `${this.program}: for the ${printArg(entry.name)} option: ${message}\n`;
    return true;
  }

  run(): void {
    const positionalValues: string[] = [];
    const positionalIndexes: number[] = [];
    let dashDashFound = false;
    for (let index = 0; index < this.args.length && !this.finished; index++) {
      const arg = this.args[index]!;
      let handler: TableEntry | undefined;
      let nearest: string | undefined;
      let argName = "";
      let value: string | undefined;
      if (!arg.startsWith("-") || arg === "-" || dashDashFound) {
        if (this.table.positionals.length > 0) {
          positionalValues.push(arg);
          positionalIndexes.push(index);
          continue;
        }
      } else if (arg === "--") {
        dashDashFound = true;
        continue;
      } else {
        argName = arg.slice(1);
        if (argName.startsWith("-")) argName = argName.slice(1);
        const found = this.lookupOption(argName);
        if (found) ({ handler, argName, value } = found);
        if (!handler) {
          const grouped = this.handlePrefixedOrGrouped(argName);
          argName = grouped.argName;
          handler = grouped.handler;
          value = grouped.value;
        }
        if (!handler && !this.finished) nearest = this.lookupNearest(argName);
      }
      if (this.finished) break;
      if (!handler) {
        this.stderr += `${this.program}: Unknown command line argument '${arg}'.  Try: '${this.argv0} --help'\n`;
        if (nearest !== undefined) this.stderr += `${this.program}: Did you mean '${printArg(nearest)}'?\n`;
        this.errorParsing = true;
        continue;
      }
      this.position = index;
      const provided = this.provideOption(handler, value, index, true);
      if (provided.error) this.errorParsing = true;
      index = provided.index;
    }
    if (this.finished) return;
    this.distributePositionals(positionalValues, positionalIndexes);
    for (const entry of this.table.named) {
      if (entry.required && !entry.target && this.occurrences[entry.name] === 0) {
        this.error(entry, "must be specified at least once!");
        this.errorParsing = true;
      }
    }
  }

  /** LookupOption: the exact name, or the text before the first '=' (the rest is the value). */
  private lookupOption(argName: string): { handler: TableEntry; argName: string; value: string | undefined } | undefined {
    if (argName === "") return undefined;
    const equals = argName.indexOf("=");
    if (equals < 0) {
      const handler = this.table.byName.get(argName);
      return handler && { handler, argName, value: undefined };
    }
    const name = argName.slice(0, equals);
    const handler = this.table.byName.get(name);
    return handler && { handler, argName: name, value: argName.slice(equals + 1) };
  }

  /** getOptionPred: the longest prefix of `name` (at least one character) naming a grouping option. */
  private groupingPrefix(name: string): TableEntry | undefined {
    for (let length = name.length; length >= 1; length--) {
      const entry = this.table.byName.get(name.slice(0, length));
      if (entry?.grouping) return entry;
    }
    return undefined;
  }

  /**
   * HandlePrefixedOrGroupedOption: `-ab` as `-a -b` for one-letter options. Options consumed before a failure
   * keep their effect, and the name left for the suggestion is the unconsumed remainder (LLVM passes it by
   * reference), which is why `--hel` in a tool with `-h` suggests a match for "el".
   */
  private handlePrefixedOrGrouped(argName: string): { handler?: TableEntry; argName: string; value?: string } {
    if (argName.length === 1) return { argName };
    let handler = this.groupingPrefix(argName);
    let rest = argName;
    while (handler) {
      const length = handler.name.length;
      const maybeValue = length < rest.length ? rest.slice(length) : undefined;
      rest = rest.slice(0, length);
      if (maybeValue === undefined) return { handler, argName: rest, value: undefined };
      if (maybeValue.startsWith("=")) return { handler, argName: rest, value: maybeValue.slice(1) };
      if (handler.valueExpected === "required") {
        this.error(handler, "may not occur within a group!");
        this.errorParsing = true;
        return { argName: rest };
      }
      if (this.provideOption(handler, undefined, 0, false).error) this.errorParsing = true;
      if (this.finished) return { argName: rest };
      rest = maybeValue;
      handler = this.groupingPrefix(rest);
    }
    return { argName: rest };
  }

  /**
   * LookupNearestOption: the first entry in map order (ReallyHidden ones skipped) with the smallest edit
   * distance. Options that take a value are compared with the text before '=' and suggested with "=value".
   */
  private lookupNearest(argName: string): string | undefined {
    if (argName === "") return undefined;
    const equals = argName.indexOf("=");
    const left = equals < 0 ? argName : argName.slice(0, equals);
    const right = equals < 0 ? "" : argName.slice(equals + 1);
    let best: string | undefined;
    let bestDistance = 0;
    for (const entry of this.table.named) {
      if (entry.visibility === "really") continue;
      const permitValue = entry.valueExpected !== "disallowed";
      const distance = editDistance(entry.name, permitValue ? left : argName);
      if (best === undefined || distance < bestDistance) {
        bestDistance = distance;
        best = right === "" || !permitValue ? entry.name : `${entry.name}=${right}`;
      }
    }
    return best;
  }

  /** ProvideOption: enforce the value rule, take the next argument for `-name value`, then add occurrences. */
  private provideOption(
    handler: TableEntry,
    value: string | undefined,
    index: number,
    mayTakeNext: boolean,
  ): { error: boolean; index: number } {
    if (handler.valueExpected === "required" && value === undefined) {
      if (!mayTakeNext || index + 1 >= this.args.length) return { error: this.error(handler, "requires a value!"), index };
      index++;
      value = this.args[index]!;
      const target = handler.target ?? handler;
      this.detached.push({ option: target.name, written: this.args[index - 1]!, value, takesPath: PATH_VALUE_NAMES.has(target.valueName) });
    } else if (handler.valueExpected === "disallowed" && value !== undefined) {
      return { error: this.error(handler, `does not allow a value! '${value}' specified.`), index };
    }
    return { error: this.addOccurrences(handler, value ?? ""), index };
  }

  /** CommaSeparateAndAddOccurrence: each comma-separated piece is an occurrence of its own. */
  private addOccurrences(handler: TableEntry, value: string): boolean {
    const pieces = handler.commaSeparated ? value.split(",") : [value];
    for (const piece of pieces) {
      if (this.addOccurrence(handler, piece)) return true;
      if (this.finished) return false;
    }
    return false;
  }

  private addOccurrence(handler: TableEntry, value: string): boolean {
    const entry = handler.target ?? handler;
    const count = (this.occurrences[entry.name] ?? 0) + 1;
    this.occurrences[entry.name] = count;
    (this.positions[entry.name] ??= []).push(this.position);
    if (this.table.tool.singleOccurrence && !entry.list && count > 1) {
      return this.error(entry, entry.required ? "must occur exactly one time!" : "may only occur zero or one times!");
    }
    const parsed = this.parseValue(entry, value);
    if (parsed === undefined) return true;
    if (entry.action !== "none") {
      if (parsed === true) this.finished = { stdout: this.runAction(entry.action) };
      return false;
    }
    if (entry.list) (this.values[entry.name] as Array<boolean | number | string>).push(parsed);
    else this.values[entry.name] = parsed;
    return false;
  }

  private parseValue(entry: TableEntry, text: string): boolean | number | string | undefined {
    switch (entry.kind) {
      case "flag":
        if (text === "" || text === "true" || text === "TRUE" || text === "True" || text === "1") return true;
        if (text === "false" || text === "FALSE" || text === "False" || text === "0") return false;
        this.error(entry, `'${text}' is invalid value for boolean argument! Try 0 or 1`);
        return undefined;
      case "string":
        return text;
      case "uint": {
        const value = parseLlvmUnsigned(text);
        if (value === undefined) this.error(entry, `'${text}' value invalid for uint argument!`);
        return value;
      }
      case "int": {
        const value = parseLlvmInt(text);
        if (value === undefined) this.error(entry, `'${text}' value invalid for integer argument!`);
        return value;
      }
      case "enum":
        if (entry.values.some((candidate) => candidate.name === text)) return text;
        this.error(entry, `Cannot find option named '${text}'!`);
        return undefined;
    }
  }

  private runAction(action: GenericAction): string {
    const program = programName(this.argv0);
    switch (action) {
      case "help":
        return renderHelp(this.table, program, { categorized: true, showHidden: false });
      case "help-hidden":
        return renderHelp(this.table, program, { categorized: true, showHidden: true });
      case "help-list":
        return renderHelp(this.table, program, { categorized: false, showHidden: false });
      case "help-list-hidden":
        return renderHelp(this.table, program, { categorized: false, showHidden: true });
      case "version":
        return this.table.tool.version;
      case "none":
        return "";
    }
  }

  /**
   * The positional pass after the loop (no cl::ConsumeAfter): required positionals first, then optional and
   * list ones take what is left. A bad value is reported but, as in LLVM, does not fail the parse.
   */
  private distributePositionals(values: string[], indexes: number[]): void {
    const positionals = this.table.positionals;
    let required = positionals.filter((entry) => entry.required).length;
    const unlimited = positionals.some((entry) => entry.list);
    if (required > values.length) {
      this.stderr +=
        `${this.program}: Not enough positional command line arguments specified!\n` +
        `Must specify at least ${required} positional argument${required > 1 ? "s" : ""}: See: ${this.argv0} --help\n`;
      this.errorParsing = true;
      return;
    }
    if (!unlimited && values.length > positionals.length) {
      this.stderr +=
        `${this.program}: Too many positional arguments specified!\n` +
        `Can specify at most ${positionals.length} positional arguments: See: ${this.argv0} --help\n`;
      this.errorParsing = true;
      return;
    }
    let next = 0;
    for (const entry of positionals) {
      if (entry.required) {
        this.position = indexes[next]!;
        this.addOccurrences(entry, values[next++]!);
        required--;
      }
      let done = entry.required && !entry.list;
      while (values.length - next > required && !done) {
        if (!entry.list) done = true;
        this.position = indexes[next]!;
        this.addOccurrences(entry, values[next++]!);
      }
    }
  }
}

function initialValue(entry: TableEntry): OptionValue {
  const declared = entry.spec?.default;
  if (declared !== undefined) return Array.isArray(declared) ? [...declared] : declared;
  if (entry.list) return [];
  switch (entry.kind) {
    case "flag":
      return false;
    case "uint":
    case "int":
      return 0;
    case "string":
    case "enum":
      return "";
  }
}

function defaultValues(table: OptionTable): { values: Record<string, OptionValue>; occurrences: Record<string, number>; positions: Record<string, number[]>; detached: DetachedValue[] } {
  const parse = new CommandLineParse(table, "", []);
  return { values: parse.values, occurrences: parse.occurrences, positions: {}, detached: [] };
}

/**
 * cl::ParseCommandLineOptions for one tool. `args` excludes argv[0]. Response files are expanded only when a
 * reader is given. Returns the parsed values, or what the tool prints and its exit code when parsing ends the
 * run: a parse error (exit 1), --help/--version (exit 0, even after earlier errors, which stay on stderr), or
 * an option marked `helpAfterParse`.
 */
export function parseCommandLine(tool: ToolSpec, argv0: string, args: readonly string[], reader?: ResponseFileReader): ParseResult {
  const table = buildOptionTable(tool);
  let argv = [...args];
  if (reader) {
    const expanded = expandResponseFiles(argv, reader);
    if ("error" in expanded) return { kind: "ok", ...defaultValues(table), stderr: `${expanded.error}\n` };
    argv = expanded.args;
  }
  const parse = new CommandLineParse(table, argv0, argv);
  parse.run();
  if (parse.finished) return { kind: "exit", code: 0, stdout: parse.finished.stdout, stderr: parse.stderr };
  if (parse.errorParsing) return { kind: "exit", code: 1, stdout: "", stderr: parse.stderr };
  for (const entry of table.named) {
    if (entry.spec?.helpAfterParse && !entry.target && parse.values[entry.name] === true) {
      const stdout = renderHelp(table, programName(argv0), { categorized: false, showHidden: false });
      return { kind: "exit", code: 0, stdout, stderr: parse.stderr };
    }
  }
  return { kind: "ok", values: parse.values, occurrences: parse.occurrences, positions: parse.positions, detached: parse.detached, stderr: parse.stderr };
}

/** Typed reads of a parse result, so CLIs need no casts. */
export function flagValue(values: Record<string, OptionValue>, name: string): boolean {
  return values[name] === true;
}

export function stringValue(values: Record<string, OptionValue>, name: string): string {
  const value = values[name];
  return typeof value === "string" ? value : String(value ?? "");
}

export function numberValue(values: Record<string, OptionValue>, name: string): number {
  const value = values[name];
  return typeof value === "number" ? value : 0;
}

export function listValue(values: Record<string, OptionValue>, name: string): string[] {
  const value = values[name];
  return Array.isArray(value) ? value.map(String) : [];
}

export type { HelpMode };
