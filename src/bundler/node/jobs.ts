/**
 * Running clang-offload-bundler jobs on files: bundle, unbundle and list, streaming through the
 * engine window (no input is held whole) and writing outputs atomically.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Engine } from "../../engine/engine.js";
import { engine as defaultEngine } from "../../engine/select.js";
import { readExact } from "../../engine/source.js";
import type { ByteSource } from "../../engine/source.js";
import { layoutBinaryBundle } from "../../formats/bundle.js";
import { detectTextComment, textEntryFraming } from "../../formats/text-bundle.js";
import type { BundlerJob } from "../options.js";
import { fileTypeOrThrow, planAroundDamage, readBundleIndex } from "../read.js";
import {
  bundleObject, hostObject, isObjectHostEntry, noHostForObject, objcopyBundleCommand, objcopyHostCommand, objectBundleEntries,
} from "../object-bundle.js";
import { planUnbundle } from "../unbundle-plan.js";
import type { UnbundleWrite } from "../unbundle-plan.js";
import { LLVM19_COMPRESSION } from "../compressed.js";
import type { CompressionSettings } from "../compressed.js";
import type { FileTypeInfo } from "../../formats/file-types.js";
import { cryptoModule } from "../../node/builtins.js";
import { CompressingWriter } from "../../compress/node/compress.js";
import type { BundleSink } from "../../compress/node/compress.js";
import { unbundleArchive } from "./archive.js";
import type { ArchiveUnbundleHooks } from "./archive.js";
import { copyRange } from "../../node/copy.js";
import { forEachDecompressed, openDecompressed } from "../../compress/node/decompress.js";
import type { DecompressOptions, VerboseSink } from "../../compress/node/decompress.js";
import { FileSource, withFile } from "../../node/file-source.js";
import { withOutputs } from "../../node/output.js";

function withDecompressed<T>(file: ByteSource, options: DecompressOptions, use: (source: ByteSource) => T): T {
  const input = openDecompressed(file, options);
  try {
    return use(input.source);
  } finally {
    input.close();
  }
}

/**
 * `-list`: IDs in file order (the native tool prints StringMap bucket order for binary bundles). An
 * input holding several compressed bundles lists each in turn, as upstream LLVM after 22 does.
 */
export function listBundle(path: string, type: string, engine: Engine = defaultEngine(), options: DecompressOptions = {}): string[] {
  return withFile(path, (file) => {
    const ids: string[] = [];
    forEachDecompressed(file, options, (input) => {
      for (const entry of readBundleIndex(input.source, type, engine).entries) ids.push(entry.id);
    });
    return ids;
  });
}

export interface BundleOptions {
  /** How to compress (with -compress); LLVM 19's v2, zstd level 3 by default. */
  readonly compression?: CompressionSettings;
  /** -verbose output while compressing. */
  readonly verbose?: VerboseSink;
  /** Where -### prints the llvm-objcopy command lines (stderr). */
  readonly commands?: (text: string) => void;
}

/** The temporary file name LLVM would give the host section's one byte, for -### (never created). */
function llvmTempName(): string {
  return join(tmpdir(), `clang-offload-bundler-${cryptoModule().randomBytes(3).toString("hex")}.tmp`);
}

/**
 * Bundling into an ELF host object: the object with one section per target. With -###, LLVM prints the
 * llvm-objcopy command and leaves the output empty; so do we.
 */
function bundleObjectFiles(job: BundlerJob, sources: readonly FileSource[], options: BundleOptions): void {
  if (job.hostInputIndex < 0) throw noHostForObject();
  withOutputs((open) => {
    const out = open(job.outputs[0]);
    if (job.printExternalCommands) {
      options.commands?.(objcopyBundleCommand(job.targets, job.inputs, job.hostInputIndex, llvmTempName(), job.outputs[0]));
      return;
    }
    const whole = (source: FileSource) => readExact(source, 0, source.size);
    out.write(bundleObject(whole(sources[job.hostInputIndex]), job.targets, job.hostInputIndex, (i) => whole(sources[i])));
  });
}

/** Size of the uncompressed bundle bundleFiles writes (text framing or binary layout). */
function bundleSize(job: BundlerJob, info: FileTypeInfo, sources: readonly FileSource[]): number {
  if (info.comment !== undefined) {
    return job.targets.reduce((n, id, i) => {
      const framing = textEntryFraming(info.comment!, id);
      return n + framing.before.length + sources[i].size + framing.after.length;
    }, 0);
  }
  const layout = layoutBinaryBundle(job.targets.map((id, i) => ({ id, size: sources[i].size })), job.bundleAlign);
  const last = job.targets.length - 1;
  return last < 0 ? layout.header.length : layout.offsets[last] + sources[last].size;
}

/** Writes the uncompressed bundle of `job` into `sink`. */
function emitBundle(job: BundlerJob, info: FileTypeInfo, sources: readonly FileSource[], sink: BundleSink, copy: (source: FileSource) => void): void {
  if (info.comment !== undefined) {
    job.targets.forEach((id, i) => {
      const framing = textEntryFraming(info.comment!, id);
      sink.write(framing.before);
      copy(sources[i]);
      sink.write(framing.after);
    });
    return;
  }
  const layout = layoutBinaryBundle(job.targets.map((id, i) => ({ id, size: sources[i].size })), job.bundleAlign);
  sink.write(layout.header);
  job.targets.forEach((_, i) => {
    sink.writeZeros(layout.offsets[i] - sink.position);
    copy(sources[i]);
  });
}

/** Bundling: one output from one input per target; with `job.compress`, a compressed bundle (CCOB). */
export function bundleFiles(job: BundlerJob, engine: Engine = defaultEngine(), options: BundleOptions = {}): void {
  const sources: FileSource[] = [];
  try {
    for (const path of job.inputs) sources.push(FileSource.open(path));
    const info = fileTypeOrThrow(job.type);
    // CreateFileHandler on the host input (the first one when no host is needed): an ELF object keeps the
    // bundle in its sections; -compress and -bundle-align do not apply there (LLVM ignores them too).
    if (info.object && objectBundleEntries(sources[job.allowNoHost ? 0 : Math.max(job.hostInputIndex, 0)]) !== undefined) {
      bundleObjectFiles(job, sources, options);
      return;
    }
    withOutputs((open) => {
      const out = open(job.outputs[0]);
      if (job.compress) {
        const settings = options.compression ?? { ...LLVM19_COMPRESSION, level: job.compressionLevel ?? LLVM19_COMPRESSION.level };
        const writer = new CompressingWriter(out, settings, bundleSize(job, info, sources));
        try {
          emitBundle(job, info, sources, writer, (source) => writer.copyFrom(source, 0, source.size));
          writer.finish(options.verbose);
        } catch (e) {
          writer.abort();
          throw e;
        }
        return;
      }
      emitBundle(job, info, sources, out, (source) => copyRange(engine, source, 0, source.size, out));
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
  /** -###: print the llvm-objcopy command for a fat object's host entry instead of making it (output left empty). */
  readonly printExternalCommands?: boolean;
  /** Where -### prints (stderr). */
  readonly commands?: (text: string) => void;
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
export function unbundleToFiles(
  path: string,
  options: UnbundleOptions,
  outputs: readonly string[],
  engine: Engine = defaultEngine(),
  decompress: DecompressOptions = {},
): UnbundleResult {
  return withFile(path, (file) => withDecompressed(file, decompress, (source) => {
    const index = readBundleIndex(source, options.type ?? detectBundleType(source), engine, { lenient: true });
    const writes = planAroundDamage(index, () => planUnbundle(index.visitOrder, options));
    withOutputs((open) => {
      for (const write of writes) {
        const out = open(outputs[write.target]);
        const content = write.content;
        if (content.kind === "entry" && index.handler === "object" && isObjectHostEntry(source, content.entry)) {
          // LLVM 19 gives the host the object without its bundle sections (an llvm-objcopy run).
          if (options.printExternalCommands) options.commands?.(objcopyHostCommand(path, llvmTempName()));
          else out.write(hostObject(readExact(source, 0, source.size)));
        } else if (content.kind === "entry") copyRange(engine, source, content.entry.offset, content.entry.size, out);
        else if (content.kind === "whole-input") copyRange(engine, source, 0, source.size, out);
      }
    });
    return { writes, inputSize: source.size };
  }));
}

/** `-unbundle` for a validated job. */
export function unbundleFile(
  job: BundlerJob,
  engine: Engine = defaultEngine(),
  decompress: DecompressOptions = {},
  hooks: ArchiveUnbundleHooks & { readonly commands?: (text: string) => void } = {},
): UnbundleResult {
  if (job.type === "a") return { writes: [], inputSize: unbundleArchive(job, engine, decompress, hooks).inputSize };
  return unbundleToFiles(job.inputs[0], { ...job, commands: hooks.commands }, job.outputs, engine, decompress);
}
