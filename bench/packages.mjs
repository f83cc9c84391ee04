// Packages, whole process (issue 18): `offload-kit sizes` of librocsparse0's .deb against
// `dpkg-deb --fsys-tarfile PKG > /dev/null` (the native xz decode alone), and of a wheel holding the same
// 1.3 GB library against `unzip -p WHEEL > /dev/null`; peak RSS of ours. Both sides run in one hyperfine
// run, interleaved. Inputs: OFFLOAD_KIT_BENCH_DEB (else `apt-get download librocsparse0` into a scratch
// folder); the wheel is made once with `zip -6` from the unpacked .deb (kept in OFFLOAD_KIT_BENCH_DIR if set).
// OFFLOAD_KIT_BENCH_RUNS (default 3) runs per side; `OFFLOAD_KIT_XZ=wasm` in the environment measures the
// WebAssembly xz decoder instead of the xz program.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { haveCommand, hyperfine, ours, peakRssMiB, printTable, ratioRecorder, saveResults, scratchDir } from "./common.mjs";

const runs = Number(process.env.OFFLOAD_KIT_BENCH_RUNS ?? 3);
const dir = process.env.OFFLOAD_KIT_BENCH_DIR ?? scratchDir("packages");
let deb = process.env.OFFLOAD_KIT_BENCH_DEB;
if (deb === undefined) {
  execFileSync("apt-get", ["download", "librocsparse0"], { cwd: dir, stdio: "inherit" });
  deb = join(dir, readdirSync(dir).find((f) => f.startsWith("librocsparse0_") && f.endsWith(".deb")));
}
const kit = `node ${ours("offload-kit")}`;
const { results, rows, record } = ratioRecorder();

record("sizes librocsparse0 .deb", hyperfine({
  native: `dpkg-deb --fsys-tarfile ${deb} > /dev/null`,
  ours: `${kit} sizes ${deb} > /dev/null`,
}, { runs, warmup: 0 }), ">= 1/1.3 = 0.77");
const rss = { deb: peakRssMiB(`${kit} sizes ${deb} > /dev/null`, 1) };

if (haveCommand("zip") && haveCommand("unzip")) {
  const wheel = join(dir, "rocsparse-5.3.0-py3-none-linux_x86_64.whl");
  if (!existsSync(wheel)) {
    execFileSync("dpkg-deb", ["-x", deb, join(dir, "unpacked")]);
    execFileSync("sh", ["-c", `cd ${join(dir, "unpacked")} && zip -q -6 -r ${wheel} usr`]);
  }
  record("sizes wheel (deflate)", hyperfine({
    native: `unzip -p ${wheel} > /dev/null`,
    ours: `${kit} sizes ${wheel} > /dev/null`,
  }, { runs, warmup: 0 }), ">= 0.77");
  rss.wheel = peakRssMiB(`${kit} sizes ${wheel} > /dev/null`, 1);
}

printTable("packages (native/ours: above 1 means ours is faster)", rows);
console.log(`peak RSS of ours: ${Object.entries(rss).map(([k, v]) => `${k} ${v.toFixed(1)} MiB`).join(", ")}`);
console.log(`saved ${saveResults("packages", { results, peakRssMiB: rss, xz: process.env.OFFLOAD_KIT_XZ ?? "program" })}`);
