// The inspector page as a person uses it (issue 20), in Debian's Chromium: the summary first (device bytes
// and share, per processor and target ID, as `offload-kit sizes --json` counts them), bundles collapsed,
// long lists drawn only where seen (a generated 100,000-entry bundle; long main-thread tasks measured with
// a PerformanceObserver), find (a GPU as rocminfo prints it, search, filters, order) against
// `offload-kit check`, export (zip of everything or of the matches, byte for byte as `offload-kit extract`
// writes; the report as `offload-kit ls --json` prints it), a compressed bundle read once and decoded once,
// 360 px and dark mode (no sideways scrolling; screenshots against committed references with a tolerance),
// and accessibility (axe-core, keyboard, names, live region). librocsparse0 when installed.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { CHROMIUM, launchChromium, servePage } from "./chromium.js";
import type { Launched, Served } from "./chromium.js";
import { decodePng, differingShare } from "./png.js";
import { nativeTool } from "../native.js";
import { HANG_MS } from "../limits.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const KIT = join(ROOT, "dist/bin/offload-kit.js");
const BUNDLER = join(ROOT, "dist/bin/offload-bundler.js");
const FIXTURES = join(ROOT, "test/fixtures");
const SHOTS = join(ROOT, "test/browser/screenshots");
const LIBROCSPARSE = "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1";
const UNZIP = nativeTool("unzip");
/** Share of pixels allowed to differ from a reference screenshot (fonts and anti-aliasing move a few). */
const SCREENSHOT_TOLERANCE = 0.06;

function kit(args: string[], cwd = ROOT) {
  const run = spawnSync(KIT, args, { encoding: "utf8", maxBuffer: 1 << 28, cwd });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Deterministic bytes that compress somewhat (a code object's mix of runs and noise). */
function pseudoCode(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = (i & 64) === 0 ? (x >>> 24) & 0x0f : i & 0xff;
  }
  return out;
}

describe.skipIf(CHROMIUM === undefined)("the inspector page: summary, find, export, any screen, accessible", () => {
  let served: Served;
  let browser: Launched;
  let page: Page;
  let dir: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "offload-kit-inspector-"));
    served = await servePage();
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on("pageerror", (e) => pageErrors.push(e.message));
    await page.addInitScript(() => {
      // Long main-thread tasks (over 50 ms), kept for the test to read.
      const w = window as unknown as { longTasks: number[] };
      w.longTasks = [];
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) w.longTasks.push(entry.duration);
      }).observe({ type: "longtask", buffered: true });
      // Downloads go through the Blob path (a save dialog cannot be answered here).
      delete (window as unknown as { showSaveFilePicker?: unknown }).showSaveFilePicker;
    });
  });

  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    pageErrors.length = 0;
  });

  async function open(files: string[], options: { width?: number; dark?: boolean } = {}): Promise<void> {
    await page.setViewportSize({ width: options.width ?? 1280, height: 900 });
    await page.emulateMedia({ colorScheme: options.dark ? "dark" : "light" });
    await page.goto(served.url);
    await page.setInputFiles("#file-input", files);
    await page.waitForFunction(() => document.body.dataset.runs === "1", undefined, { timeout: HANG_MS });
  }

  async function download(click: () => Promise<void>): Promise<{ name: string; bytes: Buffer }> {
    const [event] = await Promise.all([page.waitForEvent("download", { timeout: HANG_MS }), click()]);
    return { name: event.suggestedFilename(), bytes: readFileSync(await event.path()) };
  }

  const longest = () => page.evaluate(() => Math.max(0, ...(window as unknown as { longTasks: number[] }).longTasks));

  it("puts the summary first: device bytes, their share, per processor and per target ID as offload-kit sizes counts", async () => {
    const files = ["bundler/host-gfx906.19.bc", "ccob/multi.22.ccob", "archive/hda.a", "offload-binary/multi.19.bin"].map((f) => join(FIXTURES, f));
    const sizes = JSON.parse(kit(["sizes", "--json", ...files]).stdout).files as any[];
    await open(files);
    const shown = await page.$$eval("section.file", (sections) => sections.map((s) => ({
      device: s.querySelector(".stat.device .stat-detail")?.textContent ?? "",
      processors: Array.from(s.querySelectorAll<HTMLElement>("table.processors tr[data-processor]")).map((r) => [r.dataset.processor, Number(r.dataset.bytes), Number(r.dataset.entries)]),
      targets: Array.from(s.querySelectorAll<HTMLElement>("table.targets tr[data-target]")).map((r) => [r.dataset.target, Number(r.dataset.bytes), Number(r.dataset.entries)]),
      bundlesOpen: s.querySelectorAll("details.bundle[open]").length,
      bundles: s.querySelectorAll("details.bundle").length,
      rows: s.querySelectorAll("tr.entry").length,
      firstChild: Array.from(s.children).findIndex((c) => c.classList.contains("summary")),
      listing: Array.from(s.children).findIndex((c) => c.classList.contains("bundles")),
    })));
    sizes.forEach((want, i) => {
      const got = shown[i]!;
      const host = want.processors.find((p: any) => p.id === "host");
      const device = want.bytes - (host?.bytes ?? 0);
      expect(got.device, files[i]).toMatch(new RegExp(`^${device.toLocaleString("en-US")} bytes, [\\d.<]+% of the `));
      expect(got.processors, files[i]).toEqual(want.processors.map((p: any) => [p.id, p.bytes, p.entries]));
      expect(got.targets, files[i]).toEqual(want.targets.map((p: any) => [p.id, p.bytes, p.entries]));
      // Collapsed: bundles listed, none open, no entry row drawn; the summary comes before them.
      expect(got.bundlesOpen, files[i]).toBe(0);
      expect(got.rows, files[i]).toBe(0);
      expect(got.firstChild, files[i]).toBeGreaterThan(0);
      if (got.listing >= 0) expect(got.listing, files[i]).toBeGreaterThan(got.firstChild);
    });
    // Stored (compressed) bytes as sizes gives them, for the compressed bundle.
    const stored = await page.locator("section.file").nth(1).locator("table.processors tr[data-processor] td").allTextContents();
    expect(sizes[1].storedBytes).toBeGreaterThan(0);
    expect(stored.length).toBeGreaterThan(0);
    // A bundle opens on click, and shows its entries.
    await page.locator("section.file").first().locator("details.bundle summary").first().click();
    await expect.poll(() => page.locator("section.file").first().locator("tr.entry").count()).toBe(2);
    expect(pageErrors).toEqual([]);
  });

  it("lists a 100,000-entry bundle without drawing it: summary shown, rows drawn where seen, search finds the last", async () => {
    const file = join(dir, "many.hipfb");
    const processors = ["gfx900", "gfx906", "gfx908", "gfx90a:xnack-", "gfx90a:xnack+", "gfx942", "gfx1030", "gfx1100"];
    writeFileSync(file, writeBinaryBundle(Array.from({ length: 100_000 }, (_, i) => ({
      id: i === 0 ? "host-x86_64-unknown-linux-gnu" : `hipv4-amdgcn-amd-amdhsa-e${i}-${processors[i % processors.length]}`,
      data: new Uint8Array(16 + (i % 97)).fill(i & 0xff),
    }))));
    const sizes = JSON.parse(kit(["sizes", "--json", file]).stdout).files[0];
    await open([file]);
    // What keeps every main-thread task short (bench/browser.mjs measures them, under 50 ms): the result
    // came in parts of at most 2,000 items (100,000 entries and 100,000 target rows: over 100 messages, none
    // the whole list), and the rows were built at most 2,000 per step, the page painting between steps.
    const delivery = JSON.parse((await page.getAttribute("section.file", "data-delivery"))!);
    expect(delivery.messages).toBeGreaterThanOrEqual(100);
    expect(delivery.largestPart).toBeGreaterThan(0);
    expect(delivery.largestPart).toBeLessThanOrEqual(2000);
    expect(delivery.rowSteps).toBeGreaterThanOrEqual(50);
    expect(delivery.largestRowStep).toBeLessThanOrEqual(2000);
    // Put back together, the report is what ls --json prints, byte for byte.
    const json = await download(() => page.click("#save-json"));
    expect(json.bytes.toString("utf8")).toBe(kit(["ls", "--json", "many.hipfb"], dir).stdout);
    const device = sizes.bytes - sizes.processors.find((p: any) => p.id === "host").bytes;
    expect(await page.textContent(".stat.device .stat-detail")).toContain(`${device.toLocaleString("en-US")} bytes`);
    expect(await page.textContent(".stat:nth-child(2) .stat-value")).toBe("99,999");
    // 100,000 distinct IDs: the summary shows the largest 24 and says how many more.
    expect(await page.locator("table.targets tr[data-target]").count()).toBe(24);
    expect(await page.textContent("table.targets caption")).toContain("of 100,000");
    await page.click("details.bundle summary");
    await page.waitForSelector("tr.entry");
    const drawn = await page.locator("tr.entry").count();
    expect(drawn).toBeGreaterThan(5);
    expect(drawn).toBeLessThan(400);
    // Scrolled to the end, the last entry is drawn (the spacers stand for the rest).
    for (let i = 0; i < 3; i++) {
      await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
      await page.waitForTimeout(300);
    }
    await page.waitForSelector('tr.entry[data-entry="99999"]', { timeout: HANG_MS });
    expect(await page.locator("tr.entry").count()).toBeLessThan(400);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.fill("#search", "-e99999-");
    await page.waitForFunction(() => document.querySelector(".match-count")?.textContent === "1 of 100,000 entries match");
    expect(await page.getAttribute("tr.entry", "data-entry")).toBe("99999");
    await page.fill("#search", "gfx942");
    await page.selectOption("#sort", "size-desc");
    await page.waitForFunction(() => document.querySelector(".match-count")?.textContent === "12,500 of 100,000 entries match");
    await page.locator("div.matches").scrollIntoViewIfNeeded();
    await page.waitForFunction(() => document.querySelectorAll("tr.entry").length > 5);
    const shownSizes = await page.$$eval("tr.entry td.size", (cells) => cells.map((c) => Number(c.textContent!.replace(/,/g, ""))));
    expect(shownSizes.length).toBeGreaterThan(5);
    expect(shownSizes.length).toBeLessThan(400);
    expect(shownSizes).toEqual([...shownSizes].sort((a, b) => b - a));
    // Measured, not a speed target (bench/browser.mjs has those): no task near the seconds the old page took.
    const longTask = await longest();
    console.log(`100,000 entries: longest main-thread task ${Math.round(longTask)} ms`);
    expect(longTask).toBeLessThan(5000);
    expect(pageErrors).toEqual([]);
  }, HANG_MS);

  it("finds: a GPU as rocminfo prints it (verdicts of offload-kit check), completion, search, processor, kind, order", async () => {
    const files = ["bundler/host-gfx906.19.bc", "ccob/multi.22.ccob", "archive/hda.a"].map((f) => join(FIXTURES, f));
    const ls = JSON.parse(kit(["ls", "--json", ...files]).stdout).files as any[];
    const ids: string[] = ls.flatMap((f) => f.bundles.flatMap((b: any) => b.entries.map((e: any) => e.id)));
    await open(files);
    const options = await page.$$eval("#gpu-list option", (o) => o.map((x) => (x as HTMLOptionElement).value));
    expect(options).toEqual(expect.arrayContaining(["gfx906", "gfx90a", "gfx942", "gfx1030", "gfx1100"]));
    expect(options.length).toBeGreaterThan(40);
    const gpu = "gfx90a:sramecc+:xnack-";
    const check = JSON.parse(kit(["check", `--gpu=${gpu}`, "--json", ...files]).stdout);
    await page.fill("#gpu", `amdgcn-amd-amdhsa--${gpu}`);
    const loadable = check.inputs.reduce((n: number, x: any) => n + x.loadable, 0);
    const device = check.inputs.reduce((n: number, x: any) => n + x.deviceEntries, 0);
    await page.waitForFunction((t) => document.getElementById("gpu-summary")?.textContent === t, `${loadable} of ${device} device entries load on ${gpu}`);
    // Each file's verdict, at its top.
    const lines = await page.$$eval(".verdict-line", (l) => l.map((x) => x.textContent));
    check.inputs.forEach((input: any, i: number) => {
      if (input.deviceEntries > 0) expect(lines[i]).toContain(`${input.loadable} of ${input.deviceEntries} device entries load on ${gpu}`);
    });
    // Only what loads: host entries and loadable ones, in every file.
    await page.check("#loads-only");
    const kept = check.inputs.flatMap((x: any) => x.entries.filter((e: any) => e.verdict !== "not-loadable").map((e: any) => e.id));
    await expect.poll(() => page.$$eval("tr.entry", (r) => r.map((x) => x.getAttribute("data-id")))).toEqual(kept);
    await page.uncheck("#loads-only");
    await page.fill("#gpu", "gfx90a:bogus+");
    await page.waitForFunction(() => (document.getElementById("gpu-error")?.textContent ?? "") !== "");
    expect(await page.getAttribute("#gpu", "aria-invalid")).toBe("true");
    await page.fill("#gpu", "");
    // Search, processor, kind, order.
    await page.fill("#search", "GFX90A");
    await expect.poll(() => page.$$eval("tr.entry", (r) => r.map((x) => x.getAttribute("data-id")))).toEqual(ids.filter((id) => id.toLowerCase().includes("gfx90a")));
    await page.fill("#search", "");
    await page.selectOption("#filter-processor", "gfx906");
    await expect.poll(() => page.$$eval("tr.entry", (r) => r.map((x) => x.getAttribute("data-id")))).toEqual(ids.filter((id) => /gfx906(:|$)/.test(id)));
    await page.selectOption("#filter-processor", "");
    await page.selectOption("#filter-kind", "host");
    await expect.poll(() => page.$$eval("tr.entry", (r) => r.map((x) => x.getAttribute("data-id")))).toEqual(ids.filter((id) => id.startsWith("host-")));
    await page.selectOption("#filter-kind", "");
    await page.selectOption("#sort", "size-desc");
    await page.waitForSelector(".matches");
    const bySize = await page.$$eval("section.file", (s) => s.map((x) => Array.from(x.querySelectorAll("tr.entry td.size")).map((c) => Number(c.textContent!.replace(/,/g, "")))));
    for (const sizesShown of bySize) expect(sizesShown).toEqual([...sizesShown].sort((a, b) => b - a));
    await page.selectOption("#sort", "file");
    await page.waitForSelector(".bundles");
    expect(pageErrors).toEqual([]);
  });

  it("exports: everything or the matches as a zip (offload-kit extract's names and bytes), the report as ls --json prints it", async () => {
    const work = join(dir, "export");
    mkdirSync(work, { recursive: true });
    const plain = join(work, "host-gfx906.19.bc");
    copyFileSync(join(FIXTURES, "bundler/host-gfx906.19.bc"), plain);
    const compressed = join(work, "big.ccob");
    writeFileSync(join(work, "a.bin"), pseudoCode(3_000_000, 1));
    writeFileSync(join(work, "b.bin"), pseudoCode(2_000_000, 2));
    writeFileSync(join(work, "h.bin"), "host\n");
    const bundled = spawnSync(BUNDLER, ["-type=bc", "-compress", "-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx90a,hip-amdgcn-amd-amdhsa--gfx942",
      "-input=h.bin", "-input=a.bin", "-input=b.bin", "-output=big.ccob"], { cwd: work, encoding: "utf8" });
    expect(bundled.status, bundled.stderr).toBe(0);
    await open([plain, compressed]);
    // The report, as ls --json prints it for the same names.
    const json = await download(() => page.click("#save-json"));
    expect(json.bytes.toString("utf8")).toBe(kit(["ls", "--json", "host-gfx906.19.bc", "big.ccob"], work).stdout);
    // Everything of the compressed file, as a zip: the entries offload-kit extract writes, byte for byte.
    const out = join(work, "extracted");
    const extracted = JSON.parse(kit(["extract", `--out-dir=${out}`, "--json", "big.ccob"], work).stdout).outputs as any[];
    const zip = await download(() => page.locator("section.file").nth(1).locator("button.zip").first().click());
    expect(zip.name).toBe("big.ccob-entries.zip");
    if (UNZIP !== undefined) {
      const zipPath = join(work, "all.zip");
      writeFileSync(zipPath, zip.bytes);
      const test = spawnSync("unzip", ["-t", zipPath], { encoding: "utf8" });
      expect(test.status, test.stdout + test.stderr).toBe(0);
      spawnSync("unzip", ["-q", zipPath, "-d", join(work, "unzipped")]);
      expect(readdirSync(join(work, "unzipped")).sort()).toEqual(extracted.map((o) => basename(o.path)).sort());
      for (const o of extracted) expect(Buffer.compare(readFileSync(join(work, "unzipped", basename(o.path))), readFileSync(o.path)), o.path).toBe(0);
    }
    // Kept, not decoded again: the worker's last download decoded nothing.
    expect(JSON.parse((await page.getAttribute("body", "data-last-extract"))!).decoded).toBe(0);
    // The matches only.
    await page.fill("#search", "gfx942");
    const button = page.locator("section.file").nth(1).locator("button.zip", { hasText: "matching" });
    await expect.poll(() => button.textContent()).toBe("Download 1 matching as zip");
    const matching = await download(() => button.click());
    if (UNZIP !== undefined) {
      const zipPath = join(work, "matching.zip");
      writeFileSync(zipPath, matching.bytes);
      const listing = spawnSync("unzip", ["-Z1", zipPath], { encoding: "utf8" });
      expect(listing.stdout.trim().split("\n")).toEqual(["big.ccob-0-hip-amdgcn-amd-amdhsa--gfx942"]);
    }
    expect(pageErrors).toEqual([]);
  }, HANG_MS);

  it("reads a compressed bundle once and decodes it once, showing the decoding", async () => {
    const work = join(dir, "export");
    const compressed = join(work, "big.ccob");
    await page.goto(served.url);
    await page.evaluate(() => {
      const seen: string[] = ((window as unknown as { statusTexts: string[] }).statusTexts = []);
      new MutationObserver(() => {
        const text = document.querySelector(".status")?.textContent;
        if (text) seen.push(text);
      }).observe(document.getElementById("files")!, { subtree: true, childList: true, characterData: true });
    });
    await page.setInputFiles("#file-input", compressed);
    await page.waitForFunction(() => document.body.dataset.runs === "1", undefined, { timeout: HANG_MS });
    const texts = await page.evaluate(() => (window as unknown as { statusTexts: string[] }).statusTexts);
    expect(texts.some((t) => /^Decoding the compressed bundle at 0x0: 5\.0 MB of 5\.0 MB/.test(t)), texts.join("\n")).toBe(true);
    const bytesRead = Number(await page.getAttribute("section.file", "data-bytes-read"));
    expect(bytesRead).toBeGreaterThan(0);
    expect(bytesRead).toBeLessThanOrEqual(readFileSync(compressed).length);
    await page.click("details.bundle summary");
    const one = await download(() => page.locator('tr.entry[data-entry="2"] button.download').click());
    expect(one.bytes.length).toBe(2_000_000);
    expect(Buffer.compare(one.bytes, Buffer.from(pseudoCode(2_000_000, 2)))).toBe(0);
    const cost = JSON.parse((await page.getAttribute("body", "data-last-extract"))!);
    expect(cost.decoded).toBe(0);
    expect(cost.bytesRead).toBeLessThanOrEqual(readFileSync(compressed).length);
  }, HANG_MS);

  it("fits 360 px and dark mode: no sideways scrolling, IDs break at their fields, screenshots match the references", async () => {
    const files = ["bundler/host-gfx906.19.bc", "ccob/multi.22.ccob"].map((f) => join(FIXTURES, f));
    mkdirSync(SHOTS, { recursive: true });
    for (const [name, width, dark] of [["narrow-360-light", 360, false], ["wide-1280-dark", 1280, true], ["narrow-360-dark", 360, true]] as const) {
      await open(files, { width, dark });
      await page.fill("#gpu", "gfx906");
      await page.waitForFunction(() => (document.getElementById("gpu-summary")?.textContent ?? "").endsWith("gfx906"));
      await page.locator("section.file").nth(1).locator("details.bundle summary").first().click();
      await page.waitForSelector("section.file >> nth=1 >> tr.entry");
      const widths = await page.evaluate(() => [document.documentElement.clientWidth, document.documentElement.scrollWidth]);
      expect(widths[1], name).toBeLessThanOrEqual(widths[0]!);
      const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      expect(background, name).toBe(dark ? "rgb(18, 22, 29)" : "rgb(251, 252, 254)");
      await page.locator("section.file").nth(1).scrollIntoViewIfNeeded();
      const shot = await page.screenshot({ mask: [page.locator(".status")], animations: "disabled" });
      const reference = join(SHOTS, `${name}.png`);
      if (process.env.OFFLOAD_KIT_UPDATE_SCREENSHOTS === "1") writeFileSync(reference, shot);
      expect(existsSync(reference), `${reference} (OFFLOAD_KIT_UPDATE_SCREENSHOTS=1 writes it)`).toBe(true);
      const share = differingShare(decodePng(shot), decodePng(readFileSync(reference)));
      if (share > SCREENSHOT_TOLERANCE) writeFileSync(join(dir, `${name}.actual.png`), shot);
      expect(share, `${name}: ${(share * 100).toFixed(2)}% of pixels differ (actual kept in ${dir})`).toBeLessThanOrEqual(SCREENSHOT_TOLERANCE);
    }
    // At 360 px an entry ID wraps at its fields: a <wbr> after each '-' and ':'.
    const id = await page.locator("section.file >> nth=1 >> tr.entry td.id").first().innerHTML();
    expect(id).toContain("-<wbr>");
    expect(pageErrors).toEqual([]);
  }, HANG_MS);

  it("is accessible: axe-core finds nothing serious, the drop zone opens the chooser from the keyboard, focus shows, names and live status", async () => {
    const files = ["bundler/host-gfx906.19.bc", "ccob/multi.22.ccob", "offload-binary/multi.19.bin"].map((f) => join(FIXTURES, f));
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.emulateMedia({ colorScheme: "light" });
    await page.goto(served.url);
    // Keyboard: Tab reaches the drop zone first, Enter and Space open the file chooser.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("drop");
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).not.toBe("none");
    const [chooser] = await Promise.all([page.waitForEvent("filechooser", { timeout: HANG_MS }), page.press("#drop", "Enter")]);
    expect(chooser.isMultiple()).toBe(true);
    // Space too, on a fresh page (one chooser per page load is what headless Chromium shows).
    await page.reload();
    await page.focus("#drop");
    const [again] = await Promise.all([page.waitForEvent("filechooser", { timeout: HANG_MS }), page.press("#drop", " ")]);
    await again.setFiles(files);
    await page.waitForFunction(() => document.body.dataset.runs === "1", undefined, { timeout: HANG_MS });
    expect(await page.textContent("#live")).toMatch(/^multi\.19\.bin: /);
    for (const button of await page.locator("button.expand-all").all()) await button.click();
    await page.waitForFunction(() => document.querySelectorAll("section.file[data-expanded]").length === 3);
    // Every download button says which entry it saves.
    const names = await page.$$eval("button.download", (b) => b.map((x) => x.getAttribute("aria-label") ?? ""));
    expect(names.length).toBeGreaterThan(3);
    for (const name of names) expect(name).toMatch(/^Download \S+ \((bundle \d+ entry \d+|offload image \d+) of [\w.-]+\)$/);
    expect(new Set(names).size).toBe(names.length);
    // Focus is visible on whatever Tab reaches.
    const unseen: string[] = [];
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press("Tab");
      const focus = await page.evaluate(() => {
        const a = document.activeElement as HTMLElement | null;
        if (a === null || a === document.body) return undefined;
        const style = getComputedStyle(a);
        return { what: `${a.tagName.toLowerCase()}#${a.id}.${a.className}`, visible: style.outlineStyle !== "none" && style.outlineWidth !== "0px" };
      });
      if (focus !== undefined && !focus.visible) unseen.push(focus.what);
    }
    expect(unseen).toEqual([]);
    // axe-core, light and dark.
    const axe = readFileSync(join(ROOT, "node_modules/axe-core/axe.min.js"), "utf8");
    for (const dark of [false, true]) {
      await page.emulateMedia({ colorScheme: dark ? "dark" : "light" });
      await page.fill("#gpu", "gfx906");
      await page.evaluate(axe);
      const violations = await page.evaluate(async () => {
        const result = await (window as unknown as { axe: { run(o: unknown): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe.run({ resultTypes: ["violations"] });
        return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
      });
      expect(violations.filter((v) => v.impact === "serious" || v.impact === "critical"), dark ? "dark" : "light").toEqual([]);
    }
    expect(pageErrors).toEqual([]);
  }, HANG_MS);

  it.skipIf(!existsSync(LIBROCSPARSE))("summarises librocsparse0: 1,294,631,272 device bytes, 98.8% of the file, 111 bundles collapsed", async () => {
    await open([LIBROCSPARSE]);
    const sizes = JSON.parse(kit(["sizes", "--json", LIBROCSPARSE]).stdout).files[0];
    const device = sizes.bytes - (sizes.processors.find((p: any) => p.id === "host")?.bytes ?? 0);
    expect(await page.textContent(".stat.device .stat-detail")).toBe(`${device.toLocaleString("en-US")} bytes, ${(device / sizes.size * 100).toFixed(1)}% of the 1.3 GB file`);
    expect(await page.locator("details.bundle").count()).toBe(100);
    expect(await page.textContent("button.more")).toBe("Show 11 more bundles (11 not shown)");
    expect(await page.locator("tr.entry").count()).toBe(0);
    expect(await page.$$eval("table.processors tr[data-processor]", (r) => r.map((x) => x.getAttribute("data-processor")))).toEqual(sizes.processors.map((p: any) => p.id));
    console.log(`librocsparse0: longest main-thread task ${Math.round(await longest())} ms`);
    expect(pageErrors).toEqual([]);
  }, HANG_MS);
});
