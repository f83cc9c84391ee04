// offload-kit on what LLVM 22 writes for HIP: `clang-22 --offload-new-driver -fgpu-rdc` embeds an offload
// binary whose HIP kind is 4 (llvm PR #135809; 19 wrote 3). `ls` must call it hip, IDs must start `hip-`, and
// `check --kind=hip` must judge it as HIP (it used to see producer none and answer a false FAIL). The same
// image packed by clang-offload-packager-19 (kind 3) must read the same. Objects are built here by the tools.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runOffloadBinary } from "../../src/cli/offload-binary.js";
import { runPackager } from "../../src/cli/offload-packager.js";
import { hasNative, runNative } from "../native.js";
import { HANG_MS } from "../limits.js";
import { runInDir, scratchDir } from "./harness.js";

const CLANG = "clang-22";
const STANDIN = join(fileURLToPath(new URL("../fixtures/hip-standin/", import.meta.url)));
const kit = (dir: string, ...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));

describe.skipIf(!hasNative(CLANG))("offload-kit on a clang-22 --offload-new-driver -fgpu-rdc HIP object", () => {
  const dir = scratchDir("offload-kit-hip22-");
  beforeAll(() => {
    const run = runNative(CLANG, ["-x", "hip", "--offload-arch=gfx90a", "--offload-new-driver", "-fgpu-rdc", "-nogpulib", "-nogpuinc", `-I${STANDIN}`,
      "-c", join(STANDIN, "kernels_a.hip"), "-o", "k22.o"], { cwd: dir });
    if (run.status !== 0) throw new Error(`${CLANG}: ${run.stderr}`);
  }, HANG_MS);

  it("ls says hip, and the embedded kind is 22's 4", async () => {
    expect((await kit(dir, "ls", "k22.o")).stdout.toString()).toBe("k22.o: 1 offload image: gfx90a\n");
    const run = await kit(dir, "ls", "-v", "k22.o");
    expect(run.code).toBe(0);
    expect(run.stdout.toString()).toMatch(/\n +0 +0x[0-9a-f]+ +\d+ +bc +hip +amdgcn-amd-amdhsa +gfx90a *\n/);
    const json = JSON.parse((await kit(dir, "ls", "--json", "k22.o")).stdout.toString());
    const [image] = json.files[0].offloadBinaries[0].images;
    expect(image).toMatchObject({ offloadKind: 4, version: 1, offloadKindName: "hip", arch: "gfx90a" });
  });

  it("check --kind=hip passes on gfx90a and fails only for the processor on gfx1100", async () => {
    const ok = await kit(dir, "check", "-v", "--gpu=gfx90a", "--kind=hip", "k22.o");
    expect(ok.stdout.toString()).toContain("hip-amdgcn-amd-amdhsa--gfx90a");
    expect(ok.code).toBe(0);
    const other = await kit(dir, "check", "-v", "--gpu=gfx1100", "--kind=hip", "k22.o");
    expect(other.code).toBe(1);
    expect(other.stdout.toString()).toContain("processor 'gfx90a' is not 'gfx1100'");
    const openmp = await kit(dir, "check", "--gpu=gfx90a", "--kind=openmp", "k22.o");
    expect(openmp.code).toBe(1);
  });

  it("the image extracted and repacked the 19 way (kind 3) and the 22 way (kind 4) both list as hip", async () => {
    const extracted = await runInDir(dir, (io) => runOffloadBinary("llvm-offload-binary-22", ["k22.o", "--image=file=dev.bc,kind=hip"], io));
    expect(extracted.code).toBe(0);
    const image = "--image=file=dev.bc,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip";
    expect((await runInDir(dir, (io) => runPackager("clang-offload-packager-19", ["-o", "p19.bin", image], io))).code).toBe(0);
    expect((await runInDir(dir, (io) => runOffloadBinary("llvm-offload-binary-22", ["-o", "p22.bin", image], io))).code).toBe(0);
    expect(readFileSync(join(dir, "p19.bin"))[34]).toBe(3);
    expect(readFileSync(join(dir, "p22.bin"))[34]).toBe(4);
    const listed = (await kit(dir, "ls", "-v", "p19.bin", "p22.bin")).stdout.toString();
    expect(listed.match(/ bc +hip +amdgcn-amd-amdhsa +gfx90a/g)).toHaveLength(2);
    writeFileSync(join(dir, "both.bin"), Buffer.concat([readFileSync(join(dir, "p19.bin")), readFileSync(join(dir, "p22.bin"))]));
    const check = await kit(dir, "check", "-v", "--gpu=gfx90a", "--kind=hip", "both.bin");
    expect(check.code).toBe(0);
    expect(check.stdout.toString()).not.toContain("none-amdgcn");
  });
});
