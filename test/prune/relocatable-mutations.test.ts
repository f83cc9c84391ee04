// prune / compress / decompress / replace on damaged relocatable HIP objects (`.hip_fatbin`, an `ld -r`
// link of two) and a damaged linked OpenMP program (`.llvm.offloading` behind a __tgt_bin_desc), built
// here by the native tools: whatever the bytes, the only error is ours (OffloadKitError naming the
// input), and the functions still work afterwards. Mutations aim at what these editors read: the
// section header table, the relocation entries and symbols, the bundle and offload binary headers.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { loadZstd } from "../../src/compress/zstd-wasm.js";
import { readElfObject } from "../../src/objcopy/index.js";
import { pruneWith, replaceWith, transformWith } from "../../src/prune/index.js";
import { rng, randomBytes } from "../engines.js";
import { ARCHS, FIXTURES } from "../elf-edit/standin.js";
import { nativeTool } from "../native.js";

await loadZstd();
const codecs = nodeCodecs;
const next = rng(25);
const available = ["clang-19", "ld.lld-19"].every((t) => nativeTool(t) !== undefined);
const omp = nativeTool("clang-22") !== undefined && nativeTool("ld.lld-22") !== undefined && nativeTool("clang-linker-wrapper-22") !== undefined;
const dir = available ? mkdtempSync(join(tmpdir(), "offload-kit-reloc-fuzz-")) : "";

function seeds(): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  const compile = (source: string, name: string) => {
    execFileSync("clang-19", ["-x", "hip", ...ARCHS.map((a) => `--offload-arch=${a}`), "-nogpulib", "-nogpuinc", "-I", FIXTURES, "-O1", "-fPIC",
      "-c", join(FIXTURES, source), "-o", join(dir, name)], { stdio: "pipe" });
    return join(dir, name);
  };
  const a = compile("kernels_a.hip", "a.o");
  const b = compile("kernels_b.hip", "b.o");
  execFileSync("ld.lld-19", ["-r", a, b, "-o", join(dir, "ab.o")]);
  out.object = new Uint8Array(readFileSync(a));
  out["-r link"] = new Uint8Array(readFileSync(join(dir, "ab.o")));
  if (omp) {
    execFileSync("gcc", ["-shared", "-fPIC", "-o", join(dir, "libomptarget.so"), join(FIXTURES, "..", "omptarget-standin", "standin.c")]);
    execFileSync("clang-22", ["-fopenmp", `--offload-arch=${ARCHS.join(",")}`, "-nogpulib", "-fuse-ld=lld", "-Xoffload-linker", "--unresolved-symbols=ignore-all",
      join(FIXTURES, "..", "omptarget-standin", "target.c"), "-L", dir, "-o", join(dir, "omp")], { stdio: "pipe" });
    out["OpenMP program"] = new Uint8Array(readFileSync(join(dir, "omp")));
  }
  return out;
}

/** Byte ranges worth damaging: section headers and the sections the editors read (all of a linked file's first 64 KiB). */
function targets(bytes: Uint8Array): [number, number][] {
  try {
    const obj = readElfObject(bytes);
    const shoff = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(40, true));
    const ranges: [number, number][] = [[0, 64], [shoff, bytes.length]];
    for (const s of obj.sections) {
      if (/^(\.hip_fatbin|\.rela\.hipFatBinSegment|\.symtab|\.llvm\.offloading)$/.test(s.name)) {
        const at = s.data.byteOffset - bytes.byteOffset;
        ranges.push([at, at + Math.min(s.data.length, 4096)]);
      }
    }
    return ranges;
  } catch {
    return [[0, Math.min(bytes.length, 65536)]];
  }
}

function mutate(seed: Uint8Array, ranges: readonly [number, number][]): Uint8Array {
  const bytes = seed.slice();
  const [from, to] = ranges[Math.floor(next() * ranges.length)]!;
  const at = from + Math.floor(next() * Math.max(1, to - from - 8));
  const kind = Math.floor(next() * 3);
  if (kind === 0) for (let i = 0, n = 1 + Math.floor(next() * 4); i < n; i++) bytes[Math.min(bytes.length - 1, at + i * 3)] = Math.floor(next() * 256);
  else if (kind === 1) new DataView(bytes.buffer).setBigUint64(Math.min(at, bytes.length - 8), BigInt(Math.floor(next() * 2 ** 40)), true);
  else return bytes.subarray(0, Math.floor(next() * bytes.length));
  return bytes;
}

function onlyOurs(run: () => unknown, label: string): void {
  try {
    run();
  } catch (e) {
    if (!(e instanceof OffloadKitError)) throw new Error(`${label}: ${String(e)}`, { cause: e });
    expect(e.message.startsWith("fuzz")).toBe(true);
  }
}

describe.skipIf(!available)("mutated relocatable HIP objects and linked OpenMP files", () => {
  const inputs = available ? seeds() : {};
  afterAll(() => {
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  it.each(Object.keys(inputs))("%s: fail only with OffloadKitError naming the input", (name) => {
    const seed = inputs[name]!;
    const ranges = targets(seed);
    for (let i = 0; i < 200; i++) {
      const bytes = mutate(seed, ranges);
      onlyOurs(() => pruneWith(bytes, { keep: ["gfx90a"], codecs, name: "fuzz", allowEmpty: next() < 0.5 }), `${name} #${i} prune`);
      onlyOurs(() => transformWith(bytes, { codecs, name: "fuzz" }, i % 2 === 0 ? "compress" : "decompress"), `${name} #${i} transform`);
      const entry = name === "OpenMP program" ? "openmp-amdgcn-amd-amdhsa--gfx906" : "hipv4-amdgcn-amd-amdhsa--gfx906";
      onlyOurs(() => replaceWith(bytes, { entry, payload: randomBytes(next, 50), codecs, name: "fuzz" }), `${name} #${i} replace`);
    }
    expect(pruneWith(seed, { keep: ["gfx90a"], codecs }).changed).toBe(true);
  });
});
