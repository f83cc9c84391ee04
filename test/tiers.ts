/**
 * Which test files run in which command (issue 27, item 5): `npm run test:quick` runs the quick tier,
 * `npm test` the quick and standard tiers, `npm run test:full` (what .ci/run runs, on Node 20 and 24) all three.
 * Chosen by measured time (vitest's per-file durations): the slow tier is what takes tens of seconds a file,
 * because it drives Chromium, edits or kills processes over Debian's real ROCm libraries (1.3 GB), or runs a
 * long random campaign against a native tool. Every file is in exactly one tier: the longest entry below that
 * is a prefix of its path decides, and a file no entry names is standard (so a new test runs in `npm test`).
 */

import { readdirSync } from "node:fs";
import { join } from "node:path";

export type Tier = "quick" | "standard" | "slow";

/** In-process tests of formats and rules: no built bin; three ask a small native tool (llvm-readelf, unzip, xxhsum). */
const QUICK = [
  "test/engine/",
  "test/formats/",
  "test/target-id/",
  "test/llvm/",
  "test/inspector/",
  "test/inspect/",
  "test/bundler/",
  "test/fuzz/",
  "test/wrapper/bitstream.test.ts",
  "test/wrapper/golden.test.ts",
  "test/prune/containers.test.ts",
  "test/prune/select.test.ts",
  "test/elf-edit/rewrite.test.ts",
  "test/elf-edit/mutations.test.ts",
  "test/packages/tar-stream.test.ts",
  "test/packages/browser.test.ts",
  "test/node/output.test.ts",
  "test/node/async-settles.test.ts",
  "test/browser/blob-source.test.ts",
  "test/docs/links.test.ts",
];

/** Inside the quick folders, but slower than the rest of them: `npm test` runs these. */
const STANDARD = [
  // Both engines over every located fixture and its mutations: 12 s at load 16, the quick tier's largest file.
  "test/fuzz/locate-engines.test.ts",
  // The next slowest of the quick kind (5-7 s at load 15): seeded mutation runs, bzip2 -1..-9 against the program.
  "test/prune/mutations.test.ts",
  "test/packages/bzip2.test.ts",
  "test/wrapper/api.test.ts",
];

/** Tens of seconds each (durations measured by vitest, 2 shared cores), run by `npm run test:full` only. */
const SLOW = [
  // Chromium through playwright-core: the inspector page and the bundler builds.
  "test/browser/",
  // Debian's librocsparse0 (1.3 GB) and librocrand1 edited, checked and registered under the stand-in runtime.
  "test/elf-edit/chains.test.ts",
  "test/elf-edit/strip-tools.test.ts",
  "test/elf-edit/debian-libraries.test.ts",
  "test/elf-edit/registration.test.ts",
  "test/prune/linked-elf-process.test.ts",
  "test/prune/relocatable-hip-fatbin.test.ts",
  "test/cli/kit-check-process.test.ts",
  "test/packages/debian.test.ts",
  "test/differential/library-native.test.ts",
  // Kill campaigns: strace kills the process at every durable system call.
  "test/process/crash.test.ts",
  // Long random campaigns: 400 packager key sets against clang-offload-packager 19, 3,000-object objcopy runs,
  // two seconds of fuzzing per parser.
  "test/differential/packager-native.test.ts",
  "test/objcopy/objcopy-hostile-native.test.ts",
  "test/fuzz/campaign.test.ts",
];

const TIERS: ReadonlyArray<readonly [string, Tier]> = [
  ...QUICK.map((entry) => [entry, "quick"] as const),
  ...STANDARD.map((entry) => [entry, "standard"] as const),
  ...SLOW.map((entry) => [entry, "slow"] as const),
];

/** The tier of one test file, by its path relative to the repository root (with `/`). */
export function tierOf(path: string): Tier {
  let best: readonly [string, Tier] | undefined;
  for (const entry of TIERS) {
    if (path.startsWith(entry[0]) && (best === undefined || entry[0].length > best[0].length)) best = entry;
  }
  return best?.[1] ?? "standard";
}

/** Every test file under `test/` of the repository at `root`, relative, with `/`, sorted. */
export function testFiles(root: string, dir = "test"): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true })
    .flatMap((entry) => {
      const path = `${dir}/${entry.name}`;
      if (entry.name === "fixtures" || entry.name.startsWith(".")) return [];
      if (entry.isDirectory()) return testFiles(root, path);
      return entry.name.endsWith(".test.ts") ? [path] : [];
    })
    .sort();
}
