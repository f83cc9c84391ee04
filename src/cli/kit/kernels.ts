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
import { msgpackToJson } from "../../formats/msgpack.js";
import { formatWithCommas } from "../../bundler/compressed.js";
import type { FoundCodeObject } from "../../kernels/collect.js";
import type { KernelInfo } from "../../kernels/kernels.js";
import { OCCUPANCY_RULE } from "../../kernels/occupancy.js";
import { gatherKernels } from "../../kernels/node/gather.js";
import { flagValue, listValue, stringValue } from "../args.js";
import { printError, printWarning } from "../io.js";
import { hasErrors, printProblems, runGuardedAsync } from "./package-inputs.js";
import { foldersJson, foldersNote, printUnreadable } from "./folders.js";
import type { Subcommand } from "./common.js";
import { FOLDERS_HELP, JSON_OPTION, PATHS_OPTION, KIT_CATEGORY as category, VERSION_TEXT, examplesHelp, hex, pad, plural, usageError } from "./common.js";

export const SORT_KEYS = ["vgprs", "lds", "scratch", "size"] as const;
export type SortKey = (typeof SORT_KEYS)[number];

/** Problems of a code object that are reports, not damage: it has no note, or a v2 one we do not decode. */
const NOT_DAMAGE = new Set(["NO_AMDGPU_METADATA", "V2_METADATA_NOT_READ"]);

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

interface Row {
  readonly file: string;
  readonly codeObject: FoundCodeObject;
  readonly kernel: KernelInfo;
}

function targetOf(id: string): string {
  const at = id.lastIndexOf("--");
  return byteStringToUnicode(at < 0 ? id : id.slice(at + 2));
}

function n(value: number | undefined): string {
  return value === undefined ? "-" : String(value);
}

function table(rows: readonly Row[], mangled: boolean): string {
  const header = ["TARGET", "VGPR", "AGPR", "SGPR", "SPILL", "LDS", "SCRATCH", "WAVE", "WG", "SIZE", "OCC", "KERNEL"];
  const body = rows.map(({ codeObject, kernel: k }) => [
    targetOf(codeObject.id), n(k.vgprs), n(k.agprs), n(k.sgprs), `${n(k.vgprSpills)}/${n(k.sgprSpills)}`, n(k.lds),
    `${n(k.scratch)}${k.dynamicStack === true ? "+dyn" : ""}`, n(k.wavefrontSize), n(k.maxFlatWorkgroupSize), n(k.codeSize),
    k.occupancy === undefined ? "-" : `${k.occupancy.waves} ${k.occupancy.limitedBy}`, mangled ? k.name : k.demangled,
  ]);
  const right = [false, true, true, true, true, true, true, true, true, true, false, false];
  const all = [header, ...body];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  return all.map((r) => `  ${r.map((cell, i) => (i === r.length - 1 ? cell : pad(cell, widths[i]!, right[i]))).join("  ")}`.trimEnd() + "\n").join("");
}

/** NVIDIA cubins' kernels, in cuobjdump -res-usage's terms (CONST: the bank-0 bytes; --json has every bank). */
function nvTable(rows: readonly Row[], mangled: boolean): string {
  const header = ["TARGET", "REG", "STACK", "SHARED", "LOCAL", "CONST0", "SIZE", "KERNEL"];
  const body = rows.map(({ codeObject, kernel: k }) => [
    targetOf(codeObject.id), n(k.nv?.registers), n(k.nv?.stack), n(k.nv?.shared), n(k.nv?.local), n(k.nv?.constants["0"]), n(k.codeSize),
    mangled ? k.name : k.demangled,
  ]);
  const all = [header, ...body];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  return all.map((r) => `  ${r.map((cell, i) => (i === r.length - 1 ? cell : pad(cell, widths[i]!, i > 0))).join("  ")}`.trimEnd() + "\n").join("");
}

/** A kernel as --json gives it: the friendly fields, then the whole map. */
export function kernelJson(k: KernelInfo): unknown {
  const { metadata, ...friendly } = k;
  return { ...friendly, metadata: msgpackToJson(metadata) };
}

function codeObjectJson(c: FoundCodeObject, kernels: readonly KernelInfo[]): unknown {
  const { kernels: _all, ...rest } = c;
  void _all;
  return {
    ...rest,
    id: byteStringToUnicode(c.id),
    ...(c.section !== undefined ? { section: byteStringToUnicode(c.section) } : {}),
    ...(c.member !== undefined ? { member: byteStringToUnicode(c.member) } : {}),
    kernels: kernels.map(kernelJson),
  };
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
      const gathered = await gatherKernels(files, { keepMetadata: json });
      let status = 0;
      const keep = (k: KernelInfo): boolean => pattern === undefined || pattern.test(k.name) || pattern.test(k.demangled);
      let rows: Row[] = [];
      const kept = new Map<FoundCodeObject, KernelInfo[]>();
      const objects: { file: string; codeObject: FoundCodeObject }[] = [];
      for (const path of gathered.paths) {
        if (path.error !== undefined) {
          status = 1;
          printError(io, name, path.error.message);
          continue;
        }
        if (path.walk !== undefined && (json ? hasErrors(path.walk) : printProblems(io, name, path.walk))) status = 1;
        for (const item of path.items) {
          for (const p of item.problems) {
            printWarning(io, name, `${item.name}: at ${hex(p.offset)}: ${p.message}`);
          }
          for (const c of item.codeObjects) {
            if (gpu !== undefined && !codeObjectMatchesGpu(c.id, gpu)) continue;
            if (c.problem !== undefined) {
              const text = `${item.name}: ${byteStringToUnicode(c.id)}: ${c.problem.message}`;
              if (NOT_DAMAGE.has(c.problem.code)) printWarning(io, name, text);
              else {
                printError(io, name, text);
                status = 1;
              }
            }
            objects.push({ file: item.name, codeObject: c });
            kept.set(c, []);
            for (const k of c.kernels) if (keep(k)) rows.push({ file: item.name, codeObject: c, kernel: k });
          }
        }
      }
      if (sort !== "") rows.sort((a, b) => sortValue(b.kernel, sort as SortKey) - sortValue(a.kernel, sort as SortKey));
      if (top !== undefined) rows = rows.slice(0, top);
      for (const r of rows) kept.get(r.codeObject)!.push(r.kernel);
      if (printUnreadable(io, name, gathered.run)) status = 1;
      if (json) {
        const list = objects
          .filter(({ codeObject }) => top === undefined || kept.get(codeObject)!.length > 0)
          .map(({ file, codeObject }) => ({ file, ...(codeObjectJson(codeObject, kept.get(codeObject)!) as object) }));
        const problems = gathered.paths.flatMap((p) => [
          ...(p.error !== undefined ? [{ path: p.path, ...p.error }] : []),
          ...p.items.flatMap((i) => i.problems.map((q) => ({ path: i.name, code: q.code, message: q.message, offset: q.offset }))),
          ...(p.walk?.problems ?? []).map((q) => ({ path: q.name, code: q.code, message: q.message, offset: q.offset })),
        ]);
        // Written a code object at a time: librocsparse's JSON is 370 MB, too much for one string.
        const tail = JSON.stringify({ problems, ...foldersJson(gathered.run) }, null, 2);
        io.stdout(`{\n  "occupancyRule": ${JSON.stringify(OCCUPANCY_RULE)},\n  "codeObjects": [`);
        list.forEach((c, i) => io.stdout(`${i === 0 ? "" : ","}\n    ${JSON.stringify(c, null, 2).replace(/\n/g, "\n    ")}`));
        io.stdout(`${list.length === 0 ? "" : "\n  "}],\n${tail.slice(2)}\n`);
        return status;
      }
      const byFile = new Map<string, Row[]>();
      for (const r of rows) byFile.set(r.file, [...(byFile.get(r.file) ?? []), r]);
      for (const file of new Set(objects.map((o) => o.file))) {
        const inFile = objects.filter((o) => o.file === file);
        const count = inFile.reduce((sum, o) => sum + o.codeObject.kernels.length, 0);
        const shown = byFile.get(file) ?? [];
        const bytes = inFile.reduce((sum, o) => sum + o.codeObject.size, 0);
        const note = shown.length === count ? "" : `, ${shown.length} shown`;
        io.stdout(`${file}: ${plural(inFile.length, "code object")} (${formatWithCommas(bytes)} bytes), ${plural(count, "kernel")}${note}\n`);
        const amd = shown.filter((r) => r.kernel.nv === undefined);
        const nv = shown.filter((r) => r.kernel.nv !== undefined);
        if (amd.length > 0) io.stdout(table(amd, mangled));
        if (nv.length > 0) io.stdout(nvTable(nv, mangled));
      }
      if (objects.length === 0) io.stdout("no AMDGPU code objects or NVIDIA cubins found\n");
      else if (rows.some((r) => r.kernel.nv === undefined)) io.stdout(`OCC: waves per SIMD and what limits them (${OCCUPANCY_RULE})\n`);
      if (gathered.run.folders) io.stdout(`${foldersNote(gathered.run)}\n`);
      return status;
    });
  },
};
