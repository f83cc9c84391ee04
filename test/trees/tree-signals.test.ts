// Issue 26 item 1: a SIGINT in the middle of a folder's edit (the built CLI under its supervisor) leaves every
// file whole: in place, each file holds its old bytes (same inode, same time); mirrored, no mirror and no staging
// folder remain. The run is made long by a 64 MiB bundle compressed at zstd level 19 (seconds on any machine);
// it is signalled once its first temporary file exists.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { copyFileSync, lstatSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";

const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;
const HOSTS = new URL("../fixtures/hosts/", import.meta.url).pathname;

const started: ChildProcess[] = [];
afterAll(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

function tree(): { work: string; venv: string } {
  const work = scratchDir("offload-kit-tree-signal-");
  const venv = join(work, "venv");
  mkdirSync(join(venv, "lib"), { recursive: true });
  const payload = new Uint8Array(64 << 20);
  for (let i = 0; i < payload.length; i++) payload[i] = (i * 7) % 251 < 40 ? i & 0xff : 0;
  writeFileSync(join(venv, "big.bundle"), writeBinaryBundle([
    { id: "host-x86_64-unknown-linux-gnu-", data: new Uint8Array(0) },
    { id: "hip-amdgcn-amd-amdhsa--gfx906", data: payload },
  ], 4096));
  copyFileSync(join(HOSTS, "fat.o"), join(venv, "lib/fat.o"));
  copyFileSync(join(HOSTS, "libboth.a"), join(venv, "lib/libboth.a"));
  return { work, venv };
}

/** Paths below `dir` (folders too), each with what identifies its content and inode. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (path: string, rel: string) => {
    for (const name of readdirSync(path).sort()) {
      const p = join(path, name);
      const r = `${rel}/${name}`;
      const s = lstatSync(p);
      if (s.isDirectory()) {
        out[r] = "dir";
        visit(p, r);
      } else out[r] = `${s.ino} ${s.mtimeMs} ${s.size} ${readFileSync(p).subarray(0, 1 << 16).toString("base64")}`;
    }
  };
  visit(dir, "");
  return out;
}

function temporaries(dir: string): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    for (const name of readdirSync(path)) {
      const p = join(path, name);
      if (name.includes(".offload-kit-")) found.push(p);
      if (lstatSync(p).isDirectory()) visit(p);
    }
  };
  visit(dir);
  return found;
}

async function interrupt(work: string, args: string[], ready: () => boolean) {
  const env: Record<string, string | undefined> = { ...process.env, TMPDIR: work };
  delete env.NODE_EXTRA_CA_CERTS;
  const child = spawn(process.execPath, [BIN, ...args], { cwd: work, env, stdio: ["ignore", "ignore", "pipe"] });
  started.push(child);
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  let done = false;
  void ended.then(() => (done = true));
  const deadline = Date.now() + 90_000;
  while (!ready()) {
    if (done) throw new Error(`the run ended before it was signalled: ${stderr}`);
    if (Date.now() > deadline) throw new Error("the run never began writing");
    await new Promise((r) => setTimeout(r, 10));
  }
  child.kill("SIGINT");
  return { ended: await ended, stderr };
}

describe("SIGINT during an edit of a folder", () => {
  it("--in-place: ends by SIGINT, every file as it was, no temporary left", async () => {
    const { work, venv } = tree();
    const before = snapshot(venv);
    const run = await interrupt(work, ["compress", "--level=19", "--in-place", "venv"], () => temporaries(venv).length > 0);
    expect(run.ended, run.stderr).toEqual({ code: null, signal: "SIGINT" });
    expect(temporaries(venv)).toEqual([]);
    expect(snapshot(venv)).toEqual(before);
  }, HANG_MS);

  it("--out-dir: ends by SIGINT, no mirror and no staging folder", async () => {
    const { work, venv } = tree();
    const before = snapshot(venv);
    mkdirSync(join(work, "out"));
    const run = await interrupt(work, ["compress", "--level=19", "--out-dir=out", "venv"], () => temporaries(join(work, "out")).some((p) => p.includes(".big.bundle.")));
    expect(run.ended, run.stderr).toEqual({ code: null, signal: "SIGINT" });
    expect(readdirSync(join(work, "out"))).toEqual([]);
    expect(snapshot(venv)).toEqual(before);
  }, HANG_MS);
});
