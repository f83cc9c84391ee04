/**
 * src/objcopy against llvm-objcopy-19 on objects clang-19 (and gcc, where installed) compiles from random C and
 * C++ sources, for ten targets of both classes and byte orders: the bundler's two edits
 * (`--add-section=N=F --set-section-flags=N=readonly,exclude ...` and
 * `--regex --remove-section=__CLANG_OFFLOAD_BUNDLE__.*`) must give the same bytes.
 *
 * OFFLOAD_KIT_OBJCOPY_CASES sets the number of objects (default 120); OFFLOAD_KIT_OBJCOPY_SEED the generator seed.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { addSections, removeSections } from "../../src/objcopy/index.js";
import { rng } from "../engines.js";
import { hasNative } from "../native.js";
import { HANG_MS } from "../limits.js";

const run = promisify(execFile);
const CASES = Number(process.env.OFFLOAD_KIT_OBJCOPY_CASES ?? 120);
const SEED = Number(process.env.OFFLOAD_KIT_OBJCOPY_SEED ?? 19);
const PREFIX = "__CLANG_OFFLOAD_BUNDLE__";
const native = hasNative("clang-19") && hasNative("llvm-objcopy-19");
const gcc = hasNative("gcc");

/** Targets and the extra flags they need to compile freestanding code. */
const TARGETS: readonly { triple: string; flags: readonly string[]; tls: boolean }[] = [
  { triple: "x86_64-linux-gnu", flags: [], tls: true },
  { triple: "aarch64-linux-gnu", flags: [], tls: true },
  { triple: "i386-linux-gnu", flags: [], tls: true },
  { triple: "armv7a-linux-gnueabihf", flags: [], tls: true },
  { triple: "powerpc64-linux-gnu", flags: [], tls: true },
  { triple: "powerpc64le-linux-gnu", flags: [], tls: true },
  { triple: "mips-linux-gnu", flags: [], tls: true },
  { triple: "s390x-linux-gnu", flags: [], tls: true },
  { triple: "riscv64-linux-gnu", flags: [], tls: true },
  { triple: "amdgcn-amd-amdhsa", flags: ["-mcpu=gfx906", "-nogpulib"], tls: false },
];

type Rand = () => number;
const pick = <T>(rand: Rand, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
const between = (rand: Rand, lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

/** A random translation unit: globals of every storage kind, functions calling each other, custom sections. */
function source(rand: Rand, cxx: boolean, tls: boolean): string {
  const lines: string[] = [];
  const globals = between(rand, 0, 8);
  for (let i = 0; i < globals; i++) {
    const kind = between(rand, 0, 7);
    if (kind === 0) lines.push(`int g${i} = ${between(rand, 1, 999)};`);
    else if (kind === 1) lines.push(`static int s${i}[${between(rand, 1, 64)}];\nint *ps${i} = s${i};`);
    else if (kind === 2) lines.push(`const char *str${i} = "text ${i} ${between(rand, 0, 1e6)}";`);
    else if (kind === 3) lines.push(`char big${i}[${between(rand, 1, 1 << 20)}];`);
    else if (kind === 4) lines.push(`__attribute__((section(".custom${i % 3}"))) int cs${i} = ${i};`);
    else if (kind === 5) lines.push(`__attribute__((weak)) int w${i} = ${i};`);
    else if (kind === 6 && tls) lines.push(`${cxx ? "thread_local" : "_Thread_local"} int t${i} = ${i};`);
    else lines.push(`extern int e${i}; int *pe${i} = &e${i};`);
  }
  const functions = between(rand, 1, 10);
  for (let i = 0; i < functions; i++) {
    const callee = i > 0 ? ` + f${between(rand, 0, i - 1)}(x - 1)` : "";
    const storage = pick(rand, cxx ? ["", "static ", "inline ", "template <int N> "] : ["", "static ", "__attribute__((weak)) "]);
    if (storage.startsWith("template")) {
      lines.push(`template <int N> int tf${i}(int x) { return x * N; }\nint f${i}(int x) { return tf${i}<${i + 2}>(x)${callee}; }`);
    } else if (storage === "inline ") {
      lines.push(`inline int in${i}(int x) { return x ^ ${i}; }\nint f${i}(int x) { return in${i}(x)${callee}; }`);
    } else {
      lines.push(`${storage}int f${i}(int x) { return x * ${between(rand, 2, 99)}${callee}; }`);
      if (storage === "static ") lines.push(`int (*pf${i})(int) = f${i};`);
    }
  }
  return lines.join("\n") + "\n";
}

function randomBytes(rand: Rand, size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = Math.floor(rand() * 256);
  return out;
}

const DEVICE_IDS = [
  "hip-amdgcn-amd-amdhsa--gfx906", "hip-amdgcn-amd-amdhsa--gfx90a:xnack-", "openmp-nvptx64-nvidia-cuda--sm_70",
  "hipv4-amdgcn-amd-amdhsa--gfx1030", "openmp-amdgcn-amd-amdhsa--gfx908:sramecc+:xnack+",
];

interface Case {
  readonly label: string;
  readonly object: string;
  readonly sections: { name: string; data: Uint8Array; file: string }[];
}

const dir = mkdtempSync(join(tmpdir(), "offload-kit-objcopy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function makeCase(index: number, rand: Rand): Promise<Case> {
  const useGcc = gcc && rand() < 0.1;
  const target = useGcc ? { triple: "gcc", flags: [] as string[], tls: true } : pick(rand, TARGETS);
  const cxx = rand() < 0.35;
  const flags = [
    pick(rand, ["-O0", "-O1", "-O2", "-Os"]),
    ...(rand() < 0.3 ? ["-g"] : []),
    ...(rand() < 0.3 ? ["-ffunction-sections", "-fdata-sections"] : []),
    ...(!cxx && rand() < 0.3 ? ["-fcommon"] : []),
  ];
  const src = join(dir, `c${index}.${cxx ? "cpp" : "c"}`);
  const object = join(dir, `c${index}.o`);
  writeFileSync(src, source(rand, cxx, target.tls));
  if (useGcc) await run("gcc", [...(cxx ? ["-x", "c++"] : []), ...flags, "-c", src, "-o", object]);
  else await run("clang-19", [`--target=${target.triple}`, ...target.flags, ...flags, "-c", src, "-o", object]);
  const ids = ["host-x86_64-unknown-linux-gnu", ...DEVICE_IDS.slice(0, between(rand, 0, 3))];
  const sections = ids.map((id, k) => {
    const data = k === 0 ? new Uint8Array(1) : randomBytes(rand, between(rand, 0, 5000));
    const file = join(dir, `c${index}.${k}.bin`);
    writeFileSync(file, data);
    return { name: PREFIX + id, data, file };
  });
  return { label: `${index}: ${target.triple} ${cxx ? "c++" : "c"} ${flags.join(" ")}`, object, sections };
}

async function inBatches<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  }));
  return results;
}

describe.skipIf(!native)("llvm-objcopy-19", () => {
  it(`adds and removes bundle sections byte for byte on ${CASES} generated objects`, { timeout: HANG_MS }, async () => {
    const rand = rng(SEED);
    const seeds = Array.from({ length: CASES }, () => Math.floor(rand() * 2 ** 32));
    const outcomes = await inBatches(seeds, 2, async (seed) => {
      const index = seeds.indexOf(seed);
      const c = await makeCase(index, rng(seed));
      const fat = `${c.object}.fat`;
      await run("llvm-objcopy-19", [
        ...c.sections.flatMap((s) => [`--add-section=${s.name}=${s.file}`, `--set-section-flags=${s.name}=readonly,exclude`]),
        "--", c.object, fat,
      ]);
      const host = `${c.object}.host`;
      await run("llvm-objcopy-19", ["--regex", `--remove-section=${PREFIX}.*`, "--", fat, host]);
      const input = new Uint8Array(readFileSync(c.object));
      const ours = addSections(input, c.sections.map((s) => ({ name: s.name, data: s.data, flags: "readonly,exclude" })));
      const theirs = new Uint8Array(readFileSync(fat));
      const oursHost = removeSections(theirs, (name) => name.startsWith(PREFIX));
      return {
        label: c.label,
        target: c.label.split(" ")[1],
        added: Buffer.from(ours).equals(theirs),
        removed: Buffer.from(oursHost).equals(readFileSync(host)),
      };
    });
    const bad = outcomes.filter((o) => !o.added || !o.removed);
    expect(bad).toEqual([]);
    expect(outcomes.length).toBe(CASES);
    // The generator really spreads over the targets (a broken seed once made every case the same).
    if (CASES >= 100) expect(new Set(outcomes.map((o) => o.target)).size).toBeGreaterThanOrEqual(TARGETS.length);
    expect(new Set(outcomes.map((o) => o.label)).size).toBeGreaterThan(CASES / 2);
  });
});
