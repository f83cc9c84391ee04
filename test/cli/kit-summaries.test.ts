// Issue 27 item 4 for ls, sizes, check, extract, unbundle, replace, verify and recover: one line per file
// and one total by default, the rows under -v/--verbose, paths as typed (relative stays relative), warnings in
// --json, and an option's detached value that names an existing path refused. --help of every command (options and
// examples that run) is held in kit-help.test.ts.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCommandLine } from "../../src/cli/args.js";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { detachedInputMessage } from "../../src/cli/kit/common.js";
import { replace } from "../../src/cli/kit/replace.js";
import { runInDir, scratchDir } from "./harness.js";

// The sample the README's quick start and `npm start` (scripts/demo.mjs) use.
const SAMPLE = new URL("../../examples/sample/", import.meta.url).pathname;
const ARCHIVE = new URL("../fixtures/archive/hda.a", import.meta.url).pathname;
const G906 = "hipv4-amdgcn-amd-amdhsa--gfx906";
const G90A = "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-";

/** A folder holding a copy of the sample, with `sample/` relative to it. */
function workdir(): string {
  const dir = scratchDir("offload-kit-summaries-");
  mkdirSync(join(dir, "sample"));
  for (const name of readdirSync(SAMPLE)) copyFileSync(join(SAMPLE, name), join(dir, "sample", name));
  return dir;
}

const kit = async (dir: string, ...args: string[]) => {
  const run = await runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
  return { code: run.code, stdout: run.stdout.toString(), stderr: run.stderr };
};

const lines = (text: string) => text.split("\n").filter((l) => l !== "").length;

describe("summaries first: one line per file and one total, the rows under -v", () => {
  const dir = workdir();

  it("ls", async () => {
    const summary = await kit(dir, "ls", "sample/app.hipfb");
    expect(summary).toEqual({ code: 0, stderr: "", stdout: "sample/app.hipfb: 1 bundle, 3 entries: host, gfx906, gfx90a:xnack-\n" });
    for (const flag of ["-v", "--verbose"]) {
      const verbose = await kit(dir, "ls", flag, "sample/app.hipfb");
      expect(verbose.stdout).toBe([
        "sample/app.hipfb: binary bundle at 0x0, 15397 bytes, align 4096, 3 entries",
        "  OFFSET  SIZE  ALIGN  ID",
        "  0x1000    29   4096  host-x86_64-unknown-linux-gnu-",
        `  0x2000  2078   4096  ${G906}`,
        `  0x3000  3109   4096  ${G90A}`,
        "",
      ].join("\n"));
    }
    // Two inputs: one total, once.
    const two = await kit(dir, "ls", "sample/app.hipfb", ARCHIVE);
    expect(two.stdout.split("\n").filter((l) => l.startsWith("total")).length).toBe(1);
    expect(two.stdout).toMatch(/\ntotal \(2 files\): 6 bundles, 16 entries: host, gfx906, gfx90a:xnack-, gfx908:xnack\+\n$/);
  });

  it("sizes: a folder's files one line each, then one total table (never a second)", async () => {
    const summary = await kit(dir, "sizes", "sample");
    expect(summary.code).toBe(0);
    expect(summary.stdout).toBe([
      "sample/app.hipfb: 1 bundle, 3 entries, 5,216 bytes (file: 15,397 bytes)",
      "sample/gfx906.co: no offload bundles or offload binaries (2,078 bytes)",
      "sample/gfx90a.co: no offload bundles or offload binaries (3,109 bytes)",
      "sample/host.o: no offload bundles or offload binaries (29 bytes)",
      "total (4 files): 3 entries, 5,216 bytes",
      "  TARGET                                  ENTRIES  BYTES     %",
      `  ${G90A}        1  3,109  59.6`,
      `  ${G906}               1  2,078  39.8`,
      "  host-x86_64-unknown-linux-gnu-                1     29   0.6",
      "in folders: 5 files looked at, 4 with offload code, 1 skipped (no offload code)",
      "",
    ].join("\n"));
    const verbose = await kit(dir, "sizes", "-v", "sample");
    // The file's own table comes with it, and the total is still said once.
    expect(verbose.stdout).toContain("sample/app.hipfb: 1 bundle, 3 entries, 5,216 bytes (file: 15,397 bytes)\n  TARGET");
    expect(verbose.stdout.match(/^total/gm)).toHaveLength(1);
    expect(lines(verbose.stdout)).toBe(lines(summary.stdout) + 4);
  });

  it("sizes of a package: one line, and one total (the package's total is not repeated)", async () => {
    const tar = join(dir, "sample.tar");
    expect(spawnSync("tar", ["cf", tar, "-C", dir, "sample/app.hipfb", "sample/host.o"]).status).toBe(0);
    const summary = await kit(dir, "sizes", "sample.tar");
    expect(summary.stdout.split("\n")[0]).toBe("sample.tar: tar package, 2 members, 2 with offload code; 3 entries, 5,216 bytes in 2 members");
    expect(summary.stdout).not.toMatch(/total/);
    const verbose = await kit(dir, "sizes", "-v", "sample.tar");
    expect(verbose.stdout.match(/total/g)).toHaveLength(1);
    expect(verbose.stdout).toContain("sample.tar!sample/app.hipfb: 1 bundle, 3 entries");
    const listed = await kit(dir, "ls", "sample.tar");
    expect(listed.stdout).toBe("sample.tar: tar package, 2 members, 2 with offload code; 1 bundle, 3 entries, 1 problem: host, gfx906, gfx90a:xnack-\n");
  });

  it("check: the verdict on each input's line; the tables under -v", async () => {
    const summary = await kit(dir, "check", "--gpu=gfx906", "sample/app.hipfb");
    expect(summary).toEqual({
      code: 0, stderr: "",
      stdout: "sample/app.hipfb: bundle, 2 device entries, 1 loadable on gfx906; OK\nOK: every input has device code gfx906 can load\n",
    });
    const failing = await kit(dir, "check", "--gpu=gfx1100", "sample/app.hipfb");
    expect(failing.code).toBe(1);
    expect(failing.stdout.split("\n")[0]).toBe("sample/app.hipfb: bundle, 2 device entries, 0 loadable on gfx1100; FAIL (it holds gfx906, gfx90a:xnack-)");
    const verbose = await kit(dir, "check", "-v", "--gpu=gfx906", "sample/app.hipfb");
    expect(verbose.stdout).toMatch(/\n {2}TARGET\s+ENTRIES\s+BYTES\s+LOADS\s+WHY\n/);
    expect(verbose.stdout).toMatch(new RegExp(`\\n {2}bundle 0\\s+0x2000\\s+2078\\s+yes\\s+${G906}\\n`));
    // The line, a table per target ID (header and 3 rows), every entry (header and 3 rows), the verdict.
    expect(lines(verbose.stdout)).toBe(10);
  });

  it("extract: a line per input and the total; -v lists each output", async () => {
    const summary = await kit(dir, "extract", "--out-dir=out1", "sample/app.hipfb", ARCHIVE);
    expect(summary.code).toBe(0);
    const [first, second, total] = summary.stdout.split("\n");
    expect(first).toBe("sample/app.hipfb: 3 outputs, 5,216 bytes");
    expect(second).toBe(`${ARCHIVE}: 13 outputs, 19,124 bytes`);
    expect(total).toMatch(/^extracted 16 outputs \(24340 bytes\) from 2 of 2 files into out1 in \d+\.\d\d s$/);
    const verbose = await kit(dir, "extract", "-v", "--out-dir=out2", "sample/app.hipfb");
    expect(verbose.stdout).toContain(`sample/app.hipfb: 3 outputs, 5,216 bytes\n  out2/app.hipfb-0-host-x86_64-unknown-linux-gnu-  29 bytes  host-x86_64-unknown-linux-gnu-\n`);
    expect(verbose.stdout).toContain(`  out2/app.hipfb-0-${G90A.replace(":", "_")}  3,109 bytes  ${G90A}\n`);
    expect(lines(verbose.stdout)).toBe(5);
  });

  it("unbundle: a line per file; -v lists each output", async () => {
    const targets = `-targets=${G906},${G90A}`;
    const summary = await kit(dir, "unbundle", targets, "--out-dir=u1", "sample/app.hipfb");
    expect([summary.code, summary.stdout]).toEqual([0, "sample/app.hipfb: 2 outputs, 5,187 bytes\n"]);
    expect(summary.stderr).toMatch(/^unbundled 1 of 1 files into u1: 2 outputs, 5187 bytes/);
    const verbose = await kit(dir, "unbundle", "-v", targets, "--out-dir=u2", "sample/app.hipfb");
    expect(verbose.stdout).toBe(
      `sample/app.hipfb: 2 outputs, 5,187 bytes\n  u2/app.hipfb-${G906}  2,078 bytes  ${G906}\n  u2/app.hipfb-${G90A.replace(":", "_")}  3,109 bytes  ${G90A}\n`,
    );
  });

  it("replace: one line; -v says where", async () => {
    const args = ["replace", `--entry=${G906}`, "--with=sample/gfx906.co", "--dry-run", "sample/app.hipfb"];
    const summary = await kit(dir, ...args);
    expect(summary).toEqual({ code: 0, stderr: "", stdout: `sample/app.hipfb: bundle, 15397 -> 15397 bytes, would save 0 (0.0%); would replace ${G906} once\n` });
    const verbose = await kit(dir, args[0]!, "-v", ...args.slice(1));
    expect(verbose.stdout).toBe(`${summary.stdout}  replaced ${G906}\n`);
  });

  it("verify: a line per file and a total over several", async () => {
    const one = await kit(dir, "verify", "sample/app.hipfb");
    expect(one).toEqual({ code: 0, stderr: "", stdout: "sample/app.hipfb: OK (not a 64-bit little-endian ELF file, 1 bundle, 3 entries)\n" });
    const two = await kit(dir, "verify", "sample/app.hipfb", ARCHIVE, "missing");
    expect(two.code).toBe(1);
    expect(two.stdout.split("\n").slice(-2)).toEqual(["total (3 files): 2 OK, 1 could not be read", ""]);
  });

  it("recover: a line per folder where something was done and the total; -v each file, under the folder as typed", async () => {
    const folder = join(dir, "rec");
    mkdirSync(folder);
    // A temporary of a process that no longer runs.
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid!;
    const stale = () => writeFileSync(join(folder, `.lib.so.offload-kit-${gone}-1.tmp`), "partial");
    stale();
    // Only this test's folders are swept: the one where outputs wait ($TMPDIR) is a scratch folder too.
    const tmpdir = process.env.TMPDIR;
    process.env.TMPDIR = scratchDir("offload-kit-summaries-tmp-");
    try {
      await recoverRuns(folder, gone, stale);
    } finally {
      if (tmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdir;
    }
  });
});

async function recoverRuns(folder: string, gone: number, stale: () => void): Promise<void> {
  const dir = join(folder, "..");
  const summary = await kit(dir, "recover", "rec");
  expect(summary.code).toBe(0);
  expect(summary.stdout).toMatch(/^rec: 0 edits finished, 0 journals voided, 1 stale temporary removed\ntotal: 0 edits finished, 0 journals voided, 1 stale temporary removed\n$/);
  expect(existsSync(join(folder, `.lib.so.offload-kit-${gone}-1.tmp`))).toBe(false);
  stale();
  const verbose = await kit(dir, "recover", "-v", "rec");
  expect(verbose.stdout).toContain(`rec: 0 edits finished, 0 journals voided, 1 stale temporary removed\n  removed   rec/.lib.so.offload-kit-${gone}-1.tmp\n`);
  stale();
  const json = JSON.parse((await kit(dir, "recover", "--json", "rec")).stdout);
  expect(json.folders[0]).toBe("rec");
  expect(json.removed).toContain(`rec/.lib.so.offload-kit-${gone}-1.tmp`);
  expect(json.warnings).toEqual([]);
}

describe("paths as typed: a relative folder stays relative, a linked file keeps its name below it", () => {
  const dir = workdir();
  mkdirSync(join(dir, "lib"));
  copyFileSync(join(SAMPLE, "app.hipfb"), join(dir, "lib", "app.hipfb"));
  // A link to a file outside the folder named: found under its own name, not the target's absolute path.
  symlinkSync(ARCHIVE, join(dir, "lib", "hda.a"));

  it("in ls, sizes, check and extract, text and --json", async () => {
    for (const args of [["ls"], ["sizes"], ["check", "--gpu=gfx906"]]) {
      const text = await kit(dir, ...args, "lib");
      expect(text.stdout, args.join(" ")).toContain("lib/hda.a: ");
      expect(text.stdout, args.join(" ")).not.toContain(dir);
      expect(text.stdout, args.join(" ")).not.toContain(ARCHIVE);
      const json = JSON.parse((await kit(dir, ...args, "--json", "lib")).stdout);
      const paths = (json.files ?? json.inputs).map((f: { path: string }) => f.path);
      expect(paths, args.join(" ")).toEqual(["lib/app.hipfb", "lib/hda.a"]);
    }
    const extracted = JSON.parse((await kit(dir, "extract", "--json", "--out-dir=x", "lib")).stdout);
    expect([...new Set(extracted.outputs.map((o: { file: string }) => o.file))]).toEqual(["lib/app.hipfb", "lib/hda.a"]);
    expect(extracted.outputs.every((o: { path: string }) => o.path.startsWith("x/"))).toBe(true);
  });
});

describe("warnings and notes in --json", () => {
  const dir = workdir();

  it("sizes, ls and check carry what stderr warns of, with a code and the file", async () => {
    // The sample's .co files are not ELF: sizes warns of each on stderr, and --json says the same.
    const text = await kit(dir, "sizes", "sample");
    expect(text.stderr).toContain("offload-kit sizes: warning: sample/gfx906.co: at 0x4: Invalid ELF class\n");
    const json = JSON.parse((await kit(dir, "sizes", "--json", "sample")).stdout);
    expect(json.warnings).toContainEqual({ code: expect.any(String), message: "at 0x4: Invalid ELF class", path: "sample/gfx906.co" });
    expect(json.warnings).toHaveLength(text.stderr.split("\n").filter((l) => l.includes(": warning: ")).length);
    const tar = join(dir, "w.tar");
    expect(spawnSync("tar", ["cf", tar, "-C", dir, "sample/app.hipfb"]).status).toBe(0);
    for (const args of [["ls", "--json", "sample/app.hipfb"], ["check", "--gpu=gfx906", "--json", "sample/app.hipfb"], ["ls", "--json", "w.tar"]]) {
      expect(JSON.parse((await kit(dir, ...args)).stdout).warnings, args.join(" ")).toEqual([]);
    }
  });

  it("every command's --json has a warnings array", async () => {
    const runs = [
      ["ls", "--json", "sample/app.hipfb"],
      ["sizes", "--json", "sample/app.hipfb"],
      ["check", "--json", "--gpu=gfx906", "sample/app.hipfb"],
      ["extract", "--json", "--out-dir=wj", "sample/app.hipfb"],
      ["unbundle", "--json", `-targets=${G906}`, "--out-dir=wu", "sample/app.hipfb"],
      ["replace", "--json", `--entry=${G906}`, "--with=sample/gfx906.co", "--dry-run", "sample/app.hipfb"],
      ["verify", "--json", "sample/app.hipfb"],
      ["recover", "--json", "sample"],
    ];
    for (const args of runs) {
      const run = await kit(dir, ...args);
      expect(Array.isArray(JSON.parse(run.stdout).warnings), args.join(" ")).toBe(true);
    }
  });
});

describe("an option's value written without '=' that names an existing path is refused", () => {
  const dir = workdir();

  it("says what was taken, exits 2, and runs nothing", async () => {
    const run = await kit(dir, "check", "--gpu", "sample/app.hipfb");
    expect(run).toEqual({
      code: 2, stdout: "",
      stderr: "offload-kit check: error: --gpu took 'sample/app.hipfb' as its value, but 'sample/app.hipfb' is an existing file or folder: " +
        "write --gpu=<value> (or --gpu=sample/app.hipfb if that was meant) (see 'offload-kit check --help')\n",
    });
    expect((await kit(dir, "sizes", "--by", "sample", "sample/app.hipfb")).code).toBe(2);
    expect((await kit(dir, "extract", "--targets", "sample", "--out-dir=o")).stderr).toContain("--targets took 'sample'");
    expect(existsSync(join(dir, "o"))).toBe(false);
  });

  it("takes a value that names nothing, a value written with '=', and a path where the option wants one", async () => {
    expect((await kit(dir, "check", "--gpu", "gfx906", "sample/app.hipfb")).code).toBe(0);
    expect((await kit(dir, "check", "--gpu=sample", "sample/app.hipfb")).stderr).not.toContain("took");
    expect((await kit(dir, "sizes", "--by", "processor", "sample/app.hipfb")).code).toBe(0);
    // -o <file>, --out-dir <dir> and --with <file> name paths, existing ones included.
    expect((await kit(dir, "extract", "--out-dir", "sample", "sample/app.hipfb")).code).toBe(0);
    const replaced = await kit(dir, "replace", `--entry=${G906}`, "--with", "sample/gfx906.co", "-o", "sample/host.o", "sample/app.hipfb");
    expect([replaced.code, replaced.stderr]).toEqual([0, ""]);
  });

  it("the parser reports each detached value and whether its option takes a path", () => {
    const parsed = parseCommandLine(replace.spec(), "offload-kit replace", ["--entry", "x", "--with", "y", "-o", "z", "--bundle=1", "in"]);
    expect(parsed.kind).toBe("ok");
    if (parsed.kind !== "ok") return;
    expect(parsed.detached).toEqual([
      { option: "entry", written: "--entry", value: "x", takesPath: false },
      { option: "with", written: "--with", value: "y", takesPath: true },
      { option: "o", written: "-o", value: "z", takesPath: true },
    ]);
    expect(detachedInputMessage(parsed.detached, dir)).toBeUndefined();
    expect(detachedInputMessage([{ option: "entry", written: "--entry", value: "sample", takesPath: false }], dir)).toMatch(/^--entry took 'sample'/);
  });
});
