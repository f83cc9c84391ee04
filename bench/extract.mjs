// Whole-process benchmark of `offload-kit extract` on a real ROCm library (issue 9's target), against `cp` of
// the same library into the same folder, in one hyperfine run:
//   - extract every entry of every bundle (librocsparse0: 1.3 GB, 111 bundles x 8 entries)   target <= 1.5x cp
//   - the same with --json (every output hashed with SHA-256 while it is copied)               (reported)
//   - extract one target's entries (--targets)                                                 (reported)
//   - `ls` and `sizes` of the library (the locator reads ~1 MB of it)                          (reported)
//   - peak RSS of ours                                                                         target <= 64 MB
// Outputs go to a fresh folder per run (hyperfine --prepare removes the last one, as it does cp's copy).
// Where the output folder is on the library's own file system, cp copies in the kernel (copy_file_range)
// while Node has no ranged equivalent: put OFFLOAD_KIT_BENCH_DIR on another file system (/dev/shm) for a
// like-for-like comparison, and see the README for both.
// Usage: npm run build && OFFLOAD_KIT_BENCH_DIR=/dev/shm node bench/extract.mjs [--quick] [--library=PATH]
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { haveCommand, hyperfine, ours, peakRssMiB, printTable, ratioRecorder, saveResults, scratchDir } from "./common.mjs";

// Users do not have it; Node reads the certificate file at every start (~45 ms here).
delete process.env.NODE_EXTRA_CA_CERTS;

const quick = process.argv.includes("--quick");
const libraryArg = process.argv.find((a) => a.startsWith("--library="));
const LIBRARY = libraryArg?.substring("--library=".length) ?? "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1";
if (!existsSync(LIBRARY)) {
  console.error(`needs ${LIBRARY} (Debian: apt-get install librocsparse0), or --library=PATH`);
  process.exit(2);
}
if (!haveCommand("hyperfine")) {
  console.error("needs hyperfine on PATH");
  process.exit(2);
}

const dir = scratchDir("extract");
const kit = ours("offload-kit");
const runs = quick ? 3 : 8;
const out = join(dir, "out");
const copy = join(dir, "copy");
const fresh = `rm -rf ${out} ${copy}`;
const { results, rows, record } = ratioRecorder();

try {
  record("extract all entries", hyperfine({ native: `cp ${LIBRARY} ${copy}`, ours: `${kit} extract ${LIBRARY} --out-dir=${out}` }, { runs, prepare: fresh }), "<= 1.5x cp (>= 0.67)");
  record("extract all, --json (SHA-256)", hyperfine({ native: `cp ${LIBRARY} ${copy}`, ours: `${kit} extract --json ${LIBRARY} --out-dir=${out} > /dev/null` }, { runs, prepare: fresh }), "reported");
  const one = "--targets=hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-";
  const single = hyperfine({ ours: `${kit} extract ${LIBRARY} ${one} --out-dir=${out}` }, { runs, prepare: fresh });
  const listing = hyperfine({ ls: `${kit} ls ${LIBRARY}`, sizes: `${kit} sizes ${LIBRARY}` }, { runs: quick ? 5 : 20 });
  const rss = {
    "extract all": peakRssMiB(`${fresh} && ${kit} extract ${LIBRARY} --out-dir=${out}`),
    "extract all --json": peakRssMiB(`${fresh} && ${kit} extract --json ${LIBRARY} --out-dir=${out} > /dev/null`),
    "ls": peakRssMiB(`${kit} ls ${LIBRARY} > /dev/null`),
    "sizes": peakRssMiB(`${kit} sizes ${LIBRARY} > /dev/null`),
  };
  printTable(`whole-process timings (hyperfine medians, same run; "native" is cp of the library; outputs in ${dir})`, rows);
  printTable("other timings (medians, s)", [
    ["case", "median s"],
    [`extract ${one}`, single.ours.median.toFixed(4)],
    ["ls", listing.ls.median.toFixed(4)],
    ["sizes", listing.sizes.median.toFixed(4)],
  ]);
  printTable("peak RSS of ours (MiB, /usr/bin/time -v)", [["process", "MiB"], ...Object.entries(rss).map(([k, v]) => [k, v.toFixed(1)])]);
  const file = saveResults(quick ? "extract-quick" : "extract", { library: LIBRARY, dir, results, single: single.ours, ls: listing.ls, sizes: listing.sizes, rss });
  console.log(`\nsaved ${file}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
