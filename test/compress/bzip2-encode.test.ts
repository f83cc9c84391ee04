// The TypeScript bzip2 encoder (src/compress/bzip2-encode.ts): every stream it writes is read back by three
// decoders that share no code with it or with each other (the bzip2 program, Python's bz2 module over
// libbz2, and our own src/packages/bzip2.ts), and compared with what `bzip2 -9` writes for the same input:
// for a block whose rotations are all distinct the encoder follows libbzip2's choices exactly, so the bytes
// must be equal; a periodic block may pick another of its equal rotations for origPtr (listed below).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createBzip2Encoder, encodeBzip2 } from "../../src/compress/bzip2-encode.js";
import { OffloadKitError } from "../../src/engine/errors.js";
import { decodeBzip2 } from "../../src/packages/bzip2.js";
import { HANG_MS } from "../limits.js";
import { nativeTool, runNative } from "../native.js";

const PY_DECODE = "import bz2,sys; sys.stdout.buffer.write(bz2.decompress(sys.stdin.buffer.read()))";

async function ourDecode(stream: Uint8Array): Promise<Buffer> {
  const out: Uint8Array[] = [];
  for await (const piece of decodeBzip2((async function* () { yield stream; })())) out.push(piece);
  return Buffer.concat(out);
}

/** Checks `stream` with every decoder present; returns `bzip2 -N`'s own stream for `input` (when the program is). */
async function checkStream(name: string, input: Uint8Array, stream: Uint8Array, level = 9): Promise<Buffer | undefined> {
  expect((await ourDecode(stream)).equals(input), `${name}: src/packages/bzip2.ts`).toBe(true);
  let reference: Buffer | undefined;
  if (nativeTool("bzip2") !== undefined) {
    expect(runNative("bzip2", ["-t"], { input: stream }).status, `${name}: bzip2 -t`).toBe(0);
    const back = runNative("bzip2", ["-dc"], { input: stream });
    expect(back.status, `${name}: bzip2 -dc ${back.stderr}`).toBe(0);
    expect(back.stdout.equals(input), `${name}: bzip2 -dc`).toBe(true);
    reference = runNative("bzip2", [`-${level}`, "-c"], { input }).stdout;
  }
  if (nativeTool("python3") !== undefined) {
    const py = runNative("python3", ["-c", PY_DECODE], { input: stream });
    expect(py.status, `${name}: python3 bz2 ${py.stderr}`).toBe(0);
    expect(py.stdout.equals(input), `${name}: python3 bz2`).toBe(true);
  }
  return reference;
}

/** Deterministic noise (a counter through SHA-256): incompressible, the same on every run. */
function noise(length: number, seed = "noise"): Uint8Array {
  const out = new Uint8Array(length);
  for (let at = 0, i = 0; at < length; at += 32, i++) out.set(createHash("sha256").update(`${seed}${i}`).digest().subarray(0, Math.min(32, length - at)), at);
  return out;
}

const fill = (length: number, byte = 0x61) => new Uint8Array(length).fill(byte);
const text = new TextEncoder().encode(Array.from({ length: 3000 }, (_, i) => `line ${i % 97} ${"x".repeat(i % 13)} gfx90a:xnack+ amdgcn-amd-amdhsa\n`).join(""));
const elf = new Uint8Array(readFileSync(new URL("../fixtures/nv/app", import.meta.url)));

const SMALL: [string, Uint8Array][] = [
  ["empty", new Uint8Array(0)],
  ["one byte", Uint8Array.of(0x41)],
  ["a run of 4", fill(4)],
  ["a run of 5", fill(5)],
  ["a run of 255", fill(255)],
  ["a run of 256", fill(256)],
  ["a run of 259", fill(259)],
  ["a run of 1000", fill(1000)],
  ["runs of 4 and 5 of different bytes", Uint8Array.from([...fill(4, 1), ...fill(5, 2), ...fill(4, 3), 4, ...fill(255, 5), ...fill(6, 4)])],
  ["all 256 byte values", Uint8Array.from({ length: 256 }, (_, i) => i)],
  ["all 256 byte values, descending, twice over with runs", Uint8Array.from({ length: 2048 }, (_, i) => 255 - (i >> 3))],
  ["hello", new TextEncoder().encode("hello, world\n")],
];

describe("bzip2 encoder", () => {
  it("writes bzip2 -9's exact bytes for small inputs and RLE1 edges, and all three decoders read them", async () => {
    for (const [name, input] of SMALL) {
      const stream = encodeBzip2(input);
      const reference = await checkStream(name, input, stream);
      if (reference !== undefined) expect(Buffer.from(stream).toString("hex"), name).toBe(reference.toString("hex"));
    }
    // bzip2's stream for no input: header, end-of-stream magic, a zero CRC.
    expect(Buffer.from(encodeBzip2(new Uint8Array(0))).toString("hex")).toBe("425a683917724538509000000000");
  });

  it("codes random bytes, text and a real ELF (nvcc's app fixture) as bzip2 -9 does", { timeout: HANG_MS }, async () => {
    for (const [name, input] of [["random", noise(200000)], ["text", text], ["ELF", elf]] as const) {
      const stream = encodeBzip2(input);
      const reference = await checkStream(name, input, stream);
      if (reference !== undefined) expect(Buffer.compare(stream, reference), `${name}: ${stream.length} bytes, bzip2 -9 ${reference.length}`).toBe(0);
    }
  });

  it("codes periodic blocks (equal rotations) that every decoder reads", async () => {
    for (const [name, input] of [
      ["a run of 3 (RLE1 leaves it as it is)", fill(3)],
      ["abab", new TextEncoder().encode("abababab")],
      ["a period of 3, 3000 times", Uint8Array.from({ length: 9000 }, (_, i) => [1, 2, 3][i % 3]!)],
      ["a period of 97 bytes of noise, 50 times", Uint8Array.from({ length: 97 * 50 }, (_, i) => noise(97)[i % 97]!)],
      ["two equal halves", Uint8Array.from([...noise(5000), ...noise(5000)])],
    ] as const) {
      const stream = encodeBzip2(input);
      const reference = await checkStream(name, input, stream);
      // Only origPtr may differ from bzip2's (its sort orders equal rotations its own way).
      if (reference !== undefined) expect(Buffer.compare(withoutOrigPtr(stream), withoutOrigPtr(reference)), name).toBe(0);
    }
  });

  it("ends a 900k block where bzip2 does: after 899,981 bytes as RLE1 counts them, a run going on into the next block", { timeout: HANG_MS }, async () => {
    const cases: [string, Uint8Array][] = [
      ["899,981 bytes of noise (one full block)", noise(899981)],
      ["899,982 bytes of noise (one byte into a second block)", noise(899982)],
      // 4 equal bytes + count = 5 block bytes for 255 input bytes: RLE1 fits far more than 900 kB in one block.
      ["2,000,000 bytes of runs of 255 (RLE1 puts them in one block)", Uint8Array.from({ length: 2000000 }, (_, i) => Math.floor(i / 255) & 0xff)],
      // Noise filling the block to 3 short of the limit, then a long run: the pair that crosses the limit ends the block.
      ["a run crossing the block limit", Uint8Array.from([...noise(899978), ...fill(600, 0x55), ...noise(1000, "tail")])],
    ];
    for (const [name, input] of cases) {
      const stream = encodeBzip2(input);
      const reference = await checkStream(name, input, stream);
      if (reference !== undefined) expect(Buffer.compare(stream, reference), name).toBe(0);
    }
    expect(countBlocks(encodeBzip2(cases[0]![1]))).toBe(1);
    expect(countBlocks(encodeBzip2(cases[1]![1]))).toBe(2);
    expect(countBlocks(encodeBzip2(cases[2]![1]))).toBe(1);
    expect(countBlocks(encodeBzip2(cases[3]![1]))).toBe(2);
  });

  it("writes many blocks at level 1 as bzip2 -1 does, and every level's header", { timeout: HANG_MS }, async () => {
    const input = Uint8Array.from([...text, ...elf.subarray(0, 250000), ...noise(120000), ...fill(70000, 0), ...text]);
    for (const level of [1, 2, 5, 9]) {
      const stream = encodeBzip2(input, { level });
      expect(String.fromCharCode(...stream.subarray(0, 4))).toBe(`BZh${level}`);
      const reference = await checkStream(`level ${level}`, input, stream, level);
      if (reference !== undefined) expect(Buffer.compare(stream, reference), `level ${level}`).toBe(0);
    }
    expect(countBlocks(encodeBzip2(input, { level: 1 }))).toBeGreaterThan(4);
  });

  it("gives the same bytes for one push and for many small pushes, and returns blocks as they fill", { timeout: HANG_MS }, async () => {
    // Six level-1 blocks, with runs and noise so that block ends fall inside runs and between pairs.
    const input = Uint8Array.from([...elf.subarray(0, 150000), ...fill(1000, 9), ...text, ...noise(100000), ...fill(70000, 0), ...text]);
    const whole = encodeBzip2(input, { level: 1 });
    expect(countBlocks(whole)).toBe(6);
    const reference = await checkStream("six level-1 blocks", input, whole, 1);
    if (reference !== undefined) expect(Buffer.compare(whole, reference)).toBe(0);
    // Fixed patterns (single bytes, RLE1 edges), then 20 drawn from a seeded generator (xorshift32).
    const patterns: number[][] = [[1], [3, 4, 5, 255, 256], [7, 1000, 65536], [0, 2, 0, 99981]];
    let state = 0x2545f491;
    for (let k = 0; k < 20; k++) {
      patterns.push(Array.from({ length: 1 + (k % 7) }, () => {
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        return [(state >>> 0) % 8, (state >>> 0) % 600, (state >>> 0) % 70000][k % 3]!;
      }));
    }
    for (const steps of patterns) {
      // A pattern of zeros only would never advance.
      if (!steps.some((s) => s > 0)) steps.push(1);
      const encoder = createBzip2Encoder({ level: 1 });
      const pieces: Uint8Array[] = [];
      for (let at = 0, k = 0; at < input.length; k++) {
        const step = steps[k % steps.length]!;
        pieces.push(...encoder.push(input.subarray(at, at + step)));
        at += step;
      }
      // 100k blocks fill long before the end: output must come out of push, not all at finish.
      expect(pieces.length, `steps ${steps.join(",")}`).toBeGreaterThan(3);
      pieces.push(...encoder.push(new Uint8Array(0)), ...encoder.finish());
      expect(Buffer.compare(Buffer.concat(pieces), whole), `steps ${steps.join(",")}`).toBe(0);
    }
  });

  it("imports nothing from Node (it runs in browsers)", () => {
    for (const file of ["bzip2-encode.ts", "bzip2-bwt.ts", "bzip2-crc.ts", "chunk-encoder.ts"]) {
      const source = readFileSync(new URL(`../../src/compress/${file}`, import.meta.url), "utf8");
      const specifiers = [...source.matchAll(/^import[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1]!);
      // Relative imports only, and those are the error class and the encoder's own modules.
      expect(specifiers.filter((s) => !s.startsWith("./") && !s.startsWith("../")), file).toEqual([]);
      expect(specifiers.every((s) => ["../engine/errors.js", "./bzip2-bwt.js", "./bzip2-crc.js", "./chunk-encoder.js"].includes(s)), `${file}: ${specifiers.join(", ")}`).toBe(true);
      expect(source.includes("Buffer"), file).toBe(false);
    }
  });

  it("refuses a level outside 1-9 and a push after finish", () => {
    for (const level of [0, 10, 1.5, Number.NaN]) expect(() => createBzip2Encoder({ level })).toThrow(OffloadKitError);
    const encoder = createBzip2Encoder();
    encoder.finish();
    expect(() => encoder.push(Uint8Array.of(1))).toThrow(OffloadKitError);
    expect(() => encoder.finish()).toThrow(OffloadKitError);
  });
});

/** A one-block stream with its origPtr (24 bits after header, magic, CRC and the randomised bit) zeroed. */
function withoutOrigPtr(stream: Uint8Array): Uint8Array {
  const out = stream.slice();
  for (let bit = 8 * (4 + 6 + 4) + 1; bit < 8 * (4 + 6 + 4) + 1 + 24; bit++) out[bit >> 3]! &= ~(0x80 >> (bit & 7));
  return out;
}

/** Blocks in a stream: block magics found at any bit offset (a test helper; the chance of a false hit is ~2^-48 per bit). */
function countBlocks(stream: Uint8Array): number {
  let count = 0;
  let window = 0n;
  const mask = (1n << 48n) - 1n;
  for (let i = 4; i < stream.length; i++) {
    for (let bit = 7; bit >= 0; bit--) {
      window = ((window << 1n) | BigInt((stream[i]! >> bit) & 1)) & mask;
      if (window === 0x314159265359n) count++;
    }
  }
  return count;
}
