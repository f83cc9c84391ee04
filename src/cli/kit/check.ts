/**
 * `offload-kit check FILE... --gpu=<target id> [--kind=hip|openmp] [--json]`: which device entries of
 * bundles, archives and fat objects (or of the offload files in a directory) a GPU configured as
 * `--gpu` can load, which it cannot and why. Exit 0 only when every input has at least one loadable
 * device entry; 1 otherwise (or on a usage error). Rules: src/inspect/check.ts; files: src/node/check.ts.
 */
import { isOffloadKitError } from "../../engine/errors.js";
import { byteStringToUnicode } from "../../formats/bytes.js";
import { parseGpu } from "../../inspect/check.js";
import type { GpuConfig } from "../../inspect/check.js";
import { checkPathsWithPackages } from "../../node/check-package.js";
import type { CheckedPackage } from "../../node/check-package.js";
import type { CheckRun, CheckedInput } from "../../node/check.js";
import { flagValue, listValue, stringValue } from "../args.js";
import { runGuardedAsync } from "./package-inputs.js";
import type { Subcommand } from "./common.js";
import { FILES_OPTION, JSON_OPTION, KIT_CATEGORY as category, VERSION_TEXT, pad, usageError } from "./common.js";

const MARK: Record<string, string> = { loadable: "yes", "not-loadable": "no", unknown: "?", host: "-" };

function summary(input: CheckedInput, gpu: GpuConfig): string {
  if (input.error !== undefined) return `${input.path}: error: ${input.error.message}`;
  if (input.kind === "none") return `${input.path}: no offload bundles`;
  const count = `${input.deviceEntries} device entr${input.deviceEntries === 1 ? "y" : "ies"}`;
  return `${input.path}: ${input.kind}, ${count}, ${input.loadable} loadable on ${gpu.input}`;
}

function formatInput(input: CheckedInput, gpu: GpuConfig): string {
  let out = `${summary(input, gpu)}\n`;
  if (input.entries.length === 0) return out;
  const archive = input.kind === "archive" || input.kind === "package";
  const rows = input.entries.map((e) => [
    archive ? byteStringToUnicode(e.member ?? "") : "",
    byteStringToUnicode(e.id),
    MARK[e.verdict.verdict],
    e.verdict.message,
  ]);
  const widths = [archive ? Math.max(6, ...rows.map((r) => r[0].length)) : 0, Math.max(5, ...rows.map((r) => r[1].length)), 5];
  const line = (r: string[]) => `  ${archive ? `${pad(r[0], widths[0])}  ` : ""}${pad(r[1], widths[1])}  ${pad(r[2], widths[2])}  ${r[3]}`.trimEnd();
  out += `${line(["MEMBER", "ENTRY", "LOADS", "WHY"])}\n`;
  for (const r of rows) out += `${line(r)}\n`;
  const without = (input as Partial<CheckedPackage>).membersWithoutCode ?? [];
  if (without.length > 0) out += `  members with no code for ${gpu.input}: ${without.join(", ")}\n`;
  return out;
}

function inputOk(input: CheckedInput): boolean {
  return input.error === undefined && input.loadable > 0;
}

function runOk(run: CheckRun): boolean {
  return run.inputs.length > 0 && run.emptyDirectories.length === 0 && run.inputs.every(inputOk);
}

function json(run: CheckRun, gpu: GpuConfig): unknown {
  return {
    gpu: { input: gpu.input, vendor: gpu.vendor, processor: gpu.processor, features: Object.fromEntries(gpu.features), canonical: gpu.canonical },
    ok: runOk(run),
    inputs: run.inputs.map((input) => ({
      path: input.path,
      kind: input.kind,
      ok: inputOk(input),
      deviceEntries: input.deviceEntries,
      loadable: input.loadable,
      ...((input as Partial<CheckedPackage>).membersWithoutCode !== undefined ? { membersWithoutCode: (input as CheckedPackage).membersWithoutCode } : {}),
      ...(input.error !== undefined ? { error: input.error } : {}),
      entries: input.entries.map((e) => ({
        ...(e.member !== undefined ? { member: byteStringToUnicode(e.member) } : {}),
        id: byteStringToUnicode(e.id),
        size: e.size,
        verdict: e.verdict.verdict,
        ...(e.verdict.reason !== undefined ? { reason: e.verdict.reason.code } : {}),
        message: e.verdict.message,
      })),
    })),
    skipped: run.skipped,
    emptyDirectories: run.emptyDirectories,
  };
}

export const check: Subcommand = {
  summary: "Will it run on my GPU? --gpu=<target id> FILE|DIR...: which device entries of bundles, archives and fat objects the GPU can load, and why not.",
  spec: () => ({
    overview: "offload-kit check: which device code a GPU can load\n",
    options: [
      FILES_OPTION,
      { name: "gpu", kind: "string", valueName: "target id", description: "The GPU and its configuration, e.g. gfx90a:xnack- or gfx942:sramecc+:xnack- (sm_XX for NVIDIA)", category },
      { name: "kind", kind: "string", valueName: "offload kind", description: "Only entries for this runtime count (hip, openmp); hip and hipv4 are one", category },
      JSON_OPTION,
    ],
    version: VERSION_TEXT,
  }),
  run(values, { name, io }) {
    const files = listValue(values, "files");
    const gpuText = stringValue(values, "gpu");
    if (files.length === 0) return usageError(io, name, "no input files");
    if (gpuText === "") return usageError(io, name, "--gpu=<target id> is required");
    let gpu: GpuConfig;
    try {
      gpu = parseGpu(gpuText);
    } catch (e) {
      if (isOffloadKitError(e)) return usageError(io, name, e.message);
      throw e;
    }
    const kind = stringValue(values, "kind") || undefined;
    return runGuardedAsync(io, name, async () => {
      const run = await checkPathsWithPackages(files, gpu, { kind });
      if (flagValue(values, "json")) {
        io.stdout(`${JSON.stringify(json(run, gpu), null, 2)}\n`);
      } else {
        for (const input of run.inputs) io.stdout(formatInput(input, gpu));
        for (const dir of run.emptyDirectories) io.stdout(`${dir}: no offload files\n`);
        const failing = run.inputs.filter((i) => !inputOk(i)).length + run.emptyDirectories.length;
        const skipped = run.skipped.length > 0 ? ` (${run.skipped.length} other file${run.skipped.length === 1 ? "" : "s"} skipped)` : "";
        io.stdout(failing === 0
          ? `OK: every input has device code ${gpu.input} can load${skipped}\n`
          : `FAIL: ${failing} of ${run.inputs.length + run.emptyDirectories.length} inputs have no device code ${gpu.input} can load${skipped}\n`);
      }
      return runOk(run) ? 0 : 1;
    });
  },
};
