/**
 * Files for `offload-kit prune`, `compress` and `decompress` (the only file of src/prune/ that uses node:*):
 * where each output goes (`-o OUT` for one input, `--out-dir=DIR` for `DIR/<file name>`, `--in-place`),
 * and writing them all or none. Every output goes to a temporary file beside its destination and is
 * renamed over it only when every input has been edited (src/node/output.ts `withOutputs`), so a failure
 * leaves every input and destination byte-identical. Outputs take the input's permission bits (an
 * executable library stays executable; `--in-place` keeps the file's mode). Plans (./plan.ts) are written
 * by copying input ranges through the engine window and compressing on worker threads, so a plain bundle
 * file is never held whole. `--dry-run` plans every edit and writes nothing (a compress dry run compresses
 * in memory to know the size). A linked library's fat binaries are compressed on worker threads into a
 * temporary file while planning (src/compress/node/compress-spool.ts), removed once the output is written.
 */
import { chmodSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { Codecs } from "../compress/codecs.js";
import { OffloadKitError } from "../engine/errors.js";
import { engine } from "../engine/select.js";
import type { ByteSource } from "../engine/source.js";
import { CompressingWriter } from "../compress/node/compress.js";
import { CompressedSpool } from "../compress/node/compress-spool.js";
import type { BundleToCompress } from "../compress/node/compress-spool.js";
import { copyRange } from "../node/copy.js";
import { fileError } from "../node/errors.js";
import { FileSource } from "../node/file-source.js";
import { withOutputs } from "../node/output.js";
import { removeStaleTemporaries } from "../process/temporaries.js";
import { useNativeZstd } from "../compress/node/zstd-native.js";
import type { OutputFile } from "../node/output.js";
import type { PlannedEdit } from "./index.js";
import { withBundleCompressor } from "./linked-elf.js";
import { materialize } from "./plan.js";
import { verifyOutputFile } from "../verify/node.js";
import type { OutputPlan } from "./plan.js";

export type Destination =
  | { readonly kind: "output"; readonly path: string }
  | { readonly kind: "out-dir"; readonly dir: string }
  | { readonly kind: "in-place" }
  | { readonly kind: "dry-run" }
  /**
   * One output per input, chosen by the caller (src/trees/: a folder mirrored); an input left unchanged is
   * written there only when `writeUnchanged`, else left to the caller (who hard-links it).
   */
  | { readonly kind: "outputs"; readonly outputs: readonly { readonly path: string; readonly writeUnchanged: boolean }[] };

function sameFile(a: string, b: string): boolean {
  try {
    const x = statSync(a);
    const y = statSync(b);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/** Where each input's output goes; errors (two inputs for -o, a missing folder, a clash) before anything is read. */
export function destinations(inputs: readonly string[], destination: Destination): (string | undefined)[] {
  switch (destination.kind) {
    case "dry-run":
      return inputs.map(() => undefined);
    case "outputs":
      if (destination.outputs.length !== inputs.length) throw new Error("destinations: one output per input");
      return destination.outputs.map((o) => o.path);
    case "in-place": {
      const seen = new Set<string>();
      for (const input of inputs) {
        const key = resolve(input);
        if (seen.has(key)) throw new OffloadKitError("OUTPUT_CLASH", `'${input}' is given twice; --in-place would replace it twice`, { field: "--in-place" });
        seen.add(key);
      }
      return [...inputs];
    }
    case "output":
      if (inputs.length !== 1) {
        throw new OffloadKitError("BAD_OPTIONS", `-o names one output, but ${inputs.length} inputs were given (use --out-dir or --in-place)`, { field: "-o" });
      }
      if (sameFile(destination.path, inputs[0])) {
        throw new OffloadKitError("OUTPUT_IS_INPUT", `'${destination.path}' is the input itself (use --in-place to replace it)`, { field: "-o" });
      }
      return [destination.path];
    case "out-dir": {
      let stat;
      try {
        stat = statSync(destination.dir);
      } catch (e) {
        throw fileError(destination.dir, e);
      }
      if (!stat.isDirectory()) throw new OffloadKitError("ENOTDIR", `'${destination.dir}': not a directory`, { field: "--out-dir" });
      const outputs = inputs.map((input) => join(destination.dir, basename(input)));
      const seen = new Map<string, string>();
      outputs.forEach((output, i) => {
        const key = resolve(output);
        const other = seen.get(key);
        if (other !== undefined) {
          throw new OffloadKitError("OUTPUT_CLASH", `'${other}' and '${inputs[i]}' would both be written to '${output}'`, { field: "--out-dir" });
        }
        if (key === resolve(inputs[i]) || sameFile(output, inputs[i])) {
          throw new OffloadKitError("OUTPUT_IS_INPUT", `'${output}' is the input itself (use --in-place to replace it)`, { field: "--out-dir" });
        }
        seen.set(key, inputs[i]);
      });
      return outputs;
    }
  }
}

/**
 * An input opened as every other command opens one (src/node/file-source.ts: a pipe or FIFO is spooled), with
 * the mode its output takes: a regular file's own (an executable library stays executable), none for a stream
 * (the output is a new file). `--in-place` needs a regular file: renaming over a pipe would replace the pipe.
 */
function openInput(path: string, inPlace: boolean, opened?: OpenedInputs): { source: ByteSource & { close(): void }; mode: number | undefined } {
  const member = opened?.get(path);
  if (member !== undefined) {
    if (inPlace) throw new OffloadKitError("NOT_A_FILE", `'${path}': a package member cannot be replaced in place (write it out with -o or --out-dir)`, { field: "--in-place" });
    return { source: member, mode: undefined };
  }
  // An interrupted in-place edit of this very file is finished before it is read (src/node/journal.ts).
  if (inPlace) removeStaleTemporaries(dirname(resolve(path)));
  let stat;
  try {
    stat = statSync(path);
  } catch (e) {
    throw fileError(path, e);
  }
  if (inPlace && !stat.isFile()) throw new OffloadKitError("NOT_A_FILE", `'${path}': not a regular file (--in-place replaces a file)`);
  return { source: FileSource.open(path), mode: stat.isFile() ? stat.mode & 0o7777 : undefined };
}

function withName(path: string, e: unknown): unknown {
  return e instanceof OffloadKitError && !e.message.startsWith(path) ? new OffloadKitError(e.code, `${path}: ${e.message}`, { offset: e.offset, field: e.field, cause: e }) : e;
}

/** Inputs the caller opened itself (a package member named `pkg!member`), by the name given; editFiles closes each after use. */
export type OpenedInputs = ReadonlyMap<string, ByteSource & { close(): void }>;

export interface FileEdit<P extends PlannedEdit> {
  readonly input: string;
  /** undefined for --dry-run. */
  readonly output: string | undefined;
  readonly planned?: P;
  /** Bytes of the output (written, or that would be written). */
  readonly outputSize?: number;
  /** Set only in dry runs, where every file is tried; a real run stops at the first failure. */
  readonly error?: OffloadKitError;
}

/** Writes a plan into `out`, copying input ranges through the engine window and compressing on worker threads. */
function writePlan(plan: OutputPlan, source: ByteSource, out: OutputFile): void {
  if (plan.compress !== undefined) {
    const writer = new CompressingWriter(out, plan.compress, plan.size);
    try {
      for (const piece of plan.pieces) {
        if ("bytes" in piece) writer.write(piece.bytes);
        else if ("zeros" in piece) writer.writeZeros(piece.zeros);
        else writer.copyFrom(piece.source ?? source, piece.offset, piece.size);
      }
      writer.finish();
    } catch (e) {
      writer.abort();
      throw e;
    }
    return;
  }
  for (const piece of plan.pieces) {
    if ("bytes" in piece) out.write(piece.bytes);
    else if ("zeros" in piece) out.writeZeros(piece.zeros);
    else copyRange(engine(), piece.source ?? source, piece.offset, piece.size, out);
  }
}

/**
 * Runs `plan` with a spool for the fat binaries it compresses; the spool is closed by the caller after
 * writing. Fat binaries compressed ahead (compressAhead) are used when the plan asks for the same ones.
 */
function planSpooled<P>(plan: () => P, spool: { current?: CompressedSpool }, ahead?: CompressedAhead): P {
  return withBundleCompressor((bundles) => {
    if (ahead !== undefined && ahead.sizes.length === bundles.length && ahead.sizes.every((size, i) => size === bundles[i].source.size)) return ahead.results;
    spool.current ??= new CompressedSpool();
    return spool.current.compressAll(bundles);
  }, plan);
}

/** One input's fat binaries, compressed before its plan ran: their sizes, and sources over the results. */
interface CompressedAhead {
  readonly sizes: readonly number[];
  readonly results: ByteSource[];
}

/** Fat binaries compressed ahead, per input; `close` removes their spools (after editFiles). */
export interface CompressedAheads {
  readonly byInput: ReadonlyMap<string, CompressedAhead>;
  close(): void;
}

/** What stops a plan once it has handed its fat binaries to the compressor (compressAhead only wants the list). */
const LISTED = Symbol("fat binaries listed");

/**
 * Compresses every linked library's fat binaries before editFiles plans anything, with libzstd on libuv's
 * thread pool (src/compress/node/compress-spool.ts `compressAllAsync`: no worker threads), where node:zlib has zstd;
 * elsewhere it does nothing and editFiles compresses on worker threads. Each input's plan runs once to
 * list them (stopped when it hands them over); editFiles then plans again and gets these results. Anything
 * that fails here is left for editFiles to meet again and report as it always does: an unreadable input,
 * a plan that fails, a destination that cannot be written, a compression error.
 */
export async function compressAhead<P extends PlannedEdit>(
  inputs: readonly string[],
  destination: Destination,
  plan: (source: ByteSource, name: string) => P,
): Promise<CompressedAheads> {
  const byInput = new Map<string, CompressedAhead>();
  const spools: CompressedSpool[] = [];
  const close = () => {
    for (const spool of spools.splice(0)) spool.close();
  };
  if (!useNativeZstd()) return { byInput, close };
  try {
    destinations(inputs, destination);
  } catch {
    return { byInput, close };
  }
  try {
    for (const input of new Set(inputs)) {
      // Only regular files: reading a pipe here would leave nothing for editFiles.
      let regular = false;
      try {
        regular = statSync(input).isFile();
      } catch {
        // editFiles reports it.
      }
      if (!regular) continue;
      const source = FileSource.open(input);
      try {
        let listed: readonly BundleToCompress[] | undefined;
        try {
          withBundleCompressor((bundles) => {
            listed = bundles;
            throw LISTED;
          }, () => plan(source, input));
        } catch (e) {
          if (e !== LISTED) continue;
        }
        if (listed === undefined || listed.length === 0) continue;
        const spool = new CompressedSpool();
        spools.push(spool);
        try {
          const results = await spool.compressAllAsync(listed);
          byInput.set(input, { sizes: listed.map((b) => b.source.size), results });
        } catch {
          // editFiles compresses this input again and reports the failure.
        }
      } finally {
        source.close();
      }
    }
  } catch (e) {
    close();
    throw e;
  }
  return { byInput, close };
}

/**
 * Plans every input's edit with `plan` and writes the outputs all or none. In a dry run every input is
 * tried and failures are reported per file; otherwise the first failure throws and nothing is written.
 */
export function editFiles<P extends PlannedEdit>(
  inputs: readonly string[],
  destination: Destination,
  codecs: Codecs,
  plan: (source: ByteSource, name: string) => P,
  /** Runs after every input is edited and before anything is renamed into place; throwing discards every output. */
  check?: (edits: readonly FileEdit<P>[]) => void,
  /** Fat binaries compressed before planning (compressAhead); the caller closes them. */
  ahead?: CompressedAheads,
  opened?: OpenedInputs,
): FileEdit<P>[] {
  const outputs = destinations(inputs, destination);
  if (destination.kind === "dry-run") {
    const edits = inputs.map((input): FileEdit<P> => {
      let source: (ByteSource & { close(): void }) | undefined;
      const spool: { current?: CompressedSpool } = {};
      try {
        source = openInput(input, false, opened).source;
        const open = source;
        const planned = planSpooled(() => plan(open, input), spool, ahead?.byInput.get(input));
        const p = planned.plan;
        const outputSize = p === undefined ? source.size : p.compress === undefined ? p.size : materialize(p, source, codecs).length;
        return { input, output: undefined, planned, outputSize };
      } catch (e) {
        const error = withName(input, e);
        if (error instanceof OffloadKitError) return { input, output: undefined, error };
        throw error;
      } finally {
        source?.close();
        spool.current?.close();
      }
    });
    check?.(edits.filter((e) => e.error === undefined));
    return edits;
  }
  return withOutputs((open) => {
    const edits = inputs.map((input, i): FileEdit<P> => {
      const output = outputs[i]!;
      const { source, mode } = openInput(input, destination.kind === "in-place", opened);
      const spool: { current?: CompressedSpool } = {};
      try {
        let planned: P;
        try {
          planned = planSpooled(() => plan(source, input), spool, ahead?.byInput.get(input));
        } catch (e) {
          throw withName(input, e);
        }
        // In place and unchanged: nothing to write, the file is already the output.
        if (destination.kind === "in-place" && planned.plan === undefined) return { input, output, planned, outputSize: source.size };
        if (destination.kind === "outputs" && planned.plan === undefined && !destination.outputs[i]!.writeUnchanged) return { input, output, planned, outputSize: source.size };
        const file = open(output);
        if (planned.plan === undefined) copyRange(engine(), source, 0, source.size, file);
        else writePlan(planned.plan, source, file);
        const outputSize = file.position;
        file.close();
        if (file.tempPath !== undefined && mode !== undefined) {
          try {
            chmodSync(file.tempPath, mode);
          } catch (e) {
            throw fileError(output, e);
          }
        }
        // Checked before anything is renamed into place (src/verify/); an output on stdout or a device cannot be.
        if (file.tempPath !== undefined && planned.plan !== undefined) verifyOutputFile(file.tempPath, source, planned, codecs, input);
        return { input, output, planned, outputSize };
      } finally {
        source.close();
        spool.current?.close();
      }
    });
    check?.(edits);
    return edits;
  });
}
