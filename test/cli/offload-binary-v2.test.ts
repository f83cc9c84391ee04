// Offload binary format version 2 (issue 25, item 1): what LLVM 23 writes and every offload-kit command reads.
// `offload-binary` with OFFLOAD_BINARY_LLVM_VERSION=23 packages as LLVM 23's llvm-offload-binary does (all images in
// one v2 binary, llvm PRs #169425 and #197456): checked byte for byte against a hand-derived golden file
// (test/fixtures/offload-binary/multi.23.hex; no LLVM 23 tool is installable here), and against
// llvm-offload-binary-22 for what the two share (the per-image strings, kinds and string table order).
// Then ls, sizes, check, extract, prune and the page's rows on a three-image v2 file.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runOffloadBinary } from "../../src/cli/offload-binary.js";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { layoutOffloadBinaryMulti, parseOffloadBinaries, readImageBytes, writeOffloadBinaryMulti } from "../../src/formats/offload-binary.js";
import { locate } from "../../src/inspect/locate.js";
import { locationJson } from "../../src/inspect/location-json.js";
import { rowsOf } from "../../src/inspector/model.js";
import { hasNative, runNative } from "../native.js";
import { runInDir, scratchDir } from "./harness.js";

const fixtures = new URL("../fixtures/offload-binary/", import.meta.url).pathname;
const LLVM23 = { OFFLOAD_BINARY_LLVM_VERSION: "23" };
const NATIVE_22 = "llvm-offload-binary-22";

/** The golden file's bytes: each line is an offset and hex bytes; '#' starts a comment. */
function readHexFixture(name: string): Uint8Array {
  const bytes: number[] = [];
  for (const line of readFileSync(join(fixtures, name), "utf8").split("\n")) {
    const text = line.replace(/#.*/, "").trim();
    if (text === "") continue;
    const [offset, ...hex] = text.split(/\s+/);
    expect(Number.parseInt(offset!, 16)).toBe(bytes.length);
    for (const h of hex) bytes.push(Number.parseInt(h, 16));
  }
  return Uint8Array.from(bytes);
}

const ob = (dir: string, args: string[], env: Record<string, string> = {}) => runInDir(dir, (io) => runOffloadBinary("offload-binary", args, io), env);
const kit = (dir: string, ...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));

const PR_TEST_IMAGES = ["--image=file=in.ll,arch=abc,triple=x-y-z", "--image=file=in.ll,arch=def,triple=x-y-z"];

function prTestDir(): string {
  const dir = scratchDir("ob-v2-");
  writeFileSync(join(dir, "in.ll"), "HELLO");
  return dir;
}

describe("offload-binary as LLVM 23 (OFFLOAD_BINARY_LLVM_VERSION=23)", () => {
  it("writes the golden version 2 binary of the PR's two-image packaging, byte for byte", async () => {
    const golden = readHexFixture("multi.23.hex");
    expect(golden.length).toBe(256);
    const dir = prTestDir();
    const run = await ob(dir, ["-o", "out.bin", ...PR_TEST_IMAGES], LLVM23);
    expect(run).toMatchObject({ code: 0, stdout: Buffer.alloc(0), stderr: "" });
    expect(new Uint8Array(readFileSync(join(dir, "out.bin")))).toEqual(golden);
    // The library writer and the streaming layout agree with it.
    const strings = (arch: string): [string, string][] => [["arch", arch], ["triple", "x-y-z"]];
    const image = new TextEncoder().encode("HELLO");
    expect(writeOffloadBinaryMulti([{ imageKind: 0, offloadKind: 0, strings: strings("abc"), image }, { imageKind: 0, offloadKind: 0, strings: strings("def"), image }], { version: 2 })).toEqual(golden);
    const layout = layoutOffloadBinaryMulti([{ imageKind: 0, offloadKind: 0, strings: strings("abc") }, { imageKind: 0, offloadKind: 0, strings: strings("def") }], [5, 5], 2);
    expect(layout).toMatchObject({ imageOffsets: [0xf0, 0xf5], tailPadding: 6, size: 256 });
    expect(layout.head).toEqual(golden.subarray(0, 0xf0));
  });

  it("keeps 22's output by default: one version 1 binary per image", async () => {
    const dir = prTestDir();
    expect((await ob(dir, ["-o", "v1.bin", ...PR_TEST_IMAGES])).code).toBe(0);
    const read = parseOffloadBinaries(readFileSync(join(dir, "v1.bin")));
    expect(read.binaries.map((b) => [b.version, b.offset, b.size])).toEqual([[1, 0, 136], [1, 136, 136]]);
    expect((await ob(dir, ["-o", "v1b.bin", ...PR_TEST_IMAGES], { OFFLOAD_BINARY_LLVM_VERSION: "22" })).code).toBe(0);
    expect(readFileSync(join(dir, "v1b.bin"))).toEqual(readFileSync(join(dir, "v1.bin")));
  });

  it.skipIf(!hasNative(NATIVE_22))("holds what llvm-offload-binary-22 writes for the same images, in one binary; 22 refuses it", async () => {
    const dir = prTestDir();
    writeFileSync(join(dir, "k.bc"), Uint8Array.of(0x42, 0x43, 0xc0, 0xde, 1, 2, 3));
    writeFileSync(join(dir, "k.cubin"), "CUBIN!");
    const images = [
      ...PR_TEST_IMAGES,
      "--image=file=k.bc,triple=amdgcn-amd-amdhsa,arch=gfx90a:xnack+,kind=hip,feature=+xnack",
      "--image=file=k.cubin,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda,arch=sm_80",
      "--image=file=in.ll,kind=sycl,x=,y",
    ];
    const native = runNative(NATIVE_22, ["-o", "n22.bin", ...images], { cwd: dir });
    expect(native.status).toBe(0);
    expect((await ob(dir, ["-o", "o23.bin", ...images], LLVM23)).code).toBe(0);
    const v1 = parseOffloadBinaries(readFileSync(join(dir, "n22.bin")));
    const v2 = parseOffloadBinaries(readFileSync(join(dir, "o23.bin")));
    expect(v1.binaries.length).toBe(5);
    expect(v2.binaries.map((b) => [b.version, b.entriesOffset, b.entriesField])).toEqual([[2, 32, 5]]);
    const shape = (r: typeof v1) => r.images.map((i) => ({
      imageKind: i.imageKind, offloadKind: i.offloadKind, flags: i.flags,
      strings: i.stringEntries.map((s) => [s.key, s.value]), bytes: Buffer.from(readImageBytes(i)).toString("latin1"),
    }));
    expect(shape(v2)).toEqual(shape(v1));
    // The string table: LLVM's StringTableBuilder over every image's strings puts each image's strings in the order
    // 22's table for that image alone has them.
    const order = (r: typeof v1, k: number) => {
      const at = new Map<string, number>();
      for (const s of r.images[k]!.stringEntries) at.set(s.key, s.keyOffset).set(s.value, s.valueOffset);
      return [...at].filter(([text]) => text !== "").sort((a, b) => a[1] - b[1]).map(([text]) => text);
    };
    for (let k = 0; k < 5; k++) expect(order(v2, k)).toEqual(order(v1, k));
    const refused = runNative(NATIVE_22, ["o23.bin", "--image=file=x.out"], { cwd: dir });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("Invalid data was encountered while parsing the file");
  });

  it("reads version 2 when extracting (22's default refuses it), and with no image writes an empty v2 binary", async () => {
    const dir = prTestDir();
    writeFileSync(join(dir, "golden.bin"), readHexFixture("multi.23.hex"));
    const as22 = await ob(dir, ["golden.bin", "--image=file=x.out,arch=def"]);
    expect(as22).toMatchObject({ code: 1, stderr: "offload-binary: error: Invalid data was encountered while parsing the file\n" });
    const as23 = await ob(dir, ["golden.bin", "--image=file=x.out,arch=def"], LLVM23);
    expect(as23.code).toBe(0);
    expect(readFileSync(join(dir, "x.out"), "latin1")).toBe("HELLO");
    // OffloadBinary::write only asserts against no image; a release build writes header, "\0" and padding.
    expect((await ob(dir, ["-o", "empty.bin"], LLVM23)).code).toBe(0);
    const empty = new Uint8Array(readFileSync(join(dir, "empty.bin")));
    expect(Buffer.from(empty).toString("hex")).toBe("10ff10ad02000000" + "2800000000000000" + "2000000000000000" + "0000000000000000" + "0000000000000000");
    expect(parseOffloadBinaries(empty).images).toEqual([]);
    const bad = await ob(dir, ["-o", "x.bin", ...PR_TEST_IMAGES], { OFFLOAD_BINARY_LLVM_VERSION: "24" });
    expect(bad).toMatchObject({ code: 1, stderr: "offload-binary: error: OFFLOAD_BINARY_LLVM_VERSION=24 is not supported (22 or 23)\n" });
  });
});

describe("offload-binary as LLVM 23: llvm/test/tools/llvm-offload-binary/llvm-offload-binary.ll (PRs #184774, #197456)", () => {
  // The RUN lines of the upstream lit test that need no llvm-objdump-23, with their CHECK lines; the test's input
  // is the .ll file itself (any bytes do: here this test file).
  const self = new URL(import.meta.url).pathname;
  async function lit(): Promise<{ dir: string; run: (...args: string[]) => ReturnType<typeof ob> }> {
    const dir = scratchDir("ob-v2-lit-");
    writeFileSync(join(dir, "t.ll"), readFileSync(self));
    // bad-offload.input: the offload binary magic and a newline, too short for a header.
    writeFileSync(join(dir, "bad-offload.input"), Uint8Array.of(0x10, 0xff, 0x10, 0xad, 0x0a));
    return { dir, run: (...args: string[]) => ob(dir, args, LLVM23) };
  }
  const two = ["--image=file=t.ll,arch=abc,triple=x-y-z", "--image=file=t.ll,arch=def,triple=x-y-z"];

  it("packs and extracts back, and extracts everything without --image", async () => {
    const { dir, run } = await lit();
    expect((await run("-o", "t", "--image=file=t.ll,arch=abc,triple=x-y-z")).code).toBe(0);
    expect((await run("t", "--image=file=t2,arch=abc,triple=x-y-z")).code).toBe(0);
    expect(readFileSync(join(dir, "t2"))).toEqual(readFileSync(self));
    expect((await run("-o", "t3", "--image=file=t.ll")).code).toBe(0);
    expect((await run("t3", "--image=file=t4")).code).toBe(0);
    expect(readFileSync(join(dir, "t4"))).toEqual(readFileSync(self));
    const all = await run("t");
    expect(all).toMatchObject({ code: 0, stderr: "" });
    expect(all.stdout.toString()).toBe("Extracted: t-x-y-z-abc.0.\n");
    expect(readFileSync(join(dir, "t-x-y-z-abc.0."))).toEqual(readFileSync(self));
  });

  it("extracts nested offload binaries, mixed with plain images, and an inner binary by filter", async () => {
    const { dir, run } = await lit();
    expect((await run("-o", "t5", ...two)).code).toBe(0);
    expect((await run("-o", "t6", "--image=file=t5,arch=nested,triple=x-y-z")).code).toBe(0);
    expect((await run("t6")).stdout.toString()).toBe("Extracted: t6-x-y-z-abc.0.\nExtracted: t6-x-y-z-def.1.\n");
    expect((await run("-o", "t7", "--image=file=t5,arch=nested,triple=x-y-z", "--image=file=t.ll,arch=ghi,triple=x-y-z")).code).toBe(0);
    expect((await run("t7")).stdout.toString()).toBe("Extracted: t7-x-y-z-abc.0.\nExtracted: t7-x-y-z-def.1.\nExtracted: t7-x-y-z-ghi.2.\n");
    expect((await run("t7", "--image=file=t8,arch=nested,triple=x-y-z")).code).toBe(0);
    expect(readFileSync(join(dir, "t8"))).toEqual(readFileSync(join(dir, "t5")));
    // Two levels: an image holding a binary whose second image is itself a binary of two.
    expect((await run("-o", "t9", "--image=file=t.ll,arch=abc,triple=x-y-z", "--image=file=t5,arch=nested,triple=x-y-z")).code).toBe(0);
    expect((await run("-o", "t10", "--image=file=t9,arch=nested,triple=x-y-z", "--image=file=t5,arch=nested2,triple=x-y-z")).code).toBe(0);
    expect((await run("t10")).stdout.toString()).toBe(
      ["abc.0", "abc.1", "def.2", "abc.3", "def.4"].map((n) => `Extracted: t10-x-y-z-${n}.\n`).join(""),
    );
  });

  it("reports a malformed outer or inner offload binary", async () => {
    const { run } = await lit();
    expect(await run("bad-offload.input")).toMatchObject({ code: 1, stderr: "offload-binary: error: Invalid data was encountered while parsing the file\n" });
    expect((await run("-o", "t9", "--image=file=bad-offload.input,arch=nested,triple=x-y-z")).code).toBe(0);
    expect(await run("t9")).toMatchObject({ code: 1, stderr: "offload-binary: error: Invalid data was encountered while parsing the file\n" });
  });

  it("writes .spv files as IMG_SPIRV and names them .spv (22: IMG_None, no extension)", async () => {
    const { dir, run } = await lit();
    writeFileSync(join(dir, "k.spv"), "SPIRV");
    expect((await run("-o", "s.bin", "--image=file=k.spv,triple=spirv64-intel")).code).toBe(0);
    expect(parseOffloadBinaries(readFileSync(join(dir, "s.bin"))).images.map((i) => i.imageKind)).toEqual([6]);
    expect((await run("s.bin")).stdout.toString()).toBe("Extracted: s-spirv64-intel.0.spv\n");
    expect((await ob(dir, ["-o", "s22.bin", "--image=file=k.spv,triple=spirv64-intel"])).code).toBe(0);
    expect(parseOffloadBinaries(readFileSync(join(dir, "s22.bin"))).images.map((i) => i.imageKind)).toEqual([0]);
    // 22 extracts nothing without --image.
    expect(await ob(dir, ["s22.bin"])).toMatchObject({ code: 0, stdout: Buffer.alloc(0) });
  });
});

describe("offload-kit on a version 2 binary of three images", () => {
  async function v2File(): Promise<string> {
    const dir = scratchDir("ob-v2-kit-");
    writeFileSync(join(dir, "a.o"), "IMGA");
    writeFileSync(join(dir, "b.o"), "IMGBB");
    writeFileSync(join(dir, "c.o"), "IMGCCC");
    const run = await ob(dir, ["-o", "v2.bin",
      "--image=file=a.o,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=hip",
      "--image=file=b.o,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip",
      "--image=file=c.o,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda"], LLVM23);
    expect(run.code).toBe(0);
    return dir;
  }

  it("ls, sizes and check see every entry", async () => {
    const dir = await v2File();
    expect((await kit(dir, "ls", "v2.bin")).stdout.toString()).toBe("v2.bin: 3 offload images: gfx906, gfx90a, sm_70\n");
    const verbose = (await kit(dir, "ls", "-v", "v2.bin")).stdout.toString();
    expect(verbose).toContain("v2.bin: offload binaries at 0x0, 384 bytes, 1 binary, 3 images\n");
    expect(verbose).toContain("      1  0x174      5  o     hip       amdgcn-amd-amdhsa    gfx90a\n");
    const json = JSON.parse((await kit(dir, "ls", "--json", "v2.bin")).stdout.toString());
    const images = json.files[0].offloadBinaries[0].images;
    expect(images.map((i: { offset: number; size: number; offloadKindName: string }) => [i.offset, i.size, i.offloadKindName])).toEqual([[0x170, 4, "hip"], [0x174, 5, "hip"], [0x179, 6, "cuda"]]);
    const sizes = (await kit(dir, "sizes", "v2.bin")).stdout.toString();
    expect(sizes).toContain("v2.bin: 0 bundles, 3 offload images, 3 entries, 15 bytes (file: 384 bytes)\n");
    expect(sizes).toMatch(/hip-amdgcn-amd-amdhsa--gfx90a +1 +5 /);
    const ok = await kit(dir, "check", "--gpu=gfx90a", "v2.bin");
    expect(ok.code).toBe(0);
    expect(ok.stdout.toString()).toContain("v2.bin: offload binary, 3 device entries, 1 loadable on gfx90a; OK\n");
    const fail = await kit(dir, "check", "--gpu=gfx1100", "--kind=hip", "v2.bin");
    expect(fail.code).toBe(1);
  });

  it("extract writes each image", async () => {
    const dir = await v2File();
    expect((await kit(dir, "extract", "v2.bin", "--out-dir=out")).code).toBe(0);
    expect(readFileSync(join(dir, "out", "v2-amdgcn-amd-amdhsa-gfx90a.1.o"), "latin1")).toBe("IMGBB");
    expect(readFileSync(join(dir, "out", "v2-nvptx64-nvidia-cuda-sm_70.2.o"), "latin1")).toBe("IMGCCC");
    expect((await kit(dir, "extract", "v2.bin", "--image=file=one.o,arch=gfx906")).code).toBe(0);
    expect(readFileSync(join(dir, "one.o"), "latin1")).toBe("IMGA");
  });

  it("prune keeps a version 2 binary of the kept entries: what LLVM 23 packages from them", async () => {
    const dir = await v2File();
    expect((await kit(dir, "prune", "--drop=gfx90a", "v2.bin", "-o", "p.bin")).code).toBe(0);
    const pruned = readFileSync(join(dir, "p.bin"));
    const read = parseOffloadBinaries(pruned);
    expect(read.binaries.map((b) => [b.version, b.entriesField])).toEqual([[2, 2]]);
    expect((await ob(dir, ["-o", "want.bin",
      "--image=file=a.o,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=hip",
      "--image=file=c.o,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda"], LLVM23)).code).toBe(0);
    expect(pruned).toEqual(readFileSync(join(dir, "want.bin")));
    expect((await kit(dir, "prune", "--keep=gfx90a", "v2.bin", "-o", "k.bin")).code).toBe(0);
    const kept = parseOffloadBinaries(readFileSync(join(dir, "k.bin")));
    expect(kept.binaries.map((b) => [b.version, b.entriesField])).toEqual([[2, 1]]);
    expect(kept.images.map((i) => i.arch)).toEqual(["gfx90a"]);
  });

  it("the page's rows list every entry", async () => {
    const dir = await v2File();
    const bytes = new Uint8Array(readFileSync(join(dir, "v2.bin")));
    const rows = [...rowsOf(locationJson("v2.bin", locate(bytes)), "v2.bin")];
    expect(rows.map((r) => [r.kind, r.id, r.offset, r.size, r.processor, r.offloadKind])).toEqual([
      ["image", "hip-amdgcn-amd-amdhsa--gfx906", 0x170, 4, "gfx906", "hip"],
      ["image", "hip-amdgcn-amd-amdhsa--gfx90a", 0x174, 5, "gfx90a", "hip"],
      ["image", "cuda-nvptx64-nvidia-cuda--sm_70", 0x179, 6, "sm_70", "cuda"],
    ]);
  });
});
