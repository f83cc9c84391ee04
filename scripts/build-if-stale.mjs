// The build stamp (issue 27, item 5): `npm ci` builds once (prepare), and `npm test` must not build it all
// again when nothing it is built from has changed, yet must rebuild when something has.
//
//   node scripts/build-if-stale.mjs           build (npm run build) when stale, else say it is fresh
//   node scripts/build-if-stale.mjs --check   exit 0 when fresh, 1 when stale, saying why; builds nothing
//   node scripts/build-if-stale.mjs --begin   the build's first step: hash the inputs, void the old stamp
//   node scripts/build-if-stale.mjs --end     the build's last step: the hash taken at --begin becomes the stamp
//
// Fresh means: the stamp holds the hash of the build's inputs as they are now, it was written by a Node of this
// major version, and every output the tests use exists. The hash is of contents, not modification times, so a checkout or `touch` that changes nothing
// rebuilds nothing, and an edit undone within a build's time is still seen. It is taken when the build begins,
// so an edit made while the build runs leaves the stamp stale. A build that fails or is interrupted writes no
// stamp (--begin removed the old one), so the next run builds again.
//
// OFFLOAD_KIT_BUILD_ROOT and OFFLOAD_KIT_BUILD_COMMAND replace the repository root and `npm run build` (tests).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** What the build reads: folders are walked whole, less the files the build itself writes there. */
export const BUILD_INPUTS = [
  "src",
  "assembly",
  "scripts",
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "tsconfig.build.json",
  "asconfig.json",
];

/**
 * Never hashed: files the build writes inside its inputs (`*.generated.ts`), and scripts the build does not run
 * (`npm start`'s demo, the README examples' check), so editing them rebuilds nothing.
 */
const NOT_INPUTS = /\.generated\.ts$|^scripts\/(demo|readme-examples)\.mjs$/;

/** What the tests and the bins need from a build; any one missing makes the build stale. */
export const BUILD_OUTPUTS = [
  "build/offload-kit.wasm",
  "build/zstd.wasm",
  "src/wasm/bytes.generated.ts",
  "src/compress/zstd-bytes.generated.ts",
  "src/browser/worker-source.generated.ts",
  "dist/index.js",
  "dist/bin/offload-kit.js",
  "dist/bin/offload-bundler.js",
  "dist/inspector/index.html",
];

const STAMP = "dist/.build-stamp";
const PENDING = "dist/.build-stamp.pending";

/** Every input file under `root`, as sorted relative paths with `/` separators. */
function inputFiles(root) {
  const files = [];
  const walk = (path) => {
    const full = join(root, path);
    if (!existsSync(full)) return;
    if (statSync(full).isDirectory()) {
      for (const name of readdirSync(full).sort()) walk(`${path}/${name}`);
    } else if (!NOT_INPUTS.test(path)) {
      files.push(path);
    }
  };
  for (const input of BUILD_INPUTS) walk(input);
  return files.sort();
}

/** The hash of every input's path and bytes. */
export function inputsHash(root) {
  const hash = createHash("sha256");
  const files = inputFiles(root);
  for (const file of files) {
    const bytes = readFileSync(join(root, file));
    hash.update(`${file}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  return { hash: hash.digest("hex"), files: files.length };
}

/** Whether the build under `root` is fresh, and if not, why. */
export function freshness(root) {
  const stampPath = join(root, STAMP);
  if (!existsSync(stampPath)) return { fresh: false, why: `no build stamp (${STAMP}): never built here, or the last build did not finish` };
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(stampPath, "utf8"));
  } catch {
    return { fresh: false, why: `${STAMP} cannot be read` };
  }
  const missing = BUILD_OUTPUTS.filter((output) => !existsSync(join(root, output)));
  if (missing.length > 0) return { fresh: false, why: `missing build output: ${missing.join(", ")}` };
  // The build runs tsc, esbuild and asc under this Node; CI builds again under each Node it tests (20 and 24).
  const major = (version) => String(version ?? "").split(".")[0];
  if (major(stamp.node) !== major(process.version)) return { fresh: false, why: `built by Node ${stamp.node}, this is Node ${process.version}` };
  const now = inputsHash(root);
  if (stamp.hash !== now.hash) return { fresh: false, why: `sources changed since the last build (${BUILD_INPUTS.join(", ")})` };
  return { fresh: true, why: `build is fresh: ${now.files} input files unchanged since ${stamp.builtAt}` };
}

/** The build's first step: hash the inputs into a pending stamp, and void the stamp of the last build. */
export function begin(root) {
  mkdirSync(join(root, "dist"), { recursive: true });
  rmSync(join(root, STAMP), { force: true });
  const { hash, files } = inputsHash(root);
  writeFileSync(join(root, PENDING), `${JSON.stringify({ hash, files, node: process.version })}\n`);
}

/** The build's last step: the pending stamp (the inputs as the build began) becomes the stamp. */
export function end(root) {
  const pending = join(root, PENDING);
  if (!existsSync(pending)) {
    console.error(`build-if-stale: ${PENDING} is missing (the build did not run --begin first); no stamp written`);
    return 1;
  }
  const stamp = { ...JSON.parse(readFileSync(pending, "utf8")), builtAt: new Date().toISOString() };
  writeFileSync(pending, `${JSON.stringify(stamp)}\n`);
  renameSync(pending, join(root, STAMP));
  return 0;
}

function main(argv) {
  const root = process.env.OFFLOAD_KIT_BUILD_ROOT ?? fileURLToPath(new URL("..", import.meta.url));
  const mode = argv[0] ?? "--build";
  if (mode === "--begin") return begin(root), 0;
  if (mode === "--end") return end(root);
  const state = freshness(root);
  if (mode === "--check") {
    console.log(state.why);
    return state.fresh ? 0 : 1;
  }
  if (mode !== "--build") {
    console.error(`build-if-stale: unknown option '${mode}' (use --check, --begin or --end, or nothing)`);
    return 2;
  }
  if (state.fresh) {
    console.log(`${state.why}; not rebuilding (${relative(process.cwd(), join(root, STAMP)) || STAMP})`);
    return 0;
  }
  const command = process.env.OFFLOAD_KIT_BUILD_COMMAND ?? "npm run build";
  console.log(`${state.why}: running ${command}`);
  const build = spawnSync(command, { cwd: root, stdio: "inherit", shell: true });
  return build.status ?? 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = main(process.argv.slice(2));
}
