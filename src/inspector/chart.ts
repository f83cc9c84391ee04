/**
 * The per-target size chart: one horizontal SVG bar per target ID (the rows of `offload-kit sizes`),
 * longest first, labelled with the ID and its bytes. Plain SVG: a chart library would not earn its place
 * for bars.
 */
import type { SizeRow } from "../inspect/sizes.js";
import { element, formatBytes } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const ROW_HEIGHT = 20;
const LABEL_WIDTH = 430;
const BAR_WIDTH = 430;

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attributes: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function shorten(id: string, max: number): string {
  return id.length <= max ? id : `…${id.slice(id.length - max + 1)}`;
}

export function sizeChart(rows: readonly SizeRow[]): Element {
  if (rows.length === 0) return element("p", { className: "note" }, "No entries.");
  const largest = Math.max(1, ...rows.map((r) => r.bytes));
  const width = LABEL_WIDTH + BAR_WIDTH + 110;
  const chart = svg("svg", { class: "chart", width, height: rows.length * ROW_HEIGHT + 4, viewBox: `0 0 ${width} ${rows.length * ROW_HEIGHT + 4}`, role: "img" });
  chart.append(svg("title", {}, "Bytes per target ID"));
  rows.forEach((row, i) => {
    const y = i * ROW_HEIGHT + 2;
    const bar = Math.max(1, Math.round((row.bytes / largest) * BAR_WIDTH));
    const group = svg("g", { "data-target": row.id, "data-bytes": row.bytes, "data-entries": row.entries });
    group.append(svg("title", {}, `${row.id}: ${row.entries} entr${row.entries === 1 ? "y" : "ies"}, ${row.bytes} bytes`));
    group.append(svg("text", { x: LABEL_WIDTH - 6, y: y + 14, "text-anchor": "end" }, shorten(row.id, 56)));
    group.append(svg("rect", { x: LABEL_WIDTH, y: y + 3, width: bar, height: ROW_HEIGHT - 6, rx: 2, class: row.id.startsWith("host") ? "host" : "" }));
    group.append(svg("text", { x: LABEL_WIDTH + bar + 6, y: y + 14, class: "size" }, formatBytes(row.bytes)));
    chart.append(group);
  });
  return chart;
}
