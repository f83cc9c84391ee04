// The README shows each job with its real output (issue 27, item 1). This runs every `$ offload-kit ...` line of
// README.md's plain fenced blocks in a scratch copy of examples/sample, one after another (so a later command sees
// an earlier one's outputs), and compares what it prints with the lines pasted under it.
//
//   node scripts/readme-examples.mjs           exit 0 when every example prints what the README shows, else 1
//   node scripts/readme-examples.mjs --write   paste what the commands print now into README.md
//
// Needs the built CLI (npm run build). Commands are split at spaces (the examples quote nothing).
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const BINS = ["offload-kit", "offload-bundler", "offload-packager", "offload-binary", "offload-wrapper"];

/** The examples of a README: each command with the line range of the output pasted under it. */
export function examplesOf(readme) {
  const lines = readme.split("\n");
  const examples = [];
  let fence = null; // the opening line of the block we are in: "```" for a plain one, "```sh" and such otherwise
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    if (line.startsWith("```")) {
      fence = fence === null ? line : null;
      continue;
    }
    if (fence !== "```" || !line.startsWith("$ ")) continue;
    const words = line.slice(2).split(" ");
    if (!BINS.includes(words[0])) continue;
    let end = index + 1;
    while (end < lines.length && !lines[end].startsWith("$ ") && !lines[end].startsWith("```")) end++;
    let last = end;
    while (last > index + 1 && lines[last - 1] === "") last--;
    examples.push({ line: index + 1, words, from: index + 1, to: last, shown: lines.slice(index + 1, last).join("\n") });
  }
  return examples;
}

/** Runs the examples in a scratch copy of the sample; each gets `printed` (stdout then stderr). */
export function runExamples(examples) {
  const work = mkdtempSync(join(tmpdir(), "offload-kit-readme-"));
  try {
    cpSync(join(root, "examples/sample"), work, { recursive: true });
    return examples.map((example) => {
      const [bin, ...args] = example.words;
      // The pasted sizes are the WebAssembly zstd's (Node 20); Node >= 22.15 compresses with the platform's libzstd,
      // whose frames can differ by a byte or two (src/compress/node/zstd-native.ts): pin the codec so every Node prints them.
      const env = { ...process.env, OFFLOAD_KIT_ZSTD: "wasm" };
      const result = spawnSync(process.execPath, [join(root, "dist/bin", `${bin}.js`), ...args], { cwd: work, encoding: "utf8", env });
      const printed = `${result.stdout ?? ""}${result.stderr ?? ""}`.replace(/\n+$/, "");
      return { ...example, printed, status: result.status };
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function main(argv) {
  const path = join(root, "README.md");
  const readme = readFileSync(path, "utf8");
  const ran = runExamples(examplesOf(readme));
  const stale = ran.filter((example) => example.printed !== example.shown);
  if (argv[0] === "--write") {
    const lines = readme.split("\n");
    for (const example of [...ran].reverse()) lines.splice(example.from, example.to - example.from, ...example.printed.split("\n"));
    writeFileSync(path, lines.join("\n"));
    console.log(`README.md: ${ran.length} examples, ${stale.length} rewritten`);
    return 0;
  }
  for (const example of stale) {
    console.log(`README.md:${example.line}: $ ${example.words.join(" ")}\n--- shown\n${example.shown}\n+++ printed now\n${example.printed}\n`);
  }
  console.log(`README.md: ${ran.length} examples, ${stale.length} differ${stale.length ? " (node scripts/readme-examples.mjs --write pastes the new output)" : ""}`);
  return stale.length === 0 ? 0 : 1;
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) process.exitCode = main(process.argv.slice(2));
