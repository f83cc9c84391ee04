/**
 * A file's summary, drawn before anything else: how much of it is device code (the `offload-kit sizes`
 * totals, host entries set apart), and the bytes, entries and share of the file of each processor and each
 * target ID, with the stored (compressed) bytes `sizes` gives for compressed bundles, each with a bar scaled
 * to the largest row. Plain HTML: the bars shrink with their column on a narrow screen.
 */
import type { FileSizes, SizeRow } from "../inspect/sizes.js";
import { breakable, element, formatBytes, formatCount, formatShare } from "./dom.js";
import { RowTable } from "./table.js";
import type { Column } from "./table.js";

export interface Totals {
  readonly device: number;
  readonly deviceEntries: number;
  readonly hostEntries: number;
}

export function totalsOf(sizes: FileSizes): Totals {
  const host = sizes.processors.find((p) => p.id === "host");
  return { device: sizes.bytes - (host?.bytes ?? 0), deviceEntries: sizes.entries - (host?.entries ?? 0), hostEntries: host?.entries ?? 0 };
}

function stat(label: string, value: string, detail: string, className = ""): HTMLElement {
  return element("div", { className: `stat ${className}` }, element("div", { className: "stat-label" }, label), element("div", { className: "stat-value" }, value), element("div", { className: "stat-detail" }, detail));
}

/** Rows of a summary table: the largest; a file of thousands of distinct IDs says how many more there are. */
const SUMMARY_ROWS = 24;

function sizeTable(title: string, key: string, all: readonly SizeRow[], fileSize: number, withStored: boolean): HTMLElement {
  const rows = all.slice(0, SUMMARY_ROWS);
  const largest = rows.reduce((n, r) => Math.max(n, r.bytes), 1);
  const columns: Column[] = [{ title }, { title: "entries", className: "num" }, { title: "bytes", className: "num" }, { title: "of file", className: "num" }, ...(withStored ? [{ title: "stored", className: "num" }] : []), { title: "" }];
  // A file of many distinct IDs has as many rows: drawn as the entry lists are, only where seen.
  const table = new RowTable(columns, rows, (row) => {
    const bar = element("span", { className: row.id === "host" || row.id.startsWith("host") ? "host" : "" });
    bar.style.width = `${Math.max(0.5, (row.bytes / largest) * 100)}%`;
    return element("tr", { dataset: { [key]: row.id, bytes: row.bytes, entries: row.entries } },
      element("th", { scope: "row", className: "id" }, breakable(row.id)),
      element("td", { className: "num n-entries" }, formatCount(row.entries)),
      element("td", { className: "num n-bytes", title: `${formatCount(row.bytes)} bytes` }, formatBytes(row.bytes)),
      element("td", { className: "num n-share" }, formatShare(row.bytes, fileSize)),
      ...(withStored ? [element("td", { className: "num n-stored", title: `${formatCount(row.storedBytes ?? row.bytes)} bytes` }, formatBytes(row.storedBytes ?? row.bytes))] : []),
      element("td", { className: "bar-cell" }, element("div", { className: "bar", ariaHidden: "true" }, bar)),
    );
  }, `sizes ${key}s`);
  table.root.querySelector("table")!.prepend(element("caption", {}, `Bytes per ${title}${all.length > rows.length ? ` (the ${rows.length} largest of ${formatCount(all.length)})` : ""}`));
  if (all.length > rows.length) {
    const rest = all.slice(rows.length);
    const bytes = rest.reduce((n, r) => n + r.bytes, 0);
    const entries = rest.reduce((n, r) => n + r.entries, 0);
    table.root.append(element("p", { className: "note more-rows" }, `and ${formatCount(rest.length)} more, ${formatCount(entries)} entries, ${formatBytes(bytes)} (${formatShare(bytes, fileSize)} of the file): search or filter to list them`));
  }
  return table.root;
}

/** The totals and per-processor and per-target tables of one file. */
export function summaryView(sizes: FileSizes, bundles: number): HTMLElement {
  const t = totalsOf(sizes);
  const stored = sizes.storedBytes;
  const compressed = sizes.bundles.filter((b) => b.compressed !== undefined).length;
  const totals = element("div", { className: "totals" },
    stat("Device code", formatBytes(t.device), `${formatCount(t.device)} bytes, ${formatShare(t.device, sizes.size)} of the ${formatBytes(sizes.size)} file`, "device"),
    stat("Entries", formatCount(t.deviceEntries), `device code objects${t.hostEntries > 0 ? `, and ${formatCount(t.hostEntries)} host` : ""}`),
    stat("Bundles", formatCount(bundles), [
      `${formatCount(compressed)} compressed`,
      ...(sizes.images > 0 ? [`${formatCount(sizes.images)} offload image${sizes.images === 1 ? "" : "s"}`] : []),
    ].join(", ")),
    ...(stored !== undefined ? [stat("Stored", formatBytes(stored), `${formatCount(stored)} bytes on disk (compressed), ${formatShare(stored, sizes.bytes)} of the decoded bytes`)] : []),
  );
  const view = element("div", { className: "summary" }, totals);
  if (sizes.entries > 0) {
    view.append(
      sizeTable("processor", "processor", sizes.processors, sizes.size, stored !== undefined),
      sizeTable("target ID", "target", sizes.targets, sizes.size, stored !== undefined),
    );
  }
  return view;
}
