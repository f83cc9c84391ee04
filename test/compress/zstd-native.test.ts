// libzstd from node:zlib (Node 22.15 and later) against the WebAssembly build: the same decoded bytes
// and the same error words for the same frames, frames that record their content size, and the bytes
// LLVM 19 writes for small bundles. Runs on Node 20 too, where only the selection tests apply (CI runs
// the suite on both).
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { CodecError } from "../../src/compress/codecs.js";
import { walkZstdFrames } from "../../src/compress/zstd-frames.js";
import { loadZstd } from "../../src/compress/zstd-wasm.js";
import { OffloadKitError } from "../../src/engine/errors.js";
import { parseCcobHeader, walkCcobs } from "../../src/formats/ccob.js";
import { nodeCodecsUsing } from "../../src/compress/node/codecs.js";
import { platformHasZstd, zstdBackend } from "../../src/compress/node/zstd-native.js";
import { xorshiftBytes } from "./data.js";

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/ccob/${name}`, import.meta.url)));

function frameOf(ccob: Uint8Array): Uint8Array {
  return ccob.subarray(parseCcobHeader(ccob).headerSize);
}

const data = xorshiftBytes;

function codecError(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(CodecError);
    return (e as Error).message;
  }
  throw new Error("expected a CodecError");
}

describe("choosing the libzstd", () => {
  it("takes node:zlib's where the platform has it, unless OFFLOAD_KIT_ZSTD says otherwise", () => {
    expect(zstdBackend({})).toBe(platformHasZstd() ? "native" : "wasm");
    expect(zstdBackend({ OFFLOAD_KIT_ZSTD: "wasm" })).toBe("wasm");
    if (platformHasZstd()) expect(zstdBackend({ OFFLOAD_KIT_ZSTD: "native" })).toBe("native");
    else expect(() => zstdBackend({ OFFLOAD_KIT_ZSTD: "native" })).toThrow(OffloadKitError);
  });
});

describe.skipIf(!platformHasZstd())("node:zlib's libzstd against the WebAssembly build", () => {
  const native = nodeCodecsUsing("native");
  const wasm = nodeCodecsUsing("wasm");
  beforeAll(() => loadZstd());

  it("decodes every frame of the golden files and of each other's output to the same bytes", () => {
    for (const name of ["host-gfx906.19.ccob", "host-gfx906.22.ccob", "gfx90a.19.ccob", "multi.19.ccob"]) {
      const file = fixture(name);
      for (const member of walkCcobs((p, n) => file.subarray(p, p + n), file.length).members) {
        const frame = file.subarray(member.dataOffset, member.dataOffset + member.dataSize);
        const size = member.header.uncompressedSize;
        expect(native.zstdDecompressFrame(frame, size), name).toEqual(wasm.zstdDecompressFrame(frame, size));
      }
    }
    for (const [size, compressible] of [[0, true], [1, true], [100_000, true], [3 << 20, true], [300_000, false]] as const) {
      const input = data(size, size + 7, compressible);
      for (const [by, other] of [[native, wasm], [wasm, native]]) {
        const frame = by.zstdCompress(input, 3);
        const [walked] = walkZstdFrames((p, n) => frame.subarray(p, p + n), 0, frame.length);
        expect(walked.contentSize, `${by.name} records the content size`).toBe(size);
        // Buffer.compare: toEqual walks megabytes element by element.
        expect(Buffer.compare(other.zstdDecompressFrame(frame, size), input)).toBe(0);
        expect(Buffer.compare(by.zstdDecompressFrame(frame, size + 10), input)).toBe(0);
      }
    }
  });

  it("write LLVM 19's bytes for small bundles, and each other's up to 64 KiB", () => {
    const plain = fixture("host-gfx906.bc");
    expect(native.zstdCompress(plain, 3)).toEqual(frameOf(fixture("host-gfx906.19.ccob")));
    for (const size of [1000, 65_536]) {
      const input = data(size, 3, true);
      expect(native.zstdCompress(input, 3), `${size} bytes`).toEqual(wasm.zstdCompress(input, 3));
    }
  });

  it("fail with the same libzstd words", () => {
    const input = data(200_000, 5, true);
    const frame = native.zstdCompress(input, 3);
    for (const codecs of [native, wasm]) {
      expect(codecError(() => codecs.zstdDecompressFrame(frame, 1000)), codecs.name).toBe("Destination buffer is too small");
      expect(codecError(() => codecs.zstdDecompressFrame(new TextEncoder().encode("not a zstd frame at all"), 100)), codecs.name).toBe("Unknown frame descriptor");
    }
    const corrupt = frame.slice();
    for (let i = 20; i < corrupt.length - 8; i += 97) corrupt[i] ^= 0x5a;
    const words = [native, wasm].map((codecs) => codecError(() => codecs.zstdDecompressFrame(corrupt, input.length)));
    expect(words[0]).toBe(words[1]);
  });
});
