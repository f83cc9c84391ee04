// `prune` of NVIDIA fatbins in linked files: nvcc 13 builds (test/fixtures/nv-prune/, made by
// make-nv-prune-fixtures.sh) of a shared library (plain and -Xfatbin -compress-all) and a PIE executable for
// sm_75, sm_80, sm_90 and compute_90 PTX. Each output is read back with the format's parser and checked by
// src/verify; where installed, eu-elflint --gnu-ld, readelf -d and nm -D must say what they said of the input,
// a gcc program must dlopen the pruned library and call into it, and cuobjdump (scripts/fetch-cuobjdump.sh)
// must list exactly the kept entries.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { openLinkedElf } from "../../src/elf-edit/elf64.js";
import { sectionBytes } from "../../src/elf-edit/elf64.js";
import { bytesSource } from "../../src/engine/source.js";
import { OffloadKitError } from "../../src/engine/errors.js";
import { parseNvFatbinContainers } from "../../src/formats/nv-fatbin.js";
import { parseSelection, pruneWith } from "../../src/prune/index.js";
import { decideNvEntry } from "../../src/prune/nv-linked-elf.js";
import { verifySource } from "../../src/verify/index.js";
import * as objcopy from "../../src/objcopy/index.js";
import { HANG_MS } from "../limits.js";
import { nativeTool, runNative } from "../native.js";

const FIXTURES = new URL("../fixtures/nv-prune/", import.meta.url).pathname;
const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;
const CUDA_LIB = "/usr/local/cuda-13.0/lib64";
const CUOBJDUMP = join(process.env.HOME ?? "/root", ".cache/offload-kit/cuobjdump/cuobjdump");
const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(join(FIXTURES, name)));

/** Our own listing: the entries of each container of `.nv_fatbin`, in address order. */
function listing(bytes: Uint8Array): string[][] {
  const elf = openLinkedElf(bytesSource(bytes));
  const section = elf.sections.find((s) => s.name === ".nv_fatbin")!;
  return parseNvFatbinContainers(sectionBytes(elf, section)).containers.map((c) => c.entries.map((e) => e.archName));
}

function prune(bytes: Uint8Array, options: { keep?: string[]; drop?: string[]; dropPtx?: boolean; allowEmpty?: boolean }) {
  return pruneWith(bytes, { ...options, codecs: nodeCodecs, name: "lib" });
}

function clean(bytes: Uint8Array): void {
  const report = verifySource(bytesSource(bytes));
  expect(report.findings).toEqual([]);
  expect(report.kind).toBe("linked ELF");
}

const ALL = ["sm_75", "sm_80", "sm_90"];

describe("decideNvEntry: what a GPU loads", () => {
  const keep = (gpus: string[], kind: number, archName: string, dropPtx = false) => decideNvEntry(parseSelection("keep", gpus), { kind, archName }, dropPtx).keep;
  const drop = (gpus: string[], kind: number, archName: string, dropPtx = false) => decideNvEntry(parseSelection("drop", gpus), { kind, archName }, dropPtx).keep;
  it("runs SASS of the same major version and a lower or equal minor, sm_NNa only on sm_NN", () => {
    expect(keep(["sm_86"], 2, "sm_80")).toBe(true);
    expect(keep(["sm_80"], 2, "sm_86")).toBe(false);
    expect(keep(["sm_90"], 2, "sm_80")).toBe(false);
    expect(keep(["sm_90"], 2, "sm_90a")).toBe(true);
    expect(keep(["sm_90"], 2, "sm_90")).toBe(true);
    expect(keep(["sm_103"], 2, "sm_100f")).toBe(true);
    expect(keep(["sm_103"], 2, "sm_100a")).toBe(false);
  });
  it("JITs PTX of a compute capability at or below the GPU's, unless --drop-ptx", () => {
    expect(keep(["sm_90"], 1, "compute_80")).toBe(true);
    expect(keep(["sm_80"], 1, "compute_90")).toBe(false);
    expect(keep(["sm_90"], 1, "compute_90", true)).toBe(false);
    expect(keep(["sm_100"], 1, "compute_90a")).toBe(false);
  });
  it("--drop removes SASS the listed GPUs load and keeps PTX unless --drop-ptx", () => {
    expect(drop(["sm_90"], 2, "sm_90")).toBe(false);
    expect(drop(["sm_90"], 2, "sm_80")).toBe(true);
    expect(drop(["sm_90"], 1, "compute_90")).toBe(true);
    expect(drop(["sm_90"], 1, "compute_90", true)).toBe(false);
    expect(drop(["sm_75"], 1, "compute_90", true)).toBe(true);
  });
});

describe("prune of .nv_fatbin in nvcc-linked files", () => {
  it("keeps sm_90 and the compute_90 PTX a sm_90 can JIT, in every container", () => {
    const input = fixture("libnvk.so");
    expect(listing(input)).toEqual([ALL, [...ALL, "compute_90"]]);
    const result = prune(input, { keep: ["sm_90"] });
    expect(result.container).toBe("linked ELF");
    expect(listing(result.output)).toEqual([["sm_90"], ["sm_90", "compute_90"]]);
    expect(result.entries.filter((e) => e.kept).map((e) => `${e.where} ${e.id}`)).toEqual(["fat binary 0 sm_90", "fat binary 1 sm_90", "fat binary 1 compute_90"]);
    expect(result.outputSize).toBeLessThan(input.length);
    clean(result.output);
  });

  it("writes every kept entry byte for byte", () => {
    for (const name of ["libnvk.so", "libnvk-z.so", "nvapp"]) {
      const input = fixture(name);
      const out = prune(input, { keep: ["sm_80"], dropPtx: true }).output;
      const before = containersOf(input);
      const after = containersOf(out);
      expect(after.length).toBe(before.length);
      after.forEach((entries, i) => {
        expect(entries.map((e) => e.name)).toEqual(before[i].filter((e) => e.name === "sm_80").map((e) => e.name));
        entries.forEach((e) => expect(Buffer.from(e.bytes).equals(Buffer.from(before[i].find((b) => b.name === e.name)!.bytes))).toBe(true));
      });
      clean(out);
    }
  });

  it("drops SASS for every GPU and keeps the PTX: the layout nvcc writes for a PTX-only build", () => {
    const result = prune(fixture("libnvk.so"), { drop: ALL });
    expect(listing(result.output)).toEqual([[], ["compute_90"]]);
    expect(result.notes.join("\n")).toMatch(/fat binary 0 \(device link\).*cubins without kernels/);
    // nvcc -gencode arch=compute_90,code=compute_90 gives the same .nv_fatbin bytes.
    const nvcc = fixture("libnvk-ptx.so");
    expect(Buffer.from(nvFatbinBytes(result.output)).equals(Buffer.from(nvFatbinBytes(nvcc)))).toBe(true);
    clean(result.output);
  });

  it("refuses a container left with no code for its kernels, unless --allow-empty", () => {
    const input = fixture("libnvk.so");
    let error: unknown;
    try {
      prune(input, { keep: ["sm_70"] });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OffloadKitError);
    expect((error as OffloadKitError).code).toBe("PRUNE_EMPTY");
    expect((error as Error).message).toMatch(/fat binary 1.*keeps none.*cudaErrorNoKernelImageForDevice/);
    const allowed = prune(input, { keep: ["sm_70"], allowEmpty: true });
    expect(listing(allowed.output)).toEqual([[], []]);
    clean(allowed.output);
  });

  it("leaves a file whose containers keep everything unchanged", () => {
    const input = fixture("libnvk.so");
    const result = prune(input, { keep: ["sm_75", "sm_80", "sm_90"] });
    expect(result.changed).toBe(false);
  });

  it("a chain of edits gives the bytes of one edit", () => {
    for (const name of ["libnvk.so", "libnvk-z.so", "nvapp"]) {
      const input = fixture(name);
      const once = prune(input, { keep: ["sm_90"] }).output;
      const first = prune(input, { keep: ["sm_80", "sm_90"] }).output;
      clean(first);
      const again = prune(first, { keep: ["sm_80", "sm_90"] });
      expect(again.changed).toBe(false);
      const second = prune(first, { keep: ["sm_90"] }).output;
      clean(second);
      expect(Buffer.from(second).equals(Buffer.from(once))).toBe(true);
      const third = prune(second, { keep: ["sm_90"], dropPtx: true }).output;
      clean(third);
      expect(listing(third).every((c) => c.every((e) => e === "sm_90"))).toBe(true);
    }
  });

  it("verify finds a wrapper moved off its container's start, and a container whose size field is wrong", () => {
    const out = prune(fixture("libnvk.so"), { keep: ["sm_90"] }).output;
    const elf = openLinkedElf(bytesSource(out));
    const segment = elf.sections.find((s) => s.name === ".nvFatBinSegment")!;
    const fatbin = elf.sections.find((s) => s.name === ".nv_fatbin")!;
    const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
    // Wrapper 1's RELATIVE relocation: the .rela.dyn entry whose r_offset is its data field.
    const rela = elf.sections.find((s) => s.name === ".rela.dyn")!;
    const field = segment.addr + 24 + 8;
    let entry = -1;
    for (let at = rela.offset; at < rela.offset + rela.size; at += 24) if (Number(view.getBigUint64(at, true)) === field) entry = at;
    expect(entry).toBeGreaterThan(0);
    const moved = out.slice();
    new DataView(moved.buffer).setBigInt64(entry + 16, view.getBigInt64(entry + 16, true) + 8n, true);
    const codes = verifySource(bytesSource(moved)).findings.map((f) => f.code);
    expect(codes).toContain("WRAPPER_TARGET_NOT_A_CONTAINER");
    expect(codes).toContain("NV_WRAPPER_COPY_DIFFERS");
    const sized = out.slice();
    new DataView(sized.buffer).setUint32(fatbin.offset + 8, view.getUint32(fatbin.offset + 8, true) + 8, true);
    expect(verifySource(bytesSource(sized)).findings.map((f) => f.code)).toContain("BAD_NV_FATBIN");
  });
});

/** The raw bytes of each entry of each container (header and padded payload), named by arch. */
function containersOf(bytes: Uint8Array): { name: string; bytes: Uint8Array }[][] {
  const elf = openLinkedElf(bytesSource(bytes));
  const section = elf.sections.find((s) => s.name === ".nv_fatbin")!;
  return parseNvFatbinContainers(sectionBytes(elf, section)).containers.map((c) =>
    c.entries.map((e) => ({ name: e.archName, bytes: Uint8Array.from([...e.rawHeader, ...e.rawPayload]) })));
}

function nvFatbinBytes(bytes: Uint8Array): Uint8Array {
  const elf = openLinkedElf(bytesSource(bytes));
  return sectionBytes(elf, elf.sections.find((s) => s.name === ".nv_fatbin")!);
}

/** The native tools' view of a file that must not change with a prune. */
function nativeViews(path: string): Record<string, string> {
  const views: Record<string, string> = {};
  if (nativeTool("eu-elflint") !== undefined) views.elflint = runNative("eu-elflint", ["--gnu-ld", path]).stdout.toString().replaceAll(path, "FILE");
  if (nativeTool("readelf") !== undefined) {
    // The dynamic table moves in the file with what follows the freed pages: its offset line is left out.
    views.dynamic = runNative("readelf", ["-dW", path]).stdout.toString().split("\n").filter((l) => !l.startsWith("Dynamic section at offset")).join("\n");
  }
  if (nativeTool("nm") !== undefined) views.nm = runNative("nm", ["-D", path]).stdout.toString();
  return views;
}

describe("pruned CUDA files as the native tools and the dynamic loader see them", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "nv-prune-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function kit(...args: string[]) {
    const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: HANG_MS });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  it("offload-kit prune writes outputs the native tools read as they read the inputs", () => {
    for (const name of ["libnvk.so", "libnvk-z.so", "nvapp"]) {
      const out = join(dir, `${name}.sm90`);
      const r = kit("prune", "--keep=sm_90", "--drop-ptx", join(FIXTURES, name), "-o", out);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/dropped +sm_75/);
      expect(nativeViews(out)).toEqual(nativeViews(join(FIXTURES, name)));
      expect(kit("verify", out).code).toBe(0);
      if (existsSync(CUOBJDUMP)) {
        const listed = spawnSync(CUOBJDUMP, ["-lelf", "-lptx", out], { encoding: "utf8", timeout: HANG_MS });
        expect(listed.stdout.match(/sm_\d+/g)?.every((a) => a === "sm_90")).toBe(true);
        expect(listed.stdout).not.toMatch(/PTX file/);
      }
    }
  });

  it.skipIf(nativeTool("gcc") === undefined || !existsSync(join(CUDA_LIB, "libcudart.so.13")))("a gcc program dlopens the pruned library and calls into it, as it does the original", () => {
    const source = join(dir, "open.c");
    writeFileSync(source, [
      "#include <dlfcn.h>", "#include <stdio.h>",
      "int main(int argc, char **argv) {",
      "  void *h = dlopen(argv[1], RTLD_NOW); if (!h) { printf(\"dlopen: %s\\n\", dlerror()); return 1; }",
      "  int (*run)(const char *, int) = (int (*)(const char *, int))dlsym(h, \"nvk_run\"); if (!run) return 2;",
      "  printf(\"nvk_run: %d\\n\", run(\"lib\", 1024)); return dlclose(h);",
      "}", ""].join("\n"));
    const exe = join(dir, "open");
    expect(runNative("gcc", ["-o", exe, source, "-ldl"]).status).toBe(0);
    const env = { ...process.env, LD_LIBRARY_PATH: CUDA_LIB };
    const run = (path: string) => spawnSync(exe, [path], { encoding: "utf8", env, timeout: HANG_MS });
    const original = join(dir, "libnvk.so");
    copyFileSync(join(FIXTURES, "libnvk.so"), original);
    const expected = run(original);
    expect(expected.status).toBe(0);
    expect(expected.stdout).toMatch(/^lib: cudaMalloc: .*\nnvk_run: \d+\n$|^lib: n=1024 sum=/);
    for (const args of [["--keep=sm_90"], ["--keep=sm_90", "--drop-ptx"], ["--drop=sm_75,sm_80,sm_90"], ["--keep=sm_80", "--drop-ptx"]]) {
      const out = join(dir, `libnvk-${args.join("").replace(/[^a-z0-9_]/gi, "")}.so`);
      expect(kit("prune", ...args, original, "-o", out).code).toBe(0);
      const got = run(out);
      expect(got.status).toBe(0);
      expect(got.stdout).toBe(expected.stdout);
    }
  });
});

describe("prune of .nv_fatbin in relocatable objects and archives (test/fixtures/nv/, nvcc -c)", () => {
  const NV = new URL("../fixtures/nv/", import.meta.url).pathname;
  const objectEntries = (bytes: Uint8Array): string[] => {
    const { readElfObject } = objcopy;
    const section = readElfObject(bytes).sections.find((s) => s.name === ".nv_fatbin")!;
    return parseNvFatbinContainers(section.data).containers.flatMap((c) => c.entries.map((e) => e.archName));
  };
  it("keeps the chosen entries of an object's container, byte for byte, relocations and symbols untouched", () => {
    for (const name of ["kernels.plain.o", "kernels.zstd.o"]) {
      const input = new Uint8Array(readFileSync(join(NV, name)));
      expect(objectEntries(input)).toEqual(["sm_75", "sm_80", "sm_90", "compute_90"]);
      const result = prune(input, { keep: ["sm_90"] });
      expect(result.container).toBe("CUDA object");
      expect(objectEntries(result.output)).toEqual(["sm_90", "compute_90"]);
      expect(verifySource(bytesSource(result.output)).findings).toEqual([]);
      // st_name is an offset into a string table the writer lays out again: the name itself is compared.
      const symbols = (bytes: Uint8Array) => objcopy.readElfObject(bytes).symbols.map((s) => `${s.name} ${Buffer.from(s.raw.subarray(4)).toString("hex")}`);
      expect(symbols(result.output)).toEqual(symbols(input));
      const relocations = (bytes: Uint8Array) => objcopy.readElfObject(bytes).sections.filter((s) => s.type === 4).map((s) => `${s.name} ${Buffer.from(s.data).toString("hex")}`);
      expect(relocations(result.output)).toEqual(relocations(input));
    }
  });
  it("prunes each CUDA object member of an archive", () => {
    const input = new Uint8Array(readFileSync(join(NV, "libkernels.a")));
    const result = prune(input, { keep: ["sm_80"], dropPtx: true });
    expect(result.container).toBe("archive");
    expect(result.entries.filter((e) => e.kept).map((e) => `${e.where} ${e.id}`)).toEqual(["member kernels.zstd.o, fat binary 0 sm_80"]);
    expect(verifySource(bytesSource(result.output)).findings).toEqual([]);
  });
});

// NVIDIA's own libcurand.so.10 (nvidia-curand 10.4.0.35, CUDA 13: 11 containers, 10 wrappers, zstd entries,
// sm_75..sm_121, one R E text segment holding .nv_fatbin), from the local wheel mirror where it exists.
const CURAND_WHEEL = "/opt/pypi-more/files/nvidia_curand-10.4.0.35-py3-none-manylinux_2_27_x86_64.whl";
const haveCurand = existsSync(CURAND_WHEEL) && nativeTool("unzip") !== undefined;
if (!haveCurand) console.warn(`nv-linked-elf.test.ts: libcurand tests skipped (no ${CURAND_WHEEL} or no unzip)`);

describe.skipIf(!haveCurand)("prune of NVIDIA's libcurand.so.10", () => {
  let dir: string;
  let lib: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "nv-curand-"));
    expect(runNative("unzip", ["-q", "-o", CURAND_WHEEL, "nvidia/cu13/lib/libcurand.so.10", "-d", dir]).status).toBe(0);
    lib = join(dir, "nvidia/cu13/lib/libcurand.so.10");
  }, HANG_MS);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function kit(...args: string[]) {
    const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: HANG_MS, maxBuffer: 1 << 26 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  it("keeps sm_90 SASS only in all 11 containers; native tools, dlopen and a chain of edits agree", () => {
    const out = join(dir, "libcurand.sm90.so");
    const r = kit("prune", "--keep=sm_90", "--drop-ptx", lib, "-o", out);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const bytes = new Uint8Array(readFileSync(out));
    expect(listing(bytes)).toEqual(Array.from({ length: 11 }, () => ["sm_90"]));
    expect(bytes.length).toBeLessThan(statSync(lib).size / 2);
    clean(bytes);
    expect(nativeViews(out)).toEqual(nativeViews(lib));
    if (nativeTool("gcc") !== undefined) {
      const source = join(dir, "open.c");
      writeFileSync(source, [
        "#include <dlfcn.h>", "#include <stdio.h>",
        "int main(int argc, char **argv) {",
        "  void *h = dlopen(argv[1], RTLD_NOW); if (!h) { printf(\"dlopen: %s\\n\", dlerror()); return 1; }",
        "  int (*version)(int *) = (int (*)(int *))dlsym(h, \"curandGetVersion\"); if (!version) return 2;",
        "  int v = 0; int rc = version(&v); printf(\"curandGetVersion: %d %d\\n\", rc, v); return dlclose(h);",
        "}", ""].join("\n"));
      const exe = join(dir, "open");
      expect(runNative("gcc", ["-o", exe, source, "-ldl"]).status).toBe(0);
      const run = (path: string) => spawnSync(exe, [path], { encoding: "utf8", timeout: HANG_MS });
      const expected = run(lib);
      expect(expected.stdout).toMatch(/^curandGetVersion: 0 \d+\n$/);
      expect(run(out).stdout).toBe(expected.stdout);
    }
    // Two edits give the bytes of one.
    const first = join(dir, "first.so");
    const second = join(dir, "second.so");
    expect(kit("prune", "--keep=sm_90,sm_120", lib, "-o", first).code).toBe(0);
    expect(kit("prune", "--keep=sm_90", "--drop-ptx", first, "-o", second).code).toBe(0);
    expect(Buffer.compare(readFileSync(second), Buffer.from(bytes))).toBe(0);
  });
});

describe("prune of damaged CUDA files", () => {
  it("only ever throws OffloadKitError, and what it writes passes verify", () => {
    const input = fixture("libnvk.so");
    const elf = openLinkedElf(bytesSource(input));
    const regions = [".nv_fatbin", ".nvFatBinSegment", ".rela.dyn"].map((name) => elf.sections.find((s) => s.name === name)!);
    let seed = 29;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let written = 0;
    let refused = 0;
    for (let i = 0; i < 400; i++) {
      const bytes = input.slice();
      const region = regions[i % regions.length];
      // Header fields matter most: bytes near container and entry starts, wrapper fields, relocation addends.
      for (let k = 0; k < 1 + random(3); k++) bytes[region.offset + random(Math.min(region.size, i % 2 === 0 ? 256 : region.size))] = random(256);
      try {
        const result = prune(bytes, { keep: ["sm_90"] });
        written++;
        if (!result.changed) continue;
        const report = verifySource(bytesSource(result.output));
        const before = verifySource(bytesSource(bytes));
        const fresh = report.findings.filter((f) => !before.findings.some((b) => b.code === f.code && b.subject === f.subject));
        expect(fresh).toEqual([]);
      } catch (e) {
        if (!(e instanceof OffloadKitError)) throw e;
        refused++;
      }
    }
    expect(written).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });
});
