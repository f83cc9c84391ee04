/** What every offload-kit subcommand shares: the command table entry, option helpers, usage errors. */
import { LLVM_COMPAT_VERSION, PACKAGE_VERSION } from "../../version.js";
import type { OptionSpec, OptionValue, ToolSpec } from "../args.js";
import type { CliIO } from "../io.js";
import { printError } from "../io.js";

export const VERSION_TEXT = `offload-kit ${PACKAGE_VERSION} (clang-offload-* ${LLVM_COMPAT_VERSION} compatible)\n`;
export const KIT_CATEGORY = "offload-kit options";

export const FILES_OPTION: OptionSpec = { name: "files", kind: "string", list: true, positional: true, description: "<file>..." };
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

export function usageError(io: CliIO, name: string, message: string): number {
  printError(io, name, `${message} (see '${name} --help')`);
  return 1;
}

export function hex(n: number): string {
  return `0x${n.toString(16)}`;
}

export function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}
