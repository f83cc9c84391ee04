/**
 * The help screens of LLVM's `cl::` library (--help, --help-hidden, --help-list, --help-list-hidden), laid out
 * byte for byte as LLVM 19 prints them.
 *
 * Follows llvm/lib/Support/CommandLine.cpp: `HelpPrinter::printHelp`, `CategorizedHelpPrinter::printOptions`,
 * `argPlusPrefixesSize`, `basic_parser_impl::getOptionWidth` / `printOptionInfo`, `alias::printOptionInfo`,
 * `generic_parser_base::getOptionWidth` / `printOptionInfo` (enum options) and `Option::printHelpStr`.
 * Checked against `clang-offload-bundler-19 --help*` in test/differential/args-native.test.ts.
 */

import type { OptionTable, TableEntry } from "./args.js";

export interface HelpMode {
  /** --help / --help-hidden group options under category headings; --help-list and -h do not. */
  categorized: boolean;
  /** --help-hidden / --help-list-hidden also show cl::Hidden options. */
  showHidden: boolean;
}

const HELP_PREFIX = " - ";

function byName(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

function dashes(name: string): string {
  return name.length === 1 ? "-" : "--";
}

/** Two spaces of padding, the dashes, the name and " - ". */
function argPlusPrefixesSize(name: string): number {
  return name.length + 2 + dashes(name).length + HELP_PREFIX.length;
}

function isAlias(entry: TableEntry): boolean {
  return entry.target !== undefined;
}

/** The value placeholder's text: parser<bool> has none, whatever cl::value_desc says. */
function valueName(entry: TableEntry): string {
  return entry.kind === "flag" ? "" : entry.valueName;
}

function optionWidth(entry: TableEntry): number {
  if (isAlias(entry)) return argPlusPrefixesSize(entry.name);
  if (entry.kind === "enum") {
    let width = argPlusPrefixesSize(entry.name) + "=<value>".length;
    for (const value of entry.values) {
      width = Math.max(width, (value.name === "" ? "<empty>".length : value.name.length) + "    =".length + HELP_PREFIX.length);
    }
    return width;
  }
  const placeholder = valueName(entry);
  // LLVM reserves three characters ("=<" ">") even for the four-character "[=<" ">]" of optional values.
  return argPlusPrefixesSize(entry.name) + (placeholder === "" ? 0 : placeholder.length + 3);
}

/** Option::printHelpStr: " - " at column width-3, continuation lines indented to the text. */
function helpText(text: string, indent: number, firstLineIndentedBy: number): string {
  const lines = text.split("\n");
  // StringRef::split stops at an empty remainder: a trailing '\n' adds no line, an inner blank line does.
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  let out = `${" ".repeat(indent - firstLineIndentedBy)}${HELP_PREFIX}${lines[0]}\n`;
  for (const line of lines.slice(1)) out += `${" ".repeat(indent)}${line}\n`;
  return out;
}

/** Option::printEnumValHelpStr: the same with two more spaces before the text. */
function enumValueHelpText(text: string, indent: number, firstLineIndentedBy: number): string {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  let out = `${" ".repeat(indent - firstLineIndentedBy)}${HELP_PREFIX}  ${lines[0]}\n`;
  for (const line of lines.slice(1)) out += `${" ".repeat(indent + 2)}${line}\n`;
  return out;
}

function optionInfo(entry: TableEntry, width: number, llvm14: boolean): string {
  const head = `  ${dashes(entry.name)}${entry.name}`;
  if (isAlias(entry)) return head + helpText(entry.description, width, argPlusPrefixesSize(entry.name));
  if (entry.kind === "enum") {
    let out = `${head}=<value>${helpText(entry.description, width, "=<value>".length + argPlusPrefixesSize(entry.name))}`;
    for (const value of entry.values) {
      let firstLineIndent = value.name.length + "    =".length + HELP_PREFIX.length;
      out += `    =${value.name}`;
      if (value.name === "") {
        out += "<empty>";
        firstLineIndent += "<empty>".length;
      }
      out += value.description === "" ? "\n" : enumValueHelpText(value.description, width, firstLineIndent);
    }
    return out;
  }
  const placeholder = valueName(entry);
  let valuePart = "";
  if (placeholder !== "") {
    if (entry.valueExpected === "optional") valuePart = `[=<${placeholder}>]`;
    else valuePart = `${entry.name.length === 1 && !llvm14 ? " <" : "=<"}${placeholder}>`;
  }
  return head + valuePart + helpText(entry.description, width, optionWidth(entry));
}

function isShown(entry: TableEntry, mode: HelpMode): boolean {
  if (entry.visibility === "really") return false;
  if (entry.visibility === "shown" || mode.showHidden) return true;
  // Printing categorized help unhides --help-list (HelpPrinterWrapper::operator=), so --help offers it.
  return mode.categorized && entry.action === "help-list";
}

/** The whole help screen, as printed on stdout. `program` is the basename of argv[0]. */
export function renderHelp(table: OptionTable, program: string, mode: HelpMode): string {
  const shown = table.named.filter((entry) => isShown(entry, mode)).sort((left, right) => byName(left.name, right.name));
  const width = shown.reduce((max, entry) => Math.max(max, optionWidth(entry)), 0);
  const llvm14 = table.tool.llvm14Help;
  let out = table.tool.overview === "" ? "" : `OVERVIEW: ${table.tool.overview}\n`;
  out += `USAGE: ${program} [options]`;
  for (const positional of table.positionals) out += ` ${positional.description}`;
  out += "\n\nOPTIONS:\n";
  const epilogue = table.tool.epilogue === undefined ? "" : `\n${table.tool.epilogue}`;
  if (!mode.categorized) {
    for (const entry of shown) out += optionInfo(entry, width, llvm14 !== undefined);
    return out + epilogue;
  }
  if (llvm14 !== undefined) {
    // LLVM 14 prints every registered category (empty ones too under --help-hidden), with its description.
    const described = new Map(llvm14.categories.map((c) => [c.name, c.description ?? ""]));
    const names = new Set([...shown.map((entry) => entry.category), ...(mode.showHidden ? described.keys() : [])]);
    for (const category of [...names].sort(byName)) {
      const description = described.get(category) ?? "";
      out += `\n${category}:\n${description === "" ? "" : `${description}\n`}\n`;
      const members = shown.filter((entry) => entry.category === category);
      if (members.length === 0) out += "  This option category has no options.\n";
      for (const entry of members) out += optionInfo(entry, width, true);
    }
    return out;
  }
  // LLVM 19 skips categories with nothing to show, even under --help-hidden (LLVM 14 listed them as empty).
  const categories = [...new Set(shown.map((entry) => entry.category))].sort(byName);
  for (const category of categories) {
    out += `\n${category}:\n\n`;
    for (const entry of shown) if (entry.category === category) out += optionInfo(entry, width, false);
  }
  return out + epilogue;
}
