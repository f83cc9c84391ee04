/** Small DOM helpers for the page: elements from data, never from HTML strings (file contents are text). */

type Props = { className?: string; title?: string; dataset?: Record<string, string | number> } & Record<string, unknown>;

export function element<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined) continue;
    if (name === "dataset") for (const [k, v] of Object.entries(value as Record<string, string | number>)) node.dataset[k] = String(v);
    else (node as unknown as Record<string, unknown>)[name] = value;
  }
  node.append(...children);
  return node;
}

export function hex(n: number): string {
  return `0x${n.toString(16)}`;
}

/** Exact bytes with thousands separators (what a test compares), e.g. 1,234,567. */
export function formatCount(n: number): string {
  // Not toLocaleString: Intl costs about 0.1 ms a call (measured), thousands of calls a page.
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** Bytes for people: 1.3 GB, 27.0 KB (decimal units, as the sizes chart labels). */
export function formatBytes(n: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = n;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${n} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** An ID that may break after each '-' and ':' (its fields), never inside one: <wbr> after each. */
export function breakable(id: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const part of id.split(/(?<=[-:])/)) fragment.append(part, document.createElement("wbr"));
  fragment.lastChild?.remove();
  return fragment;
}

/** A share as people read it: 98.8%, 0.03%, <0.01%. */
export function formatShare(part: number, whole: number): string {
  if (whole <= 0) return "–";
  const percent = (part / whole) * 100;
  if (percent === 0) return "0%";
  if (percent < 0.01) return "<0.01%";
  return `${percent < 1 ? percent.toFixed(2) : percent.toFixed(1)}%`;
}
