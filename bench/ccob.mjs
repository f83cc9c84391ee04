// Compressed offload bundles (issue 4's targets), ours against clang-offload-bundler 19, in one run so
// the ratios share the machine's conditions:
//   - -compress a 200 MiB bundle of compressible data (two 100 MiB entries, zstd level 3)  target >= 1.2x
//   - decompress and unbundle all of it: the file 19 wrote (one zstd frame) and the one we
//     wrote (8 MiB frames, decoded on worker threads); both tools read both              target >= 1.0x
//   - peak RSS of both for each case
//   - -list a blob of 64 concatenated compressed bundles (native 19 cannot read it)    well under 1 s
//   - offload-kit extract of 24 CCOBs in one section, decoded in turn vs ahead on worker threads (ours only)
//   - MD5 of 64 MiB (node:crypto, hash-wasm, js-md5-like pure JS is not a dependency) and zstd level 3
//     in-process on 200 MiB, for the README's library table
// Ours runs on the `node` first on PATH: put Node 24's folder first for its figures.
// Usage: npm run build && OFFLOAD_KIT_BENCH_DIR=/dev/shm node bench/ccob.mjs [--quick]
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fillBytes, haveCommand, hyperfine, ours, peakRssMiB, printTable, saveResults, scratchDir } from "./common.mjs";

const quick = process.argv.includes("--quick");
const NATIVE = "clang-offload-bundler-19";
if (!haveCommand(NATIVE) || !haveCommand("hyperfine")) {
  console.error(`needs ${NATIVE} and hyperfine on PATH`);
  process.exit(2);
}

const dir = scratchDir("ccob");
const MiB = 1024 * 1024;
const ENTRY = (quick ? 25 : 100) * MiB;
const T = "hip-amdgcn-amd-amdhsa--gfx906,hip-amdgcn-amd-amdhsa--gfx90a";
const a = join(dir, "a.bin");
const b = join(dir, "b.bin");
writeFileSync(a, fillBytes(new Uint8Array(ENTRY), 1, { compressible: true }));
writeFileSync(b, fillBytes(new Uint8Array(ENTRY), 2, { compressible: true }));
const bundleArgs = `-type=o -targets=${T} -input=${a} -input=${b}`;
const runs = quick ? 3 : 7;

const results = {};
const rows = [["case", "native median s", "ours median s", "native/ours", "native RSS MiB", "ours RSS MiB", "target"]];
function record(name, commands, target) {
  const timings = hyperfine(commands, { runs, warmup: 1 });
  const rss = { native: peakRssMiB(commands.native), ours: peakRssMiB(commands.ours) };
  const ratio = timings.native.median / timings.ours.median;
  results[name] = { native: timings.native, ours: timings.ours, ratio, rssMiB: rss, target };
  rows.push([name, timings.native.median.toFixed(3), timings.ours.median.toFixed(3), ratio.toFixed(2), rss.native.toFixed(0), rss.ours.toFixed(0), target]);
}

const out19 = join(dir, "native.ccob");
const outOurs = join(dir, "ours.ccob");
record(`-compress ${(2 * ENTRY) / MiB} MiB`, {
  native: `${NATIVE} ${bundleArgs} -output=${out19} -compress`,
  ours: `${ours("offload-bundler")} ${bundleArgs} -output=${outOurs} -compress`,
}, ">= 1.2");
const sizes = { native: readFileSync(out19).length, ours: readFileSync(outOurs).length };

const unbundleArgs = (input) => `-type=o -targets=${T} -input=${input} -unbundle -output=${join(dir, "u1")} -output=${join(dir, "u2")}`;
for (const [label, input] of [["19's file (1 frame)", out19], ["our file (8 MiB frames)", outOurs]]) {
  record(`decompress + unbundle all, ${label}`, {
    native: `${NATIVE} ${unbundleArgs(input)}`,
    ours: `${ours("offload-bundler")} ${unbundleArgs(input)}`,
  }, ">= 1.0");
}

// 64 small compressed bundles in one blob, as a .hip_fatbin section of a library carries them.
const small = [];
for (let i = 0; i < 64; i++) {
  const input = join(dir, `dev${i}.bin`);
  writeFileSync(input, fillBytes(new Uint8Array(64 * 1024 + i), 100 + i, { compressible: true }));
  const outI = join(dir, `b${i}.ccob`);
  const r = await import("node:child_process").then(({ spawnSync }) =>
    spawnSync(NATIVE, ["-type=bc", `-targets=hipv4-amdgcn-amd-amdhsa--gfx${900 + (i % 10)}`, `-input=${input}`, `-output=${outI}`, "-compress"]),
  );
  if (r.status !== 0) throw new Error(r.stderr.toString());
  small.push(readFileSync(outI));
}
const multi = join(dir, "multi64.ccob");
writeFileSync(multi, Buffer.concat(small));
const listTiming = hyperfine({ ours: `${ours("offload-bundler")} -type=bc -list -input=${multi}` }, { runs: 10, warmup: 2 });
results["-list 64 concatenated CCOBs"] = { ours: listTiming.ours, target: "well under 1 s", nativeFails: true };
rows.push(["-list 64 concatenated CCOBs", "fails", listTiming.ours.median.toFixed(3), "-", "-", "-", "< 1 s"]);

// A .hip_fatbin-like section of 24 compressed bundles (12 MiB each decompressed, 4 KiB aligned, as ROCm 6
// libraries carry one per translation unit), every entry extracted: decoded in turn (OFFLOAD_KIT_PREFETCH=0)
// against decoded ahead on worker threads. Native 19 cannot read it (it stops at the first CCOB).
const sectionParts = [];
let sectionSize = 0;
const parts = [0, 1, 2].map((i) => {
  const file = join(dir, `part${i}.bin`);
  writeFileSync(file, fillBytes(new Uint8Array(4 * MiB), 200 + i, { compressible: true }));
  return file;
});
for (let i = 0; i < 24; i++) {
  const outI = join(dir, `s${i}.ccob`);
  const { spawnSync } = await import("node:child_process");
  const r = spawnSync(NATIVE, ["-type=o", "-compress", "-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906,hip-amdgcn-amd-amdhsa--gfx90a",
    `-input=${parts[0]}`, `-input=${parts[1]}`, `-input=${parts[i % 3]}`, `-output=${outI}`]);
  if (r.status !== 0) throw new Error(r.stderr.toString());
  const bytes = readFileSync(outI);
  const pad = (4096 - ((sectionSize + bytes.length) % 4096)) % 4096;
  sectionParts.push(bytes, Buffer.alloc(pad));
  sectionSize += bytes.length + pad;
}
const section = join(dir, "section24.bin");
writeFileSync(section, Buffer.concat(sectionParts));
const extractTo = join(dir, "extracted");
const sectionTiming = hyperfine({
  "in turn": `env OFFLOAD_KIT_PREFETCH=0 ${ours("offload-kit")} extract --out-dir=${extractTo} ${section}`,
  "ahead": `${ours("offload-kit")} extract --out-dir=${extractTo} ${section}`,
}, { runs, warmup: 1, prepare: `rm -rf ${extractTo}` });
results["extract 24 CCOBs of 12 MiB in one section"] = {
  inTurn: sectionTiming["in turn"], ahead: sectionTiming.ahead, ratio: sectionTiming["in turn"].median / sectionTiming.ahead.median,
};
rows.push(["extract 24 CCOBs (12 MiB each), in turn vs ahead", sectionTiming["in turn"].median.toFixed(3), sectionTiming.ahead.median.toFixed(3),
  (sectionTiming["in turn"].median / sectionTiming.ahead.median).toFixed(2), "-", "-", "(ours vs ours)"]);

// Library measurements behind the README's choice (in-process, one run each after a warm-up).
const { nodeCodecs } = await import("../dist/compress/node/codecs.js");
const { createMD5 } = await import("hash-wasm");
const data = readFileSync(a).subarray(0, 64 * MiB);
const md5 = await createMD5();
const time = (f) => {
  f();
  const t = performance.now();
  f();
  return (performance.now() - t) / 1000;
};
const mbps = (bytes, s) => `${(bytes / MiB / s).toFixed(0)} MiB/s`;
const library = {
  "md5 node:crypto": mbps(data.length, time(() => createHash("md5").update(data).digest())),
  "md5 hash-wasm": mbps(data.length, time(() => { md5.init(); md5.update(data); md5.digest(); })),
  "zstd-wasm level 3 compress (one thread)": mbps(data.length, time(() => nodeCodecs.zstdCompress(data, 3))),
};
const frame = nodeCodecs.zstdCompress(data, 3);
library["zstd-wasm decompress (one thread)"] = mbps(data.length, time(() => nodeCodecs.zstdDecompressFrame(frame, data.length)));
results.library = library;
results.sizes = sizes;

printTable("Compressed bundles: clang-offload-bundler 19 vs offload-bundler (medians)", rows);
console.log("\nfile sizes:", sizes, "\nlibraries:", library);
console.log(`saved ${saveResults("ccob", { quick, results })}`);
