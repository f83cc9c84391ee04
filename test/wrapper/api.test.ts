// The library API: option checks worded like the native tools, LLVM's constant uniquing (equal images share one
// constant, zero images are zeroinitializer), the image-info variant, and the text form.
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import type { PayloadSource } from "../../src/llvm/bitcode/bitstream.js";
import { MAX_RECORD_ELEMENTS, isChar6 } from "../../src/llvm/bitcode/bitstream.js";
import { bytesPayload, prepareImages, recordElements } from "../../src/wrapper/images.js";
import { wrapImages, wrapImagesText, writeWrapper } from "../../src/wrapper/index.js";

const enc = (text: string) => new TextEncoder().encode(text);

describe("wrapImages", () => {
  it("checks the options as the native tools do", () => {
    const image = { bytes: enc("X") };
    expect(() => wrapImages({ images: [image] })).toThrow("for the --target option: must be specified at least once!");
    expect(() => wrapImages({ triple: "foo-bar", images: [image] })).toThrow("'foo-bar': unsupported target triple");
    expect(() => wrapImages({ flavour: "llvm-offload-wrapper-22", kind: "cuda", images: [image, image] })).toThrow(
      "CUDA / HIP offloading uses a single fatbinary or offload bundle",
    );
    expect(() => wrapImages({ triple: "x86_64-pc-linux-gnu", images: [{ ...image, arch: "gfx906" }, image] })).toThrow(OffloadKitError);
    expect(() => wrapImages({ flavour: "llvm-offload-wrapper-22", images: [{ bytes: Uint8Array.of(0x10, 0xff, 0x10, 0xad, 1) }] })).toThrow(
      /offload binary is too small/,
    );
  });

  it("shares one constant between equal images and writes zero images as zeroinitializer", () => {
    const text = wrapImagesText({ triple: "x86_64-pc-linux-gnu", images: [{ bytes: enc("AB") }, { bytes: new Uint8Array(3) }, { bytes: enc("AB") }] });
    expect(text).toContain('@.omp_offloading.device_image = internal unnamed_addr constant [2 x i8] c"AB"');
    expect(text).toContain("@.omp_offloading.device_image.1 = internal unnamed_addr constant [3 x i8] zeroinitializer");
    expect(text).toContain('@.omp_offloading.device_image.2 = internal unnamed_addr constant [2 x i8] c"AB"');
  });

  it("adds the image infos of seed 004 and registers them before the library", () => {
    const text = wrapImagesText({ triple: "x86_64-pc-linux-gnu", images: [{ bytes: enc("A"), arch: "gfx906" }, { bytes: enc("B"), arch: "gfx90a:xnack+" }] });
    expect(text).toContain("%__tgt_image_info = type { i32, i32, i32, i8*, i8* }");
    expect(text).toContain('@__offload_arch = internal constant [7 x i8] c"gfx906\\00", section ".offload_arch_list", align 1');
    expect(text).toContain('@__offload_arch.1 = internal constant [14 x i8] c"gfx90a:xnack+\\00", section ".offload_arch_list", align 1');
    expect(text).toContain("@.offload_image_info.1 = internal constant %__tgt_image_info { i32 1, i32 1, i32 2, i8* getelementptr inbounds ([14 x i8], [14 x i8]* @__offload_arch.1, i64 0, i64 0), i8* null }");
    const body = text.slice(text.indexOf("define internal void @.omp_offloading.descriptor_reg"));
    const calls = [...body.matchAll(/call void @(\S+)\((?:\S+) @(\S+)\)/g)].slice(0, 3).map((m) => `${m[1]} ${m[2]}`);
    expect(calls).toEqual([
      "__tgt_register_image_info .offload_image_info",
      "__tgt_register_image_info .offload_image_info.1",
      "__tgt_register_lib .omp_offloading.descriptor",
    ]);
  });

  it("escapes image bytes in the text form as LLVM does", () => {
    const text = wrapImagesText({ flavour: "llvm-offload-wrapper-22", images: [{ bytes: Uint8Array.of(0x41, 0x22, 0x5c, 0x0a, 0xff, 0) }] });
    // printEscapedString: a backslash as two, `"` and the unprintable as \XX.
    expect(text).toContain('c"A\\22\\\\\\0A\\FF\\00", section ".llvm.offloading", align 8');
  });
});

describe("images LLVM cannot read back", () => {
  // Sizes only: a source that is never read past its last byte (and the zero one only in its scan).
  const sized = (size: number, last: number): PayloadSource => ({
    size,
    read: (dest, position) => {
      if (position !== size - 1) throw new Error(`read at ${position}`);
      dest[0] = last;
      return 1;
    },
  });

  it("refuses an image whose bytes need a record of 2^32 elements or more, naming it, before writing", () => {
    for (const flavour of ["clang-offload-wrapper-14", "llvm-offload-wrapper-22"] as const) {
      const options = { flavour, triple: "x86_64-pc-linux-gnu", images: [{ bytes: sized(2 ** 32, 7), name: "big.bin" }] };
      let written = 0;
      expect(() => writeWrapper(options, { write: (b) => (written += b.length) })).toThrow(
        "'big.bin': an image of 4294967296 bytes does not fit LLVM bitcode: the record holding its bytes has at most 4294967295 elements (LLVM reads the count as 32 bits)",
      );
      expect(written).toBe(0);
      expect(() => wrapImagesText(options)).toThrow(expect.objectContaining({ code: "WRAPPER_IMAGE_TOO_LARGE" }));
    }
  });

  it("counts a C string's record without its final NUL, and a zero image as no record", () => {
    const data = (size: number, cString: boolean) => ({ source: sized(size, 0), cString, sevenBit: true, char6: false });
    expect(recordElements({ zero: false, data: data(2 ** 32, true) })).toBe(MAX_RECORD_ELEMENTS);
    expect(recordElements({ zero: false, data: data(2 ** 32, false) })).toBe(MAX_RECORD_ELEMENTS + 1);
    expect(recordElements({ zero: true, data: data(2 ** 40, false) })).toBe(0);
  });
});

describe("image classification", () => {
  /** The rule, byte by byte: all zero, or a C string (one NUL, last), 7-bit, char6. */
  function reference(bytes: Uint8Array) {
    const zero = bytes.every((b) => b === 0);
    const cString = !zero && bytes.length > 0 && bytes[bytes.length - 1] === 0 && bytes.indexOf(0) === bytes.length - 1;
    const body = bytes.subarray(0, bytes.length - 1);
    return { zero, cString, sevenBit: cString && body.every((b) => b < 128), char6: cString && body.every(isChar6) };
  }

  it("agrees with the byte-by-byte rule for zero runs of every length and alignment", () => {
    const backing = new Uint8Array(80);
    for (let offset = 0; offset < 4; offset++) {
      for (let length = 0; length <= 40; length++) {
        for (const at of [-1, 0, 1, 2, 3, 5, length - 2, length - 1]) {
          for (const value of [0x41, 0x80]) {
            const bytes = backing.subarray(offset, offset + length).fill(0);
            if (at >= 0 && at < length) bytes[at] = value;
            for (const viaRead of [false, true]) {
              const source = viaRead
                ? { size: bytes.length, read: (dest: Uint8Array, position: number) => (dest.set(bytes.subarray(position, position + dest.length)), Math.min(dest.length, bytes.length - position)) }
                : bytesPayload(bytes);
              const [image] = prepareImages([source]);
              const expected = reference(bytes);
              const label = `offset ${offset} length ${length} at ${at} value ${value}`;
              // A zero image is a zeroinitializer: its other facts are never looked at.
              if (expected.zero) expect(image!.zero, label).toBe(true);
              else expect({ zero: image!.zero, cString: image!.data.cString, sevenBit: image!.data.sevenBit, char6: image!.data.char6 }, label).toEqual(expected);
            }
          }
        }
      }
    }
  });
});
