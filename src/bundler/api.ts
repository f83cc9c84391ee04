/**
 * The bundler as a library over in-memory bytes: what `offload-bundler` does, for browsers and for
 * callers that already hold the files. Same validation, same IDs, same matching as the CLI; errors are
 * OffloadKitError with LLVM's messages.
 */
import { OffloadKitError } from "../engine/errors.js";
import type { Engine } from "../engine/engine.js";
import { writeBinaryBundle } from "../formats/bundle.js";
import { writeTextBundle } from "../formats/text-bundle.js";
import type { BundlerOptions } from "./options.js";
import { validateBundlerOptions } from "./options.js";
import { fileTypeOrThrow, readBundleIndex } from "./read.js";
import { planUnbundle } from "./unbundle-plan.js";

export interface BundleRequest {
  /** The -type: i ii cui hipi d ll bc s o gch ast. */
  readonly type: string;
  /** -targets, as typed (normalised to LLVM 19's stored IDs). */
  readonly targets: readonly string[];
  /** One input per target. */
  readonly inputs: readonly Uint8Array[];
  readonly bundleAlign?: number;
}

function validated(options: BundlerOptions) {
  const validation = validateBundlerOptions(options);
  if (validation.job === undefined) throw new OffloadKitError("BAD_OPTIONS", validation.error ?? "invalid options");
  return validation.job;
}

/** Bundles in memory; byte-identical to `clang-offload-bundler` 19 for binary and text types. */
export function bundle(request: BundleRequest): Uint8Array {
  const job = validated({
    type: request.type,
    targets: [...request.targets],
    input: request.inputs.map((_, i) => `input ${i}`),
    output: ["output"],
    bundleAlign: request.bundleAlign,
  });
  const info = fileTypeOrThrow(job.type);
  const entries = job.targets.map((id, i) => ({ id, data: request.inputs[i] }));
  return info.comment !== undefined ? writeTextBundle(info.comment, entries) : writeBinaryBundle(entries, job.bundleAlign);
}

export interface UnbundleRequest {
  readonly type: string;
  readonly targets: readonly string[];
  readonly allowMissingBundles?: boolean;
  readonly hipOpenmpCompatible?: boolean;
  readonly engine?: Engine;
}

/** Unbundles in memory: one output per requested target, in -targets order (views into `input`). */
export function unbundle(input: Uint8Array, request: UnbundleRequest): Uint8Array[] {
  const job = validated({
    type: request.type,
    targets: [...request.targets],
    input: ["input"],
    output: request.targets.map((_, i) => `output ${i}`),
    unbundle: true,
    allowMissingBundles: request.allowMissingBundles,
    hipOpenmpCompatible: request.hipOpenmpCompatible,
  });
  const index = readBundleIndex(input, job.type, request.engine);
  const outputs: Uint8Array[] = job.targets.map(() => new Uint8Array(0));
  for (const write of planUnbundle(index.visitOrder, job)) {
    const content = write.content;
    if (content.kind === "entry") outputs[write.target] = input.subarray(content.entry.offset, content.entry.offset + content.entry.size);
    else if (content.kind === "whole-input") outputs[write.target] = input;
  }
  return outputs;
}

/** The bundle entry IDs of an in-memory bundle, in file order. */
export function listBundleIds(input: Uint8Array, type: string, engine?: Engine): string[] {
  return readBundleIndex(input, type, engine).entries.map((e) => e.id);
}
