/**
 * The option table of llvm-offload-binary 22, for src/cli/args.ts.
 *
 * llvm/tools/llvm-offload-binary/llvm-offload-binary.cpp (release 22) is clang-offload-packager moved into
 * LLVM: the same options with the same cl::desc and cl::value_desc texts and overview (its `--image`
 * description still says 'file' and 'triple' are required, though only 'file' is), in its own category.
 * Only the category name and the option map's iteration order differ from the 19 packager's table.
 */
import type { ToolSpec } from "./args.js";
import { packagerToolSpec } from "./offload-packager-options.js";

export const OFFLOAD_BINARY_CATEGORY = "llvm-offload-binary options";

/**
 * Iteration order of the option map of the Debian 22.1.8 binary (an llvm::StringMap holding every LLVM option
 * the tool links, so it differs from 19's), for ties between equally near suggestions. Measured with typos
 * (`--hel`, `--ver`, `--print` suggest `--help` in 22, `-o` in 19); args-native.test.ts re-checks random ones.
 */
export const OFFLOAD_BINARY_22_MAP_ORDER = [
  "help", "help-hidden", "help-list", "o", "print-all-options", "version", "archive", "image", "help-list-hidden", "print-options",
];

export function offloadBinaryToolSpec(version: string): ToolSpec {
  const packager = packagerToolSpec(version);
  return {
    ...packager,
    mapOrder: OFFLOAD_BINARY_22_MAP_ORDER,
    options: packager.options.map((option) => (option.category === undefined ? option : { ...option, category: OFFLOAD_BINARY_CATEGORY })),
  };
}
