// The TypeScript bzip2 decoder (src/packages/bzip2.ts) against the bzip2 program: every level, several
// streams back to back, trailing garbage, a cut stream, a damaged CRC, a run longer than its block, input
// fed a few bytes at a time; and the Node decoders' fallback to it when the program is missing.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import { nodeDecoders } from "../../src/packages/node/io.js";
import { decodeBzip2 } from "../../src/packages/bzip2.js";
import { tool } from "./build.js";

async function decode(bytes: Uint8Array, step = bytes.length): Promise<Buffer> {
  const out: Uint8Array[] = [];
  const input = (async function* () {
    for (let at = 0; at < bytes.length; at += Math.max(1, step)) yield bytes.subarray(at, at + step);
  })();
  for await (const chunk of decodeBzip2(input)) out.push(chunk);
  return Buffer.concat(out);
}

async function failure(bytes: Uint8Array): Promise<OffloadKitError> {
  try {
    await decode(bytes);
  } catch (e) {
    expect(e).toBeInstanceOf(OffloadKitError);
    return e as OffloadKitError;
  }
  throw new Error("decoded without an error");
}

// Text with long runs and repeats (RLE and BWT runs), then bytes that do not compress.
const text = Buffer.from(Array.from({ length: 4000 }, (_, i) => `line ${i % 97} ${"x".repeat(i % 13)} gfx90a:xnack+\n`).join(""));
const noise = Buffer.concat(Array.from({ length: 12000 }, (_, i) => createHash("sha256").update(String(i)).digest()));
const sample = Buffer.concat([text, Buffer.alloc(300000, 7), noise]);

describe("bzip2 in TypeScript", () => {
  it("decodes what bzip2 -1 .. -9 wrote, byte for byte, fed whole or a few bytes at a time", async () => {
    for (const level of ["-1", "-5", "-9"]) {
      const bz = tool("bzip2", [level, "-c"], { input: sample });
      if (bz === undefined) return;
      expect((await decode(bz)).equals(sample), level).toBe(true);
    }
    const bz = tool("bzip2", ["-1", "-c"], { input: text })!;
    expect((await decode(bz, 7)).equals(text)).toBe(true);
    // An empty input compresses to a stream with no block.
    expect((await decode(tool("bzip2", ["-c"], { input: new Uint8Array(0) })!)).length).toBe(0);
  });

  it("streams back to back are one output; trailing garbage is ignored, as bzip2 -d ignores it", async () => {
    const a = tool("bzip2", ["-c"], { input: text });
    if (a === undefined) return;
    const b = tool("bzip2", ["-1", "-c"], { input: noise })!;
    expect((await decode(Buffer.concat([a, b]))).equals(Buffer.concat([text, noise]))).toBe(true);
    const garbage = Buffer.concat([a, Buffer.from("not another stream\n")]);
    expect((await decode(garbage)).equals(text)).toBe(true);
    expect(tool("bzip2", ["-dcq"], { input: garbage })!.equals(text)).toBe(true);
    // ...but a tail that is the start of another stream's header, cut there, is a cut stream, as for bzip2
    // (found by the fuzz campaign: "BZh" after an empty stream was taken as garbage).
    for (const tail of ["B", "BZ", "BZh", "BZh9", "BZh91AY&"]) {
      expect((await failure(Buffer.concat([a, Buffer.from(tail)]))).message, tail).toMatch(/ends early/);
    }
    for (const tail of ["BZh0", "BZx", "xyz"]) expect((await decode(Buffer.concat([a, Buffer.from(tail)]))).equals(text), tail).toBe(true);
  });

  it("a cut stream, a damaged block and a damaged stream CRC are DECODE_FAILED, after the blocks before them", async () => {
    const bz = tool("bzip2", ["-1", "-c"], { input: sample });
    if (bz === undefined) return;
    const cut = await failure(bz.subarray(0, bz.length - 100));
    expect(cut.code).toBe("DECODE_FAILED");
    expect(cut.message).toMatch(/^bzip2 data is corrupt or cut short \(the stream ends early/);
    // The end-of-stream CRC (the last 4 bytes before padding, after the 48-bit end magic).
    const crc = Buffer.from(bz);
    crc[crc.length - 2]! ^= 0x10;
    expect((await failure(crc)).message).toMatch(/stream CRC|block CRC|no block magic/);
    // A byte in the middle of the first block: the decoder fails, and what came before it was handed on.
    const damaged = Buffer.from(bz);
    damaged[2000]! ^= 0xff;
    const got: Uint8Array[] = [];
    await expect((async () => {
      for await (const chunk of decodeBzip2((async function* () { yield damaged; })())) got.push(chunk);
    })()).rejects.toMatchObject({ code: "DECODE_FAILED" });
  });

  it("a run longer than its block is refused as soon as it is (the library let the run length grow until it overflowed)", async () => {
    // 240 kB of "abb" at -3 is one block whose BWT output holds a run of ~160 kB; the header relabelled as
    // level 1 makes the block 100 kB, so the run cannot fit (and its origin still does).
    const bz = tool("bzip2", ["-3", "-c"], { input: Buffer.alloc(240000, "abb") });
    if (bz === undefined) return;
    const relabelled = Buffer.from(bz);
    relabelled[3] = 0x31;
    expect((await failure(relabelled)).message).toMatch(/\(a run of \d+ bytes in a 100000-byte block\)$/);
  });

  it("Node decodes bzip2 with it when the program is missing (OFFLOAD_KIT_BZIP2=js forces it)", async () => {
    const bz = tool("bzip2", ["-c"], { input: text });
    if (bz === undefined) return;
    const out: Uint8Array[] = [];
    for await (const chunk of nodeDecoders({ ...process.env, OFFLOAD_KIT_BZIP2: "js" }).decode("bzip2", (async function* () { yield bz; })())) out.push(chunk);
    expect(Buffer.concat(out).equals(text)).toBe(true);
  });
});
