// Bundles the CLIs (src/bin/*.ts) and the workers into dist/bin/. Each bin is an ordinary ESM script starting
// with `#!/usr/bin/env node` (what npm's shims expect on every OS) and only a few lines long: it turns on Node's
// module compile cache where Node has one (22.1+), then imports the launcher (src/process/launch.ts), which
// runs the bundled program `<bin>.main.js` in a supervised worker thread (so signals can stop it) or inline. The program is split into
// chunks (esbuild splitting), so code one run does not need (the inlined libzstd, 336 KB of base64; the wrapper's
// bitcode writer) is not even parsed at start-up. Chunks stay next to the entries: workers are found by
// `new URL("./batch-worker.js", import.meta.url)` from inside them.
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const bins = ["offload-bundler", "offload-packager", "offload-binary", "offload-wrapper", "offload-kit"];

rmSync(`${root}dist/bin`, { recursive: true, force: true });
await build({
  // Explicit output names: from two source folders esbuild would otherwise nest them (bin/, bundler/node/, compress/node/).
  entryPoints: [
    ...bins.map((b) => ({ in: `${root}src/bin/${b}.ts`, out: `${b}.main` })),
    { in: `${root}src/process/launch.ts`, out: "launch" },
    { in: `${root}src/bundler/node/batch-worker.ts`, out: "batch-worker" },
    { in: `${root}src/compress/node/compress-worker.ts`, out: "compress-worker" },
  ],
  outdir: `${root}dist/bin`,
  bundle: true,
  splitting: true,
  chunkNames: "chunk-[hash]",
  platform: "node",
  format: "esm",
  target: "node20",
  // CommonJS dependencies inside an ESM bundle call require(): give them Node's own.
  banner: { js: 'import { createRequire as __offloadKitRequire } from "node:module"; const require = __offloadKitRequire(import.meta.url);' },
  logLevel: "warning",
});

export const BIN_HEADER = "#!/usr/bin/env node\n";
for (const b of bins) {
  const file = `${root}dist/bin/${b}.js`;
  writeFileSync(file, `${BIN_HEADER}import module from "node:module";
// Node 22.1+: compiled code of the modules imported below is cached on disk (os.tmpdir()/node-compile-cache).
module.enableCompileCache?.();
const { launch } = await import("./launch.js");
await launch("${b}", new URL("./${b}.main.js", import.meta.url));
`);
  chmodSync(file, 0o755);
}
console.log(`bundled ${bins.length} bins and the batch and compression workers into dist/bin/`);
