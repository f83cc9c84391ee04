/**
 * `offload-kit diff A B [--fail-on-growth=PCT] [--mangled] [--json]`: what changed between two builds (files,
 * folders or packages), per target ID and per kernel (src/kernels/diff.ts): targets added, removed, changed
 * or unchanged with their bytes before and after; kernels added, removed and changed with the metadata keys
 * that changed, before and after, and the code size.
 *
 * Exit status as diff(1): 0 the same, 1 different, 2 trouble (an input or a code object's note that cannot be
 * read, a usage error). With `--fail-on-growth=PCT` the status is a CI gate instead: 1 only when the total
 * bytes grew by more than PCT percent, 0 otherwise (differences are still printed).
 */
import { byteStringToUnicode } from "../../formats/bytes.js";
import { formatWithCommas } from "../../bundler/compressed.js";
import type { FoundCodeObject } from "../../kernels/collect.js";
import { demangle } from "../../kernels/demangle.js";
import { diffBuilds, growthPercent } from "../../kernels/diff.js";
import type { BuildDiff, ChangedKernel, TargetDiff } from "../../kernels/diff.js";
import { gatherKernels } from "../../kernels/node/gather.js";
import type { Gathered } from "../../kernels/node/gather.js";
import { flagValue, listValue, stringValue } from "../args.js";
import { printError } from "../io.js";
import { hasErrors, runGuardedAsync } from "./package-inputs.js";
import { printUnreadable } from "./folders.js";
import type { Subcommand } from "./common.js";
import { EXIT_USAGE, JSON_OPTION, KIT_CATEGORY as category, VERSION_TEXT, examplesHelp, usageError } from "./common.js";

const NOT_DAMAGE = new Set(["NO_AMDGPU_METADATA"]);

/** The code objects of one side, and whether anything on it could not be read (each problem is printed). */
function side(gathered: Gathered, report: (message: string) => void): { codeObjects: FoundCodeObject[]; trouble: boolean } {
  const codeObjects: FoundCodeObject[] = [];
  let trouble = false;
  for (const path of gathered.paths) {
    if (path.error !== undefined) {
      report(path.error.message);
      trouble = true;
    }
    for (const p of path.walk?.problems ?? []) report(`${p.name}: ${p.message}`);
    if (path.walk !== undefined && hasErrors(path.walk)) trouble = true;
    for (const item of path.items) {
      for (const c of item.codeObjects) {
        if (c.problem !== undefined && !NOT_DAMAGE.has(c.problem.code)) {
          report(`${item.name}: ${byteStringToUnicode(c.id)}: ${c.problem.message}`);
          trouble = true;
        }
        codeObjects.push(c);
      }
    }
  }
  return { codeObjects, trouble };
}

function percentText(before: number, after: number): string {
  const g = growthPercent(before, after);
  if (!Number.isFinite(g)) return "new";
  return `${g >= 0 ? "+" : ""}${g.toFixed(1)}%`;
}

function bytesText(t: { before: number; after: number }): string {
  return `${formatWithCommas(t.before)} -> ${formatWithCommas(t.after)} bytes (${percentText(t.before, t.after)})`;
}

function valueText(v: unknown): string {
  return v === undefined ? "(none)" : JSON.stringify(v);
}

function kernelName(name: string, mangled: boolean): string {
  if (mangled) return name;
  const hash = name.indexOf("#");
  const base = hash < 0 ? name : name.slice(0, hash);
  return (demangle(base) ?? base) + (hash < 0 ? "" : name.slice(hash));
}

function changedText(k: ChangedKernel, mangled: boolean): string {
  const parts = [...k.changes].map(([key, c]) => `${key} ${valueText(c.before)} -> ${valueText(c.after)}`);
  return `      ~ ${kernelName(k.name, mangled)}: ${parts.join(", ")}\n`;
}

function targetText(t: TargetDiff, mangled: boolean): string {
  let out = `  ${t.status.padEnd(9)} ${byteStringToUnicode(t.id)}: ${bytesText(t)}\n`;
  const { added, removed, changed } = t.kernels;
  if (t.status === "unchanged" || added.length + removed.length + changed.length === 0) return out;
  out += `    kernels: ${added.length} added, ${removed.length} removed, ${changed.length} changed\n`;
  for (const k of added) out += `      + ${kernelName(k, mangled)}\n`;
  for (const k of removed) out += `      - ${kernelName(k, mangled)}\n`;
  for (const k of changed) out += changedText(k, mangled);
  return out;
}

function counts(d: BuildDiff): Record<TargetDiff["status"], number> {
  const c = { added: 0, removed: 0, changed: 0, unchanged: 0 };
  for (const t of d.targets) c[t.status]++;
  return c;
}

/** The --json shape: `targets: [{id, status, before, after, kernels: {added, removed, changed}}]`, each changed kernel `{name, <key>: {before, after}}`. */
export function diffJson(d: BuildDiff, a: string, b: string): unknown {
  const kernelTotals = { added: 0, removed: 0, changed: 0 };
  const targets = d.targets.map((t) => {
    kernelTotals.added += t.kernels.added.length;
    kernelTotals.removed += t.kernels.removed.length;
    kernelTotals.changed += t.kernels.changed.length;
    return {
      id: byteStringToUnicode(t.id),
      status: t.status,
      before: t.before,
      after: t.after,
      kernels: {
        added: t.kernels.added,
        removed: t.kernels.removed,
        changed: t.kernels.changed.map((k) => ({ name: k.name, ...Object.fromEntries([...k.changes].map(([key, c]) => [key, { before: c.before ?? null, after: c.after ?? null }])) })),
      },
    };
  });
  const growth = growthPercent(d.before, d.after);
  return {
    a, b, different: d.different, targets,
    totals: { before: d.before, after: d.after, growthPercent: Number.isFinite(growth) ? growth : null, targets: counts(d), kernels: kernelTotals },
  };
}

export const diff: Subcommand = {
  summary: "What changed between two builds, per target ID and kernel (bytes, kernels added/removed, metadata): A B [--fail-on-growth=PCT] [--json].",
  spec: () => ({
    overview: "offload-kit diff: what changed between two builds (files, folders or packages), per target ID and per kernel\n\n" +
      "Exit status: 0 the same, 1 different, 2 trouble; with --fail-on-growth=PCT, 1 only when the total bytes grew by more than PCT%.\n",
    options: [
      { name: "files", kind: "string", list: true, positional: true, description: "<A> <B>" },
      { name: "fail-on-growth", kind: "string", valueName: "pct", description: "Exit 1 only when the total bytes grew by more than this percentage", category },
      { name: "mangled", kind: "flag", description: "Print mangled kernel names", category },
      JSON_OPTION,
    ],
    version: VERSION_TEXT,
    epilogue: examplesHelp([
      { command: "offload-kit diff build-main/lib build-pr/lib", what: "Target IDs and kernels added, removed or changed between two builds; exit 1 if anything differs" },
      { command: "offload-kit diff --fail-on-growth=5 libfoo.so.old libfoo.so", what: "For CI: exit 1 only when the device code grew by more than 5%" },
      { command: "offload-kit diff --json old.whl new.whl", what: "The same for two wheels, for scripts" },
    ]),
  }),
  run(values, { name, io }) {
    const files = listValue(values, "files");
    if (files.length !== 2) return usageError(io, name, `needs two inputs, A and B (got ${files.length})`);
    const growthText = stringValue(values, "fail-on-growth");
    const limit = growthText === "" ? undefined : Number(growthText.replace(/%$/, ""));
    if (limit !== undefined && (!Number.isFinite(limit) || growthText.trim() === "")) return usageError(io, name, `--fail-on-growth must be a percentage, not '${growthText}'`);
    const json = flagValue(values, "json");
    const mangled = flagValue(values, "mangled");
    return runGuardedAsync(io, name, async () => {
      const report = (message: string): void => printError(io, name, message);
      const [ga, gb] = [await gatherKernels([files[0]!]), await gatherKernels([files[1]!])];
      const a = side(ga, report);
      const b = side(gb, report);
      const unreadable = [printUnreadable(io, name, ga.run), printUnreadable(io, name, gb.run)].some(Boolean);
      const trouble = a.trouble || b.trouble || unreadable;
      const d = diffBuilds(a.codeObjects, b.codeObjects);
      if (json) io.stdout(`${JSON.stringify(diffJson(d, files[0]!, files[1]!), null, 2)}\n`);
      else {
        const c = counts(d);
        io.stdout(`${files[0]} -> ${files[1]}: ${c.changed} changed, ${c.added} added, ${c.removed} removed, ${c.unchanged} unchanged target IDs; ${bytesText(d)}\n`);
        for (const t of d.targets) io.stdout(targetText(t, mangled));
      }
      if (trouble) return EXIT_USAGE;
      if (limit !== undefined) return growthPercent(d.before, d.after) > limit ? 1 : 0;
      return d.different ? 1 : 0;
    });
  },
};
