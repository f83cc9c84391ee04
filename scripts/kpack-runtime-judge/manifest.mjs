// Writes the kpack-runtime-judge's requests (see judge.cpp) for the files named: for a `.kpack` archive, an
// `archive` request (load every TOC entry) and a `key` request per code object `offload-kit extract` gives; for a
// split host, a `wrappers` request per architecture (every HIPK wrapper the file holds must load), and per code
// object extract gives a `host` request (the runtime must find the same bytes through the host's marker) and a
// `key` request for the archive extract named. The expected bytes are extract's own files, so the judge compares
// rocm-kpack's loader with offload-kit's reader. Paths are made absolute: the runtime resolves a marker's search
// paths against the host's path.
//   node manifest.mjs OUT_DIR FILE... > requests.tsv
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { basename, join, resolve } from "node:path";

const cli = resolve(import.meta.dirname, "../../dist/bin/offload-kit.js");
const [outDir, ...files] = process.argv.slice(2);
if (!outDir || files.length === 0) {
  console.error("usage: node manifest.mjs OUT_DIR FILE...");
  process.exit(2);
}
const lines = [];
files.forEach((file, n) => {
  const abs = resolve(file);
  const dir = resolve(outDir, `${n}-${basename(file)}`);
  mkdirSync(dir, { recursive: true });
  const run = spawnSync(process.execPath, [cli, "extract", "--json", `--out-dir=${dir}`, abs], { encoding: "utf8", maxBuffer: 1 << 28 });
  if (run.status !== 0) lines.push(`# offload-kit extract ${abs}: exit ${run.status}: ${run.stderr.trim().split("\n").join(" / ")}`);
  if (!run.stdout) return;
  const outputs = JSON.parse(run.stdout).outputs ?? [];
  const isArchive = file.endsWith(".kpack");
  if (isArchive) lines.push(`archive\t${abs}`);
  if (!isArchive) for (const arch of new Set(outputs.filter((o) => o.kpack).map((o) => o.kpack.arch))) lines.push(`wrappers\t${abs}\t${arch}`);
  for (const o of outputs) {
    if (!o.kpack) continue;
    const expected = resolve(o.path);
    if (isArchive) {
      lines.push(["key", abs, o.kpack.key, o.kpack.arch, expected].join("\t"));
    } else {
      const coIndex = o.kpack.key.substring(o.kpack.key.lastIndexOf("#") + 1);
      lines.push(["host", abs, coIndex, o.kpack.arch, expected].join("\t"));
      lines.push(["key", resolve(o.kpack.archive), o.kpack.key, o.kpack.arch, expected].join("\t"));
    }
  }
});
process.stdout.write(lines.join("\n") + "\n");
