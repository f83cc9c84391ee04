// How fast a signal stops a long synchronous run of the built bins (src/process/supervisor.ts), and what it
// leaves: the time from kill() to the process's exit, for SIGINT and SIGTERM, on
//   - offload-bundler -compress of a 600 MB compressible bundle (and clang-offload-bundler-19 beside it),
//   - offload-kit extract of Debian's librocsparse (when installed),
//   - offload-wrapper of a 4 GiB sparse image.
// Each run is signalled 300 ms after its first temporary file appears (it is then writing), and must end by
// the signal with no temporary file and no output left. `node bench/signals.mjs [runs]` (default 5).
import { spawn } from "node:child_process";
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readdirSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ours, saveResults, scratchDir } from "./common.mjs";

const RUNS = Number(process.argv[2] ?? 5);
const LIBRARY = "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1";
const NATIVE_BUNDLER = "/usr/lib/llvm-19/bin/clang-offload-bundler";
const dir = scratchDir("signals");

function writeCompressible(path, bytes) {
  const block = new Uint8Array(1 << 20);
  for (let i = 0; i < block.length; i++) block[i] = (i * 7) % 251 < 40 ? i & 0xff : 0;
  const fd = openSync(path, "w");
  for (let done = 0; done < bytes; done += block.length) writeSync(fd, block, 0, Math.min(block.length, bytes - done));
  closeSync(fd);
}

/** Every file name below `folder` (temporaries included), and those in os.tmpdir() of ours. */
function leftovers(folder, tmp) {
  const found = [];
  const walk = (at) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(at, entry.name));
      else found.push(join(at, entry.name));
    }
  };
  walk(folder);
  for (const name of readdirSync(tmp)) if (name.startsWith("offload-kit-") || name.startsWith("clang-offload-bundler-")) found.push(join(tmp, name));
  return found;
}

/** Whether the run has begun writing: its temporary file (ours) or its output (native) is there. */
function writing(folder) {
  try {
    return readdirSync(folder).length > 0;
  } catch {
    return false;
  }
}

/** Starts `argv`, waits until something appears in `out` (+300 ms), signals, and times the exit. */
async function measure(argv, out, signal, cwd) {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const tmp = join(dir, "tmp");
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp);
  const child = spawn(argv[0], argv.slice(1), { cwd, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, TMPDIR: tmp } });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on("exit", (code, sig) => resolve({ code, sig, at: performance.now() })));
  const started = performance.now();
  let early;
  for (;;) {
    if (writing(out)) break;
    const done = await Promise.race([exited, new Promise((r) => setTimeout(r, 10))]);
    if (done) {
      early = done;
      break;
    }
    if (performance.now() - started > 120_000) break;
  }
  if (early) return { signal, ms: NaN, note: `ended before the signal (${early.code ?? early.sig}): ${stderr.trim()}` };
  await new Promise((r) => setTimeout(r, 300));
  const sent = performance.now();
  child.kill(signal);
  const end = await exited;
  const left = leftovers(out, tmp);
  return { signal, ms: end.at - sent, exit: end.sig ?? end.code, left: left.length, leftNames: left.slice(0, 3) };
}

const scenarios = [];
const big = join(dir, "device.bin");
const host = join(dir, "host.bin");
writeCompressible(big, 600 * 1000 * 1000);
writeCompressible(host, 4096);
const bundleArgs = (out) => [
  "-type=o", "-compress", "-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906",
  `-input=${host}`, `-input=${big}`, `-output=${join(out, "out.o")}`,
];
scenarios.push({ name: "offload-bundler -compress 600 MB", argv: (out) => [process.execPath, ours("offload-bundler"), ...bundleArgs(out)] });
if (existsSync(NATIVE_BUNDLER)) scenarios.push({ name: "clang-offload-bundler-19 -compress 600 MB", native: true, argv: (out) => [NATIVE_BUNDLER, ...bundleArgs(out)] });
if (existsSync(LIBRARY)) scenarios.push({ name: "offload-kit extract librocsparse", argv: (out) => [process.execPath, ours("offload-kit"), "extract", `--out-dir=${out}`, LIBRARY] });
const sparse = join(dir, "sparse.bin");
// Just under 4 GiB of holes and one byte at the end: a real image (an all-zero one is written as
// zeroinitializer in no time; past 4 GiB one is refused), so the run is still writing when the signal comes.
const SPARSE_SIZE = 4 * 1024 ** 3 - (1 << 20);
const fd = openSync(sparse, "w");
ftruncateSync(fd, SPARSE_SIZE);
writeSync(fd, new Uint8Array([1]), 0, 1, SPARSE_SIZE - 1);
closeSync(fd);
scenarios.push({ name: "offload-wrapper 4 GiB sparse image", argv: (out) => [process.execPath, ours("offload-wrapper"), "--kind=openmp", "-o", join(out, "out.bc"), sparse] });

const results = {};
try {
  for (const scenario of scenarios) {
    const rows = [];
    for (const signal of ["SIGINT", "SIGTERM"]) {
      for (let i = 0; i < RUNS; i++) rows.push(await measure(scenario.argv(join(dir, "out")), join(dir, "out"), signal, dir));
    }
    results[scenario.name] = rows;
    const ms = rows.map((r) => r.ms).filter(Number.isFinite).sort((a, b) => a - b);
    const median = ms[Math.floor(ms.length / 2)];
    const worst = ms[ms.length - 1];
    const exits = [...new Set(rows.map((r) => r.exit ?? r.note))].join(", ");
    const left = rows.reduce((n, r) => n + (r.left ?? 0), 0);
    console.log(`${scenario.name}: signal to exit median ${median?.toFixed(1)} ms, worst ${worst?.toFixed(1)} ms over ${ms.length} runs; ended by ${exits}; files left ${left}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
saveResults("signals", { runs: RUNS, node: process.version, results });
