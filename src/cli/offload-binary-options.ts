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
 * the tool links, so it differs from 19's), for ties between equally near suggestions (`--hel`, `--ver`,
 * `--print` suggest `--help` in 22, `-o` in 19). Measured: for three runs of ~1,200 random typos (dashes,
 * edits, `=` values), the options tied at the nearest distance (found with our parser) and the one the native
 * tool suggests gave "before" pairs; this order satisfies all of them. Pairs never tied keep an arbitrary
 * order. args-native.test.ts and offload-binary-native.test.ts re-check random and chosen typos.
 */
export const OFFLOAD_BINARY_22_MAP_ORDER = [
  "help", "archive", "help-hidden", "help-list", "print-options", "print-all-options", "version", "o", "image", "help-list-hidden",
];

export function offloadBinaryToolSpec(version: string): ToolSpec {
  const packager = packagerToolSpec(version);
  return {
    ...packager,
    mapOrder: OFFLOAD_BINARY_22_MAP_ORDER,
    options: packager.options.map((option) => (option.category === undefined ? option : { ...option, category: OFFLOAD_BINARY_CATEGORY })),
  };
}
