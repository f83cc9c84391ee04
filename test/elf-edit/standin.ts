/**
 * Builds and runs the stand-in HIP runtime (test/fixtures/hip-standin/): the preloaded library that
 * records every fat binary a program's constructors register, a dlopen loader, and HIP programs built
 * here with clang-19. Everything lives in one scratch folder per test file.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { nativeTool } from "../native.js";
import { HANG_MS } from "../limits.js";

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "hip-standin");
export const HIP_RUNTIME = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";
export const ARCHS = ["gfx906", "gfx90a", "gfx1100"];

/** The tools these tests need; under OFFLOAD_KIT_REQUIRE_NATIVE=1 a missing one throws (nativeTool). */
export function standinTools(): boolean {
  const tools = ["gcc", "clang-19", "ld.lld-19", "ld.bfd", "nm", "strip", "llvm-strip-19", "llvm-readelf-19", "eu-elflint"];
  const missing = tools.filter((t) => nativeTool(t) === undefined);
  const runtime = existsSync(HIP_RUNTIME) && existsSync("/usr/include/zstd.h");
  if (!runtime && process.env.OFFLOAD_KIT_REQUIRE_NATIVE === "1") throw new Error(`${HIP_RUNTIME} (libamdhip64-5) and zstd.h (libzstd-dev) are required`);
  return missing.length === 0 && runtime;
}

/** A HIP program the tests build: two translation units, linked as a library or an executable. */
export interface Case {
  readonly name: string;
  /** Per translation unit: extra compile flags (a: kernels_a.hip, b: kernels_b.hip). */
  readonly a: readonly string[];
  readonly b: readonly string[];
  readonly link: readonly string[];
  readonly executable: boolean;
}

export const CASES: readonly Case[] = [
  { name: "shared library, lld", a: ["-fPIC"], b: ["-fPIC"], link: ["-shared", "-fuse-ld=lld"], executable: false },
  { name: "shared library, GNU ld", a: ["-fPIC"], b: ["-fPIC"], link: ["-shared", "-fuse-ld=bfd"], executable: false },
  { name: "shared library, lld, RELR", a: ["-fPIC"], b: ["-fPIC"], link: ["-shared", "-fuse-ld=lld", "-Wl,-z,pack-relative-relocs"], executable: false },
  { name: "shared library, lld, -fgpu-rdc", a: ["-fPIC", "-fgpu-rdc"], b: ["-fPIC", "-fgpu-rdc"], link: ["-shared", "-fuse-ld=lld", "-fgpu-rdc"], executable: false },
  { name: "shared library, GNU ld, one CCOB", a: ["-fPIC"], b: ["-fPIC", "--offload-compress"], link: ["-shared", "-fuse-ld=bfd"], executable: false },
  { name: "PIE executable, lld", a: ["-fPIC"], b: ["-fPIC"], link: ["-pie", "-fuse-ld=lld"], executable: true },
  { name: "PIE executable, GNU ld, -fgpu-rdc", a: ["-fPIC", "-fgpu-rdc"], b: ["-fPIC", "-fgpu-rdc"], link: ["-pie", "-fuse-ld=bfd", "-fgpu-rdc"], executable: true },
  { name: "non-PIE executable, GNU ld", a: ["-fno-pic"], b: ["-fno-pic", "--offload-compress"], link: ["-no-pie", "-fuse-ld=bfd"], executable: true },
  { name: "non-PIE executable, lld, -fgpu-rdc", a: ["-fno-pic", "-fgpu-rdc"], b: ["-fno-pic", "-fgpu-rdc"], link: ["-no-pie", "-fuse-ld=lld", "-fgpu-rdc"], executable: true },
];

export class Workshop {
  readonly dir = mkdtempSync(join(tmpdir(), "offload-kit-elf-edit-"));
  readonly standin = join(this.dir, "standin.so");
  readonly loader = join(this.dir, "loader");
  private logs = 0;

  constructor() {
    execFileSync("gcc", ["-shared", "-fPIC", "-O1", "-o", this.standin, join(FIXTURES, "standin.c"), "-lzstd"]);
    execFileSync("gcc", ["-o", this.loader, join(FIXTURES, "loader.c"), "-ldl"]);
    // clang's HIP driver links -lamdhip64; Debian ships only the versioned name.
    symlinkSync(HIP_RUNTIME, join(this.dir, "libamdhip64.so"));
  }

  /** Compiles a .hip file to an object. */
  compile(source: string, output: string, flags: readonly string[]): string {
    const out = join(this.dir, output);
    execFileSync("clang-19", [
      "-x", "hip", ...ARCHS.map((a) => `--offload-arch=${a}`), "-nogpulib", "-nogpuinc", "-I", FIXTURES, "-O1", ...flags,
      "-c", join(FIXTURES, source), "-o", out,
    ], { stdio: "pipe" });
    return out;
  }

  /** Links objects (and main.c for an executable) with the given linker. */
  link(objects: readonly string[], output: string, flags: readonly string[]): string {
    const out = join(this.dir, output);
    execFileSync("clang-19", [
      "--hip-link", ...ARCHS.map((a) => `--offload-arch=${a}`), "-nogpulib", ...flags, ...objects, "-L", this.dir, "-lamdhip64", "-o", out,
    ], { stdio: "pipe" });
    return out;
  }

  /** Builds a case (kernels_a.hip, kernels_b.hip and, for an executable, main.c) as `<tag>` or `<tag>.so`. */
  program(c: Case, tag: string): string {
    const a = this.compile("kernels_a.hip", `${tag}-a.o`, c.a);
    const b = this.compile("kernels_b.hip", `${tag}-b.o`, c.b);
    const objects = [a, b];
    if (c.executable) {
      const main = join(this.dir, `${tag}-main.o`);
      run("clang-19", ["-c", ...(c.link.includes("-no-pie") ? ["-fno-pic"] : ["-fPIC"]), join(FIXTURES, "main.c"), "-o", main]);
      objects.push(main);
    }
    return this.link(objects, `${tag}${c.executable ? "" : ".so"}`, c.link);
  }

  /** What the stand-in runtime records when the program runs or the library is dlopened. */
  registrations(file: string, executable: boolean): string {
    const log = join(this.dir, `registrations-${++this.logs}.log`);
    const run = spawnSync(executable ? file : this.loader, executable ? [] : [file], {
      env: { ...process.env, LD_PRELOAD: this.standin, HIP_STANDIN_LOG: log },
      timeout: HANG_MS,
      encoding: "latin1",
    });
    if (run.status !== 0) throw new Error(`${file} failed (${run.status ?? run.signal}): ${run.stderr}`);
    return existsSync(log) ? readFileSync(log, "latin1") : "";
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * The registration log with only the entries `keep` accepts in plain fat binaries, and in CCOBs too when
 * `inCcobs` (what `offload-kit prune` does; the ELF editor's own tests keep CCOBs as they are).
 */
export function keepEntries(log: string, keep: (id: string) => boolean, inCcobs = false): string {
  let compressed = false;
  return log
    .split("\n")
    .filter((line) => {
      if (line.startsWith("fatbin ")) compressed = line.includes(" ccob ") && !inCcobs;
      const entry = /^ {2}entry (\S+) /.exec(line);
      return entry === null || compressed || keep(entry[1]);
    })
    .join("\n");
}

export function run(tool: string, args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(tool, args, { encoding: "latin1", maxBuffer: 1 << 30, timeout: HANG_MS });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
