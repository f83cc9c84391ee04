// `offload-kit prune` and `replace` on relocatable objects with `.llvm.offloading` (clang-22
// `--offload-new-driver -fgpu-rdc -c`: one offload binary per GPU, each LLVM bitcode), single and in an
// archive. Judges: LLVM 22's own readers (`llvm-objdump-22 --offloading`, `llvm-offload-binary-22`
// extracting the kept images byte-equal to the original's), and the link: the pruned objects, linked by
// clang-22 --offload-new-driver (clang-linker-wrapper-22 and lld-22 link the device code) with the very
// command that links the originals, give a library whose constructors register (stand-in HIP runtime,
// test/fixtures/hip-standin/) exactly the kept GPUs' code objects, byte-identical to the original link's.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARCHS, FIXTURES, Workshop, keepEntries, run, standinTools } from "../elf-edit/standin.js";
import { HANG_MS } from "../limits.js";
import { nativeTool } from "../native.js";

const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;
const TOOLS = ["clang-22", "ld.lld-22", "clang-linker-wrapper-22", "llvm-offload-binary-22", "llvm-objdump-22", "llvm-ar-22"];
const available = standinTools() && TOOLS.every((t) => nativeTool(t) !== undefined);
const keep90a = (id: string): boolean => id.startsWith("host-") || /--gfx90a(:|$)/.test(id);

function ok(...args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: HANG_MS, maxBuffer: 1 << 28 });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return r.stdout;
}

function tool(name: string, args: readonly string[]): string {
  const r = run(name, args);
  if (r.status !== 0) throw new Error(`${name} ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/** The GPUs `llvm-objdump-22 --offloading` lists in a file, in order. */
function offloadingArchs(file: string): string[] {
  return [...tool("llvm-objdump-22", ["--offloading", file]).matchAll(/^arch\s+(\S+)$/gm)].map((m) => m[1]!);
}

describe.skipIf(!available)("offload-kit on relocatable objects with .llvm.offloading (clang-22 new driver)", () => {
  let shop: Workshop;
  let objects: string[];
  let original: string;
  const path = (name: string) => join(shop.dir, name);
  /** What links the originals, unchanged for the pruned objects: every GPU named, as a build system would. */
  const link = (inputs: readonly string[], name: string): string => {
    tool("clang-22", [
      "--offload-new-driver", "-fgpu-rdc", "--hip-link", ...ARCHS.map((a) => `--offload-arch=${a}`), "-nogpulib", "-shared", "-fuse-ld=lld",
      ...inputs, "-L", shop.dir, "-lamdhip64", "-o", path(name),
    ]);
    return path(name);
  };

  beforeAll(() => {
    shop = new Workshop();
    objects = ["kernels_a.hip", "kernels_b.hip"].map((source, i) => {
      const out = path(`n${i}.o`);
      tool("clang-22", ["-x", "hip", ...ARCHS.map((a) => `--offload-arch=${a}`), "-nogpulib", "-nogpuinc", "-I", FIXTURES, "-O1", "-fPIC",
        "--offload-new-driver", "-fgpu-rdc", "-c", join(FIXTURES, source), "-o", out]);
      return out;
    });
    original = shop.registrations(link(objects, "n.so"), false);
  }, HANG_MS);
  afterAll(() => shop?.remove());

  it("prunes each object: LLVM 22 reads the kept image, byte-equal, and the link registers only gfx90a", () => {
    expect(original).toMatch(/^ {2}entry hip-amdgcn-amd-amdhsa--gfx906 /m);
    const pruned = objects.map((object, i) => {
      expect(offloadingArchs(object).sort()).toEqual([...ARCHS].sort());
      const out = path(`n${i}.p.o`);
      ok("prune", "--keep=gfx90a", object, "-o", out);
      expect(offloadingArchs(out)).toEqual(["gfx90a"]);
      for (const [file, image] of [[object, path(`n${i}.bc`)], [out, path(`n${i}.p.bc`)]]) {
        tool("llvm-offload-binary-22", [file, `--image=file=${image},triple=amdgcn-amd-amdhsa,arch=gfx90a`]);
      }
      expect(Buffer.compare(readFileSync(path(`n${i}.bc`)), readFileSync(path(`n${i}.p.bc`)))).toBe(0);
      const r = run("llvm-readelf-22", ["-a", "-W", out]);
      expect(r.stderr).toBe("");
      return out;
    });
    const after = shop.registrations(link(pruned, "n.p.so"), false);
    expect(after).toBe(keepEntries(original, keep90a, true));
    expect(after).not.toBe(original);
  });

  it("prunes an archive of them, which links with --whole-archive as the originals do", () => {
    const archive = path("n.a");
    tool("llvm-ar-22", ["rcs", archive, ...objects]);
    const pruned = path("n.p.a");
    ok("prune", "--keep=gfx90a", archive, "-o", pruned);
    expect(offloadingArchs(pruned)).toEqual(["gfx90a", "gfx90a"]);
    const whole = (a: string) => ["-Wl,--whole-archive", a, "-Wl,--no-whole-archive"];
    expect(shop.registrations(link(whole(archive), "na.so"), false)).toBe(original);
    expect(shop.registrations(link(whole(pruned), "na.p.so"), false)).toBe(keepEntries(original, keep90a, true));
  });

  it("replaces one GPU's bitcode with another build's: the link registers the code object built from it", () => {
    // kernels_a built at -O0 for gfx90a alone gives a different bitcode image for the same kernels.
    const other = path("o0.o");
    tool("clang-22", ["-x", "hip", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", "-I", FIXTURES, "-O0", "-fPIC",
      "--offload-new-driver", "-fgpu-rdc", "-c", join(FIXTURES, "kernels_a.hip"), "-o", other]);
    const image = path("o0.bc");
    tool("llvm-offload-binary-22", [other, `--image=file=${image},triple=amdgcn-amd-amdhsa,arch=gfx90a`]);
    const replaced = path("n0.x.o");
    ok("replace", "--entry=hip-amdgcn-amd-amdhsa--gfx90a", `--with=${image}`, objects[0]!, "-o", replaced);
    const check = path("n0.x.bc");
    tool("llvm-offload-binary-22", [replaced, `--image=file=${check},triple=amdgcn-amd-amdhsa,arch=gfx90a`]);
    expect(Buffer.compare(readFileSync(check), readFileSync(image))).toBe(0);
    const log = shop.registrations(link([replaced, objects[1]!], "nx.so"), false);
    const gfx90a = (text: string) => text.split("\n").filter((l) => l.startsWith("  entry hip-amdgcn-amd-amdhsa--gfx90a "));
    expect(gfx90a(log)).not.toEqual(gfx90a(original));
  });
});
