/**
 * What changed between two builds, by target ID: the code objects of each side (src/kernels/collect.ts) are
 * grouped by their ID (a library holds one code object per ID in each of its bundles; all of them count),
 * their bytes summed, and their kernels matched by mangled name. A kernel changed when any key of its
 * metadata map differs (compared as decoded, `.args` included) or its code size does.
 *
 * A target is `added` (only in B), `removed` (only in A), `changed` (bytes or kernels differ) or `unchanged`.
 */
import { msgpackToJson } from "../formats/msgpack.js";
import type { CodeObjectKernels, KernelInfo } from "./kernels.js";

export interface KeyChange {
  readonly before: unknown;
  readonly after: unknown;
}

export interface ChangedKernel {
  readonly name: string;
  /** Metadata keys (`.vgpr_count`) and `code size`, each with its value before and after; absent as undefined. */
  readonly changes: ReadonlyMap<string, KeyChange>;
}

export interface TargetDiff {
  readonly id: string;
  readonly status: "added" | "removed" | "changed" | "unchanged";
  /** Bytes of the target's code objects on each side (0 where it has none). */
  readonly before: number;
  readonly after: number;
  readonly kernels: { readonly added: readonly string[]; readonly removed: readonly string[]; readonly changed: readonly ChangedKernel[] };
}

export interface BuildDiff {
  readonly targets: readonly TargetDiff[];
  readonly before: number;
  readonly after: number;
  /** Whether anything differs. */
  readonly different: boolean;
}

/** The key code size is reported under, beside the metadata keys. */
export const CODE_SIZE_KEY = "code size";

interface Side {
  bytes: number;
  kernels: Map<string, KernelInfo>;
}

function group(codeObjects: readonly CodeObjectKernels[]): Map<string, Side> {
  const out = new Map<string, Side>();
  for (const c of codeObjects) {
    let side = out.get(c.id);
    if (side === undefined) out.set(c.id, (side = { bytes: 0, kernels: new Map() }));
    side.bytes += c.size;
    for (const k of c.kernels) {
      // The same kernel in two code objects of one ID (two bundles of a library) is kept apart by a count.
      let key = k.name;
      for (let i = 2; side.kernels.has(key); i++) key = `${k.name}#${i}`;
      side.kernels.set(key, k);
    }
  }
  return out;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The keys whose values differ between two kernels' maps, and the code size. */
export function kernelChanges(a: KernelInfo, b: KernelInfo): Map<string, KeyChange> {
  const changes = new Map<string, KeyChange>();
  const keys = new Set<string>();
  for (const k of a.metadata.keys()) if (typeof k === "string") keys.add(k);
  for (const k of b.metadata.keys()) if (typeof k === "string") keys.add(k);
  for (const key of [...keys].sort()) {
    const before = a.metadata.has(key) ? msgpackToJson(a.metadata.get(key)!) : undefined;
    const after = b.metadata.has(key) ? msgpackToJson(b.metadata.get(key)!) : undefined;
    if (!same(before, after)) changes.set(key, { before, after });
  }
  if (a.codeSize !== b.codeSize) changes.set(CODE_SIZE_KEY, { before: a.codeSize, after: b.codeSize });
  return changes;
}

export function diffBuilds(a: readonly CodeObjectKernels[], b: readonly CodeObjectKernels[]): BuildDiff {
  const before = group(a);
  const after = group(b);
  const ids = [...new Set([...before.keys(), ...after.keys()])].sort();
  const targets = ids.map((id): TargetDiff => {
    const x = before.get(id);
    const y = after.get(id);
    const added = [...(y?.kernels.keys() ?? [])].filter((k) => x === undefined || !x.kernels.has(k));
    const removed = [...(x?.kernels.keys() ?? [])].filter((k) => y === undefined || !y.kernels.has(k));
    const changed: ChangedKernel[] = [];
    if (x !== undefined && y !== undefined) {
      for (const [name, k] of x.kernels) {
        const other = y.kernels.get(name);
        if (other === undefined) continue;
        const changes = kernelChanges(k, other);
        if (changes.size > 0) changed.push({ name, changes });
      }
    }
    const status = x === undefined ? "added" : y === undefined ? "removed"
      : x.bytes !== y.bytes || added.length + removed.length + changed.length > 0 ? "changed" : "unchanged";
    return { id, status, before: x?.bytes ?? 0, after: y?.bytes ?? 0, kernels: { added, removed, changed } };
  });
  const sum = (list: readonly TargetDiff[], pick: (t: TargetDiff) => number): number => list.reduce((s, t) => s + pick(t), 0);
  return {
    targets,
    before: sum(targets, (t) => t.before),
    after: sum(targets, (t) => t.after),
    different: targets.some((t) => t.status !== "unchanged"),
  };
}

/** Growth in percent from `before` to `after` (Infinity from nothing to something). */
export function growthPercent(before: number, after: number): number {
  if (before === 0) return after === 0 ? 0 : Infinity;
  return ((after - before) / before) * 100;
}
