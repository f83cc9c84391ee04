/**
 * The find bar: a GPU field that takes what rocminfo, `--gpu` or a person writes (completed from the
 * processors of the files shown, then every AMDGPU processor LLVM 22 knows, from src/target-id/amdgpu.ts),
 * "only what loads", a search over IDs, a processor, a target ID and a kind to keep, and an order. It turns
 * the controls into a Filter (src/inspector/model.ts) and says when it changed.
 */
import { OffloadKitError } from "../engine/errors.js";
import type { GpuConfig } from "../inspect/check.js";
import { AMDGCN_PROCESSORS } from "../target-id/amdgpu.js";
import { element } from "./dom.js";
import { NO_FILTER, parseGpuText } from "./model.js";
import type { Filter, SortOrder } from "./model.js";

function byId<T extends HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

/** Fills a <select> with "any" then `values`, keeping the current choice when it is still offered. */
function offer(select: HTMLSelectElement, values: readonly string[], any: string): void {
  const current = select.value;
  select.replaceChildren(element("option", { value: "" }, any), ...values.map((v) => element("option", { value: v }, v)));
  select.value = values.includes(current) ? current : "";
}

export class FindBar {
  readonly gpuInput = byId<HTMLInputElement>("gpu");
  private readonly gpuList = byId<HTMLDataListElement>("gpu-list");
  private readonly gpuError = byId<HTMLElement>("gpu-error");
  private readonly loadsOnly = byId<HTMLInputElement>("loads-only");
  private readonly search = byId<HTMLInputElement>("search");
  private readonly processor = byId<HTMLSelectElement>("filter-processor");
  private readonly target = byId<HTMLSelectElement>("filter-target");
  private readonly kind = byId<HTMLSelectElement>("filter-kind");
  private readonly sort = byId<HTMLSelectElement>("sort");
  private gpu: GpuConfig | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly changed: (filter: Filter) => void) {
    const now = () => this.changed(this.filter());
    // Typing is debounced (a search over 100,000 IDs per key would stutter); choices apply at once.
    const soon = () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(now, 120);
    };
    this.search.addEventListener("input", soon);
    this.gpuInput.addEventListener("input", () => {
      this.readGpu();
      soon();
    });
    for (const control of [this.loadsOnly, this.processor, this.target, this.kind, this.sort]) control.addEventListener("change", now);
    this.offerGpus([]);
  }

  /** Offers the target IDs and processors the files name first (the likely answers), then all others. */
  offerGpus(found: readonly string[]): void {
    const seen = new Set<string>();
    const options: HTMLOptionElement[] = [];
    const add = (value: string, label: string) => {
      if (seen.has(value)) return;
      seen.add(value);
      options.push(element("option", { value, label }));
    };
    for (const id of found) add(id, "in these files");
    for (const p of AMDGCN_PROCESSORS) if (p.support[22] !== undefined) add(p.name, "AMD");
    this.gpuList.replaceChildren(...options);
  }

  offerChoices(processors: readonly string[], targets: readonly string[], kinds: readonly string[]): void {
    offer(this.processor, processors, "any processor");
    offer(this.target, targets, "any target ID");
    offer(this.kind, kinds, "any kind");
  }

  private readGpu(): void {
    try {
      this.gpu = parseGpuText(this.gpuInput.value);
      this.gpuError.textContent = "";
      this.gpuInput.removeAttribute("aria-invalid");
    } catch (e) {
      this.gpu = undefined;
      this.gpuError.textContent = e instanceof OffloadKitError ? e.message : String(e);
      this.gpuInput.setAttribute("aria-invalid", "true");
    }
  }

  filter(): Filter {
    return {
      ...NO_FILTER,
      text: this.search.value,
      processor: this.processor.value,
      target: this.target.value,
      kind: this.kind.value,
      sort: this.sort.value as SortOrder,
      loadsOnly: this.loadsOnly.checked,
      ...(this.gpu !== undefined ? { gpu: this.gpu } : {}),
    };
  }
}
