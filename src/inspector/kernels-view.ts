/**
 * The Kernels view of a dropped file and the Diff view of two (issue 28): what `offload-kit kernels` and
 * `offload-kit diff` print, on the page. The work is the worker's (src/browser/kernel-tables.ts): it collects
 * the kernels, sorts and filters them, and hands back the window of rows the scroll box shows. The page holds
 * only those rows (about a screen's worth), so a library of ~90,000 kernels scrolls, sorts and filters with
 * no main-thread task over 50 ms. Each view reads its file when opened (a closed view costs nothing).
 */
import type { OffloadKitWorker } from "../browser/client.js";
import type { DiffSummary, KernelColumn, KernelQuery, KernelRow, KernelTableSummary } from "../browser/kernel-tables.js";
import { OffloadKitError } from "../engine/errors.js";
import { breakable, element, formatBytes, formatCount } from "./dom.js";
import { RowTable } from "./table.js";

/** Height of one kernel row in pixels: fixed (one line, names cut with an ellipsis) so the scroll box maps to rows by arithmetic. */
const ROW_HEIGHT = 28;
/** Rows asked for beyond those visible, on each side. */
const OVERSCAN = 10;
/**
 * Characters of a name drawn in its cell (the whole name is the cell's title): the cell shows about 65 (40% of a 1,180 px table), and
 * laying out the rest of a 1,000-character template name costs layout time for nothing.
 */
const NAME_DRAWN = 96;

interface ColumnSpec { readonly key: KernelColumn; readonly title: string; readonly numeric: boolean }

const COLUMNS: readonly ColumnSpec[] = [
  { key: "name", title: "Kernel", numeric: false },
  { key: "id", title: "Target ID", numeric: false },
  { key: "vgprs", title: "VGPRs", numeric: true },
  { key: "sgprs", title: "SGPRs", numeric: true },
  { key: "lds", title: "LDS", numeric: true },
  { key: "scratch", title: "Scratch", numeric: true },
  { key: "codeSize", title: "Code size", numeric: true },
  { key: "occupancy", title: "Waves/SIMD", numeric: true },
];
/** A package's table has one more: the member each kernel's code object is in (last, so a file's columns keep their places). */
const MEMBER_COLUMN: ColumnSpec = { key: "member", title: "Member", numeric: false };

function cellText(row: KernelRow, key: KernelColumn): string {
  const value = row[key];
  return value === undefined ? "–" : typeof value === "number" ? formatCount(value) : value;
}

function failureText(e: unknown): string {
  return e instanceof OffloadKitError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
}

/** The sortable, filterable, virtual table of one file's kernels, inside a <details> read when opened. */
export function kernelsView(worker: OffloadKitWorker, file: File): HTMLDetailsElement {
  const status = element("p", { className: "status" }, "");
  const details = element("details", { className: "kernels", dataset: { name: file.name } },
    element("summary", {}, "Kernels in ", breakable(file.name)), status);
  let started = false;
  details.addEventListener("toggle", () => {
    if (!details.open || started) return;
    started = true;
    status.className = "status busy";
    status.textContent = "Reading the kernels' metadata…";
    worker.kernels(file).then(
      (summary) => {
        status.className = "status done";
        const members = summary.package === undefined ? "" : ` of ${formatCount(summary.package.members)} package member${summary.package.members === 1 ? "" : "s"}`;
        status.textContent = `${formatCount(summary.kernels)} kernels in ${formatCount(summary.codeObjects)} code objects${members} (${Math.round(summary.milliseconds)} ms in the worker)`;
        if (summary.codeObjects === 0) status.textContent = summary.package === undefined ? "No AMDGPU code objects found." : "No AMDGPU code objects found in the package's members.";
        for (const p of summary.package?.problems ?? []) details.append(element("p", { className: "note" }, p));
        for (const p of summary.problems) details.append(element("p", { className: "note" }, `${p.id}: ${p.message}`));
        if (summary.kernels > 0) details.append(kernelTable(worker, summary));
        details.dataset.kernels = String(summary.kernels);
      },
      (e: unknown) => {
        status.className = "status failed";
        status.textContent = `Could not read the kernels: ${failureText(e)}`;
        details.dataset.kernels = "failed";
      },
    );
  });
  return details;
}

function kernelTable(worker: OffloadKitWorker, summary: KernelTableSummary): HTMLElement {
  const gpu = element("select", {},
    element("option", { value: "" }, "all GPUs"),
    ...summary.processors.map((p) => element("option", { value: p }, p)),
    ...summary.ids.filter((id) => !summary.processors.includes(id)).map((id) => element("option", { value: id }, id)));
  const name = element("input", { type: "search", autocomplete: "off", spellcheck: false, placeholder: "part of a name" });
  const count = element("output", { className: "kernel-count" });
  const controls = element("div", { className: "find-controls" },
    element("label", {}, "GPU ", gpu), element("label", {}, "Name ", name), count);

  let sort: KernelColumn = "name";
  let descending = false;
  const columns = summary.package === undefined ? COLUMNS : [...COLUMNS, MEMBER_COLUMN];
  const heads = columns.map((c) => {
    const button = element("button", { type: "button", className: "sort" }, c.title);
    const th = element("th", { scope: "col", className: c.numeric ? "num" : c.key === "id" ? "id" : "" }, button);
    button.addEventListener("click", () => {
      // Numbers start largest first (what people look for: the heaviest kernels), names A to Z.
      descending = sort === c.key ? !descending : c.numeric;
      sort = c.key;
      paintSort();
      refresh(true);
    });
    return th;
  });
  const paintSort = () => columns.forEach((c, i) => heads[i]!.setAttribute("aria-sort", c.key === sort ? (descending ? "descending" : "ascending") : "none"));
  paintSort();

  const top = element("td", { colSpan: columns.length });
  const bottom = element("td", { colSpan: columns.length });
  const body = element("tbody");
  const table = element("table", { className: "rows kernel-rows" },
    element("caption", { className: "visually-hidden" }, `Kernels: name, target ID, registers, LDS and scratch bytes, code size, occupancy${summary.package === undefined ? "" : ", package member"}`),
    element("thead", {}, element("tr", {}, ...heads)), body);
  const scroller = element("div", { className: "kernel-scroll", tabIndex: 0, role: "region", ariaLabel: "Kernels table" }, table);
  const view = element("div", { className: "kernel-view" }, controls, scroller);

  let total = summary.kernels;
  let asked = 0;
  let shownKey = "";
  let scheduled = false;

  const query = (): KernelQuery => {
    const first = Math.max(0, Math.floor(scroller.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const visible = Math.ceil((scroller.clientHeight || 400) / ROW_HEIGHT);
    return { table: summary.table, sort, descending, gpu: gpu.value, name: name.value, start: first, count: visible + 2 * OVERSCAN };
  };

  // The rows drawn are a pool reused from one window to the next: a scroll changes their texts, never
  // the table's elements (building ~35 new rows and ~300 cells per frame cost the layout of all of them).
  const spacerTop = element("tr", { className: "spacer", ariaHidden: "true" }, top);
  const spacerBottom = element("tr", { className: "spacer", ariaHidden: "true" }, bottom);
  body.append(spacerTop, spacerBottom);
  const pool: { readonly tr: HTMLTableRowElement; readonly cells: HTMLTableCellElement[] }[] = [];
  const setText = (cell: HTMLElement, text: string) => {
    if (cell.firstChild?.nodeValue !== text) cell.textContent = text;
  };
  const draw = (rows: readonly KernelRow[], start: number) => {
    while (pool.length < rows.length) {
      const cells = columns.map((c) => element("td", { className: c.key === "name" ? "name" : c.numeric ? "num" : c.key === "member" ? "member" : "id" }));
      const tr = element("tr", { className: "kernel" }, ...cells);
      pool.push({ tr, cells });
    }
    while (pool.length > rows.length) pool.pop()!.tr.remove();
    rows.forEach((row, i) => {
      const { tr, cells } = pool[i]!;
      tr.dataset.position = String(start + i);
      columns.forEach((c, j) => {
        const text = cellText(row, c.key);
        const cell = cells[j]!;
        if (c.key === "name" || c.key === "member") {
          if (cell.title !== text) cell.title = text;
          setText(cell, text.length > NAME_DRAWN ? `${text.slice(0, NAME_DRAWN)}…` : text);
        } else setText(cell, text);
      });
      if (tr.parentNode === null) spacerBottom.before(tr);
    });
    top.style.height = `${start * ROW_HEIGHT}px`;
    bottom.style.height = `${Math.max(0, total - start - rows.length) * ROW_HEIGHT}px`;
  };

  /** Asks the worker for the rows now in view; a reply to an older question is dropped. */
  const refresh = (reset = false) => {
    if (reset) scroller.scrollTop = 0;
    const q = query();
    const key = `${q.sort}\0${q.descending}\0${q.gpu}\0${q.name}\0${q.start}\0${q.count}`;
    if (key === shownKey && !reset) return;
    const ticket = ++asked;
    view.dataset.loading = "1";
    worker.kernelRows(q).then((reply) => {
      if (ticket !== asked) return;
      shownKey = key;
      total = reply.total;
      const counted = reply.total === summary.kernels ? `${formatCount(reply.total)} kernels` : `${formatCount(reply.total)} of ${formatCount(summary.kernels)} kernels`;
      // Set only when it changes: a new text lays out the page around the box, not just the box (measured in a trace).
      if (count.textContent !== counted) count.textContent = counted;
      draw(reply.rows, reply.start);
      view.dataset.total = String(reply.total);
      delete view.dataset.loading;
    }, (e: unknown) => {
      if (ticket === asked) count.textContent = `Could not read the rows: ${failureText(e)}`;
    });
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      refresh();
    });
  };
  scroller.addEventListener("scroll", schedule, { passive: true });
  gpu.addEventListener("change", () => refresh(true));
  name.addEventListener("input", () => {
    scroller.scrollTop = 0;
    shownKey = "";
    // Loading from now on (the question goes at the next frame): what a reader of `data-total` waits out.
    view.dataset.loading = "1";
    schedule();
  });
  requestAnimationFrame(() => refresh(true));
  return view;
}

function signedBytes(n: number): string {
  return n === 0 ? "0 B" : `${n > 0 ? "+" : "−"}${formatCount(Math.abs(n))} B`;
}

/** `offload-kit diff A B` of two dropped files, inside a <details> computed when opened. */
export function diffView(worker: OffloadKitWorker, a: File, b: File): HTMLDetailsElement {
  const status = element("p", { className: "status" }, "");
  const details = element("details", { className: "diff" },
    element("summary", {}, "Diff: ", breakable(a.name), " → ", breakable(b.name)), status);
  let started = false;
  details.addEventListener("toggle", () => {
    if (!details.open || started) return;
    started = true;
    status.className = "status busy";
    status.textContent = "Comparing the kernels' metadata…";
    worker.diff(a, b).then(
      (diff) => {
        status.className = "status done";
        status.textContent = diffText(diff);
        details.append(...diffTables(diff));
        details.dataset.different = String(diff.different);
      },
      (e: unknown) => {
        status.className = "status failed";
        status.textContent = `Could not compare: ${failureText(e)}`;
        details.dataset.different = "failed";
      },
    );
  });
  return details;
}

function diffText(diff: DiffSummary): string {
  const by = (s: string) => diff.targets.filter((t) => t.status === s).length;
  const bytes = `${formatBytes(diff.before)} → ${formatBytes(diff.after)} (${signedBytes(diff.after - diff.before)})`;
  return `${diff.different ? "Different" : "The same"}: ${by("changed")} changed, ${by("added")} added, ${by("removed")} removed, ${by("unchanged")} unchanged target IDs; ${bytes}`;
}

/** A table's scroll box made reachable from the keyboard (a narrow screen scrolls it sideways). */
function focusable(wrap: HTMLElement, label: string): HTMLElement {
  wrap.tabIndex = 0;
  wrap.setAttribute("role", "region");
  wrap.setAttribute("aria-label", label);
  return wrap;
}

function diffTables(diff: DiffSummary): HTMLElement[] {
  const targets = new RowTable(
    [{ title: "Target ID", className: "id" }, { title: "Status" }, { title: "Before", className: "num" }, { title: "After", className: "num" },
      { title: "Change", className: "num" }, { title: "Kernels added", className: "num" }, { title: "removed", className: "num" }, { title: "changed", className: "num" }],
    diff.targets,
    (t) => element("tr", { className: `target ${t.status}`, dataset: { id: t.id, status: t.status } },
      element("td", { className: "id" }, breakable(t.id)), element("td", {}, t.status),
      element("td", { className: "num" }, formatCount(t.before)), element("td", { className: "num" }, formatCount(t.after)),
      element("td", { className: "num" }, signedBytes(t.after - t.before)),
      element("td", { className: "num" }, formatCount(t.added)), element("td", { className: "num" }, formatCount(t.removed)), element("td", { className: "num" }, formatCount(t.changed))),
    "diff-targets", "Target IDs: bytes before and after, kernels added, removed and changed",
  );
  const out: HTMLElement[] = [focusable(targets.root, "Target IDs compared")];
  if (diff.kernels.length > 0) {
    const kernels = new RowTable(
      [{ title: "Target ID", className: "id" }, { title: "Change" }, { title: "Kernel" }, { title: "What changed (before → after)" }],
      diff.kernels,
      (k) => element("tr", { className: `diff-kernel ${k.change}`, dataset: { change: k.change } },
        element("td", { className: "id" }, breakable(k.id)), element("td", {}, k.change), element("td", { className: "name" }, k.name), element("td", { className: "mono" }, k.detail)),
      "diff-kernels", "Kernels added, removed and changed, per target ID",
    );
    out.push(element("h3", {}, `Kernels: ${formatCount(diff.kernels.length)} changes`), focusable(kernels.root, "Kernel changes"));
  }
  return out;
}
