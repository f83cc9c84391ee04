/**
 * `offload-kit check FILE... --gpu=<target id> [--kind=hip|hipv4|openmp|cuda|sycl] [--json]`: which device entries of
 * bundles, archives, fat objects and offload binaries (or of the offload files in a directory) a GPU
 * configured as `--gpu` can load, which it cannot and why. Each input is reported as one line (what it
 * holds, what loads, the verdict); with -v, a summary per target ID (entries, bytes, verdict) followed by
 * the detail (bundle or image index, offset, size) of every entry. Exit 0 only when every input has device
 * code that loads whichever way the features `--gpu` leaves unstated are set; 1 otherwise; 2 on a usage error. Per-file errors and damage go to
 * stderr. Rules: src/inspect/check.ts; files: src/inspect/node/check.ts.
 */
import { formatWithCommas } from "../../bundler/compressed.js";
import { isOffloadKitError } from "../../engine/errors.js";
import { byteStringToUnicode } from "../../formats/bytes.js";
import { CHECK_KINDS, describeCases, parseGpu } from "../../inspect/check.js";
import { describeOrigin } from "../../inspect/fat-binaries.js";
import type { EntryVerdict, GpuConfig } from "../../inspect/check.js";
import { checkPathsWithPackages } from "../../packages/node/check.js";
import type { CheckedMember, CheckedPackage } from "../../packages/node/check.js";
import type { CheckRun, CheckedEntry, CheckedFatBinary, CheckedInput } from "../../inspect/node/check.js";
import { flagValue, listValue, stringValue } from "../args.js";
import type { CliIO } from "../io.js";
import { printError } from "../io.js";
import { runGuardedAsync } from "./package-inputs.js";
import { describeNativeGpu, findNativeGpus, noNativeGpuMessage } from "../../node/native-gpus.js";
import type { NativeGpu } from "../../node/native-gpus.js";
import type { Subcommand } from "./common.js";
import { FOLDERS_HELP, PATHS_OPTION, JSON_OPTION, KIT_CATEGORY as category, VERSION_TEXT, Warnings, examplesHelp, hex, inputMessage, namedTargets, pad, plural, shortTarget, usageError, verboseOption } from "./common.js";

const MARK: Record<string, string> = { loadable: "yes", "not-loadable": "no", unknown: "?", host: "-" };

/** Entries grouped by ID, in the order first met (every entry of one ID has the same verdict). */
interface TargetRow {
  readonly id: string;
  readonly entries: number;
  readonly bytes: number;
  readonly verdict: EntryVerdict;
}

function targetRows(input: CheckedInput): TargetRow[] {
  const rows = new Map<string, { entries: number; bytes: number; verdict: EntryVerdict }>();
  for (const e of input.entries) {
    const row = rows.get(e.id);
    if (row === undefined) rows.set(e.id, { entries: 1, bytes: e.size, verdict: e.verdict });
    else {
      row.entries++;
      row.bytes += e.size;
    }
  }
  return [...rows].map(([id, row]) => ({ id, ...row }));
}

function inputOk(input: CheckedInput): boolean {
  return input.error === undefined && input.ok;
}

/** The fat binaries counted in the headline and listed: a file's when it has several or any in a section, a package's always. */
function listsFatBinaries(input: CheckedInput): boolean {
  return input.fatBinaries.length > 1 || input.fatBinaries.some((f) => f.section !== undefined) || (input.kind === "package" && input.fatBinaries.length > 0);
}

function fatBinaryCount(input: CheckedInput): string {
  const ok = input.fatBinaries.filter((f) => f.judgement.ok).length;
  return `${ok} of ${plural(input.fatBinaries.length, "fat binary", "fat binaries")} OK`;
}

/** `fat binary 1 at 0x3000 (kernels_b.hip, __hip_fatbin_wrapper 1)`: one fat binary, as messages name it. */
function fatBinaryName(f: CheckedFatBinary): string {
  const origin = describeOrigin(f.origin);
  return `fat binary ${f.index}${f.member !== undefined ? ` of ${byteStringToUnicode(f.member)}` : ""} at ${hex(f.offset)}${origin === "" ? "" : ` (${origin})`}`;
}

function fatBinaryWhy(f: CheckedFatBinary, gpu: GpuConfig): string {
  const ids = [...new Set(f.entries.filter((e) => e.verdict.verdict !== "host").map((e) => byteStringToUnicode(e.id)))];
  if (f.judgement.ok) return f.judgement.deviceEntries === 0 ? "host code only" : `${f.loadable > 0 ? f.loadable : describeCases(f.judgement.cases)} loadable`;
  const cases = f.judgement.unstated.length === 0 ? "" : ` (${describeCases(f.judgement.cases)})`;
  if (ids.length === 0) return `nothing ${gpu.input} can load: no code object found for its kpack key (the runtime stops with "kernel not found")`;
  return `nothing ${gpu.input} can load${cases}: hipErrorNoBinaryForGpu when it is registered; it holds ${ids.join(", ")}`;
}

function runOk(run: CheckRun): boolean {
  return run.inputs.length > 0 && run.emptyDirectories.length === 0 && run.unreadable.length === 0 && run.inputs.every(inputOk);
}

function headline(input: CheckedInput, gpu: GpuConfig): string {
  if (input.kind === "none") return `${input.path}: no offload bundles or offload binaries`;
  const count = plural(input.deviceEntries, "device entry", "device entries");
  const { unstated, cases } = input.judgement;
  const fat = listsFatBinaries(input) ? `; ${fatBinaryCount(input)}` : "";
  if (unstated.length === 0) return `${input.path}: ${input.kind}, ${count}, ${input.loadable} loadable on ${gpu.input}${fat}`;
  // Entries that load whatever the setting are counted in every case.
  return `${input.path}: ${input.kind}, ${count}, loadable on ${gpu.input}: ${describeCases(cases)}${fat}`;
}

function table(rows: string[][], right: readonly boolean[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => `  ${r.map((cell, i) => (i === r.length - 1 ? cell : pad(cell, widths[i]!, right[i] && r !== rows[0]))).join("  ")}`.trimEnd())
    .join("\n") + "\n";
}

function where(e: CheckedEntry): string {
  return e.image !== undefined ? `image ${e.image}` : `bundle ${e.bundle}`;
}

/** An entry of a compressed bundle: the compressed bundle's offset in the file, + the entry's in its decompressed bytes. */
function offsetText(e: CheckedEntry): string {
  return e.compressedAt !== undefined ? `${hex(e.compressedAt)}+${hex(e.offset)}` : hex(e.offset);
}

/** The verdict closing an input's summary line: OK, or FAIL and what the input holds instead. */
function verdictText(input: CheckedInput): string {
  if (input.kind === "none") return "";
  if (inputOk(input)) return "; OK";
  const ids = [...new Set(input.entries.filter((e) => e.verdict.verdict !== "host").map((e) => shortTarget(byteStringToUnicode(e.id))))];
  if (ids.length === 0) return "; FAIL";
  return `; FAIL (it holds ${namedTargets(ids)})`;
}

/**
 * One input: its summary line (what it holds, what loads, the verdict); with -v, the table per target ID,
 * every entry, every fat binary and every package member.
 */
function formatInput(input: CheckedInput, gpu: GpuConfig, verbose: boolean): string {
  let out = `${headline(input, gpu)}${verbose ? "" : verdictText(input)}\n`;
  if (!verbose) {
    const without = (input as Partial<CheckedPackage>).membersWithoutCode ?? [];
    if (without.length > 0) out += `  members with no code for ${gpu.input}: ${without.join(", ")}\n`;
    return out;
  }
  if (input.entries.length === 0) return out;
  const summary = targetRows(input).map((r) => [byteStringToUnicode(r.id), String(r.entries), formatWithCommas(r.bytes), MARK[r.verdict.verdict]!, r.verdict.message]);
  out += table([["TARGET", "ENTRIES", "BYTES", "LOADS", "WHY"], ...summary], [false, true, true, false, false]);
  const archive = input.entries.some((e) => e.member !== undefined);
  const detail = input.entries.map((e) => [
    where(e),
    ...(archive ? [byteStringToUnicode(e.member ?? "")] : []),
    offsetText(e),
    String(e.size),
    MARK[e.verdict.verdict]!,
    byteStringToUnicode(e.id),
  ]);
  const head = ["FROM", ...(archive ? ["MEMBER"] : []), "OFFSET", "SIZE", "LOADS", "ENTRY"];
  out += table([head, ...detail], [false, ...(archive ? [false] : []), true, true, false, false]);
  if (listsFatBinaries(input)) {
    const rows = input.fatBinaries.map((f) => [
      `fat binary ${f.index}`,
      ...(input.kind === "package" ? [byteStringToUnicode(f.member ?? "")] : []),
      hex(f.offset),
      describeOrigin(f.origin) || "-",
      f.judgement.ok ? "yes" : "no",
      fatBinaryWhy(f, gpu),
    ]);
    const head = ["FAT BINARY", ...(input.kind === "package" ? ["MEMBER"] : []), "OFFSET", "FROM", "OK", "WHY"];
    out += table([head, ...rows], head.map((h) => h === "OFFSET"));
  }
  const members = (input as Partial<CheckedPackage>).members ?? [];
  if (members.length > 0) {
    const rows = members.map((m) => [byteStringToUnicode(m.path), MEMBER_MARK[m.verdict]!, memberWhy(m, gpu)]);
    out += table([["MEMBER", "VERDICT", "WHY"], ...rows], [false, false, false]);
  }
  const without = (input as Partial<CheckedPackage>).membersWithoutCode ?? [];
  if (without.length > 0) out += `  members with no code for ${gpu.input}: ${without.join(", ")}\n`;
  return out;
}

const MEMBER_MARK: Record<CheckedMember["verdict"], string> = {
  ok: "OK", "no-code": "no code", "fat-binary-without-code": "FAIL", unreadable: "unreadable",
};

function memberWhy(m: CheckedMember, gpu: GpuConfig): string {
  if (m.verdict === "unreadable") return m.error?.message ?? "";
  const fat = m.fatBinaries.length > 0 ? `; ${m.fatBinaries.filter((f) => f.judgement.ok).length} of ${plural(m.fatBinaries.length, "fat binary", "fat binaries")} OK` : "";
  if (m.verdict === "no-code") return `no device code ${gpu.input} can load under every setting (${plural(m.deviceEntries, "device entry", "device entries")})${fat}`;
  if (m.verdict === "ok") return `${m.loadable} of ${plural(m.deviceEntries, "device entry", "device entries")} loadable${fat}`;
  return m.fatBinaries.filter((f) => !f.judgement.ok).map((f) => `${fatBinaryName(f)} has nothing ${gpu.input} can load`).join("; ");
}

/** `first`: the first GPU's run, which alone says what does not depend on the GPU (read errors, damage). */
function reportProblems(io: CliIO, name: string, warnings: Warnings, input: CheckedInput, gpu: GpuConfig, first: boolean): void {
  const members = (input as Partial<CheckedPackage>).members ?? [];
  // A package names every member it could not read, not only the first.
  const unreadable = members.filter((m) => m.verdict === "unreadable" && m.error !== undefined);
  if (first) {
    for (const m of unreadable) printError(io, name, inputMessage(input.path, m.error!.message));
    if (input.error !== undefined && !unreadable.some((m) => m.error === input.error)) printError(io, name, inputMessage(input.path, input.error.message));
  }
  // Fat binaries with nothing for the GPU, named where the verdict is (a package's members: on their lines).
  if (input.kind !== "package") {
    for (const f of input.fatBinaries) if (!f.judgement.ok && input.judgement.ok) printError(io, name, `${input.path}: ${fatBinaryName(f)} has nothing ${gpu.input} can load`);
  }
  if (!first) return;
  // The error is the first problem when nothing else was found; the rest are warnings either way.
  const problems = input.error !== undefined ? input.problems.slice(1) : input.problems;
  for (const p of problems) warnings.warn(p.code, `at ${hex(p.offset)}: ${p.message}`, input.path);
}

function entryJson(e: CheckedEntry) {
  return {
    ...(e.member !== undefined ? { member: byteStringToUnicode(e.member) } : {}),
    ...(e.bundle !== undefined ? { bundle: e.bundle } : {}),
    ...(e.image !== undefined ? { image: e.image } : {}),
    offset: e.offset,
    ...(e.compressedAt !== undefined ? { compressedAt: e.compressedAt } : {}),
    id: byteStringToUnicode(e.id),
    size: e.size,
    ...verdictJson(e.verdict),
  };
}

function fatBinaryJson(f: CheckedFatBinary) {
  return {
    index: f.index,
    offset: f.offset,
    ...(f.section !== undefined ? { section: f.section } : {}),
    ...(f.member !== undefined ? { member: byteStringToUnicode(f.member) } : {}),
    ...(f.origin !== undefined ? { origin: f.origin } : {}),
    verdict: f.judgement.ok ? "ok" : "no-loadable-code",
    ok: f.judgement.ok,
    deviceEntries: f.judgement.deviceEntries,
    loadable: f.loadable,
    unstated: f.judgement.unstated,
    cases: f.judgement.cases,
    entries: f.entries.map(entryJson),
  };
}

function verdictJson(v: EntryVerdict) {
  return {
    verdict: v.verdict,
    ...(v.reason !== undefined ? { reason: v.reason.code } : {}),
    message: v.message,
    ...(v.needs !== undefined ? { needs: v.needs } : {}),
  };
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
      unstated: input.judgement.unstated,
      cases: input.judgement.cases,
      targets: targetRows(input).map((r) => ({ id: byteStringToUnicode(r.id), entries: r.entries, bytes: r.bytes, ...verdictJson(r.verdict) })),
      entries: input.entries.map(entryJson),
      fatBinaries: input.fatBinaries.map(fatBinaryJson),
      ...((input as Partial<CheckedPackage>).members !== undefined ? {
        members: (input as CheckedPackage).members.map((m) => ({
          path: byteStringToUnicode(m.path),
          verdict: m.verdict,
          deviceEntries: m.deviceEntries,
          loadable: m.loadable,
          fatBinaries: m.fatBinaries.map((f) => f.index),
          ...(m.error !== undefined ? { error: m.error } : {}),
        })),
      } : {}),
      problems: input.problems,
    })),
    skipped: run.skipped,
    emptyDirectories: run.emptyDirectories,
    unreadable: run.unreadable,
  };
}

function conclusion(run: CheckRun, gpu: GpuConfig): string {
  const unstated = [...new Set(run.inputs.flatMap((i) => i.judgement.unstated))].sort();
  const whichever = unstated.length === 0 ? "" : `, whichever way ${unstated.join(" and ")} ${unstated.length === 1 ? "is" : "are"} set`;
  const notes: string[] = [];
  if (run.skipped.length > 0) notes.push(`${plural(run.skipped.length, "other file")} skipped`);
  if (run.unreadable.length > 0) notes.push(`${plural(run.unreadable.length, "entry", "entries")} could not be read`);
  const note = notes.length > 0 ? ` (${notes.join("; ")})` : "";
  const failing = run.inputs.filter((i) => !inputOk(i)).length + run.emptyDirectories.length;
  const total = run.inputs.length + run.emptyDirectories.length;
  if (failing === 0 && run.unreadable.length === 0) return `OK: every input has device code ${gpu.input} can load${whichever}${note}\n`;
  if (failing === 0) return `FAIL: every input found has device code ${gpu.input} can load${whichever}, but not every file could be read${note}\n`;
  // Inputs whose code loads, but not in every fat binary (or, in a package, every member with code for the GPU).
  const partial = run.inputs.filter((i) => i.error === undefined && i.judgement.ok && !i.ok).length;
  if (partial === 0) return `FAIL: ${failing} of ${total} inputs have no device code ${gpu.input} can load${whichever}${note}\n`;
  const none = failing - partial;
  return `FAIL: ${failing} of ${total} inputs cannot run on ${gpu.input}${whichever}: ` +
    `${none > 0 ? `${none} with no device code it can load, ` : ""}${partial} with a fat binary that has no code it can load${note}\n`;
}

export const check: Subcommand = {
  summary: "Will it run on my GPU? [--gpu=<target id>] FILE|DIR... (without --gpu: this machine's GPUs): which device entries of bundles, archives, fat objects and offload binaries the GPU can load, and why not.",
  spec: () => ({
    overview: `offload-kit check: which device code a GPU can load\n\n${FOLDERS_HELP}`,
    options: [
      PATHS_OPTION,
      {
        name: "gpu", kind: "string", valueName: "target id", category,
        description: "The GPU and its configuration, e.g. gfx90a, gfx90a:xnack- or amdgcn-amd-amdhsa--gfx942:sramecc+:xnack- as rocminfo prints it (sm_XX for NVIDIA); without it, or with native: this machine's GPUs (offload-arch, amdgpu-arch, rocminfo, else the KFD topology), each checked",
      },
      { name: "kind", kind: "string", valueName: "offload kind", description: `Only entries for this runtime count (${CHECK_KINDS.join(", ")}); hip and hipv4 are one`, category },
      JSON_OPTION,
      verboseOption("per input a table per target ID (entries, bytes, loads, why), every entry, fat binary and package member"),
    ],
    version: VERSION_TEXT,
    epilogue: examplesHelp([
      { command: "offload-kit check --gpu=gfx90a:xnack- examples/sample/app.hipfb", what: "Does the file hold device code an MI210 with xnack off can load? Exit 0 if so" },
      { command: "offload-kit check /opt/rocm/lib", what: "Every offload file in the folder, against this machine's GPUs" },
      { command: "offload-kit check -v --gpu=gfx1100 build/bin/app", what: "Each entry and fat binary, and why it loads or not" },
    ]),
  }),
  run(values, { name, io }) {
    const files = listValue(values, "files");
    const gpuText = stringValue(values, "gpu");
    if (files.length === 0) return usageError(io, name, "no input files");
    const verbose = flagValue(values, "verbose");
    const warnings = new Warnings(io, name);
    const targets = gpuTargets(gpuText, io, name, warnings);
    if (typeof targets === "number") return targets;
    const kind = stringValue(values, "kind") || undefined;
    if (kind !== undefined && !(CHECK_KINDS as readonly string[]).includes(kind)) {
      return usageError(io, name, `--kind must be one of ${CHECK_KINDS.join(", ")}, not '${kind}'`);
    }
    return runGuardedAsync(io, name, async () => {
      const reports: unknown[] = [];
      let ok = true;
      for (const [index, { gpu, found }] of targets.entries()) {
        // A kpack'd host's archives are searched for the GPU as named, as the runtime searches for its agent's ISA name.
        const run = await checkPathsWithPackages(files, gpu, { kind, kpackGpus: [gpu.canonical] });
        ok &&= runOk(run);
        // What does not depend on the GPU is said once, with the first GPU's run.
        if (index === 0) for (const u of run.unreadable) printError(io, name, u.message);
        for (const input of run.inputs) reportProblems(io, name, warnings, input, gpu, index === 0);
        if (flagValue(values, "json")) {
          const report = json(run, gpu) as { gpu: Record<string, unknown> };
          if (found !== undefined) report.gpu = { ...report.gpu, found: { source: found.source, where: found.where, count: found.count } };
          reports.push(report);
          continue;
        }
        if (found !== undefined) io.stdout(`${index > 0 ? "\n" : ""}GPU ${index + 1} of ${targets.length}: ${describeNativeGpu(found)}\n`);
        // A package that could not be read to its end still shows what its readable members hold.
        for (const input of run.inputs) if (input.error === undefined || input.kind === "package") io.stdout(formatInput(input, gpu, verbose));
        for (const dir of run.emptyDirectories) io.stdout(`${dir}: no offload files\n`);
        const verdict = conclusion(run, gpu);
        io.stdout(found === undefined ? verdict : `${verdict.slice(0, -1)} [this machine's GPU, from ${found.where}]\n`);
      }
      if (flagValue(values, "json")) {
        // --gpu keeps its one-report shape; this machine's GPUs are one report each.
        const out = targets[0]!.found === undefined ? { ...(reports[0] as object), warnings: warnings.list } : { ok, checks: reports, warnings: warnings.list };
        io.stdout(`${JSON.stringify(out, null, 2)}\n`);
      }
      return ok ? 0 : 1;
    });
  },
};

/**
 * The GPUs to check for: `--gpu`'s, or without it (or with `--gpu=native`) each kind of GPU this machine
 * has (src/node/native-gpus.ts); an exit status after a usage error.
 */
function gpuTargets(gpuText: string, io: CliIO, name: string, warnings: Warnings): { gpu: GpuConfig; found?: NativeGpu }[] | number {
  if (gpuText !== "" && gpuText !== "native") {
    try {
      return [{ gpu: parseGpu(gpuText) }];
    } catch (e) {
      if (isOffloadKitError(e)) return usageError(io, name, e.message);
      throw e;
    }
  }
  const search = findNativeGpus(io.env);
  const targets: { gpu: GpuConfig; found: NativeGpu }[] = [];
  for (const found of search.gpus) {
    try {
      targets.push({ gpu: parseGpu(found.targetId), found });
    } catch (e) {
      if (!isOffloadKitError(e)) throw e;
      warnings.warn("UNKNOWN_NATIVE_GPU", `this machine's GPU ${describeNativeGpu(found)} is not one offload-kit knows: ${e.message}`);
    }
  }
  if (targets.length === 0) return usageError(io, name, noNativeGpuMessage(search, "--gpu"));
  return targets;
}
