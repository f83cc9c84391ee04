// The TypeScript bzip2 encoder (src/compress/bzip2-encode.ts, built into dist/: `npm run build` first)
// against `bzip2 -9`: MB/s (input bytes per wall second and per CPU second, medians of --runs) and the
// compressed size of each, plus whether the two streams are the same bytes. Input is fed in 1 MiB chunks,
// as the package writers feed a tar. The machine is shared: CPU seconds are the steadier figure.
//
//   node bench/bzip2-encode.mjs [--runs N] [FILE...]
// Default inputs: /usr/lib/x86_64-linux-gnu/librocrand.so.1.1 (an ELF with GPU code objects) and a tar of
// this repository's tracked files at HEAD (`git archive`: text, code, small binaries).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ROOT, requireCommands, saveResults, scratchDir } from "./common.mjs";

const { createBzip2Encoder } = await import(join(ROOT, "dist/compress/bzip2-encode.js"));
requireCommands(["bzip2", "git"]);

const args = process.argv.slice(2);
let runs = 3;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--runs") runs = Number(args[++i]);
  else files.push(args[i]);
}
const scratch = scratchDir("bzip2-encode");
if (files.length === 0) {
  const elf = "/usr/lib/x86_64-linux-gnu/librocrand.so.1.1";
  if (existsSync(elf)) files.push(elf);
  const tar = join(scratch, "offload-kit-head.tar");
  execFileSync("git", ["-C", ROOT, "archive", "--format=tar", "-o", tar, "HEAD"]);
  files.push(tar);
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const CHUNK = 1 << 20;

function encodeOurs(bytes) {
  const encoder = createBzip2Encoder({ level: 9 });
  const parts = [];
  for (let at = 0; at < bytes.length; at += CHUNK) parts.push(...encoder.push(bytes.subarray(at, at + CHUNK)));
  parts.push(...encoder.finish());
  return Buffer.concat(parts);
}

const results = [];
for (const file of files) {
  const bytes = new Uint8Array(readFileSync(file));
  const mb = bytes.length / 1e6;
  const ours = { wall: [], cpu: [] };
  let stream;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    stream = encodeOurs(bytes);
    const c = process.cpuUsage(c0);
    ours.wall.push((performance.now() - t0) / 1000);
    ours.cpu.push((c.user + c.system) / 1e6);
  }
  const native = { wall: [], cpu: [] };
  const out = join(scratch, "native.bz2");
  for (let r = 0; r < runs; r++) {
    // GNU time reports the child's own CPU seconds.
    const run = spawnSync("/usr/bin/time", ["-f", "%e %U %S", "sh", "-c", `bzip2 -9c < '${file}' > '${out}'`], { encoding: "utf8" });
    const [wall, user, sys] = run.stderr.trim().split("\n").at(-1).split(" ").map(Number);
    native.wall.push(wall);
    native.cpu.push(user + sys);
  }
  const reference = readFileSync(out);
  const ok = spawnSync("bzip2", ["-t"], { input: stream }).status === 0;
  const row = {
    file,
    inputBytes: bytes.length,
    ours: { bytes: stream.length, ratio: +(stream.length / bytes.length).toFixed(4), mbPerWallSecond: +(mb / median(ours.wall)).toFixed(2), mbPerCpuSecond: +(mb / median(ours.cpu)).toFixed(2) },
    bzip2: { bytes: reference.length, ratio: +(reference.length / bytes.length).toFixed(4), mbPerWallSecond: +(mb / median(native.wall)).toFixed(2), mbPerCpuSecond: +(mb / median(native.cpu)).toFixed(2) },
    sameBytes: Buffer.compare(stream, reference) === 0,
    bzip2TestPasses: ok,
  };
  results.push(row);
  console.log(`${file}: ${(mb).toFixed(1)} MB | ours ${row.ours.bytes} bytes (${(100 * row.ours.ratio).toFixed(1)}%), ${row.ours.mbPerWallSecond} MB/s wall, ${row.ours.mbPerCpuSecond} MB/s CPU | bzip2 -9 ${row.bzip2.bytes} bytes (${(100 * row.bzip2.ratio).toFixed(1)}%), ${row.bzip2.mbPerWallSecond} MB/s wall, ${row.bzip2.mbPerCpuSecond} MB/s CPU | same bytes: ${row.sameBytes} | bzip2 -t: ${ok ? "ok" : "FAILED"}`);
}
rmSync(scratch, { recursive: true, force: true });
console.log(`saved ${saveResults("bzip2-encode", { runs, results })}`);
