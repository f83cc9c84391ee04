// `npm start`: the main job on the sample shipped in examples/sample, with the built CLIs.
// Bundles three inputs, lists the result, unbundles it, checks the round trip, and shows that the
// bundle is byte-identical to the one clang-offload-bundler 19 made from the same inputs.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const sample = join(root, "examples/sample");
const bin = (name) => join(root, "dist/bin", `${name}.js`);
const work = mkdtempSync(join(tmpdir(), "offload-kit-demo-"));
const targets = "host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx906,hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-";

function run(name, args) {
  const shown = [name, ...args].map((a) => a.replace(work, "$TMP").replace(sample, "examples/sample")).join(" ");
  console.log(`\n$ ${shown}`);
  const run = spawnSync(bin(name), args, { encoding: "utf8" });
  const tidy = (text) => text.replaceAll(work, "$TMP").replaceAll(sample, "examples/sample");
  if (run.stdout) process.stdout.write(tidy(run.stdout));
  if (run.stderr) process.stdout.write(tidy(run.stderr));
  if (run.status !== 0) throw new Error(`${name} exited with ${run.status}`);
}

try {
  const bundle = join(work, "app.hipfb");
  run("offload-bundler", ["-type=o", `-targets=${targets}`, "-bundle-align=4096",
    `-input=${join(sample, "host.o")}`, `-input=${join(sample, "gfx906.co")}`, `-input=${join(sample, "gfx90a.co")}`, `-output=${bundle}`]);
  run("offload-bundler", ["-list", "-type=o", `-input=${bundle}`]);
  run("offload-kit", ["ls", bundle]);
  run("offload-bundler", ["-unbundle", "-type=o", "-targets=hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-",
    `-input=${bundle}`, `-output=${join(work, "gfx90a.out")}`]);
  run("offload-kit", ["unbundle", "-targets=hipv4-amdgcn-amd-amdhsa--gfx906,hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-",
    `--out-dir=${join(work, "out")}`, join(sample, "app.hipfb")]);

  const same = (a, b) => Buffer.compare(readFileSync(a), readFileSync(b)) === 0;
  console.log("\nchecks:");
  console.log(`  unbundled gfx90a entry equals the input ............ ${same(join(work, "gfx90a.out"), join(sample, "gfx90a.co")) ? "yes" : "NO"}`);
  console.log(`  our bundle is byte-identical to clang-offload-bundler 19's (examples/sample/app.hipfb) ... ${same(bundle, join(sample, "app.hipfb")) ? "yes" : "NO"}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
