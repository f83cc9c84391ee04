// Whole-process benchmarks of offload-bundler / offload-kit against clang-offload-bundler 19
// (issue 2's targets), all in one run so the ratios share the machine's conditions:
//   - 2000 small bundles (host + 4 targets, 4-64 KiB entries), one target: `offload-kit unbundle` once
//     vs one native process per file                                                target >= 100x
//   - -list on a 1 GiB bundle                                                         target >= 10x
//   - unbundle one 112 MiB entry of a 1 GiB bundle                                    target >= 6x
//   - unbundle all 9 entries of a 1 GiB bundle                                        target >= 1.7x
//   - unbundle a single small file                                          no worse than 2.5x slower
//   - peak RSS of ours under 64 MB whatever the input size
// Usage: npm run build && node bench/bundler.mjs [--quick]
import { closeSync, mkdirSync, openSync, rmSync, writeSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fillBytes, haveCommand, hyperfine, ours, peakRssMiB, printTable, saveResults, scratchDir, ratioRecorder } from "./common.mjs";

const quick = process.argv.includes("--quick");
const NATIVE = "clang-offload-bundler-19";
if (!haveCommand(NATIVE) || !haveCommand("hyperfine")) {
  console.error(`needs ${NATIVE} and hyperfine on PATH`);
  process.exit(2);
}
const { layoutBinaryBundle } = await import("../dist/formats/bundle.js");

const dir = scratchDir("bundler");
const HOST = "host-x86_64-unknown-linux-gnu-";
const DEVICES = ["gfx906", "gfx908", "gfx90a:xnack-", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1201"].map((g) => `hipv4-amdgcn-amd-amdhsa--${g}`);

/** Writes a bundle of `sizes` bytes per entry straight to disk (header + payloads), in 8 MiB chunks. */
function writeBundle(path, ids, sizes, seed) {
  const layout = layoutBinaryBundle(ids.map((id, i) => ({ id, size: sizes[i] })), 1);
  const fd = openSync(path, "w");
  writeSync(fd, layout.header);
  const chunk = new Uint8Array(8 << 20);
  ids.forEach((_, i) => {
    let left = sizes[i];
    fillBytes(chunk, seed + i);
    while (left > 0) {
      const n = Math.min(left, chunk.length);
      writeSync(fd, chunk, 0, n);
      left -= n;
    }
  });
  closeSync(fd);
}

const { results, rows, record } = ratioRecorder();

try {
  // 1 GiB: host + 8 devices, 112 MiB each.
  const big = join(dir, "big.bc");
  const entryMiB = quick ? 16 : 112;
  writeBundle(big, [HOST, ...DEVICES], Array(9).fill(entryMiB << 20), 1);
  const one = DEVICES[4];
  const outs = [HOST, ...DEVICES].map((_, i) => `-output=${join(dir, `all${i}.out`)}`).join(" ");
  // As typed on a command line: 19 would turn the stored "...-gnu-" into a different ID.
  const targetsAll = ["host-x86_64-unknown-linux-gnu", ...DEVICES].join(",");
  const runs = quick ? 3 : 10;
  record(`-list, ${9 * entryMiB} MiB bundle`, hyperfine({
    native: `${NATIVE} -list -type=bc -input=${big}`,
    ours: `${ours("offload-bundler")} -list -type=bc -input=${big}`,
  }, { runs }), ">= 10x");
  record(`unbundle one ${entryMiB} MiB entry`, hyperfine({
    native: `${NATIVE} -unbundle -type=bc -targets=${one} -input=${big} -output=${join(dir, "one.out")}`,
    ours: `${ours("offload-bundler")} -unbundle -type=bc -targets=${one} -input=${big} -output=${join(dir, "one.out")}`,
  }, { runs }), ">= 6x");
  record(`unbundle all 9 entries`, hyperfine({
    native: `${NATIVE} -unbundle -type=bc -targets=${targetsAll} -input=${big} ${outs}`,
    ours: `${ours("offload-bundler")} -unbundle -type=bc -targets=${targetsAll} -input=${big} ${outs}`,
  }, { runs: quick ? 2 : 5 }), ">= 1.7x");

  // One small file.
  const small = join(dir, "small.bc");
  writeBundle(small, [HOST, ...DEVICES.slice(0, 4)], [4096, 16384, 32768, 65536, 8192], 7);
  record("unbundle one small file", hyperfine({
    native: `${NATIVE} -unbundle -type=bc -targets=${DEVICES[1]} -input=${small} -output=${join(dir, "small.out")}`,
    ours: `${ours("offload-bundler")} -unbundle -type=bc -targets=${DEVICES[1]} -input=${small} -output=${join(dir, "small.out")}`,
  }, { runs: 30, warmup: 3 }), "ratio >= 0.4");

  // 2000 small bundles, host + 4 targets with 4-64 KiB entries.
  const manyDir = join(dir, "many");
  mkdirSync(manyDir);
  const count = quick ? 200 : 2000;
  let seed = 11;
  for (let i = 0; i < count; i++) {
    const sizes = Array.from({ length: 5 }, () => 4096 + ((seed = (seed * 1103515245 + 12345) >>> 0) % (60 * 1024)));
    writeBundle(join(manyDir, `f${String(i).padStart(4, "0")}.bc`), [HOST, ...DEVICES.slice(0, 4)], sizes, i);
  }
  const listFile = join(dir, "many.txt");
  writeFileSync(listFile, "");
  const target = DEVICES[2];
  record(`${count} small bundles, one target`, hyperfine({
    native: `for f in ${manyDir}/*.bc; do ${NATIVE} -unbundle -type=bc -targets=${target} -input=$f -output=$f.native.out || exit 1; done`,
    ours: `${ours("offload-kit")} unbundle -targets=${target} --out-dir=${join(dir, "many-out")} ${manyDir}/*.bc`,
  }, { runs: quick ? 1 : 3, warmup: 1 }), ">= 100x");

  const rss = {
    "ours -list 1 GiB": peakRssMiB(`${ours("offload-bundler")} -list -type=bc -input=${big}`),
    "ours unbundle one entry": peakRssMiB(`${ours("offload-bundler")} -unbundle -type=bc -targets=${one} -input=${big} -output=${join(dir, "one.out")}`),
    "ours unbundle all 9": peakRssMiB(`${ours("offload-bundler")} -unbundle -type=bc -targets=${targetsAll} -input=${big} ${outs}`),
    "ours 2000 small (one process)": peakRssMiB(`${ours("offload-kit")} unbundle -targets=${target} --out-dir=${join(dir, "many-out")} ${manyDir}/*.bc`, 1),
    "native unbundle all 9": peakRssMiB(`${NATIVE} -unbundle -type=bc -targets=${targetsAll} -input=${big} ${outs}`, 1),
    "native -list 1 GiB": peakRssMiB(`${NATIVE} -list -type=bc -input=${big}`, 1),
  };
  printTable("whole-process timings (hyperfine medians, same run)", rows);
  printTable("peak RSS (MiB, /usr/bin/time -v)", [["process", "MiB"], ...Object.entries(rss).map(([k, v]) => [k, v.toFixed(1)])]);
  const file = saveResults(quick ? "bundler-quick" : "bundler", { results, rss, entryMiB, count });
  console.log(`\nsaved ${file}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
