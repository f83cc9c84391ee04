/**
 * offload-bundler -type=o (and -type=a holding fat objects) against clang-offload-bundler 19, which runs
 * llvm-objcopy-19 for these (spec bundler.md §7–8). Host objects from clang-19 -c for several targets, device
 * payloads of random bytes or device objects, a HIP -fgpu-rdc fat object made by clang-19 itself; generated
 * -targets lists (host anywhere, features, hip/hipv4/openmp), then bundling, -list, unbundling every entry and
 * missing ones, -###, and archives of fat objects unbundled to device and host targets. Exit code, stdout,
 * stderr (argv0 aside) and every file must match, except the documented differences asserted below.
 *
 * OFFLOAD_KIT_OBJECT_CASES sets the number of generated bundling cases (default 40).
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBundler } from "../../src/cli/offload-bundler.js";
import { runInDir } from "../cli/harness.js";
import { rng } from "../engines.js";
import { hasNative, nativeTool, runNative } from "../native.js";
import { HANG_MS } from "../limits.js";

const NATIVE = "clang-offload-bundler-19";
const CASES = Number(process.env.OFFLOAD_KIT_OBJECT_CASES ?? 40);
const available = hasNative(NATIVE) && hasNative("clang-19") && hasNative("llvm-objcopy-19") && hasNative("llvm-ar-19");

const HOST_TRIPLES = ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu", "i386-pc-linux-gnu", "powerpc64-unknown-linux-gnu", "riscv64-unknown-linux-gnu"];
const DEVICES = [
  "hip-amdgcn-amd-amdhsa--gfx906", "hip-amdgcn-amd-amdhsa--gfx90a:xnack-", "hipv4-amdgcn-amd-amdhsa--gfx908:sramecc+:xnack+",
  "openmp-amdgcn-amd-amdhsa--gfx1030", "openmp-nvptx64-nvidia-cuda--sm_70", "hip-amdgcn-amd-amdhsa--gfx1100",
];

const root = mkdtempSync(join(tmpdir(), "offload-kit-objdiff-"));
const template = join(root, "template");
afterAll(() => rmSync(root, { recursive: true, force: true }));

function must(name: string, args: string[], cwd: string): void {
  const r = name === NATIVE ? runBundler19(args, cwd) : runNative(name, args, { cwd });
  if (r.status !== 0) throw new Error(`fixture command failed: ${name} ${args.join(" ")}: ${r.stderr}`);
}

const HIP_SOURCE = `typedef unsigned long size_t;
struct dim3 { unsigned x, y, z; };
extern "C" int hipLaunchKernel(const void*, dim3, dim3, void**, size_t, void*);
extern "C" int __hipPushCallConfiguration(dim3, dim3, size_t, void*);
extern "C" int __hipPopCallConfiguration(dim3*, dim3*, size_t*, void*);
__attribute__((global)) void kern(int *p) { p[0] = 1; }
__attribute__((device)) int dev_fn(int x) { return x + 1; }
int host_fn(int x) { return x * 2; }
`;

/** Inputs every case starts from: host objects per triple, a device object, payloads, a clang-made fat object. */
function prepare(): void {
  mkdirSync(template, { recursive: true });
  writeFileSync(join(template, "h.c"), "int counter = 1; static int table[64];\nint bump(int x) { return counter += x + table[x & 63]; }\n");
  HOST_TRIPLES.forEach((triple, i) => must("clang-19", [`--target=${triple}`, "-O1", "-c", "h.c", "-o", `host${i}.o`], template));
  must("clang-19", ["--target=amdgcn-amd-amdhsa", "-mcpu=gfx906", "-nogpulib", "-O1", "-c", "h.c", "-o", "dev.o"], template);
  const rand = rng(1919);
  for (let i = 0; i < 4; i++) {
    const bytes = new Uint8Array(Math.floor(rand() * 3000));
    for (let k = 0; k < bytes.length; k++) bytes[k] = Math.floor(rand() * 256);
    writeFileSync(join(template, `p${i}.bin`), bytes);
  }
  writeFileSync(join(template, "plain.txt"), "not an object");
  writeFileSync(join(template, "k.hip"), HIP_SOURCE);
  must("clang-19", ["-c", "-x", "hip", "--offload-arch=gfx906", "--offload-arch=gfx90a:xnack+", "-fgpu-rdc", "-nogpulib", "-nogpuinc", "k.hip", "-o", "hipfat.o"], template);
}

interface Side { status: number | null; stdout: string; stderr: string; files: Map<string, Buffer> }

function snapshot(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const name of readdirSync(dir).sort()) files.set(name, readFileSync(join(dir, name)));
  return files;
}

/**
 * The bundler runs the llvm-objcopy beside the path it was started by, else the one on PATH: started as
 * /usr/bin/clang-offload-bundler-19 on Debian that is /usr/bin/llvm-objcopy, LLVM 14's (which writes other bytes,
 * e.g. sh_link 0 on .llvm_addrsig). Started from its real path, it uses LLVM 19's: the behaviour we reproduce.
 */
let realBundler: string | undefined;
function bundler19(): string {
  realBundler ??= realpathSync(nativeTool(NATIVE)!);
  return realBundler;
}

function runBundler19(args: readonly string[], cwd: string): { status: number | null; stdout: Buffer; stderr: string } {
  const r = spawnSync(bundler19(), args, { cwd, maxBuffer: 1 << 26 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString("latin1") };
}

let counter = 0;
/** Runs both tools on copies of `dir` (default: the template). */
async function compare(args: string[], dir = template): Promise<{ native: Side; ours: Side; nativeDir: string; ourDir: string }> {
  const id = ++counter;
  const nativeDir = join(root, `n${id}`);
  const ourDir = join(root, `o${id}`);
  cpSync(dir, nativeDir, { recursive: true });
  cpSync(dir, ourDir, { recursive: true });
  const n = runBundler19(args, nativeDir);
  const o = await runInDir(ourDir, (io) => runBundler("TOOL", args, io));
  return {
    native: { status: n.status, stdout: n.stdout.toString("latin1"), stderr: n.stderr.split(bundler19()).join("TOOL"), files: snapshot(nativeDir) },
    ours: { status: o.code, stdout: o.stdout.toString("latin1"), stderr: o.stderr, files: snapshot(ourDir) },
    nativeDir, ourDir,
  };
}

function expectSame(c: { native: Side; ours: Side }, label: string): void {
  expect({ label, stderr: c.ours.stderr, stdout: c.ours.stdout, status: c.ours.status })
    .toEqual({ label, stderr: c.native.stderr, stdout: c.native.stdout, status: c.native.status });
  if (c.native.status === 0) {
    expect([...c.ours.files.keys()], label).toEqual([...c.native.files.keys()]);
    for (const [name, bytes] of c.native.files) expect(c.ours.files.get(name)?.equals(bytes), `${label}: ${name}`).toBe(true);
  }
}

interface Generated { readonly targets: string[]; readonly inputs: string[]; readonly hostTriple: number }

function generate(rand: () => number): Generated {
  const hostTriple = Math.floor(rand() * HOST_TRIPLES.length);
  const devices = [...DEVICES].sort(() => rand() - 0.5).slice(0, Math.floor(rand() * 4));
  const targets = [...devices];
  const hostAt = Math.floor(rand() * (targets.length + 1));
  targets.splice(hostAt, 0, `host-${HOST_TRIPLES[hostTriple]}`);
  const inputs = targets.map((target, i) => i === hostAt ? `host${hostTriple}.o` : rand() < 0.25 ? "dev.o" : `p${Math.floor(rand() * 4)}.bin`);
  return { targets, inputs, hostTriple };
}

describe.skipIf(!available)("offload-bundler -type=o vs clang-offload-bundler 19", () => {
  beforeAll(prepare, 120_000);

  it(`bundles, lists and unbundles ${CASES} generated fat objects identically`, { timeout: HANG_MS }, async () => {
    const rand = rng(4242);
    let unbundled = 0;
    for (let n = 0; n < CASES; n++) {
      const g = generate(rand);
      const bundleArgs = ["-type=o", `-targets=${g.targets.join(",")}`, ...g.inputs.map((i) => `-input=${i}`), "-output=fat.o"];
      const bundled = await compare(bundleArgs);
      expectSame(bundled, `bundle ${n}: ${bundleArgs.join(" ")}`);
      expect(bundled.native.status).toBe(0);
      const fatDir = bundled.nativeDir;
      expectSame(await compare(["-type=o", "-list", "-input=fat.o"], fatDir), `list ${n}`);
      // Every entry alone, then a random pair with one target that is not there.
      for (const target of g.targets) {
        expectSame(await compare(["-type=o", "-unbundle", `-targets=${target}`, "-input=fat.o", "-output=out"], fatDir), `unbundle ${n} ${target}`);
        unbundled++;
      }
      const missing = DEVICES.find((d) => !g.targets.includes(d))!;
      const pair = [g.targets[Math.floor(rand() * g.targets.length)]!, missing];
      const allow = rand() < 0.5 ? ["-allow-missing-bundles"] : [];
      expectSame(await compare(["-type=o", "-unbundle", ...allow, `-targets=${pair.join(",")}`, "-input=fat.o", "-output=o1", "-output=o2"], fatDir),
        `unbundle ${n} ${pair.join(",")} ${allow.join("")}`);
    }
    expect(unbundled).toBeGreaterThan(CASES);
  });

  it("reads the fat object clang-19 -fgpu-rdc makes, entry by entry", async () => {
    const listed = await compare(["-type=o", "-list", "-input=hipfat.o"]);
    expectSame(listed, "list hipfat.o");
    const ids = listed.native.stdout.trim().split("\n");
    expect(ids).toHaveLength(3);
    for (const id of ids) expectSame(await compare(["-type=o", "-unbundle", `-targets=${id}`, "-input=hipfat.o", "-output=out"]), `unbundle hipfat.o ${id}`);
    expectSame(await compare(["-type=o", "-unbundle", `-targets=${ids.join(",")}`, "-input=hipfat.o", "-output=a", "-output=b", "-output=c"]), "all of hipfat.o");
  });

  it("a plain object: missing bundles, and the whole input for the host when allowed", async () => {
    for (const allow of [[], ["-allow-missing-bundles"]]) {
      expectSame(await compare(["-type=o", "-unbundle", ...allow, `-targets=host-${HOST_TRIPLES[0]},${DEVICES[0]}`, "-input=host0.o", "-output=h", "-output=d"]), `plain ${allow}`);
    }
    expectSame(await compare(["-type=o", "-list", "-input=host0.o"]), "list plain");
  });

  it("-compress and -bundle-align do not apply to object files", async () => {
    for (const extra of [["-compress"], ["-bundle-align=4096"]]) {
      expectSame(await compare(["-type=o", ...extra, `-targets=host-${HOST_TRIPLES[1]},${DEVICES[0]}`, "-input=host1.o", "-input=p0.bin", "-output=fat.o"]), `bundle ${extra}`);
    }
  });

  it("a non-object host input keeps the binary format", async () => {
    expectSame(await compare(["-type=o", `-targets=host-${HOST_TRIPLES[0]},${DEVICES[0]}`, "-input=plain.txt", "-input=dev.o", "-output=fat.o"]), "non-object host");
  });

  it("-### prints the llvm-objcopy command lines and leaves the output empty (documented: tool path, temp name)", async () => {
    const targets = `host-${HOST_TRIPLES[0]},${DEVICES[0]}`;
    const mask = (text: string) => text.replace(/"[^"]*llvm-objcopy"/g, '"llvm-objcopy"').replace(/clang-offload-bundler-[0-9a-f]+\.tmp/g, "clang-offload-bundler-XXXXXX.tmp")
      .replace(/"\/[^"]*\/(clang-offload-bundler-XXXXXX\.tmp)"/g, '"TMP/$1"').replace(/=\/[^"]*\/(clang-offload-bundler-XXXXXX\.tmp)"/g, '=TMP/$1"');
    const bundled = await compare(["-type=o", "-###", `-targets=${targets}`, "-input=host0.o", "-input=p1.bin", "-output=fat.o"]);
    expect(bundled.ours.status).toBe(0);
    expect(bundled.native.status).toBe(0);
    expect(mask(bundled.ours.stderr)).toBe(mask(bundled.native.stderr));
    expect(bundled.ours.files.get("fat.o")?.length).toBe(0);
    expect(bundled.native.files.get("fat.o")?.length).toBe(0);
    must(NATIVE, ["-type=o", `-targets=${targets}`, "-input=host0.o", "-input=p1.bin", "-output=fat.o"], bundled.nativeDir);
    const unbundled = await compare(["-type=o", "-###", "-unbundle", `-targets=${targets}`, "-input=fat.o", "-output=h", "-output=d"], bundled.nativeDir);
    expect(mask(unbundled.ours.stderr)).toBe(mask(unbundled.native.stderr));
    expect(unbundled.ours.stderr).toContain("--remove-section=__CLANG_OFFLOAD_BUNDLE__.*");
    for (const side of [unbundled.ours, unbundled.native]) {
      expect(side.status).toBe(0);
      expect(side.files.get("h")?.length).toBe(0);
      expect(side.files.get("d")?.equals(readFileSync(join(template, "p1.bin")))).toBe(true);
    }
  });

  it("no host target with an object first input: an error, where the native tool dies of SIGSEGV (documented)", async () => {
    const c = await compare(["-type=o", `-targets=${DEVICES[0]},hip-amdgcn-amd-amdhsa--gfx1100`, "-input=host0.o", "-input=p0.bin", "-output=fat.o"]);
    expect(c.native.status).not.toBe(0);
    expect(c.native.status).not.toBe(1);
    expect(c.ours.status).toBe(1);
    expect(c.ours.stderr).toBe("TOOL: error: bundling into an object file needs a host target (the first input is an object file and no host target is given)\n");
    expect(c.ours.files.has("fat.o")).toBe(false);
  });

  it("unbundles archives of fat objects to device and host targets (host members without bundle sections)", async () => {
    const dir = join(root, "archive");
    cpSync(template, dir, { recursive: true });
    must(NATIVE, ["-type=o", `-targets=host-${HOST_TRIPLES[0]},${DEVICES[0]},${DEVICES[1]}`, "-input=host0.o", "-input=dev.o", "-input=p2.bin", "-output=fat1.o"], dir);
    must(NATIVE, ["-type=o", `-targets=${DEVICES[0]},host-${HOST_TRIPLES[0]}`, "-input=p3.bin", "-input=host0.o", "-output=fat2.o"], dir);
    must("llvm-ar-19", ["rc", "lib.a", "fat1.o", "fat2.o", "hipfat.o", "host1.o"], dir);
    must("llvm-ar-19", ["rcT", "thin.a", "fat1.o", "hipfat.o"], dir);
    const requests = [
      `host-${HOST_TRIPLES[0]}`, "host-x86_64-pc-linux-gnu", DEVICES[0]!, DEVICES[1]!, "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
      `host-${HOST_TRIPLES[0]},${DEVICES[0]}`,
    ];
    for (const archive of ["lib.a", "thin.a"]) {
      for (const request of requests) {
        const outputs = request.split(",").map((_, i) => `-output=out${i}.a`);
        expectSame(await compare(["-type=a", "-unbundle", "-allow-missing-bundles", `-targets=${request}`, `-input=${archive}`, ...outputs], dir), `${archive} ${request}`);
      }
    }
  });
});
