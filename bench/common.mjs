// Shared helpers for the whole-process benchmarks (bench/*.mjs). They run the *built* CLIs
// (dist/bin, `npm run build` first) against the native LLVM tools, in the same run, and save JSON
// to bench/results/. The machine is shared and noisy: report medians and native/ours ratios.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// These build machines set NODE_EXTRA_CA_CERTS, which costs every Node start ~45 ms reading certificates; users'
// machines do not. Every command timed from here (ours and native alike) runs without it.
delete process.env.NODE_EXTRA_CA_CERTS;

export const ROOT = new URL("..", import.meta.url).pathname;
export const RESULTS = join(ROOT, "bench/results");

/** The built bin, run the way users run it (an executable; see scripts/bundle-bins.mjs). */
export function ours(name) {
  return join(ROOT, "dist/bin", `${name}.js`);
}

export function scratchDir(label) {
  return mkdtempSync(join(process.env.OFFLOAD_KIT_BENCH_DIR ?? tmpdir(), `offload-kit-bench-${label}-`));
}

export function haveCommand(name) {
  return spawnSync("sh", ["-c", `command -v ${name}`]).status === 0;
}

/** Ends the benchmark (exit 2) naming the first of `names` that is not on PATH. */
export function requireCommands(names) {
  for (const name of names) {
    if (!haveCommand(name)) {
      console.error(`needs ${name} on PATH`);
      process.exit(2);
    }
  }
}

/**
 * Times shell commands with hyperfine in one run (interleaved warmups, same conditions) and returns
 * { name: { median, mean, min, max, runs } } in seconds.
 */
export function hyperfine(commands, { runs = 10, warmup = 2, prepare } = {}) {
  const dir = scratchDir("hyperfine");
  const out = join(dir, "result.json");
  const args = ["--style", "none", "--runs", String(runs), "--warmup", String(warmup), "--export-json", out];
  if (prepare) args.push("--prepare", prepare);
  for (const [name, command] of Object.entries(commands)) args.push("--command-name", name, command);
  execFileSync("hyperfine", args, { stdio: ["ignore", "ignore", "inherit"] });
  const json = JSON.parse(execFileSync("cat", [out], { encoding: "utf8" }));
  const result = {};
  for (const r of json.results) {
    const sorted = [...r.times].sort((a, b) => a - b);
    result[r.command] = { median: sorted[Math.floor(sorted.length / 2)], mean: r.mean, min: r.min, max: r.max, runs: r.times.length };
  }
  return result;
}

/** Peak resident set size of a shell command in MiB (GNU time -v), median of `runs`. */
export function peakRssMiB(command, runs = 3) {
  const values = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync("/usr/bin/time", ["-v", "sh", "-c", command], { encoding: "utf8", maxBuffer: 1 << 26 });
    const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr);
    if (!m) throw new Error(`no RSS for: ${command}\n${r.stderr.slice(-500)}`);
    values.push(Number(m[1]) / 1024);
  }
  values.sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)];
}

export function saveResults(name, data) {
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `${name}.json`);
  writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), node: process.version, ...data }, null, 2)}\n`);
  return file;
}

/** Deterministic pseudo-random bytes (xorshift), compressible or not. */
export function fillBytes(buffer, seed, { compressible = false } = {}) {
  let x = seed >>> 0 || 1;
  for (let i = 0; i < buffer.length; i += 4) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    const v = compressible ? (x % 7) * 0x01010101 : x;
    buffer[i] = v & 0xff; buffer[i + 1] = (v >>> 8) & 0xff; buffer[i + 2] = (v >>> 16) & 0xff; buffer[i + 3] = v >>> 24;
  }
  return buffer;
}

export function printTable(title, rows) {
  console.log(`\n${title}`);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  for (const r of rows) console.log(`  ${r.map((c, i) => String(c).padEnd(widths[i])).join("  ")}`);
}

/** Native-vs-ours results and a printable table: `record(name, hyperfine({native, ours}), target)`. */
export function ratioRecorder() {
  const results = {};
  const rows = [["case", "native median s", "ours median s", "native/ours", "target"]];
  function record(name, timings, target) {
    const ratio = timings.native.median / timings.ours.median;
    results[name] = { native: timings.native, ours: timings.ours, ratio, target };
    rows.push([name, timings.native.median.toFixed(4), timings.ours.median.toFixed(4), ratio.toFixed(2), target]);
  }
  return { results, rows, record };
}
