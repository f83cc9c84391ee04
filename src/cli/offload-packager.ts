/**
 * `offload-packager`: a drop-in for clang-offload-packager 19. Flags, help, messages and exit codes are the
 * native tool's (spec offload-binary.md §4); the work is done by src/packager/node.ts.
 *
 * Like 19, it reads version 1 binaries only (`offload-kit extract` reads versions 2 and 3 too). Documented
 * differences: a failure leaves no output at all (natively, files extracted before the failure stay); a generated output
 * name has every '/' of the triple and arch replaced by '_', so extraction never writes outside the current
 * directory; offload binaries inside LLVM bitcode or COFF objects are refused with an error (natively read).
 */
import { OffloadKitError } from "../engine/errors.js";
import { llvmOffloadErrorText } from "../formats/offload-binary.js";
import { utf8ToByteString } from "../formats/bytes.js";
import { extractImages, packageImages } from "../packager/node.js";
import { LLVM_COMPAT_VERSION, PACKAGE_VERSION } from "../version.js";
import { flagValue, formatHelp, listValue, parseCommandLine, stringValue } from "./args.js";
import type { ToolSpec } from "./args.js";
import type { CliIO } from "./io.js";
import { printWarning, responseFileReader, runGuarded } from "./io.js";
import { packagerToolSpec } from "./offload-packager-options.js";

export const PACKAGER_VERSION_TEXT = `offload-kit offload-packager version ${LLVM_COMPAT_VERSION} (offload-kit ${PACKAGE_VERSION})\n`;

/** Our errors for malformed offload binaries, printed with the text LLVM prints for them. */
export function asLlvmError(e: unknown): unknown {
  if (e instanceof OffloadKitError) {
    const text = llvmOffloadErrorText(e.code);
    if (text !== undefined) return new OffloadKitError(e.code, text, { offset: e.offset, field: e.field, cause: e });
  }
  return e;
}

/** What sets the two drop-ins apart: their options and help, and the LLVM release whose rules they follow. */
export interface OffloadBinaryTool {
  readonly spec: ToolSpec;
  /** 22's rules (kind numbers, required image keys); 19's when undefined. */
  readonly llvm?: 22;
  /** With neither -o nor an input, print the uncategorized help and succeed (22) instead of doing nothing (19). */
  readonly helpWhenIdle: boolean;
  /**
   * The offload binary version packaging writes and the newest extraction reads: 1 (19, 22: one binary per image)
   * or 2 (23: one binary holding every image). Default 1.
   */
  readonly formatVersion?: 1 | 2;
}

/** The command line of clang-offload-packager 19 or llvm-offload-binary 22: package with -o, extract with an input. */
export function runOffloadBinaryTool(tool: OffloadBinaryTool, argv0: string, args: readonly string[], io: CliIO): number {
  const parsed = parseCommandLine(tool.spec, argv0, args, responseFileReader(io.cwd));
  if (parsed.kind === "exit") {
    if (parsed.stdout) io.stdout(parsed.stdout);
    if (parsed.stderr) io.stderr(parsed.stderr);
    return parsed.code;
  }
  if (parsed.stderr) io.stderr(parsed.stderr);
  const output = stringValue(parsed.values, "o");
  const input = stringValue(parsed.values, "input");
  const images = listValue(parsed.values, "image").map(utf8ToByteString);
  const archive = flagValue(parsed.values, "archive");
  const warn = (text: string) => printWarning(io, argv0, text);
  const llvm = tool.llvm;
  if (input !== "" && output !== "") {
    return runGuarded(io, argv0, () => {
      throw new OffloadKitError("PACKAGER_MODES", "Packaging to an output file and extracting from an input file are mutually exclusive.");
    });
  }
  const formatVersion = tool.formatVersion ?? 1;
  // Version 2 comes with LLVM 23's other llvm-offload-binary rules (.spv images, extraction names and nesting).
  const llvm23 = formatVersion === 2;
  if (output !== "") return runGuarded(io, argv0, () => (packageImages(images, output, { warn, llvm, writeVersion: formatVersion, llvm23 }), 0));
  if (input === "") {
    // 22 added this (cl::PrintHelpMessage); 19 silently does nothing.
    if (tool.helpWhenIdle) io.stdout(formatHelp(tool.spec, argv0, { categorized: false, showHidden: false }));
    return 0;
  }
  return runGuarded(io, argv0, () => {
    try {
      extractImages(input, images, { archive, warn, maxVersion: formatVersion, llvm, llvm23, announce: (text) => io.stdout(text) });
    } catch (e) {
      throw asLlvmError(e);
    }
    return 0;
  });
}

export function runPackager(argv0: string, args: readonly string[], io: CliIO): number {
  return runOffloadBinaryTool({ spec: packagerToolSpec(PACKAGER_VERSION_TEXT), helpWhenIdle: false }, argv0, args, io);
}
