/**
 * `offload-kit decompress FILE... (-o OUT | --out-dir=DIR | --in-place) [--dry-run] [--json]`: compressed bundles
 * (CCOB) back to plain ones, for runtimes that read no CCOB (Debian's ROCm 5.x), in bundle files and archives.
 */
import type { Subcommand } from "./common.js";
import { runTransform, transformSpec } from "./compress.js";

export const decompress: Subcommand = {
  summary: "Decompress CCOBs back into plain bundles: FILE... (-o OUT | --out-dir=DIR | --in-place).",
  spec: () => transformSpec("offload-kit decompress: turn compressed offload bundles (CCOB) back into plain ones, in bundle files and archives\n", []),
  run: (values, context) => runTransform("decompress", values, context),
};
