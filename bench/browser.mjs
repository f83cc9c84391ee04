// The inspector page and BlobSource in headless Chromium (Debian's, driven by playwright-core):
//   1. over fresh pages, a large library (default: the installed librocsparse0, 1.3 GB, 111 bundles;
//      OFFLOAD_KIT_BENCH_FILE=... for another): time until the summary's totals are painted (first paint
//      of totals), until the page is fully interactive (every row built, the bundle list drawn), the
//      longest main-thread task (PerformanceObserver 'longtask'), the page's JS heap
//      (performance.memory, --enable-precise-memory-info) and the renderer process's peak RSS (VmHWM:
//      page, worker, Wasm memory and file buffers together); then, once, "Download all as zip" of it
//      (streamed: parts are slices of the file) with the heap and renderer peak it took;
//   1b. a ~15 MB compressed bundle made from the library's bytes: listed by the page against
//      `offload-kit ls` (median of 3 each), and the bytes the worker read for it;
//   1c. a generated 100,000-entry bundle (100,000 distinct IDs, as test/browser/inspector.test.ts makes it):
//      over fresh pages, loaded, its bundle opened and scrolled to the last row: every main-thread task
//      over 50 ms (PerformanceObserver 'longtask'), in how many messages the result came and the most
//      items one carried, the row-building steps; then a search over the 100,000 rows, its longest task.
//      OFFLOAD_KIT_BENCH_ONLY=many runs only this part (no library needed);
//   1d. a Debian package (default: librocrand1's .deb from /var/cache/apt/archives, or
//      OFFLOAD_KIT_BENCH_DEB=...): dropped on the page (walked in the worker: ar, xz- or zstd-compressed
//      data.tar, each member inspected) against `offload-kit sizes` of it (median of 3 each), and the
//      members the page shows; an entry of its member downloaded twice (the package walked again to the
//      member, then the member kept). OFFLOAD_KIT_BENCH_ONLY=deb runs only this part;
//   2. what one read of a Blob slice costs in a Worker: FileReaderSync (what BlobSource.read uses) against
//      slice().arrayBuffer(), for 4 KiB, 64 KiB and 1 MiB at random offsets of the same file.
// Run: npm run build && node bench/browser.mjs   (saves bench/results/browser.json)
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";
import { ours, saveResults } from "./common.mjs";

const FILE = process.env.OFFLOAD_KIT_BENCH_FILE ?? "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1";
const RUNS = Number(process.env.OFFLOAD_KIT_BENCH_RUNS ?? 7);
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--enable-precise-memory-info"];

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ONLY_MANY = process.env.OFFLOAD_KIT_BENCH_ONLY === "many";
const ONLY_DEB = process.env.OFFLOAD_KIT_BENCH_ONLY === "deb";

/** The .deb of part 1d, or undefined when there is none. */
function debFile() {
  if (process.env.OFFLOAD_KIT_BENCH_DEB !== undefined) return process.env.OFFLOAD_KIT_BENCH_DEB;
  const dir = "/var/cache/apt/archives";
  const found = existsSync(dir) ? readdirSync(dir).filter((f) => /^librocrand1_.*\.deb$/.test(f)).sort() : [];
  return found.length > 0 ? join(dir, found.at(-1)) : undefined;
}

/** 1d: a .deb in the page against `offload-kit sizes` (see the top). */
async function debTiming(server) {
  const file = debFile();
  if (file === undefined || !existsSync(file)) {
    console.log("1d skipped: no librocrand1 .deb in /var/cache/apt/archives (apt-get download librocrand1, or OFFLOAD_KIT_BENCH_DEB=...)");
    return undefined;
  }
  const cli = [];
  for (let i = 0; i < 3; i++) {
    const t = Date.now();
    const run = spawnSync(ours("offload-kit"), ["sizes", file], { stdio: "ignore" });
    if (run.status !== 0) throw new Error(`offload-kit sizes ${file} exited with ${run.status}`);
    cli.push(Date.now() - t);
  }
  const page = [];
  let shown;
  for (let i = 0; i < 3; i++) {
    const profile = mkdtempSync(join(tmpdir(), "offload-kit-bench-chromium-"));
    const context = await chromium.launchPersistentContext(profile, { executablePath: "/usr/bin/chromium", headless: true, args: ARGS });
    try {
      const p = await context.newPage();
      await p.goto(server.url);
      await p.waitForFunction(() => document.body.dataset.started === "1");
      await p.setInputFiles("#file-input", file);
      await p.waitForFunction(() => document.body.dataset.runs === "1", undefined, { timeout: 300_000 });
      page.push(Number(await p.evaluate(() => document.body.dataset.lastRunMs)));
      shown = await p.evaluate(() => {
        const pkg = document.querySelector("section.file.package");
        return {
          members: Number(pkg?.dataset.members ?? 0),
          withDeviceCode: Array.from(document.querySelectorAll("section.file.member")).map((s) => s.dataset.name),
          bytesRead: Number(pkg?.dataset.bytesRead ?? 0),
        };
      });
      // One entry of the first member with device code downloaded twice: the first walks the package again
      // to the member, the second reads the member the worker kept.
      const member = p.locator("section.file.member").first();
      if (i === 2 && (await member.count()) > 0) {
        await member.locator("details.bundle summary").first().click();
        const row = member.locator("tr.entry").nth(1);
        await row.waitFor();
        const times = [];
        for (let k = 0; k < 2; k++) {
          const t = Date.now();
          await Promise.all([p.waitForEvent("download", { timeout: 300_000 }), row.locator("button.download").click()]);
          times.push(Date.now() - t);
        }
        shown.memberDownloadMs = { first: times[0], again: times[1] };
      }
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
  }
  const deb = { file, size: statSync(file).size, cliMs: median(cli), pageMs: median(page), cliRuns: cli, pageRuns: page, ...shown };
  console.log(`${file} (${deb.size} bytes): page ${deb.pageMs} ms, offload-kit sizes ${deb.cliMs} ms (${(deb.pageMs / deb.cliMs).toFixed(2)}x); ${deb.withDeviceCode.length} of ${deb.members} members with device code${deb.memberDownloadMs !== undefined ? `; an entry of it downloaded in ${deb.memberDownloadMs.first} ms, again in ${deb.memberDownloadMs.again} ms` : ""}`);
  return deb;
}

/** 1c: a 100,000-entry bundle, over fresh pages (see the top). */
async function manyEntries(server) {
  const { writeBinaryBundle } = await import(new URL("../dist/index.js", import.meta.url).href);
  const dir = mkdtempSync(join(tmpdir(), "offload-kit-bench-many-"));
  const file = join(dir, "many.hipfb");
  const processors = ["gfx900", "gfx906", "gfx908", "gfx90a:xnack-", "gfx90a:xnack+", "gfx942", "gfx1030", "gfx1100"];
  writeFileSync(file, writeBinaryBundle(Array.from({ length: 100_000 }, (_, i) => ({
    id: i === 0 ? "host-x86_64-unknown-linux-gnu" : `hipv4-amdgcn-amd-amdhsa-e${i}-${processors[i % processors.length]}`,
    data: new Uint8Array(16 + (i % 97)).fill(i & 0xff),
  }))));
  const out = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      const profile = mkdtempSync(join(tmpdir(), "offload-kit-bench-chromium-"));
      const context = await chromium.launchPersistentContext(profile, { executablePath: "/usr/bin/chromium", headless: true, args: ARGS, acceptDownloads: true });
      try {
        const page = await context.newPage();
        await watchPage(page);
        await page.goto(server.url);
        await page.waitForFunction(() => document.body.dataset.started === "1");
        // Tasks before the file is chosen are the page starting (its module evaluated), not the file's.
        const chosenAt = await page.evaluate(() => performance.now());
        await page.setInputFiles("#file-input", file);
        await page.waitForFunction(() => document.body.dataset.runs === "1", undefined, { timeout: 300_000 });
        const loaded = await page.evaluate((at) => ({ tasks: [...window.longTasks], startup: window.longTasks.filter((_, k) => window.longTaskStarts[k] + window.longTasks[k] <= at), interactiveMs: Number(document.body.dataset.lastRunMs), delivery: JSON.parse(document.querySelector("section.file").dataset.delivery) }), chosenAt);
        await page.click("details.bundle summary");
        await page.waitForSelector("tr.entry");
        for (let k = 0; k < 3; k++) {
          await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
          await page.waitForTimeout(300);
        }
        await page.waitForSelector('tr.entry[data-entry="99999"]', { timeout: 300_000 });
        const opened = await page.evaluate(() => [...window.longTasks]);
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.fill("#search", "-e99999-");
        await page.waitForFunction(() => document.querySelector(".match-count")?.textContent === "1 of 100,000 entries match", undefined, { timeout: 300_000 });
        await page.waitForTimeout(300);
        const searched = await page.evaluate(() => [...window.longTasks]);
        await page.fill("#search", "gfx942");
        await page.selectOption("#sort", "size-desc");
        await page.waitForFunction(() => document.querySelector(".match-count")?.textContent === "12,500 of 100,000 entries match", undefined, { timeout: 300_000 });
        await page.waitForTimeout(300);
        const sorted = await page.evaluate(() => [...window.longTasks]);
        // The report as ls --json prints it (a Blob download: no dialog here).
        await Promise.all([page.waitForEvent("download", { timeout: 300_000 }), page.click("#save-json")]);
        await page.waitForTimeout(300);
        const saved = await page.evaluate(() => [...window.longTasks]);
        // A GPU typed: every row's verdict, as check judges the file.
        await page.fill("#search", "");
        await page.selectOption("#sort", "file");
        await page.waitForTimeout(300);
        const cleared = await page.evaluate(() => [...window.longTasks]);
        await page.fill("#gpu", "gfx90a");
        await page.waitForFunction(() => (document.getElementById("gpu-summary")?.textContent ?? "").includes("gfx90a"), undefined, { timeout: 300_000 });
        await page.waitForTimeout(300);
        const judged = await page.evaluate(() => [...window.longTasks]);
        const longest = (tasks) => Math.max(0, ...tasks);
        const r = {
          interactiveMs: loaded.interactiveMs, delivery: loaded.delivery,
          startupLongestMs: longest(loaded.startup),
          loadLongestMs: longest(loaded.tasks.slice(loaded.startup.length)), loadLongTasks: loaded.tasks.length - loaded.startup.length,
          openLongestMs: longest(opened.slice(loaded.tasks.length)), openLongTasks: opened.length - loaded.tasks.length,
          searchLongestMs: longest(searched.slice(opened.length)),
          sortLongestMs: longest(sorted.slice(searched.length)),
          saveLongestMs: longest(saved.slice(sorted.length)),
          gpuLongestMs: longest(judged.slice(cleared.length)),
        };
        out.push(r);
        console.log(`100,000 entries, run ${i + 1}: interactive at ${r.interactiveMs} ms; result in ${r.delivery.messages} messages (at most ${r.delivery.largestPart} items), rows in ${r.delivery.rowSteps} steps (at most ${r.delivery.largestRowStep}); the page starting (no file yet): longest ${r.startupLongestMs.toFixed(0)} ms; loading the file: ${r.loadLongTasks} tasks over 50 ms, longest ${r.loadLongestMs.toFixed(0)} ms; opening and scrolling: ${r.openLongTasks} over 50 ms, longest ${r.openLongestMs.toFixed(0)} ms; search: longest ${r.searchLongestMs.toFixed(0)} ms; search and sort by size: longest ${r.sortLongestMs.toFixed(0)} ms; save the report: longest ${r.saveLongestMs.toFixed(0)} ms; a GPU typed: longest ${r.gpuLongestMs.toFixed(0)} ms`);
      } finally {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    runs: out.length,
    medianInteractiveMs: median(out.map((r) => r.interactiveMs)),
    messages: out[0].delivery.messages,
    largestPart: out[0].delivery.largestPart,
    startupLongestMs: { median: median(out.map((r) => r.startupLongestMs)), max: Math.max(...out.map((r) => r.startupLongestMs)) },
    loadLongestMs: { median: median(out.map((r) => r.loadLongestMs)), max: Math.max(...out.map((r) => r.loadLongestMs)) },
    loadLongTasks: out.map((r) => r.loadLongTasks),
    openLongestMs: { median: median(out.map((r) => r.openLongestMs)), max: Math.max(...out.map((r) => r.openLongestMs)) },
    searchLongestMs: { median: median(out.map((r) => r.searchLongestMs)), max: Math.max(...out.map((r) => r.searchLongestMs)) },
    sortLongestMs: { median: median(out.map((r) => r.sortLongestMs)), max: Math.max(...out.map((r) => r.sortLongestMs)) },
    saveLongestMs: { median: median(out.map((r) => r.saveLongestMs)), max: Math.max(...out.map((r) => r.saveLongestMs)) },
    gpuLongestMs: { median: median(out.map((r) => r.gpuLongestMs)), max: Math.max(...out.map((r) => r.gpuLongestMs)) },
    perRun: out,
  };
}

/** One part of the benchmark on its own (OFFLOAD_KIT_BENCH_ONLY): a server, the part, its results saved. */
async function runOnly(part, name, print) {
  if (!existsSync("/usr/bin/chromium")) {
    console.log("skipped: needs /usr/bin/chromium");
    process.exit(0);
  }
  const server = await serve();
  try {
    const result = await part(server);
    if (result !== undefined) {
      if (print) console.log(JSON.stringify({ ...result, perRun: undefined }, null, 2));
      saveResults(name, result);
    }
  } finally {
    server.stop();
  }
  process.exit(0);
}

if (ONLY_DEB) await runOnly(debTiming, "browser-deb", false);
if (ONLY_MANY) await runOnly(manyEntries, "browser-many", true);

if (!existsSync(FILE) || !existsSync("/usr/bin/chromium")) {
  console.log(`skipped: needs ${FILE} and /usr/bin/chromium`);
  process.exit(0);
}


/** Peak RSS (MiB) of the renderer processes of the browser whose profile is `profile` (each carries the flag). */
function rendererPeakMiB(profile) {
  let peak = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      // Chromium rewrites its children's command lines into one space-separated title.
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "latin1").replace(/\0/g, " ");
      if (!cmdline.includes("--type=renderer") || !cmdline.includes(`--user-data-dir=${profile} `)) continue;
      const hwm = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "latin1"))?.[1] ?? 0);
      peak = Math.max(peak, hwm / 1024);
    } catch {
      // Gone meanwhile.
    }
  }
  return peak;
}

async function serve() {
  const child = spawn(ours("offload-kit"), ["serve", "--port=0"], { stdio: ["ignore", "pipe", "ignore"] });
  const url = await new Promise((resolve) => createInterface({ input: child.stdout }).once("line", resolve));
  return { url, stop: () => child.kill("SIGTERM") };
}

const server = await serve();
// What the renderer takes with the page loaded and no file: Chromium's own baseline.
let baselineMiB;
{
  const profile = mkdtempSync(join(tmpdir(), "offload-kit-bench-chromium-"));
  const context = await chromium.launchPersistentContext(profile, { executablePath: "/usr/bin/chromium", headless: true, args: ARGS });
  const page = await context.newPage();
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.started === "1");
  baselineMiB = rendererPeakMiB(profile);
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(`renderer peak with the page and no file: ${baselineMiB.toFixed(0)} MiB`);
/** Long main-thread tasks, recorded from page start; no save dialog (downloads go through a Blob). */
function watchPage(page) {
  return page.addInitScript(() => {
    window.longTasks = [];
    window.longTaskStarts = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) (window.longTasks.push(entry.duration), window.longTaskStarts.push(entry.startTime));
    }).observe({ type: "longtask", buffered: true });
    delete window.showSaveFilePicker;
  });
}

const runs = [];
let zip;
for (let i = 0; i < RUNS; i++) {
  const profile = mkdtempSync(join(tmpdir(), "offload-kit-bench-chromium-"));
  const context = await chromium.launchPersistentContext(profile, { executablePath: "/usr/bin/chromium", headless: true, args: ARGS, acceptDownloads: true });
  try {
    const page = await context.newPage();
    await watchPage(page);
    await page.goto(server.url);
    await page.setInputFiles("#file-input", FILE);
    await page.waitForFunction(() => document.body.dataset.runs === "1", undefined, { timeout: 120_000 });
    // Both by the page's clock, from the file's change event: the totals painted, then everything.
    const shown = await page.evaluate(() => ({
      summaryMs: Number(document.body.dataset.summaryMs),
      interactiveMs: Number(document.body.dataset.lastRunMs),
      longestTaskMs: Math.max(0, ...window.longTasks),
      longTasks: window.longTasks.length,
      bundles: document.querySelectorAll("details.bundle").length + Number(/\((\d+) not shown\)/.exec(document.querySelector("button.more")?.textContent ?? "")?.[1] ?? 0),
      status: document.querySelector(".status")?.textContent ?? "",
      heapMiB: performance.memory.usedJSHeapSize / 2 ** 20,
      heapTotalMiB: performance.memory.totalJSHeapSize / 2 ** 20,
    }));
    runs.push({ ...shown, rendererPeakMiB: rendererPeakMiB(profile) });
    const r = runs.at(-1);
    console.log(`run ${i + 1}: totals painted at ${r.summaryMs.toFixed(0)} ms, interactive at ${r.interactiveMs} ms, longest task ${r.longestTaskMs.toFixed(0)} ms (${r.longTasks} over 50 ms); ${r.bundles} bundles; page heap ${r.heapMiB.toFixed(1)} MiB; renderer peak ${r.rendererPeakMiB.toFixed(0)} MiB; ${r.status}`);
    if (i === 0 && process.env.OFFLOAD_KIT_BENCH_ZIP !== "0") {
      // Everything as one zip: the Blob assembled from slices of the file (no copy), CRCs read as streams.
      const started = Date.now();
      const [download] = await Promise.all([page.waitForEvent("download", { timeout: 600_000 }), page.click("button.zip")]);
      const path = await download.path();
      const heapMiB = await page.evaluate(() => performance.memory.usedJSHeapSize / 2 ** 20);
      zip = { ms: Date.now() - started, bytes: statSync(path).size, heapMiB, rendererPeakMiB: rendererPeakMiB(profile), longestTaskMs: await page.evaluate(() => Math.max(0, ...window.longTasks)) };
      console.log(`zip of everything: ${zip.bytes} bytes in ${zip.ms} ms; page heap after ${zip.heapMiB.toFixed(1)} MiB; renderer peak ${zip.rendererPeakMiB.toFixed(0)} MiB; longest task ${zip.longestTaskMs.toFixed(0)} ms`);
      rmSync(path, { force: true });
    }
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

// 1b. A compressed bundle of ~15 MB (12 entries of 8 MiB), made by our bundler from slices of the library's code objects.
let compressed;
{
  const dir = mkdtempSync(join(tmpdir(), "offload-kit-bench-ccob-"));
  try {
    const inputs = [];
    const targets = [];
    const fd = openSync(FILE, "r");
    const processors = ["900", "906", "908", "90a", "942", "950", "1030", "1100", "1101", "1102", "1200", "1201"];
    for (let i = 0; i < processors.length; i++) {
      const bytes = Buffer.alloc(8 * 1024 * 1024);
      readSync(fd, bytes, 0, bytes.length, 64 * 1024 * 1024 + i * 100 * 1024 * 1024);
      writeFileSync(join(dir, `e${i}`), bytes);
      inputs.push(`-input=e${i}`);
      targets.push(`hipv4-amdgcn-amd-amdhsa--gfx${processors[i]}`);
    }
    closeSync(fd);
    const made = spawnSync(ours("offload-bundler"), ["-type=bc", "-compress", `-targets=${targets.join(",")}`, ...inputs, "-output=big.ccob"], { cwd: dir });
    if (made.status !== 0) throw new Error(`offload-bundler -compress failed: ${made.stderr}`);
    const file = join(dir, "big.ccob");
    const cli = [];
    for (let i = 0; i < 3; i++) {
      const t = Date.now();
      spawnSync(ours("offload-kit"), ["ls", file], { stdio: "ignore" });
      cli.push(Date.now() - t);
    }
    const page = [];
    let bytesRead = 0;
    for (let i = 0; i < 3; i++) {
      const profile = mkdtempSync(join(tmpdir(), "offload-kit-bench-chromium-"));
      const context = await chromium.launchPersistentContext(profile, { executablePath: "/usr/bin/chromium", headless: true, args: ARGS });
      try {
        const p = await context.newPage();
        await p.goto(server.url);
        await p.setInputFiles("#file-input", file);
        await p.waitForFunction(() => document.body.dataset.runs === "1", undefined, { timeout: 120_000 });
        page.push(Number(await p.evaluate(() => document.body.dataset.lastRunMs)));
        bytesRead = Number(await p.getAttribute("section.file", "data-bytes-read"));
      } finally {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      }
    }
    compressed = { size: statSync(file).size, cliMs: median(cli), pageMs: median(page), bytesRead };
    console.log(`compressed bundle of ${compressed.size} bytes: page ${compressed.pageMs} ms, offload-kit ls ${compressed.cliMs} ms (${(compressed.pageMs / compressed.cliMs).toFixed(2)}x); worker read ${bytesRead} bytes (${(bytesRead / compressed.size).toFixed(3)}x the file)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// 1c. A 100,000-entry bundle.
const many = await manyEntries(server);

// 1d. A Debian package.
const deb = await debTiming(server);

// 2. One read of a Blob slice in a worker.
const profile = mkdtempSync(join(tmpdir(), "offload-kit-bench-chromium-"));
const context = await chromium.launchPersistentContext(profile, { executablePath: "/usr/bin/chromium", headless: true, args: ARGS });
const page = await context.newPage();
// A page of its own: the inspector's Content-Security-Policy refuses the blob: worker below.
await page.setContent('<input type="file" id="bench-input">');
await page.setInputFiles("#bench-input", FILE);
const reads = await page.evaluate(async () => {
  const file = document.getElementById("bench-input").files[0];
  const source = `onmessage = async (e) => {
    const file = e.data; const out = {}; const reader = new FileReaderSync();
    for (const size of [4096, 65536, 1048576]) {
      const positions = Array.from({ length: 200 }, (_, i) => Math.floor(((i * 7919) % 200) / 200 * (file.size - size)));
      let t = performance.now();
      for (const p of positions) reader.readAsArrayBuffer(file.slice(p, p + size));
      const sync = (performance.now() - t) / positions.length;
      t = performance.now();
      for (const p of positions) await file.slice(p, p + size).arrayBuffer();
      const async = (performance.now() - t) / positions.length;
      out[size] = { syncMs: sync, asyncMs: async };
    }
    postMessage(out);
  }`;
  const worker = new Worker(URL.createObjectURL(new Blob([source])));
  worker.postMessage(file);
  return new Promise((resolve) => (worker.onmessage = (e) => resolve(e.data)));
}).catch((e) => ({ error: e.message }));
await context.close();
rmSync(profile, { recursive: true, force: true });
server.stop();

const summary = {
  file: FILE,
  size: statSync(FILE).size,
  runs: runs.length,
  medianSummaryMs: median(runs.map((r) => r.summaryMs)),
  medianInteractiveMs: median(runs.map((r) => r.interactiveMs)),
  longestTaskMs: { median: median(runs.map((r) => r.longestTaskMs)), max: Math.max(...runs.map((r) => r.longestTaskMs)) },
  maxPageHeapMiB: Math.max(...runs.map((r) => r.heapMiB)),
  maxRendererPeakMiB: Math.max(...runs.map((r) => r.rendererPeakMiB)),
  rendererBaselineMiB: baselineMiB,
  bundles: runs[0].bundles,
  zip,
  compressed,
  many: { ...many, perRun: undefined },
  deb,
  reads,
};
console.log(JSON.stringify(summary, null, 2));
saveResults("browser", { summary, runs });
