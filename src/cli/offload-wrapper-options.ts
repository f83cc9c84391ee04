/**
 * The option tables of clang-offload-wrapper 14 and llvm-offload-wrapper 22, for src/cli/args.ts.
 *
 * 14 follows clang/tools/clang-offload-wrapper/ClangOffloadWrapper.cpp (release 14): `-o` and `--target`
 * (cl::Required), the positional inputs (cl::OneOrMore), the hidden `-h`, `--save-temps`,
 * `--add-omp-offload-notes` (no category, so cl::HideUnrelatedOptions makes them ReallyHidden), LLVM 14's help
 * layout (`-o=<filename>`, empty categories under --help-hidden: the five categories libLLVM-14 registers, read
 * off `clang-offload-wrapper-14 --help-hidden`). Our additions to it: `--offload-arch` (the seed's image-info
 * variant, shown in --help) and `-S` (text output; ReallyHidden, so the help screens stay the native ones).
 *
 * 22 follows llvm/tools/llvm-offload-wrapper/llvm-offload-wrapper.cpp: `--kind` (cl::Required enum), `-o`,
 * `--triple` (default: the host triple), the positional inputs; LLVM 19's cl layout holds for 22 (checked in
 * test/differential/wrapper-native.test.ts).
 */
import type { ToolSpec } from "./args.js";

export const WRAPPER14_CATEGORY = "clang-offload-wrapper options";
export const WRAPPER22_CATEGORY = "llvm-offload-wrapper options";

export const WRAPPER14_OVERVIEW =
  "A tool to create a wrapper bitcode for offload target binaries. Takes offload\n" +
  "target binaries as input and produces bitcode file containing target binaries packaged\n" +
  "as data and initialization code which registers target binaries in offload runtime.\n";

export const WRAPPER22_OVERVIEW = "Generate runtime registration code for a device binary image\n";

/** Categories libLLVM-14 registers in every tool, with their descriptions (clang-offload-wrapper-14 --help-hidden). */
const LLVM14_CATEGORIES = [
  { name: "Color Options" },
  { name: "General options" },
  {
    name: "GlobalISel Combiner",
    description:
      "Control the rules which are enabled. These options all take a comma separated list of rules to disable and may be specified by number or number range (e.g. 1-10).",
  },
  { name: "Polly Options", description: "Configure the polly loop optimizer" },
];

const TEXT_OPTION_DESCRIPTION = "Write the module as LLVM assembly (.ll) instead of bitcode (offload-kit)";

export function wrapper14ToolSpec(version: string): ToolSpec {
  return {
    overview: WRAPPER14_OVERVIEW,
    version,
    singleOccurrence: true,
    llvm14Help: { categories: LLVM14_CATEGORIES },
    options: [
      { name: "h", kind: "flag", description: "Alias for -help", hidden: "really", helpAfterParse: true },
      { name: "o", kind: "string", required: true, valueName: "filename", description: "Output filename", category: WRAPPER14_CATEGORY },
      { name: "input", kind: "string", list: true, required: true, positional: true, description: "<input files>", category: WRAPPER14_CATEGORY },
      { name: "target", kind: "string", required: true, valueName: "triple", description: "Target triple for the output module", category: WRAPPER14_CATEGORY },
      {
        name: "save-temps",
        kind: "flag",
        hidden: "really",
        description: "Save temporary files that may be produced by the tool. This option forces print-out of the temporary files' names.",
      },
      { name: "add-omp-offload-notes", kind: "flag", hidden: "really", description: "Add LLVMOMPOFFLOAD ELF notes to ELF device images." },
      {
        name: "offload-arch",
        kind: "string",
        list: true,
        valueName: "target-id",
        description: "Target ID of the image that follows (adds __tgt_image_info; seed 004)",
        category: WRAPPER14_CATEGORY,
      },
      { name: "S", kind: "flag", hidden: "really", description: TEXT_OPTION_DESCRIPTION, category: WRAPPER14_CATEGORY },
    ],
  };
}

export function wrapper22ToolSpec(version: string, defaultTriple: string): ToolSpec {
  return {
    overview: WRAPPER22_OVERVIEW,
    version,
    options: [
      { name: "h", kind: "flag", description: "Alias for -help", hidden: "really", helpAfterParse: true },
      {
        name: "kind",
        kind: "enum",
        required: true,
        description: "Wrap for offload kind:",
        values: [
          { name: "openmp", description: "Wrap OpenMP binaries" },
          { name: "cuda", description: "Wrap CUDA binaries" },
          { name: "hip", description: "Wrap HIP binaries" },
        ],
        category: WRAPPER22_CATEGORY,
      },
      { name: "o", kind: "string", valueName: "file", description: "Write output to <file>.", category: WRAPPER22_CATEGORY },
      { name: "input", kind: "string", list: true, required: true, positional: true, valueName: "file", description: "Wrap input from <file>", category: WRAPPER22_CATEGORY },
      { name: "triple", kind: "string", default: defaultTriple, description: "Target triple for the wrapper module", category: WRAPPER22_CATEGORY },
      { name: "S", kind: "flag", hidden: "really", description: TEXT_OPTION_DESCRIPTION, category: WRAPPER22_CATEGORY },
    ],
  };
}
