// NVIDIA fatbins, whole process, against what a CUDA user runs today (issue 29): `offload-kit ls` and `sizes`
// of a CUDA library vs NVIDIA's `cuobjdump -lelf -lptx` (12.4, from scripts/fetch-cuobjdump.sh), and
// `offload-kit prune --keep=sm_90 --drop-ptx` vs `cp` of the output it writes; also `compress` and
// `decompress` of the library's entries. Libraries: Debian's libnvjpeg12 (CUDA 12.4, LZ4 entries, 6.7 MB;
// fetched with cuobjdump's private apt config) and NVIDIA's libcurand.so.10 from the nvidia-curand 10.4 wheel
// of the local mirror (CUDA 13, zstd entries, 133 MB); each case is skipped when its input is missing.
// hyperfine medians (OFFLOAD_KIT_BENCH_RUNS, default 5) of native and ours in one run, NODE_EXTRA_CA_CERTS
// unset (bench/common.mjs); the load average before and after is printed and saved. `npm run build` first.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { homedir, loadavg } from "node:os";
import { join } from "node:path";
import { hyperfine, ours, printTable, ratioRecorder, requireCommands, saveResults, scratchDir } from "./common.mjs";

const CUOBJDUMP = process.env.OFFLOAD_KIT_CUOBJDUMP ?? join(homedir(), ".cache/offload-kit/cuobjdump/cuobjdump");
const CURAND_WHEEL = "/opt/pypi-more/files/nvidia_curand-10.4.0.35-py3-none-manylinux_2_27_x86_64.whl";
const runs = Number(process.env.OFFLOAD_KIT_BENCH_RUNS ?? 5);
const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");
const loadBefore = load();

requireCommands(["hyperfine"]);
if (!existsSync(CUOBJDUMP)) {
  console.error(`needs cuobjdump at ${CUOBJDUMP} (scripts/fetch-cuobjdump.sh)`);
  process.exit(2);
}
const dir = scratchDir("nv-fatbin");
const kit = ours("offload-kit");
const libraries = {};
try {
  const config = join(CUOBJDUMP, "..", "apt", "apt.conf");
  execFileSync("apt-get", ["download", "-qq", "libnvjpeg12"], { cwd: dir, stdio: "ignore", env: { ...process.env, APT_CONFIG: config } });
  const deb = readdirSync(dir).find((f) => f.startsWith("libnvjpeg12_"));
  execFileSync("dpkg-deb", ["-x", deb, "nvjpeg"], { cwd: dir });
  const libDir = join(dir, "nvjpeg/usr/lib/x86_64-linux-gnu");
  libraries.libnvjpeg = join(libDir, readdirSync(libDir).find((f) => /^libnvjpeg\.so\.\d+\.\d+/.test(f)));
} catch (e) {
  console.warn(`libnvjpeg12 skipped: ${e.message.split("\n")[0]}`);
}
if (existsSync(CURAND_WHEEL) && spawnSync("unzip", ["-q", "-o", CURAND_WHEEL, "nvidia/cu13/lib/libcurand.so.10", "-d", dir]).status === 0) {
  libraries.libcurand = join(dir, "nvidia/cu13/lib/libcurand.so.10");
} else {
  console.warn(`libcurand skipped (no ${CURAND_WHEEL} or unzip)`);
}

const { results, rows, record } = ratioRecorder();
const sizes = {};
for (const [name, lib] of Object.entries(libraries)) {
  const out = join(dir, `${name}.sm90`);
  const copy = join(dir, `${name}.copy`);
  // The prune's output first, so `cp` copies what prune writes.
  execFileSync(process.execPath, [kit, "prune", "--keep=sm_90", "--drop-ptx", lib, "-o", out], { stdio: "ignore" });
  const compressed = join(dir, `${name}.lz4`);
  const plain = join(dir, `${name}.plain`);
  execFileSync(process.execPath, [kit, "decompress", lib, "-o", plain], { stdio: "ignore" });
  execFileSync(process.execPath, [kit, "compress", plain, "-o", compressed], { stdio: "ignore" });
  sizes[name] = Object.fromEntries([["input", lib], ["pruned", out], ["decompressed", plain], ["compressed", compressed]].map(([k, f]) => [k, Number(execFileSync("stat", ["-c", "%s", f], { encoding: "utf8" }))]));
  const cuobjdump = `${CUOBJDUMP} -lelf -lptx ${lib}`;
  record(`${name}: ls vs cuobjdump -lelf -lptx`, hyperfine({ native: cuobjdump, ours: `${process.execPath} ${kit} ls ${lib}` }, { runs, warmup: 2 }), "");
  record(`${name}: sizes vs cuobjdump -lelf -lptx`, hyperfine({ native: cuobjdump, ours: `${process.execPath} ${kit} sizes ${lib}` }, { runs, warmup: 2 }), "");
  record(`${name}: prune --keep=sm_90 --drop-ptx vs cp of its output`, hyperfine({ native: `cp ${out} ${copy}`, ours: `${process.execPath} ${kit} prune --keep=sm_90 --drop-ptx ${lib} -o ${copy}` }, { runs, warmup: 1 }), "");
  // No native tool re-stores fatbin entries; these are ours alone (median seconds), against cp of the output.
  record(`${name}: decompress vs cp of its output`, hyperfine({ native: `cp ${plain} ${copy}`, ours: `${process.execPath} ${kit} decompress ${lib} -o ${copy}` }, { runs, warmup: 1 }), "");
  record(`${name}: compress (LZ4) of the decompressed library vs cp of its output`, hyperfine({ native: `cp ${compressed} ${copy}`, ours: `${process.execPath} ${kit} compress ${plain} -o ${copy}` }, { runs, warmup: 1 }), "");
}
const loadAfter = load();
printTable(`NVIDIA fatbins (hyperfine medians, ${runs} runs; load ${loadBefore} -> ${loadAfter})`, rows);
console.log("\nbytes:", JSON.stringify(sizes, null, 1));
console.log(`saved ${saveResults("nv-fatbin", { runs, loadBefore, loadAfter, libraries, sizes, results })}`);
