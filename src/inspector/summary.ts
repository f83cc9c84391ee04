/**
 * A file's summary, drawn before anything else: how much of it is device code (the `offload-kit sizes`
 * totals, host entries set apart), and the bytes, entries and share of the file of each processor and each
 * target ID, with the stored (compressed) bytes `sizes` gives for compressed bundles, each with a bar scaled
 * to the largest row. Plain HTML: the bars shrink with their column on a narrow screen.
 */
import type { FileSizes, SizeRow } from "../inspect/sizes.js";
import { breakable, element, formatBytes, formatCount, formatShare } from "./dom.js";

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

function sizeTable(title: string, key: string, rows: readonly SizeRow[], fileSize: number, withStored: boolean): HTMLElement {
  const largest = Math.max(1, ...rows.map((r) => r.bytes));
  const head = element("tr", {}, ...[title, "entries", "bytes", "of file", ...(withStored ? ["stored"] : []), ""].map((h, i) =>
    element("th", { scope: "col", className: i > 0 && i < (withStored ? 5 : 4) ? "num" : "" }, h)));
  const body = element("tbody");
  for (const row of rows) {
    const bar = element("span", { className: row.id === "host" || row.id.startsWith("host") ? "host" : "" });
    bar.style.width = `${Math.max(0.5, (row.bytes / largest) * 100)}%`;
    body.append(element("tr", { dataset: { [key]: row.id, bytes: row.bytes, entries: row.entries } },
      element("th", { scope: "row", className: "id" }, breakable(row.id)),
      element("td", { className: "num" }, formatCount(row.entries)),
      element("td", { className: "num", title: `${formatCount(row.bytes)} bytes` }, formatBytes(row.bytes)),
      element("td", { className: "num" }, formatShare(row.bytes, fileSize)),
      ...(withStored ? [element("td", { className: "num", title: `${formatCount(row.storedBytes ?? row.bytes)} bytes` }, formatBytes(row.storedBytes ?? row.bytes))] : []),
      element("td", { className: "bar-cell" }, element("div", { className: "bar", ariaHidden: "true" }, bar)),
    ));
  }
  return element("div", { className: "table-wrap" }, element("table", { className: `sizes ${key}s` }, element("caption", {}, `Bytes per ${title}`), element("thead", {}, head), body));
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
