/**
 * The page's Kernels and Diff views, worker side (src/browser/worker.ts): a file's kernels are collected
 * here (src/kernels/collect.ts, as `offload-kit kernels` collects them) and kept as a table the page asks
 * for a window of at a time, sorted and filtered here. A library's ~90,000 kernel rows then never cross to
 * the page whole: the page draws the rows on screen and holds no more (no main-thread task over 50 ms).
 *
 * A diff is `offload-kit diff`'s (src/kernels/diff.ts), flattened to one line per kernel change for display.
 *
 * A package (a .deb, wheel, tarball...: src/browser/packages.ts) is walked and each member's code objects
 * read as `offload-kit kernels PACKAGE` reads them: its rows carry the member's path, and a diff of two
 * packages compares all their members' code objects, as `offload-kit diff A.deb B.deb` does.
 */
import type { ByteSource } from "../engine/source.js";
import { collectKernels } from "../kernels/collect.js";
import type { FoundCodeObject } from "../kernels/collect.js";
import { demangleOrKeep } from "../kernels/demangle.js";
import { diffBuilds } from "../kernels/diff.js";
import type { LocateOptions } from "../inspect/locate.js";
import { collectPackageKernels } from "./packages.js";
import { memberDisplayPath } from "../packages/walk.js";

/** The columns a kernel row has, and what the page may sort by. */
export const KERNEL_COLUMNS = ["name", "id", "vgprs", "sgprs", "lds", "scratch", "codeSize", "occupancy", "member"] as const;
export type KernelColumn = (typeof KERNEL_COLUMNS)[number];

export interface KernelRow {
  /** The demangled name. */
  readonly name: string;
  /** The code object's target ID. */
  readonly id: string;
  readonly vgprs?: number;
  readonly sgprs?: number;
  readonly lds?: number;
  readonly scratch?: number;
  readonly codeSize?: number;
  /** Waves per SIMD (src/kernels/occupancy.ts). */
  readonly occupancy?: number;
  /** In a package: the member holding the code object (`usr/lib/librocrand.so.1`, `a.tar!lib/x.so` when nested). */
  readonly member?: string;
}

export interface KernelTableSummary {
  /** The handle later queries name. */
  readonly table: number;
  readonly codeObjects: number;
  readonly kernels: number;
  /** For a package: its format and the members whose code objects are listed; undefined for a plain file. */
  readonly package?: { readonly members: number; readonly problems: readonly string[] };
  /** Target IDs and processors present, sorted: what the GPU filter offers. */
  readonly ids: readonly string[];
  readonly processors: readonly string[];
  readonly problems: readonly { readonly id: string; readonly code: string; readonly message: string }[];
  readonly milliseconds: number;
}

/** The code objects of one file, or of one member of a package (`member` its path inside it). */
interface KernelSource {
  readonly member?: readonly string[];
  readonly codeObjects: readonly FoundCodeObject[];
}

export interface KernelQuery {
  readonly table: number;
  readonly sort: KernelColumn;
  readonly descending: boolean;
  /** "" for every GPU, a processor (`gfx90a`) or a whole target ID. */
  readonly gpu: string;
  /** Case-insensitive text the (demangled) name contains; "" for all. */
  readonly name: string;
  readonly start: number;
  readonly count: number;
}

export interface KernelRows {
  /** Rows passing the filters. */
  readonly total: number;
  readonly start: number;
  readonly rows: readonly KernelRow[];
}

export interface DiffKernelLine {
  readonly id: string;
  readonly change: "added" | "removed" | "changed";
  readonly name: string;
  /** For a changed kernel: each key with its value before and after (`.vgpr_count 32 → 40`). */
  readonly detail: string;
}

export interface DiffSummary {
  readonly before: number;
  readonly after: number;
  readonly different: boolean;
  readonly targets: readonly { readonly id: string; readonly status: string; readonly before: number; readonly after: number; readonly added: number; readonly removed: number; readonly changed: number }[];
  readonly kernels: readonly DiffKernelLine[];
  readonly milliseconds: number;
}

interface Table {
  readonly rows: KernelRow[];
  readonly processors: string[];
  /** Lower-cased names, made on the first name filter. */
  lowered?: string[];
  /** The last view asked for: its key and row order (so scrolling only slices). */
  view?: { key: string; order: Uint32Array };
}

/** Tables kept: a few files' worth (each dropped file has one); the oldest goes first. */
const MAX_TABLES = 4;
const tables = new Map<number, Table>();
let nextTable = 1;

function compareValues(a: string | number | undefined, b: string | number | undefined): number {
  // Missing values last in either direction is done by the caller; here plain order.
  return a === b ? 0 : (a as string | number) < (b as string | number) ? -1 : 1;
}

type CollectOptions = Omit<LocateOptions, "onBundle" | "onOffloadBinaries">;

/**
 * The code objects of `source`: of each member when it is a package (then `package` is set), else of the
 * file. `name` is the file's, as package problems name it.
 */
async function codeObjectsOf(source: ByteSource, name: string, options: CollectOptions, keepMetadata: boolean): Promise<{ items: readonly KernelSource[]; package?: { members: number; problems: string[] } }> {
  const pkg = await collectPackageKernels(source, name, { ...options, keepMetadata });
  if (pkg === undefined) return { items: [{ codeObjects: collectKernels(source, { ...options, keepMetadata }).codeObjects }] };
  return {
    items: pkg.members,
    package: {
      members: pkg.members.length,
      problems: pkg.problems.map((p) => `${memberDisplayPath([name, ...p.path.slice(1)])}: ${p.message} [${p.code}]`),
    },
  };
}

/** The kernels of `source` (a file or a package) as a table kept here; its summary. */
export async function loadKernelTable(source: ByteSource, name: string, options: CollectOptions): Promise<KernelTableSummary> {
  const started = performance.now();
  const found = await codeObjectsOf(source, name, options, false);
  const rows: KernelRow[] = [];
  const processors: string[] = [];
  const problems: { id: string; code: string; message: string }[] = [];
  const all: FoundCodeObject[] = [];
  for (const item of found.items) {
    const member = item.member === undefined ? undefined : memberDisplayPath(item.member);
    for (const c of item.codeObjects) {
      all.push(c);
      if (c.problem !== undefined) problems.push({ id: member === undefined ? c.id : `${member}: ${c.id}`, code: c.problem.code, message: c.problem.message });
      for (const k of c.kernels) {
        rows.push({ name: k.demangled, id: c.id, vgprs: k.vgprs, sgprs: k.sgprs, lds: k.lds, scratch: k.scratch, codeSize: k.codeSize, occupancy: k.occupancy?.waves, ...(member !== undefined ? { member } : {}) });
        processors.push(c.processor ?? "");
      }
    }
  }
  const table = nextTable++;
  tables.set(table, { rows, processors });
  for (const old of tables.keys()) if (tables.size > MAX_TABLES) tables.delete(old);
  return {
    table, codeObjects: all.length, kernels: rows.length,
    ...(found.package !== undefined ? { package: found.package } : {}),
    ids: [...new Set(all.map((c) => c.id))].sort(),
    processors: [...new Set(all.map((c) => c.processor).filter((p): p is string => p !== undefined))].sort(),
    problems, milliseconds: performance.now() - started,
  };
}

/** A window of a table's rows, filtered and sorted as `query` asks. */
export function queryKernelTable(query: KernelQuery): KernelRows {
  const table = tables.get(query.table);
  if (table === undefined) return { total: 0, start: 0, rows: [] };
  const key = `${query.sort}\0${query.descending}\0${query.gpu}\0${query.name.toLowerCase()}`;
  if (table.view?.key !== key) {
    const { rows, processors } = table;
    const needle = query.name.toLowerCase();
    if (needle !== "") table.lowered ??= rows.map((r) => r.name.toLowerCase());
    const picked: number[] = [];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      if (query.gpu !== "" && row.id !== query.gpu && processors[i] !== query.gpu) continue;
      if (needle !== "" && !table.lowered![i]!.includes(needle)) continue;
      picked.push(i);
    }
    const column = query.sort;
    const sign = query.descending ? -1 : 1;
    picked.sort((x, y) => {
      const a = rows[x]![column];
      const b = rows[y]![column];
      if (a === undefined || b === undefined) return a === b ? x - y : a === undefined ? 1 : -1;
      return sign * compareValues(a, b) || x - y;
    });
    table.view = { key, order: Uint32Array.from(picked) };
  }
  const order = table.view!.order;
  const start = Math.max(0, Math.min(query.start, order.length));
  const end = Math.min(order.length, start + Math.max(0, query.count));
  const out: KernelRow[] = [];
  for (let i = start; i < end; i++) out.push(table.rows[order[i]!]!);
  return { total: order.length, start, rows: out };
}

function valueText(value: unknown): string {
  return value === undefined ? "(none)" : typeof value === "string" ? value : JSON.stringify(value);
}

/** `offload-kit diff a b` (files or packages: a package's side is all its members' code objects), flattened for the page. */
export async function diffSources(a: { source: ByteSource; name: string }, b: { source: ByteSource; name: string }, options: CollectOptions): Promise<DiffSummary> {
  const started = performance.now();
  const side = async (s: { source: ByteSource; name: string }) => (await codeObjectsOf(s.source, s.name, options, true)).items.flatMap((i) => i.codeObjects);
  const before: readonly FoundCodeObject[] = await side(a);
  const after: readonly FoundCodeObject[] = await side(b);
  const diff = diffBuilds(before, after);
  const kernels: DiffKernelLine[] = [];
  // Diff keys are mangled names, a second copy in one target ID counted as `name#2`.
  const shown = (key: string) => {
    const hash = key.lastIndexOf("#");
    const name = hash > 0 && /^\d+$/.test(key.slice(hash + 1)) ? key.slice(0, hash) : key;
    return demangleOrKeep(name) + key.slice(name.length);
  };
  for (const t of diff.targets) {
    for (const name of t.kernels.added) kernels.push({ id: t.id, change: "added", name: shown(name), detail: "" });
    for (const name of t.kernels.removed) kernels.push({ id: t.id, change: "removed", name: shown(name), detail: "" });
    for (const c of t.kernels.changed) {
      const detail = [...c.changes].map(([k, v]) => `${k} ${valueText(v.before)} → ${valueText(v.after)}`).join("; ");
      kernels.push({ id: t.id, change: "changed", name: shown(c.name), detail });
    }
  }
  return {
    before: diff.before, after: diff.after, different: diff.different,
    targets: diff.targets.map((t) => ({ id: t.id, status: t.status, before: t.before, after: t.after, added: t.kernels.added.length, removed: t.kernels.removed.length, changed: t.kernels.changed.length })),
    kernels, milliseconds: performance.now() - started,
  };
}
