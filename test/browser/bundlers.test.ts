// The library as a web developer bundles it: one tiny app importing "offload-kit" (and its /bundle and
// /browser subpaths) is built by esbuild (IIFE and ESM), Vite and webpack, with no file copied by hand,
// served from a folder holding only the bundler's output, and run in Chromium. Each build must load
// (the IIFE used to crash on `new URL(..., import.meta.url)`), compile the Wasm core on the main thread
// and through initEngine(), reject a libzstd that cannot load with CODEC_UNAVAILABLE and then
// decompress with the inlined one (it used to hang), run the inlined Worker on a File, and reject (not
// hang) when a worker script cannot load.
import { createServer } from "node:http";
import type { Server } from "node:http";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, launchChromium } from "./chromium.js";
import type { Launched } from "./chromium.js";
import { HANG_MS } from "../limits.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const CCOB = join(ROOT, "test/fixtures/ccob/host-gfx906.19.ccob");

const APP = `
import { decompressBundle, engineKind, initEngine, listBundleIds, loadBrowserCodecs } from "offload-kit";
import { isBinaryBundle } from "offload-kit/bundle";
import { OffloadKitWorker } from "offload-kit/browser";

window.offloadKitApp = async (ccob) => {
  const out = { engineAtStart: engineKind() };
  try {
    await loadBrowserCodecs({ zstd: new URL("missing-zstd.wasm", location.href) });
    out.missing = "loaded";
  } catch (e) {
    out.missing = e.name + " " + e.code + ": " + e.message;
  }
  const bundle = await decompressBundle(new Uint8Array(ccob));
  out.isBundle = isBinaryBundle(bundle);
  out.ids = listBundleIds(bundle, "o");
  out.engine = (await initEngine()).kind;
  const worker = new OffloadKitWorker();
  const file = new File([new Uint8Array(ccob)], "app.ccob");
  const progress = [];
  const result = await worker.inspect(file, { onProgress: (p) => progress.push(p) });
  out.worker = { path: result.report.path, engine: result.engine, ids: result.report.bundles.flatMap((b) => b.entries.map((e) => e.id)), problems: result.report.problems.length, progress: progress.length > 0 && progress.every((p) => p.offset > 0 && p.offset <= file.size) };
  worker.terminate();
  /*OWN_WORKER*/
  const broken = new OffloadKitWorker({ url: new URL("missing-worker.js", location.href) });
  out.brokenWorker = await broken.inspect(file).then(() => "answered", (e) => e.code);
  return out;
};
document.body.dataset.ready = "1";
`;

/** Bundlers that understand \`new Worker(new URL(..., import.meta.url))\` also build a worker of the app's own. */
const OWN_WORKER = `
  const own = new OffloadKitWorker({ worker: new Worker(new URL("./my-worker.js", import.meta.url), { type: "module" }) });
  out.ownWorker = (await own.inspect(file)).report.bundles.flatMap((b) => b.entries.map((e) => e.id));
  own.terminate();`;

const TYPES: Record<string, string> = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".css": "text/css" };

/** Serves `dir` (the bundler's output and nothing else) on 127.0.0.1. */
function serveFolder(dir: string): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    const asked = normalize(decodeURIComponent((request.url ?? "/").split("?")[0]!)).replace(/^(\.\.[/\\])+/, "");
    const path = asked === "/" ? "/index.html" : asked;
    try {
      const body = readFileSync(join(dir, path));
      response.writeHead(200, { "Content-Type": TYPES[extname(path)] ?? "application/octet-stream" }).end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    resolve({ server, url: `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/` });
  }));
}

function page(script: string, module: boolean): string {
  return `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body><script ${module ? 'type="module" ' : ""}src="${script}"></script></body></html>`;
}

type Build = (app: string, out: string) => Promise<void>;

const BUILDS: Record<string, Build> = {
  async "esbuild iife"(app, out) {
    const { build } = await import("esbuild");
    await build({ entryPoints: [join(app, "main.js")], bundle: true, format: "iife", platform: "browser", outfile: join(out, "app.js"), logLevel: "error" });
    writeFileSync(join(out, "index.html"), page("app.js", false));
  },
  async "esbuild esm"(app, out) {
    const { build } = await import("esbuild");
    await build({ entryPoints: [join(app, "main.js")], bundle: true, format: "esm", splitting: true, platform: "browser", outdir: out, logLevel: "error" });
    writeFileSync(join(out, "index.html"), page("main.js", true));
  },
  async vite(app, out) {
    const { build } = await import("vite");
    writeFileSync(join(app, "index.html"), page("./main.js", true));
    await build({ root: app, configFile: false, logLevel: "error", build: { outDir: out, emptyOutDir: true } });
  },
  async webpack(app, out) {
    const { default: webpack } = await import("webpack");
    await new Promise<void>((resolve, reject) => {
      webpack({ mode: "production", target: "web", context: app, entry: join(app, "main.js"), output: { path: out, filename: "app.js" } }, (error, stats) => {
        if (error) return reject(error);
        if (stats?.hasErrors()) return reject(new Error(stats.toString({ all: false, errors: true })));
        resolve();
      });
    });
    writeFileSync(join(out, "index.html"), page("app.js", false));
  },
};

describe.skipIf(CHROMIUM === undefined)("bundling offload-kit for browsers", () => {
  let work: string;
  let browser: Launched;
  let expectedIds: string[];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "offload-kit-bundlers-"));
    browser = await launchChromium();
    const ls = spawnSync(join(ROOT, "dist/bin/offload-kit.js"), ["ls", "--json", CCOB], { encoding: "utf8" });
    expectedIds = JSON.parse(ls.stdout).files[0].bundles.flatMap((b: { entries: { id: string }[] }) => b.entries.map((e) => e.id));
  });

  afterAll(async () => {
    await browser?.close();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  it.each(Object.keys(BUILDS))("%s: loads, decompresses with the inlined codecs after a failed load, runs the Worker", async (name) => {
    const app = join(work, name.replace(/ /g, "-"));
    const out = join(app, "dist");
    mkdirSync(join(app, "node_modules"), { recursive: true });
    // The package as npm would install it (a link to this checkout: its package.json "exports", its dist/).
    symlinkSync(ROOT, join(app, "node_modules", "offload-kit"), "dir");
    const ownWorker = name === "vite" || name === "webpack";
    writeFileSync(join(app, "main.js"), APP.replace("/*OWN_WORKER*/", ownWorker ? OWN_WORKER : ""));
    writeFileSync(join(app, "my-worker.js"), 'import "offload-kit/browser-worker";\n');
    mkdirSync(out, { recursive: true });
    await BUILDS[name]!(app, out);
    const { server, url } = await serveFolder(out);
    const tab = await browser.context.newPage();
    const errors: string[] = [];
    tab.on("pageerror", (e) => errors.push(e.message));
    try {
      await tab.goto(url);
      await tab.waitForFunction(() => document.body.dataset.ready === "1", undefined, { timeout: HANG_MS });
      const ccob = [...readFileSync(CCOB)];
      const result = await tab.evaluate((bytes) => (window as unknown as { offloadKitApp(b: number[]): Promise<unknown> }).offloadKitApp(bytes), ccob);
      expect(result).toEqual({
        engineAtStart: "wasm",
        missing: expect.stringMatching(/^OffloadKitError CODEC_UNAVAILABLE: libzstd could not be loaded: HTTP 404/),
        isBundle: true,
        ids: expectedIds,
        engine: "wasm",
        brokenWorker: "WORKER_FAILED",
        ...(ownWorker ? { ownWorker: expectedIds } : {}),
        worker: { path: "app.ccob", engine: "wasm", ids: expectedIds, problems: 0, progress: true },
      });
      expect(errors).toEqual([]);
    } finally {
      await tab.close();
      server.close();
    }
  });
});
