/**
 * The "will it run on my GPU" picker: a processor (those the files name first, then every AMDGPU
 * processor LLVM knows, then NVIDIA sm_* names found), xnack and sramecc on, off or not set, and an
 * offload kind. The verdict of each entry is `offload-kit check`'s (src/inspect/check.ts checkEntry).
 */
import { checkEntry, parseGpu } from "../inspect/check.js";
import type { EntryVerdict, GpuConfig } from "../inspect/check.js";
import { AMDGCN_PROCESSORS } from "../target-id/amdgpu.js";
import { element } from "./dom.js";

export interface GpuChoice {
  readonly gpu: GpuConfig;
  readonly kind?: string;
}

function select(id: string): HTMLSelectElement {
  return document.getElementById(id) as HTMLSelectElement;
}

/** What a processor's table row says it supports (the newest LLVM that knows it). */
function features(processor: string): { xnack: boolean; sramecc: boolean } {
  const row = AMDGCN_PROCESSORS.find((p) => p.name === processor);
  const support = row?.support[22] ?? row?.support[19] ?? row?.support[14];
  return { xnack: support?.xnack ?? false, sramecc: support?.sramecc ?? false };
}

export class GpuPicker {
  private readonly processor = select("gpu-processor");
  private readonly xnack = select("gpu-xnack");
  private readonly sramecc = select("gpu-sramecc");
  private readonly kind = select("gpu-kind");
  private known = new Set<string>();

  constructor(private readonly changed: () => void) {
    for (const control of [this.processor, this.xnack, this.sramecc, this.kind]) control.addEventListener("change", () => this.update());
    this.fill([]);
  }

  /** Offers the processors the files name first (the likely answers), then all others. */
  fill(found: readonly string[]): void {
    const current = this.processor.value;
    const inFiles = [...new Set(found)].sort();
    if (inFiles.join() === [...this.known].join() && this.processor.options.length > 0) return;
    this.known = new Set(inFiles);
    this.processor.replaceChildren(element("option", { value: "" }, "choose a GPU…"));
    if (inFiles.length > 0) {
      const group = element("optgroup", { label: "in these files" });
      for (const p of inFiles) group.append(element("option", { value: p }, p));
      this.processor.append(group);
    }
    const all = element("optgroup", { label: "AMD (all LLVM knows)" });
    for (const p of AMDGCN_PROCESSORS) if (!this.known.has(p.name) && p.support[22] !== undefined) all.append(element("option", { value: p.name }, p.name));
    this.processor.append(all);
    this.processor.value = current;
    this.update(false);
  }

  private update(notify = true): void {
    const f = features(this.processor.value);
    this.xnack.disabled = !f.xnack;
    this.sramecc.disabled = !f.sramecc;
    if (notify) this.changed();
  }

  /** The GPU as `--gpu` would name it (`gfx90a:xnack-`), or undefined when none is chosen. */
  choice(): GpuChoice | undefined {
    const processor = this.processor.value;
    if (processor === "") return undefined;
    let text = processor;
    // Features in the canonical order (alphabetical, as clang writes target IDs).
    if (!this.sramecc.disabled && this.sramecc.value !== "") text += `:sramecc${this.sramecc.value}`;
    if (!this.xnack.disabled && this.xnack.value !== "") text += `:xnack${this.xnack.value}`;
    return { gpu: parseGpu(text), ...(this.kind.value !== "" ? { kind: this.kind.value } : {}) };
  }
}

export function verdictOf(id: string, choice: GpuChoice): EntryVerdict {
  return checkEntry(id, choice.gpu, { kind: choice.kind });
}

export const VERDICT_TEXT: Record<EntryVerdict["verdict"], string> = { loadable: "yes", "not-loadable": "no", unknown: "?", host: "host" };
