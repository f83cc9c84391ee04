/**
 * Which entry goes to which output: OffloadBundler::UnbundleFiles (clang/lib/Driver/OffloadBundler.cpp,
 * spec bundler.md §6) as a pure function, so the Node and in-memory front ends share it.
 *
 * The worklist is an llvm::StringMap of requested (normalised) targets. Each entry, in visit order,
 * goes to the first compatible target in the worklist's bucket order, which then leaves the worklist.
 * Missing targets are an error unless -allow-missing-bundles; an input with no matching entry at all
 * is "meant for the host" (host outputs get a copy of the input, others are empty).
 */
import { OffloadKitError } from "../engine/errors.js";
import { StringMapModel } from "../llvm/string-map.js";
import type { IndexedEntry } from "./read.js";
import { compatible, hasHostKind, parseTarget } from "./targets.js";

export type OutputContent =
  | { readonly kind: "entry"; readonly entry: IndexedEntry }
  | { readonly kind: "whole-input" }
  | { readonly kind: "empty" };

export interface UnbundleWrite {
  /** Index into the requested targets / outputs. */
  readonly target: number;
  readonly content: OutputContent;
}

export interface UnbundleRequest {
  /** Normalised target IDs, in -targets order. */
  readonly targets: readonly string[];
  readonly allowMissingBundles?: boolean;
  readonly hipOpenmpCompatible?: boolean;
}

/** "A", "A and B", "A, B, and C": the list style of LLVM's "Can't find bundles for" message. */
export function formatMissingList(names: readonly string[]): string {
  const sorted = [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const last = sorted.length - 1;
  let out = "";
  sorted.forEach((name, i) => {
    if (i !== 0 && last > 1) out += ",";
    out += " ";
    if (i === last && i !== 0) out += "and ";
    out += name;
  });
  return out;
}

/** Plans one unbundling job; throws OffloadKitError with LLVM's message when LLVM fails. */
export function planUnbundle(entries: readonly IndexedEntry[], request: UnbundleRequest): UnbundleWrite[] {
  const { targets } = request;
  const worklist = new StringMapModel<number>({ hash: "xxh3" });
  targets.forEach((target, i) => worklist.set(target, i));
  const parsedTargets = targets.map(parseTarget);
  const writes: UnbundleWrite[] = [];
  let foundHost = false;
  for (const entry of entries) {
    if (worklist.size === 0) break;
    const codeObject = parseTarget(entry.id);
    let match: string | undefined;
    for (const [key, index] of worklist.entries()) {
      if (compatible(codeObject, parsedTargets[index], request.hipOpenmpCompatible ?? false)) {
        match = key;
        break;
      }
    }
    if (match === undefined) continue;
    writes.push({ target: worklist.get(match)!, content: { kind: "entry", entry } });
    worklist.delete(match);
    if (hasHostKind(codeObject)) foundHost = true;
  }

  if (!request.allowMissingBundles && worklist.size > 0) {
    throw new OffloadKitError("MISSING_BUNDLES", `Can't find bundles for${formatMissingList([...worklist.keys()])}`);
  }
  if (worklist.size === targets.length) {
    // Nothing matched: the input is taken to be the host's own file.
    return [...worklist.values()].map((i) => ({
      target: i,
      content: hasHostKind(parsedTargets[i]) ? { kind: "whole-input" } : { kind: "empty" },
    }));
  }
  const hostRequested = parsedTargets.some(hasHostKind);
  if (!(foundHost || !hostRequested || request.allowMissingBundles)) {
    throw new OffloadKitError("MISSING_HOST_BUNDLE", "Can't find bundle for the host target");
  }
  for (const i of worklist.values()) writes.push({ target: i, content: { kind: "empty" } });
  return writes;
}
