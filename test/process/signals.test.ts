// Issue 19, item 2: SIGINT and SIGTERM stop a long synchronous run of the built bins (src/process/supervisor.ts).
// Each run is signalled once it has begun writing (its temporary file or spool exists) and must end by the
// signal (the shell sees 128+N), with no temporary file and no output left and an existing output unchanged.
// After SIGKILL the temporaries stay, and the next run creating a file in that folder removes them.
// How fast the signal stops the run is measured in bench/signals.mjs, not asserted here.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readFileSync, readdirSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutBinaryBundle } from "../../src/formats/bundle.js";
import { scratchDir } from "../cli/harness.js";
import { BIN, bash, ours } from "./helpers.js";
import { HANG_MS } from "../limits.js";

const LIBRARY = "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1";
const GFX906 = "hip-amdgcn-amd-amdhsa--gfx906";
const SPARSE_SIZE = 4 * 1024 ** 3 - (1 << 20);
const HOST = "host-x86_64-unknown-linux-gnu-";

let dir: string;
/** A private TMPDIR for the runs, so their spools can be looked for. */
let tmp: string;
beforeAll(() => {
  dir = scratchDir("offload-kit-signals-");
  tmp = join(dir, "tmp");
  mkdirSync(tmp);
  // Just under 4 GiB of holes and one byte at the end: costs no disk, is a real image (an all-zero one is
  // written as zeroinitializer in no time; past 4 GiB one is refused), and no run gets through it before the signal.
  const fd = openSync(join(dir, "sparse.bin"), "w");
  ftruncateSync(fd, SPARSE_SIZE);
  writeSync(fd, new Uint8Array([1]), 0, 1, SPARSE_SIZE - 1);
  closeSync(fd);
  // 256 MB that compresses: -compress takes seconds on it.
  const block = new Uint8Array(1 << 20);
  for (let i = 0; i < block.length; i++) block[i] = (i * 7) % 251 < 40 ? i & 0xff : 0;
  const big = openSync(join(dir, "big.bin"), "w");
  for (let i = 0; i < 256; i++) writeSync(big, block);
  closeSync(big);
  writeFileSync(join(dir, "host.bin"), "host");
});

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Every run started, killed after the tests if still there (a failed test must not leave a 4 GiB copy running). */
const started: ChildProcess[] = [];
afterAll(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

function start(tool: string, args: string[], stdin: "ignore" | number = "ignore"): { child: ChildProcess; ended: Promise<Ended>; stderr: () => string } {
  const env: Record<string, string | undefined> = { ...process.env, TMPDIR: tmp };
  delete env.NODE_EXTRA_CA_CERTS;
  const child = spawn(process.execPath, [join(BIN, `${tool}.js`), ...args], { cwd: dir, env, stdio: [stdin, "ignore", "pipe"] });
  started.push(child);
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const ended = new Promise<Ended>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  return { child, ended, stderr: () => stderr };
}

/** Resolves once `ready()` holds (polled), or rejects if the run ended first. */
async function until(ready: () => boolean, ended: Promise<Ended>, stderr: () => string): Promise<void> {
  let done: Ended | undefined;
  void ended.then((e) => (done = e));
  const deadline = Date.now() + 90_000;
  while (!ready()) {
    if (done !== undefined) throw new Error(`the run ended before it was signalled (${done.code ?? done.signal}): ${stderr()}`);
    if (Date.now() > deadline) throw new Error("the run never began writing");
    await new Promise((r) => setTimeout(r, 10));
  }
}

const names = (folder: string) => readdirSync(folder).sort();
const temporaries = (folder: string) => names(folder).filter((n) => n.includes("offload-kit-"));

describe("a signal during a long run", () => {
  it("SIGINT during offload-bundler -compress: ends by SIGINT, nothing written, the existing output unchanged", async () => {
    const out = join(dir, "compress");
    mkdirSync(out);
    writeFileSync(join(out, "out.o"), "old");
    const run = start("offload-bundler", ["-type=o", "-compress", `-targets=${HOST},${GFX906}`, "-input=host.bin", "-input=big.bin", `-output=${join(out, "out.o")}`]);
    await until(() => temporaries(out).length > 0, run.ended, run.stderr);
    run.child.kill("SIGINT");
    const ended = await run.ended;
    expect(ended, run.stderr()).toEqual({ code: null, signal: "SIGINT" });
    expect(run.stderr()).toBe("");
    expect(names(out)).toEqual(["out.o"]);
    expect(readFileSync(join(out, "out.o"), "utf8")).toBe("old");
  }, HANG_MS);

  it("SIGTERM during offload-wrapper of a 4 GiB image: ends by SIGTERM, no temporary, no output", async () => {
    const out = join(dir, "wrap");
    mkdirSync(out);
    const run = start("offload-wrapper", ["--kind=openmp", "-o", join(out, "out.bc"), "sparse.bin"]);
    await until(() => temporaries(out).length > 0, run.ended, run.stderr);
    run.child.kill("SIGTERM");
    expect(await run.ended).toEqual({ code: null, signal: "SIGTERM" });
    expect(names(out)).toEqual([]);
  }, HANG_MS);

  it("SIGINT while standard input is spooled: the spool is removed", async () => {
    const input = openSync(join(dir, "sparse.bin"), "r");
    const run = start("offload-bundler", ["-list", "-type=bc", "-input=-"], input);
    closeSync(input);
    await until(() => temporaries(tmp).length > 0, run.ended, run.stderr);
    run.child.kill("SIGINT");
    expect(await run.ended).toEqual({ code: null, signal: "SIGINT" });
    expect(temporaries(tmp)).toEqual([]);
  }, HANG_MS);

  it.runIf(existsSync(LIBRARY))("SIGTERM during offload-kit extract of librocsparse: no file in the output folder", async () => {
    const out = join(dir, "extract");
    mkdirSync(out);
    const run = start("offload-kit", ["extract", `--out-dir=${out}`, LIBRARY]);
    await until(() => temporaries(out).length > 0, run.ended, run.stderr);
    run.child.kill("SIGTERM");
    expect(await run.ended).toEqual({ code: null, signal: "SIGTERM" });
    expect(names(out)).toEqual([]);
  }, HANG_MS);

  it("SIGINT during offload-kit unbundle --jobs=2: the temporaries of its own workers are removed too", async () => {
    // Bundles with a 2 GiB entry of holes each, ten of them: the batch gives each worker a slice of at least
    // eight files, so both workers write an output for seconds at the same time.
    const layout = layoutBinaryBundle([{ id: HOST, size: 0 }, { id: GFX906, size: 2 * 1024 ** 3 }]);
    const inputs = Array.from({ length: 10 }, (_, i) => `batch-${i}.bc`);
    for (const name of inputs) {
      const fd = openSync(join(dir, name), "w");
      writeSync(fd, layout.header);
      ftruncateSync(fd, layout.size);
      closeSync(fd);
    }
    const out = join(dir, "batch");
    mkdirSync(out);
    const run = start("offload-kit", ["unbundle", `-targets=${GFX906}`, `--out-dir=${out}`, "--jobs=2", ...inputs]);
    await until(() => temporaries(out).length >= 2, run.ended, run.stderr);
    run.child.kill("SIGINT");
    expect(await run.ended).toEqual({ code: null, signal: "SIGINT" });
    expect(names(out)).toEqual([]);
  }, HANG_MS);

  it("the shell sees 128+N", () => {
    const script = `${ours("offload-wrapper")} --kind=openmp -o shell.bc sparse.bin & pid=$!; ` +
      `while ! ls -a | grep -q '^\\.shell\\.bc\\.offload-kit-'; do sleep 0.05; done; kill -INT $pid; wait $pid; echo "status=$?"`;
    const run = bash(script, dir, { TMPDIR: tmp });
    expect(run.stdout.toString()).toBe("status=130\n");
    expect(existsSync(join(dir, "shell.bc"))).toBe(false);
  }, HANG_MS);
});

describe("after SIGKILL", () => {
  it("the temporaries left are removed by the next run in that folder, and a stale spool by the next spool", async () => {
    const out = join(dir, "killed");
    mkdirSync(out);
    const input = openSync(join(dir, "sparse.bin"), "r");
    const wrap = start("offload-wrapper", ["--kind=openmp", "-o", join(out, "out.bc"), "-"], input);
    closeSync(input);
    // The spool of standard input first, then (much later) the output's temporary: kill while spooling.
    await until(() => temporaries(tmp).length > 0, wrap.ended, wrap.stderr);
    wrap.child.kill("SIGKILL");
    await wrap.ended;
    expect(temporaries(tmp)).toHaveLength(1);

    const big = start("offload-wrapper", ["--kind=openmp", "-o", join(out, "out.bc"), "sparse.bin"]);
    await until(() => temporaries(out).length > 0, big.ended, big.stderr);
    big.child.kill("SIGKILL");
    await big.ended;
    const stale = temporaries(out);
    expect(stale).toHaveLength(1);
    expect(stale[0]).toMatch(new RegExp(`^\\.out\\.bc\\.offload-kit-${big.child.pid}-\\d+\\.tmp$`));

    // A live process's temporaries are never touched: one that looks like ours, of this (living) test process.
    const alive = `.x.offload-kit-${process.pid}-1.tmp`;
    writeFileSync(join(out, alive), "");
    const next = bash(`${ours("offload-wrapper")} --kind=openmp -o ${join(out, "small.bc")} host.bin`, dir, { TMPDIR: tmp });
    expect(next.status, next.stderr).toBe(0);
    expect(names(out)).toEqual([alive, "small.bc"].sort());

    const spooled = bash(`printf host | ${ours("offload-wrapper")} --kind=openmp -o ${join(out, "piped.bc")} -`, dir, { TMPDIR: tmp });
    expect(spooled.status, spooled.stderr).toBe(0);
    expect(temporaries(tmp)).toEqual([]);
  }, HANG_MS);
});
