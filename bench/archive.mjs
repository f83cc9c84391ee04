// Heterogeneous device archives (issues 3 and 11), in one run so the ratios share the machine:
//   - two archives of 1000 bundled members (host + 4 device entries each, ~172 MB), unbundled for one
//     target: offload-bundler vs clang-offload-bundler-19, whole process             target >= 1.4x
//       "bitcode": real device bitcode and a host object from clang-19, so both tools build the symbol
//                  table from them (needs clang-19);
//       "raw":     35,000 filler bytes per entry (not symbolic files: no symbol table);
//   - peak RSS of ours for each                                                     target < 64 MB
//   - the member walk in-process, Wasm kernel vs TS twin: baseline (one empty call through the
//     boundary), a tiny archive (3 members, in memory), the 1000-member file (readArchive through a
//     4 KiB window: one member per load) and the kernel alone on 10000 small members in its window
// Outputs are compared byte for byte before timing. Results go to bench/results/archive.json.
// Ours runs on the `node` first on PATH (the bins are `#!/usr/bin/env node` scripts): put Node 24's
// folder first on PATH for its figures.
// Usage: npm run build && OFFLOAD_KIT_BENCH_DIR=/dev/shm node bench/archive.mjs [--quick]
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fillBytes, haveCommand, hyperfine, ours, peakRssMiB, printTable, requireCommands, saveResults, scratchDir } from "./common.mjs";

const quick = process.argv.includes("--quick");
const NATIVE = "clang-offload-bundler-19";
const AR = "llvm-ar-19";
requireCommands([NATIVE, AR, "hyperfine"]);
const { readArchive, writeArchive } = await import("../dist/formats/archive.js");
const { createEngine } = await import("../dist/engine/select.js");
const { FileSource } = await import("../dist/node/file-source.js");

const dir = scratchDir("archive");
const HOST = "host-x86_64-unknown-linux-gnu";
const GPUS = ["gfx906", "gfx908", "gfx90a", "gfx942"];
const MEMBERS = quick ? 200 : 1000;
const TARGET = "hip-amdgcn-amd-amdhsa--gfx90a";

/**
 * One payload per entry. "bitcode": device bitcode and a host object from clang-19 (both tools build the
 * symbol table from them). "raw": ~34 KiB of filler each (not symbolic: no symbol table, the payload head
 * decides that).
 */
function payloads(kind) {
  const files = [join(dir, `${kind}-host.o`), ...GPUS.map((g) => join(dir, `${kind}-${g}.bc`))];
  if (kind === "bitcode") {
    const lines = [];
    for (let i = 0; i < 120; i++) {
      lines.push(`int g${i} = ${i};`);
      lines.push(`int f${i}(int x) { int s = 0; for (int k = 0; k < x; k++) s += k * ${i} ^ g${i}; return s + ${i}; }`);
    }
    const source = join(dir, "kernels.c");
    writeFileSync(source, `${lines.join("\n")}\n`);
    execFileSync("clang-19", ["-c", source, "-o", files[0]]);
    GPUS.forEach((g, i) => execFileSync("clang-19", ["-target", "amdgcn-amd-amdhsa", `-mcpu=${g}`, "-nogpulib", "-emit-llvm", "-c", source, "-o", files[i + 1]]));
    return { files, kind: "clang-19 bitcode + host object" };
  }
  files.forEach((f, i) => writeFileSync(f, fillBytes(new Uint8Array(35000), 11 + i)));
  return { files, kind: "raw: 35,000 filler bytes per entry (no symbol tables)" };
}

const results = { members: MEMBERS, node: process.version, cases: {} };
const KINDS = haveCommand("clang-19") ? ["bitcode", "raw"] : ["raw"];

/** Builds the archive of one payload kind and times both tools on it (outputs compared first). */
function runCase(kind) {
  const { files, kind: description } = payloads(kind);
  const proto = join(dir, `${kind}-proto.bc`);
  execFileSync(NATIVE, ["-type=bc", `-targets=${[HOST, ...GPUS.map((g) => `hip-amdgcn-amd-amdhsa--${g}`)].join(",")}`, ...files.map((f) => `-input=${f}`), `-output=${proto}`]);
  const memberDir = join(dir, `${kind}-members`);
  mkdirSync(memberDir);
  const names = Array.from({ length: MEMBERS }, (_, i) => `kernel${String(i).padStart(4, "0")}.o`);
  for (const name of names) copyFileSync(proto, join(memberDir, name));
  const archive = join(dir, `${kind}.a`);
  execFileSync(AR, ["rc", archive, ...names], { cwd: memberDir });
  execFileSync("rm", ["-rf", memberDir]);
  const archiveSize = readFileSync(archive).length;
  console.log(`${kind} archive: ${MEMBERS} members, ${(archiveSize / 1e6).toFixed(1)} MB (${description})`);

  // Same bytes first.
  const nativeOut = join(dir, `${kind}-native.a`);
  const ourOut = join(dir, `${kind}-ours.a`);
  const args = (out) => `-type=a -unbundle -targets=${TARGET} -input=${archive} -output=${out}`;
  execFileSync("sh", ["-c", `${NATIVE} ${args(nativeOut)}`]);
  execFileSync("sh", ["-c", `${ours("offload-bundler")} ${args(ourOut)}`]);
  if (!readFileSync(nativeOut).equals(readFileSync(ourOut))) throw new Error(`${kind}: outputs differ`);

  const timings = hyperfine({
    native: `${NATIVE} ${args(nativeOut)}`,
    ours: `${ours("offload-bundler")} ${args(ourOut)}`,
  }, { runs: quick ? 5 : 15, warmup: 2 });
  return {
    archive,
    result: {
      input: { payloads: description, bytes: archiveSize },
      outputBytes: readFileSync(ourOut).length,
      wholeProcess: { ...timings, ratio: timings.native.median / timings.ours.median, target: ">= 1.4x" },
      peakRss: {
        oursMiB: peakRssMiB(`${ours("offload-bundler")} ${args(ourOut)}`, 5),
        nativeMiB: peakRssMiB(`${NATIVE} ${args(nativeOut)}`, 3),
        target: "< 64 MB (ours)",
      },
    },
  };
}

try {
  let walkArchive;
  for (const kind of KINDS) {
    const { archive, result } = runCase(kind);
    walkArchive ??= archive;
    results.cases[kind] = result;
  }
  results.oursVersionMiB = peakRssMiB(`${ours("offload-bundler")} --version`, 5);

  // In-process member walk: Wasm kernel vs TS twin.
  const walk = {};
  const tiny = writeArchive([
    { name: "a.o", data: new Uint8Array(100), symbols: null },
    { name: "a-long-member-name.o", data: new Uint8Array(33), symbols: null },
    { name: "c.o", data: new Uint8Array(7), symbols: null },
  ]);
  const dense = writeArchive(Array.from({ length: 10000 }, (_, i) => ({ name: `m${i}.o`, data: new Uint8Array(i % 200), symbols: null })));
  for (const kindName of ["wasm", "ts"]) {
    const engine = createEngine(kindName, 4096);
    const perCall = (fn, calls) => {
      for (let i = 0; i < Math.min(calls, 1000); i++) fn();
      const t = performance.now();
      for (let i = 0; i < calls; i++) fn();
      return ((performance.now() - t) * 1e3) / calls;
    };
    const baselineUs = perCall(() => engine.archiveHead(0, 0), 1e6);
    const tinyUs = perCall(() => readArchive(tiny, { engine }), 2e4);
    const file = FileSource.open(walkArchive);
    const runs = [];
    try {
      readArchive(file, { engine });
      for (let i = 0; i < (quick ? 5 : 15); i++) {
        const t = performance.now();
        readArchive(file, { engine });
        runs.push(performance.now() - t);
      }
    } finally {
      file.close();
    }
    runs.sort((a, b) => a - b);
    const largeMs = runs[Math.floor(runs.length / 2)];
    // The kernel alone: 10000 small members in the window, walked record batch by record batch.
    const kernelEngine = createEngine(kindName, 4 << 20);
    kernelEngine.views().window.set(dense);
    const result = 0x100 >>> 3;
    const walkDense = () => {
      let position = 8;
      let index = 0;
      for (;;) {
        const status = kernelEngine.walkArchive(0, dense.length, dense.length, position, index, 0, 1000);
        const f64 = kernelEngine.views().f64;
        position = f64[result + 2];
        index = f64[result + 3];
        if (status === 0) return;
      }
    };
    const denseMs = perCall(walkDense, quick ? 50 : 200) / 1e3;
    walk[kindName] = {
      baselineUs, tinyUs, largeMs, largeMembersPerSecond: MEMBERS / (largeMs / 1e3),
      denseKernelMs: denseMs, denseKernelMBps: dense.length / 1e6 / (denseMs / 1e3),
    };
  }
  results.memberWalk = walk;

  printTable(`offload-bundler -type=a -unbundle, ${MEMBERS} members, one target, whole process (medians; ours on Node ${process.version})`, [
    ["payloads", "native s", "ours s", "native/ours", "target", "RSS ours MiB", "RSS native MiB", "target"],
    ...Object.entries(results.cases).map(([kind, c]) => [kind, c.wholeProcess.native.median.toFixed(3), c.wholeProcess.ours.median.toFixed(3),
      c.wholeProcess.ratio.toFixed(2), ">= 1.4x", c.peakRss.oursMiB.toFixed(1), c.peakRss.nativeMiB.toFixed(1), "< 64"]),
  ]);
  console.log(`ours --version: ${results.oursVersionMiB.toFixed(1)} MiB`);
  printTable("member walk, in-process (median)", [
    ["engine", "empty call us", "3-member archive us", `${MEMBERS}-member file ms`, "members/s", "kernel, 10000 in window ms", "MB/s"],
    ...Object.entries(walk).map(([k, w]) => [k, w.baselineUs.toFixed(3), w.tinyUs.toFixed(1), w.largeMs.toFixed(2), Math.round(w.largeMembersPerSecond),
      w.denseKernelMs.toFixed(3), Math.round(w.denseKernelMBps)]),
  ]);
  console.log(`\nsaved ${saveResults("archive", results)}`);
} finally {
  execFileSync("rm", ["-rf", dir]);
}
