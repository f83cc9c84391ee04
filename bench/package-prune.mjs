// Packages in, packages out (issue 26), whole process: `offload-kit prune --keep=gfx90a` of librocsparse0's .deb
// (data.tar.xz holding the 1.3 GB library) against what a user does by hand without us, dpkg-deb -x + -e + -b of
// the same package (unpack and pack again, no pruning: the floor of that road), and of a wheel holding the same
// library (`zip -6`, as pip wheels are deflated) against `unzip` + `zip -6 -r`. Our run re-encodes only the edited
// tar (the pruned library, 369 MB) and copies everything else; theirs re-encodes all of it. Goal: native/ours
// >= 1.0 (ours no slower), and our peak RSS under 256 MiB. Inputs: OFFLOAD_KIT_BENCH_DEB (else the apt cache's, else
// `apt-get download librocsparse0`), the wheel made once from the unpacked .deb (kept in OFFLOAD_KIT_BENCH_DIR if set).
// OFFLOAD_KIT_BENCH_RUNS (default 1: each run is minutes here) runs per side, interleaved by hyperfine.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { haveCommand, hyperfine, ours, peakRssMiB, printTable, ratioRecorder, saveResults, scratchDir } from "./common.mjs";

const runs = Number(process.env.OFFLOAD_KIT_BENCH_RUNS ?? 1);
const dir = process.env.OFFLOAD_KIT_BENCH_DIR ?? scratchDir("package-prune");
const cache = "/var/cache/apt/archives";
let deb = process.env.OFFLOAD_KIT_BENCH_DEB ?? (existsSync(cache) ? readdirSync(cache).filter((f) => f.startsWith("librocsparse0_") && f.endsWith(".deb")).map((f) => join(cache, f))[0] : undefined);
if (deb === undefined) {
  execFileSync("apt-get", ["download", "librocsparse0"], { cwd: dir, stdio: "inherit" });
  deb = join(dir, readdirSync(dir).find((f) => f.startsWith("librocsparse0_") && f.endsWith(".deb")));
}
const kit = `node ${ours("offload-kit")}`;
const { results, rows, record } = ratioRecorder();
const out = (name) => join(dir, name);
const clean = (...names) => names.map((n) => `rm -rf ${out(n)}`).join(" && ");

record("prune librocsparse0 .deb", hyperfine({
  native: `${clean("x", "native.deb")} && dpkg-deb -x ${deb} ${out("x")} && dpkg-deb -e ${deb} ${out("x/DEBIAN")} && dpkg-deb --root-owner-group -b ${out("x")} ${out("native.deb")} > /dev/null`,
  ours: `${clean("ours.deb")} && ${kit} prune --keep=gfx90a -o ${out("ours.deb")} ${deb} > /dev/null`,
}, { runs, warmup: 0 }), ">= 1.0");
const rss = { deb: peakRssMiB(`${clean("rss.deb")} && ${kit} prune --keep=gfx90a -o ${out("rss.deb")} ${deb} > /dev/null`, 1) };
const sizes = { deb: { before: Number(execFileSync("stat", ["-c", "%s", deb], { encoding: "utf8" })), after: Number(execFileSync("stat", ["-c", "%s", out("ours.deb")], { encoding: "utf8" })) } };

if (haveCommand("zip") && haveCommand("unzip")) {
  const wheel = join(dir, "rocsparse-5.3.0-py3-none-linux_x86_64.whl");
  if (!existsSync(wheel)) {
    rmSync(out("unpacked"), { recursive: true, force: true });
    execFileSync("dpkg-deb", ["-x", deb, out("unpacked")]);
    execFileSync("sh", ["-c", `cd ${out("unpacked")} && zip -q -6 -r ${wheel} usr`]);
    rmSync(out("unpacked"), { recursive: true, force: true });
  }
  record("prune wheel (deflate)", hyperfine({
    native: `${clean("w", "native.whl")} && unzip -q ${wheel} -d ${out("w")} && cd ${out("w")} && zip -q -6 -r ${out("native.whl")} .`,
    ours: `${clean("ours.whl")} && ${kit} prune --keep=gfx90a -o ${out("ours.whl")} ${wheel} > /dev/null`,
  }, { runs, warmup: 0 }), ">= 1.0");
  rss.wheel = peakRssMiB(`${clean("rss.whl")} && ${kit} prune --keep=gfx90a -o ${out("rss.whl")} ${wheel} > /dev/null`, 1);
  sizes.wheel = { before: Number(execFileSync("stat", ["-c", "%s", wheel], { encoding: "utf8" })), after: Number(execFileSync("stat", ["-c", "%s", out("ours.whl")], { encoding: "utf8" })) };
}

printTable("prune a package (native/ours: above 1 means ours is faster)", rows);
console.log(`peak RSS of ours: ${Object.entries(rss).map(([k, v]) => `${k} ${v.toFixed(1)} MiB`).join(", ")}`);
console.log(`sizes: ${Object.entries(sizes).map(([k, v]) => `${k} ${v.before} -> ${v.after} bytes`).join(", ")}`);
console.log(`saved ${saveResults("package-prune", { results, peakRssMiB: rss, sizes })}`);
