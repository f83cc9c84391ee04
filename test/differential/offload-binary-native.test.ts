// offload-binary against llvm-offload-binary-22: the same argument vectors in twin directories, with identical
// outputs (every file, byte for byte), stdout, stderr (argv[0] set to the native name on both sides) and exit
// codes. Follows packager-native.test.ts (the 19 packager); here the points are 22's rules: HIP written and
// matched as 4, sycl as 8, only 'file' required, and binaries written by the 19 packager (HIP 3) read as 22 reads
// them. Also the option map order 22 uses to break ties between suggestions.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runOffloadBinary } from "../../src/cli/offload-binary.js";
import { hasNative, runNative } from "../native.js";
import { twinDirs } from "./twin-dirs.js";

const TOOL = "llvm-offload-binary-22";
const PACKAGER_19 = "clang-offload-packager-19";
const CLANG = "clang-22";

const INPUTS: Record<string, Uint8Array> = {
  "a.o": new TextEncoder().encode("IMG1"),
  "b.bc": new TextEncoder().encode("IMG2xx"),
  "k.s": new TextEncoder().encode("PTX"),
  "n.elf": new TextEncoder().encode("NONE"),
  "c.cubin": new TextEncoder().encode("CUBIN"),
  "f.fatbin": new TextEncoder().encode("FAT"),
  "empty.o": new Uint8Array(0),
};

const { freshDir, ours, native } = twinDirs(TOOL, INPUTS, runOffloadBinary);

describe.skipIf(!hasNative(TOOL))("offload-binary vs llvm-offload-binary-22", () => {
  const PACKAGING: string[][] = [
    ["-o", "m.bin", "--image=file=a.o,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip", "--image=file=b.bc,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda",
      "--image=file=n.elf,triple=spir64,kind=sycl", "--image=file=k.s,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=openmp"],
    // Offload kinds as 22 numbers them: hip 4, sycl 8; unknown text, repeated kinds and case are none.
    ...["openmp", "cuda", "hip", "sycl", "HIP", "hip,kind=cuda", "foo", ""].map((k) => ["-o", "k.bin", `--image=file=a.o,triple=t,kind=${k}`]),
    ...["k.s", "c.cubin", "f.fatbin", "n.elf", "empty.o"].map((f) => ["-o", "k.bin", `--image=file=${f},triple=t,kind=hip`]),
    ["-o", "r.bin", "--image=file=a.o,triple=t,arch=x,arch=y,arch,kind=hip"],
    ["-o", "r.bin", "--image=file=a.o,triple=amdgcn-amd-amdhsa,arch=gfx90a:xnack+,feature=+xnack,kind=hip"],
    ["-o", "f.bin", "--image=file=a.o,file=b.bc,triple=t,arch=a,kind=hip"],
    // 22 needs only 'file': no triple is fine (19 refuses it).
    ["-o", "x.bin", "--image=file=a.o"],
    ["-o", "x.bin", "--image=file=a.o,kind=hip,arch=gfx90a"],
    ["-o", "e.bin"],
    // Errors.
    ["-o", "x.bin", "--image=triple=t"],
    ["-o", "x.bin", "--image=file=a.o,triple=t", "--image=arch=a"],
    ["-o", "x.bin", "--image=file=missing.o,triple=t"],
    ["-o", "x.bin", "--image=file=sub,triple=t"],
    ["-o", "nodir/x.bin", "--image=file=a.o,triple=t"],
    ["-o", "x.bin", "in.bin"],
    ["-o"],
    ["--imag=file=a.o"],
    ["--bogus"],
    [],
    ["--help"],
    ["-h"],
  ];

  it.each(PACKAGING.map((args) => [args.join(" "), args]))("packages: %s", async (_name, args) => {
    expect(await ours(args)).toEqual(native(args));
  });

  const made: Record<string, Uint8Array> = {};
  beforeAll(() => {
    const dir = freshDir();
    const run = (tool: string, args: string[]) => {
      const r = runNative(tool, args, { cwd: dir });
      if (r.status !== 0) throw new Error(`${tool} ${args.join(" ")}: ${r.stderr}`);
    };
    const images = ["--image=file=a.o,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip", "--image=file=b.bc,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda",
      "--image=file=n.elf,triple=spir64,arch=pvc,kind=sycl", "--image=file=k.s,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=openmp"];
    run(TOOL, ["-o", "p22.bin", ...images]);
    made["p22.bin"] = readFileSync(join(dir, "p22.bin"));
    if (hasNative(PACKAGER_19)) {
      // Written by 19: HIP is 3 there, which 22 does not call hip.
      run(PACKAGER_19, ["-o", "p19.bin", ...images]);
      made["p19.bin"] = readFileSync(join(dir, "p19.bin"));
    }
    if (hasNative(CLANG)) {
      writeFileSync(join(dir, "h.c"), "int main(void) { return 0; }\n");
      run(CLANG, ["-c", "h.c", "-o", "h.o", "-Xclang", "-fembed-offload-object=p22.bin"]);
      made["h.o"] = readFileSync(join(dir, "h.o"));
    }
    const corrupt = new Uint8Array(made["p22.bin"]!);
    corrupt[4] = 2;
    made["v2.bin"] = corrupt;
  });

  const EXTRACTION: string[][] = [
    ["p22.bin", "--image=kind=hip"],
    ["p22.bin", "--image=kind=sycl"],
    ["p22.bin", "--image=kind=hip,arch=gfx90a", "--image=kind=cuda"],
    ["p22.bin", "--image=file=one.o,kind=hip"],
    ["p22.bin", "--image=file=all.a,triple=amdgcn-amd-amdhsa", "--archive"],
    ["p22.bin", "--image=kind=hip", "--archive"],
    ["p22.bin", "--image=file=same.o", "--image=file=same.o"],
    ["p19.bin", "--image=kind=hip"],
    ["p19.bin", "--image=kind=openmp"],
    ["p19.bin", "--image=triple=amdgcn-amd-amdhsa"],
    ["h.o", "--image=kind=hip"],
    ["h.o", "--image=file=cuda.bc,kind=cuda"],
    ["v2.bin", "--image=kind=hip"],
    ["a.o", "--image=kind=hip"],
    ["missing.bin", "--image=kind=hip"],
  ];

  it.each(EXTRACTION.map((args) => [args.join(" "), args]))("extracts: %s", async (_name, args) => {
    if (made[args[0]!] === undefined && !Object.hasOwn(INPUTS, args[0]!) && args[0] !== "missing.bin") return;
    expect(await ours(args, made)).toEqual(native(args, made));
  });

  it("breaks suggestion ties in 22's option map order", async () => {
    const typos = ["--hel", "--ver", "--print", "--bogus", "--x", "--ima", "--arch", "--help-lis", "--zz", "-O", "--helpp", "--versio", "--archiv",
      "--hlp", "--imgae", "--print-opt", "--help-hid", "--opt", "-oo", "--list", "--helplist", "--vers", "--ach", "--imag=a,b"];
    for (const typo of typos) expect(await ours([typo]), typo).toEqual(native([typo]));
  });
});
