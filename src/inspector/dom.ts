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
  return n.toLocaleString("en-US");
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
