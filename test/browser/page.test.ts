// The inspector page in a real browser (Debian's Chromium through playwright-core): served by the built
// `offload-kit serve`, fed every committed fixture through its file input (bundles binary, text and
// compressed, archives, offload binaries, host executables and objects, wrapper inputs, and the fuzz
// corpus's damaged offload files; the package parsers' corpora are packages, which the page shows as packages:
// test/browser/inspector-packages.test.ts), and what it shows is compared with `offload-kit ls --json` on the same files:
// every bundle and entry (ID, offset, size, alignment, compressed or not), every offload image, every
// problem with its offset, and the errors of files that cannot be read. Then the GPU picker against
// `offload-kit check`, a download, and the page's own safety (only its files are served).
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { CHROMIUM, launchChromium, servePage } from "./chromium.js";
import type { Launched, Served } from "./chromium.js";
import { HANG_MS } from "../limits.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const BIN = join(ROOT, "dist/bin/offload-kit.js");
const TEXT = /\.(txt|md|sh|stderr|json|tsv|c|cpp|hip|cu|ll)$/;
// Saved inputs of the package parsers' fuzz targets (test/fuzz/campaign/targets/): packages, not offload files.
const PACKAGE_CORPORA = new Set(["tar", "cpio", "image", "walk", "decoders", "image-writer", "package-writer"].map((p) => join("fuzz", p)));

function fixtureFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (![...PACKAGE_CORPORA].some((c) => path.endsWith(`/${c}`))) out.push(...fixtureFiles(path));
    }
    else if (!TEXT.test(name) && statSync(path).size > 0) out.push(path);
  }
  return out;
}

const FILES = fixtureFiles(join(ROOT, "test/fixtures"));
const LIBROCSPARSE = "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1";

interface Shown {
  name: string;
  error?: string;
  bundles: { head: string; entries: string[][] }[];
  images: string[][];
  problems: { offset: string; code: string; text: string }[];
  chart: { target: string; bytes: string }[];
}

/** Opens every bundle of every file (bundles are collapsed at first), as "Expand all" does. */
async function expandAll(page: Page): Promise<void> {
  const n = await page.locator("button.expand-all").count();
  // Files expanded before (an earlier test on the same page) are left as they are.
  await page.evaluate(() => {
    for (const button of Array.from(document.querySelectorAll<HTMLButtonElement>("section.file:not([data-expanded]) button.expand-all"))) button.click();
  });
  await page.waitForFunction((n) => document.querySelectorAll("section.file[data-expanded]").length >= n, n, { timeout: HANG_MS });
}

/** What the page shows for each file, every bundle opened, read from the DOM as a person would read it. */
async function shownFiles(page: Page): Promise<Shown[]> {
  await expandAll(page);
  return page.evaluate(() => {
    const cells = (row: Element) => Array.from(row.querySelectorAll("td")).slice(0, -2).map((td) => td.textContent ?? "");
    return Array.from(document.querySelectorAll<HTMLElement>("section.file")).map((section) => ({
      name: section.dataset.name ?? "",
      error: section.querySelector(".error")?.textContent ?? undefined,
      bundles: Array.from(section.querySelectorAll<HTMLElement>(".bundle-head[data-bundle]")).map((head) => ({
        head: head.textContent ?? "",
        entries: Array.from(section.querySelectorAll(`tr.entry[data-bundle="${head.dataset.bundle}"]`)).map(cells),
      })),
      images: Array.from(section.querySelectorAll("tr.image")).map(cells),
      problems: Array.from(section.querySelectorAll<HTMLElement>(".problems li")).map((li) => ({ offset: li.dataset.offset ?? "", code: li.dataset.code ?? "", text: li.textContent ?? "" })),
      chart: Array.from(section.querySelectorAll<HTMLElement>("table.targets tr[data-target]")).map((row) => ({ target: row.dataset.target ?? "", bytes: row.dataset.bytes ?? "" })),
    }));
  });
}

const hex = (n: number) => `0x${n.toString(16)}`;
const count = (n: number) => n.toLocaleString("en-US");

/** Whether `ls --json` found a kpack'd host's HIPK wrappers in this file (its code objects come from archives beside it). */
function isKpackHost(listed: any): boolean {
  return listed?.bundles?.some((b: any) => b.format === "kpack" && b.kpack?.wrapper !== undefined) === true;
}

function runKit(args: string[], cwd?: string) {
  const run = spawnSync(BIN, args, { encoding: "utf8", maxBuffer: 1 << 28, ...(cwd !== undefined ? { cwd } : {}) });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/**
 * What `offload-kit <command> --json` prints for a kpack'd host given alone: the host copied into a folder of
 * its own, so nothing its search paths name is there, as for a page given the one file (its HIPK wrappers
 * listed, each a KPACK_NOT_FOUND problem). Dropped with its tree (a folder), the page finds what ls finds
 * beside it on disk: the kpack'd trees test below.
 */
function aloneJson(command: string, file: string): any {
  const dir = mkdtempSync(join(tmpdir(), "offload-kit-kpack-alone-"));
  try {
    const name = file.split("/").pop()!;
    writeFileSync(join(dir, name), readFileSync(file));
    return JSON.parse(runKit([command, "--json", name], dir).stdout).files[0];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(CHROMIUM === undefined)("the inspector page in Chromium", () => {
  let served: Served;
  let browser: Launched;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    served = await servePage();
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on("pageerror", (e) => pageErrors.push(e.message));
    await page.goto(served.url);
  });

  afterAll(async () => {
    await browser?.close();
    await served?.stop();
  });

  it("serve prints the address first, on 127.0.0.1, and serves only the page's own files", async () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    for (const path of ["", "index.html", "style.css", "app.js", "worker.js"]) {
      expect((await fetch(new URL(path, served.url))).status, path).toBe(200);
    }
    for (const path of ["package.json", "../package.json", "%2e%2e/package.json", "dist/index.js", "inspector/index.html", "app.js.map", "worker.js/x"]) {
      expect((await fetch(`${served.url}${path}`)).status, path).toBe(404);
    }
    expect((await fetch(served.url, { method: "POST", body: "x" })).status).toBe(405);
    const page = await fetch(served.url);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
  });

  it(`shows what offload-kit ls --json reports for all ${FILES.length} fixtures`, async () => {
    const ls = runKit(["ls", "--json", ...FILES]);
    const expected = JSON.parse(ls.stdout).files as any[];
    await page.setInputFiles("#file-input", FILES);
    await page.waitForFunction(() => document.body.dataset.runs === "1", undefined, { timeout: HANG_MS });
    const shown = await shownFiles(page);
    expect(shown.map((s) => s.name)).toEqual(FILES.map((f) => f.split("/").pop()));
    let entries = 0;
    let problems = 0;
    let kpackHosts = 0;
    FILES.forEach((file, i) => {
      // A kpack'd host given alone: what ls says of it alone (its archives are not beside it; see aloneJson).
      const want = isKpackHost(expected[i]) ? aloneJson("ls", file) : expected[i];
      if (isKpackHost(expected[i])) kpackHosts++;
      const got = shown[i]!;
      const where = `${file} (#${i})`;
      if (want.error !== undefined) {
        expect(got.error, where).toContain(`${want.error.code}`);
        expect(got.error, where).toContain(want.error.message);
        return;
      }
      expect(got.error, where).toBeUndefined();
      expect(got.bundles.length, where).toBe(want.bundles.length);
      want.bundles.forEach((b: any, j: number) => {
        const head = got.bundles[j]!.head;
        expect(head, where).toContain(`Bundle ${b.index}: `);
        expect(head, where).toContain(`at ${hex(b.offset)}, ${count(b.size)} bytes`);
        if (b.align !== undefined) expect(head, where).toContain(`align ${b.align}`);
        if (b.section !== undefined) expect(head, where).toContain(`section ${b.section}`);
        if (b.member !== undefined) expect(head, where).toContain(`member ${b.member}`);
        if (b.compressed !== undefined) expect(head, where).toContain(`${b.compressed.method} compressed bundle v${b.compressed.version} at ${hex(b.compressed.offset)}, ${count(b.compressed.size)} bytes`);
        // Whether the bundle is compressed is said once, in its head (checked above), not on each row.
        expect(got.bundles[j]!.entries, where).toEqual(b.entries.map((e: any, k: number) => [
          String(k), e.id, hex(e.offset), count(e.size), String(e.align),
        ]));
        entries += b.entries.length;
      });
      expect(got.images, where).toEqual(want.offloadBinaries.flatMap((run: any) => run.images.map((im: any) => [
        String(im.index), im.imageKindName, im.offloadKindName, im.triple, im.arch, hex(im.offset), count(im.size), im.compressed ? "yes" : "no",
      ])));
      expect(got.problems, where).toEqual(want.problems.map((p: any) => ({ offset: String(p.offset), code: p.code, text: `at ${hex(p.offset)}: ${p.message} [${p.code}]` })));
      problems += want.problems.length;
    });
    // The suite means something: fixtures with entries, images, problems and unreadable files all went through.
    expect(entries).toBeGreaterThan(90);
    expect(kpackHosts).toBeGreaterThan(0);
    expect(problems).toBeGreaterThan(5);
    expect(expected.filter((f) => f.bundles?.some((b: any) => b.compressed !== undefined)).length).toBeGreaterThan(10);
    expect(expected.some((f) => f.offloadBinaries?.some((r: any) => r.images.length > 0))).toBe(true);
    expect(pageErrors).toEqual([]);
  });

  it("charts the bytes per target that offload-kit sizes --json counts", async () => {
    const sizes = JSON.parse(runKit(["sizes", "--json", ...FILES]).stdout);
    const listed = JSON.parse(runKit(["ls", "--json", ...FILES]).stdout).files as any[];
    const kpackHosts = new Set(FILES.filter((_, i) => isKpackHost(listed[i])));
    expect(kpackHosts.size).toBeGreaterThan(0);
    const shown = await shownFiles(page);
    FILES.forEach((file, i) => {
      const want = kpackHosts.has(file) ? aloneJson("sizes", file) : sizes.files[i];
      if (want.error !== undefined) return;
      expect(shown[i]!.chart, file).toEqual(want.targets.map((r: any) => ({ target: r.id, bytes: String(r.bytes) })));
    });
  });

  it("shows a kpack'd tree chosen as a folder as offload-kit ls --json does: each host's code objects from the .kpack archives beside it, each naming its archive", async () => {
    for (const tree of ["tree", "zstd"]) {
      const parent = join(ROOT, "test/fixtures/kpack", tree);
      const ls = runKit(["ls", "--json", "stage"], parent);
      expect(ls.status, ls.stderr).toBe(0);
      const want = (JSON.parse(ls.stdout).files as any[]).sort((a, b) => (a.path < b.path ? -1 : 1));
      const hosts = want.filter(isKpackHost);
      expect(hosts.length, tree).toBeGreaterThan(0);
      // The hosts' code objects were found in archives (the comparison below means something).
      for (const host of hosts) expect(host.bundles.some((b: any) => b.entries.some((e: any) => e.kpack?.archive?.startsWith("stage/.kpack/"))), host.path).toBe(true);
      await page.reload();
      await page.setInputFiles("#folder-input", join(parent, "stage"));
      await page.waitForFunction(() => document.body.dataset.runs === "1", undefined, { timeout: HANG_MS });
      const [download] = await Promise.all([page.waitForEvent("download", { timeout: HANG_MS }), page.click("#save-json")]);
      const saved = JSON.parse(readFileSync(await download.path(), "utf8"));
      const got = (saved.files as any[]).sort((a, b) => (a.path < b.path ? -1 : 1));
      expect(got, tree).toEqual(want);
      // On the page, each host's code object names the archive it came from.
      const named = hosts.flatMap((h: any) => h.bundles.flatMap((b: any) => b.entries.filter((e: any) => e.kpack?.archive !== undefined).map((e: any) => `from ${e.kpack.archive}`)));
      expect(named.length).toBeGreaterThan(0);
      await expandAll(page);
      const shownArchives = await page.$$eval("section.file tr.entry .kpack-archive", (cells) => cells.map((c) => c.textContent));
      expect(shownArchives.sort()).toEqual(named.sort());

      // The same tree as a package (a .tar.gz): ls does not look for a member's archives (they are members too,
      // listed as kpack archives), nor does the page; the saved report is ls --json's, byte for byte.
      const tarball = join(tmpdir(), `offload-kit-kpack-${tree}-${process.pid}.tar.gz`);
      try {
        expect(spawnSync("tar", ["-czf", tarball, "-C", parent, "stage"]).status).toBe(0);
        const name = tarball.split("/").pop()!;
        const lsPackage = runKit(["ls", "--json", name], tmpdir());
        await page.reload();
        await page.setInputFiles("#file-input", tarball);
        await page.waitForFunction(() => document.body.dataset.runs === "1", undefined, { timeout: HANG_MS });
        const [saved] = await Promise.all([page.waitForEvent("download", { timeout: HANG_MS }), page.click("#save-json")]);
        const report = readFileSync(await saved.path(), "utf8");
        expect(JSON.parse(lsPackage.stdout).files[0].members.some((m: any) => m.bundles.some((b: any) => b.format === "kpack")), tree).toBe(true);
        expect(report, tree).toBe(lsPackage.stdout);
      } finally {
        rmSync(tarball, { force: true });
      }
    }
    expect(pageErrors).toEqual([]);
  });

  it("gives the verdicts of offload-kit check for the GPU picked", async () => {
    const file = join(ROOT, "test/fixtures/bundler/host-gfx906.19.bc");
    const archive = join(ROOT, "test/fixtures/archive/hda.a");
    await page.reload();
    await page.setInputFiles("#file-input", [file, archive]);
    await page.waitForFunction(() => document.body.dataset.runs === "1");
    await expandAll(page);
    for (const [gpu, xnack] of [["gfx906", ""], ["gfx908", "+"], ["gfx90a", "-"], ["gfx1030", ""]] as const) {
      const target = xnack === "" ? gpu : `${gpu}:xnack${xnack}`;
      await page.fill("#gpu", target);
      await page.waitForFunction((t) => (document.getElementById("gpu-summary")?.textContent ?? "").endsWith(` load on ${t}`), target);
      const check = JSON.parse(runKit(["check", `--gpu=${target}`, "--json", file, archive]).stdout);
      const verdicts = await page.$$eval("tr.entry", (rows) => rows.map((r) => [r.getAttribute("data-id"), r.querySelector(".verdict")!.textContent]));
      const text: Record<string, string> = { loadable: "yes", "not-loadable": "no", unknown: "?", host: "host" };
      const expected = check.inputs.flatMap((input: any) => input.entries.map((e: any) => [e.id, text[e.verdict]]));
      expect(verdicts, target).toEqual(expected);
      expect(await page.textContent("#gpu-summary"), target).toMatch(new RegExp(`^${check.inputs.reduce((n: number, x: any) => n + x.loadable, 0)} of \\d+ device entries load on ${target}`));
    }
  });

  it("downloads an entry byte for byte, from a plain and from a compressed bundle", async () => {
    const plain = join(ROOT, "test/fixtures/bundler/host-gfx906.19.bc");
    const compressed = join(ROOT, "test/fixtures/ccob/host-gfx906.19.ccob");
    await page.reload();
    await page.setInputFiles("#file-input", [plain, compressed]);
    await page.waitForFunction(() => document.body.dataset.runs === "1");
    await expandAll(page);
    const expected = JSON.parse(runKit(["ls", "--json", plain]).stdout).files[0].bundles[0].entries[1];
    const bytes = readFileSync(plain).subarray(expected.offset, expected.offset + expected.size);
    for (const [index, name] of [[0, "host-gfx906.19.bc-0-hip-amdgcn-amd-amdhsa--gfx906"], [1, "host-gfx906.19.ccob-0-hip-amdgcn-amd-amdhsa--gfx906"]] as const) {
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        page.locator("section.file").nth(index).locator('tr.entry[data-entry="1"] button.download').click(),
      ]);
      expect(download.suggestedFilename()).toBe(name);
      const path = await download.path();
      expect(Buffer.compare(readFileSync(path), bytes), name).toBe(0);
    }
  });

  it("takes files dropped on it, as from the file input", async () => {
    const file = join(ROOT, "test/fixtures/ccob/multi.22.ccob");
    await page.reload();
    const dataTransfer = await page.evaluateHandle((bytes) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([new Uint8Array(bytes)], "dropped.ccob"));
      return transfer;
    }, [...readFileSync(file)]);
    await page.dispatchEvent("#drop", "dragover", { dataTransfer });
    expect(await page.getAttribute("#drop", "class")).toContain("over");
    await page.dispatchEvent("#drop", "drop", { dataTransfer });
    await page.waitForFunction(() => document.body.dataset.runs === "1");
    const want = JSON.parse(runKit(["ls", "--json", file]).stdout).files[0];
    const shown = (await shownFiles(page))[0]!;
    expect(shown.name).toBe("dropped.ccob");
    expect(shown.bundles.map((b) => b.entries.map((e) => e[1]))).toEqual(want.bundles.map((b: any) => b.entries.map((e: any) => e.id)));
    expect(want.bundles.length).toBeGreaterThan(1);
  });

  it("reports progress while it searches a large file whole", async () => {
    const dir = mkdtempSync(join(tmpdir(), "offload-kit-page-"));
    const file = join(dir, "large.bin");
    // 160 MiB with nothing to hop between (sparse: no disk), then one bundle.
    writeFileSync(file, "");
    truncateSync(file, 160 * 1024 * 1024);
    appendFileSync(file, readFileSync(join(ROOT, "test/fixtures/bundler/host-gfx906.19.bc")));
    try {
      await page.reload();
      await page.evaluate(() => {
        const seen: string[] = ((window as unknown as { statusTexts: string[] }).statusTexts = []);
        new MutationObserver(() => {
          const text = document.querySelector(".status")?.textContent;
          if (text) seen.push(text);
        }).observe(document.getElementById("files")!, { subtree: true, childList: true, characterData: true });
      });
      await page.setInputFiles("#file-input", file);
      await page.waitForFunction(() => document.body.dataset.runs === "1", undefined, { timeout: HANG_MS });
      const texts = await page.evaluate(() => (window as unknown as { statusTexts: string[] }).statusTexts);
      expect(texts.some((t) => /^Reading… at [\d.]+ MB of 167\.8 MB: 0 bundles so far$/.test(t)), texts.join("\n")).toBe(true);
      expect(texts.at(-1)).toMatch(/^1 bundle, 2 entries in 167\.8 MB \(other\); read 167\.8 MB/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("shows why an entry cannot be read when the file changed after it was chosen", async () => {
    const dir = mkdtempSync(join(tmpdir(), "offload-kit-page-"));
    const file = join(dir, "changing.ccob");
    writeFileSync(file, readFileSync(join(ROOT, "test/fixtures/ccob/host-gfx906.19.ccob")));
    try {
      await page.reload();
      await page.setInputFiles("#file-input", file);
      await page.waitForFunction(() => document.body.dataset.runs === "1");
      // The browser holds the file, not a copy: once it changes on disk, reading it fails.
      await expandAll(page);
      writeFileSync(file, Buffer.alloc(10));
      await page.locator('tr.entry[data-entry="1"] button.download').click();
      await page.waitForSelector("tr.entry .error");
      expect(await page.textContent("tr.entry .error")).toMatch(/^READ_FAILED at offset 0x0 \(0\): cannot read the file at offset 0: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("downloads an offload image as offload-kit extract writes it: same name, same bytes", async () => {
    const file = join(ROOT, "test/fixtures/offload-binary/multi.19.bin");
    const dir = mkdtempSync(join(tmpdir(), "offload-kit-page-"));
    try {
      const extracted = JSON.parse(runKit(["extract", `--out-dir=${dir}`, "--json", file]).stdout).outputs.filter((o: any) => o.image !== undefined);
      expect(extracted.length).toBe(3);
      await page.reload();
      await page.setInputFiles("#file-input", file);
      await page.waitForFunction(() => document.body.dataset.runs === "1");
      await expandAll(page);
      for (const [i, output] of extracted.entries()) {
        const [download] = await Promise.all([page.waitForEvent("download"), page.locator("tr.image button.download").nth(i).click()]);
        // Chromium drops a trailing '.' from a download's name (an image of kind IMG_None has no extension).
        expect(download.suggestedFilename()).toBe(output.path.split("/").pop().replace(/\.$/, ""));
        expect(Buffer.compare(readFileSync(await download.path()), readFileSync(output.path)), output.path).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("shows a damaged file's problem with its offset, not a blank page", async () => {
    const dir = mkdtempSync(join(tmpdir(), "offload-kit-page-"));
    const file = join(dir, "damaged.hipfb");
    // A bundle whose second entry claims bytes past the end of the file.
    const bundle = readFileSync(join(ROOT, "test/fixtures/bundler/host-gfx906.19.bc"));
    writeFileSync(file, bundle.subarray(0, bundle.length - 2));
    try {
      await page.reload();
      await page.setInputFiles("#file-input", file);
      await page.waitForFunction(() => document.body.dataset.runs === "1");
      const want = JSON.parse(runKit(["ls", "--json", file]).stdout).files[0];
      expect(want.problems.length).toBeGreaterThan(0);
      const shown = (await shownFiles(page))[0]!;
      expect(shown.problems).toEqual(want.problems.map((p: any) => ({ offset: String(p.offset), code: p.code, text: `at ${hex(p.offset)}: ${p.message} [${p.code}]` })));
      expect(await page.isVisible(".problems")).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // The large case (bench/browser.mjs times it): where the library is installed, the page lists all of it
  // as ls does, reading about 2 MB of the 1.3 GB.
  it.skipIf(!existsSync(LIBROCSPARSE))("lists all of librocsparse0 as ls does, without reading it whole", async () => {
    const want = JSON.parse(runKit(["ls", "--json", LIBROCSPARSE]).stdout).files[0];
    await page.reload();
    await page.setInputFiles("#file-input", LIBROCSPARSE);
    await page.waitForFunction(() => document.body.dataset.runs === "1", undefined, { timeout: HANG_MS });
    const shown = (await shownFiles(page))[0]!;
    expect(shown.bundles.map((b) => b.entries.map((e) => e[1]))).toEqual(want.bundles.map((b: any) => b.entries.map((e: any) => e.id)));
    expect(shown.bundles.flatMap((b) => b.entries.map((e) => e[2]))).toEqual(want.bundles.flatMap((b: any) => b.entries.map((e: any) => hex(e.offset))));
    const status = await page.textContent("section.file .status");
    const read = /read ([\d.]+) MB in (\d+) reads/.exec(status ?? "");
    expect(read, status ?? "").not.toBeNull();
    expect(Number(read![1])).toBeLessThan(8);
  });
});
