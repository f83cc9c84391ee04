// ls, sizes and extract of a folder walk it as check does (src/inspect/node/folders.ts): fat binaries in
// subfolders (two of them named libfoo.so), `ln -s . self`, a link to a file (counted once), a text file
// (skipped), a wheel and a .tar.gz (opened as packages). Their --json equals naming each file found on the
// command line; extract gives two same-named files two distinct outputs with their own bytes. An unreadable
// subfolder is reported and skipped (as nobody, through setpriv, where this runs as root).
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { flattenFoundPath } from "../../src/inspect/node/folders.js";
import { HANG_MS } from "../limits.js";
import { HOSTS, haveTools, tarEntry, tarOf, tool } from "../packages/build.js";
import { runInDir, scratchDir } from "./harness.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const BIN = join(ROOT, "dist/bin/offload-kit.js");
const dir = scratchDir("offload-kit-folders-");
const kit = (...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
const json = async (...args: string[]) => {
  const run = await kit(...args, "--json");
  return { code: run.code, stderr: run.stderr, report: JSON.parse(run.stdout.toString()) };
};

mkdirSync(join(dir, "t/a"), { recursive: true });
mkdirSync(join(dir, "t/b/deeper"), { recursive: true });
mkdirSync(join(dir, "t/pkgs"), { recursive: true });
copyFileSync(join(HOSTS, "app"), join(dir, "t/a/libfoo.so"));
copyFileSync(join(HOSTS, "fat.o"), join(dir, "t/b/libfoo.so"));
copyFileSync(join(HOSTS, "libboth.a"), join(dir, "t/b/deeper/libboth.a"));
writeFileSync(join(dir, "t/notes.txt"), "no device code\n");
symlinkSync(".", join(dir, "t/self"));
symlinkSync("a/libfoo.so", join(dir, "t/link.so"));
writeFileSync(join(dir, "t/pkgs/y.tar.gz"), gzipSync(tarOf([tarEntry("lib/app", readFileSync(join(HOSTS, "app"))), tarEntry("doc/readme", Buffer.from("text\n"))])));
const wheelRoot = join(dir, "wheel");
mkdirSync(join(wheelRoot, "torch/lib"), { recursive: true });
copyFileSync(join(HOSTS, "fat.o"), join(wheelRoot, "torch/lib/fat.o"));
writeFileSync(join(wheelRoot, "torch/__init__.py"), "\n");
const zipped = haveTools("zip", "sh") && tool("sh", ["-c", `cd '${wheelRoot}' && zip -q -r '${join(dir, "t/pkgs/x.whl")}' . < /dev/null`]) !== undefined;

/** What the walk finds with offload code, in its order (names sorted, depth first; the link and `self` not again). */
const FOUND = ["t/a/libfoo.so", "t/b/deeper/libboth.a", "t/b/libfoo.so", ...(zipped ? ["t/pkgs/x.whl"] : []), "t/pkgs/y.tar.gz"];
const LOOKED_AT = FOUND.length + 1;

describe("ls, sizes and extract of a folder", () => {
  it("ls --json: the files found, as named one by one; the text skipped and counted, the link once, self not entered", async () => {
    const walked = await json("ls", "t");
    const named = await json("ls", ...FOUND);
    expect([walked.code, walked.stderr]).toEqual([0, ""]);
    expect(walked.report.files).toEqual(named.report.files);
    expect(walked.report.files.map((f: { path: string }) => f.path)).toEqual(FOUND);
    expect(walked.report).toMatchObject({ lookedAt: LOOKED_AT, skipped: ["t/notes.txt"], emptyDirectories: [], unreadable: [] });
    expect(JSON.stringify(walked.report)).not.toMatch(/self\/|link\.so/);
    // Named files alone answer as before: no folder keys (only the warnings every --json carries).
    expect(Object.keys(named.report)).toEqual(["files", "warnings"]);
  });

  it("ls: the text report is the named files' report, then a line counting what was looked at", async () => {
    const walked = await kit("ls", "t");
    const named = await kit("ls", ...FOUND);
    expect(walked.code).toBe(0);
    const line = `in folders: ${LOOKED_AT} files looked at, ${FOUND.length} with offload code, 1 skipped (no offload code)\n`;
    expect(walked.stdout.toString()).toBe(named.stdout.toString() + line);
  });

  it("sizes --json: the same files and the same total as naming them", async () => {
    const walked = await json("sizes", "t");
    const named = await json("sizes", ...FOUND);
    expect([walked.code, walked.stderr]).toEqual([0, ""]);
    expect(walked.report.files).toEqual(named.report.files);
    expect(walked.report.total).toEqual(named.report.total);
    expect(walked.report.total.entries).toBeGreaterThan(0);
    expect(walked.report.skipped).toEqual(["t/notes.txt"]);
    const text = (await kit("sizes", "--by=processor", "t")).stdout.toString();
    expect(text).toMatch(/\ntotal \(\d+ files\): \d+ entries, [\d,]+ bytes/);
    expect(text.endsWith(`in folders: ${LOOKED_AT} files looked at, ${FOUND.length} with offload code, 1 skipped (no offload code)\n`)).toBe(true);
  });

  it("extract --json: the outputs of each file named alone, named after the path below the folder, with the same bytes", async () => {
    const walked = await json("extract", "--out-dir=walked", "t");
    expect([walked.code, walked.stderr]).toEqual([0, ""]);
    const outputs = walked.report.outputs as { path: string; file: string; sha256: string }[];
    let at = 0;
    for (const file of FOUND) {
      // Named alone (two libfoo.so cannot be named in one run: their outputs would meet).
      const out = `alone-${file.replaceAll("/", "-")}`;
      const named = await json("extract", `--out-dir=${out}`, file);
      expect(named.code).toBe(0);
      const mine = outputs.slice(at, at + named.report.outputs.length);
      at += named.report.outputs.length;
      const prefix = dirname(file).slice("t".length + 1).replaceAll("/", "_");
      expect(mine.map((o) => ({ ...o, path: undefined }))).toEqual(named.report.outputs.map((o: object) => ({ ...o, path: undefined })));
      for (const [i, o] of mine.entries()) {
        const alone = named.report.outputs[i].path as string;
        expect(basename(o.path)).toBe(`${prefix === "" ? "" : `${prefix}_`}${basename(alone)}`);
        expect(readFileSync(join(dir, o.path))).toEqual(readFileSync(join(dir, alone)));
      }
    }
    expect(at).toBe(outputs.length);
    expect(walked.report).toMatchObject({ problems: [], errors: [], lookedAt: LOOKED_AT, skipped: ["t/notes.txt"], unreadable: [] });
  });

  it("extract: two libfoo.so in different subfolders give distinct files, flat in --out-dir, each with its own bytes", async () => {
    const run = await json("extract", "--out-dir=two", "t/a", "t/b");
    expect(run.code).toBe(0);
    const paths = run.report.outputs.map((o: { path: string }) => o.path);
    expect(new Set(paths).size).toBe(paths.length);
    for (const p of paths) expect(dirname(p)).toBe("two");
    expect(readdirSync(join(dir, "two")).sort()).toEqual(paths.map((p: string) => basename(p)).sort());
    const gfx906 = run.report.outputs.filter((o: { id: string; file: string }) => o.id.endsWith("gfx906") && o.file.endsWith("libfoo.so"));
    // t/a/libfoo.so (three bundles) and t/b/libfoo.so (one): their gfx906 entries differ.
    expect(gfx906.map((o: { file: string }) => o.file)).toEqual(["t/a/libfoo.so", "t/a/libfoo.so", "t/a/libfoo.so", "t/b/libfoo.so"]);
    const fromA = readFileSync(join(dir, gfx906[0].path));
    const fromB = readFileSync(join(dir, gfx906[3].path));
    expect(fromA.equals(fromB)).toBe(false);
    const a = (await json("extract", "--out-dir=one-a", "t/a/libfoo.so")).report.outputs[1];
    const b = (await json("extract", "--out-dir=one-b", "t/b/libfoo.so")).report.outputs.find((o: { id: string }) => o.id.endsWith("gfx906"));
    expect(fromA).toEqual(readFileSync(join(dir, a.path)));
    expect(fromB).toEqual(readFileSync(join(dir, b.path)));
    const text = (await kit("extract", "--out-dir=two-text", "t/a", "t/b")).stdout.toString();
    // One line per file found, named below the folder as typed, then the one total.
    expect(text).toMatch(/^t\/a\/libfoo\.so: 9 outputs, [\d,]+ bytes\nt\/b\/deeper\/libboth\.a: 4 outputs, [\d,]+ bytes\nt\/b\/libfoo\.so: 3 outputs, [\d,]+ bytes\n/);
    expect(text).toMatch(/\nextracted 16 outputs \(\d+ bytes\) from 3 of 3 files into two-text in \d+\.\d\d s; in folders: 3 files looked at, 3 with offload code, 0 skipped \(no offload code\)\n$/);
  });

  it("a folder without offload files: ls says so (exit 0), extract fails as for a file without any (exit 1)", async () => {
    mkdirSync(join(dir, "plain/sub"), { recursive: true });
    writeFileSync(join(dir, "plain/sub/readme"), "text\n");
    const ls = await kit("ls", "plain");
    expect([ls.code, ls.stdout.toString()]).toEqual([0, "plain: no offload files\nin folders: 1 file looked at, 0 with offload code, 1 skipped (no offload code)\n"]);
    const extract = await json("extract", "--out-dir=none", "plain");
    expect(extract.code).toBe(1);
    expect(extract.report.errors).toEqual([{ file: "plain", code: "NOTHING_TO_EXTRACT", message: "no offload bundles or offload binaries found in any file of the folder" }]);
    expect(existsSync(join(dir, "none"))).toBe(false);
  });

  it("usage errors stay 2 with a folder named", async () => {
    expect((await kit("sizes", "--by=nothing", "t")).code).toBe(2);
    expect((await kit("extract", "--out-dir=x")).code).toBe(2);
  });

  // Root reads every folder: the unreadable case runs the process as nobody, where that is possible.
  const setpriv = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"];
  const asNobody = process.getuid?.() === 0 && existsSync(BIN)
    && spawnSync(setpriv[0]!, [...setpriv.slice(1), process.execPath, "-e", `require("fs").accessSync(${JSON.stringify(BIN)}, 4)`]).status === 0;

  it.skipIf(!asNobody)("an unreadable subfolder: reported on stderr and in --json, skipped, the rest still reported, exit 1", () => {
    const top = scratchDir("offload-kit-folders-nobody-");
    chmodSync(top, 0o777);
    mkdirSync(join(top, "u/ok"), { recursive: true, mode: 0o755 });
    mkdirSync(join(top, "u/locked"), { mode: 0o755 });
    copyFileSync(join(HOSTS, "fat.o"), join(top, "u/ok/fat.o"));
    copyFileSync(join(HOSTS, "app"), join(top, "u/locked/app"));
    chmodSync(join(top, "u/ok/fat.o"), 0o644);
    copyFileSync(join(HOSTS, "fat.o"), join(top, "u/ok/secret.o"));
    chmodSync(join(top, "u/ok/secret.o"), 0o600);
    chmodSync(join(top, "u/locked"), 0o000);
    const nobody = (args: string[]) => {
      const r = spawnSync(setpriv[0]!, [...setpriv.slice(1), process.execPath, BIN, ...args], { cwd: top, encoding: "utf8", timeout: HANG_MS });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    const unreadable = [
      { path: "u/locked", code: "EACCES", message: "'u/locked': Permission denied" },
      { path: "u/ok/secret.o", code: "EACCES", message: "'u/ok/secret.o': Permission denied" },
    ];
    for (const command of ["ls", "sizes", "extract"]) {
      const out = command === "extract" ? [`--out-dir=out-${command}`] : [];
      const text = nobody([command, ...out, "u"]);
      const lines = unreadable.map((u) => `\\S*offload-kit(\\.js)? ${command}: error: ${u.message}\n`);
      expect(text.stderr).toMatch(new RegExp(`^${lines.join("")}$`));
      expect(text.stdout).toContain(command === "extract" ? "from 1 of 1 file" : "u/ok/fat.o:");
      expect(text.stdout).toMatch(/in folders: 2 files looked at, 1 with offload code, 0 skipped \(no offload code\), 2 entries could not be read\n$/);
      expect(text.code).toBe(1);
      const walked = nobody([command, "--json", ...out.map((o) => `${o}-json`), "u"]);
      const report = JSON.parse(walked.stdout);
      expect(report.unreadable).toEqual(unreadable);
      expect(walked.code).toBe(1);
      if (command === "extract") expect(report.outputs.map((o: { file: string }) => o.file)).toEqual(["u/ok/fat.o", "u/ok/fat.o", "u/ok/fat.o"]);
      else expect(report.files.map((f: { path: string }) => f.path)).toEqual(["u/ok/fat.o"]);
    }
  }, HANG_MS * 2);
});

describe("flattenFoundPath: one safe component for a file found in a folder", () => {
  it("keeps a top-level name, joins levels with _, makes \\ and control characters _, and uses a link target's own name", () => {
    expect(flattenFoundPath("t", "t/libfoo.so")).toBe("libfoo.so");
    expect(flattenFoundPath("t/", "t/a/b/libfoo.so")).toBe("a_b_libfoo.so");
    expect(flattenFoundPath(".", "./sub/x.whl")).toBe("sub_x.whl");
    expect(flattenFoundPath("t", "t/a\\..\\b/x\n.so")).toBe("a_.._b_x_.so");
    // A linked file is found under its target, which may be outside the folder (an absolute path).
    expect(flattenFoundPath("t", "/opt/rocm/lib/libamdhip64.so.6")).toBe("libamdhip64.so.6");
  });
});
