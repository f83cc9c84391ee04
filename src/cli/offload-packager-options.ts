/**
 * The option table of clang-offload-packager 19, for src/cli/args.ts.
 *
 * Follows clang/tools/clang-offload-packager/ClangOffloadPackager.cpp (release 19): `-h` (cl::Hidden, made
 * ReallyHidden by cl::HideUnrelatedOptions), `-o`, the positional input, `--image`, `--archive`, with their
 * cl::desc and cl::value_desc texts verbatim and the overview passed to cl::ParseCommandLineOptions. `--help`
 * output built from it is byte-identical to `clang-offload-packager-19 --help` apart from the program name,
 * and parse errors and suggestions match (test/differential/args-native.test.ts, packager-native.test.ts).
 */
import type { ToolSpec } from "./args.js";

export const PACKAGER_CATEGORY = "clang-offload-packager options";

export const PACKAGER_OVERVIEW =
  "A utility for bundling several object files into a single binary.\n" +
  "The output binary can then be embedded into the host section table\n" +
  "to create a fatbinary containing offloading code.\n";

/**
 * Iteration order of the option map of the Debian 19.1.7 binary (an llvm::StringMap: hash order), for ties
 * between equally near suggestions; measured with typos (args-native.test.ts re-checks random ones).
 */
export const PACKAGER_19_MAP_ORDER = [
  "help-list", "o", "help-hidden", "print-all-options", "help", "version", "archive", "image", "help-list-hidden", "print-options",
];

export function packagerToolSpec(version: string): ToolSpec {
  return {
    overview: PACKAGER_OVERVIEW,
    version,
    mapOrder: PACKAGER_19_MAP_ORDER,
    options: [
      { name: "h", kind: "flag", description: "Alias for -help", hidden: "really", helpAfterParse: true },
      { name: "o", kind: "string", valueName: "file", description: "Write output to <file>.", category: PACKAGER_CATEGORY },
      {
        name: "image",
        kind: "string",
        list: true,
        valueName: "<key>=<value>,...",
        description: "List of key and value arguments. Required keywords are 'file' and 'triple'.",
        category: PACKAGER_CATEGORY,
      },
      { name: "input", kind: "string", positional: true, description: "Extract from <file>." },
      { name: "archive", kind: "flag", description: "Write extracted files to a static archive", category: PACKAGER_CATEGORY },
    ],
  };
}
