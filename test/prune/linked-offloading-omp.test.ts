// `offload-kit prune` and `replace` on linked OpenMP programs and libraries (clang-22 -fopenmp
// --offload-arch=gfx906,gfx90a,gfx1100, host linked by lld-22 or GNU ld), whose device images sit in an
// allocated `.llvm.offloading` section behind a __tgt_bin_desc. The judge is a stand-in libomptarget
// (test/fixtures/omptarget-standin/standin.c, linked as -lomptarget) that records what the program's
// constructor hands to __tgt_register_lib: the image count and each image's size and hash. A pruned
// program must register exactly the kept images, byte-equal and in order, and still run; eu-elflint
// must say nothing of it it does not say of the original, and LLVM 22's objdump must list the kept GPUs.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HANG_MS } from "../limits.js";
import { nativeTool } from "../native.js";

const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures");
const STANDIN = join(FIXTURES, "omptarget-standin");
const LIBOMP_DIR = "/usr/lib/llvm-22/lib";
const ARCHS = ["gfx906", "gfx90a", "gfx1100"];

function toolsPresent(): boolean {
  const tools = ["clang-22", "ld.lld-22", "clang-linker-wrapper-22", "llvm-objdump-22", "gcc", "ld.bfd", "eu-elflint"];
  const present = tools.every((t) => nativeTool(t) !== undefined);
  const libomp = existsSync(join(LIBOMP_DIR, "libomp.so"));
  if (!libomp && process.env.OFFLOAD_KIT_REQUIRE_NATIVE === "1") throw new Error(`${LIBOMP_DIR}/libomp.so (libomp-22-dev) is required`);
  return present && libomp;
}
const available = toolsPresent();

function ok(...args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: HANG_MS, maxBuffer: 1 << 28 });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return r.stdout;
}

describe.skipIf(!available)("offload-kit on linked OpenMP files with .llvm.offloading (stand-in libomptarget)", () => {
  const dir = available ? mkdtempSync(join(tmpdir(), "offload-kit-omp-")) : "";
  const path = (name: string) => join(dir, name);
  let logs = 0;

  /** What __tgt_register_lib received when `file` ran (an executable) or was dlopened (a library). */
  function registrations(file: string, executable: boolean): string {
    const log = path(`register-${++logs}.log`);
    const r = spawnSync(executable ? file : path("loader"), executable ? [] : [file], {
      env: { ...process.env, OMPTARGET_STANDIN_LOG: log, LD_LIBRARY_PATH: `${dir}:${LIBOMP_DIR}` }, encoding: "latin1", timeout: HANG_MS,
    });
    if (r.status !== 0) throw new Error(`${file} failed (${r.status ?? r.signal}): ${r.stderr}`);
    if (executable) expect(r.stdout).toBe("42\n");
    return existsSync(log) ? readFileSync(log, "latin1") : "";
  }

  /** The log's image lines, by index. */
  const images = (log: string): string[] => [...log.matchAll(/^ {2}image \d+ (\d+ [0-9a-f]{16})$/gm)].map((m) => m[1]!);
  /** The GPUs llvm-objdump-22 lists, in section order. */
  const archs = (file: string): string[] =>
    [...execFileSync("llvm-objdump-22", ["--offloading", file], { encoding: "latin1" }).matchAll(/^arch\s+(\S+)$/gm)].map((m) => m[1]!);
  const offloadingSize = (file: string): number => {
    const line = /\.llvm\.offloading\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)/.exec(execFileSync("llvm-readelf-22", ["-S", "-W", file], { encoding: "latin1" }));
    return parseInt(line![1]!, 16);
  };
  const elflint = (file: string): string =>
    spawnSync("eu-elflint", ["--gnu-ld", file], { encoding: "latin1" }).stdout.split("\n").filter((l) => l !== "" && !l.startsWith("No errors")).join("\n");

  beforeAll(() => {
    execFileSync("gcc", ["-shared", "-fPIC", "-O1", "-o", path("libomptarget.so"), join(STANDIN, "standin.c")]);
    execFileSync("gcc", ["-o", path("loader"), join(FIXTURES, "hip-standin", "loader.c"), "-ldl"]);
  }, HANG_MS);
  afterAll(() => {
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  /** Builds target.c with every GPU; no device runtime is installed, so its symbols stay unresolved in the images. */
  function build(name: string, linker: "lld" | "bfd", kind: "pie" | "no-pie" | "shared"): string {
    const out = path(name);
    execFileSync("clang-22", [
      "-fopenmp", `--offload-arch=${ARCHS.join(",")}`, "-nogpulib", `-fuse-ld=${linker}`, "-Xoffload-linker", "--unresolved-symbols=ignore-all",
      ...(kind === "shared" ? ["-fPIC", "-shared", "-DNO_MAIN"] : kind === "pie" ? ["-fPIE", "-pie"] : ["-fno-pic", "-no-pie"]),
      join(STANDIN, "target.c"), "-L", dir, "-o", out,
    ], { stdio: "pipe" });
    return out;
  }

  const CASES = [
    ["PIE executable, lld", "lld", "pie"],
    ["non-PIE executable, GNU ld", "bfd", "no-pie"],
    ["shared library, lld", "lld", "shared"],
    ["shared library, GNU ld", "bfd", "shared"],
  ] as const;

  it.each(CASES)("%s: registers exactly the kept images, byte-equal, in order", (name, linker, kind) => {
    const tag = name.replace(/[^a-z0-9]+/gi, "-");
    const executable = kind !== "shared";
    const original = build(tag, linker, kind);
    const before = images(registrations(original, executable));
    const order = archs(original);
    expect(before.length).toBe(3);
    expect([...order].sort()).toEqual([...ARCHS].sort());
    for (const keep of [["gfx90a"], ["gfx1100", "gfx906"]]) {
      const pruned = path(`${tag}-${keep.join("-")}`);
      ok("prune", `--keep=${keep.join(",")}`, original, "-o", pruned);
      const kept = order.map((arch, i) => (keep.includes(arch) ? i : -1)).filter((i) => i >= 0);
      expect(archs(pruned)).toEqual(kept.map((i) => order[i]));
      expect(images(registrations(pruned, executable))).toEqual(kept.map((i) => before[i]));
      // The section shrinks; the file does by whole pages only, less the page a library's moved program
      // header table may take (the ELF editor's rule for .hip_fatbin too).
      expect(offloadingSize(pruned)).toBeLessThan(offloadingSize(original));
      if (keep.length === 1) expect(readFileSync(pruned).length).toBeLessThan(readFileSync(original).length);
      expect(elflint(pruned)).toBe(elflint(original));
      const readelf = spawnSync("llvm-readelf-22", ["-a", "-W", pruned], { encoding: "latin1" });
      expect(readelf.stderr).toBe("");
    }
  });

  it("replaces one image: the program registers the new bytes in its place", () => {
    const original = build("replace", "lld", "pie");
    const before = images(registrations(original, true));
    const order = archs(original);
    const payload = new Uint8Array(3000).map((_, i) => (i * 13) & 0xff);
    writeFileSync(path("new.bin"), payload);
    const replaced = path("replace-x");
    ok("replace", "--entry=openmp-amdgcn-amd-amdhsa--gfx906", `--with=${path("new.bin")}`, original, "-o", replaced);
    const after = images(registrations(replaced, true));
    const at = order.indexOf("gfx906");
    expect(after.length).toBe(3);
    after.forEach((line, i) => {
      if (i !== at) expect(line).toBe(before[i]);
    });
    // ImageStart..ImageEnd is the image itself (LLVM 22's wrapper points inside its offload binary).
    expect(after[at]).toBe(`${payload.length} ${fnv1a(payload)}`);
    expect(after[at]).not.toBe(before[at]);
  });
});

/** FNV-1a 64 as the stand-in logs it (16 hex digits). */
function fnv1a(bytes: Uint8Array): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of bytes) hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * 0x100000001b3n);
  return hash.toString(16).padStart(16, "0");
}
