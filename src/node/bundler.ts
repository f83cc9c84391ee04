/**
 * Running clang-offload-bundler jobs on files: bundle, unbundle and list, streaming through the
 * engine window (no input is held whole) and writing outputs atomically.
 */
import type { Engine } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import { engine as defaultEngine } from "../engine/select.js";
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { layoutBinaryBundle } from "../formats/bundle.js";
import { detectTextComment, textEntryFraming } from "../formats/text-bundle.js";
import type { BundlerJob } from "../bundler/options.js";
import { fileTypeOrThrow, readBundleIndex, refuseObjectInput } from "../bundler/read.js";
import { planUnbundle } from "../bundler/unbundle-plan.js";
import type { UnbundleWrite } from "../bundler/unbundle-plan.js";
import { copyRange } from "./copy.js";
import { openDecompressed } from "./decompress.js";
import { FileSource, withFile } from "./file-source.js";
import { withOutputs } from "./output.js";

function withDecompressed<T>(file: ByteSource, use: (source: ByteSource) => T): T {
  const input = openDecompressed(file);
  try {
    return use(input.source);
  } finally {
    input.close();
  }
}

/** `-list`: IDs in file order (the native tool prints StringMap bucket order for binary bundles). */
export function listBundle(path: string, type: string, engine: Engine = defaultEngine()): string[] {
  return withFile(path, (file) => withDecompressed(file, (source) => readBundleIndex(source, type, engine).entries.map((e) => e.id)));
}

/** Bundling: one output from one input per target. */
export function bundleFiles(job: BundlerJob, engine: Engine = defaultEngine()): void {
  const sources: FileSource[] = [];
  try {
    for (const path of job.inputs) sources.push(FileSource.open(path));
    const info = fileTypeOrThrow(job.type);
    if (job.compress) {
      throw new OffloadKitError("UNSUPPORTED_COMPRESSED", "writing compressed offload bundles (-compress) is not supported yet");
    }
    refuseObjectInput(info, sources[job.allowNoHost ? 0 : Math.max(job.hostInputIndex, 0)]);
    withOutputs((open) => {
      const out = open(job.outputs[0]);
      if (info.comment !== undefined) {
        job.targets.forEach((id, i) => {
          const framing = textEntryFraming(info.comment!, id);
          out.write(framing.before);
          copyRange(engine, sources[i], 0, sources[i].size, out);
          out.write(framing.after);
        });
        return;
      }
      const layout = layoutBinaryBundle(job.targets.map((id, i) => ({ id, size: sources[i].size })), job.bundleAlign);
      out.write(layout.header);
      job.targets.forEach((_, i) => {
        out.writeZeros(layout.offsets[i] - out.position);
        copyRange(engine, sources[i], 0, sources[i].size, out);
      });
    });
  } finally {
    for (const source of sources) source.close();
  }
}

export interface UnbundleOptions {
  /** The -type; undefined detects binary or text bundles from the first bytes. */
  readonly type?: string;
  /** Normalised target IDs. */
  readonly targets: readonly string[];
  readonly allowMissingBundles?: boolean;
  readonly hipOpenmpCompatible?: boolean;
}

/** The -type a bundle's first bytes imply: text bundles by their comment, anything else binary. */
export function detectBundleType(source: ByteSource): string {
  const comment = detectTextComment(readExact(source, 0, Math.min(source.size, 64)));
  return comment === undefined ? "bc" : (TYPE_FOR_COMMENT[comment] ?? "bc");
}

const TYPE_FOR_COMMENT: Record<string, string> = { "//": "i", "#": "s", ";": "ll" };

export interface UnbundleResult {
  readonly writes: UnbundleWrite[];
  /** Size of the (decompressed) input, which a host output may have received whole. */
  readonly inputSize: number;
}

/** Unbundles one file into `outputs[i]` for `targets[i]`, atomically. Returns what went where. */
export function unbundleToFiles(path: string, options: UnbundleOptions, outputs: readonly string[], engine: Engine = defaultEngine()): UnbundleResult {
  return withFile(path, (file) => withDecompressed(file, (source) => {
    const index = readBundleIndex(source, options.type ?? detectBundleType(source), engine);
    const writes = planUnbundle(index.visitOrder, options);
    withOutputs((open) => {
      for (const write of writes) {
        const out = open(outputs[write.target]);
        const content = write.content;
        if (content.kind === "entry") copyRange(engine, source, content.entry.offset, content.entry.size, out);
        else if (content.kind === "whole-input") copyRange(engine, source, 0, source.size, out);
      }
    });
    return { writes, inputSize: source.size };
  }));
}

/** `-unbundle` for a validated job. */
export function unbundleFile(job: BundlerJob, engine: Engine = defaultEngine()): UnbundleResult {
  if (job.type === "a") {
    throw new OffloadKitError("UNSUPPORTED_ARCHIVE", "unbundling archives (-type=a) is not supported yet");
  }
  return unbundleToFiles(job.inputs[0], job, job.outputs, engine);
}
