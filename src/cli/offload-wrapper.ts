/**
 * `offload-wrapper`: a drop-in for clang-offload-wrapper 14 (the default) and llvm-offload-wrapper 22 (chosen by
 * `--kind` or `--triple` on the command line or in an `@file` it names), writing the same bitcode byte for byte
 * (spec/wrapper.md), plus the seed's image-info variant (`--offload-arch=<target id>` before each image) and `-S`
 * for the .ll text.
 *
 * Flags, help, messages and exit codes are the native tools' (src/cli/offload-wrapper-options.ts). Documented
 * differences: `--add-omp-offload-notes` (14, hidden: it runs llvm-objcopy on each ELF image) is refused with an
 * error; an llvm-offload-wrapper OpenMP input that starts with the OffloadBinary magic but is too short for its
 * header and first entry is refused (22 reads past its buffer); a failure never leaves a partial output.
 */
import { OffloadKitError } from "../engine/errors.js";
import { utf8ToByteString } from "../formats/bytes.js";
import { wrapFiles } from "../wrapper/node.js";
import { PACKAGE_VERSION } from "../version.js";
import { DEFAULT_TRIPLE_22 } from "../wrapper/index.js";
import type { OffloadKind22 } from "../wrapper/index.js";
import type { ParseResult } from "./args.js";
import { expandResponseFiles, flagValue, listValue, parseCommandLine, stringValue } from "./args.js";
import type { CliIO } from "./io.js";
import { responseFileReader, runGuarded } from "./io.js";
import { wrapper14ToolSpec, wrapper22ToolSpec } from "./offload-wrapper-options.js";

export const WRAPPER14_VERSION_TEXT = `offload-kit offload-wrapper version 14.0.6 (clang-offload-wrapper; offload-kit ${PACKAGE_VERSION})\n`;
export const WRAPPER22_VERSION_TEXT = `offload-kit offload-wrapper version 22.1.8 (llvm-offload-wrapper; offload-kit ${PACKAGE_VERSION})\n`;

/** llvm-offload-wrapper's options name the flavour; anything else is clang-offload-wrapper 14. */
export function isLlvm22Invocation(args: readonly string[]): boolean {
  return args.some((arg) => /^--?(kind|triple)(=|$)/.test(arg));
}

/** Pairs each `--offload-arch` with the image that follows it on the command line. */
function imageArchs(parsed: Extract<ParseResult, { kind: "ok" }>, inputs: readonly string[]): (string | undefined)[] {
  const archs = listValue(parsed.values, "offload-arch").map(utf8ToByteString);
  if (archs.length === 0) return inputs.map(() => undefined);
  const archAt = parsed.positions["offload-arch"] ?? [];
  const inputAt = parsed.positions["input"] ?? [];
  const result: (string | undefined)[] = [];
  let next = 0;
  for (let i = 0; i < inputs.length; i++) {
    let pending: string | undefined;
    let count = 0;
    while (next < archs.length && archAt[next]! < inputAt[i]!) {
      pending = archs[next++];
      count++;
    }
    if (count !== 1) {
      throw new OffloadKitError(
        "WRAPPER_OFFLOAD_ARCH",
        `${archs.length} --offload-arch value${archs.length === 1 ? "" : "s"} for ${inputs.length} image${inputs.length === 1 ? "" : "s"}: give exactly one before each image, or none`,
      );
    }
    result.push(pending);
  }
  if (next !== archs.length) {
    throw new OffloadKitError("WRAPPER_OFFLOAD_ARCH", `--offload-arch=${archs[next]} is not followed by an image`);
  }
  return result;
}

export function runWrapper(argv0: string, args: readonly string[], io: CliIO): number {
  // Both native tools expand `@file` response files before looking at any option, so `@args` holding
  // `--kind=openmp` is the 22 flavour. The files are read once, here; when one cannot be read, the parse
  // expands again to report it, and the flavour is read off the words as given.
  const reader = responseFileReader(io.cwd);
  const expanded = expandResponseFiles(args, reader);
  const words = "args" in expanded ? expanded.args : args;
  const llvm22 = isLlvm22Invocation(words);
  const spec = llvm22 ? wrapper22ToolSpec(WRAPPER22_VERSION_TEXT, DEFAULT_TRIPLE_22) : wrapper14ToolSpec(WRAPPER14_VERSION_TEXT);
  const parsed = "args" in expanded ? parseCommandLine(spec, argv0, words) : parseCommandLine(spec, argv0, args, reader);
  if (parsed.kind === "exit") {
    if (parsed.stdout) io.stdout(parsed.stdout);
    if (parsed.stderr) io.stderr(parsed.stderr);
    return parsed.code;
  }
  if (parsed.stderr) io.stderr(parsed.stderr);
  const inputs = listValue(parsed.values, "input");
  const output = stringValue(parsed.values, "o");
  const text = flagValue(parsed.values, "S");
  return runGuarded(io, argv0, () => {
    if (llvm22) {
      wrapFiles({
        flavour: "llvm-offload-wrapper-22",
        kind: stringValue(parsed.values, "kind") as OffloadKind22,
        triple: utf8ToByteString(stringValue(parsed.values, "triple")),
        inputs: inputs.map((path) => ({ path })),
        output,
        text,
      });
      return 0;
    }
    if (flagValue(parsed.values, "add-omp-offload-notes")) {
      throw new OffloadKitError("WRAPPER_NOTES", "--add-omp-offload-notes is not supported by offload-kit (natively it runs llvm-objcopy on each ELF image)");
    }
    const archs = imageArchs(parsed, inputs);
    wrapFiles({
      flavour: "clang-offload-wrapper-14",
      triple: utf8ToByteString(stringValue(parsed.values, "target")),
      inputs: inputs.map((path, i) => ({ path, arch: archs[i] })),
      output,
      text,
    });
    return 0;
  });
}
