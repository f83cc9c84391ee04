// Offload binaries against golden files made by the native tools (test/fixtures/README.md): our writer
// reproduces clang-offload-packager 19's bytes, our reader reads what 19 and 22 wrote, and the listing is
// llvm-objdump's. Every behavioural case runs on both engines.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import { bytesSource } from "../../src/engine/source.js";
import {
  ImageKind, OffloadKind19, OffloadKind22, getImageKind, getImageKindName, getOffloadKind, getOffloadKindName, isOffloadBinary, offloadKindText,
  layoutOffloadBinary, llvmOffloadErrorText, parseOffloadBinaries, readImageBytes, writeOffloadBinary, writeOffloadBinaryMulti,
} from "../../src/formats/offload-binary.js";
import { latin1Decode } from "../../src/formats/bytes.js";
import { objdumpOffloading } from "../../src/inspect/objdump.js";
import { scanOffloadBinaries } from "../../src/inspect/scan.js";
import { codecDecompressor } from "../../src/compress/node/packager-codecs.js";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { collectOffloadImages } from "../../src/packager/collect.js";
import {
  extractedFileName, imageFiles, imageKindFor, imageOffloadKind, llvmSplit, matchesFilter, packagerStringData, parseImageArguments,
} from "../../src/packager/image-args.js";
import { ENGINE_KINDS, makeEngine } from "../engines.js";

const dir = new URL("../fixtures/offload-binary/", import.meta.url);
const file = (name: string) => new Uint8Array(readFileSync(new URL(name, dir)));
const text = (name: string) => latin1Decode(file(name));

/** What offload-packager writes for one --image (one file), in memory. */
function packaged(image: string, name: string, llvm: 19 | 22 = 19): Uint8Array {
  const args = parseImageArguments(image);
  const bytes = file(name);
  return writeOffloadBinary({ imageKind: imageKindFor(name, bytes), offloadKind: imageOffloadKind(args, llvm), strings: packagerStringData(args), image: bytes });
}

const EXAMPLE = "file=in-a.o,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=openmp";
const MULTI = [
  EXAMPLE,
  "file=in-b.bc,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda,feature=+ptx70,feature=+sm_70",
  "file=in-n.elf,triple=t1,arch=a1,kind=hip",
];

describe("writing: byte-identical to clang-offload-packager", () => {
  it("reproduces the spec's worked example and a three-image file (19 and 22 numbering)", () => {
    expect(packaged(EXAMPLE, "in-a.o")).toEqual(file("example.19.bin"));
    expect(packaged(EXAMPLE, "in-a.o", 22)).toEqual(file("example.22.bin"));
    const names = ["in-a.o", "in-b.bc", "in-n.elf"];
    const concat = (llvm: 19 | 22) => Buffer.concat(MULTI.map((image, i) => packaged(image, names[i]!, llvm)));
    expect(new Uint8Array(concat(19))).toEqual(file("multi.19.bin"));
    expect(new Uint8Array(concat(22))).toEqual(file("multi.22.bin"));
  });

  it("orders string entries by DenseMap buckets, argument order deciding collisions", () => {
    expect(packaged("file=in-a.o,triple=t,arch=a,zeta=1,alpha=2,kind=openmp", "in-a.o")).toEqual(file("keys-a.19.bin"));
    expect(packaged("alpha=2,zeta=1,kind=openmp,arch=a,triple=t,file=in-a.o", "in-a.o")).toEqual(file("keys-b.19.bin"));
  });

  it("lays out head, image and padding for streaming", () => {
    const layout = layoutOffloadBinary({ imageKind: 1, offloadKind: 1, strings: [["triple", "t"]] }, 5);
    expect(layout.head.length).toBe(layout.imageOffset);
    expect(layout.imageOffset % 8).toBe(0);
    expect(layout.size).toBe(layout.imageOffset + 5 + layout.tailPadding);
    expect(layout.size % 8).toBe(0);
    expect(() => layoutOffloadBinary({ imageKind: 0, offloadKind: 0, strings: [["a\0b", "c"]] }, 0)).toThrow(OffloadKitError);
  });
});

describe.each(ENGINE_KINDS)("reading (%s engine)", (kind) => {
  const engine = makeEngine(kind, 256);

  it("reads every image of 19's and 22's files, strings as stored", () => {
    for (const version of [19, 22] as const) {
      const read = parseOffloadBinaries(file(`multi.${version}.bin`), { engine });
      expect(read.binaries.map((b) => [b.offset, b.size, b.version])).toEqual([[0, 152, 1], [152, 184, 1], [336, 136, 1]]);
      expect(read.images.map((i) => [i.imageKind, i.offloadKind, i.triple, i.arch])).toEqual([
        [ImageKind.IMG_Object, 1, "amdgcn-amd-amdhsa", "gfx906"],
        [ImageKind.IMG_Bitcode, 2, "nvptx64-nvidia-cuda", "sm_70"],
        [ImageKind.IMG_None, version === 19 ? OffloadKind19.OFK_HIP : OffloadKind22.OFK_HIP, "t1", "a1"],
      ]);
      expect(read.images[1]!.strings.get("feature")).toBe("+ptx70,+sm_70");
      expect(latin1Decode(readImageBytes(read.images[1]!))).toBe("IMG2xx");
      expect(read.end).toBe(472);
    }
  });

  it("finds the images in an ELF object's .llvm.offloading section", () => {
    const collected = collectOffloadImages(bytesSource(file("embedded.19.o")), "embedded.19.o", { engine });
    expect(collected.kind).toBe("elf");
    expect(collected.images.map((i) => latin1Decode(readImageBytes(i)))).toEqual(["IMG1", "IMG2xx", "NONE"]);
    expect(collected.images.map((i) => i.identifier)).toEqual(["embedded.19.o", "embedded.19.o", "embedded.19.o"]);
  });

  it("reads multi-entry v2 and v3 binaries, and compressed v3 ones with a decompressor", () => {
    const images = [
      { imageKind: 1, offloadKind: 4, strings: [["triple", "amdgcn-amd-amdhsa"], ["arch", "gfx90a"]] as [string, string][], image: new Uint8Array([1, 2, 3]) },
      { imageKind: 6, offloadKind: 8, flags: 1, strings: [["triple", "spirv64"], ["value", "with\0nul"]] as [string, string][], image: new Uint8Array(0) },
    ];
    for (const version of [2, 3] as const) {
      const read = parseOffloadBinaries(writeOffloadBinaryMulti(images, { version }), { engine });
      expect(read.images.map((i) => [i.entryIndex, i.imageKind, i.offloadKind, i.flags, [...i.strings]])).toEqual(
        images.map((image, i) => [i, image.imageKind, image.offloadKind, image.flags ?? 0, image.strings]),
      );
    }
    for (const format of ["zlib", "zstd"] as const) {
      const compressor = (f: string, data: Uint8Array) => (f === "zlib" ? nodeCodecs.zlibCompress(data, 6) : nodeCodecs.zstdCompress(data, 3));
      const packed = writeOffloadBinaryMulti(images, { compress: { format, compressor } });
      // Two compressed binaries back to back: each starts at the next multiple of 8.
      const blob = Buffer.concat([packed, packed]);
      const read = parseOffloadBinaries(blob, { engine, decompress: codecDecompressor() });
      expect(read.images.map((i) => [i.compressed, i.triple, latin1Decode(readImageBytes(i))])).toEqual([
        [true, "amdgcn-amd-amdhsa", "\x01\x02\x03"], [true, "spirv64", ""], [true, "amdgcn-amd-amdhsa", "\x01\x02\x03"], [true, "spirv64", ""],
      ]);
      expect(() => parseOffloadBinaries(packed, { engine })).toThrow(/compressed, and no decompressor/);
    }
  });

  it("refuses what LLVM refuses, with its words, the failing field and its offset", () => {
    const multi = file("multi.19.bin");
    const failure = (bytes: Uint8Array, options = {}) => {
      try {
        parseOffloadBinaries(bytes, { engine, ...options });
      } catch (e) {
        if (!(e instanceof OffloadKitError)) throw e;
        return { code: e.code, offset: e.offset, llvm: llvmOffloadErrorText(e.code) };
      }
      return undefined;
    };
    const v2 = multi.slice();
    v2[152 + 4] = 2;
    expect(failure(v2, { maxVersion: 1 })).toEqual({ code: "OFFLOAD_BAD_VERSION", offset: 156, llvm: "Invalid data was encountered while parsing the file" });
    expect(failure(multi.subarray(0, 470))).toEqual({ code: "OFFLOAD_SIZE_OUT_OF_BOUNDS", offset: 344, llvm: "The end of the file was unexpectedly encountered" });
    const tail = Buffer.concat([multi, Buffer.from("junk")]);
    expect(failure(tail)).toMatchObject({ code: "OFFLOAD_BAD_MAGIC", offset: 472 });
    const image = multi.slice();
    image[64] = 0xff;
    expect(failure(image)).toEqual({ code: "OFFLOAD_IMAGE_OUT_OF_BOUNDS", offset: 64, llvm: "The end of the file was unexpectedly encountered" });
    // stopAtError keeps what came before the bad binary.
    const read = parseOffloadBinaries(tail, { engine, stopAtError: true });
    expect(read.images.length).toBe(3);
    expect(read.stopped).toMatchObject({ offset: 472, code: "OFFLOAD_BAD_MAGIC" });
  });

  it("scans any file for runs of binaries", () => {
    const host = file("embedded.19.o");
    const { found, problems } = scanOffloadBinaries(host, engine);
    expect(problems).toEqual([]);
    expect(found.map((run) => [run.binaries, run.size, run.images.map((i) => i.index)])).toEqual([[3, 472, [0, 1, 2]]]);
  });
});

describe("llvm-objdump --offloading listing", () => {
  it("prints what llvm-objdump 19 and 22 print", () => {
    const read19 = parseOffloadBinaries(file("multi.19.bin"));
    expect(objdumpOffloading("multi.19.bin", read19.images)).toBe(text("multi.19.objdump.txt"));
    const read22 = parseOffloadBinaries(file("multi.22.bin"));
    expect(objdumpOffloading("multi.22.bin", read22.images, undefined, 22)).toBe(text("multi.22.objdump.txt"));
    const elf = collectOffloadImages(bytesSource(file("embedded.19.o")), "embedded.19.o");
    expect(objdumpOffloading("embedded.19.o", elf.images, elf.elf!.header)).toBe(text("embedded.19.objdump.txt"));
  });
});

describe("kinds and names", () => {
  it("maps extensions, kind names and both numberings of HIP", () => {
    expect(["o", "bc", "cubin", "fatbin", "s", "spv", "O", "ll", ""].map(getImageKind)).toEqual([1, 2, 3, 4, 5, 0, 0, 0, 0]);
    expect([0, 1, 2, 3, 4, 5, 6].map(getImageKindName)).toEqual(["", "o", "bc", "cubin", "fatbin", "s", ""]);
    expect(["openmp", "cuda", "hip", "sycl", "none"].map((k) => getOffloadKind(k))).toEqual([1, 2, 3, 0, 0]);
    expect(["openmp", "cuda", "hip", "sycl", "none"].map((k) => getOffloadKind(k, 22))).toEqual([1, 2, 4, 8, 0]);
    expect([3, 4, 8].map((k) => getOffloadKindName(k))).toEqual(["hip", "none", "none"]);
    expect([3, 4, 8].map((k) => getOffloadKindName(k, 22))).toEqual(["none", "hip", "sycl"]);
    expect(isOffloadBinary(file("example.19.bin"))).toBe(true);
    // Reports read both numberings in version 1 files (19 wrote HIP as 3, 22 as 4; 4 and 8 mean nothing in 19)
    // and 22's alone in versions 2 and 3, which only bit-flag LLVM writes (there 3 would be OpenMP|Cuda).
    expect([0, 1, 2, 3, 4, 8, 5, 16].map((k) => offloadKindText(k, 1))).toEqual(["none", "openmp", "cuda", "hip", "hip", "sycl", "none", "none"]);
    expect([1, 2, 3, 4, 8].map((k) => offloadKindText(k, 3))).toEqual(["openmp", "cuda", "none", "hip", "sycl"]);
    for (const name of ["multi.19.bin", "multi.22.bin"]) {
      const [, , hip] = parseOffloadBinaries(file(name)).images;
      expect(offloadKindText(hip!.offloadKind, hip!.version), name).toBe("hip");
    }
    expect(isOffloadBinary(new Uint8Array([0x10, 0xff]))).toBe(false);
  });
});

describe("--image arguments (clang-offload-packager 19)", () => {
  it("splits like llvm::split and StringRef::split, joining repeated keys", () => {
    expect(llvmSplit(null, ",")).toEqual([]);
    expect(llvmSplit("", ",")).toEqual([""]);
    expect(llvmSplit("a,", ",")).toEqual(["a", ""]);
    const args = parseImageArguments("file=a.o,arch=x,arch=y,arch,novalue,=v");
    expect(args.get("arch")).toBe("x,y,");
    expect(args.raw("novalue")).toBeNull();
    expect(args.get("novalue")).toBe("");
    expect(args.get("")).toBe("v");
    expect(imageFiles(parseImageArguments("triple=t,file"))).toEqual([]);
    expect(imageFiles(parseImageArguments("file=,triple=t"))).toEqual([""]);
    expect(imageFiles(parseImageArguments("file=a.o,file=b.o"))).toEqual(["a.o", "b.o"]);
  });

  it("takes the image kind from bitcode magic first, then the last extension", () => {
    const none = new Uint8Array([1, 2, 3, 4]);
    expect(imageKindFor("x.o", Uint8Array.of(0x42, 0x43, 0xc0, 0xde))).toBe(ImageKind.IMG_Bitcode);
    expect(imageKindFor("x.o", Uint8Array.of(0xde, 0xc0, 0x17, 0x0b))).toBe(ImageKind.IMG_Bitcode);
    expect(imageKindFor("dir.s/x", none)).toBe(ImageKind.IMG_None);
    expect(imageKindFor(".o", none)).toBe(ImageKind.IMG_Object);
    expect(imageKindFor("a.tar.s", none)).toBe(ImageKind.IMG_PTX);
  });

  it("matches filters key by key and names outputs inside the current directory", () => {
    const [image] = parseOffloadBinaries(file("multi.19.bin")).images;
    expect(matchesFilter(parseImageArguments("kind=openmp,arch=gfx906,file=x"), image!)).toBe(true);
    expect(matchesFilter(parseImageArguments("kind=cuda"), image!)).toBe(false);
    expect(matchesFilter(parseImageArguments("missing"), image!)).toBe(true);
    expect(matchesFilter(parseImageArguments("missing=1"), image!)).toBe(false);
    expect(extractedFileName("../dir/in.tar.bin", image!, 7)).toBe("in.tar-amdgcn-amd-amdhsa-gfx906.7.o");
    const evil = { ...image!, triple: "../../etc", arch: "/x/" };
    expect(extractedFileName("in.bin", evil, 0)).toBe("in-.._.._etc-_x_.0.o");
  });
});
