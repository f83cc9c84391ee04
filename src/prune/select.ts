/**
 * Which bundle entries `prune --keep=GPU,...` / `--drop=GPU,...` keeps: an entry stays under `--keep` when a
 * device of one of the listed GPUs would load it, by `check --gpu`'s rules (src/inspect/check.ts
 * `checkEntry`), and goes under `--drop` when one would; host entries always stay.
 *
 * A GPU named without a setting for a target-ID feature its processor has (xnack, sramecc) stands for
 * every setting of it: `gfx90a` is a gfx90a with xnack on and one with xnack off, so `--keep=gfx90a` keeps
 * `gfx90a:xnack+`, `gfx90a:xnack-` and `gfx90a`. The rule asks checkEntry once per setting (never with a
 * setting left unsaid), so it does not depend on how checkEntry treats an unstated feature. Generic
 * code objects follow from checkEntry: `--keep=gfx1100` keeps `gfx11-generic`. `--drop` is the exact
 * inverse, so `--drop=gfx1100` drops `gfx11-generic` too (it is what a gfx1100 would load).
 */
import { OffloadKitError } from "../engine/errors.js";
import { checkEntry, parseGpu } from "../inspect/check.js";
import type { GpuConfig } from "../inspect/check.js";
import { resolveAmdgcnProcessor } from "../target-id/index.js";

export type SelectionMode = "keep" | "drop";

export interface GpuChoice {
  /** As given (`gfx90a`, `gfx90a:xnack-`). */
  readonly text: string;
  /** One configuration per setting of the features the text leaves unsaid. */
  readonly devices: readonly GpuConfig[];
}

export interface Selection {
  readonly mode: SelectionMode;
  readonly gpus: readonly GpuChoice[];
}

/** What the rule decides about one entry. */
export interface EntryDecision {
  readonly keep: boolean;
  readonly host: boolean;
  /** The listed GPUs (as given) that would load the entry. */
  readonly matched: readonly string[];
}

/** Every device a GPU text stands for: its unsaid xnack/sramecc settings taken both ways. */
export function expandGpu(text: string): GpuChoice {
  const gpu = parseGpu(text);
  let devices: GpuConfig[] = [gpu];
  if (gpu.vendor === "amd") {
    const resolved = resolveAmdgcnProcessor(gpu.processor, 22) ?? resolveAmdgcnProcessor(gpu.processor, 19);
    const features = [
      ...(resolved?.features.sramecc ? ["sramecc"] : []),
      ...(resolved?.features.xnack ? ["xnack"] : []),
    ].filter((f) => !gpu.features.has(f));
    for (const feature of features) {
      devices = devices.flatMap((d) => [true, false].map((setting) => ({
        ...d,
        features: new Map([...d.features, [feature, setting]]),
        canonical: `${d.canonical}:${feature}${setting ? "+" : "-"}`,
      })));
    }
  }
  return { text, devices };
}

/** Parses the list of `--keep` or `--drop`; a malformed GPU is BAD_GPU with check's wording. */
export function parseSelection(mode: SelectionMode, list: readonly string[]): Selection {
  const texts = list.map((t) => t.trim()).filter((t) => t !== "");
  if (texts.length === 0) throw new OffloadKitError("BAD_SELECTION", `--${mode} needs at least one GPU (e.g. --${mode}=gfx90a)`);
  return { mode, gpus: texts.map(expandGpu) };
}

/** Whether a device of `choice` would load the entry with this ID. */
function loads(choice: GpuChoice, id: string): boolean {
  return choice.devices.some((device) => checkEntry(id, device).verdict === "loadable");
}

/** The decision for one bundle entry ID (byte string, as stored). */
export function decideEntry(selection: Selection, id: string): EntryDecision {
  const first = selection.gpus[0]?.devices[0];
  if (first !== undefined && checkEntry(id, first).verdict === "host") return { keep: true, host: true, matched: [] };
  const matched = selection.gpus.filter((choice) => loads(choice, id)).map((choice) => choice.text);
  const keep = selection.mode === "keep" ? matched.length > 0 : matched.length === 0;
  return { keep, host: false, matched };
}

/** `--keep=a,b` / `--drop=a,b`, for messages. */
export function selectionText(selection: Selection): string {
  return `--${selection.mode}=${selection.gpus.map((g) => g.text).join(",")}`;
}
