/**
 * The inspector page: files chosen or dropped are read by the offload-kit Worker (worker.js beside this
 * script, src/browser/worker.ts) a slice at a time, never whole and never uploaded. Each file shows, in
 * this order: what the chosen GPU loads of it, its summary (device bytes and their share of the file, per
 * processor and per target ID: src/inspector/summary.ts), its problems, and its bundles, collapsed, each
 * opening to its entries (long lists drawn only where seen: src/inspector/table.ts). A search, filter or
 * order (src/inspector/find.ts) lists the matching entries instead. Any entry, the matches or everything
 * downloads (a zip streamed entry by entry: src/inspector/zip.ts), and the report is the JSON
 * `offload-kit ls --json` prints. Whatever goes wrong is shown where the file's results would be.
 */
import { OffloadKitWorker, prunedBlob } from "../browser/client.js";
import { memberDisplayPath } from "../packages/walk.js";
import type { InspectResult, PackageMemberResult, PackageResult } from "../browser/protocol.js";
import type { InspectProgress } from "../browser/inspect.js";
import { OffloadKitError } from "../engine/errors.js";
import type { BundleJson, LocationJson, OffloadRunJson } from "../inspect/location-json.js";
import { describeSettings } from "../inspect/check.js";
import type { EntryVerdict, FileJudgement, GpuConfig } from "../inspect/check.js";
import { judgeEntries } from "../inspect/check.js";
import { breakable, element, formatBytes, formatCount, formatShare, hex } from "./dom.js";
import { FindBar } from "./find.js";
import { diffView, kernelsView } from "./kernels-view.js";
import { NO_FILTER, Verdicts, applyFilter, isActive, rowsOf, totalsOfVerdicts } from "./model.js";
import type { Filter, Row, VerdictTotals } from "./model.js";
import { jsonText } from "./report-json.js";
import { saveBlob, saveZip } from "./save.js";
import { summaryView } from "./summary.js";
import { RowTable } from "./table.js";
import type { Column } from "./table.js";
import type { ZipEntrySource } from "./zip.js";
import type { TreeFile } from "../browser/kpack-tree.js";

/** The package kinds the page writes back pruned (src/browser/prune-package/index.ts). */
const PAGE_WRITES = new Set<string>(["zip", "deb", "tar", "gzip", "xz", "zstd", "bzip2"]);

/** Main-thread time spent building rows before letting the page paint and take input. */
const ROW_BUDGET_MS = 16;
/** Rows built at most per step, whatever the clock says (a slow machine still yields between steps). */
const ROWS_PER_STEP = 2000;
/** Bundles listed at first (and per "show more"): a library of thousands lists them in steps. */
const BUNDLES_PER_PAGE = 100;

interface Shown {
  readonly file: File;
  /** What it is called: the file's name, or `package!member` for a member of a package. */
  readonly name: string;
  /** Set for a member of a package (its path inside it): its entries are not slices of the File. */
  readonly member?: readonly string[];
  /** The package walked: on the package's own item (which has no `result`) and on each of its members. */
  package?: PackageResult;
  readonly section: HTMLElement;
  readonly verdictLine: HTMLElement;
  result?: InspectResult;
  error?: { code: string; message: string };
  rows: Row[];
  rowsByBundle: Map<number, Row[]>;
  /** The offload kinds and the GPUs (an ID's last field) of its rows, gathered as the rows are built. */
  readonly kinds: Set<string>;
  readonly gpus: Set<string>;
  /** Its rows judged on a GPU, as check judges the file (src/inspector/main.ts judgeAll). */
  judged?: { readonly gpu: GpuConfig; readonly totals: VerdictTotals; readonly judgement: FileJudgement };
  listing?: HTMLElement;
  /** Lists the bundles not listed yet (they come a page at a time). */
  showAllBundles?: () => void;
  matches?: RowTable<Row>;
  matched: Row[];
  zipMatches?: HTMLButtonElement;
  /** The files dropped with it (a folder): where a kpack'd host's archives are. */
  tree?: readonly TreeFile[];
  /** "Download, pruned for GPU", and why it is not offered for this file (undefined: it is). */
  pruneButton?: HTMLButtonElement;
  pruneRefusal?: string;
}

const worker = new OffloadKitWorker({ url: new URL("worker.js", document.baseURI) });
const filesView = document.getElementById("files")!;
const liveRegion = document.getElementById("live")!;
const gpuSummary = document.getElementById("gpu-summary")!;
const shown: Shown[] = [];
const verdicts = new Verdicts();
let filter: Filter = NO_FILTER;
const find = new FindBar((next) => {
  filter = next;
  void refilter();
});

const VERDICT_TEXT: Record<EntryVerdict["verdict"], string> = { loadable: "yes", "not-loadable": "no", unknown: "?", host: "host" };

function announce(text: string): void {
  liveRegion.textContent = text;
}

function errorText(e: unknown): string {
  if (e instanceof OffloadKitError) return `${e.code}${e.offset !== undefined ? ` at offset ${hex(e.offset)} (${e.offset})` : ""}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

async function entryBytes(item: Shown, row: Row): Promise<Blob | Uint8Array<ArrayBuffer>> {
  // A plain entry is a slice of the file itself: nothing is read into memory. The rest (entries of
  // compressed bundles, compressed images) the worker decodes, once per bundle (it keeps them).
  // A package member's entries are read by the worker from the member (the package walked again to reach it).
  if (row.range !== undefined && item.member === undefined) return item.file.slice(row.range.offset, row.range.offset + row.range.size);
  // A kpack'd host's code object: a slice of the .kpack archive dropped with it.
  if (row.kpack !== undefined) {
    const archive = item.tree?.find((t) => t.path === row.kpack!.archive)?.file;
    if (archive === undefined) throw new OffloadKitError("NO_SUCH_MEMBER", `${row.kpack.archive} is not among the files dropped`);
    if (row.kpack.compression !== "none") throw new OffloadKitError("UNSUPPORTED", `this code object is a zstd frame in ${row.kpack.archive}: offload-kit extract decodes it`);
    return archive.slice(row.kpack.offset, row.kpack.offset + row.kpack.size);
  }
  const { bytes, bytesRead, decoded } = await worker.extractWithStats(item.file, row.ref, item.member !== undefined ? { member: item.member } : {});
  // For tests and the benchmark: what the last decoded download cost the worker.
  document.body.dataset.lastExtract = JSON.stringify({ bytesRead, decoded });
  return bytes as Uint8Array<ArrayBuffer>;
}


function downloadButton(item: Shown, row: Row): HTMLButtonElement {
  const what = row.kind === "entry" ? `bundle ${row.bundle} entry ${row.index}` : `offload image ${row.index}`;
  const button = element("button", { className: "download", type: "button", title: `save as ${row.name}`, ariaLabel: `Download ${row.id} (${what} of ${item.name})` }, "download");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const bytes = await entryBytes(item, row);
      saveBlob(bytes instanceof Blob ? bytes : new Blob([bytes]), row.name);
      announce(`Saved ${row.name}`);
    } catch (e) {
      button.replaceWith(element("span", { className: "error" }, errorText(e)));
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

function verdictCell(row: Row): HTMLTableCellElement {
  const cell = element("td", { className: "verdict" });
  paintVerdict(cell, row.id);
  return cell;
}

function paintVerdict(cell: HTMLElement, id: string): void {
  if (filter.gpu === undefined) {
    cell.textContent = "";
    cell.className = "verdict";
    cell.title = "";
    return;
  }
  const v = verdicts.of(id, filter.gpu);
  cell.textContent = VERDICT_TEXT[v.verdict];
  cell.className = `verdict ${v.verdict}`;
  cell.title = v.message;
}

const ENTRY_COLUMNS: Column[] = [{ title: "#", className: "num" }, { title: "ID" }, { title: "offset", className: "num" }, { title: "size", className: "num" }, { title: "align", className: "num" }, { title: "runs?" }, { title: "" }];

function entryRow(item: Shown, row: Row, withBundle: boolean): HTMLTableRowElement {
  return element("tr", { className: row.kind, dataset: row.kind === "entry" ? { bundle: row.bundle, entry: row.index, id: row.id } : { image: row.index, id: row.id } },
    ...(withBundle ? [element("td", { className: "num where" }, row.kind === "entry" ? String(row.bundle) : "image")] : []),
    element("td", { className: "num index" }, String(row.index)),
    element("td", { className: "id" }, breakable(row.id), ...(row.kpack !== undefined ? [" ", element("span", { className: "kpack-archive note" }, `from ${row.kpack.archive}`)] : [])),
    element("td", { className: "num offset" }, hex(row.offset)),
    element("td", { className: "num size", title: formatBytes(row.size) }, formatCount(row.size)),
    element("td", { className: "num align" }, row.align !== undefined ? String(row.align) : ""),
    verdictCell(row),
    element("td", { className: "action" }, downloadButton(item, row)),
  );
}

function imageRow(item: Shown, row: Row, run: OffloadRunJson): HTMLTableRowElement {
  const image = run.images.find((i) => i.index === row.index)!;
  return element("tr", { className: "image", dataset: { image: image.index, id: row.id } },
    element("td", { className: "num" }, String(image.index)),
    element("td", {}, image.imageKindName),
    element("td", {}, image.offloadKindName),
    element("td", { className: "id" }, breakable(image.triple)),
    element("td", { className: "id" }, image.arch),
    element("td", { className: "num offset" }, hex(image.offset)),
    element("td", { className: "num size" }, formatCount(image.size)),
    element("td", { className: "compressed" }, image.compressed ? "yes" : "no"),
    verdictCell(row),
    element("td", { className: "action" }, downloadButton(item, row)),
  );
}

function bundleHead(bundle: BundleJson): HTMLElement {
  const c = bundle.compressed;
  const where = [bundle.section !== undefined ? `section ${bundle.section}` : "", bundle.member !== undefined ? `member ${bundle.member}` : ""].filter(Boolean).join(" of ");
  const bytes = bundle.entries.reduce((n, e) => n + e.size, 0);
  const head = element("summary", { className: "bundle-head", dataset: { bundle: bundle.index } },
    `Bundle ${bundle.index}: ${bundle.format === "object" ? "fat object" : bundle.format === "code-object" ? "AMDGPU code object" : bundle.format === "nv-fatbin" ? "NVIDIA fatbin container" : bundle.format === "cubin" ? "CUDA cubin" : `${bundle.format} bundle`} `,
    element("span", { className: "mono" }, `at ${hex(bundle.offset)}, ${formatCount(bundle.size)} bytes${bundle.align !== undefined ? `, align ${bundle.align}` : ""}, ${bundle.entries.length} entr${bundle.entries.length === 1 ? "y" : "ies"}${where !== "" ? `, in ${where}` : ""}${c !== undefined ? "; offsets in its decompressed bytes" : ""}`),
    element("span", { className: "tag" }, formatBytes(bytes)),
  );
  if (c !== undefined) {
    head.append(element("span", { className: "tag compressed", title: `stored hash ${c.storedHash}${c.recalculatedHash !== undefined ? `, contents hash ${c.recalculatedHash}` : ""}` },
      `${c.method} compressed bundle v${c.version} at ${hex(c.offset)}, ${formatCount(c.size)} bytes`));
  }
  return head;
}

/** A collapsed bundle: its entries are drawn when it is opened. */
function bundleView(item: Shown, bundle: BundleJson): HTMLDetailsElement {
  const details = element("details", { className: "bundle" }, bundleHead(bundle));
  details.addEventListener("toggle", () => {
    if (!details.open || details.querySelector(".table-wrap") !== null) return;
    const rows = item.rowsByBundle.get(bundle.index) ?? [];
    details.append(new RowTable(ENTRY_COLUMNS, rows, (r) => entryRow(item, r, false), "entries stack", `Entries of bundle ${bundle.index}`).root);
  });
  return details;
}

function imagesView(item: Shown, report: LocationJson): HTMLDetailsElement[] {
  const byIndex = new Map(item.rows.filter((r) => r.kind === "image").map((r) => [r.index, r]));
  return report.offloadBinaries.map((run) => {
    const details = element("details", { className: "bundle images-run" }, element("summary", { className: "bundle-head" }, "Offload binaries ",
      element("span", { className: "mono" }, `at ${hex(run.offset)}, ${formatCount(run.size)} bytes, ${run.binaries} binar${run.binaries === 1 ? "y" : "ies"}, ${run.images.length} image${run.images.length === 1 ? "" : "s"}${run.section !== undefined ? `, in section ${run.section}` : ""}${run.member !== undefined ? ` of member ${run.member}` : ""}`)));
    details.addEventListener("toggle", () => {
      if (!details.open || details.querySelector(".table-wrap") !== null) return;
      const rows = run.images.map((i) => byIndex.get(i.index)!);
      const columns: Column[] = ["#", "kind", "producer", "triple", "arch", "offset", "size", "compressed", "runs?", ""].map((title) => ({ title }));
      details.append(new RowTable(columns, rows, (r) => imageRow(item, r, run), "images stack", "Offload images").root);
    });
    return details;
  });
}

/** The bundles, a page at a time, then the offload binaries. */
function bundlesListing(item: Shown, report: LocationJson): HTMLElement {
  const list = element("div", { className: "bundles" });
  let next = 0;
  const more = element("button", { type: "button", className: "more" });
  const showMore = () => {
    const end = Math.min(report.bundles.length, next + BUNDLES_PER_PAGE);
    more.before(...report.bundles.slice(next, end).map((b) => bundleView(item, b)));
    next = end;
    more.hidden = next >= report.bundles.length;
    more.textContent = `Show ${Math.min(BUNDLES_PER_PAGE, report.bundles.length - next)} more bundles (${formatCount(report.bundles.length - next)} not shown)`;
  };
  more.addEventListener("click", showMore);
  list.append(more, ...imagesView(item, report));
  showMore();
  item.showAllBundles = () => {
    while (next < report.bundles.length) showMore();
  };
  return list;
}

/** Rows of a damaged bundle listed at most (a garbled header could claim thousands). */
const SALVAGED_ROWS = 200;

/**
 * The entries a lenient reading of a damaged bundle's header still finds (`ls --json` problems' `entries`,
 * src/inspect/salvage.ts), each marked intact or damaged; an intact one downloads as the slice of the file
 * it is. They are not counted in the summary or the verdict, as `sizes` and `check` do not count them.
 */
function salvagedView(item: Shown, at: number, entries: readonly { id: string; offset: number; size: number; intact: boolean }[]): HTMLElement {
  const intact = entries.filter((e) => e.intact).length;
  const rows = entries.slice(0, SALVAGED_ROWS).map((e, i) => {
    // As extract names an entry, with the damaged bundle's offset where its index would be.
    const name = `${item.name}-damaged-${hex(at)}-${e.id}`.replace(/[:/\\\0]/g, "_");
    const action = e.intact && item.member === undefined ? element("button", { type: "button", className: "download", ariaLabel: `Download ${e.id} (intact entry ${i} of the damaged bundle at ${hex(at)} of ${item.name})` }, "download") : element("span", {}, "");
    action.addEventListener("click", () => {
      saveBlob(item.file.slice(e.offset, e.offset + e.size), name);
      announce(`Saved ${name}`);
    });
    return element("tr", { className: `salvaged ${e.intact ? "intact" : "damaged"}`, dataset: { entry: i, id: e.id } },
      element("td", { className: "num" }, String(i)),
      element("td", { className: "id" }, breakable(e.id)),
      element("td", { className: "num offset" }, hex(e.offset)),
      element("td", { className: "num size" }, formatCount(e.size)),
      element("td", { className: "damage" }, e.intact ? "intact" : "damaged: runs past the end"),
      element("td", { className: "action" }, action));
  });
  return element("details", { className: "salvaged-bundle", open: true, dataset: { offset: at } },
    element("summary", { className: "bundle-head" }, `Damaged bundle at ${hex(at)}: `,
      element("span", { className: "mono" }, `${formatCount(entries.length)} entr${entries.length === 1 ? "y" : "ies"} still readable in its header, ${formatCount(intact)} intact`)),
    element("div", { className: "table-wrap" }, element("table", { className: "entries salvaged stack" },
      element("caption", {}, `Entries of the damaged bundle at ${hex(at)}`),
      element("thead", {}, element("tr", {}, ...["#", "ID", "offset", "size", "state", ""].map((t) => element("th", { scope: "col" }, t)))),
      element("tbody", {}, ...rows))),
    ...(entries.length > SALVAGED_ROWS ? [element("p", { className: "note" }, `and ${formatCount(entries.length - SALVAGED_ROWS)} more (ls --json lists them all)`)] : []));
}

/** Opens every bundle, a few per frame (111 bundles of 8 rows drawn at once would block for a while). */
async function expandAll(item: Shown, button: HTMLButtonElement): Promise<void> {
  button.disabled = true;
  item.showAllBundles?.();
  const closed = Array.from(item.section.querySelectorAll<HTMLDetailsElement>("details.bundle:not([open])"));
  for (let i = 0; i < closed.length; i += 16) {
    for (const d of closed.slice(i, i + 16)) d.open = true;
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  }
  button.disabled = false;
  item.section.dataset.expanded = "1";
}

function zipEntries(item: Shown, rows: readonly Row[]): AsyncIterable<ZipEntrySource> {
  return (async function* () {
    for (const row of rows) yield { name: row.name, data: await entryBytes(item, row) };
  })();
}

function zipButton(item: Shown, label: string, rows: () => readonly Row[], zipName: () => string): HTMLButtonElement {
  const button = element("button", { type: "button", className: "zip" }, label);
  button.addEventListener("click", async () => {
    const chosen = rows();
    const total = chosen.reduce((n, r) => n + r.size, 0);
    const text = button.textContent;
    button.disabled = true;
    try {
      const how = await saveZip(zipName(), zipEntries(item, chosen), (p) => {
        button.textContent = `Zipping: ${p.entries} of ${chosen.length} (${formatShare(Math.min(p.bytes, total), total)})`;
      });
      announce(how === "cancelled" ? "Download cancelled" : `Saved ${chosen.length} entries of ${item.name} as a zip`);
    } catch (e) {
      button.after(element("span", { className: "error" }, errorText(e)));
    } finally {
      button.textContent = text;
      button.disabled = false;
    }
  });
  return button;
}

/**
 * Why `prune` is not offered for a package member, or undefined when it is, from the container the worker
 * found it to be while it had the member (src/browser/packages.ts): the download is the member pruned, as
 * `offload-kit prune` writes it for the member extracted (the package itself is not rebuilt). A member the
 * worker must hold whole is a bundle-sized thing; a linked library (librocsparse's 1.3 GB) is not offered.
 */
function memberPruneRefusal(member: PackageMemberResult): string | undefined {
  if (member.editableAs === undefined) return "not offered for this member: it is none of the files offload-kit prune edits (bundles, compressed bundles, offload binaries, archives, ELF objects)";
  return member.editableAs === "linked ELF" ? LINKED_ELF_MEMBER_REFUSAL : undefined;
}

const LINKED_ELF_MEMBER_REFUSAL = "not offered for linked ELF files inside a package: the page would hold the decoded library whole; drop the extracted library on the page (or run offload-kit prune on it)";

/**
 * `lib.bc` pruned for `gfx90a:xnack-`: `lib-gfx90a_xnack-.bc` (':' as extract writes it, '_'); `x.tar.xz`:
 * `x-gfx906.tar.xz`. A wheel and a `.conda` keep their names: pip parses a wheel's name for its tags, and
 * conda finds a `.conda`'s tars by the file's name.
 */
function prunedName(name: string, gpu: string): string {
  if (/\.(whl|conda)$/.test(name)) return name;
  const tar = /\.tar(\.(gz|xz|zst|bz2))?$|\.t[gx]z$/.exec(name);
  const dot = tar !== null ? tar.index : name.lastIndexOf(".");
  const [base, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ""];
  return `${base}-${gpu}${ext}`.replace(/[:/\\\0]/g, "_");
}

function pruneButton(item: Shown): HTMLElement {
  const button = element("button", { type: "button", className: "prune" });
  const note = element("span", { className: "prune-note note", id: `prune-note-${shown.indexOf(item)}` });
  const wrap = element("span", { className: "prune-wrap" }, button, note);
  button.setAttribute("aria-describedby", note.id);
  button.addEventListener("click", async () => {
    const gpu = filter.gpu;
    if (gpu === undefined || item.pruneRefusal !== undefined) return;
    button.disabled = true;
    note.className = "prune-note note";
    note.textContent = `Pruning for ${gpu.canonical}…`;
    try {
      // `--keep` semantics: what a device of this GPU loads, host entries always (src/prune/select.ts).
      // A package's own button: the package rewritten (a wheel or zip), as offload-kit prune x.whl -o out.whl writes it.
      const whole = item.package !== undefined && item.member === undefined;
      const result = await worker.prune(item.file, [gpu.canonical], item.member !== undefined ? { name: item.name, member: item.member } : whole ? { name: item.name, package: true } : {});
      // A member is saved under its own name (the last level of its path), as extract names it.
      const name = prunedName(item.member !== undefined ? item.member.at(-1)!.replace(/^.*\//, "") : item.file.name, gpu.canonical);
      const inputSize = item.member !== undefined ? item.result?.report.size ?? 0 : item.file.size;
      saveBlob(prunedBlob(item.file, result), name);
      // For tests: what the worker answered (the parts' kinds, not their bytes).
      item.section.dataset.lastPrune = JSON.stringify({ container: result.container, changed: result.changed, outputSize: result.outputSize, kept: result.kept, entries: result.entries,
        ranges: result.parts.filter((p) => "offset" in p).length, made: result.parts.filter((p) => "bytes" in p).reduce((n, p) => n + ("bytes" in p ? p.bytes.length : 0), 0) });
      note.textContent = `${name}: kept ${formatCount(result.kept)} of ${formatCount(result.entries)} entries, ${formatBytes(result.outputSize)} of ${formatBytes(inputSize)}${result.changed ? "" : " (nothing to drop: the file as it is)"}`;
      announce(`Saved ${name}`);
    } catch (e) {
      note.className = "prune-note error";
      note.textContent = errorText(e);
    } finally {
      button.disabled = false;
    }
  });
  item.pruneButton = button;
  paintPrune(item);
  return wrap;
}

function paintPrune(item: Shown): void {
  const button = item.pruneButton;
  if (button === undefined) return;
  if (item.pruneRefusal !== undefined) {
    button.disabled = true;
    button.textContent = "Download, pruned for a GPU: not offered";
    button.title = item.pruneRefusal;
    const note = button.nextElementSibling;
    if (note !== null && note.textContent === "") note.textContent = `Pruned download ${item.pruneRefusal}.`;
    return;
  }
  const gpu = filter.gpu;
  button.disabled = gpu === undefined;
  button.textContent = gpu === undefined ? "Download, pruned for a GPU (type one in the GPU field)" : `Download, pruned for ${gpu.canonical}`;
  button.title = gpu === undefined ? "" : `what offload-kit prune --keep=${gpu.canonical} writes: the entries a ${gpu.canonical} device loads, and the host entries`;
}

function fileStem(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, "_");
}

function countsText(result: InspectResult): string {
  const r = result.report;
  const entries = r.bundles.reduce((n, b) => n + b.entries.length, 0);
  const images = r.offloadBinaries.reduce((n, run) => n + run.images.length, 0);
  const parts = [`${r.bundles.length} bundle${r.bundles.length === 1 ? "" : "s"}`, `${entries} entr${entries === 1 ? "y" : "ies"}`];
  if (images > 0) parts.push(`${images} offload image${images === 1 ? "" : "s"}`);
  return `${parts.join(", ")} in ${formatBytes(r.size)} (${r.container})`;
}

function statusText(result: InspectResult): string {
  return `${countsText(result)}; read ${formatBytes(result.bytesRead)} in ${result.reads} reads (${Math.round(result.readMilliseconds)} ms), ${Math.round(result.milliseconds)} ms in all (${result.engine} engine)`;
}

/**
 * The file's verdict line, as `offload-kit check` judges the file (src/inspect/check.ts judgeEntries, its
 * describeSettings wording): with a GPU that leaves xnack or sramecc unstated, the loadable entries are
 * counted per setting ("4 with xnack off (-), 4 with xnack on (+)") and the file passes when some entry
 * loads under every setting.
 */
function paintFileVerdict(item: Shown): void {
  const line = item.verdictLine;
  const gpu = filter.gpu;
  if (gpu === undefined || item.result === undefined) {
    line.hidden = true;
    return;
  }
  if (item.judged?.gpu !== gpu) return;
  const { totals: t, judgement } = item.judged;
  line.hidden = false;
  line.className = `verdict-line ${judgement.ok ? "pass" : t.loadable > 0 || judgement.cases.some((c) => c.loadable > 0) ? "some" : "none"}`;
  line.dataset.ok = String(judgement.ok);
  line.dataset.cases = JSON.stringify(judgement.cases);
  const mark = judgement.ok ? "OK" : "FAIL";
  if (t.device === 0) {
    line.textContent = `${mark}: no device code for ${gpu.canonical} to load.`;
  } else if (judgement.unstated.length === 0) {
    line.textContent = `${mark}: ${formatCount(t.loadable)} of ${formatCount(t.device)} device entries load on ${gpu.canonical} (${formatBytes(t.bytes)})`;
  } else {
    const perSetting = judgement.cases.map((c) => `${formatCount(c.loadable)} with ${describeSettings(c.settings)}`).join(", ");
    const failing = judgement.cases.filter((c) => c.loadable === 0).map((c) => describeSettings(c.settings));
    const unstated = judgement.unstated.join(" and ");
    line.textContent = `${mark}: ${formatCount(t.device)} device entries, loadable on ${gpu.canonical}: ${perSetting}; ` +
      (judgement.ok ? `some entry loads whichever way ${unstated} ${judgement.unstated.length === 1 ? "is" : "are"} set` : `nothing loads with ${failing.join(", nor with ")}`);
  }
}

function paintListing(item: Shown): void {
  const r = item.result;
  if (r === undefined) return;
  if (!isActive(filter)) {
    if (item.listing === undefined || item.matches !== undefined) {
      item.matches = undefined;
      const list = bundlesListing(item, r.report);
      item.listing?.replaceWith(list);
      item.listing = list;
    }
    if (item.zipMatches !== undefined) item.zipMatches.hidden = true;
    return;
  }
  item.matched = applyFilter(item.rows, filter, verdicts);
  if (item.zipMatches !== undefined) {
    item.zipMatches.hidden = false;
    item.zipMatches.textContent = `Download ${formatCount(item.matched.length)} matching as zip`;
  }
  const count = `${formatCount(item.matched.length)} of ${formatCount(item.rows.length)} entries match`;
  if (item.matches === undefined) {
    const columns: Column[] = [{ title: "bundle", className: "num" }, ...ENTRY_COLUMNS];
    item.matches = new RowTable(columns, item.matched, (row) => entryRow(item, row, true), "entries matches stack", "Matching entries");
    const view = element("div", { className: "matches" }, element("p", { className: "match-count" }, count), item.matches.root);
    item.listing?.replaceWith(view);
    item.listing = view;
  } else {
    item.listing!.querySelector(".match-count")!.textContent = count;
    item.matches.setRows(item.matched);
  }
}

/** Counts refilter's runs: a run still judging rows when the filter changes again stops there. */
let refilterRun = 0;

/**
 * Each file's rows judged on `gpu` (their verdicts, totals and the file's judgement, kept per file), a
 * slice of time at a time: 100,000 distinct IDs took one task of about a second to judge, and looking their
 * verdicts up again for each total 30 ms (measured, bench/browser.mjs). False when a newer run began meanwhile.
 */
async function judgeAll(gpu: GpuConfig, run: number): Promise<boolean> {
  let until = performance.now() + ROW_BUDGET_MS;
  for (const item of shown) {
    if (item.result === undefined || item.judged?.gpu === gpu) continue;
    const found: EntryVerdict[] = [];
    for (let i = 0; i < item.rows.length; i++) {
      found.push(verdicts.of(item.rows[i]!.id, gpu));
      if ((i & 63) !== 63 || performance.now() < until) continue;
      await nextFrame();
      if (run !== refilterRun || filter.gpu !== gpu) return false;
      until = performance.now() + ROW_BUDGET_MS;
    }
    item.judged = { gpu, totals: totalsOfVerdicts(item.rows, found), judgement: judgeEntries(found) };
  }
  return true;
}

async function refilter(): Promise<void> {
  const run = ++refilterRun;
  if (filter.gpu !== undefined && !(await judgeAll(filter.gpu, run))) return;
  for (const item of shown) {
    paintFileVerdict(item);
    paintPrune(item);
    paintListing(item);
  }
  for (const row of Array.from(document.querySelectorAll<HTMLElement>("tr.entry, tr.image"))) paintVerdict(row.querySelector(".verdict")!, row.dataset.id!);
  if (filter.gpu === undefined) {
    gpuSummary.textContent = "";
  } else {
    let loadable = 0;
    let device = 0;
    let passing = 0;
    const unstated = new Set<string>();
    const judged = shown.filter((item) => item.result !== undefined);
    for (const item of judged) {
      if (item.judged?.gpu !== filter.gpu) continue;
      const { totals: t, judgement: j } = item.judged;
      loadable += t.loadable;
      device += t.device;
      if (j.ok) passing++;
      for (const f of j.unstated) unstated.add(f);
    }
    // As check concludes: with every feature stated a count of entries; otherwise files that pass whichever way.
    const features = [...unstated].sort();
    gpuSummary.dataset.ok = String(judged.length > 0 && passing === judged.length);
    gpuSummary.textContent = features.length === 0
      ? `${loadable} of ${device} device entries load on ${filter.gpu.canonical}`
      : `${passing} of ${judged.length} file${judged.length === 1 ? " has" : "s have"} device code ${filter.gpu.canonical} can load, whichever way ${features.join(" and ")} ${features.length === 1 ? "is" : "are"} set`;
  }
  const matching = shown.reduce((n, s) => n + (isActive(filter) ? s.matched.length : s.rows.length), 0);
  document.body.dataset.filterRuns = String(Number(document.body.dataset.filterRuns ?? 0) + 1);
  if (isActive(filter)) announce(`${formatCount(matching)} entries match`);
}

function offerChoices(): void {
  const processors = new Set<string>();
  const targets = new Set<string>();
  const kinds = new Set<string>();
  const gpus = new Set<string>();
  for (const item of shown) {
    for (const p of item.result?.sizes.processors ?? []) if (p.id !== "host") processors.add(p.id);
    // The largest target IDs (a select of thousands helps no one; the search finds the rest).
    for (const t of (item.result?.sizes.targets ?? []).slice(0, 300)) targets.add(t.id);
    // Gathered while the rows were built (a pass over 100,000 rows here was one task of 20-60 ms).
    for (const k of item.kinds) kinds.add(k);
    for (const g of item.gpus) gpus.add(g);
  }
  find.offerChoices([...processors].sort(), [...targets].sort(), [...kinds].sort());
  find.offerGpus([...gpus].filter((g) => /^(gfx|sm_)/.test(g)).sort());
  document.getElementById("find")!.hidden = false;
}

function progressText(file: File, p: InspectProgress): { text: string; value: number; max: number } {
  if (p.decoding !== undefined) {
    const d = p.decoding;
    return { text: `Decoding the compressed bundle at ${hex(d.offset)}: ${formatBytes(d.decoded)} of ${formatBytes(d.total)} (${p.bundles} bundle${p.bundles === 1 ? "" : "s"} found)`, value: d.decoded, max: Math.max(1, d.total) };
  }
  return { text: `Reading… at ${formatBytes(p.offset)} of ${formatBytes(file.size)}: ${p.bundles} bundle${p.bundles === 1 ? "" : "s"}${p.images > 0 ? `, ${p.images} images` : ""} so far`, value: p.offset, max: Math.max(1, file.size) };
}

const nextFrame = () => new Promise<void>((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

async function renderResult(item: Shown, result: InspectResult, status: HTMLElement, bar: HTMLProgressElement): Promise<void> {
  const r = result.report;
  const { section } = item;
  status.textContent = "Drawing…";
  bar.removeAttribute("value");
  if (result.codecError !== undefined) section.append(element("div", { className: "error" }, `Compressed data cannot be read here: ${result.codecError.message}`));
  section.append(summaryView(result.sizes, r.bundles.length));
  // The totals are on screen before the rest is built (the first paint a person waits for).
  document.body.dataset.summaryShown = String(Number(document.body.dataset.summaryShown ?? 0) + 1);
  await nextFrame();
  // For tests and the benchmark: when the first file's totals were painted, from the files being chosen.
  document.body.dataset.summaryMs ??= String(Math.round(performance.now() - runStarted));
  // The rows, a slice of time at a time (100,000 entries take longer than a frame).
  const rows = rowsOf(r, item.name, new Set(result.sizes.processors.map((p) => p.id)));
  let steps = 0;
  let largestStep = 0;
  for (let done = false; !done;) {
    const until = performance.now() + ROW_BUDGET_MS;
    let built = 0;
    while (built < ROWS_PER_STEP && performance.now() < until) {
      const next = rows.next();
      if ((done = next.done === true)) break;
      const row = next.value;
      built++;
      item.rows.push(row);
      item.kinds.add(row.offloadKind);
      if (row.processor !== "host") item.gpus.add(row.id.slice(row.id.lastIndexOf("--") >= 0 ? row.id.lastIndexOf("--") + 2 : row.id.lastIndexOf("-") + 1));
      if (row.kind !== "entry") continue;
      let list = item.rowsByBundle.get(row.bundle);
      if (list === undefined) item.rowsByBundle.set(row.bundle, (list = []));
      list.push(row);
    }
    steps++;
    largestStep = Math.max(largestStep, built);
    if (!done) await nextFrame();
  }
  // For tests: in how many messages the result came, and in how many steps its rows were built (the most
  // in one): what keeps every main-thread task short, whatever the machine's speed.
  section.dataset.delivery = JSON.stringify({ ...result.delivery, rowSteps: steps, largestRowStep: largestStep });
  item.result = result;
  if (r.bundles.length === 0 && r.offloadBinaries.length === 0) section.append(element("p", { className: "empty" }, "No offload bundles or offload binaries found."));
  if (r.problems.length > 0) {
    section.append(element("h3", {}, "Problems"), element("ul", { className: "problems" },
      ...r.problems.map((p) => element("li", { dataset: { offset: p.offset, code: p.code } }, `at ${hex(p.offset)}: ${p.message} [${p.code}]`))),
      ...r.problems.flatMap((p) => (p.entries !== undefined ? [salvagedView(item, p.offset, p.entries)] : [])));
  }
  if (item.rows.length > 0) {
    const expand = element("button", { type: "button", className: "expand-all" }, "Expand all");
    expand.addEventListener("click", () => void expandAll(item, expand));
    item.zipMatches = zipButton(item, "Download matching as zip", () => item.matched, () => `${fileStem(item.name)}-matching.zip`);
    item.zipMatches.hidden = true;
    // Every file prune edits is offered, linked ELF libraries included (the worker plans the ELF edit and
    // answers with slices of the File and the bytes it made); a file prune refuses shows prune's message.
    // A member's was set from the package walk (renderPackage).
    if (item.member === undefined) item.pruneRefusal = undefined;
    section.append(element("div", { className: "file-actions" }, expand,
      zipButton(item, `Download all ${formatCount(item.rows.length)} as zip`, () => item.rows, () => `${fileStem(item.name)}-entries.zip`), item.zipMatches, pruneButton(item)));
  }
  paintListing(item);
  if (item.listing !== undefined) section.append(item.listing);
  paintFileVerdict(item);
  status.className = "status done";
  status.textContent = item.member !== undefined ? memberStatusText(result) : statusText(result);
  // For tests and the benchmark: the file is read once at most (bytes read never above its size).
  if (item.member === undefined) section.dataset.bytesRead = String(result.bytesRead);
  bar.hidden = true;
}

function memberStatusText(result: InspectResult): string {
  return `${countsText(result)}; a member of the package, read from it in the worker`;
}

/**
 * A package: a section per member with device code inside the package's section (named `package!member`,
 * as `offload-kit ls` names them), each drawn as a file is, so the summary, verdict and find take them in;
 * the members without device code counted.
 */
async function renderPackage(item: Shown, pkg: PackageResult, status: HTMLElement, bar: HTMLProgressElement): Promise<void> {
  const { section, file } = item;
  // The package's item keeps its place (its report is its members'); the members follow it in `shown`.
  item.package = pkg;
  const at = shown.indexOf(item) + 1;
  const w = pkg.package;
  const quiet = w.members - pkg.members.length;
  section.classList.add("package");
  section.dataset.package = w.format;
  section.dataset.members = String(w.members);
  section.dataset.withoutDeviceCode = String(quiet);
  if (pkg.codecError !== undefined) section.append(element("div", { className: "error" }, `Compressed data cannot be read here: ${pkg.codecError.message}`));
  section.append(element("p", { className: "package-counts" },
    `${w.format} package: ${formatCount(w.members)} member${w.members === 1 ? "" : "s"}${w.containers > 1 ? ` in ${formatCount(w.containers)} containers` : ""}, ` +
    `${formatCount(pkg.members.length)} with device code, ${formatCount(quiet)} without${w.links > 0 ? `; ${formatCount(w.links)} link${w.links === 1 ? "" : "s"} not followed` : ""}`));
  if (pkg.problems.length > 0) {
    section.append(element("h3", {}, "Problems"), element("ul", { className: "problems" },
      ...pkg.problems.map((p) => element("li", { dataset: { code: p.code } }, `${memberDisplayPath([pkg.name, ...p.path.slice(1)])} at ${hex(p.offset)}: ${p.message} [${p.code}]`))));
  }
  const members: Shown[] = [];
  for (const m of pkg.members) {
    const name = m.report.path;
    const memberStatus = element("p", { className: "status busy" }, "Drawing…");
    const memberBar = element("progress", { className: "bar", hidden: true });
    const verdictLine = element("p", { className: "verdict-line", hidden: true });
    const memberSection = element("section", { className: "file member", dataset: { name, member: m.member.join("!") } }, element("h3", {}, breakable(name)), memberStatus, verdictLine);
    section.append(memberSection);
    const member: Shown = {
      file, name, member: m.member, package: pkg, section: memberSection, verdictLine, rows: [], rowsByBundle: new Map(), kinds: new Set(), gpus: new Set(), matched: [],
      pruneRefusal: memberPruneRefusal(m),
    };
    shown.splice(at + members.length, 0, member);
    members.push(member);
    // Its read statistics are the package's (members are not read from the File one by one).
    await renderResult(member, { ...m, bytesRead: 0, reads: 0, readMilliseconds: 0, milliseconds: 0, engine: pkg.engine }, memberStatus, memberBar);
  }
  // The package itself pruned: wheels and zips, .conda, .deb and tarballs are written here as the CLI writes
  // them (src/browser/prune-package/); RPMs, images and cpio archives are the CLI's.
  if (pkg.members.length > 0) {
    item.pruneRefusal = PAGE_WRITES.has(w.format) ? undefined
      : `not offered for ${w.format} packages in the page (it writes wheels, zips, .conda, .deb and tarballs): offload-kit prune --keep=GPU ${pkg.name} -o OUT ${w.format === "rpm" ? "says why an RPM is not written again" : `writes the ${w.format} package`}`;
    section.insertBefore(element("div", { className: "file-actions package-actions" }, pruneButton(item)), section.querySelector("section.file.member"));
  }
  status.className = "status done";
  status.textContent = `${formatCount(pkg.members.length)} of ${formatCount(w.members)} members with device code; read ${formatBytes(pkg.bytesRead)} in ${pkg.reads} read${pkg.reads === 1 ? "" : "s"}, ${Math.round(pkg.milliseconds)} ms in all (${pkg.engine} engine)`;
  section.dataset.bytesRead = String(pkg.bytesRead);
  bar.hidden = true;
}

/**
 * A file chosen or dropped, and its path: in a folder, from the folder on (`stage/bin/app`, as `offload-kit ls
 * stage` names it); else its name.
 */
interface Picked {
  readonly file: File;
  readonly path: string;
}

async function inspectFile({ file, path }: Picked, tree: readonly TreeFile[]): Promise<void> {
  const status = element("p", { className: "status busy" }, `Reading ${formatBytes(file.size)}…`);
  const bar = element("progress", { className: "bar", max: Math.max(1, file.size), value: 0, ariaLabel: `Reading ${path}` });
  const verdictLine = element("p", { className: "verdict-line", hidden: true });
  const section = element("section", { className: "file", dataset: { name: path } }, element("h2", {}, breakable(path)), bar, status, verdictLine);
  filesView.append(section);
  const item: Shown = { file, name: path, tree, section, verdictLine, rows: [], rowsByBundle: new Map(), kinds: new Set(), gpus: new Set(), matched: [] };
  shown.push(item);
  announce(`Reading ${path}`);
  const onProgress = (p: InspectProgress) => {
    const { text, value, max } = progressText(file, p);
    status.textContent = text;
    bar.max = max;
    bar.value = value;
  };
  try {
    // A package (told by its content, as `offload-kit ls` tells it) is walked member by member.
    const pkg = await worker.inspectPackage(file, { onProgress, name: path });
    if (pkg !== undefined) {
      await renderPackage(item, pkg, status, bar);
      offerChoices();
      await refilter();
      announce(`${path}: ${status.textContent}`);
      return;
    }
    // A kpack'd host's code objects are looked for in the .kpack archives dropped with it (a folder), as
    // offload-kit ls looks beside it on disk (src/browser/kpack-tree.ts).
    const result = await worker.inspect(file, { onProgress, name: path, tree, path });
    await renderResult(item, result, status, bar);
    offerChoices();
    await refilter();
    announce(`${path}: ${statusText(result).split(";")[0]}`);
  } catch (e) {
    bar.hidden = true;
    status.className = "status failed";
    status.textContent = "Could not read this file.";
    item.error = e instanceof OffloadKitError ? { code: e.code, message: e.message } : { code: "INTERNAL", message: errorText(e) };
    section.append(element("div", { className: "error", dataset: { code: e instanceof OffloadKitError ? e.code : "" } }, errorText(e)));
    announce(`${path}: could not be read`);
  }
}

/**
 * The report as `offload-kit ls --json` prints it for the files shown (paths as the files' names), as chunks
 * of text: written a slice of time at a time (src/inspector/report-json.ts), as 100,000 entries take longer
 * than a frame.
 */
/** The package problems ls reports as warnings, not errors. */
const PACKAGE_WARNINGS = new Set(["IMAGE_WHITEOUT_UNUSED", "PACKAGE_TOO_DEEP"]);

async function reportJson(): Promise<string[]> {
  const files: (LocationJson | { path: string; error: { code: string; message: string } } | object)[] = [];
  // What ls warns of on stderr and carries in --json `warnings` (src/cli/kit/package-inputs.ts): the problems
  // of a package walk that do not fail it.
  const warnings: { code: string; message: string; path: string }[] = [];
  for (const item of shown) {
    if (item.member !== undefined) continue;
    const pkg = item.package;
    if (pkg !== undefined) {
      // As ls --json reports a package: its counts, the members with device code, the walk's problems.
      const members = shown.filter((s) => s.package === pkg && s.member !== undefined && s.result !== undefined).map((s) => ({ ...s.result!.report, member: s.member! }));
      const problems = pkg.problems.map((p) => ({ path: memberDisplayPath([pkg.name, ...p.path.slice(1)]), member: p.path.slice(1), code: p.code, message: p.message, offset: p.offset }));
      files.push({ path: pkg.name, package: pkg.package, members, problems });
      for (const p of problems) {
        if (PACKAGE_WARNINGS.has(p.code)) warnings.push({ code: p.code, message: `at 0x${p.offset.toString(16)}: ${p.message}`, path: p.path });
      }
    } else if (item.result !== undefined) files.push(item.result.report);
    else if (item.error !== undefined) files.push({ path: item.name, error: item.error });
  }
  const chunks = await jsonText({ files, warnings }, ROW_BUDGET_MS, nextFrame);
  chunks.push("\n");
  return chunks;
}

/**
 * The report as a Blob, made of a Blob per chunk, a slice of time at a time: one Blob of 13 MB of text
 * (100,000 entries) took 60 ms to make, one of Blobs takes 3 (measured in Chromium).
 */
async function reportBlob(): Promise<Blob> {
  const parts: Blob[] = [];
  let until = performance.now() + ROW_BUDGET_MS;
  for (const chunk of await reportJson()) {
    if (performance.now() > until) {
      await nextFrame();
      until = performance.now() + ROW_BUDGET_MS;
    }
    parts.push(new Blob([chunk]));
  }
  return new Blob(parts, { type: "application/json" });
}

document.getElementById("save-json")!.addEventListener("click", async () => {
  saveBlob(await reportBlob(), shown.length === 1 ? `${fileStem(shown[0]!.name)}.ls.json` : "offload-kit-ls.json");
  announce("Saved the report");
});
document.getElementById("copy-json")!.addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText((await reportJson()).join(""));
    announce("Copied the report as offload-kit ls --json prints it");
  } catch (e) {
    announce(`Could not copy: ${errorText(e)}`);
  }
});

let runs = 0;
let runStarted = 0;

/**
 * The Kernels view of each file read (a package's lists its members' kernels, each labelled by the member),
 * and the Diff view when two were dropped together (files or packages, as offload-kit diff takes them).
 */
const kernelViews = element("div", { id: "kernel-views" });
filesView.after(kernelViews);

function offerKernelViews(batch: readonly Shown[]): void {
  const read = batch.filter((item) => item.error === undefined);
  for (const item of read) kernelViews.append(kernelsView(worker, item.file));
  if (batch.length === 2 && read.length === 2) kernelViews.append(diffView(worker, read[0]!.file, read[1]!.file));
}

async function inspectFiles(picked: readonly Picked[]): Promise<void> {
  const started = (runStarted = performance.now());
  delete document.body.dataset.summaryMs;
  const from = shown.length;
  const tree = picked.map((p) => ({ path: p.path, file: p.file }));
  for (const p of picked) await inspectFile(p, tree);
  offerKernelViews(shown.slice(from).filter((item) => item.member === undefined));
  // For tests and the benchmark: how many batches of files are shown, and how long the last took.
  document.body.dataset.lastRunMs = String(Math.round(performance.now() - started));
  document.body.dataset.runs = String(++runs);
}

/** Every file under a dropped folder, by its path from the dropped folder on (`stage/bin/app`). */
async function filesUnder(entry: FileSystemEntry, path: string, out: Picked[]): Promise<void> {
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
    out.push({ file, path });
    return;
  }
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  // readEntries answers in batches (100 at a time in Chromium) until an empty one.
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) return;
    for (const child of batch.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) await filesUnder(child, `${path}/${child.name}`, out);
  }
}

/** What was dropped: files by name, folders walked (a kpack'd tree keeps its layout). */
async function droppedFiles(transfer: DataTransfer | null): Promise<Picked[]> {
  if (transfer === null) return [];
  const entries = Array.from(transfer.items ?? []).map((item) => item.webkitGetAsEntry?.() ?? null);
  if (!entries.some((e) => e?.isDirectory === true)) return Array.from(transfer.files).map((file) => ({ file, path: file.name }));
  const out: Picked[] = [];
  for (const entry of entries) if (entry !== null) await filesUnder(entry, entry.name, out);
  return out;
}

const input = document.getElementById("file-input") as HTMLInputElement;
input.addEventListener("change", () => {
  const files = Array.from(input.files ?? []);
  input.value = "";
  void inspectFiles(files.map((file) => ({ file, path: file.name })));
});
// A folder chosen: every file in it, by its path from the folder on.
const folderInput = document.getElementById("folder-input") as HTMLInputElement;
folderInput.addEventListener("change", () => {
  const files = Array.from(folderInput.files ?? []);
  folderInput.value = "";
  void inspectFiles(files.map((file) => ({ file, path: file.webkitRelativePath || file.name })));
});
document.getElementById("choose-folder")!.addEventListener("click", () => folderInput.click());
const drop = document.getElementById("drop")!;
drop.addEventListener("click", () => input.click());
drop.addEventListener("keydown", (event) => {
  if (event.key !== "Enter" && event.key !== " ") return;
  event.preventDefault();
  input.click();
});
drop.addEventListener("dragover", (event) => {
  event.preventDefault();
  drop.classList.add("over");
});
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (event) => {
  event.preventDefault();
  drop.classList.remove("over");
  void droppedFiles(event.dataTransfer).then(inspectFiles);
});
// Dropped anywhere else, a file would replace the page: keep it here.
window.addEventListener("dragover", (event) => event.preventDefault());
window.addEventListener("drop", (event) => event.preventDefault());
window.addEventListener("error", (event) => filesView.append(element("div", { className: "error" }, `Internal error: ${event.message}`)));
window.addEventListener("unhandledrejection", (event) => filesView.append(element("div", { className: "error" }, `Internal error: ${errorText(event.reason)}`)));
document.body.dataset.started = "1";
