/**
 * clang-offload-bundler's job description, checked the way its main() checks it
 * (clang/tools/clang-offload-bundler/ClangOffloadBundler.cpp; spec bundler.md §1.1): the same checks,
 * in the same order, with the same messages. A few inputs on which the native tool crashes or writes a
 * corrupt file get an error of ours instead; they are checked after every native check.
 */
import { utf8ToByteString } from "../formats/bytes.js";
import { formatInvalidTargetMessage, getConflictTargetIdCombination, hasHostKind, parseTarget, storedId } from "./targets.js";

/** Options as given on the command line (after -opt parsing). */
export interface BundlerOptions {
  type: string;
  targets: string[];
  /** Number of -targets occurrences (LLVM checks occurrences, not values). */
  targetsOccurrences?: number;
  input: string[];
  inputs?: string[];
  output: string[];
  outputs?: string[];
  unbundle?: boolean;
  list?: boolean;
  allowMissingBundles?: boolean;
  bundleAlign?: number;
  checkInputArchive?: boolean;
  hipOpenmpCompatible?: boolean;
  printExternalCommands?: boolean;
  compress?: boolean;
  compressionLevel?: number;
  verbose?: boolean;
}

export type BundlerMode = "bundle" | "unbundle" | "list";

/** A validated job. Targets are byte strings; `targets` holds the normalised (stored) IDs. */
export interface BundlerJob {
  readonly mode: BundlerMode;
  readonly type: string;
  readonly rawTargets: readonly string[];
  readonly targets: readonly string[];
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly allowMissingBundles: boolean;
  readonly bundleAlign: number;
  readonly checkInputArchive: boolean;
  readonly hipOpenmpCompatible: boolean;
  /** -###: print the llvm-objcopy command lines (object-file inputs) instead of running them. */
  readonly printExternalCommands?: boolean;
  /** Index of the host target, or -1. */
  readonly hostInputIndex: number;
  /** Every target is hip/hipv4, so no host entry is needed. */
  readonly allowNoHost: boolean;
  readonly compress?: boolean;
  readonly compressionLevel?: number;
  readonly verbose?: boolean;
}

export interface Validation {
  /** Warnings printed before the job (or before the error). */
  readonly warnings: string[];
  readonly job?: BundlerJob;
  /** The first failing check's message (printed as `<argv0>: error: <message>`). */
  readonly error?: string;
}

export function validateBundlerOptions(options: BundlerOptions): Validation {
  const warnings: string[] = [];
  const fail = (error: string): Validation => ({ warnings, error });
  const inputs = [...options.input];
  const outputs = [...options.output];
  const deprecatedInputs = options.inputs ?? [];
  const deprecatedOutputs = options.outputs ?? [];
  const targetsGiven = options.targetsOccurrences ?? (options.targets.length > 0 ? 1 : 0);

  if (options.input.length > 0 && deprecatedInputs.length > 0) {
    return fail("-inputs and -input cannot be used together, use only -input instead");
  }
  if (deprecatedInputs.length > 0) {
    warnings.push("-inputs is deprecated, use -input instead");
    inputs.push(...deprecatedInputs);
  }
  if (options.output.length > 0 && deprecatedOutputs.length > 0) {
    return fail("-outputs and -output cannot be used together, use only -output instead");
  }
  if (deprecatedOutputs.length > 0) {
    warnings.push("-outputs is deprecated, use -output instead");
    outputs.push(...deprecatedOutputs);
  }

  const common = {
    type: options.type,
    allowMissingBundles: options.allowMissingBundles ?? false,
    bundleAlign: options.bundleAlign ?? 1,
    checkInputArchive: options.checkInputArchive ?? false,
    hipOpenmpCompatible: options.hipOpenmpCompatible ?? false,
    printExternalCommands: options.printExternalCommands ?? false,
    compress: options.compress,
    compressionLevel: options.compressionLevel,
    verbose: options.verbose,
  };

  if (options.list) {
    if (options.unbundle) return fail("-unbundle and -list cannot be used together");
    if (inputs.length !== 1) return fail("only one input file supported for -list");
    if (outputs.length > 0) return fail("-outputs option is invalid for -list");
    if (options.targets.length > 0) return fail("-targets option is invalid for -list");
    return {
      warnings,
      job: { ...common, mode: "list", rawTargets: [], targets: [], inputs, outputs, hostInputIndex: -1, allowNoHost: false },
    };
  }

  if (options.checkInputArchive) {
    if (!options.unbundle) return fail("-check-input-archive cannot be used while bundling");
    if (options.type !== "a") return fail("-check-input-archive can only be used for unbundling archives (-type=a)");
  }
  if (outputs.length === 0) return fail("no output file specified!");
  if (targetsGiven === 0) return fail("for the --targets option: must be specified at least once!");
  if (options.unbundle) {
    if (inputs.length !== 1) return fail("only one input file supported in unbundling mode");
    if (outputs.length !== options.targets.length) return fail("number of output files and targets should match in unbundling mode");
  } else {
    if (options.type === "a") return fail("Archive files are only supported for unbundling");
    if (outputs.length !== 1) return fail("only one output file supported in bundling mode");
    if (inputs.length !== options.targets.length) return fail("number of input files and targets should match in bundling mode");
  }

  const rawTargets = options.targets.map(utf8ToByteString);
  const checked = checkTargets(rawTargets);
  if ("error" in checked) return fail(checked.error);
  const { targets, hostCount, hostInputIndex, hipOnly } = checked;

  if ((options.unbundle && hostCount > 1) || (!options.unbundle && hostCount !== 1 && !hipOnly)) {
    return fail(`expecting exactly one host target but got ${hostCount}`);
  }

  // Checks of ours, where the native tool crashes or writes a corrupt file.
  if (common.bundleAlign < 1) {
    return fail(`-bundle-align must be at least 1 (clang-offload-bundler crashes with a division by zero here)`);
  }
  const collision = normalisationCollision(rawTargets, targets);
  if (collision !== undefined) return fail(collision);

  return {
    warnings,
    job: {
      ...common,
      mode: options.unbundle ? "unbundle" : "bundle",
      rawTargets,
      targets,
      inputs,
      outputs,
      hostInputIndex,
      allowNoHost: hipOnly,
    },
  };
}

export interface CheckedTargets {
  /** Normalised (stored) bundle entry IDs, in order. */
  readonly targets: string[];
  readonly hostCount: number;
  readonly hostInputIndex: number;
  readonly hipOnly: boolean;
}

/**
 * The per-target checks of the native main(), in its order: a repeated raw string, an unknown kind or
 * triple (with LLVM's message), then conflicting target IDs per kind-triple.
 */
export function checkTargets(rawTargets: readonly string[]): CheckedTargets | { error: string } {
  const seen = new Set<string>();
  const targets: string[] = [];
  // std::map<kind-triple, std::set<target ID>>: both levels iterate in sorted order.
  const idsByKindTriple = new Map<string, Set<string>>();
  let hostCount = 0;
  let hostInputIndex = -1;
  let hipOnly = true;
  for (let index = 0; index < rawTargets.length; index++) {
    const target = rawTargets[index];
    if (seen.has(target)) return { error: "Duplicate targets are not allowed" };
    seen.add(target);
    const info = parseTarget(target);
    targets.push(storedId(info));
    const invalid = formatInvalidTargetMessage(target, info);
    if (invalid !== undefined) return { error: invalid };
    const key = `${info.offloadKind}-${info.triple.str()}`;
    let ids = idsByKindTriple.get(key);
    if (ids === undefined) idsByKindTriple.set(key, (ids = new Set()));
    ids.add(info.targetId);
    if (hasHostKind(info)) {
      hostCount++;
      hostInputIndex = index;
    }
    if (info.offloadKind !== "hip" && info.offloadKind !== "hipv4") hipOnly = false;
  }
  for (const key of [...idsByKindTriple.keys()].sort(byteOrder)) {
    const conflict = getConflictTargetIdCombination(idsByKindTriple.get(key)!);
    if (conflict !== undefined) {
      return { error: `Cannot bundle inputs with conflicting targets: '${key}-${conflict[0]}' and '${key}-${conflict[1]}'` };
    }
  }
  return { targets, hostCount, hostInputIndex, hipOnly };
}

/** Two different targets that normalise to one ID: the native tool writes a corrupt bundle then. */
export function normalisationCollision(rawTargets: readonly string[], targets: readonly string[]): string | undefined {
  const firstByStored = new Map<string, string>();
  for (let i = 0; i < targets.length; i++) {
    const earlier = firstByStored.get(targets[i]);
    if (earlier !== undefined) {
      return `targets '${earlier}' and '${rawTargets[i]}' both normalise to the bundle entry ID '${targets[i]}'; ` +
        "clang-offload-bundler would write a corrupt bundle";
    }
    firstByStored.set(targets[i], rawTargets[i]);
  }
  return undefined;
}

function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
