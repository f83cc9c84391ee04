// Linked-ELF surgery (issue 17, src/elf-edit/): Debian's librocsparse (1.3 GB, 111 fat binaries)
// rewritten keeping only gfx90a's entries, whole process, vs `cp` of the output (the floor: the same
// bytes written once). Reports the ideal saving (the dropped entries' bytes) vs the actual file
// shrink, and wall time and peak RSS (/usr/bin/time -v, median of the runs). NODE_EXTRA_CA_CERTS is
// unset for the child (it makes Node load extra certificates at start-up). Targets (issue 17):
// time <= 1.2x cp, RSS <= 64 MiB, saved >= 95% of ideal. Results go to bench/results/elf-edit.json.
// Usage: npm run build && OFFLOAD_KIT_BENCH_DIR=/dev/shm node bench/elf-edit.mjs [LIBRARY] [--runs=N]
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { printTable, saveResults, scratchDir } from "./common.mjs";

const library = process.argv.slice(2).find((a) => !a.startsWith("--")) ?? "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1";
const runs = Number(process.argv.find((a) => a.startsWith("--runs="))?.slice(7) ?? 3);
if (!existsSync(library)) {
  console.error(`${library} is not installed (Debian: apt-get install librocsparse0)`);
  process.exit(2);
}
const dir = scratchDir("elf-edit");
const output = join(dir, "pruned.so");
const copy = join(dir, "copy.so");
const script = fileURLToPath(new URL("./elf-edit-prune.mjs", import.meta.url));
const env = { ...process.env };
delete env.NODE_EXTRA_CA_CERTS;

function timed(argv) {
  const r = spawnSync("/usr/bin/time", ["-v", ...argv], { encoding: "utf8", env, maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${argv.join(" ")} failed: ${r.stderr.slice(-800)}`);
  const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(r.stderr);
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr);
  return { stdout: r.stdout, seconds: Number(wall[1] ?? 0) * 3600 + Number(wall[2]) * 60 + Number(wall[3]), rssMiB: Number(rss[1]) / 1024 };
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const prune = [];
const cp = [];
let report;
for (let i = 0; i < runs; i++) {
  rmSync(output, { force: true });
  const run = timed([process.execPath, script, library, output, "gfx90a"]);
  report = JSON.parse(run.stdout);
  prune.push(run);
  rmSync(copy, { force: true });
  cp.push(timed(["cp", output, copy]));
}
rmSync(copy, { force: true });
rmSync(output, { force: true });

const result = {
  library,
  ...report,
  savedOfIdeal: report.saved / report.dropped,
  prune: { seconds: median(prune.map((r) => r.seconds)), rssMiB: median(prune.map((r) => r.rssMiB)) },
  cp: { seconds: median(cp.map((r) => r.seconds)), rssMiB: median(cp.map((r) => r.rssMiB)) },
  runs,
};
printTable(`prune ${library} to gfx90a (${process.version}, median of ${runs})`, [
  ["input bytes", report.inputSize],
  ["dropped entries (ideal saving)", report.dropped],
  ["file shrink (actual)", `${report.saved} (${(100 * result.savedOfIdeal).toFixed(2)}% of ideal)`],
  ["rewrite wall s / peak RSS MiB", `${result.prune.seconds.toFixed(2)} / ${result.prune.rssMiB.toFixed(1)}`],
  ["cp of the output wall s / RSS MiB", `${result.cp.seconds.toFixed(2)} / ${result.cp.rssMiB.toFixed(1)}`],
  ["rewrite / cp", (result.prune.seconds / result.cp.seconds).toFixed(2)],
]);
console.log(saveResults("elf-edit", result));
