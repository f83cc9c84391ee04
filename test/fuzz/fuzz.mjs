#!/usr/bin/env node
// `npm run fuzz`: bundles the campaign (test/fuzz/campaign/) with esbuild into test/fuzz/.build/<pid>/ and runs it.
// Bundling, not a TypeScript loader, because worker threads must load the same code and Node 20 does not
// pass loader hooks on to workers.
import { rmSync } from "node:fs";
import { build } from "esbuild";

// One folder per run: a long campaign keeps its bundle while a short one rebuilds beside it.
const outdir = new URL(`./.build/${process.pid}/`, import.meta.url).pathname;
process.on("exit", () => rmSync(outdir, { recursive: true, force: true }));
for (const signal of ["SIGINT", "SIGTERM"]) process.once(signal, () => process.exit(130));
await build({
  entryPoints: { run: "test/fuzz/campaign/run.ts", worker: "test/fuzz/campaign/worker.ts" },
  absWorkingDir: new URL("../../", import.meta.url).pathname,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  outdir,
  external: ["@bokuweb/zstd-wasm", "fflate", "hash-wasm"],
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: "warning",
});
await import(new URL("run.js", `file://${outdir}`).href);
