/**
 * The output checker (./index.ts) over files, with Node's codecs: how `editFiles` (src/prune/node.ts) checks
 * each temporary output before it is renamed into place, and how `offload-kit verify` checks a file.
 * Compressed bundles are opened through the same prefetching decoder `ls` and `sizes` use.
 */
import type { Codecs } from "../compress/codecs.js";
import { nodeCodecs } from "../compress/node/codecs.js";
import { withCcobPrefetch } from "../compress/node/decompress.js";
import { codecDecompressor } from "../compress/node/packager-codecs.js";
import { blockCachedSource } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { locate } from "../inspect/locate.js";
import { FileSource } from "../node/file-source.js";
import type { PlannedEdit } from "../prune/index.js";
import { decompressBundleFile } from "../prune/bundle-file.js";
import { verifyOutput, verifySource } from "./index.js";
import type { VerifyOptions, VerifyReport } from "./index.js";

function nodeOptions(codecs: Codecs, name: string): Omit<VerifyOptions, "expected"> {
  return {
    decompress: (ccob) => decompressBundleFile(ccob, codecs, name) ?? ccob,
    locate: (source) => withCcobPrefetch({}, (ccob) => locate(source, { ...ccob, decompressOffload: codecDecompressor() })),
  };
}

/** Checks the written file at `path` (a temporary output) against its input; throws OUTPUT_VERIFY_FAILED. */
export function verifyOutputFile(path: string, input: ByteSource, planned: PlannedEdit, codecs: Codecs, name: string): void {
  const output = FileSource.open(path);
  try {
    verifyOutput(blockCachedSource(output), blockCachedSource(input), planned, name, nodeOptions(codecs, name));
  } finally {
    output.close();
  }
}

/** `offload-kit verify`: every check that applies to one file. */
export function verifyFile(path: string): VerifyReport {
  const source = FileSource.open(path);
  try {
    return verifySource(blockCachedSource(source), nodeOptions(nodeCodecs, path));
  } finally {
    source.close();
  }
}
