// offload-packager against clang-offload-packager-19: the same argument vectors in twin directories, with
// identical outputs (every file, byte for byte), stdout, stderr (argv[0] set to the native name on both
// sides) and exit codes. Covers the string-entry order on random key sets (DenseMap bucket order, see
// src/packager/image-args.ts), packaging, extraction from raw binaries, ELF objects and archives, and errors.
// Documented differences are asserted as such at the end.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runPackager } from "../../src/cli/offload-packager.js";
import { rng } from "../engines.js";
import { hasNative, runNative } from "../native.js";
import { HANG_MS } from "../limits.js";
import { twinDirs } from "./twin-dirs.js";

const PACKAGER = "clang-offload-packager-19";
const CLANG = "clang-19";
const AR = "llvm-ar-19";

/** Inputs every case starts from; each run gets a fresh copy of them in its own directory. */
const INPUTS: Record<string, Uint8Array> = {
  "a.o": new TextEncoder().encode("IMG1"),
  "b.bc": new TextEncoder().encode("IMG2xx"),
  "lto.o": Uint8Array.of(0x42, 0x43, 0xc0, 0xde, 1, 2, 3, 4),
  "wrapped.o": Uint8Array.of(0xde, 0xc0, 0x17, 0x0b, 0, 0, 0, 0),
  "k.s": new TextEncoder().encode("PTX"),
  "n.elf": new TextEncoder().encode("NONE"),
  "c.cubin": new TextEncoder().encode("CUBIN"),
  "f.fatbin": new TextEncoder().encode("FAT"),
  "v.spv": new TextEncoder().encode("SPIRV"),
  "upper.O": new TextEncoder().encode("UPPER"),
  ".o": new TextEncoder().encode("DOTO"),
  "noext": new TextEncoder().encode("NOEXT"),
  "empty.o": new Uint8Array(0),
};

const { freshDir, ours, native } = twinDirs(PACKAGER, INPUTS, runPackager);

describe.skipIf(!hasNative(PACKAGER))("offload-packager vs clang-offload-packager-19", () => {
  it("writes string entries in the native order for 400 random key sets", async () => {
    const next = rng(0xdecaf);
    const alphabet = "abcdefghijklmnopqrstuvwxyz_-.0123456789";
    const word = (n: number) => Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
    const vectors: string[] = [
      "file=a.o,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=openmp",
      "file=a.o,triple=t,arch=a,feature=f",
      "file=a.o,triple=t,a=1,b=2,c=3,d=4",
      "file=a.o,triple=t,d=4,c=3,b=2,a=1",
      "file=a.o,triple=t,x=1,y=2,z=3",
      "file=a.o,triple=t,arch=a,zeta=1,alpha=2,kind=openmp",
      "alpha=2,zeta=1,kind=openmp,arch=a,triple=t,file=a.o",
      "file=a.o,triple=t,arch=gfx906,q=x906,r=",
    ];
    while (vectors.length < 400) {
      const parts = ["file=a.o", `triple=${word(1 + Math.floor(next() * 20))}`];
      // Up to 60 keys: past 47 the DenseMap grows from 64 to 128 buckets.
      const count = Math.floor(next() * (vectors.length % 10 === 0 ? 60 : 10));
      for (let i = 0; i < count; i++) {
        const key = next() < 0.25 ? ["arch", "feature", "kind", "triple", "file2"][Math.floor(next() * 5)]! : word(1 + Math.floor(next() * (next() < 0.1 ? 70 : 8)));
        parts.push(next() < 0.1 ? key : `${key}=${word(Math.floor(next() * 10))}`);
      }
      for (let i = parts.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [parts[i], parts[j]] = [parts[j]!, parts[i]!];
      }
      vectors.push(parts.join(","));
    }
    let checked = 0;
    for (const image of vectors) {
      const args = ["-o", "out.bin", `--image=${image}`];
      const theirs = native(args);
      expect(await ours(args), image).toEqual(theirs);
      if (theirs.code === 0) checked++;
    }
    expect(checked).toBeGreaterThan(350);
  }, HANG_MS);

  const PACKAGING: string[][] = [
    ["-o", "m.bin", "--image=file=a.o,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=openmp", "--image=file=b.bc,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda", "--image=file=n.elf,triple=t1,arch=a1,kind=hip"],
    // Image kinds: extension (case-sensitive, last dot), bitcode magic under any name.
    ...["k.s", "c.cubin", "f.fatbin", "v.spv", "upper.O", ".o", "noext", "lto.o", "wrapped.o", "empty.o"].map((f) => ["-o", "k.bin", `--image=file=${f},triple=t`]),
    // Offload kinds: 19 knows openmp, cuda, hip (3); anything else, repeated kinds included, is none.
    ...["openmp", "cuda", "hip", "sycl", "HIP", "hip,kind=cuda", ""].map((k) => ["-o", "k.bin", `--image=file=a.o,triple=t,kind=${k}`]),
    // Repeated keys join with ','; a key without '=' is an empty value; empty pieces are keys too.
    ["-o", "r.bin", "--image=file=a.o,triple=t,arch=x,arch=y,arch"],
    ["-o", "r.bin", "--image=file=a.o,triple=t,,=v,novalue"],
    ["-o", "r.bin", "--image=file=a.o,triple=t,feature=+ptx70,feature=-sm"],
    // Several files in one image: file repeated.
    ["-o", "f.bin", "--image=file=a.o,file=b.bc,triple=t,arch=a"],
    // 'file' without '=' names no file at all: an empty output. 'file=' names the file "".
    ["-o", "e.bin", "--image=triple=t,file"],
    ["-o", "e.bin", "--image=file=,triple=t"],
    ["-o", "e.bin"],
    // Errors.
    ["-o", "x.bin", "--image=file=a.o"],
    ["-o", "x.bin", "--image=triple=t"],
    ["-o", "x.bin", "--image=file=a.o,triple=t", "--image=arch=a"],
    ["-o", "x.bin", "--image=file=missing.o,triple=t"],
    ["-o", "x.bin", "--image=file=missing.o,triple=t", "--image=arch=a"],
    ["-o", "x.bin", "--image=file=sub,triple=t"],
    ["-o", "nodir/x.bin", "--image=file=a.o,triple=t"],
    ["-o", "sub", "--image=file=a.o,triple=t"],
    ["-o", "x.bin", "in.bin"],
    [],
    ["--image=file=a.o,triple=t"],
  ];

  it.each(PACKAGING.map((args) => [args.join(" "), args]))("packages: %s", async (_name, args) => {
    expect(await ours(args)).toEqual(native(args));
  });

  // Inputs for extraction, made by the native packager (and clang / llvm-ar when present).
  const made: Record<string, Uint8Array> = {};
  beforeAll(() => {
    const dir = freshDir();
    const run = (tool: string, args: string[]) => {
      const r = runNative(tool, args, { cwd: dir });
      if (r.status !== 0) throw new Error(`${tool} ${args.join(" ")}: ${r.stderr}`);
    };
    run(PACKAGER, ["-o", "p.bin", "--image=file=a.o,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=openmp", "--image=file=b.bc,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda",
      "--image=file=n.elf,triple=t1,arch=a1,kind=hip", "--image=file=k.s,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=openmp", "--image=file=c.cubin,triple=evil/../x,arch=../../up,kind=cuda"]);
    made["p.bin"] = readFileSync(join(dir, "p.bin"));
    if (hasNative(CLANG)) {
      writeFileSync(join(dir, "h.c"), "int main(void) { return 0; }\n");
      run(CLANG, ["-c", "h.c", "-o", "h.o", "-Xclang", "-fembed-offload-object=p.bin"]);
      made["h.o"] = readFileSync(join(dir, "h.o"));
    }
    if (hasNative(AR)) {
      run(AR, ["rc", "lib.a", "p.bin", "a.o", ...(made["h.o"] ? ["h.o"] : [])]);
      made["lib.a"] = readFileSync(join(dir, "lib.a"));
    }
    const corrupt = new Uint8Array(made["p.bin"]!);
    corrupt[0x98 + 4] = 7;
    made["badversion.bin"] = corrupt;
    const truncated = made["p.bin"]!.subarray(0, 0x98 + 40);
    made["truncated.bin"] = truncated;
  });

  const EXTRACTION: string[][] = [
    ["p.bin", "--image=triple=amdgcn-amd-amdhsa"],
    ["p.bin", "--image=kind=cuda,arch=sm_70", "--image=arch=a1"],
    ["p.bin", "--image=kind=openmp,arch=gfx906"],
    ["p.bin", "--image=file=one.o,kind=openmp"],
    ["p.bin", "--image=file=all.a,kind=openmp", "--archive"],
    ["p.bin", "--image=file=none.a,kind=sycl", "--archive"],
    ["p.bin", "--image=kind=openmp", "--archive"],
    ["p.bin", "--image=arch"],
    ["p.bin", "--image=file=sub/deep.o,triple=t1"],
    ["p.bin", "--image=file=nodir/x.o,triple=t1"],
    ["p.bin"],
    ["p.bin", "--image=nomatch=1"],
    ["a.o", "--image=triple=t"],
    ["missing.bin", "--image=triple=t"],
    ["sub", "--image=triple=t"],
    ["badversion.bin", "--image=triple=t1"],
    ["truncated.bin", "--image=triple=t1"],
    ["h.o", "--image=kind=cuda,arch=sm_70"],
    ["h.o", "--image=kind=openmp"],
    ["h.o", "--image=triple=amdgcn-amd-amdhsa"],
    ["lib.a", "--image=kind=openmp"],
    ["lib.a", "--image=file=lib-all.a", "--archive"],
  ];

  it.each(EXTRACTION.map((args) => [args.join(" "), args]))("extracts: %s", async (_name, args) => {
    if (made[args[0]!] === undefined && !Object.hasOwn(INPUTS, args[0]!) && args[0] !== "missing.bin" && args[0] !== "sub") return;
    expect(await ours(args, made)).toEqual(native(args, made));
  });

  it("differs on purpose: generated names stay in the current directory", async () => {
    const args = ["p.bin", "--image=kind=cuda"];
    const theirs = native(args, made);
    const mine = await ours(args, made);
    // Natively 'p-evil/../x-../../up.1.cubin' fails (no directory 'p-evil') after writing the sm_70 image.
    expect(theirs.code).toBe(1);
    expect(mine.code).toBe(0);
    expect(Object.keys(mine.files).filter((f) => f.startsWith("p-"))).toEqual([
      "p-evil_.._x-.._.._up.1.cubin",
      "p-nvptx64-nvidia-cuda-sm_70.0.bc",
    ]);
  });
});
