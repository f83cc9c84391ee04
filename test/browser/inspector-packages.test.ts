// The inspector page on packages (issue 18), in Debian's Chromium: a wheel (zip, deflate members) and a
// .tar.gz made here from the host fixtures are walked in the worker (src/browser/packages.ts), each member
// with device code shown as `package!member` (summary, GPU verdict and find over them), the members
// without device code counted; the report the page saves is what `offload-kit ls --json` prints for the
// same package, byte for byte. A member's entries download (the worker walks the package again to the
// member), one by one and as a zip, and pruned for a GPU: byte for byte what `offload-kit prune --keep`
// writes for the member extracted (binary, text and compressed v2/v3 bundles, a fat object, an archive;
// a linked ELF member is refused, saying why, as such a file is); axe-core finds nothing serious.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { CHROMIUM, launchChromium, servePage } from "./chromium.js";
import type { Launched, Served } from "./chromium.js";
import { HOSTS, tarEntry, tarOf } from "../packages/build.js";
import { nativeTool } from "../native.js";
import { HANG_MS } from "../limits.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const KIT = join(ROOT, "dist/bin/offload-kit.js");
const BUNDLER = join(ROOT, "dist/bin/offload-bundler.js");
const ZIP = nativeTool("zip");
const UNZIP = nativeTool("unzip");
const BZIP2 = nativeTool("bzip2");
/** librocrand1's .deb when apt has it cached (not installed by CI: the case skips without it). */
const APT_CACHE = "/var/cache/apt/archives";
const ROCRAND_DEB = existsSync(APT_CACHE) ? readdirSync(APT_CACHE).filter((f) => /^librocrand1_.*_amd64\.deb$/.test(f)).sort().at(-1) : undefined;

function kit(args: string[], cwd: string) {
  const run = spawnSync(KIT, args, { encoding: "utf8", maxBuffer: 1 << 28, cwd });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe.skipIf(CHROMIUM === undefined)("the inspector page on packages: members with device code as package!member", () => {
  let served: Served;
  let browser: Launched;
  let page: Page;
  let dir: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "offload-kit-inspector-pkg-"));
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

  async function open(files: string[]): Promise<void> {
    await page.goto(served.url);
    await page.setInputFiles("#file-input", files);
    await page.waitForFunction(() => document.body.dataset.runs === "1", undefined, { timeout: HANG_MS });
  }

  async function download(click: () => Promise<void>): Promise<{ name: string; bytes: Buffer }> {
    const [event] = await Promise.all([page.waitForEvent("download", { timeout: HANG_MS }), click()]);
    return { name: event.suggestedFilename(), bytes: readFileSync(await event.path()) };
  }

  async function savedReport(): Promise<string> {
    const [event] = await Promise.all([page.waitForEvent("download", { timeout: HANG_MS }), page.click("#save-json")]);
    return readFileSync(await event.path()).toString("utf8");
  }

  /** What the page shows per member section: its name, entries (as ID list) and verdict line. */
  async function members() {
    return page.$$eval("section.file.member", (sections) => sections.map((s) => ({
      name: (s as HTMLElement).dataset.name!,
      device: s.querySelector(".stat.device .stat-detail")?.textContent ?? "",
      prune: (s.querySelector("button.prune") as HTMLButtonElement | null)?.title ?? "",
    })));
  }

  it("a .tar.gz: members named pkg!member, the rest counted, the saved report is ls --json's; GPU verdict and find over the members", async () => {
    const tgz = join(dir, "lib.tar.gz");
    writeFileSync(tgz, gzipSync(tarOf([
      tarEntry("lib/app", readFileSync(join(HOSTS, "app"))),
      tarEntry("lib/fat.o", readFileSync(join(HOSTS, "fat.o"))),
      tarEntry("doc/readme", Buffer.from("no device code\n")),
    ])));
    const ls = kit(["ls", "--json", "lib.tar.gz"], dir);
    expect(ls.status, ls.stderr).toBe(0);
    const want = JSON.parse(ls.stdout).files[0];
    await open([tgz]);
    const pkg = page.locator("section.file.package");
    expect(await pkg.getAttribute("data-package")).toBe(want.package.format);
    expect(Number(await pkg.getAttribute("data-members"))).toBe(want.package.members);
    expect(Number(await pkg.getAttribute("data-without-device-code"))).toBe(want.package.members - want.members.length);
    expect(await page.textContent(".package-counts")).toContain("2 with device code, 1 without");
    const shown = await members();
    expect(shown.map((m) => m.name)).toEqual(want.members.map((m: any) => m.path));
    expect(shown.map((m) => m.name)).toEqual(["lib.tar.gz!lib/app", "lib.tar.gz!lib/fat.o"]);
    for (const m of shown) expect(m.device, m.name).toMatch(/bytes, [\d.<]+% of the /);
    // A pruned download is offered for the fat object, not for the linked ELF member (as for such a file).
    expect(shown.map((m) => m.prune.includes("not offered for linked ELF files"))).toEqual([true, false]);
    // Entries opened: a row per entry ls --json lists; a download is the member's bytes at the entry
    // (the member is the fixture, so the bytes are the fixture's at ls --json's offset).
    const app = readFileSync(join(HOSTS, "app"));
    const first = page.locator("section.file.member").first();
    await first.locator("details.bundle summary").first().click();
    const entries = want.members[0].bundles[0].entries;
    await expect.poll(() => first.locator("tr.entry").count()).toBe(entries.length);
    const e = entries[1];
    expect(e.size).toBeGreaterThan(0);
    const saved = await download(() => first.locator("tr.entry").nth(1).locator("button.download").click());
    expect(saved.bytes.equals(app.subarray(e.offset, e.offset + e.size))).toBe(true);
    // Everything of the member as a zip: every entry, each with the fixture's bytes (unzip -p).
    if (UNZIP !== undefined) {
      const zip = await download(() => first.locator("button.zip").first().click());
      const zipPath = join(dir, "member.zip");
      writeFileSync(zipPath, zip.bytes);
      expect(spawnSync(UNZIP, ["-tq", zipPath], { encoding: "utf8" }).status).toBe(0);
      const names = spawnSync(UNZIP, ["-Z1", zipPath], { encoding: "utf8" }).stdout.trim().split("\n");
      const all = want.members[0].bundles.flatMap((b: any) => b.entries);
      expect(names).toHaveLength(all.length + want.members[0].offloadBinaries.reduce((n: number, r: any) => n + r.images.length, 0));
      const plain = want.members[0].bundles[0];
      const bytes = spawnSync(UNZIP, ["-p", zipPath, names[1]!], { maxBuffer: 1 << 26 }).stdout as Buffer;
      expect(bytes.equals(app.subarray(plain.entries[1].offset, plain.entries[1].offset + plain.entries[1].size))).toBe(true);
    }
    // The report: byte for byte what ls --json prints for the package (run where the package is, by its name).
    expect(await savedReport()).toBe(ls.stdout);

    // A GPU: the members are judged as check judges each file, and counted in the page's summary.
    const deviceIds: string[] = want.members.flatMap((m: any) => m.bundles.flatMap((b: any) => b.entries.map((e: any) => e.id as string)).concat(m.offloadBinaries.flatMap((r: any) => r.images.map((i: any) => `${i.triple}-${i.arch}`))))
      .filter((id: string) => !id.startsWith("host-"));
    expect(deviceIds.length).toBeGreaterThan(0);
    await page.fill("#gpu", "gfx906");
    await page.waitForFunction(() => (document.getElementById("gpu-summary")?.textContent ?? "").endsWith("gfx906"));
    const lines = await page.$$eval("section.file.member .verdict-line", (l) => l.map((x) => ({ hidden: (x as HTMLElement).hidden, text: x.textContent ?? "" })));
    expect(lines).toHaveLength(2);
    for (const l of lines) {
      expect(l.hidden).toBe(false);
      expect(l.text).toMatch(/^(OK|FAIL): /);
    }
    await page.fill("#gpu", "");
    // Find: a search over the members' entries.
    await page.fill("#search", "gfx90a");
    const matching = want.members.map((m: any) => m.bundles.flatMap((b: any) => b.entries).filter((e: any) => e.id.includes("gfx90a")).length);
    await page.waitForFunction((n) => Array.from(document.querySelectorAll("section.file.member .match-count")).map((x) => x.textContent ?? "").join("|") === n,
      matching.map((n: number, i: number) => `${n} of ${want.members[i].bundles.reduce((k: number, b: any) => k + b.entries.length, 0)} entries match`).join("|"));
    await page.fill("#search", "");
    // Accessible as a file's section is: axe-core, light and dark, with a member's bundle open and a GPU typed.
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
    await page.emulateMedia({ colorScheme: "light" });
    expect(pageErrors).toEqual([]);
  }, HANG_MS * 2);

  it.skipIf(BZIP2 === undefined)("a .tar.bz2 (legacy conda, bzip2 tarballs): the TypeScript bzip2 decoder in the worker shows what ls shows", async () => {
    const tbz = join(dir, "lib.tar.bz2");
    const made = spawnSync(BZIP2!, ["-c"], { input: tarOf([
      tarEntry("lib/app", readFileSync(join(HOSTS, "app"))),
      tarEntry("lib/fat.o", readFileSync(join(HOSTS, "fat.o"))),
      tarEntry("doc/readme", Buffer.from("no device code\n")),
    ]), maxBuffer: 1 << 26 });
    expect(made.status).toBe(0);
    writeFileSync(tbz, made.stdout);
    const ls = kit(["ls", "--json", "lib.tar.bz2"], dir);
    expect(ls.status, ls.stderr).toBe(0);
    const want = JSON.parse(ls.stdout).files[0];
    expect(want.package.format).toBe("bzip2");
    await open([tbz]);
    expect(await page.getAttribute("section.file.package", "data-package")).toBe("bzip2");
    expect((await members()).map((m) => m.name)).toEqual(["lib.tar.bz2!lib/app", "lib.tar.bz2!lib/fat.o"]);
    expect((await members()).map((m) => m.name)).toEqual(want.members.map((m: any) => m.path));
    // The whole report, byte for byte: the same entries, offsets and sizes as `offload-kit ls --json` (which decoded with the bzip2 program).
    expect(await savedReport()).toBe(ls.stdout);
    expect(pageErrors).toEqual([]);
  }, HANG_MS);

  it.skipIf(ZIP === undefined)("a wheel (zip, deflate members): the same, and a plain file beside it still reads as a file", async () => {
    const stage = join(dir, "wheel");
    mkdirSync(join(stage, "pkg/lib"), { recursive: true });
    copyFileSync(join(HOSTS, "app"), join(stage, "pkg/lib/app"));
    copyFileSync(join(HOSTS, "libboth.a"), join(stage, "pkg/lib/libboth.a"));
    writeFileSync(join(stage, "pkg/__init__.py"), "# nothing here\n");
    const zipped = spawnSync(ZIP!, ["-q", "-r", "../pkg-1.0-py3-none-linux_x86_64.whl", "pkg"], { cwd: stage, encoding: "utf8" });
    expect(zipped.status, zipped.stderr).toBe(0);
    copyFileSync(join(HOSTS, "fat.o"), join(dir, "fat.o"));
    const ls = kit(["ls", "--json", "pkg-1.0-py3-none-linux_x86_64.whl", "fat.o"], dir);
    expect(ls.status, ls.stderr).toBe(0);
    const want = JSON.parse(ls.stdout).files;
    expect(want[0].package.format).toBe("zip");
    await open([join(dir, "pkg-1.0-py3-none-linux_x86_64.whl"), join(dir, "fat.o")]);
    expect((await members()).map((m) => m.name)).toEqual(want[0].members.map((m: any) => m.path));
    expect(want[0].members.map((m: any) => m.member.join("!"))).toEqual(["pkg/lib/app", "pkg/lib/libboth.a"]);
    expect(Number(await page.getAttribute("section.file.package", "data-without-device-code"))).toBe(1);
    // The plain file is shown as before, its entries downloadable.
    const plain = page.locator('section.file[data-name="fat.o"]');
    expect(await plain.count()).toBe(1);
    expect(await plain.locator("button.prune").getAttribute("title")).not.toContain("members of a package");
    // A member of the wheel (deflated): an entry of libboth.a's first bundle, as offload-kit extract of the
    // unpacked archive gives it (the fixture's bytes at ls --json's offset, in the archive member).
    const both = want[0].members[1];
    const member = page.locator("section.file.member").nth(1);
    await member.locator("details.bundle summary").first().click();
    await expect.poll(() => member.locator("tr.entry").count()).toBe(both.bundles[0].entries.length);
    const k = both.bundles[0].entries.findIndex((x: any) => x.size > 0);
    const got = await download(() => member.locator("tr.entry").nth(k).locator("button.download").click());
    const unpacked = JSON.parse(kit(["ls", "--json", join(stage, "pkg/lib/libboth.a")], dir).stdout).files[0].bundles[0].entries[k];
    expect(unpacked.size).toBe(got.bytes.length);
    expect(got.bytes.equals(readFileSync(join(HOSTS, "libboth.a")).subarray(unpacked.offset, unpacked.offset + unpacked.size))).toBe(true);
    expect(await savedReport()).toBe(ls.stdout);
    expect(pageErrors).toEqual([]);
  }, HANG_MS * 2);

  it("a member that is a bundle, CCOB, fat object or archive downloads pruned for the GPU, as offload-kit prune writes it", async () => {
    const work = join(dir, "prune");
    mkdirSync(work, { recursive: true });
    const G = "hipv4-amdgcn-amd-amdhsa--";
    for (const [name, text] of Object.entries({ "h.txt": "host", "m.txt": "xnack- code", "p.txt": "xnack+ code!", "s.txt": "gfx906 code" })) writeFileSync(join(work, name), text);
    const inputs = [`-targets=host-x86_64-unknown-linux-gnu,${G}gfx90a:xnack-,${G}gfx90a:xnack+,${G}gfx906`, "-input=h.txt", "-input=m.txt", "-input=p.txt", "-input=s.txt"];
    for (const [name, args] of [["both.bc", ["-type=bc"]], ["both.i", ["-type=i"]], ["both.ccob", ["-type=bc", "-compress"]]] as const) {
      const r = spawnSync(BUNDLER, [...args, ...inputs, `-output=${name}`], { cwd: work, encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
    }
    const v3 = kit(["compress", "--format=3", "both.bc", "-o", "both3.ccob"], work);
    expect(v3.status, v3.stderr).toBe(0);
    copyFileSync(join(HOSTS, "fat.o"), join(work, "fat.o"));
    copyFileSync(join(HOSTS, "libboth.a"), join(work, "libboth.a"));
    copyFileSync(join(HOSTS, "app"), join(work, "app"));
    const names = ["both.bc", "both.i", "both.ccob", "both3.ccob", "fat.o", "libboth.a", "app"];
    writeFileSync(join(dir, "code.tar.gz"), gzipSync(tarOf(names.map((n) => tarEntry(`lib/${n}`, readFileSync(join(work, n)))))));
    await open([join(dir, "code.tar.gz")]);
    expect((await members()).map((m) => m.name)).toEqual(names.map((n) => `code.tar.gz!lib/${n}`));
    const app = page.locator("section.file.member").nth(names.indexOf("app")).locator("button.prune");
    for (const gpu of ["gfx90a:xnack-", "gfx906"]) {
      await page.fill("#gpu", gpu);
      for (const [i, n] of names.entries()) {
        if (n === "app") continue;
        const section = page.locator("section.file.member").nth(i);
        const button = section.locator("button.prune");
        await page.waitForFunction(([k, g]) => document.querySelectorAll("section.file.member")[k]?.querySelector("button.prune")?.textContent === `Download, pruned for ${g}`, [i, gpu] as const);
        const out = join(work, `${n}.${gpu}.out`);
        const cli = kit(["prune", `--keep=${gpu}`, n, "-o", out], work);
        if (cli.status !== 0) {
          // Refused by the CLI (nothing left for the GPU in some bundle): the page says the same and saves nothing.
          await button.click();
          await section.locator(".prune-note.error").waitFor();
          expect(await section.locator(".prune-note.error").textContent()).toContain(cli.stderr.split(": ").at(-1)!.trim());
          continue;
        }
        const got = await download(() => button.click());
        const want = readFileSync(out);
        expect({ gpu, n, equal: got.bytes.equals(want), size: got.bytes.length }).toEqual({ gpu, n, equal: true, size: want.length });
        expect(got.name).toBe(`${n.replace(/(\.[^.]*)?$/, `-${gpu.replace(/:/g, "_")}$1`)}`);
        // Every byte came from the worker: a member is not a slice of the File.
        const last = JSON.parse((await section.getAttribute("data-last-prune"))!);
        expect({ ranges: last.ranges, made: last.made }).toEqual({ ranges: 0, made: want.length });
      }
      // The linked ELF member: refused with the reason a linked ELF file gets.
      expect(await app.isDisabled()).toBe(true);
      expect(await app.getAttribute("title")).toContain("not offered for linked ELF files");
    }
    await page.fill("#gpu", "");
    expect(pageErrors).toEqual([]);
  }, HANG_MS * 2);

  it("a wheel downloads pruned for the GPU as offload-kit prune x.whl -o out.whl writes it, member for member (RECORD rewritten, untouched members as stored); a .tar.gz is written too, its tar the CLI's, and a wheel inside a .tar.gz", async () => {
    const work = join(dir, "wheel-prune");
    mkdirSync(work, { recursive: true });
    const G = "hipv4-amdgcn-amd-amdhsa--";
    for (const [name, text] of Object.entries({ "h.txt": "host", "m.txt": "xnack- code", "p.txt": "xnack+ code!", "s.txt": "gfx906 code" })) writeFileSync(join(work, name), text);
    const r = spawnSync(BUNDLER, ["-type=bc", `-targets=host-x86_64-unknown-linux-gnu,${G}gfx90a:xnack-,${G}gfx90a:xnack+,${G}gfx906`, "-input=h.txt", "-input=m.txt", "-input=p.txt", "-input=s.txt", "-output=both.bc"], { cwd: work, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    // A wheel as Python writes one (zipfile, deflate level 6), with a RECORD listing every member's sha256.
    const members: [string, string][] = [["pkg/__init__.py", join(work, "h.txt")], ["pkg/lib/both.bc", join(work, "both.bc")], ["pkg/lib/fat.o", join(HOSTS, "fat.o")], ["pkg/lib/app", join(HOSTS, "app")]];
    const script = [
      "import base64, hashlib, json, sys, zipfile",
      "members = json.loads(sys.argv[2])",
      "rows = []",
      "with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:",
      "    for name, path in members:",
      "        data = open(path, 'rb').read()",
      "        z.writestr(name, data)",
      "        rows.append('%s,sha256=%s,%d' % (name, base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode(), len(data)))",
      "    z.writestr('pkg-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\n')",
      "    rows.append('pkg-1.0.dist-info/RECORD,,')",
      "    z.writestr('pkg-1.0.dist-info/RECORD', '\\n'.join(rows) + '\\n')",
    ].join("\n");
    const made = spawnSync("python3", ["-c", script, join(work, "pkg-1.0-py3-none-any.whl"), JSON.stringify(members)], { encoding: "utf8" });
    expect(made.status, made.stderr).toBe(0);
    writeFileSync(join(work, "code.tar.gz"), gzipSync(tarOf([tarEntry("lib/both.bc", readFileSync(join(work, "both.bc")))])));
    await open([join(work, "pkg-1.0-py3-none-any.whl"), join(work, "code.tar.gz")]);
    const wheel = page.locator('section.file.package[data-name="pkg-1.0-py3-none-any.whl"]');
    const button = wheel.locator(".package-actions button.prune");
    const describe = (path: string) => {
      const run = spawnSync("python3", ["-c", [
        "import hashlib, json, sys, zipfile",
        "z = zipfile.ZipFile(sys.argv[1])",
        "print(json.dumps([[i.filename, i.CRC, i.file_size, i.compress_type, i.compress_size, hashlib.sha256(z.read(i)).hexdigest()] for i in z.infolist()]))",
      ].join("\n"), path], { encoding: "utf8" });
      expect(run.status, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as [string, number, number, number, number, string][];
    };
    let written = 0;
    for (const gpu of ["gfx90a:xnack-", "gfx906", "gfx1100"]) {
      await page.fill("#gpu", gpu);
      await page.waitForFunction((g) => document.querySelector(".package-actions button.prune")?.textContent === `Download, pruned for ${g}`, gpu);
      const out = join(work, `out-${gpu}.whl`);
      const cli = kit(["prune", `--keep=${gpu}`, "pkg-1.0-py3-none-any.whl", "-o", out], work);
      if (cli.status !== 0) {
        // Refused by the CLI: the page says the same and saves nothing.
        await button.click();
        await wheel.locator(".package-actions .prune-note.error").waitFor();
        expect(await wheel.locator(".package-actions .prune-note.error").textContent()).toContain(cli.stderr.trim().split(": ").slice(-1)[0]);
        continue;
      }
      const got = await download(() => button.click());
      // Every member as the CLI writes it: same names and order, same contents, CRC-32 and sizes, RECORD the
      // same; members not edited copied as their stored bytes (same compressed size). The deflate streams of
      // the edited members are Chromium's zlib's (CompressionStream), not Node's: they decode to the same bytes
      // but are not the same bytes (docs/browser.md), so the package as a whole is compared member by member.
      const pagePath = join(work, `page-${gpu}.whl`);
      writeFileSync(pagePath, got.bytes);
      const before = new Map(describe(join(work, "pkg-1.0-py3-none-any.whl")).map((m) => [m[0], m]));
      const cliMembers = describe(out);
      const pageMembers = describe(pagePath);
      expect(pageMembers.map((m) => [m[0], m[1], m[2], m[3], m[5]])).toEqual(cliMembers.map((m) => [m[0], m[1], m[2], m[3], m[5]]));
      cliMembers.forEach((m, i) => {
        if (before.get(m[0])?.[1] === m[1]) expect(pageMembers[i]![4], m[0]).toBe(m[4]);
      });
      expect(cliMembers.filter((m) => before.get(m[0])?.[1] !== m[1]).map((m) => m[0])).toContain("pkg-1.0.dist-info/RECORD");
      if (UNZIP !== undefined) expect(spawnSync(UNZIP, ["-tq", pagePath], { encoding: "utf8" }).status).toBe(0);
      // A wheel keeps its name: pip reads its tags from it.
      expect(got.name).toBe("pkg-1.0-py3-none-any.whl");
      // Members copied as they were are slices of the File; the edited ones and the directory made in the worker.
      const last = JSON.parse((await wheel.getAttribute("data-last-prune"))!);
      expect(last.ranges).toBeGreaterThan(0);
      expect(last.made).toBeLessThan(got.bytes.length);
      written++;
    }
    expect(written).toBeGreaterThan(0);
    // A .tar.gz: written in the page too (src/browser/prune-package/tarball.ts), its tar the CLI's byte for byte.
    const tgz = page.locator('section.file.package[data-name="code.tar.gz"]');
    await page.fill("#gpu", "gfx906");
    await page.waitForFunction(() => document.querySelectorAll(".package-actions button.prune")[1]?.textContent === "Download, pruned for gfx906");
    const cliTgz = kit(["prune", "--keep=gfx906", "code.tar.gz", "-o", "cli-code.tar.gz"], work);
    expect(cliTgz.status, cliTgz.stderr).toBe(0);
    const gotTgz = await download(() => tgz.locator(".package-actions button.prune").click());
    expect(gotTgz.name).toBe("code-gfx906.tar.gz");
    expect(gunzipSync(gotTgz.bytes).equals(gunzipSync(readFileSync(join(work, "cli-code.tar.gz"))))).toBe(true);
    // A wheel inside a .tar.gz: written by the wheel's writer inside the tarball's, as the CLI writes it (the
    // wheel's edited members deflated by Chromium's zlib, so compared member by member, unpacked by tar).
    writeFileSync(join(work, "nested.tar.gz"), gzipSync(tarOf([tarEntry("lib/both.bc", readFileSync(join(work, "both.bc"))), tarEntry("wheels/pkg-1.0-py3-none-any.whl", readFileSync(join(work, "pkg-1.0-py3-none-any.whl")))])));
    await open([join(work, "nested.tar.gz")]);
    const nested = page.locator('section.file.package[data-name="nested.tar.gz"]');
    await page.fill("#gpu", "gfx906");
    await nested.locator(".package-actions button.prune", { hasText: "Download, pruned for gfx906" }).waitFor();
    const cliNested = kit(["prune", "--keep=gfx906", "nested.tar.gz", "-o", "cli-nested.tar.gz"], work);
    expect(cliNested.status, cliNested.stderr).toBe(0);
    const gotNested = await download(() => nested.locator(".package-actions button.prune").click());
    writeFileSync(join(work, "page-nested.tar.gz"), gotNested.bytes);
    for (const side of ["cli", "page"]) {
      mkdirSync(join(work, `${side}-nested`));
      expect(spawnSync("tar", ["-xzf", `${side}-nested.tar.gz`, "-C", `${side}-nested`], { cwd: work }).status).toBe(0);
    }
    expect(readFileSync(join(work, "page-nested/lib/both.bc")).equals(readFileSync(join(work, "cli-nested/lib/both.bc")))).toBe(true);
    const innerWheel = (side: string) => describe(join(work, `${side}-nested/wheels/pkg-1.0-py3-none-any.whl`)).map((m) => [m[0], m[1], m[2], m[3], m[5]]);
    expect(innerWheel("page")).toEqual(innerWheel("cli"));
    expect(innerWheel("page")).not.toEqual(describe(join(work, "pkg-1.0-py3-none-any.whl")).map((m) => [m[0], m[1], m[2], m[3], m[5]]));
    await page.fill("#gpu", "");
    expect(pageErrors).toEqual([]);
  }, HANG_MS * 2);

  it.skipIf(ROCRAND_DEB === undefined)("librocrand1's .deb (ar, xz data.tar, a 25 MB library): its member with device code, as ls --json reports it", async () => {
    copyFileSync(join(APT_CACHE, ROCRAND_DEB!), join(dir, ROCRAND_DEB!));
    const ls = kit(["ls", "--json", ROCRAND_DEB!], dir);
    expect(ls.status, ls.stderr).toBe(0);
    const want = JSON.parse(ls.stdout).files[0];
    expect(want.members.length).toBeGreaterThan(0);
    await open([join(dir, ROCRAND_DEB!)]);
    expect(await page.getAttribute("section.file.package", "data-package")).toBe("deb");
    expect((await members()).map((m) => m.name)).toEqual(want.members.map((m: any) => m.path));
    // The same report, but for what the spooler did: the CLI spools a member this large to disk, the page
    // keeps members in memory (nothing spooled to disk, ever).
    const saved = JSON.parse(await savedReport());
    expect(saved.files[0].package.spooledToDisk).toBe(0);
    const unspooled = (report: any) => ({ ...report, files: report.files.map((f: any) => ({ ...f, package: { ...f.package, spooledToDisk: undefined, largestSpooled: undefined, streamed: undefined } })) });
    expect(unspooled(saved)).toEqual(unspooled(JSON.parse(ls.stdout)));
    // An entry downloaded from the member (the 25 MB library decoded from data.tar.xz again, in the worker)
    // is the installed library's bytes at ls --json's offset, when the installed one is this very file.
    const installed = "/usr/lib/x86_64-linux-gnu/librocrand.so.1.1";
    const lib = want.members.find((m: any) => m.path.endsWith("!usr/lib/x86_64-linux-gnu/librocrand.so.1.1"));
    if (lib !== undefined && existsSync(installed) && readFileSync(installed).length === lib.size) {
      const member = page.locator("section.file.member").first();
      await member.locator("details.bundle summary").first().click();
      const k = lib.bundles[0].entries.findIndex((x: any) => x.size > 0);
      await member.locator("tr.entry").nth(k).waitFor();
      const got = await download(() => member.locator("tr.entry").nth(k).locator("button.download").click());
      const e = lib.bundles[0].entries[k];
      expect(got.bytes.equals(readFileSync(installed).subarray(e.offset, e.offset + e.size))).toBe(true);
    }
    expect(pageErrors).toEqual([]);
  }, HANG_MS * 2);

  it.skipIf(ROCRAND_DEB === undefined)("librocrand1's .deb downloads pruned for gfx90a: data.tar.xz written by our xz encoder, decoding to the CLI's data.tar; dpkg-deb -x and md5sum -c accept it", async () => {
    if (!existsSync(join(dir, ROCRAND_DEB!))) copyFileSync(join(APT_CACHE, ROCRAND_DEB!), join(dir, ROCRAND_DEB!));
    const cli = kit(["prune", "--keep=gfx90a", "-o", "cli-rocrand.deb", ROCRAND_DEB!], dir);
    expect(cli.status, cli.stderr).toBe(0);
    await open([join(dir, ROCRAND_DEB!)]);
    await page.fill("#gpu", "gfx90a");
    await page.waitForFunction(() => document.querySelector(".package-actions button.prune")?.textContent === "Download, pruned for gfx90a");
    const got = await download(() => page.locator(".package-actions button.prune").click());
    expect(got.name).toBe(ROCRAND_DEB!.replace(/\.deb$/, "-gfx90a.deb"));
    const pagePath = join(dir, "page-rocrand.deb");
    writeFileSync(pagePath, got.bytes);
    // Each tar inside decodes to the CLI's (the library pruned to the same bytes, every other tar byte kept).
    const tarOfDeb = (deb: string, what: "--fsys-tarfile" | "--ctrl-tarfile") => spawnSync("dpkg-deb", [what, deb], { maxBuffer: 1 << 30 }).stdout as Buffer;
    expect(tarOfDeb(pagePath, "--fsys-tarfile").equals(tarOfDeb(join(dir, "cli-rocrand.deb"), "--fsys-tarfile"))).toBe(true);
    expect(tarOfDeb(pagePath, "--ctrl-tarfile").equals(tarOfDeb(join(dir, "cli-rocrand.deb"), "--ctrl-tarfile"))).toBe(true);
    expect(spawnSync("xz", ["-t"], { input: spawnSync("sh", ["-c", `ar p '${pagePath}' data.tar.xz`], { maxBuffer: 1 << 30 }).stdout }).status).toBe(0);
    const unpacked = join(dir, "page-rocrand-x");
    expect(spawnSync("dpkg-deb", ["-x", pagePath, unpacked]).status).toBe(0);
    expect(spawnSync("dpkg-deb", ["-e", pagePath, join(unpacked, "DEBIAN")]).status).toBe(0);
    expect(spawnSync("md5sum", ["--quiet", "-c", "DEBIAN/md5sums"], { cwd: unpacked, encoding: "utf8" }).status).toBe(0);
    // What is installed shrinks, and so does the download: the xz encoder's normal mode (optimal parsing) comes within
    // about 1% of xz -6 (docs/compression.md), so the pruned .deb is smaller than Debian's (its fast mode's was not).
    const installedSize = (deb: string) => Number(spawnSync("dpkg-deb", ["-f", deb, "Installed-Size"], { encoding: "utf8" }).stdout.trim());
    expect(installedSize(pagePath)).toBeLessThan(installedSize(join(dir, ROCRAND_DEB!)));
    expect(installedSize(pagePath)).toBe(installedSize(join(dir, "cli-rocrand.deb")));
    const [ours, debian, cliDeb] = [got.bytes.length, readFileSync(join(dir, ROCRAND_DEB!)).length, readFileSync(join(dir, "cli-rocrand.deb")).length];
    console.log(`librocrand1 .deb pruned for gfx90a: page ${ours} bytes, CLI (xz -6) ${cliDeb}, Debian's ${debian}`);
    expect(ours).toBeLessThan(debian);
    expect(ours).toBeLessThan(cliDeb * 1.03);
    await page.fill("#gpu", "");
    expect(pageErrors).toEqual([]);
  }, HANG_MS * 4);
});
