// Issue 26 item 1: prune, compress and decompress over folders, as whole processes (the built CLI). A tree of real
// fat binaries (test/fixtures/hosts), a file without device code, hard links, links inside and pointing out, and a
// file with device code reached only through a link from outside: edited in place, mirrored with --out-dir (hard
// links or --copy), and planned by --dry-run with the same numbers; every edited file is byte for byte what the
// single-file command writes for it; nothing outside the tree (or the mirror) changes.
import * as zlib from "node:zlib";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, linkSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";

const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;
const HOSTS = new URL("../fixtures/hosts/", import.meta.url).pathname;

function kit(cwd: string, ...args: string[]) {
  const env: Record<string, string | undefined> = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: "utf8", timeout: HANG_MS, env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Every entry below `dir`: kind, bytes (base64) or link text, inode, mode, mtime (files). */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (path: string, rel: string) => {
    for (const name of readdirSync(path).sort()) {
      const p = join(path, name);
      const r = rel === "" ? name : `${rel}/${name}`;
      const s = lstatSync(p);
      if (s.isSymbolicLink()) out[r] = `link ${readlinkSync(p)}`;
      else if (s.isDirectory()) {
        out[r] = `dir ${s.mode & 0o7777}`;
        visit(p, r);
      } else out[r] = `file ${s.ino} ${s.mode & 0o7777} ${s.mtimeMs} ${readFileSync(p).toString("base64")}`;
    }
  };
  visit(dir, "");
  return out;
}

/**
 * `work/venv`: lib/app (a linked HIP executable, also hard-linked as lib/app.hard), lib/sub/libboth.a (an
 * archive), lib/sub/fat.o, share/readme.txt (no device code), lib/app.sym -> app, lib/escape -> ../../outside
 * (a folder outside holding a fat binary), lib/abs -> /etc; `work/outside/app` must never change.
 */
function tree(): { work: string; venv: string; outside: string } {
  const work = scratchDir("offload-kit-trees-");
  const venv = join(work, "venv");
  mkdirSync(join(venv, "lib/sub"), { recursive: true });
  mkdirSync(join(venv, "share"), { recursive: true });
  mkdirSync(join(work, "outside"));
  copyFileSync(join(HOSTS, "app"), join(venv, "lib/app"));
  chmodSync(join(venv, "lib/app"), 0o755);
  linkSync(join(venv, "lib/app"), join(venv, "lib/app.hard"));
  copyFileSync(join(HOSTS, "libboth.a"), join(venv, "lib/sub/libboth.a"));
  copyFileSync(join(HOSTS, "fat.o"), join(venv, "lib/sub/fat.o"));
  writeFileSync(join(venv, "share/readme.txt"), "no device code here\n");
  chmodSync(join(venv, "share"), 0o750);
  symlinkSync("app", join(venv, "lib/app.sym"));
  symlinkSync("../../outside", join(venv, "lib/escape"));
  symlinkSync("/etc", join(venv, "lib/abs"));
  copyFileSync(join(HOSTS, "app"), join(work, "outside/app"));
  return { work, venv, outside: join(work, "outside") };
}

const EDITED = ["lib/app", "lib/sub/fat.o", "lib/sub/libboth.a"];
// omp.o in libboth.a holds only gfx906 code: keeping gfx90a alone would leave it empty.
const KEEP = ["--keep=gfx90a", "--allow-empty"];

/** What `prune -o` writes for each file alone. */
function singleFile(work: string, venv: string, args: readonly string[]): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  mkdirSync(join(work, "single"), { recursive: true });
  for (const rel of EDITED) {
    const target = join(work, "single", rel.replaceAll("/", "_"));
    const r = kit(work, ...args, "-o", target, join(venv, rel));
    expect([r.code, r.stderr]).toEqual([0, ""]);
    out[rel] = readFileSync(target);
  }
  return out;
}

describe("prune over a folder", () => {
  it("--out-dir mirrors the tree: edited files as the single-file prune writes them, the rest hard-linked, links kept, hard links kept, nothing else touched", () => {
    const { work, venv, outside } = tree();
    const expected = singleFile(work, venv, ["prune", ...KEEP]);
    const before = snapshot(work);
    mkdirSync(join(work, "out"));
    const r = kit(work, "prune", ...KEEP, "--out-dir=out", "venv");
    expect([r.code, r.stderr]).toEqual([0, ""]);
    // The input tree, the folder outside and the single-file outputs are as they were.
    const after = snapshot(work);
    for (const [rel, value] of Object.entries(before)) expect(after[rel], rel).toBe(value);
    expect(readFileSync(join(outside, "app"))).toEqual(readFileSync(join(HOSTS, "app")));
    const mirror = join(work, "out/venv");
    for (const rel of EDITED) expect(readFileSync(join(mirror, rel)).equals(expected[rel]!), rel).toBe(true);
    // The two names of lib/app stay one file, edited; the file without code is the input's own inode.
    expect(statSync(join(mirror, "lib/app.hard")).ino).toBe(statSync(join(mirror, "lib/app")).ino);
    expect(statSync(join(mirror, "lib/app")).mode & 0o777).toBe(0o755);
    expect(statSync(join(mirror, "share/readme.txt")).ino).toBe(statSync(join(venv, "share/readme.txt")).ino);
    expect(statSync(join(mirror, "share")).mode & 0o777).toBe(0o750);
    expect(readlinkSync(join(mirror, "lib/app.sym"))).toBe("app");
    expect(readlinkSync(join(mirror, "lib/escape"))).toBe("../../outside");
    expect(readlinkSync(join(mirror, "lib/abs"))).toBe("/etc");
    expect(readdirSync(join(work, "out"))).toEqual(["venv"]);
    // One line per edited file (paths as given), the folder's line, one total with the code dropped per GPU.
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines.filter((l) => l.startsWith("venv/lib/")).map((l) => l.slice(0, l.indexOf(":")))).toEqual(["venv/lib/app", "venv/lib/sub/fat.o", "venv/lib/sub/libboth.a"]);
    expect(r.stdout).toContain("venv/lib/app: linked ELF (9 entries: host, gfx906, gfx90a), ");
    expect(r.stdout).toContain(" -> out/venv/lib/app\n");
    expect(r.stdout).toMatch(/^venv: folder, 4 files, 3 with device code, 3 symbolic links kept as links, 2 of them pointing outside the folder \(not followed\), 1 hard-linked file \(edited once\) -> out\/venv \(1 unchanged files hard-linked, 0 copied\)$/m);
    expect(r.stdout).toMatch(/^total: 3 files, 3 changed, \d+ -> \d+ bytes, saves \d+ \(\d+\.\d%\)\n {2}code dropped, by GPU: gfx906 \d+ entries \d+ bytes\n$/m);
    // A second run finds the mirror there and refuses to write into it.
    const again = kit(work, "prune", ...KEEP, "--out-dir=out", "venv");
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("'out/venv' exists already");
  });

  it("--copy copies the unchanged files (one copy per hard-linked file); the edited ones are the same", () => {
    const { work, venv } = tree();
    linkSync(join(venv, "share/readme.txt"), join(venv, "share/readme.again"));
    mkdirSync(join(work, "out"));
    const r = kit(work, "prune", "--keep=gfx906", "--out-dir=out", "--copy", "venv");
    expect([r.code, r.stderr]).toEqual([0, ""]);
    const mirror = join(work, "out/venv");
    const copy = statSync(join(mirror, "share/readme.txt"));
    expect(copy.ino).not.toBe(statSync(join(venv, "share/readme.txt")).ino);
    expect(statSync(join(mirror, "share/readme.again")).ino).toBe(copy.ino);
    expect(readFileSync(join(mirror, "share/readme.txt"), "utf8")).toBe("no device code here\n");
    expect(r.stdout).toContain("-> out/venv (0 unchanged files hard-linked, 1 copied)");
  });

  it("--in-place edits each file with device code where it is: every hard link sees the edit, the rest is untouched, nothing outside changes", () => {
    const { work, venv, outside } = tree();
    const expected = singleFile(work, venv, ["prune", ...KEEP]);
    const before = snapshot(venv);
    const inode = statSync(join(venv, "lib/app")).ino;
    const r = kit(work, "prune", ...KEEP, "--in-place", "venv/");
    expect([r.code, r.stderr]).toEqual([0, ""]);
    for (const rel of EDITED) expect(readFileSync(join(venv, rel)).equals(expected[rel]!), rel).toBe(true);
    expect(statSync(join(venv, "lib/app")).ino).toBe(inode);
    expect(readFileSync(join(venv, "lib/app.hard")).equals(expected["lib/app"]!)).toBe(true);
    const after = snapshot(venv);
    for (const rel of ["share/readme.txt", "share", "lib/app.sym", "lib/escape", "lib/abs"]) expect(after[rel], rel).toBe(before[rel]);
    expect(readFileSync(join(outside, "app"))).toEqual(readFileSync(join(HOSTS, "app")));
    expect(r.stdout).toContain("venv/lib/app: linked ELF");
    expect(r.stdout).toContain(" (in place)\n");
    // Run again: nothing left to drop, nothing written.
    const again = kit(work, "prune", ...KEEP, "--in-place", "venv");
    expect([again.code, again.stderr]).toEqual([0, ""]);
    expect(again.stdout).toMatch(/^total: 3 files, 0 changed, (\d+) -> \1 bytes, saves 0 /m);
    expect(snapshot(venv)).toEqual(after);
  });

  it("--dry-run writes nothing and reports the numbers the real run then reports (--json: files, folders, total, per GPU, warnings, notes)", () => {
    const { work } = tree();
    const before = snapshot(work);
    const dry = kit(work, "prune", ...KEEP, "--dry-run", "--json", "venv");
    expect([dry.code, dry.stderr]).toEqual([0, ""]);
    expect(snapshot(work)).toEqual(before);
    mkdirSync(join(work, "out"));
    const real = kit(work, "prune", ...KEEP, "--out-dir=out", "--json", "venv");
    expect([real.code, real.stderr]).toEqual([0, ""]);
    const d = JSON.parse(dry.stdout);
    const w = JSON.parse(real.stdout);
    expect(d.dryRun).toBe(true);
    expect(d.total).toEqual(w.total);
    expect(d.droppedByGpu).toEqual(w.droppedByGpu);
    expect(d.droppedByGpu.map((g: { gpu: string }) => g.gpu)).toEqual(["gfx906"]);
    expect(d.files.map((f: { input: string; outputSize: number }) => [f.input, f.outputSize])).toEqual(w.files.map((f: { input: string; outputSize: number }) => [f.input, f.outputSize]));
    expect(w.files.map((f: { folder: string; output: string }) => [f.folder, f.output])).toEqual(EDITED.map((rel) => ["venv", `out/venv/${rel}`]));
    for (const rel of EDITED) expect(statSync(join(work, "out/venv", rel)).size).toBe(w.files.find((f: { input: string }) => f.input === `venv/${rel}`).outputSize);
    expect(w.folders[0]).toMatchObject({ root: "venv", mirror: "out/venv", files: 4, withDeviceCode: 3, symlinks: 3, hardLinked: 1, linked: 1, copied: 0, linksLeavingTree: ["venv/lib/escape", "venv/lib/abs"].sort() });
    expect(w.warnings).toEqual([]);
    // The app's CCOB is re-encoded: with the WebAssembly zstd (Node 20) its level cannot be told from its bytes and a
    // note says so; Node 24's libzstd reproduces the stored bytes and has nothing to note. Either way both runs agree.
    const notesOf = (report: { files: { input: string; notes: string[] }[] }) => report.files.find((f) => f.input === "venv/lib/app")!.notes;
    expect(notesOf(w)).toEqual(notesOf(d));
    if (process.env.OFFLOAD_KIT_ZSTD === "wasm" || !("zstdCompressSync" in zlib)) expect(notesOf(w).length).toBeGreaterThan(0);
    // A GPU listed that nothing holds: a warning, in --json too.
    const warned = JSON.parse(kit(work, "prune", "--keep=gfx90a,gfx1100", "--allow-empty", "--dry-run", "--json", "venv").stdout);
    expect(warned.warnings).toEqual(["--keep: no entry in the inputs is for gfx1100"]);
  });

  it("refuses -o for a folder, an --out-dir inside the folder, and writes nothing", () => {
    const { work, venv } = tree();
    const before = snapshot(work);
    const o = kit(work, "prune", ...KEEP, "-o", "x", "venv");
    expect(o.code).toBe(1);
    expect(o.stderr).toContain("'venv' is a folder: -o names one output file");
    const inside = kit(work, "prune", ...KEEP, "--out-dir=venv/share", "venv");
    expect(inside.code).toBe(1);
    expect(inside.stderr).toContain("would lie inside the folder 'venv'");
    expect(snapshot(work)).toEqual(before);
    expect(existsIn(venv, "share")).toEqual(["readme.txt"]);
  });

  it("a file with device code no editor takes is left as it is, with the reason", () => {
    const { work, venv } = tree();
    // A standalone AMDGPU code object (as rocBLAS ships its kernels) is device code by check's rule, but no container prune edits.
    mkdirSync(join(work, "ex"));
    expect(kit(work, "extract", "--out-dir=ex", join(HOSTS, "app")).code).toBe(0);
    copyFileSync(join(work, "ex/app-0-hipv4-amdgcn-amd-amdhsa--gfx906"), join(venv, "share/kernels.co"));
    const before = snapshot(venv);
    const r = kit(work, "prune", ...KEEP, "--in-place", "venv");
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toMatch(/^venv\/share\/kernels\.co: left as it is: e_machine 224 at offset 18: only x86-64 \(62\) and AArch64 \(183\) are edited$/m);
    expect(r.stdout).toContain("venv: folder, 5 files, 4 with device code, 1 of them left as they are (nothing this command edits)");
    expect(snapshot(venv)["share/kernels.co"]).toBe(before["share/kernels.co"]);
  });
});

function existsIn(dir: string, sub: string): string[] {
  return readdirSync(join(dir, sub)).sort();
}

describe("compress and decompress over a folder", () => {
  it("compress --out-dir then decompress --in-place of the mirror: the bundles come back byte for byte", () => {
    const { work, venv } = tree();
    mkdirSync(join(work, "out"));
    const c = kit(work, "compress", "--out-dir=out", "venv");
    expect([c.code, c.stderr]).toEqual([0, ""]);
    expect(c.stdout).toMatch(/^venv: folder, 4 files, 3 with device code/m);
    expect(c.stdout).toMatch(/^total: 3 files, \d changed, /m);
    const d = kit(work, "decompress", "--in-place", "out/venv");
    expect([d.code, d.stderr]).toEqual([0, ""]);
    // fat.o holds plain bundles: compressed then decompressed, it is the input again.
    expect(readFileSync(join(work, "out/venv/lib/sub/fat.o"))).toEqual(readFileSync(join(venv, "lib/sub/fat.o")));
  });
});
