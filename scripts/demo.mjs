// `npm start`: the three jobs of offload-kit on the sample shipped in examples/sample, with the built CLIs:
// see what is inside (ls, sizes), will it run here (check), cut it down (prune, compress, into a temporary
// folder that is removed afterwards); then where to read on. Every command's real output is shown as it prints
// it, so the demo stays true when the commands' wording changes; only exit statuses are checked.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const sample = join(root, "examples/sample");
const bin = (name) => join(root, "dist/bin", `${name}.js`);
if (!existsSync(bin("offload-kit"))) {
  console.error("dist/bin/offload-kit.js is missing: run `npm run build` (or `npm ci`) first.");
  process.exit(1);
}
const work = mkdtempSync(join(tmpdir(), "offload-kit-demo-"));
const bold = process.stdout.isTTY ? (text) => `\x1b[1m${text}\x1b[0m` : (text) => text;

/** Runs one bin in the sample folder, prints it as a shell would, and insists on the exit status expected. */
function run(name, args, expectedStatus = 0) {
  const tidy = (text) => text.replaceAll(work, "$TMP");
  console.log(`\n$ ${tidy([name, ...args].join(" "))}`);
  const result = spawnSync(process.execPath, [bin(name), ...args], { cwd: sample, encoding: "utf8" });
  process.stdout.write(tidy(result.stdout ?? "") + tidy(result.stderr ?? ""));
  if (result.status !== expectedStatus) {
    throw new Error(`${name} ${args.join(" ")} exited with ${result.status ?? result.signal}, expected ${expectedStatus}`);
  }
}

try {
  console.log(bold("offload-kit on examples/sample/app.hipfb, a fat binary made by clang-offload-bundler 19"));

  console.log(bold("\n1. See what is inside"));
  run("offload-kit", ["ls", "app.hipfb"]);
  run("offload-kit", ["sizes", "app.hipfb"]);

  console.log(bold("\n2. Will it run here? (without --gpu, check asks this machine for its GPUs)"));
  run("offload-kit", ["check", "--gpu=gfx90a:xnack-", "app.hipfb"]);
  console.log("(exit status 0: it loads)");
  run("offload-kit", ["check", "--gpu=gfx1100", "app.hipfb"], 1);
  console.log("(exit status 1: nothing in it loads on gfx1100)");

  console.log(bold("\n3. Cut it down"));
  const pruned = join(work, "app-gfx90a.hipfb");
  run("offload-kit", ["prune", "--keep=gfx90a", "app.hipfb", "-o", pruned]);
  run("offload-kit", ["compress", "app.hipfb", "-o", join(work, "app-compressed.hipfb")]);
  run("offload-kit", ["ls", pruned]);
  const size = (path) => readFileSync(path).length;
  console.log(`app-gfx90a.hipfb: ${size(pruned)} bytes (app.hipfb: ${size(join(sample, "app.hipfb"))} bytes)`);

  // The drop-in bundler makes the sample's very bytes from the same inputs.
  const rebuilt = join(work, "app.hipfb");
  const targets = "host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx906,hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-";
  run("offload-bundler", ["-type=o", `-targets=${targets}`, "-bundle-align=4096",
    "-input=host.o", "-input=gfx906.co", "-input=gfx90a.co", `-output=${rebuilt}`]);
  const same = Buffer.compare(readFileSync(rebuilt), readFileSync(join(sample, "app.hipfb"))) === 0;
  console.log(`offload-bundler's output is byte-identical to clang-offload-bundler 19's app.hipfb: ${same ? "yes" : "NO"}`);
  if (!same) process.exitCode = 1;

  console.log(bold("\nWhere to look next"));
  console.log("  README.md                 the three jobs, the drop-in tools, the browser page, the library");
  console.log("  docs/offload-kit.md       every command, one page each under docs/commands/");
  console.log("  docs/compatibility.md     the drop-in tools against the native LLVM tools");
  console.log("  offload-kit --help        and `offload-kit <command> --help`");
} finally {
  rmSync(work, { recursive: true, force: true });
}
