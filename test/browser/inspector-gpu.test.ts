// The inspector page's GPU verdict and "Download, pruned for GPU" against the CLI, in Debian's Chromium:
// - each file's verdict line passes or fails as `offload-kit check --json` decides (its `ok` and its
//   per-setting `cases`, judged by the same judgeEntries), on bundles with both xnack variants and with
//   only xnack+, for a bare processor (xnack unstated) and for stated settings; librocsparse0 when installed;
// - the pruned download equals `offload-kit prune --keep=GPU FILE -o OUT` byte for byte, for binary, text and
//   compressed bundles, for clang-19-built HIP shared libraries (plain fat binaries and a CCOB) and Debian's
//   librocrand1, whose download is slices of the File and the few bytes the worker made; a prune the CLI
//   refuses (a bundle left empty, a .hip_fatbin no wrapper points at) is refused with its message;
// - a damaged bundle's entries listed as `ls --json` gives them (problem `entries`), the damage marked.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { describeSettings } from "../../src/inspect/check.js";
import { CHROMIUM, launchChromium, servePage } from "./chromium.js";
import type { Launched, Served } from "./chromium.js";
import { nativeTool } from "../native.js";
import { CASES, Workshop, standinTools } from "../elf-edit/standin.js";
import { HANG_MS } from "../limits.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const KIT = join(ROOT, "dist/bin/offload-kit.js");
const BUNDLER = join(ROOT, "dist/bin/offload-bundler.js");
const LIBROCSPARSE = "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1";
const LIBROCRAND = "/usr/lib/x86_64-linux-gnu/librocrand.so.1";
const GCC = nativeTool("gcc");
const OBJCOPY = nativeTool("objcopy");
const HOST = "host-x86_64-unknown-linux-gnu";
const G = "hipv4-amdgcn-amd-amdhsa--";

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(command, args, { encoding: "utf8", maxBuffer: 1 << 28, cwd, env: { ...process.env, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.skipIf(CHROMIUM === undefined)("the inspector page's GPU verdict and pruned download, as offload-kit check and prune", () => {
  let served: Served;
  let browser: Launched;
  let page: Page;
  let dir: string;
  const pageErrors: string[] = [];
  /** Bundles with both xnack variants (binary, text, compressed), with only xnack+, and with gfx90a for any xnack. */
  let files: string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "offload-kit-inspector-gpu-"));
    const inputs: Record<string, string> = { "h.txt": "host", "m.txt": "xnack- code", "p.txt": "xnack+ code!", "s.txt": "gfx906 code", "a.txt": "any-xnack code" };
    for (const [name, text] of Object.entries(inputs)) writeFileSync(join(dir, name), text);
    const both = [`-targets=${HOST},${G}gfx90a:xnack-,${G}gfx90a:xnack+,${G}gfx906`, "-input=h.txt", "-input=m.txt", "-input=p.txt", "-input=s.txt"];
    const made: [string, string[]][] = [
      ["both.bc", ["-type=bc", ...both]],
      ["both.i", ["-type=i", ...both]],
      ["both.ccob", ["-type=bc", "-compress", ...both]],
      ["plus.bc", ["-type=bc", `-targets=${HOST},${G}gfx90a:xnack+,${G}gfx906`, "-input=h.txt", "-input=p.txt", "-input=s.txt"]],
      ["any.bc", ["-type=bc", `-targets=${HOST},${G}gfx90a,${G}gfx906`, "-input=h.txt", "-input=a.txt", "-input=s.txt"]],
    ];
    for (const [name, args] of made) {
      const r = run(BUNDLER, [...args, `-output=${name}`], dir);
      expect(r.status, r.stderr).toBe(0);
    }
    files = made.map(([name]) => join(dir, name));
    served = await servePage();
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on("pageerror", (e) => pageErrors.push(e.message));
    await page.addInitScript(() => {
      delete (window as unknown as { showSaveFilePicker?: unknown }).showSaveFilePicker;
    });
  }, HANG_MS);

  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function open(paths: string[]): Promise<void> {
    await page.goto(served.url);
    await page.setInputFiles("#file-input", paths);
    await page.waitForFunction(() => document.body.dataset.runs === "1", undefined, { timeout: HANG_MS });
  }

  async function verdictLines(): Promise<{ ok: boolean; cases: unknown; text: string }[]> {
    return page.$$eval(".verdict-line", (lines) => lines.map((l) => ({ ok: (l as HTMLElement).dataset.ok === "true", cases: JSON.parse((l as HTMLElement).dataset.cases ?? "null"), text: l.textContent ?? "" })));
  }

  // The page judges rows in slices after a keystroke: wait for the summary to change to the new GPU (a summary
  // naming "gfx90a:xnack-" already contains "gfx90a", so containing the name alone is not enough).
  async function typeGpu(gpu: string): Promise<void> {
    if ((await page.inputValue("#gpu")) === gpu) return;
    const before = (await page.textContent("#gpu-summary")) ?? "";
    await page.fill("#gpu", gpu);
    await page.waitForFunction(([g, b]) => {
      const text = document.getElementById("gpu-summary")?.textContent ?? "";
      return text !== b && text.includes(g);
    }, [gpu, before] as const);
  }

  it("passes and fails each file as offload-kit check does, counting per xnack setting", async () => {
    await open(files);
    for (const gpu of ["gfx90a", "gfx90a:xnack-", "gfx90a:xnack+", "gfx90a:sramecc+:xnack-", "gfx906"]) {
      const check = JSON.parse(run(KIT, ["check", `--gpu=${gpu}`, "--json", ...files], dir).stdout);
      await typeGpu(gpu);
      const lines = await verdictLines();
      expect(lines.length).toBe(files.length);
      check.inputs.forEach((input: any, i: number) => {
        const line = lines[i]!;
        expect({ gpu, file: input.path, ok: line.ok, cases: line.cases }).toEqual({ gpu, file: input.path, ok: input.ok, cases: input.cases });
        expect(line.text.startsWith(input.ok ? "OK: " : "FAIL: "), line.text).toBe(true);
        if (input.unstated.length > 0) {
          for (const c of input.cases) expect(line.text).toContain(`${c.loadable} with ${describeSettings(c.settings)}`);
        } else {
          expect(line.text).toContain(`${input.loadable} of ${input.deviceEntries} device entries load on`);
        }
      });
      const summaryOk = await page.getAttribute("#gpu-summary", "data-ok");
      expect(summaryOk, gpu).toBe(String(check.ok));
    }
    // The cases the issue names: both variants pass a bare gfx90a, only xnack+ fails it (nothing with xnack off).
    await typeGpu("gfx90a");
    const lines = await verdictLines();
    expect(lines[0]!.text).toContain("1 with xnack off (-), 1 with xnack on (+)");
    expect(lines[0]!.ok).toBe(true);
    expect(lines[3]!.text).toContain("0 with xnack off (-), 1 with xnack on (+)");
    expect(lines[3]!.ok).toBe(false);
    expect(await page.textContent("#gpu-summary")).toBe("4 of 5 files have device code gfx90a can load, whichever way xnack is set");
    expect(pageErrors).toEqual([]);
  }, HANG_MS);

  it("downloads each bundle pruned for the GPU typed, byte for byte as offload-kit prune --keep writes it", async () => {
    await open(files);
    expect(await page.locator("button.prune").first().isDisabled()).toBe(true);
    for (const gpu of ["gfx90a:xnack-", "gfx90a", "gfx906"]) {
      await typeGpu(gpu);
      for (let i = 0; i < files.length; i++) {
        const out = join(dir, `out-${i}`);
        rmSync(out, { force: true });
        const cli = run(KIT, ["prune", `--keep=${gpu}`, files[i]!, "-o", out], dir);
        const button = page.locator("section.file").nth(i).locator("button.prune");
        await page.waitForFunction(([n, g]) => document.querySelectorAll("section.file")[n]?.querySelector("button.prune")?.textContent === `Download, pruned for ${g}`, [i, gpu] as const);
        expect(await button.textContent()).toBe(`Download, pruned for ${gpu}`);
        if (cli.status !== 0) {
          // Refused by the CLI (nothing left for the GPU): the page says the same, and saves nothing.
          await button.click();
          const note = page.locator("section.file").nth(i).locator(".prune-note.error");
          await note.waitFor();
          expect(await note.textContent()).toContain("keeps none of the bundle's device entries");
          continue;
        }
        const [event] = await Promise.all([page.waitForEvent("download", { timeout: HANG_MS }), button.click()]);
        const got = readFileSync(await event.path());
        const want = readFileSync(out);
        expect({ gpu, file: files[i], equal: Buffer.compare(got, want) === 0, size: got.length }).toEqual({ gpu, file: files[i], equal: true, size: want.length });
        expect(event.suggestedFilename()).toBe(`${["both", "both", "both", "plus", "any"][i]}-${gpu.replace(/:/g, "_")}${[".bc", ".i", ".ccob", ".bc", ".bc"][i]}`);
      }
    }
    // A plain binary bundle is put together from slices of the file: only the new header is made in the worker.
    await typeGpu("gfx90a:xnack-");
    await page.locator("section.file").first().locator("button.prune").click();
    await page.waitForFunction(() => document.querySelector<HTMLElement>("section.file")?.dataset.lastPrune !== undefined);
    const last = JSON.parse((await page.getAttribute("section.file >> nth=0", "data-last-prune"))!);
    expect(last.ranges).toBeGreaterThan(0);
    expect(last.made).toBeLessThan(last.outputSize);
    expect(pageErrors).toEqual([]);
  }, HANG_MS);

  /**
   * Downloads `path` pruned for `gpu` through the page and compares it with `offload-kit prune --keep`; returns
   * what the worker answered (its parts' kinds and sizes).
   */
  async function prunedDownload(path: string, gpu: string): Promise<{ ranges: number; made: number; outputSize: number; container: string }> {
    const out = join(dir, `cli-${gpu.replace(/:/g, "_")}-${path.split("/").pop()}`);
    // The page compresses with the WebAssembly zstd; so must the CLI here (Node >= 22.15 would use the platform's
    // libzstd, whose re-encoded CCOB can differ in bytes while both are valid): this compares prune, not codecs.
    const cli = run(KIT, ["prune", `--keep=${gpu}`, path, "-o", out], dir, { OFFLOAD_KIT_ZSTD: "wasm" });
    expect(cli.status, cli.stderr).toBe(0);
    await open([path]);
    await typeGpu(gpu);
    const button = page.locator("button.prune");
    expect(await button.isDisabled()).toBe(false);
    expect(await button.textContent()).toBe(`Download, pruned for ${gpu}`);
    const [event] = await Promise.all([page.waitForEvent("download", { timeout: HANG_MS }), button.click()]);
    const got = readFileSync(await event.path());
    const want = readFileSync(out);
    expect({ path, gpu, size: got.length, equal: Buffer.compare(got, want) === 0 }).toEqual({ path, gpu, size: want.length, equal: true });
    await page.waitForFunction(() => document.querySelector<HTMLElement>("section.file")?.dataset.lastPrune !== undefined);
    rmSync(out, { force: true });
    return JSON.parse((await page.getAttribute("section.file >> nth=0", "data-last-prune"))!);
  }

  it.skipIf(!standinTools())("downloads clang-19 HIP shared libraries pruned, byte for byte as offload-kit prune --keep writes them", async () => {
    const shop = new Workshop();
    try {
      // Plain fat binaries (lld), and a CCOB among them (GNU ld): the CCOB is pruned and re-encoded in the worker.
      for (const c of [CASES[0]!, CASES[4]!]) {
        const library = shop.program(c, c.name.replace(/[^a-z0-9]+/gi, "-"));
        for (const gpu of ["gfx90a", "gfx1100"]) {
          const last = await prunedDownload(library, gpu);
          expect(last.container).toBe("linked ELF");
          // The kept code objects and everything that stays in place are slices of the File.
          expect(last.ranges).toBeGreaterThan(0);
          expect(last.made).toBeLessThan(last.outputSize / 2);
        }
      }
    } finally {
      shop.remove();
    }
    expect(pageErrors).toEqual([]);
  }, HANG_MS);

  // librocrand1 is installed by .ci/run: under OFFLOAD_KIT_REQUIRE_NATIVE=1 its absence fails instead of skipping.
  it.skipIf(!existsSync(LIBROCRAND) && process.env.OFFLOAD_KIT_REQUIRE_NATIVE !== "1")("downloads librocrand1 pruned, byte for byte as offload-kit prune --keep writes it, made of slices of the File", async () => {
    if (!existsSync(LIBROCRAND)) throw new Error(`${LIBROCRAND} (librocrand1) is required (OFFLOAD_KIT_REQUIRE_NATIVE=1)`);
    for (const gpu of ["gfx90a:xnack-", "gfx1030"]) {
      const last = await prunedDownload(LIBROCRAND, gpu);
      expect(last.container).toBe("linked ELF");
      // Only headers, pointers and bundle headers are made in the worker: never the 25 MB file.
      expect(last.made).toBeLessThan(64 * 1024);
    }
    expect(pageErrors).toEqual([]);
  }, HANG_MS);

  it.skipIf(GCC === undefined || OBJCOPY === undefined)("offers a linked ELF file prune refuses, and shows prune's message", async () => {
    writeFileSync(join(dir, "f.c"), "int f(void) { return 1; }\n");
    expect(run(GCC!, ["-shared", "-fPIC", "f.c", "-o", "lib.so"], dir).status).toBe(0);
    expect(run(OBJCOPY!, ["--add-section", `.hip_fatbin=${files[0]}`, "lib.so"], dir).status).toBe(0);
    // No wrapper points at the section: the CLI refuses it, naming why.
    const cli = run(KIT, ["prune", "--keep=gfx90a", "lib.so", "-o", "lib.out"], dir);
    expect(cli.status).not.toBe(0);
    expect(cli.stderr).toContain("lib.so: the ELF file has .hip_fatbin but no .hipFatBinSegment");
    await open([join(dir, "lib.so")]);
    await typeGpu("gfx90a");
    const button = page.locator("button.prune");
    expect(await button.isDisabled()).toBe(false);
    await button.click();
    const note = page.locator(".prune-note.error");
    await note.waitFor();
    expect(await note.textContent()).toContain("lib.so: the ELF file has .hip_fatbin but no .hipFatBinSegment (no wrapper points at it)");
    // The verdict still shows: the file's bundle has both variants.
    expect((await verdictLines())[0]!.ok).toBe(true);
    expect(pageErrors).toEqual([]);
  }, HANG_MS);

  it("lists a damaged bundle's entries as ls --json does, the damage marked, intact ones downloadable", async () => {
    const whole = readFileSync(files[0]!);
    const cut = join(dir, "cut.bc");
    writeFileSync(cut, whole.subarray(0, whole.length - 15));
    const want = JSON.parse(run(KIT, ["ls", "--json", cut], dir).stdout).files[0];
    expect(want.bundles).toEqual([]);
    const salvaged = want.problems[0].entries as { id: string; offset: number; size: number; intact: boolean }[];
    expect(salvaged.map((e) => e.intact)).toEqual([true, true, false, false]);
    await open([cut]);
    const rows = await page.$$eval("tr.salvaged", (r) => r.map((x) => ({ id: (x as HTMLElement).dataset.id, intact: x.classList.contains("intact"), state: x.querySelector(".damage")?.textContent })));
    expect(rows).toEqual(salvaged.map((e) => ({ id: e.id, intact: e.intact, state: e.intact ? "intact" : "damaged: runs past the end" })));
    expect(await page.locator("details.salvaged-bundle summary").textContent()).toBe("Damaged bundle at 0x0: 4 entries still readable in its header, 2 intact");
    const [event] = await Promise.all([page.waitForEvent("download", { timeout: HANG_MS }), page.locator("tr.salvaged.intact button.download").nth(1).click()]);
    const e = salvaged[1]!;
    expect(Buffer.compare(readFileSync(await event.path()), whole.subarray(e.offset, e.offset + e.size))).toBe(0);
    expect(await page.locator("tr.salvaged.damaged button").count()).toBe(0);
    expect(pageErrors).toEqual([]);
  }, HANG_MS);

  it.skipIf(!existsSync(LIBROCSPARSE))("judges librocsparse0 on a bare gfx90a as offload-kit check does (it ships xnack- and xnack+)", async () => {
    const check = JSON.parse(run(KIT, ["check", "--gpu=gfx90a", "--json", LIBROCSPARSE], dir).stdout);
    await open([LIBROCSPARSE]);
    await typeGpu("gfx90a");
    const [line] = await verdictLines();
    expect({ ok: line!.ok, cases: line!.cases }).toEqual({ ok: check.inputs[0].ok, cases: check.inputs[0].cases });
    expect(line!.ok).toBe(true);
    for (const c of check.inputs[0].cases) expect(line!.text).toContain(`${c.loadable} with ${describeSettings(c.settings)}`);
    expect(await page.locator("button.prune").isDisabled()).toBe(false);
    expect(pageErrors).toEqual([]);
  }, HANG_MS);
});
