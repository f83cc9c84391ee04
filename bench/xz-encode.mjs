// The TypeScript xz encoder (src/compress/xz-encode.ts, built: `npm run build` first), in both its modes
// (fast: hash table and lazy step; normal: binary trees, prices, optimal parsing), against `xz -1`,
// `xz -6` (both -T1: one thread, as ours) and `gzip -6`, on Debian's librocrand.so.1.1 (25 MB of host code
// and AMDGPU code objects) or OFFLOAD_KIT_BENCH_XZ_INPUT. Ours runs in this process, pushed in 1 MiB
// pieces as the package writers feed it; the programs read a file and write to a pipe. Each side runs
// OFFLOAD_KIT_BENCH_RUNS times (default 3), interleaved; the table gives the median wall time, MB/s of
// input over wall and over CPU time (the CPU figure is steadier on a shared machine), and the output size.
// Every stream of ours is checked once: `xz -dc` must give the input back. OFFLOAD_KIT_BENCH_XZ_OPTIONS
// takes the encoder's options as JSON for both modes (e.g. {"depth":4}); OFFLOAD_KIT_BENCH_XZ_MODES picks
// the modes (default "fast,normal").
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { printTable, requireCommands, saveResults, scratchDir } from "./common.mjs";

requireCommands(["xz", "gzip", "/usr/bin/time"]);
const { createXzEncoder } = await import("../dist/compress/xz-encode.js");

const input = process.env.OFFLOAD_KIT_BENCH_XZ_INPUT ?? "/usr/lib/x86_64-linux-gnu/librocrand.so.1.1";
const runs = Number(process.env.OFFLOAD_KIT_BENCH_RUNS ?? 3);
const options = JSON.parse(process.env.OFFLOAD_KIT_BENCH_XZ_OPTIONS ?? "{}");
const modes = (process.env.OFFLOAD_KIT_BENCH_XZ_MODES ?? "fast,normal").split(",");
const bytes = new Uint8Array(readFileSync(input));
const MB = bytes.length / 1e6;

function ours(mode) {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const encoder = createXzEncoder({ ...options, mode });
  const parts = [];
  for (let at = 0; at < bytes.length; at += 1 << 20) parts.push(...encoder.push(bytes.subarray(at, at + (1 << 20))));
  parts.push(...encoder.finish());
  const used = process.cpuUsage(cpu);
  return { wall: (performance.now() - started) / 1000, cpu: (used.user + used.system) / 1e6, size: parts.reduce((n, p) => n + p.length, 0), parts };
}

function program(command, args) {
  const started = performance.now();
  const r = spawnSync("/usr/bin/time", ["-f", "%U %S", "sh", "-c", `${command} ${args.join(" ")} < '${input}' | wc -c`], { encoding: "utf8" });
  const wall = (performance.now() - started) / 1000;
  if (r.status !== 0) throw new Error(`${command} failed: ${r.stderr}`);
  const [user, system] = r.stderr.trim().split("\n").pop().split(" ").map(Number);
  return { wall, cpu: user + system, size: Number(r.stdout.trim()) };
}

const sides = {
  ...Object.fromEntries(modes.map((mode) => [`ours (TypeScript, ${mode})`, () => ours(mode)])),
  "xz -1 -T1": () => program("xz", ["-1", "-T1", "-c"]),
  "xz -6 -T1": () => program("xz", ["-6", "-T1", "-c"]),
  "gzip -6": () => program("gzip", ["-6", "-c"]),
};
const samples = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
for (let i = 0; i < runs; i++) {
  for (const [name, run] of Object.entries(sides)) {
    const result = run();
    if (result.parts !== undefined && i === 0) {
      const file = join(scratchDir("xz-encode"), "ours.xz");
      writeFileSync(file, Buffer.concat(result.parts));
      const decoded = spawnSync("xz", ["-dc", file], { maxBuffer: 2 * bytes.length + (1 << 20) });
      if (decoded.status !== 0) throw new Error(`xz -dc refused our ${name} stream: ${decoded.stderr}`);
      if (Buffer.compare(decoded.stdout, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)) !== 0) throw new Error(`our ${name} stream decodes to other bytes`);
    }
    delete result.parts;
    samples[name].push(result);
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const rows = [["encoder", "median wall s", "MB/s wall", "MB/s cpu", "bytes", "ratio", "vs gzip -6"]];
const results = {};
const gzipSize = samples["gzip -6"][0].size;
for (const [name, list] of Object.entries(samples)) {
  const wall = median(list.map((s) => s.wall));
  const cpu = median(list.map((s) => s.cpu));
  const size = list[0].size;
  results[name] = { wall, cpu, size, mbPerSecondWall: MB / wall, mbPerSecondCpu: MB / cpu, ratio: bytes.length / size };
  rows.push([name, wall.toFixed(2), (MB / wall).toFixed(2), (MB / cpu).toFixed(2), size, (bytes.length / size).toFixed(3), (size / gzipSize).toFixed(3)]);
}
printTable(`xz encoders on ${input} (${bytes.length} bytes), ${runs} runs each, options ${JSON.stringify(options)}`, rows);
console.log(`saved ${saveResults("xz-encode", { input, bytes: bytes.length, runs, options, results })}`);
