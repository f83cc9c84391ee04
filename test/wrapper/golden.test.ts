// wrapImages() against the golden modules made by clang-offload-wrapper-14 and llvm-offload-wrapper-22
// (test/fixtures/wrapper/make-golden.sh): byte for byte, with no LLVM installed.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { WrapImagesOptions } from "../../src/wrapper/index.js";
import { wrapImages, writeWrapper } from "../../src/wrapper/index.js";

const dir = join(import.meta.dirname, "../fixtures/wrapper");
const file = (name: string) => new Uint8Array(readFileSync(join(dir, name)));
const images = (...names: string[]) => names.map((name) => ({ bytes: file(name), name }));

const CASES: [string, WrapImagesOptions][] = [
  ["openmp-two.14.bc", { triple: "x86_64-pc-linux-gnu", images: images("img-a.bin", "img-b.bin") }],
  ["openmp-mixed.14.bc", { triple: "aarch64-unknown-linux-gnu", images: images("img-a.bin", "empty.bin", "img-c6.bin", "img-a.bin") }],
  ["openmp-darwin.14.bc", { triple: "x86_64-apple-darwin", images: images("img-b.bin") }],
  ["openmp-nvptx.14.bc", { triple: "nvptx64-nvidia-cuda", images: images("img-a.bin", "img-b.bin") }],
  ["openmp-binary.22.bc", { flavour: "llvm-offload-wrapper-22", images: images("offload-binary.bin", "img-b.bin") }],
  ["openmp-mixed.22.bc", { flavour: "llvm-offload-wrapper-22", triple: "powerpc64le-unknown-linux-gnu", images: images("img-a.bin", "empty.bin", "img-c6.bin", "img-a.bin") }],
  ["openmp-coff.22.bc", { flavour: "llvm-offload-wrapper-22", triple: "x86_64-pc-windows-msvc", images: images("img-a.bin") }],
  ["cuda.22.bc", { flavour: "llvm-offload-wrapper-22", kind: "cuda", images: images("img-a.bin") }],
  ["hip.22.bc", { flavour: "llvm-offload-wrapper-22", kind: "hip", images: images("img-b.bin") }],
];

describe("wrapper golden files", () => {
  it.each(CASES)("%s", (name, options) => {
    const golden = file(name);
    expect(Buffer.from(wrapImages(options)).equals(Buffer.from(golden))).toBe(true);
    // The streaming path hands out the same bytes in chunks.
    const parts: Uint8Array[] = [];
    const size = writeWrapper(options, { write: (bytes) => parts.push(bytes.slice()) });
    expect(size).toBe(golden.length);
    expect(Buffer.concat(parts).equals(Buffer.from(golden))).toBe(true);
  });
});
