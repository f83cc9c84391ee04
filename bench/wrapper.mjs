// Whole-process benchmarks of offload-wrapper against the native wrappers (issue 8), in one run so the ratios
// share the machine's conditions:
//   - 4 x 64 MiB images, clang-offload-wrapper 14 flavour vs clang-offload-wrapper-14    target native/ours >= 10x
//   - the same images, --kind=openmp vs llvm-offload-wrapper-22                          (reported, no target)
//   - peak RSS of ours <= 64 MB
// Ours streams: each image is read in 1 MiB chunks and shifted into its bit position on the way out (the native
// tools hold every image, the module and the bitcode buffer in memory). Both outputs are checked to be equal.
// Usage: npm run build && OFFLOAD_KIT_BENCH_DIR=/dev/shm node bench/wrapper.mjs [--quick]
import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { fillBytes, hyperfine, ours, peakRssMiB, printTable, ratioRecorder, requireCommands, saveResults, scratchDir } from "./common.mjs";

const quick = process.argv.includes("--quick");
const W14 = "clang-offload-wrapper-14";
const W22 = "llvm-offload-wrapper-22";
requireCommands([W14, W22, "hyperfine"]);

const dir = scratchDir("wrapper");
const imageMiB = quick ? 8 : 64;

function writeImage(path, bytes, seed) {
  const fd = openSync(path, "w");
  const chunk = fillBytes(new Uint8Array(8 << 20), seed);
  for (let left = bytes; left > 0; left -= chunk.length) writeSync(fd, chunk, 0, Math.min(left, chunk.length));
  closeSync(fd);
}

const { results, rows, record } = ratioRecorder();

try {
  const images = [0, 1, 2, 3].map((i) => {
    const path = join(dir, `img${i}.bin`);
    // Sizes that are not multiples of 4 put the later images at odd bit offsets in the bitcode.
    writeImage(path, (imageMiB << 20) + i * 3, i + 1);
    return path;
  }).join(" ");
  const out = (name) => join(dir, name);
  const runs = quick ? 3 : 10;
  const wrap14 = (tool, file) => `${tool} --target=x86_64-pc-linux-gnu -o ${out(file)} ${images}`;
  const wrap22 = (tool, file) => `${tool} --kind=openmp -o ${out(file)} ${images}`;
  record(`14: 4 x ${imageMiB} MiB`, hyperfine({ native: wrap14(W14, "n14.bc"), ours: wrap14(ours("offload-wrapper"), "o14.bc") }, { runs, warmup: 1 }), ">= 10x");
  record(`22 openmp: 4 x ${imageMiB} MiB`, hyperfine({ native: wrap22(W22, "n22.bc"), ours: wrap22(ours("offload-wrapper"), "o22.bc") }, { runs, warmup: 1 }), "-");
  for (const [a, b] of [["n14.bc", "o14.bc"], ["n22.bc", "o22.bc"]]) execFileSync("cmp", [out(a), out(b)]);
  const rss = {
    "ours 14": peakRssMiB(wrap14(ours("offload-wrapper"), "o14.bc")),
    "ours 22": peakRssMiB(wrap22(ours("offload-wrapper"), "o22.bc")),
    "native 14": peakRssMiB(wrap14(W14, "n14.bc"), 1),
    "native 22": peakRssMiB(wrap22(W22, "n22.bc"), 1),
  };
  printTable("whole-process timings (hyperfine medians, same run; outputs byte-identical)", rows);
  printTable("peak RSS (MiB, /usr/bin/time -v)", [["process", "MiB"], ...Object.entries(rss).map(([k, v]) => [k, v.toFixed(1)])]);
  const file = saveResults(quick ? "wrapper-quick" : "wrapper", { results, rss, imageMiB, bytes: readFileSync(out("o14.bc")).length });
  console.log(`\nsaved ${file}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
