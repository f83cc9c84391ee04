// offload-kit as a process (the built bin): exit 2 for usage errors, kept apart from 1 (an input failed, a
// FAIL verdict); --out-dir that cannot be made or written gives one clear error naming the folder, worded as
// `mkdir -p` words it, and never hangs (Node's recursive mkdir loops on /proc/x); a missing input is named once
// and leaves no empty output folder behind. The drop-in tools keep their native exit code 1 for usage errors.
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { scratchDir } from "./harness.js";
import { HANG_MS } from "../limits.js";

const BIN = new URL("../../dist/bin/", import.meta.url).pathname;
const HOST = "host-x86_64-unknown-linux-gnu-";
const G906 = "hip-amdgcn-amd-amdhsa--gfx906";
const enc = (s: string) => new TextEncoder().encode(s);

// check without --gpu looks for this machine's GPUs: on PATH and in sysfs; here both are empty folders.
const NO_GPU = scratchDir("offload-kit-no-gpu-");
const NO_GPU_ENV = { ...process.env, PATH: NO_GPU, OFFLOAD_KIT_SYSFS: NO_GPU };

function run(cwd: string, args: string[], tool = "offload-kit") {
  // A generous limit: a hang (the /proc/x case) shows as a null status, not as a slow test.
  const result = spawnSync(process.execPath, [join(BIN, `${tool}.js`), ...args], { cwd, encoding: "utf8", timeout: HANG_MS, killSignal: "SIGKILL", env: NO_GPU_ENV });
  return { status: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

function workdir(): string {
  const dir = scratchDir("offload-kit-usage-");
  writeFileSync(join(dir, "a.bc"), writeBinaryBundle([{ id: HOST, data: enc("H") }, { id: G906, data: enc("D906") }]));
  writeFileSync(join(dir, "afile"), "not a folder");
  return dir;
}

describe("offload-kit exit statuses", () => {
  it("2 for each kind of usage error, with one diagnostic on stderr", () => {
    const dir = workdir();
    const cases: [string[], RegExp][] = [
      [[], /^offload-kit: inspect, check, extract and prune/],
      [["frob"], /offload-kit(\.js)?: error: unknown command 'frob'/],
      [["ls", "--bogus", "a.bc"], /ls: Unknown command line argument '--bogus'/],
      [["unbundle", "--jobs=many", `-targets=${G906}`, "--out-dir=o", "a.bc"], /for the --jobs option: 'many' value invalid/],
      [["ls"], /ls: error: no input files/],
      [["extract", "--out-dir=o"], /extract: error: no input files/],
      [["sizes"], /sizes: error: no input files/],
      [["sizes", "--by=colour", "a.bc"], /--by must be one of target, processor, bundle, not 'colour'/],
      [["check", "a.bc"], /check: error: no GPU found on this machine .*; pass --gpu=<target id>/],
      [["check", "--gpu=gfx90a:xnack", "a.bc"], /check: error: .*xnack/],
      [["check", "--gpu=gfx906", "--kind=bogus", "a.bc"], /check: error: --kind must be one of hip, hipv4, openmp, cuda, sycl, not 'bogus'/],
      [["unbundle", "--out-dir=o", "a.bc"], /-targets is required/],
      [["unbundle", `-targets=${G906}`, "a.bc"], /--out-dir is required/],
      [["serve", "--port=http"], /--port must be a number from 0 to 65535, not 'http'/],
    ];
    for (const [args, message] of cases) {
      const r = run(dir, args);
      expect({ args, status: r.status }).toEqual({ args, status: 2 });
      expect(r.stderr, args.join(" ")).toMatch(message);
      expect(r.stdout, args.join(" ")).toBe("");
    }
    expect(readdirSync(dir).sort()).toEqual(["a.bc", "afile"]);
  });

  it("1 for a FAIL verdict and for an input that cannot be read; 0 for help and a good run", () => {
    const dir = workdir();
    const fail = run(dir, ["check", "--gpu=gfx90a", "a.bc"]);
    expect(fail.status).toBe(1);
    expect(fail.stdout).toContain("FAIL: ");
    expect(run(dir, ["check", "--gpu=gfx906", "--kind=hip", "a.bc"]).status).toBe(0);
    expect(run(dir, ["check", "--gpu=gfx906", "--kind=openmp", "a.bc"]).status).toBe(1);
    expect(run(dir, ["ls", "missing.bc"]).status).toBe(1);
    const help = run(dir, ["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/EXIT STATUS:\n  0 .*\n  1 .*\n  2   usage error: unknown command, bad option or option value, no input files\n  70 /);
    expect(run(dir, ["ls", "--help"]).status).toBe(0);
  });

  it("the drop-in tools keep the native code 1 for usage errors", () => {
    const dir = workdir();
    expect(run(dir, ["--bogus"], "offload-bundler").status).toBe(1);
    expect(run(dir, ["--bogus"], "offload-packager").status).toBe(1);
    expect(run(dir, ["--bogus", "--target=x86_64-pc-linux-gnu", "-o", "o.bc", "a.bc"], "offload-wrapper").status).toBe(1);
    expect(run(dir, ["--kind=bogus", "-o", "o.bc", "a.bc"], "offload-wrapper").status).toBe(1);
  });
});

describe("--out-dir that cannot be made or written", () => {
  const cases: [string, string][] = [
    ["afile", "cannot create directory 'afile': File exists"],
    ["afile/sub", "cannot create directory 'afile': Not a directory"],
    ["afile/sub/deeper", "cannot create directory 'afile': Not a directory"],
    // /proc refuses mkdir with ENOENT although /proc exists: Node's recursive mkdir retried it for ever.
    ["/proc/offload-kit-x", "cannot create directory '/proc/offload-kit-x': No such file or directory"],
    ["/proc/offload-kit-x/y", "cannot create directory '/proc/offload-kit-x': No such file or directory"],
  ];

  for (const command of ["extract", "unbundle"]) {
    it(`${command}: one error naming the folder and why, exit 1, nothing written, no hang`, () => {
      const dir = workdir();
      const targets = command === "unbundle" ? [`-targets=${G906}`] : [];
      for (const [outDir, message] of cases) {
        const r = run(dir, [command, ...targets, `--out-dir=${outDir}`, "a.bc"]);
        expect({ outDir, status: r.status, signal: r.signal }).toEqual({ outDir, status: 1, signal: null });
        expect(r.stderr).toBe(`${join(BIN, "offload-kit.js")} ${command}: error: ${message}\n`);
      }
      // sysfs: mkdir is "Operation not permitted" and an existing folder takes no files, for root too.
      const sys = run(dir, [command, ...targets, "--out-dir=/sys/offload-kit-x", "a.bc"]);
      expect([sys.status, sys.stderr]).toEqual([1, `${join(BIN, "offload-kit.js")} ${command}: error: cannot create directory '/sys/offload-kit-x': Operation not permitted\n`]);
      const existing = run(dir, [command, ...targets, "--out-dir=/sys", "a.bc"]);
      expect([existing.status, existing.stderr]).toEqual([1, `${join(BIN, "offload-kit.js")} ${command}: error: cannot write to directory '/sys': Permission denied\n`]);
      expect(readdirSync(dir).sort()).toEqual(["a.bc", "afile"]);
    });
  }

  // Root may write anyway: as root the runs drop to nobody (setpriv), so the case runs either way.
  const root = process.getuid?.() === 0;
  const setpriv = spawnSync("setpriv", ["--version"]).status === 0;
  it.skipIf(process.platform !== "linux" || (root && !setpriv))("a folder without write permission", () => {
    const dir = workdir();
    mkdirSync(join(dir, "ro"));
    const asUser = (args: string[]) => {
      if (!root) return run(dir, args);
      const r = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, join(BIN, "offload-kit.js"), ...args], { cwd: dir, encoding: "utf8", timeout: HANG_MS });
      return { status: r.status, stderr: r.stderr };
    };
    if (root) {
      chownSync(dir, 65534, 65534);
      chownSync(join(dir, "a.bc"), 65534, 65534);
    }
    chmodSync(join(dir, "ro"), 0o555);
    try {
      const below = asUser(["extract", "--out-dir=ro/out/deeper", "a.bc"]);
      expect([below.status, below.stderr]).toEqual([1, `${join(BIN, "offload-kit.js")} extract: error: cannot create directory 'ro/out': Permission denied\n`]);
      const inside = asUser(["extract", "--out-dir=ro", "a.bc"]);
      expect([inside.status, inside.stderr]).toEqual([1, `${join(BIN, "offload-kit.js")} extract: error: cannot write to directory 'ro': Permission denied\n`]);
      expect(readdirSync(join(dir, "ro"))).toEqual([]);
    } finally {
      chmodSync(join(dir, "ro"), 0o755);
    }
  });

  it.skipIf(process.platform !== "linux" || (root && !setpriv))("a folder made but not writable (umask 0222) is removed again", () => {
    const dir = workdir();
    if (root) chownSync(dir, 65534, 65534);
    // A shell sets the umask, then becomes node as the user (nobody, through setpriv, when the tests run as root;
    // the shell runs first, since nobody may not reach a node installed under /root).
    const prefix = root ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : [];
    const umasked = (args: string[]) => {
      const command = ["sh", "-c", 'umask 222 && exec "$@"', "sh", ...prefix, process.execPath, join(BIN, "offload-kit.js"), ...args];
      const r = spawnSync(command[0]!, command.slice(1), { cwd: dir, encoding: "utf8", timeout: HANG_MS });
      return [r.status, r.stderr];
    };
    const tool = join(BIN, "offload-kit.js");
    expect(umasked(["extract", "--out-dir=made", "a.bc"])).toEqual([1, `${tool} extract: error: cannot write to directory 'made': Permission denied\n`]);
    expect(readdirSync(dir).sort()).toEqual(["a.bc", "afile"]);
    expect(umasked(["unbundle", `-targets=${G906}`, "--out-dir=made", "a.bc"])).toEqual([1, `${tool} unbundle: error: cannot write to directory 'made': Permission denied\n`]);
    expect(readdirSync(dir).sort()).toEqual(["a.bc", "afile"]);
  });
});

describe("an input that gives nothing", () => {
  it("extract names a missing file once and leaves no empty --out-dir behind", () => {
    const dir = workdir();
    const r = run(dir, ["extract", "--out-dir=new/out", "missing.bc"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`${join(BIN, "offload-kit.js")} extract: error: 'missing.bc': No such file or directory\n`);
    expect(existsSync(join(dir, "new"))).toBe(false);
    // A folder that was there before stays, and a good input among bad ones keeps the folder it fills.
    mkdirSync(join(dir, "kept"));
    expect(run(dir, ["extract", "--out-dir=kept", "missing.bc"]).status).toBe(1);
    expect(readdirSync(join(dir, "kept"))).toEqual([]);
    expect(run(dir, ["extract", "--out-dir=made", "missing.bc", "a.bc"]).status).toBe(1);
    expect(readdirSync(join(dir, "made")).sort()).toEqual([`a.bc-0-${G906}`, `a.bc-0-${HOST}`]);
  });

  it("unbundle names a missing file once and leaves no empty --out-dir behind", () => {
    const dir = workdir();
    const r = run(dir, ["unbundle", `-targets=${G906}`, "--out-dir=new/out", "missing.bc"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^${join(BIN, "offload-kit.js")} unbundle: error: 'missing.bc': No such file or directory\n`));
    expect(existsSync(join(dir, "new"))).toBe(false);
  });
});
