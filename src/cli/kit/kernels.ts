/**
 * `offload-kit kernels FILE|DIR|PACKAGE... [--gpu=PROC[:feat±]] [--kernel=GLOB] [--sort=vgprs|lds|scratch|size]
 * [--top=N] [--mangled] [--json]`: the kernels of every AMDGPU code object found (src/kernels/node/gather.ts),
 * with the resources their metadata note states, the code size and an occupancy estimate (src/kernels/occupancy.ts
 * names the rules). A table by default; `--json` gives each code object (`id`, where it was found) with each
 * kernel's friendly fields and its whole metadata map under `metadata`, keys as in the note.
 *
 * Exit status: 0; 1 when an input or a code object's note could not be read; 2 on a usage error.
 */
import { byteStringToUnicode } from "../../formats/bytes.js";
import { randomUUID } from "node:crypto";
import { msgpackToJson } from "../../formats/msgpack.js";
import { JsonByteWriter, transcodeMsgpackJson } from "../../formats/msgpack-json.js";
import { formatWithCommas } from "../../bundler/compressed.js";
import type { FoundCodeObject } from "../../kernels/collect.js";
import { kernelMetadataBytes } from "../../kernels/kernels.js";
import type { KernelInfo } from "../../kernels/kernels.js";
import { OCCUPANCY_RULE } from "../../kernels/occupancy.js";
import { gatherKernels } from "../../kernels/node/gather.js";
import { flagValue, listValue, stringValue } from "../args.js";
import { printError, printWarning } from "../io.js";
import { hasErrors, printProblems, runGuardedAsync } from "./package-inputs.js";
import { foldersJson, foldersNote, printUnreadable } from "./folders.js";
import type { Subcommand } from "./common.js";
import type { CliIO } from "../io.js";
import { FOLDERS_HELP, JSON_OPTION, PATHS_OPTION, KIT_CATEGORY as category, VERSION_TEXT, examplesHelp, hex, pad, plural, usageError } from "./common.js";

export const SORT_KEYS = ["vgprs", "lds", "scratch", "size"] as const;
export type SortKey = (typeof SORT_KEYS)[number];

/** Problems of a code object that are reports, not damage: it has no metadata note. */
const NOT_DAMAGE = new Set(["NO_AMDGPU_METADATA"]);

/** A shell glob (`*`, `?`, `[...]`) as a whole-string regular expression. */
export function globToRegExp(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") out += ".*";
    else if (c === "?") out += ".";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end < 0) out += "\\[";
      else {
        const body = glob.slice(i + 1, end).replace(/\\/g, "\\\\");
        out += `[${body.startsWith("!") ? `^${body.slice(1)}` : body}]`;
        i = end;
      }
    } else out += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(`^${out}$`, "s");
}

/** `gfx90a`, `gfx90a:xnack+`: the processor, and the features it states. */
export interface GpuFilter {
  readonly processor: string;
  readonly features: ReadonlyMap<string, boolean>;
}

export function parseGpuFilter(text: string): GpuFilter | undefined {
  const [processor, ...rest] = text.split(":");
  if (processor === undefined || processor === "") return undefined;
  const features = new Map<string, boolean>();
  for (const f of rest) {
    const m = /^(xnack|sramecc)([+-])$/.exec(f);
    if (m === null) return undefined;
    features.set(m[1]!, m[2] === "+");
  }
  return { processor, features };
}

/** A code object runs on the GPU when the processor is the same and no feature it states contradicts the GPU's. */
export function codeObjectMatchesGpu(id: string, gpu: GpuFilter): boolean {
  const at = id.lastIndexOf("--");
  // NVIDIA cubins are listed by their arch alone (`sm_90`).
  const target = at < 0 ? id : id.slice(at + 2);
  const [processor, ...features] = target.split(":");
  if (processor !== gpu.processor) return false;
  for (const f of features) {
    const name = f.slice(0, -1);
    const wanted = gpu.features.get(name);
    if (wanted !== undefined && wanted !== f.endsWith("+")) return false;
  }
  return true;
}

function sortValue(k: KernelInfo, key: SortKey): number {
  // A cubin's registers, shared memory and stack sort with VGPRs, LDS and scratch.
  if (key === "vgprs") return k.vgprs ?? k.nv?.registers ?? -1;
  if (key === "lds") return k.lds ?? k.nv?.shared ?? -1;
  if (key === "scratch") return k.scratch ?? k.nv?.stack ?? -1;
  return k.codeSize ?? -1;
}

/** A code object listed: its fields without its kernels, how many it has, and those shown. */
interface Listed {
  readonly file: string;
  readonly codeObject: FoundCodeObject;
  readonly count: number;
  readonly shown: KernelInfo[];
}

/** A kernel to show: its code object (an index into the Listed), its place in the input and its sort value. */
interface Row {
  readonly file: string;
  readonly object: number;
  readonly seq: number;
  readonly value: number;
  readonly kernel: KernelInfo;
}

/** Largest first, in input order among equals (what a stable sort of the whole list gives). */
function byValue(a: Row, b: Row): number {
  return b.value - a.value || a.seq - b.seq;
}

function stableSortBy(kernels: KernelInfo[], key: SortKey): KernelInfo[] {
  return kernels.map((kernel, seq) => ({ kernel, seq, value: sortValue(kernel, key) }))
    .sort((a, b) => b.value - a.value || a.seq - b.seq)
    .map((r) => r.kernel);
}

/**
 * The first `limit` rows in input order, or the `limit` largest: rows are cut back to `limit` whenever twice
 * that many are held, so `--top` holds O(limit) kernels (and their metadata maps) whatever the library's size.
 */
class TopRows {
  private rows: Row[] = [];

  constructor(private readonly limit: number, private readonly sorted: boolean) {}

  add(row: Row): void {
    if (!this.sorted) {
      if (this.rows.length < this.limit) this.rows.push(row);
      return;
    }
    this.rows.push(row);
    if (this.rows.length >= Math.max(2 * this.limit, 4096)) this.cut();
  }

  private cut(): void {
    this.rows.sort(byValue);
    this.rows.length = Math.min(this.rows.length, this.limit);
  }

  result(): Row[] {
    if (this.sorted) this.cut();
    return this.rows;
  }
}

function targetOf(id: string): string {
  const at = id.lastIndexOf("--");
  return byteStringToUnicode(at < 0 ? id : id.slice(at + 2));
}

function n(value: number | undefined): string {
  return value === undefined ? "-" : String(value);
}

/** Each column's widest cell (a loop: spreading 100,000 rows into Math.max is past some engines' argument limits). */
function columnWidths(all: readonly string[][]): number[] {
  const widths = all[0]!.map(() => 0);
  for (const r of all) for (let i = 0; i < r.length; i++) widths[i] = Math.max(widths[i]!, r[i]!.length);
  return widths;
}

function table(rows: readonly Row[], objects: readonly Listed[], mangled: boolean): string {
  const header = ["TARGET", "VGPR", "AGPR", "SGPR", "SPILL", "LDS", "SCRATCH", "WAVE", "WG", "SIZE", "OCC", "KERNEL"];
  const body = rows.map(({ object, kernel: k }) => [
    targetOf(objects[object]!.codeObject.id), n(k.vgprs), n(k.agprs), n(k.sgprs), `${n(k.vgprSpills)}/${n(k.sgprSpills)}`, n(k.lds),
    `${n(k.scratch)}${k.dynamicStack === true ? "+dyn" : ""}`, n(k.wavefrontSize), n(k.maxFlatWorkgroupSize), n(k.codeSize),
    k.occupancy === undefined ? "-" : `${k.occupancy.waves} ${k.occupancy.limitedBy}`, mangled ? k.name : k.demangled,
  ]);
  const right = [false, true, true, true, true, true, true, true, true, true, false, false];
  const all = [header, ...body];
  const widths = columnWidths(all);
  return all.map((r) => `  ${r.map((cell, i) => (i === r.length - 1 ? cell : pad(cell, widths[i]!, right[i]))).join("  ")}`.trimEnd() + "\n").join("");
}

/** NVIDIA cubins' kernels, in cuobjdump -res-usage's terms (CONST: the bank-0 bytes; --json has every bank). */
function nvTable(rows: readonly Row[], objects: readonly Listed[], mangled: boolean): string {
  const header = ["TARGET", "REG", "STACK", "SHARED", "LOCAL", "CONST0", "SIZE", "KERNEL"];
  const body = rows.map(({ object, kernel: k }) => [
    targetOf(objects[object]!.codeObject.id), n(k.nv?.registers), n(k.nv?.stack), n(k.nv?.shared), n(k.nv?.local), n(k.nv?.constants["0"]), n(k.codeSize),
    mangled ? k.name : k.demangled,
  ]);
  const all = [header, ...body];
  const widths = columnWidths(all);
  return all.map((r) => `  ${r.map((cell, i) => (i === r.length - 1 ? cell : pad(cell, widths[i]!, i > 0))).join("  ")}`.trimEnd() + "\n").join("");
}

/** A kernel's fields other than `metadata`, read one by one (reading `metadata` would decode a lazy map). */
function friendlyFields(k: KernelInfo): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(k)) if (key !== "metadata") out[key] = k[key as keyof KernelInfo];
  return out;
}

/** A kernel as --json gives it: the friendly fields, then the whole map. */
export function kernelJson(k: KernelInfo): unknown {
  return { ...friendlyFields(k), metadata: msgpackToJson(k.metadata) };
}

function codeObjectJson(c: FoundCodeObject, kernels: readonly unknown[]): unknown {
  const { kernels: _all, ...rest } = c;
  void _all;
  return {
    ...rest,
    id: byteStringToUnicode(c.id),
    ...(c.section !== undefined ? { section: byteStringToUnicode(c.section) } : {}),
    ...(c.member !== undefined ? { member: byteStringToUnicode(c.member) } : {}),
    kernels,
  };
}

/** How deep a kernel's `metadata` value sits in --json's text: code object 4, its fields 6, kernels 8, their fields 10. */
const METADATA_INDENT = 10;

/**
 * `--json` written a code object at a time as the code objects are read (librocsparse's is 370 MB): the
 * header before the first, each object as `JSON.stringify(_, null, 2)` indents it, then the closing fields.
 * Each kernel's metadata map goes from its note's bytes to text directly (src/formats/msgpack-json.ts) where it
 * can, in the place a marker holds in the rest of the object's text; the object route gives the same bytes.
 * Standard output is written synchronously (src/cli/io.ts), so a slow reader holds the walk back and nothing
 * piles up.
 */
class JsonCodeObjects {
  private count = 0;
  private readonly writer: JsonByteWriter;
  /** Stands for a kernel's metadata in JSON.stringify's text; a random part so no name can be mistaken for it. */
  private readonly marker = JSON.stringify(`\u0001metadata-${randomUUID()}\u0001`);

  constructor(io: CliIO) {
    this.writer = new JsonByteWriter((bytes) => io.stdout(bytes));
  }

  private head(): string {
    return this.count === 0 ? `{\n  "occupancyRule": ${JSON.stringify(OCCUPANCY_RULE)},\n  "codeObjects": [` : "";
  }

  write(file: string, c: FoundCodeObject, kernels: readonly KernelInfo[]): void {
    const marker = JSON.parse(this.marker) as string;
    const object = { file, ...(codeObjectJson(c, kernels.map((k) => ({ ...friendlyFields(k), metadata: marker }))) as object) };
    const parts = JSON.stringify(object, null, 2).replace(/\n/g, "\n    ").split(this.marker);
    const out = this.writer;
    out.text(`${this.head()}${this.count === 0 ? "" : ","}\n    ${parts[0]!}`);
    kernels.forEach((k, i) => {
      const raw = kernelMetadataBytes(k);
      if (raw === undefined || transcodeMsgpackJson(raw.bytes, raw.start, METADATA_INDENT, out) < 0) {
        out.text(JSON.stringify(msgpackToJson(k.metadata), null, 2).replace(/\n/g, `\n${" ".repeat(METADATA_INDENT)}`));
      }
      out.text(parts[i + 1]!);
      if (out.at >= 1 << 18) out.flush();
    });
    out.flush();
    this.count++;
  }

  end(rest: Record<string, unknown>): void {
    const tail = JSON.stringify(rest, null, 2);
    this.writer.text(`${this.head()}${this.count === 0 ? "" : "\n  "}],\n${tail.slice(2)}\n`);
    this.writer.flush();
  }
}

export const kernels: Subcommand = {
  summary: "The kernels of every AMDGPU code object and NVIDIA cubin: registers, LDS/shared, scratch/stack, code size, occupancy: [--gpu] [--kernel=GLOB] [--sort] [--top=N] [--json].",
  spec: () => ({
    overview: "offload-kit kernels: the kernels of every AMDGPU code object in files, folders and packages, from each code\n" +
      `object's metadata note (NT_AMDGPU_METADATA), with code sizes and an occupancy estimate\n(${OCCUPANCY_RULE}),\n` +
      "and of every NVIDIA cubin (fatbin SASS entries, .cubin files) with REG, STACK, SHARED, LOCAL and CONSTANT[0] as\ncuobjdump -res-usage prints them\n\n" +
      `${FOLDERS_HELP}`,
    options: [
      PATHS_OPTION,
      { name: "gpu", kind: "string", valueName: "gpu", description: "Only code objects for this processor (gfx90a, gfx90a:xnack+) or cubins for this arch (sm_90)", category },
      { name: "kernel", kind: "string", valueName: "glob", description: "Only kernels whose name (mangled or demangled) matches this glob", category },
      { name: "sort", kind: "string", valueName: "vgprs|lds|scratch|size", description: "Largest first by VGPRs, LDS, scratch or code size", category },
      { name: "top", kind: "string", valueName: "n", description: "Only the first N kernels (after --sort)", category },
      { name: "mangled", kind: "flag", description: "Print mangled names", category },
      JSON_OPTION,
    ],
    version: VERSION_TEXT,
    epilogue: examplesHelp([
      { command: "offload-kit kernels --sort=vgprs --top=10 /opt/rocm/lib/librocsparse.so", what: "The 10 kernels using the most VGPRs, with their waves per SIMD" },
      { command: "offload-kit kernels --gpu=gfx90a --kernel=*spmv* lib/libfoo.so", what: "Only the gfx90a code objects' kernels whose name holds 'spmv' (quote the glob if it could match files)" },
      { command: "offload-kit kernels --json build/", what: "Every kernel of every code object under the folder, for scripts" },
    ]),
  }),
  run(values, { name, io }) {
    const files = listValue(values, "files");
    if (files.length === 0) return usageError(io, name, "no input files");
    const sort = stringValue(values, "sort");
    if (sort !== "" && !(SORT_KEYS as readonly string[]).includes(sort)) return usageError(io, name, `--sort must be one of ${SORT_KEYS.join(", ")}, not '${sort}'`);
    const topText = stringValue(values, "top");
    const top = topText === "" ? undefined : Number(topText);
    if (top !== undefined && (!Number.isSafeInteger(top) || top < 0 || !/^\d+$/.test(topText))) return usageError(io, name, `--top must be a count, not '${topText}'`);
    const gpuText = stringValue(values, "gpu");
    const gpu = gpuText === "" ? undefined : parseGpuFilter(gpuText);
    if (gpuText !== "" && gpu === undefined) return usageError(io, name, `--gpu must be a processor with optional :xnack± / :sramecc±, not '${gpuText}'`);
    const glob = stringValue(values, "kernel");
    const pattern = glob === "" ? undefined : globToRegExp(byteStringToUnicode(glob));
    const json = flagValue(values, "json");
    const mangled = flagValue(values, "mangled");
    return runGuardedAsync(io, name, async () => {
      const keep = (k: KernelInfo): boolean => pattern === undefined || pattern.test(k.name) || pattern.test(k.demangled);
      const sortKey = sort === "" ? undefined : (sort as SortKey);
      let status = 0;
      const objects: Listed[] = [];
      const kept = top === undefined ? undefined : new TopRows(top, sortKey !== undefined);
      const rows: Row[] = [];
      let seq = 0;
      const out = json ? new JsonCodeObjects(io) : undefined;
      const gathered = await gatherKernels(files, { keepMetadata: json }, (file, c) => {
        if (gpu !== undefined && !codeObjectMatchesGpu(c.id, gpu)) return;
        if (c.problem !== undefined) {
          const text = `${file}: ${byteStringToUnicode(c.id)}: ${c.problem.message}`;
          if (NOT_DAMAGE.has(c.problem.code)) printWarning(io, name, text);
          else {
            printError(io, name, text);
            status = 1;
          }
        }
        let kernels = c.kernels.filter(keep);
        if (out !== undefined && kept === undefined) {
          // Streamed: a code object's kernels sort among themselves as a global stable sort would leave them.
          if (sortKey !== undefined) kernels = stableSortBy(kernels, sortKey);
          out.write(file, c, kernels);
          return;
        }
        const object = objects.length;
        objects.push({ file, codeObject: { ...c, kernels: [] }, count: c.kernels.length, shown: [] });
        for (const kernel of kernels) {
          const row = { file, object, seq: seq++, value: sortKey === undefined ? 0 : sortValue(kernel, sortKey), kernel };
          if (kept !== undefined) kept.add(row);
          else rows.push(row);
        }
      });
      for (const path of gathered.paths) {
        if (path.error !== undefined) {
          status = 1;
          printError(io, name, path.error.message);
          continue;
        }
        if (path.walk !== undefined && (json ? hasErrors(path.walk) : printProblems(io, name, path.walk))) status = 1;
        for (const item of path.items) {
          for (const p of item.problems) printWarning(io, name, `${item.name}: at ${hex(p.offset)}: ${p.message}`);
        }
      }
      const shown = kept !== undefined ? kept.result() : sortKey !== undefined ? rows.sort((a, b) => b.value - a.value || a.seq - b.seq) : rows;
      for (const r of shown) objects[r.object]!.shown.push(r.kernel);
      if (printUnreadable(io, name, gathered.run)) status = 1;
      if (out !== undefined) {
        for (const o of objects) if (o.shown.length > 0) out.write(o.file, o.codeObject, o.shown);
        const problems = gathered.paths.flatMap((p) => [
          ...(p.error !== undefined ? [{ path: p.path, ...p.error }] : []),
          ...p.items.flatMap((i) => i.problems.map((q) => ({ path: i.name, code: q.code, message: q.message, offset: q.offset }))),
          ...(p.walk?.problems ?? []).map((q) => ({ path: q.name, code: q.code, message: q.message, offset: q.offset })),
        ]);
        out.end({ problems, ...foldersJson(gathered.run) });
        return status;
      }
      const byFile = new Map<string, Row[]>();
      for (const r of shown) {
        const list = byFile.get(r.file);
        if (list === undefined) byFile.set(r.file, [r]);
        else list.push(r);
      }
      const perFile = new Map<string, Listed[]>();
      for (const o of objects) {
        const list = perFile.get(o.file);
        if (list === undefined) perFile.set(o.file, [o]);
        else list.push(o);
      }
      for (const [file, inFile] of perFile) {
        const count = inFile.reduce((sum, o) => sum + o.count, 0);
        const fileRows = byFile.get(file) ?? [];
        const bytes = inFile.reduce((sum, o) => sum + o.codeObject.size, 0);
        const note = fileRows.length === count ? "" : `, ${fileRows.length} shown`;
        io.stdout(`${file}: ${plural(inFile.length, "code object")} (${formatWithCommas(bytes)} bytes), ${plural(count, "kernel")}${note}\n`);
        const amd = fileRows.filter((r) => r.kernel.nv === undefined);
        const nv = fileRows.filter((r) => r.kernel.nv !== undefined);
        if (amd.length > 0) io.stdout(table(amd, objects, mangled));
        if (nv.length > 0) io.stdout(nvTable(nv, objects, mangled));
      }
      if (objects.length === 0) io.stdout("no AMDGPU code objects or NVIDIA cubins found\n");
      else if (shown.some((r) => r.kernel.nv === undefined)) io.stdout(`OCC: waves per SIMD and what limits them (${OCCUPANCY_RULE})\n`);
      if (gathered.run.folders) io.stdout(`${foldersNote(gathered.run)}\n`);
      return status;
    });
  },
};
