/**
 * The inspector page: files chosen or dropped are read by the offload-kit Worker (worker.js beside this
 * script, src/browser/worker.ts) a slice at a time, never whole and never uploaded; the page shows what
 * `offload-kit ls --json` reports (every bundle and entry: ID, offset, size, alignment, compressed or
 * not; offload binaries and their images; problems with their offsets), the per-target size chart of
 * `offload-kit sizes`, the verdicts of `offload-kit check` for a chosen GPU, and a download per entry.
 * Whatever goes wrong is shown where the file's results would be: never a blank page.
 */
import { OffloadKitWorker } from "../browser/client.js";
import type { InspectResult } from "../browser/protocol.js";
import type { EntryRef } from "../browser/inspect.js";
import { OffloadKitError } from "../engine/errors.js";
import type { BundleJson, ImageJson, LocationJson } from "../inspect/location-json.js";
import { imageTargetId } from "../inspect/locate.js";
import { getImageKindName } from "../formats/offload-binary.js";
import { stem } from "../llvm/path.js";
import { describeCases, judgeEntries, parseGpu } from "../inspect/check.js";
import type { EntryVerdict } from "../inspect/check.js";
import { processorOf } from "../inspect/sizes.js";
import { sizeChart } from "./chart.js";
import { element, formatBytes, formatCount, hex } from "./dom.js";
import { GpuPicker, VERDICT_TEXT, verdictOf } from "./gpu.js";
import type { GpuChoice } from "./gpu.js";

interface Shown {
  readonly file: File;
  readonly result: InspectResult;
  readonly section: HTMLElement;
}

const worker = new OffloadKitWorker({ url: new URL("worker.js", document.baseURI) });
const filesView = document.getElementById("files")!;
const shown: Shown[] = [];
const picker = new GpuPicker(() => renderVerdicts());

function errorText(e: unknown): string {
  if (e instanceof OffloadKitError) return `${e.code}${e.offset !== undefined ? ` at offset ${hex(e.offset)} (${e.offset})` : ""}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

function downloadBytes(bytes: BlobPart, name: string): void {
  const url = URL.createObjectURL(new Blob([bytes], { type: "application/octet-stream" }));
  const link = element("a", { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}

/** `<file>-<bundle index>-<ID>`, as `offload-kit extract` names a bundle entry (':', '/', '\\', NUL become '_'). */
function entryFileName(file: string, bundle: number, id: string): string {
  return `${file}-${bundle}-${id}`.replace(/[:/\\\0]/g, "_");
}

/** `<stem>-<triple>-<arch>.<index>.<ext>`, as `offload-kit extract` names an image (clang-offload-packager's name, '/' as '_'). */
function imageFileName(file: string, image: ImageJson): string {
  return `${stem(file)}-${image.triple}-${image.arch}.${image.index}.${getImageKindName(image.imageKind)}`.replace(/\//g, "_");
}

function downloadButton(shownFile: () => File, name: string, ref: EntryRef, range: { offset: number; size: number } | undefined): HTMLButtonElement {
  const button = element("button", { className: "download", type: "button", title: `save as ${name}` }, "download");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      // A plain entry is a slice of the file itself: nothing is read into memory. The rest (entries of
      // compressed bundles, compressed images) the worker decodes.
      if (range !== undefined) downloadBytes(shownFile().slice(range.offset, range.offset + range.size), name);
      else downloadBytes(await worker.extract(shownFile(), ref) as Uint8Array<ArrayBuffer>, name);
    } catch (e) {
      button.replaceWith(element("span", { className: "error" }, errorText(e)));
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

function bundleView(file: File, bundle: BundleJson): HTMLElement[] {
  const c = bundle.compressed;
  const where = [bundle.section !== undefined ? `section ${bundle.section}` : "", bundle.member !== undefined ? `member ${bundle.member}` : ""].filter(Boolean).join(" of ");
  const head = element("div", { className: "bundle-head", dataset: { bundle: bundle.index } },
    `Bundle ${bundle.index}: ${bundle.format === "object" ? "fat object" : `${bundle.format} bundle`} `,
    element("span", { className: "mono" }, `at ${hex(bundle.offset)}, ${formatCount(bundle.size)} bytes${bundle.align !== undefined ? `, align ${bundle.align}` : ""}, ${bundle.entries.length} entr${bundle.entries.length === 1 ? "y" : "ies"}${where !== "" ? `, in ${where}` : ""}${c !== undefined ? "; offsets in its decompressed bytes" : ""}`),
  );
  if (c !== undefined) {
    head.append(element("span", { className: "tag compressed", title: `stored hash ${c.storedHash}${c.recalculatedHash !== undefined ? `, contents hash ${c.recalculatedHash}` : ""}` },
      `${c.method} compressed bundle v${c.version} at ${hex(c.offset)}, ${formatCount(c.size)} bytes`));
  }
  const table = element("table", { className: "entries" },
    element("thead", {}, element("tr", {}, ...["#", "ID", "offset", "size", "align", "compressed", "runs?", ""].map((h) => element("th", {}, h)))));
  const body = element("tbody");
  bundle.entries.forEach((entry, i) => {
    const range = c === undefined ? { offset: entry.offset, size: entry.size } : undefined;
    body.append(element("tr", { className: "entry", dataset: { bundle: bundle.index, entry: i, id: entry.id } },
      element("td", { className: "num" }, String(i)),
      element("td", { className: "id" }, entry.id),
      element("td", { className: "num offset" }, hex(entry.offset)),
      element("td", { className: "num size", title: formatBytes(entry.size) }, formatCount(entry.size)),
      element("td", { className: "num align" }, String(entry.align)),
      element("td", { className: "compressed" }, c === undefined ? "no" : `yes (${c.method})`),
      element("td", { className: "verdict" }),
      element("td", {}, downloadButton(() => file, entryFileName(file.name, bundle.index, entry.id), { bundle: bundle.index, entry: i }, range)),
    ));
  });
  table.append(body);
  return [head, table];
}

function imagesView(file: File, report: LocationJson): HTMLElement[] {
  const views: HTMLElement[] = [];
  for (const run of report.offloadBinaries) {
    views.push(element("div", { className: "bundle-head" }, `Offload binaries `,
      element("span", { className: "mono" }, `at ${hex(run.offset)}, ${formatCount(run.size)} bytes, ${run.binaries} binar${run.binaries === 1 ? "y" : "ies"}${run.section !== undefined ? `, in section ${run.section}` : ""}${run.member !== undefined ? ` of member ${run.member}` : ""}`)));
    const table = element("table", { className: "images" },
      element("thead", {}, element("tr", {}, ...["#", "kind", "producer", "triple", "arch", "offset", "size", "compressed", "runs?", ""].map((h) => element("th", {}, h)))));
    const body = element("tbody");
    for (const image of run.images) {
      const range = image.compressed ? undefined : { offset: image.offset, size: image.size };
      body.append(element("tr", { className: "image", dataset: { image: image.index, id: imageTargetId(image) } },
        element("td", { className: "num" }, String(image.index)),
        element("td", {}, image.imageKindName),
        element("td", {}, image.offloadKindName),
        element("td", { className: "id" }, image.triple),
        element("td", { className: "id" }, image.arch),
        element("td", { className: "num offset" }, hex(image.offset)),
        element("td", { className: "num size" }, formatCount(image.size)),
        element("td", { className: "compressed" }, image.compressed ? "yes" : "no"),
        element("td", { className: "verdict" }),
        element("td", {}, downloadButton(() => file, imageFileName(file.name, image), { image: image.index }, range)),
      ));
    }
    table.append(body);
    views.push(table);
  }
  return views;
}

function summaryText(result: InspectResult): string {
  const r = result.report;
  const entries = r.bundles.reduce((n, b) => n + b.entries.length, 0);
  const images = r.offloadBinaries.reduce((n, run) => n + run.images.length, 0);
  const parts = [`${r.bundles.length} bundle${r.bundles.length === 1 ? "" : "s"}`, `${entries} entr${entries === 1 ? "y" : "ies"}`];
  if (images > 0) parts.push(`${images} offload image${images === 1 ? "" : "s"}`);
  return `${parts.join(", ")} in ${formatBytes(r.size)} (${r.container}); read ${formatBytes(result.bytesRead)} in ${result.reads} reads (${Math.round(result.readMilliseconds)} ms), ${Math.round(result.milliseconds)} ms in all (${result.engine} engine)`;
}

function renderResult(file: File, section: HTMLElement, result: InspectResult): void {
  const r = result.report;
  const status = section.querySelector(".status")!;
  status.className = "status done";
  status.textContent = summaryText(result);
  if (result.codecError !== undefined) section.append(element("div", { className: "error" }, `Compressed data cannot be read here: ${result.codecError.message}`));
  if (r.bundles.length === 0 && r.offloadBinaries.length === 0) section.append(element("p", { className: "empty" }, "No offload bundles or offload binaries found."));
  if (r.problems.length > 0) {
    section.append(element("h3", {}, "Problems"), element("ul", { className: "problems" },
      ...r.problems.map((p) => element("li", { dataset: { offset: p.offset, code: p.code } }, `at ${hex(p.offset)}: ${p.message} [${p.code}]`))));
  }
  if (result.sizes.targets.length > 0) section.append(element("h3", {}, "Bytes per target"), sizeChart(result.sizes.targets));
  const details = element("div", { className: "bundles" });
  for (const bundle of r.bundles) details.append(...bundleView(file, bundle));
  details.append(...imagesView(file, r));
  section.append(details);
}

function renderVerdicts(): void {
  let choice: GpuChoice | undefined;
  const summary = document.getElementById("gpu-summary")!;
  try {
    choice = picker.choice();
  } catch (e) {
    summary.textContent = errorText(e);
    return;
  }
  let device = 0;
  let loadable = 0;
  const verdicts: EntryVerdict[] = [];
  for (const row of Array.from(document.querySelectorAll<HTMLElement>("tr.entry, tr.image"))) {
    const cell = row.querySelector(".verdict")!;
    if (choice === undefined) {
      cell.textContent = "";
      cell.className = "verdict";
      continue;
    }
    const verdict = verdictOf(row.dataset.id!, choice);
    cell.textContent = VERDICT_TEXT[verdict.verdict];
    cell.className = `verdict ${verdict.verdict}`;
    (cell as HTMLElement).title = verdict.message;
    if (verdict.verdict !== "host") device++;
    if (verdict.verdict === "loadable") loadable++;
    verdicts.push(verdict);
  }
  if (choice === undefined) {
    summary.textContent = "";
    return;
  }
  // As `offload-kit check` counts them: with a feature left unset, per setting of it.
  const { unstated, cases } = judgeEntries(verdicts);
  const perSetting = unstated.length === 0 ? "" : `; ${describeCases(cases)}`;
  summary.textContent = `${loadable} of ${device} device entries load on ${choice.gpu.canonical}${choice.kind !== undefined ? ` (${choice.kind})` : ""}${perSetting}`;
}

function offerProcessors(): void {
  const found: string[] = [];
  for (const { result } of shown) {
    const ids = [...result.report.bundles.flatMap((b) => b.entries.map((e) => e.id)), ...result.report.offloadBinaries.flatMap((run) => run.images.map(imageTargetId))];
    for (const id of ids) {
      const processor = processorOf(id);
      try {
        parseGpu(processor);
        found.push(processor);
      } catch {
        // Not a processor a GPU can be (host, a bare triple): not offered.
      }
    }
  }
  picker.fill(found);
  document.getElementById("gpu")!.hidden = false;
}

async function inspectFile(file: File): Promise<void> {
  const status = element("p", { className: "status busy" }, `Reading ${formatBytes(file.size)}…`);
  const section = element("section", { className: "file", dataset: { name: file.name } }, element("h2", {}, file.name), status);
  filesView.append(section);
  try {
    const result = await worker.inspect(file, {
      onProgress: (p) => {
        status.textContent = `Reading… at ${formatBytes(p.offset)} of ${formatBytes(file.size)}: ${p.bundles} bundle${p.bundles === 1 ? "" : "s"}${p.images > 0 ? `, ${p.images} images` : ""} so far`;
      },
    });
    renderResult(file, section, result);
    shown.push({ file, result, section });
    offerProcessors();
    renderVerdicts();
  } catch (e) {
    status.className = "status failed";
    status.textContent = "Could not read this file.";
    section.append(element("div", { className: "error", dataset: { code: e instanceof OffloadKitError ? e.code : "" } }, errorText(e)));
  }
}

let runs = 0;

async function inspectFiles(files: Iterable<File>): Promise<void> {
  const started = performance.now();
  for (const file of files) await inspectFile(file);
  // For tests and the benchmark: how many batches of files are shown, and how long the last took.
  document.body.dataset.lastRunMs = String(Math.round(performance.now() - started));
  document.body.dataset.runs = String(++runs);
}

const input = document.getElementById("file-input") as HTMLInputElement;
input.addEventListener("change", () => {
  const files = Array.from(input.files ?? []);
  input.value = "";
  void inspectFiles(files);
});
const drop = document.getElementById("drop")!;
drop.addEventListener("dragover", (event) => {
  event.preventDefault();
  drop.classList.add("over");
});
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (event) => {
  event.preventDefault();
  drop.classList.remove("over");
  void inspectFiles(Array.from(event.dataTransfer?.files ?? []));
});
// Dropped anywhere else, a file would replace the page: keep it here.
window.addEventListener("dragover", (event) => event.preventDefault());
window.addEventListener("drop", (event) => event.preventDefault());
window.addEventListener("error", (event) => filesView.append(element("div", { className: "error" }, `Internal error: ${event.message}`)));
window.addEventListener("unhandledrejection", (event) => filesView.append(element("div", { className: "error" }, `Internal error: ${errorText(event.reason)}`)));
document.body.dataset.started = "1";
