// The inspector page and BlobSource in headless Chromium (Debian's, driven by playwright-core):
//   1. time until the page shows every entry of a large library (default: the installed librocsparse0,
//      1.3 GB, 111 bundles; OFFLOAD_KIT_BENCH_FILE=... for another), over fresh pages, with the page's JS
//      heap (performance.memory, --enable-precise-memory-info) and the renderer process's peak RSS
//      (VmHWM: page, worker, Wasm memory and file buffers together);
//   2. what one read of a Blob slice costs in a Worker: FileReaderSync (what BlobSource.read uses) against
//      slice().arrayBuffer(), for 4 KiB, 64 KiB and 1 MiB at random offsets of the same file.
// Run: npm run build && node bench/browser.mjs   (saves bench/results/browser.json)
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";
import { ours, saveResults } from "./common.mjs";

const FILE = process.env.OFFLOAD_KIT_BENCH_FILE ?? "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1";
const RUNS = Number(process.env.OFFLOAD_KIT_BENCH_RUNS ?? 7);
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--enable-precise-memory-info"];

if (!existsSync(FILE) || !existsSync("/usr/bin/chromium")) {
  console.log(`skipped: needs ${FILE} and /usr/bin/chromium`);
  process.exit(0);
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

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
const runs = [];
for (let i = 0; i < RUNS; i++) {
  const profile = mkdtempSync(join(tmpdir(), "offload-kit-bench-chromium-"));
  const context = await chromium.launchPersistentContext(profile, { executablePath: "/usr/bin/chromium", headless: true, args: ARGS });
  try {
    const page = await context.newPage();
    await page.goto(server.url);
    const started = Date.now();
    await page.setInputFiles("#file-input", FILE);
    await page.waitForFunction(() => document.body.dataset.runs === "1", undefined, { timeout: 60_000 });
    const wall = Date.now() - started;
    const shown = await page.evaluate(() => ({
      entries: document.querySelectorAll("tr.entry").length,
      bundles: document.querySelectorAll(".bundle-head[data-bundle]").length,
      pageMs: Number(document.body.dataset.lastRunMs),
      status: document.querySelector(".status")?.textContent ?? "",
      heapMiB: performance.memory.usedJSHeapSize / 2 ** 20,
      heapTotalMiB: performance.memory.totalJSHeapSize / 2 ** 20,
    }));
    runs.push({ wall, ...shown, rendererPeakMiB: rendererPeakMiB(profile) });
    console.log(`run ${i + 1}: ${wall} ms to show ${shown.entries} entries of ${shown.bundles} bundles; page heap ${shown.heapMiB.toFixed(1)} MiB; renderer peak ${runs.at(-1).rendererPeakMiB.toFixed(0)} MiB; ${shown.status}`);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

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
  medianWallMs: median(runs.map((r) => r.wall)),
  medianPageMs: median(runs.map((r) => r.pageMs)),
  maxPageHeapMiB: Math.max(...runs.map((r) => r.heapMiB)),
  maxRendererPeakMiB: Math.max(...runs.map((r) => r.rendererPeakMiB)),
  rendererBaselineMiB: baselineMiB,
  entries: runs[0].entries,
  bundles: runs[0].bundles,
  reads,
};
console.log(JSON.stringify(summary, null, 2));
saveResults("browser", { summary, runs });
