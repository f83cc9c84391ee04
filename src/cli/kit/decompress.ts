/**
 * `offload-kit decompress FILE... (-o OUT | --out-dir=DIR | --in-place) [--dry-run] [--json]`: compressed bundles
 * (CCOB) back to plain ones, for runtimes that read no CCOB (Debian's ROCm 5.x), in bundle files and archives.
 */
import type { Subcommand } from "./common.js";
import { runTransform, transformSpec } from "./compress.js";

export const decompress: Subcommand = {
  summary: "Decompress CCOBs back into plain bundles, LZ4/zstd NVIDIA fatbin entries into plain ones: FILE... (-o OUT | --out-dir=DIR | --in-place).",
  spec: () => transformSpec("offload-kit decompress: turn compressed offload bundles (CCOB) back into plain ones, in bundle files and archives;\nNVIDIA fatbin entries (LZ4, zstd) into plain ones, as nvcc --compress-mode=none stores them\n", [], [
    { command: "offload-kit decompress -o app.plain.hipfb app.ccob.hipfb", what: "Write a plain copy of a compressed bundle (what `offload-kit compress -o app.ccob.hipfb` wrote)" },
    { command: "offload-kit decompress --dry-run /opt/rocm/lib", what: "Say how many bytes plain bundles would take over the folder; write nothing" },
  ]),
  run: (values, context) => runTransform("decompress", values, context),
};
