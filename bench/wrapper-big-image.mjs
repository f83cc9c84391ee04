// Images over 4 GiB through offload-wrapper (issue 19, item 12), too slow for the suite (ours reads the whole image
// to learn it is all zero: ~20 s on the shared 2-core machine). Two sparse 4.4 GB files, no disk used:
//   - all zero: a zeroinitializer, no record of its bytes, so LLVM reads it back. Ours (14 and 22 flavours) must
//     equal the native wrappers' bitcode byte for byte, and llvm-dis-14/-22 must print `[4400000000 x i8]
//     zeroinitializer`. (The native wrappers hold the image: ~4.3 GB RSS each.)
//   - last byte 1: its record would need 4.4e9 elements, and LLVM reads the count as 32 bits (llvm-dis: "Malformed
//     global initializer set"); ours must refuse at once, naming the image, leaving no output. The native wrappers
//     are not run on it: they would build a 35 GB record vector.
// Usage: npm run build && node bench/wrapper-big-image.mjs   (OFFLOAD_KIT_BENCH_DIR picks the scratch folder)
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ours, printTable, requireCommands, saveResults, scratchDir } from "./common.mjs";

const SIZE = 4_400_000_000;
requireCommands(["clang-offload-wrapper-14", "llvm-offload-wrapper-22", "llvm-dis-14", "llvm-dis-22"]);

const dir = scratchDir("wrapper-big");
function sparse(name, last) {
  const path = join(dir, name);
  const fd = openSync(path, "w");
  writeSync(fd, Uint8Array.of(last), 0, 1, SIZE - 1);
  closeSync(fd);
  return path;
}

function timed(command, args) {
  const started = performance.now();
  const r = spawnSync(command, args, { cwd: dir, encoding: "latin1", maxBuffer: 1 << 26 });
  return { seconds: (performance.now() - started) / 1000, status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const rows = [["case", "tool", "seconds", "result"]];
const results = {};
let failed = false;
function check(ok, what) {
  if (!ok) {
    failed = true;
    console.error(`FAILED: ${what}`);
  }
}

try {
  const zero = sparse("zero.bin", 0);
  const nonZero = sparse("last1.bin", 1);
  const node = process.execPath;
  const flavours = [
    ["14", "clang-offload-wrapper-14", ["--target=x86_64-pc-linux-gnu"], "llvm-dis-14"],
    ["22", "llvm-offload-wrapper-22", ["--kind=openmp"], "llvm-dis-22"],
  ];
  for (const [version, native, options, dis] of flavours) {
    const mine = timed(node, [ours("offload-wrapper"), ...options, "-o", `ours${version}.bc`, zero]);
    const theirs = timed(native, [...options, "-o", `native${version}.bc`, zero]);
    check(mine.status === 0 && theirs.status === 0, `${version}: both succeed (${mine.stderr}${theirs.stderr})`);
    const same = readFileSync(join(dir, `ours${version}.bc`)).equals(readFileSync(join(dir, `native${version}.bc`)));
    check(same, `${version}: bitcode byte-identical`);
    const text = execFileSync(dis, [join(dir, `ours${version}.bc`), "-o", "-"], { encoding: "latin1" });
    const reads = text.includes(`[${SIZE} x i8] zeroinitializer`);
    check(reads, `${version}: ${dis} reads [${SIZE} x i8] zeroinitializer`);
    rows.push([`zero ${SIZE} B`, `ours ${version}`, mine.seconds.toFixed(1), same && reads ? `identical, ${dis} reads it` : "MISMATCH"]);
    rows.push([`zero ${SIZE} B`, native, theirs.seconds.toFixed(1), ""]);
    const refused = timed(node, [ours("offload-wrapper"), ...options, "-o", `big${version}.bc`, nonZero]);
    const clear = refused.status === 1 && /'.*last1\.bin': an image of 4400000000 bytes does not fit LLVM bitcode/.test(refused.stderr) && !existsSync(join(dir, `big${version}.bc`));
    check(clear, `${version}: a non-zero image is refused, no output (${refused.stderr})`);
    rows.push([`last byte 1, ${SIZE} B`, `ours ${version}`, refused.seconds.toFixed(2), clear ? "refused, no output" : "NOT REFUSED"]);
    results[version] = { zero: { ours: mine.seconds, native: theirs.seconds, identical: same, disReads: reads }, nonZero: { ours: refused.seconds, refused: clear } };
  }
  printTable("offload-wrapper, images over 4 GiB (sparse files)", rows);
  console.log(`\nsaved ${saveResults("wrapper-big-image", results)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
