/**
 * Batch unbundling for CI pipelines: many inputs, one set of targets, one process. Each input is
 * unbundled exactly as `offload-bundler -unbundle` would (same matching, same missing-bundle rules) into
 * `<out-dir>/<input file name>-<target ID, ':' → '_'>`; a failing input is reported and the others go
 * on. Large batches are spread over worker threads (src/bundler/node/batch-worker.ts).
 */
import { availableParallelism } from "node:os";
import { basename, join } from "node:path";
import { OffloadKitError, isOffloadKitError } from "../../engine/errors.js";
import { linkForWorker } from "../../process/temporaries.js";
import type { TemporariesLink } from "../../process/temporaries.js";
import { workerThreadsModule } from "../../node/builtins.js";
import { checkTargets, normalisationCollision } from "../options.js";
import { byteStringToUnicode, utf8ToByteString } from "../../formats/bytes.js";
import { unbundleToFiles } from "./jobs.js";
import type { UnbundleOptions } from "./jobs.js";

export interface BatchOptions {
  /** Requested targets as typed (normalised here, like -targets). */
  readonly targets: readonly string[];
  readonly type?: string;
  readonly outDir: string;
  readonly allowMissingBundles?: boolean;
  readonly hipOpenmpCompatible?: boolean;
  /** Worker threads; 0 or 1 runs in this thread; undefined chooses by batch size. */
  readonly jobs?: number;
  readonly onProgress?: (done: number, total: number) => void;
}

export interface BatchOutput {
  /** Normalised target ID. */
  readonly target: string;
  readonly path: string;
  /** The stored ID of the entry written, or null for an empty or host-copy output. */
  readonly entry: string | null;
  readonly content: "entry" | "whole-input" | "empty";
  readonly size: number;
}

export interface BatchFileResult {
  readonly input: string;
  readonly outputs: readonly BatchOutput[];
  readonly error?: { readonly code: string; readonly message: string };
}

/** A batch below this many files runs in the calling thread (worker start-up costs more; see bench/). */
export const WORKER_THRESHOLD = 256;
/**
 * Workers only by default with at least this many cores: on 2 cores a 2000-file batch took 0.40 s in
 * one thread and 0.39-0.43 s with two workers, for 23 MB more peak RSS (measured, bench/bundler.mjs).
 */
export const WORKER_MIN_CORES = 4;

/** The file name an output gets: never a path separator, so it cannot leave the output folder. */
export function outputFileName(input: string, target: string): string {
  return `${basename(input)}-${byteStringToUnicode(target).replace(/[:/\\\0]/g, "_")}`;
}

export function normaliseBatchTargets(rawTargets: readonly string[]): string[] {
  const raw = rawTargets.map(utf8ToByteString);
  const checked = checkTargets(raw);
  if ("error" in checked) throw new OffloadKitError("BAD_TARGETS", checked.error);
  const collision = normalisationCollision(raw, checked.targets);
  if (collision !== undefined) throw new OffloadKitError("BAD_TARGETS", collision);
  return checked.targets;
}

/** Unbundles one input of a batch; never throws for bad input (the error is in the result). */
export function unbundleOne(input: string, options: UnbundleOptions, outDir: string): BatchFileResult {
  const paths = options.targets.map((t) => join(outDir, outputFileName(input, t)));
  try {
    const { writes, inputSize } = unbundleToFiles(input, options, paths);
    const outputs = writes
      .map((w): BatchOutput => ({
        target: options.targets[w.target],
        path: paths[w.target],
        entry: w.content.kind === "entry" ? w.content.entry.id : null,
        content: w.content.kind,
        size: w.content.kind === "entry" ? w.content.entry.size : w.content.kind === "empty" ? 0 : inputSize,
      }))
      .sort((a, b) => options.targets.indexOf(a.target) - options.targets.indexOf(b.target));
    return { input, outputs };
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    return { input, outputs: [], error: { code: e.code, message: e.message } };
  }
}

/** Two inputs with one file name would write outputs with the same names: refused before anything is written. */
export function checkNameCollisions(inputs: readonly string[]): void {
  const byName = new Map<string, string>();
  for (const input of inputs) {
    const name = basename(input);
    const other = byName.get(name);
    if (other !== undefined && other !== input) {
      throw new OffloadKitError("OUTPUT_COLLISION", `inputs '${other}' and '${input}' have the same file name; their outputs would overwrite each other`);
    }
    byName.set(name, input);
  }
}

export async function unbundleBatch(inputs: readonly string[], options: BatchOptions): Promise<BatchFileResult[]> {
  checkNameCollisions(inputs);
  const unbundle: UnbundleOptions = {
    type: options.type,
    targets: normaliseBatchTargets(options.targets),
    allowMissingBundles: options.allowMissingBundles,
    hipOpenmpCompatible: options.hipOpenmpCompatible,
  };
  const cores = availableParallelism();
  const jobs = options.jobs ?? (inputs.length >= WORKER_THRESHOLD && cores >= WORKER_MIN_CORES ? Math.min(cores, 8) : 1);
  const entry = workerEntry();
  if (jobs <= 1 || inputs.length < 2 || entry === undefined) {
    const results: BatchFileResult[] = [];
    for (const input of inputs) {
      results.push(unbundleOne(input, unbundle, options.outDir));
      options.onProgress?.(results.length, inputs.length);
    }
    return results;
  }
  return runWorkers(entry, inputs, unbundle, options, jobs);
}

/** Messages between the batch and its workers. */
export type WorkerRequest = { readonly kind: "files"; readonly start: number; readonly inputs: readonly string[] } | { readonly kind: "stop" };
export type WorkerReply = { readonly kind: "results"; readonly start: number; readonly results: BatchFileResult[] } | { readonly kind: "ready" };

export interface WorkerSetup {
  readonly options: UnbundleOptions;
  readonly outDir: string;
  /** Under the bins' supervisor: where the worker reports its temporary files (src/process/temporaries.ts). */
  readonly temporaries?: TemporariesLink;
}

/**
 * The worker entry point, next to this module in the build. Run from the TypeScript sources (tsx,
 * vitest) there is no JavaScript worker to start (Node 20 does not apply tsx's loader hooks inside
 * workers), so the batch runs in the calling thread; test/cli/offload-kit.test.ts covers the workers
 * through the built CLI.
 */
function workerEntry(): URL | undefined {
  return import.meta.url.endsWith(".ts") ? undefined : new URL("./batch-worker.js", import.meta.url);
}

async function runWorkers(entry: URL, inputs: readonly string[], unbundle: UnbundleOptions, options: BatchOptions, jobs: number): Promise<BatchFileResult[]> {
  const results: BatchFileResult[] = new Array(inputs.length);
  // Small slices keep the workers evenly loaded; each message costs far less than a file.
  const slice = Math.max(8, Math.min(64, Math.ceil(inputs.length / (jobs * 8))));
  let next = 0;
  let done = 0;
  const setup: WorkerSetup = { options: unbundle, outDir: options.outDir };
  await Promise.all(
    Array.from({ length: jobs }, () =>
      new Promise<void>((resolve, reject) => {
        const temporaries = linkForWorker();
        const worker = new (workerThreadsModule().Worker)(entry, {
          workerData: { ...setup, temporaries } satisfies WorkerSetup,
          transferList: temporaries === undefined ? [] : [temporaries.port],
        });
        const feed = () => {
          if (next >= inputs.length) {
            worker.postMessage({ kind: "stop" } satisfies WorkerRequest);
            return;
          }
          const start = next;
          next = Math.min(inputs.length, next + slice);
          worker.postMessage({ kind: "files", start, inputs: inputs.slice(start, next) } satisfies WorkerRequest);
        };
        worker.on("message", (reply: WorkerReply) => {
          if (reply.kind === "results") {
            reply.results.forEach((r, k) => (results[reply.start + k] = r));
            done += reply.results.length;
            options.onProgress?.(done, inputs.length);
          }
          feed();
        });
        worker.on("error", reject);
        worker.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`batch worker exited with code ${code}`))));
      }),
    ),
  );
  return results;
}
