// Whole-process benchmarks of offload-packager against clang-offload-packager 19 (issue 5's targets), all in
// one run so the ratios share the machine's conditions:
//   - package 8 images of 64 MiB into one file                      target native/ours >= 1.2x
//   - extract all 8 images from that file (generated names)          target >= 1.6x
//   - extract one image of the 8                                      target >= 6x
//   - peak RSS of ours under 64 MB in each case
// Ours streams: headers come from the file sizes, images are copied through the engine window. The native
// tool holds every image in memory (packaging) or copies every binary (extraction), whatever is asked.
// Usage: npm run build && node bench/packager.mjs [--quick]
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { fillBytes, haveCommand, hyperfine, ours, peakRssMiB, printTable, saveResults, scratchDir, ratioRecorder } from "./common.mjs";

const quick = process.argv.includes("--quick");
const NATIVE = "clang-offload-packager-19";
if (!haveCommand(NATIVE) || !haveCommand("hyperfine")) {
  console.error(`needs ${NATIVE} and hyperfine on PATH`);
  process.exit(2);
}

const dir = scratchDir("packager");
const imageMiB = quick ? 8 : 64;
const ARCHS = ["gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1201"];

function writeImage(path, bytes, seed) {
  const fd = openSync(path, "w");
  const chunk = fillBytes(new Uint8Array(8 << 20), seed);
  for (let left = bytes; left > 0; left -= chunk.length) writeSync(fd, chunk, 0, Math.min(left, chunk.length));
  closeSync(fd);
}

const { results, rows, record } = ratioRecorder();

try {
  const images = ARCHS.map((arch, i) => {
    const path = join(dir, `img-${arch}.o`);
    writeImage(path, imageMiB << 20, i + 1);
    return `--image=file=${path},triple=amdgcn-amd-amdhsa,arch=${arch},kind=openmp`;
  }).join(" ");
  const packed = join(dir, "packed.bin");
  const runs = quick ? 3 : 10;
  const pack = (tool) => `${tool} -o ${packed} ${images}`;
  record(`package 8 x ${imageMiB} MiB`, hyperfine({ native: pack(NATIVE), ours: pack(ours("offload-packager")) }, { runs }), ">= 1.2x");

  // Each extraction runs in its own directory: the outputs get generated names in the current directory.
  const outNative = join(dir, "out-native");
  const outOurs = join(dir, "out-ours");
  mkdirSync(outNative);
  mkdirSync(outOurs);
  const extract = (tool, out, filter) => `cd ${out} && ${tool} ${packed} --image=${filter}`;
  record("extract all 8", hyperfine({
    native: extract(NATIVE, outNative, "kind=openmp"),
    ours: extract(ours("offload-packager"), outOurs, "kind=openmp"),
  }, { runs }), ">= 1.6x");
  record("extract one of 8", hyperfine({
    native: extract(NATIVE, outNative, "arch=gfx1030"),
    ours: extract(ours("offload-packager"), outOurs, "arch=gfx1030"),
  }, { runs }), ">= 6x");

  const rss = {
    "ours package": peakRssMiB(pack(ours("offload-packager"))),
    "ours extract all": peakRssMiB(extract(ours("offload-packager"), outOurs, "kind=openmp")),
    "ours extract one": peakRssMiB(extract(ours("offload-packager"), outOurs, "arch=gfx1030")),
    "native package": peakRssMiB(pack(NATIVE), 1),
    "native extract all": peakRssMiB(extract(NATIVE, outNative, "kind=openmp"), 1),
    "native extract one": peakRssMiB(extract(NATIVE, outNative, "arch=gfx1030"), 1),
  };
  printTable("whole-process timings (hyperfine medians, same run)", rows);
  printTable("peak RSS (MiB, /usr/bin/time -v)", [["process", "MiB"], ...Object.entries(rss).map(([k, v]) => [k, v.toFixed(1)])]);
  const file = saveResults(quick ? "packager-quick" : "packager", { results, rss, imageMiB });
  console.log(`\nsaved ${file}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
