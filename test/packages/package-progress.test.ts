// Issue 26: progress on stderr for package runs, as a whole process (the built bin): with --progress one line per
// member edited, at every level of nesting, whatever stderr is; on a pipe without it nothing; on a terminal (a pty
// from util-linux's `script`) one status line redrawn with \r and cleared at the end. The report on stdout is the
// same in every case.
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";
import { HOSTS, haveTools, stage } from "./build.js";

const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;
const BUILDER = new URL("./conda_package.py", import.meta.url).pathname;
const dir = scratchDir("offload-kit-package-progress-");
const tools = haveTools("python3", "zstd", "bzip2", "tar", "script");

function kit(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, encoding: "utf8", timeout: HANG_MS });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.skipIf(!tools)("package progress on stderr", () => {
  if (tools) {
    execFileSync("python3", [BUILDER, stage(join(dir, "conda")), "hipapp-1.0-0", dir]);
    mkdirSync(join(dir, "inner"));
    copyFileSync(join(dir, "hipapp-1.0-0.tar.bz2"), join(dir, "inner/hipapp-1.0-0.tar.bz2"));
    copyFileSync(join(HOSTS, "app"), join(dir, "inner/app"));
    execFileSync("tar", ["-czf", join(dir, "outer.tar.gz"), "-C", join(dir, "inner"), "hipapp-1.0-0.tar.bz2", "app"]);
  }
  const args = ["prune", "--keep=gfx90a", "--allow-empty", "--dry-run"];

  it("--progress: one line per member edited, nested members by their whole path; the report unchanged", () => {
    const quiet = kit(...args, "hipapp-1.0-0.conda", "outer.tar.gz");
    const loud = kit(...args, "--progress", "hipapp-1.0-0.conda", "outer.tar.gz");
    expect([loud.status, quiet.status]).toEqual([0, 0]);
    expect(loud.stdout).toBe(quiet.stdout);
    const lines = loud.stderr.trimEnd().split("\n");
    expect(lines).toEqual(expect.arrayContaining([
      expect.stringMatching(/prune: progress: hipapp-1\.0-0\.conda!pkg-hipapp-1\.0-0\.tar\.zst!usr\/lib\/app: 38016 -> \d+ bytes$/),
      expect.stringMatching(/prune: progress: outer\.tar\.gz!app: 38016 -> \d+ bytes$/),
      expect.stringMatching(/prune: progress: outer\.tar\.gz!hipapp-1\.0-0\.tar\.bz2!usr\/lib\/libboth\.a: 22448 -> \d+ bytes$/),
    ]));
    // Three files with device code in each conda package, and the library beside it.
    expect(lines.length).toBe(7);
    for (const line of lines) expect(line).toMatch(/prune: progress: /);
  }, HANG_MS);

  it("on a pipe without --progress: nothing on stderr", () => {
    const r = kit(...args, "hipapp-1.0-0.conda");
    expect([r.status, r.stderr]).toEqual([0, ""]);
  }, HANG_MS);

  it("on a terminal: a status line redrawn with \\r, cleared at the end", () => {
    const command = [process.execPath, BIN, ...args, "hipapp-1.0-0.conda"].map((a) => `'${a}'`).join(" ");
    // stdout to a file, so what the pty shows is stderr alone.
    const r = spawnSync("script", ["-qec", `${command} > report.txt`, "/dev/null"], { cwd: dir, encoding: "utf8", timeout: HANG_MS });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\rhipapp-1\.0-0\.conda: \d+ members read, \d+ edited\x1b\[K/);
    expect(r.stdout.endsWith("\r\x1b[K")).toBe(true);
    expect(r.stdout).not.toContain("\n");
  }, HANG_MS);
});
