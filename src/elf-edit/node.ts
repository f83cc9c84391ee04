/**
 * File I/O for the `.hip_fatbin` rewrite: the input read through positioned reads, the output written
 * through a temporary file beside the destination and renamed into place only when the whole file is
 * written (src/node/output.ts). The plan is made before the output is opened, so bad input writes
 * nothing at all.
 */
import { chmodSync, statSync } from "node:fs";
import { FileSource } from "../node/file-source.js";
import { OutputFile } from "../node/output.js";
import { planHipFatbinRewriteOf, writeRewrite } from "./rewrite.js";
import type { RewriteOptions, RewritePlan } from "./rewrite.js";

/** Rewrites `inputPath` into `outputPath` (file mode kept); returns the plan that was written. */
export function rewriteHipFatbinFile(
  inputPath: string,
  outputPath: string,
  options: RewriteOptions = {},
): RewritePlan {
  const input = FileSource.open(inputPath);
  try {
    const plan = planHipFatbinRewriteOf(input, options);
    const output = new OutputFile(outputPath);
    try {
      writeRewrite(plan, output);
      if (output.tempPath !== undefined) chmodSync(output.tempPath, statSync(inputPath).mode & 0o7777);
      output.commit();
    } catch (e) {
      output.discard();
      throw e;
    }
    return plan;
  } finally {
    input.close();
  }
}
