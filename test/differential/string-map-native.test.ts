/**
 * The StringMap model (src/llvm/string-map.ts) against the real thing, three ways:
 *
 * 1. `-list` order. Random sets of target IDs are bundled (type bc) by clang-offload-bundler-14/-19/-22;
 *    the IDs are read back from the bundle header (so the test does not depend on our ID normalisation:
 *    19 and 22 store normalised IDs) and the model's order for them, inserted in header order, must equal
 *    what `-list` prints. Sets run up to 60 IDs, so the 16 -> 32 -> 64 -> 128 growths are covered.
 * 2. The unbundling worklist (19/22). The requested targets go into a StringMap; each bundle entry, in
 *    the bundle's StringMap order, goes to the first compatible target found walking the worklist from
 *    begin(), and that target is erased. Entries carry no features and targets do, so several targets
 *    compete for each entry and only the bucket order (with the erasures) decides who gets it. 14 is not
 *    run here: it looks an entry up by exact key (`Worklist.find`), so its order never shows.
 * 3. Tombstones and rehashes, which the bundler never exercises: random set/erase/print sequences run
 *    through `llvm::StringMap<int>` compiled against /usr/lib/llvm-N (headers and libLLVM), compared
 *    step by step with the model.
 *
 * Each part is skipped for a version whose tool (or compiler and headers) is missing.
 */
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StringMapModel, stringMapOrder, type StringMapHash } from "../../src/llvm/string-map.js";
import { hasNative } from "../native.js";

const run = promisify(execFile);

interface Version {
  version: 14 | 19 | 22;
  hash: StringMapHash;
}

const VERSIONS: Version[] = [
  { version: 14, hash: "djb" },
  { version: 19, hash: "xxh3" },
  { version: 22, hash: "xxh3" },
];

/** Through test/native.ts, so CI (OFFLOAD_KIT_REQUIRE_NATIVE=1) fails instead of skipping. */
function onPath(command: string): boolean {
  return hasNative(command);
}

function bundler(version: number): string {
  return `clang-offload-bundler-${version}`;
}

/** xorshift32 in [0, 1), seeded so a failure can be replayed. */
function makeRandom(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function shuffle<T>(random: () => number, items: T[]): T[] {
  for (let index = items.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [items[index], items[other]] = [items[other]!, items[index]!];
  }
  return items;
}

// Processors every one of 14, 19 and 22 accepts as an offload arch, so 19/22 keep them as the target ID
// (22 drops an unknown one, which would make two targets collide).
const AMD_PROCESSORS = [
  "gfx700", "gfx701", "gfx702", "gfx801", "gfx802", "gfx803", "gfx900", "gfx902", "gfx904", "gfx906",
  "gfx908", "gfx909", "gfx90a", "gfx90c", "gfx942", "gfx1010", "gfx1011", "gfx1012", "gfx1030", "gfx1031",
  "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036", "gfx1100", "gfx1101", "gfx1102", "gfx1103",
];
const NVIDIA_PROCESSORS = ["sm_35", "sm_50", "sm_52", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"];
const FEATURE_NAMES = ["sramecc", "xnack"];
const HOST = "host-x86_64-unknown-linux-gnu";

/** Every sign combination of `names` as a `:a+:b-` suffix (names in sorted order, like clang writes them). */
function featureVariants(names: readonly string[]): string[] {
  let variants = [""];
  for (const name of names) variants = variants.flatMap((prefix) => [`${prefix}:${name}+`, `${prefix}:${name}-`]);
  return variants;
}

/**
 * Device targets that can be bundled together in any subset: within one kind and processor every ID
 * uses the same feature names, so 19/22's conflict check (a later ID naming a feature the first lacks)
 * never fires.
 */
function devicePool(random: () => number): string[] {
  const pool: string[] = [];
  for (const kind of ["hip", "hipv4", "openmp"]) {
    for (const processor of AMD_PROCESSORS) {
      const names = FEATURE_NAMES.filter(() => random() < 0.5);
      for (const suffix of featureVariants(names)) pool.push(`${kind}-amdgcn-amd-amdhsa--${processor}${suffix}`);
    }
  }
  for (const processor of NVIDIA_PROCESSORS) pool.push(`openmp-nvptx64-nvidia-cuda--${processor}`);
  return pool;
}

/** A made-up processor: 14 stores it verbatim, 19 as `...--<name>-`; 22 would drop it, so 22 never gets one. */
function randomMadeUpTarget(random: () => number): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_.";
  let name = "x";
  const length = 1 + Math.floor(random() * 14);
  for (let index = 0; index < length; index++) name += pick(random, [...alphabet]);
  return `hip-amdgcn-amd-amdhsa--${name}`;
}

/** A valid -targets list: a HIP-only list may go without a host, anything with openmp has exactly one. */
function randomTargetSet(random: () => number, pool: readonly string[], size: number, madeUp: boolean): string[] {
  const chosen = new Set<string>();
  while (chosen.size < size) {
    chosen.add(madeUp && random() < 0.3 ? randomMadeUpTarget(random) : pick(random, pool));
  }
  const targets = [...chosen];
  const needsHost = targets.some((target) => target.startsWith("openmp-"));
  if (needsHost || random() < 0.5) targets.splice(Math.floor(random() * (targets.length + 1)), 0, HOST);
  return targets;
}

function latin1(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return text;
}

/** The entry IDs of a binary bundle in header order (spec/bundler.md §2.1). */
function readBundleIds(bytes: Uint8Array): string[] {
  expect(latin1(bytes.subarray(0, 24))).toBe("__CLANG_OFFLOAD_BUNDLE__");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = Number(view.getBigUint64(24, true));
  const ids: string[] = [];
  let position = 32;
  for (let index = 0; index < count; index++) {
    const length = Number(view.getBigUint64(position + 16, true));
    position += 24;
    ids.push(latin1(bytes.subarray(position, position + length)));
    position += length;
  }
  return ids;
}

/** 14 only has the comma-list options; 19/22 warn on them and want one -input/-output per file. */
function fileArgs(version: number, option: "input" | "output", paths: readonly string[]): string[] {
  return version === 14 ? [`-${option}s=${paths.join(",")}`] : paths.map((path) => `-${option}=${path}`);
}

/** Runs `jobs` two at a time: the machine has two shared cores. */
async function inPairs<T>(jobs: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++;
      results[index] = await jobs[index]!();
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

let workDir = "";
beforeAll(() => {
  workDir = mkdtempSync(join(tmpdir(), "string-map-native-"));
});
afterAll(() => {
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

const LIST_SIZES = [1, 2, 3, 4, 5, 7, 9, 11, 12, 13, 14, 16, 19, 23, 24, 25, 27, 33, 40, 48, 49, 60];

describe.each(VERSIONS)("-list order of clang-offload-bundler-$version", ({ version, hash }) => {
  it.skipIf(!onPath(bundler(version)))(`is the StringMap (${hash}) order of the stored IDs`, async () => {
    const seed = 0x1157 + version;
    const random = makeRandom(seed);
    const pool = devicePool(random);
    const payload = join(workDir, `payload-${version}`);
    writeFileSync(payload, "x");
    const cases = LIST_SIZES.map((size, index) => ({
      targets: randomTargetSet(random, pool, size, version !== 22),
      bundle: join(workDir, `list-${version}-${index}.bc`),
    }));

    const outcomes = await inPairs(
      cases.map(({ targets, bundle }) => async () => {
        await run(bundler(version), [
          "-type=bc",
          `-targets=${targets.join(",")}`,
          ...fileArgs(version, "input", targets.map(() => payload)),
          ...fileArgs(version, "output", [bundle]),
        ]);
        const listed = await run(bundler(version), ["-type=bc", "-list", ...fileArgs(version, "input", [bundle])]);
        return { stored: readBundleIds(readFileSync(bundle)), listed: listed.stdout.split("\n").filter(Boolean) };
      }),
    );

    let differsFromHeaderOrder = 0;
    outcomes.forEach(({ stored, listed }, index) => {
      const context = `seed ${seed}, case ${index}, -targets=${cases[index]!.targets.join(",")}`;
      expect(stored.length, context).toBe(cases[index]!.targets.length);
      expect(listed, context).toEqual(stringMapOrder(stored, hash));
      if (listed.join() !== stored.join()) differsFromHeaderOrder++;
    });
    // The test would be weak if -list happened to print header order.
    expect(differsFromHeaderOrder).toBeGreaterThan(LIST_SIZES.length / 2);
  });
});

/** The processor of a canonical `kind-amdgcn-amd-amdhsa--<processor>[:features]` ID. */
function processorOf(id: string): string {
  const base = id.split(":")[0]!;
  return base.slice(base.lastIndexOf("-") + 1);
}

// Processors and the features they support. Unlike bundling, matching parses the target ID against the
// processor, and a feature the processor lacks (gfx1030:xnack+) makes the target incompatible.
const WORKLIST_PROCESSORS: Record<string, readonly string[]> = {
  gfx906: FEATURE_NAMES,
  gfx908: FEATURE_NAMES,
  gfx90a: FEATURE_NAMES,
  gfx942: FEATURE_NAMES,
  gfx1030: [],
  gfx1100: [],
};

describe.each(VERSIONS.filter(({ version }) => version !== 14))(
  "unbundling worklist of clang-offload-bundler-$version",
  ({ version, hash }) => {
    it.skipIf(!onPath(bundler(version)))("hands each entry to the first compatible target in bucket order", async () => {
      const seed = 0x3017 + version;
      const random = makeRandom(seed);
      const cases = Array.from({ length: 12 }, (_, index) => {
        // Entries: featureless hip/hipv4 code objects for some processors (HIP-only, so no host needed).
        const entries = shuffle(
          random,
          Object.keys(WORKLIST_PROCESSORS).filter(() => random() < 0.7).flatMap((processor) =>
            ["hip", "hipv4"].filter(() => random() < 0.7).map((kind) => `${kind}-amdgcn-amd-amdhsa--${processor}`),
          ),
        );
        if (entries.length === 0) entries.push("hip-amdgcn-amd-amdhsa--gfx906");
        // Targets: per kind and processor one set of feature names, some of its sign combinations.
        const targets = shuffle(
          random,
          Object.entries(WORKLIST_PROCESSORS).flatMap(([processor, features]) =>
            ["hip", "hipv4"].flatMap((kind) => {
              const variants = featureVariants(features.filter(() => random() < 0.6));
              const kept = variants.filter(() => random() < 0.7);
              return (kept.length > 0 ? kept : variants.slice(0, 1)).map(
                (suffix) => `${kind}-amdgcn-amd-amdhsa--${processor}${suffix}`,
              );
            }),
          ),
        );
        return { entries, targets, prefix: join(workDir, `worklist-${version}-${index}`) };
      });

      const outcomes = await inPairs(
        cases.map(({ entries, targets, prefix }) => async () => {
          const payloads = entries.map((entry, index) => {
            const path = `${prefix}-in${index}`;
            writeFileSync(path, entry);
            return path;
          });
          const outputs = targets.map((_, index) => `${prefix}-out${index}`);
          await run(bundler(version), [
            "-type=bc",
            `-targets=${entries.join(",")}`,
            ...fileArgs(version, "input", payloads),
            ...fileArgs(version, "output", [`${prefix}.bc`]),
          ]);
          await run(bundler(version), [
            "-type=bc",
            "-unbundle",
            "-allow-missing-bundles",
            `-targets=${targets.join(",")}`,
            ...fileArgs(version, "input", [`${prefix}.bc`]),
            ...fileArgs(version, "output", outputs),
          ]);
          return {
            stored: readBundleIds(readFileSync(`${prefix}.bc`)),
            received: outputs.map((path) => (existsSync(path) ? readFileSync(path, "latin1") : undefined)),
          };
        }),
      );

      let decidedByOrder = 0;
      outcomes.forEach(({ stored, received }, index) => {
        const { targets } = cases[index]!;
        // The bundler's loop: entries in the bundle's StringMap order, worklist walked from begin().
        const worklist = new StringMapModel<number>({ hash });
        targets.forEach((target, output) => worklist.set(target, output));
        const expected: string[] = targets.map(() => "");
        for (const entry of stringMapOrder(stored, hash)) {
          for (const [target, output] of worklist.entries()) {
            if (processorOf(target) !== processorOf(entry)) continue;
            expected[output] = entry;
            worklist.delete(target);
            break;
          }
        }
        expect(received, `seed ${seed}, case ${index}, targets ${targets.join(",")}`).toEqual(expected);
        // Would handing entries to targets in -targets order have given the same files?
        const remaining = [...targets];
        const naive: string[] = targets.map(() => "");
        for (const entry of stored) {
          const at = remaining.findIndex((target) => processorOf(target) === processorOf(entry));
          if (at < 0) continue;
          naive[targets.indexOf(remaining[at]!)] = entry;
          remaining.splice(at, 1);
        }
        if (naive.join("\n") !== expected.join("\n")) decidedByOrder++;
      });
      expect(decidedByOrder).toBeGreaterThan(cases.length / 2);
    });
  },
);

// A driver for llvm::StringMap<int>: `n` starts a fresh map, `s <key>` is map[key] = step, `d <key>`
// erases, `p` prints "#<size> <buckets>" and then "=<key>" per entry in iteration order.
const DRIVER = `
#include "llvm/ADT/StringMap.h"
#include <iostream>
#include <memory>
#include <string>
int main() {
  auto map = std::make_unique<llvm::StringMap<int>>();
  std::string line;
  int step = 0;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::string key = line.size() > 2 ? line.substr(2) : std::string();
    switch (line[0]) {
    case 'n': map = std::make_unique<llvm::StringMap<int>>(); break;
    case 's': (*map)[key] = ++step; break;
    case 'd': map->erase(key); break;
    case 'p':
      std::cout << '#' << map->size() << ' ' << map->getNumBuckets() << '\\n';
      for (auto &entry : *map) std::cout << '=' << entry.first().str() << '\\n';
      break;
    }
  }
}
`;

const COMPILER = ["clang++-19", "clang++", "c++", "g++"].find(onPath);

function hasLlvmDev(version: number): boolean {
  return (
    COMPILER !== undefined &&
    existsSync(`/usr/lib/llvm-${version}/include/llvm/ADT/StringMap.h`) &&
    existsSync(`/usr/lib/llvm-${version}/lib/libLLVM-${version}.so`)
  );
}

/** Random set/erase/print sequences over a small key universe, so erased keys come back into tombstones. */
function randomOperations(random: () => number): string[] {
  const lines: string[] = [];
  for (let sequence = 0; sequence < 40; sequence++) {
    lines.push("n");
    const universe = Array.from({ length: 4 + Math.floor(random() * 60) }, () => {
      if (random() < 0.5) return pick(random, AMD_PROCESSORS) + pick(random, ["", ":xnack+", ":sramecc-"]);
      // Bytes 0x20..0xff: anything but the driver's line break, as raw bytes (latin1 both ways).
      let key = "";
      const length = Math.floor(random() * 40);
      for (let index = 0; index < length; index++) key += String.fromCharCode(0x20 + Math.floor(random() * 0xe0));
      return key;
    });
    const steps = 20 + Math.floor(random() * 300);
    for (let step = 0; step < steps; step++) {
      const roll = random();
      const key = pick(random, universe);
      lines.push(roll < 0.55 ? `s ${key}` : roll < 0.9 ? `d ${key}` : "p");
    }
    lines.push("p");
  }
  return lines;
}

/** The model's answer to the same driver input. */
function modelTrace(lines: readonly string[], hash: StringMapHash): string {
  let map = new StringMapModel<number>({ hash });
  let step = 0;
  let out = "";
  for (const line of lines) {
    const key = line.slice(2);
    if (line === "n") map = new StringMapModel<number>({ hash });
    else if (line[0] === "s") map.set(key, ++step);
    else if (line[0] === "d") map.delete(key);
    else {
      out += `#${map.size} ${map.bucketCount}\n`;
      for (const entry of map.keys()) out += `=${entry}\n`;
    }
  }
  return out;
}

const drivers = new Map<number, Promise<string>>();

/** Builds the driver against LLVM `version`; started once, awaited by every version's suite. */
function compileDriver(version: number): Promise<string> {
  let pending = drivers.get(version);
  if (!pending) {
    const driver = join(workDir, `string-map-driver-${version}`);
    writeFileSync(`${driver}.cpp`, DRIVER);
    pending = run(COMPILER!, [
      "-std=c++17",
      "-O1",
      `-I/usr/lib/llvm-${version}/include`,
      `${driver}.cpp`,
      "-o",
      driver,
      `-L/usr/lib/llvm-${version}/lib`,
      `-lLLVM-${version}`,
      `-Wl,-rpath,/usr/lib/llvm-${version}/lib`,
    ]).then(() => driver);
    drivers.set(version, pending);
  }
  return pending;
}

describe.each(VERSIONS)("llvm::StringMap from LLVM $version", ({ version, hash }) => {
  const available = hasLlvmDev(version);
  let driver = "";
  beforeAll(async () => {
    if (!available) return;
    // Compile all versions at once (two cores) rather than one per suite.
    const all = VERSIONS.filter((other) => hasLlvmDev(other.version)).map((other) => compileDriver(other.version));
    await Promise.all(all);
    driver = await compileDriver(version);
  });

  it.skipIf(!available)(`matches the model (${hash}) through sets, erases and tombstones`, () => {
    const seed = 0x7007 + version;
    const lines = randomOperations(makeRandom(seed));
    const input = Buffer.from(lines.join("\n") + "\n", "latin1");
    const native = execFileSync(driver, { input, maxBuffer: 1 << 26 }).toString("latin1");
    const model = modelTrace(lines, hash);
    expect(native.length).toBeGreaterThan(1000);
    // Compare per printed state so a failure shows the first diverging one.
    expect(model.split("#"), `seed ${seed}`).toEqual(native.split("#"));
  });
});
