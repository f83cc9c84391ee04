/**
 * A table of rows drawn only where they can be seen: above `VIRTUAL_ABOVE` rows, the body holds the rows
 * within about a screen of the viewport plus two spacer rows standing for the rest, redrawn on scroll and
 * resize (once per animation frame). 100,000 rows then cost what 60 do. Row heights are measured as drawn
 * (they differ when a narrow screen stacks the cells), the spacers use their running average.
 */
import { element } from "./dom.js";

/** Lists up to this long are drawn whole (a few milliseconds); longer ones are virtual. */
export const VIRTUAL_ABOVE = 120;
/** Rows drawn beyond the visible ones, on each side, in screens. */
const OVERSCAN = 1;

const live = new Set<RowTable<unknown>>();
let scheduled = false;

function redrawAll(): void {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    for (const table of live) {
      if (!table.root.isConnected) live.delete(table);
      else table.draw();
    }
  });
}

window.addEventListener("scroll", redrawAll, { passive: true });
window.addEventListener("resize", redrawAll);

export interface Column {
  readonly title: string;
  readonly className?: string;
}

export class RowTable<T> {
  readonly root: HTMLElement;
  private readonly body: HTMLTableSectionElement;
  private readonly top = element("tr", { className: "spacer", ariaHidden: "true" });
  private readonly bottom = element("tr", { className: "spacer", ariaHidden: "true" });
  private rowHeight = 30;
  private measured = 0;
  private first = -1;
  private last = -1;

  constructor(
    columns: readonly Column[],
    private rows: readonly T[],
    private readonly drawRow: (row: T, position: number) => HTMLTableRowElement,
    className = "",
    caption?: string,
  ) {
    const head = element("thead", {}, element("tr", {}, ...columns.map((c) => element("th", { scope: "col", className: c.className ?? "" }, c.title))));
    this.body = element("tbody");
    const table = element("table", { className: `rows ${className}` }, head, this.body);
    if (caption !== undefined) table.prepend(element("caption", { className: "visually-hidden" }, caption));
    for (const spacer of [this.top, this.bottom]) spacer.append(element("td", { colSpan: columns.length }));
    this.root = element("div", { className: "table-wrap" }, table);
    this.render();
  }

  get virtual(): boolean {
    return this.rows.length > VIRTUAL_ABOVE;
  }

  /** Shows other rows (a new filter or order). */
  setRows(rows: readonly T[]): void {
    this.rows = rows;
    this.render();
  }

  private render(): void {
    this.first = this.last = -1;
    if (!this.virtual) {
      live.delete(this as RowTable<unknown>);
      this.body.replaceChildren(...this.rows.map((r, i) => this.drawRow(r, i)));
      return;
    }
    live.add(this as RowTable<unknown>);
    this.body.replaceChildren(this.top, this.bottom);
    // Drawn once attached (its place on the page decides which rows show).
    if (this.root.isConnected) this.draw();
    else requestAnimationFrame(() => this.draw());
  }

  /** Draws the rows that the viewport shows (and a screen either side). */
  draw(): void {
    if (!this.virtual || !this.root.isConnected) return;
    const rect = this.body.getBoundingClientRect();
    const screen = window.innerHeight;
    const from = Math.max(0, Math.floor((-rect.top - OVERSCAN * screen) / this.rowHeight));
    const to = Math.min(this.rows.length, Math.max(from, Math.ceil((screen * (1 + OVERSCAN) - rect.top) / this.rowHeight)));
    if (from === this.first && to === this.last) return;
    this.first = from;
    this.last = to;
    const drawn: HTMLTableRowElement[] = [];
    for (let i = from; i < to; i++) drawn.push(this.drawRow(this.rows[i]!, i));
    this.body.replaceChildren(this.top, ...drawn, this.bottom);
    // Learn the real height of a row from what was drawn (a running average, so spacers settle).
    if (drawn.length > 0) {
      const height = (drawn.at(-1)!.getBoundingClientRect().bottom - drawn[0]!.getBoundingClientRect().top) / drawn.length;
      if (height > 0) {
        this.rowHeight = (this.rowHeight * this.measured + height * drawn.length) / (this.measured + drawn.length);
        this.measured = Math.min(this.measured + drawn.length, 2000);
      }
    }
    (this.top.firstChild as HTMLElement).style.height = `${Math.round(from * this.rowHeight)}px`;
    (this.bottom.firstChild as HTMLElement).style.height = `${Math.round((this.rows.length - to) * this.rowHeight)}px`;
  }
}
