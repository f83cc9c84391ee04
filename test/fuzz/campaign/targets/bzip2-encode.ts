/**
 * The bzip2 encoder (src/compress/bzip2-encode.ts). The input's first byte picks the level (1-9) and the
 * way the rest is pushed; the rest is the data: random bytes, runs around RLE1's edges (3-5, 255-257,
 * 510), periodic data (blocks whose rotations repeat: the BWT's primitive-root path), few-symbol
 * alphabets, text, and mixes of these, up to 60 kB. `run` encodes it pushed in pieces whose sizes follow from the input (1 byte to 64 KiB, empty pushes
 * too); the round trip requires src/packages/bzip2.ts to decode the stream to the data and the one-shot
 * encoder to give the same bytes.
 *
 * Streams of several blocks are left to test/compress/bzip2-encode.test.ts (block ends compared with
 * bzip2's byte for byte, 24 ways of pushing a level-1 stream of 6 blocks, 20 of them drawn at random): the campaign's
 * allocation watch wraps the typed-array constructors in proxies, which takes V8 off its fast typed-array
 * paths (measured: a 112 kB level-1 stream 60 ms unwatched, 600-800 ms watched), so a two-block case would
 * not fit the 2-second case limit.
 */
import { createHash } from "node:crypto";
import { createBzip2Encoder, encodeBzip2 } from "../../../../src/compress/bzip2-encode.js";
import { concatBytes } from "../../../../src/formats/bytes.js";
import { decodeBzip2 } from "../../../../src/packages/bzip2.js";
import type { Rand } from "../rand.js";
import type { Sample } from "../sample.js";
import type { FuzzTarget } from "../target.js";

const WORDS = ["gfx90a", "gfx942:xnack+", "__CLANG_OFFLOAD_BUNDLE__", "hip", "amdgcn-amd-amdhsa", " ", "\n", "\0\0\0\0", "info/paths.json"];
const RUNS = [1, 2, 3, 4, 5, 6, 254, 255, 256, 257, 259, 510, 511, 1000];

function alphabet(r: Rand): Uint8Array {
  return r.bytes(r.range(1, 4));
}

function piece(r: Rand): Uint8Array {
  switch (r.int(5)) {
    case 0:
      return r.bytes(r.size(4096));
    case 1: {
      const symbols = alphabet(r);
      const parts: Uint8Array[] = [];
      for (let n = r.size(12); n > 0; n--) parts.push(new Uint8Array(r.bool(0.8) ? r.pick(RUNS) : r.int(3000)).fill(r.pick([...symbols])));
      return concatBytes(parts);
    }
    case 2: {
      const word = r.bool(0.5) ? r.bytes(r.range(1, 300)) : r.bytes(r.range(1, 8), alphabet(r));
      const length = r.size(20000);
      return Uint8Array.from({ length }, (_, i) => word[i % word.length]!);
    }
    case 3:
      return r.bytes(r.size(8000), alphabet(r));
    default: {
      let text = "";
      for (let n = r.size(600); n > 0; n--) text += r.pick(WORDS);
      return new TextEncoder().encode(text);
    }
  }
}

function generate(r: Rand): Sample {
  const level = r.range(1, 9);
  const parts: Uint8Array[] = [];
  for (let n = r.range(1, 3); n > 0; n--) parts.push(piece(r));
  const data = concatBytes(parts);
  return { bytes: concatBytes([Uint8Array.of(level - 1 + 9 * r.int(28)), data]), fields: [{ at: 0, size: 1, kind: "kind" }] };
}

function levelOf(input: Uint8Array): number {
  return ((input[0] ?? 0) % 9) + 1;
}

/** The last input `run` encoded and its stream: the round trip that follows reuses it. */
let last: { input: Uint8Array; stream: Uint8Array } | undefined;

/** Encodes `input[1..]` pushed in pieces whose sizes follow from the input (a case replays the same way). */
function encodeInPieces(input: Uint8Array): Uint8Array {
  if (last?.input === input) return last.stream;
  const data = input.subarray(1);
  const encoder = createBzip2Encoder({ level: levelOf(input) });
  const out: Uint8Array[] = [];
  let state = (input.length * 2654435761 + (input[0] ?? 0)) >>> 0;
  for (let at = 0; at < data.length;) {
    state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0;
    const step = [0, 1, 3, 4, 255, 256, 4096, 65536][state % 8]!;
    out.push(...encoder.push(data.subarray(at, at + step)));
    at += step;
  }
  out.push(...encoder.finish());
  const stream = concatBytes(out);
  last = { input, stream };
  return stream;
}

async function decode(stream: Uint8Array): Promise<Uint8Array> {
  const out: Uint8Array[] = [];
  for await (const p of decodeBzip2((async function* () { yield stream; })())) out.push(p);
  return concatBytes(out);
}

export const bzip2EncodeTarget: FuzzTarget = {
  name: "bzip2-encode",
  about: "bzip2 encoder (src/compress/bzip2-encode.ts): runs, periodic data, few-symbol alphabets, text, pushed in pieces; decoded by src/packages/bzip2.ts",
  engines: false,
  sources: false,
  generate,
  run(input) {
    const stream = encodeInPieces(input);
    return { level: levelOf(input), bytes: stream.length, sha256: createHash("sha256").update(stream).digest("hex").slice(0, 16) };
  },
  // The largest buffers are per block: the suffix sort's Int32Arrays (4 bytes per block byte after RLE1,
  // which may grow the data by a quarter) and the output bound (17 bits per symbol).
  allocBudget: (length) => 6 * length + 64 * 1024,
  async roundTrip(input) {
    const data = input.subarray(1);
    const stream = encodeInPieces(input);
    const back = await decode(stream);
    if (Buffer.compare(back, data) !== 0) return `${data.length} bytes at level ${levelOf(input)} decode to ${back.length} different bytes`;
    if (Buffer.compare(encodeBzip2(data, { level: levelOf(input) }), stream) !== 0) return "one push and many pushes give different streams";
    return undefined;
  },
};
