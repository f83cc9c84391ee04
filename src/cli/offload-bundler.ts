/**
 * `offload-bundler`: a drop-in for clang-offload-bundler 19. The flags, checks, messages and exit
 * codes are the native tool's (spec bundler.md §1); the work is done by src/bundler/node/jobs.ts.
 * Documented differences: -list prints IDs in file order; a failure leaves no partial output; where
 * the native tool crashes or writes a corrupt file we print an error.
 */
import { latin1Encode } from "../formats/bytes.js";
import { validateBundlerOptions } from "../bundler/options.js";
import type { BundlerOptions } from "../bundler/options.js";
import { compressionConfig, formatTimerReport } from "../bundler/compressed.js";
import type { TimerLine } from "../bundler/compressed.js";
import { CompressionMethod } from "../formats/ccob.js";
import { bundleFiles, listBundle, unbundleFile } from "../bundler/node/jobs.js";
import type { VerboseSink } from "../compress/node/decompress.js";
import { LLVM_COMPAT_VERSION, PACKAGE_VERSION } from "../version.js";
import { flagValue, listValue, numberValue, parseCommandLine, stringValue } from "./args.js";
import type { ParseResult } from "./args.js";
import type { CliIO } from "./io.js";
import { printError, printWarning, responseFileReader, runGuarded } from "./io.js";
import { bundlerToolSpec } from "./offload-bundler-options.js";

export const BUNDLER_VERSION_TEXT = `offload-kit offload-bundler version ${LLVM_COMPAT_VERSION} (offload-kit ${PACKAGE_VERSION})\n`;

function toOptions(parsed: Extract<ParseResult, { kind: "ok" }>): BundlerOptions {
  const { values, occurrences } = parsed;
  const given = (name: string) => (occurrences[name] ?? 0) > 0;
  return {
    type: stringValue(values, "type"),
    targets: listValue(values, "targets"),
    targetsOccurrences: occurrences.targets ?? 0,
    input: listValue(values, "input"),
    inputs: listValue(values, "inputs"),
    output: listValue(values, "output"),
    outputs: listValue(values, "outputs"),
    unbundle: flagValue(values, "unbundle"),
    list: flagValue(values, "list"),
    allowMissingBundles: flagValue(values, "allow-missing-bundles"),
    bundleAlign: given("bundle-align") ? numberValue(values, "bundle-align") : 1,
    checkInputArchive: flagValue(values, "check-input-archive"),
    hipOpenmpCompatible: flagValue(values, "hip-openmp-compatible"),
    printExternalCommands: flagValue(values, "###"),
    compress: given("compress") ? flagValue(values, "compress") : undefined,
    compressionLevel: given("compression-level") ? numberValue(values, "compression-level") : undefined,
    verbose: given("verbose") ? flagValue(values, "verbose") : undefined,
  };
}

export function runBundler(argv0: string, args: readonly string[], io: CliIO): number {
  const parsed = parseCommandLine(bundlerToolSpec(BUNDLER_VERSION_TEXT), argv0, args, responseFileReader(io.cwd));
  if (parsed.kind === "exit") {
    if (parsed.stdout) io.stdout(parsed.stdout);
    if (parsed.stderr) io.stderr(parsed.stderr);
    return parsed.code;
  }
  if (parsed.stderr) io.stderr(parsed.stderr);
  const options = toOptions(parsed);
  // OffloadBundlerConfig reads the environment (and warns about it) before any option is checked.
  const config = compressionConfig(io.env, options);
  for (const warning of config.warnings) io.stderr(warning);
  const timers: TimerLine[] = [];
  const verbose: VerboseSink | undefined = config.verbose ? { text: (text) => io.stderr(text), timer: (line) => timers.push(line) } : undefined;
  const status = runGuarded(io, argv0, () => {
    const validation = validateBundlerOptions(options);
    for (const warning of validation.warnings) printWarning(io, argv0, warning);
    if (validation.error !== undefined || validation.job === undefined) {
      printError(io, argv0, validation.error ?? "invalid options");
      return 1;
    }
    const job = { ...validation.job, compress: config.compress };
    if (job.mode === "list") {
      const ids = listBundle(job.inputs[0], job.type, undefined, { verbose });
      if (ids.length > 0) io.stdout(latin1Encode(ids.map((id) => `${id}\n`).join("")));
      return 0;
    }
    if (job.mode === "bundle") {
      bundleFiles(job, undefined, {
        compression: { version: config.version, method: CompressionMethod.Zstd, level: config.level }, verbose, commands: (text) => io.stderr(text),
      });
    } else unbundleFile(job, undefined, { verbose }, { warn: (text) => io.stderr(text), env: io.env, commands: (text) => io.stderr(text) });
    return 0;
  });
  // LLVM prints its timer group at exit, when a -verbose timer ran (even after an error).
  if (timers.length > 0) io.stderr(formatTimerReport(timers));
  return status;
}
