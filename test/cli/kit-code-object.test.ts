// Standalone AMDGPU code objects (.hsaco, Tensile .co) in ls, sizes, check and extract: each is one entry of
// its own format, the whole file, in a folder and in an archive; a host ELF object beside them stays "no offload code".
import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { hasNative, runNative } from "../native.js";
import { runInDir, scratchDir } from "./harness.js";

const NATIVE = hasNative("clang-19") && hasNative("llvm-ar-19") && hasNative("tar");

describe.runIf(NATIVE)("offload-kit on standalone AMDGPU code objects", () => {
  const dir = scratchDir("offload-kit-kit-code-object-");
  const kit = (...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
  const sizeOf = (name: string) => readFileSync(join(dir, name)).length;

  beforeAll(() => {
    const hip = ["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output", "-nogpulib", "-nogpuinc", "-"];
    const source = new TextEncoder().encode("__attribute__((global)) void k(int *p) { p[0] = 1; }\n");
    mkdirSync(join(dir, "lib"));
    const build = (args: string[], input?: Uint8Array) => {
      const run = runNative("clang-19", args, { cwd: dir, input });
      expect(run.status, run.stderr).toBe(0);
    };
    build([...hip, "--offload-arch=gfx90a:xnack+", "-o", "lib/on.hsaco"], source);
    build([...hip, "--offload-arch=gfx90a:xnack-", "-mcode-object-version=4", "-o", "lib/off.co"], source);
    build([...hip, "--offload-arch=gfx1030", "-o", "lib/navi.hsaco"], source);
    // A host object: an ELF file that is not EM_AMDGPU, which holds no device code.
    build(["-x", "c", "-c", "-", "-o", "lib/host.o"], new TextEncoder().encode("int host(void) { return 1; }\n"));
    const ar = runNative("llvm-ar-19", ["rc", "objects.a", "lib/navi.hsaco", "lib/host.o"], { cwd: dir });
    expect(ar.status, ar.stderr).toBe(0);
    const tar = runNative("tar", ["cf", "lib.tar", "lib"], { cwd: dir });
    expect(tar.status, tar.stderr).toBe(0);
  });

  it("ls lists each code object as one entry spanning the file, with its target ID and header", async () => {
    const summary = (await kit("ls", "lib")).stdout.toString();
    expect(summary).toContain("lib/on.hsaco: 1 code object: gfx90a:xnack+\n");
    const run = await kit("ls", "-v", "lib");
    expect(run.code).toBe(0);
    const text = run.stdout.toString();
    expect(text).toContain(`lib/on.hsaco: AMDGPU code object v5 (linked, ET_DYN) at 0x0, ${sizeOf("lib/on.hsaco")} bytes, 1 entry\n`);
    expect(text).toContain(`lib/off.co: AMDGPU code object v4 (linked, ET_DYN) at 0x0, ${sizeOf("lib/off.co")} bytes, 1 entry\n`);
    expect(text).toContain("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-\n");
    expect(text).toContain("in folders: 4 files looked at, 3 with offload code, 1 skipped (no offload code)");
    expect(text).not.toContain("host.o");

    const json = JSON.parse((await kit("ls", "--json", "lib/on.hsaco")).stdout.toString());
    expect(json.files[0].bundles).toEqual([{
      index: 0, format: "code-object", offset: 0, size: sizeOf("lib/on.hsaco"), align: 4096,
      codeObject: expect.objectContaining({ codeObjectVersion: 5, processor: "gfx90a", xnack: "on", sramecc: "any", targetId: "gfx90a:xnack+" }),
      entries: [{ id: "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", offset: 0, size: sizeOf("lib/on.hsaco"), align: 4096 }],
    }]);
  });

  it("a host ELF object is reported exactly as before: no offload code", async () => {
    const json = JSON.parse((await kit("ls", "--json", "lib/host.o")).stdout.toString());
    expect(json.files[0]).toMatchObject({ container: "elf", bundles: [], offloadBinaries: [], problems: [] });
  });

  it("sizes counts the whole file of each code object, per target and per processor", async () => {
    const run = await kit("sizes", "--json", "lib");
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout.toString());
    const total = sizeOf("lib/on.hsaco") + sizeOf("lib/off.co") + sizeOf("lib/navi.hsaco");
    expect(json.total).toMatchObject({ files: 3, entries: 3, bytes: total });
    expect(json.total.processors).toEqual(expect.arrayContaining([
      { id: "gfx90a", entries: 2, bytes: sizeOf("lib/on.hsaco") + sizeOf("lib/off.co") },
      { id: "gfx1030", entries: 1, bytes: sizeOf("lib/navi.hsaco") },
    ]));
  });

  it("a package's code objects are counted as a folder's are", async () => {
    const json = JSON.parse((await kit("sizes", "--json", "lib.tar")).stdout.toString());
    expect(json.total).toMatchObject({ entries: 3, bytes: sizeOf("lib/on.hsaco") + sizeOf("lib/off.co") + sizeOf("lib/navi.hsaco") });
  });

  it("check --gpu judges each code object by its target ID", async () => {
    const off = await kit("check", "--json", "--gpu=gfx90a:xnack-", "lib/off.co", "lib/on.hsaco", "lib/navi.hsaco");
    expect(off.code).toBe(1);
    const inputs = JSON.parse(off.stdout.toString()).inputs as { path: string; kind: string; ok: boolean; entries: { verdict: string }[] }[];
    expect(inputs.map((i) => [i.path, i.kind, i.ok, i.entries.map((e) => e.verdict)])).toEqual([
      ["lib/off.co", "code object", true, ["loadable"]],
      ["lib/on.hsaco", "code object", false, ["not-loadable"]],
      ["lib/navi.hsaco", "code object", false, ["not-loadable"]],
    ]);
    const on = await kit("check", "--gpu=gfx90a:xnack+", "lib/on.hsaco");
    expect(on.code).toBe(0);
    expect(on.stdout.toString()).toContain("lib/on.hsaco: code object, 1 device entry, 1 loadable on gfx90a:xnack+");
  });

  it("extract writes each code object whole, and finds one inside an archive", async () => {
    const run = await kit("extract", "--out-dir=out", "lib", "objects.a");
    expect(run.code, run.stderr).toBe(0);
    const out = readdirSync(join(dir, "out")).sort();
    expect(out).toEqual([
      "navi.hsaco-0-hipv4-amdgcn-amd-amdhsa--gfx1030",
      "objects.a-0-hipv4-amdgcn-amd-amdhsa--gfx1030",
      "off.co-0-hipv4-amdgcn-amd-amdhsa--gfx90a_xnack-",
      "on.hsaco-0-hipv4-amdgcn-amd-amdhsa--gfx90a_xnack+",
    ]);
    expect(readFileSync(join(dir, "out", "on.hsaco-0-hipv4-amdgcn-amd-amdhsa--gfx90a_xnack+"))).toEqual(readFileSync(join(dir, "lib/on.hsaco")));
    expect(readFileSync(join(dir, "out", "objects.a-0-hipv4-amdgcn-amd-amdhsa--gfx1030"))).toEqual(readFileSync(join(dir, "lib/navi.hsaco")));
  });
});
