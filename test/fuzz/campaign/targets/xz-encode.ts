/**
 * The TypeScript xz encoder (src/compress/xz-encode.ts, src/compress/lzma-encode.ts): every input must
 * come back unchanged through the browser's decoder (xz-decompress, WebAssembly xz-embedded, on the
 * project's Node path with OFFLOAD_KIT_XZ=wasm). An encoder accepts any bytes, so the input is the case:
 * its first byte picks the dictionary (4 KiB to 8 MiB), the second the search depth, the block size, the mode (fast or
 * normal: hash table and lazy step, or binary trees and optimal parsing) and the nice length, the next two seed
 * how the rest is split into pushes (1 byte to 1 MiB pieces). The generator writes structured data for
 * the coder's edges: runs (long matches and reps), blocks repeated at distances just inside and just
 * past the dictionary, noise (uncompressed chunks, and the 64 KiB packed limit), and now and then a
 * mostly-run input past 2 MiB that crosses the unpacked chunk limit. A stream that does not decode
 * to its input is thrown as a plain Error, which the campaign reports as a crash.
 */
import { createXzEncoder } from "../../../../src/compress/xz-encode.js";
import { nodeDecoders } from "../../../../src/packages/node/io.js";
import { Rand } from "../rand.js";
import type { Sample } from "../sample.js";
import type { FuzzTarget } from "../target.js";

const DICTIONARIES = [4096, 6144, 65536, 1 << 20, 8 << 20];
const DEPTHS = [1, 1, 2, 8];
/** Block sizes (the second byte's upper bits): the default (3 x dictionary, at least 1 MiB), tiny, near a chunk, one block. */
const BLOCKS = [undefined, 1000, 70_000, Infinity];
/** The second byte's bit 4 picks the mode, bits 5-6 the nice length (the default, the least, a middle one, the most). */
const MODES = ["fast", "normal"] as const;
const NICE = [undefined, 8, 32, 273];
const PARAMS = 4;

const decoders = nodeDecoders({ ...process.env, OFFLOAD_KIT_XZ: "wasm" });

function structured(r: Rand, dictionary: number): Uint8Array {
  const parts: Uint8Array[] = [];
  // Mostly small, so that a run of 20,000 cases takes minutes: a few in ten thousand cross 2 MiB.
  const big = r.bool(0.004);
  const roll = r.next();
  const target = big ? r.range((2 << 20) + 1000, (2 << 20) + 400_000) : roll < 0.75 ? r.size(200) : roll < 0.97 ? r.range(1000, 20_000) : r.range(60_000, 140_000);
  let length = 0;
  const history: Uint8Array[] = [];
  while (length < target) {
    let part: Uint8Array;
    const kind = big ? r.pick(["run", "run", "run", "noise"]) : r.pick(["run", "noise", "text", "repeat", "far", "bytes"]);
    if (kind === "run") {
      part = new Uint8Array(big ? r.range(300_000, 1 << 20) : r.size(5000)).fill(r.int(256));
    } else if (kind === "noise") {
      part = r.bytes(big ? r.range(1, 3000) : r.pick([r.size(300), r.range(60_000, 70_000)]));
    } else if (kind === "text") {
      part = new TextEncoder().encode(r.text(r.size(3000), "gfx90a942:xnack+- hip\n\0"));
    } else if (kind === "repeat" && history.length > 0) {
      const from = r.pick(history);
      part = from.subarray(r.int(from.length), r.int(from.length + 1));
    } else if (kind === "far" && length > 0) {
      // Filler so that the next copy of what came before lands just inside or just past the dictionary.
      const distance = dictionary + r.range(-300, 300);
      part = new Uint8Array(Math.max(0, Math.min(distance - length, 200_000))).fill(r.int(4));
    } else {
      part = r.bytes(r.size(64), Uint8Array.of(0, 1, 0xff, 0x41));
    }
    // The case's size decides: a part past it is cut there.
    if (part.length > target - length) part = part.subarray(0, Math.max(1, target - length));
    parts.push(part);
    if (part.length > 0 && history.length < 8) history.push(part);
    length += part.length;
  }
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function generate(r: Rand): Sample {
  const dictionaryIndex = r.int(DICTIONARIES.length);
  const data = structured(r, DICTIONARIES[dictionaryIndex]!);
  const bytes = new Uint8Array(PARAMS + data.length);
  bytes.set([dictionaryIndex, r.int(256), r.int(256), r.int(256)]);
  bytes.set(data, PARAMS);
  return { bytes, fields: [{ at: 0, size: 1, kind: "kind" }, { at: 1, size: 1, kind: "kind" }] };
}

async function encodeAndDecode(input: Uint8Array): Promise<{ dictionary: number; depth: number; blockSize: string; mode: string; niceLength: number | undefined; pushes: number; encoded: number; decoded: number }> {
  const dictionary = DICTIONARIES[(input[0] ?? 0) % DICTIONARIES.length]!;
  const depth = DEPTHS[(input[1] ?? 0) % DEPTHS.length]!;
  const blockSize = BLOCKS[((input[1] ?? 0) >>> 2) % BLOCKS.length];
  const mode = MODES[((input[1] ?? 0) >>> 4) & 1]!;
  const niceLength = NICE[((input[1] ?? 0) >>> 5) & 3];
  const data = input.subarray(Math.min(PARAMS, input.length));
  const r = new Rand(`split-${input[2] ?? 0}-${input[3] ?? 0}`);
  const encoder = createXzEncoder({ dictionarySize: dictionary, depth, blockSize, mode, niceLength });
  const out: Uint8Array[] = [];
  let pushes = 0;
  for (let at = 0; at < data.length; pushes++) {
    // Byte-sized pushes only for small inputs: each push costs a few microseconds whatever its size.
    const size = r.pick([data.length < 20_000 ? 1 : 1000, r.size(100) + (data.length >>> 8), r.range(1, 70_000), 1 << 20]);
    out.push(...encoder.push(data.subarray(at, at + size)));
    at += size;
  }
  out.push(...encoder.finish());
  const encoded = out.reduce((n, p) => n + p.length, 0);
  async function* stream(): AsyncGenerator<Uint8Array> {
    yield* out;
  }
  let decoded = 0;
  for await (const chunk of decoders.decode("xz", stream())) {
    for (let i = 0; i < chunk.length; i++) {
      if (chunk[i] !== data[decoded + i]) throw new Error(`decoded byte ${decoded + i} is ${chunk[i]}, the input had ${data[decoded + i]} (dictionary ${dictionary}, depth ${depth}, block ${blockSize}, ${mode}, nice ${niceLength})`);
    }
    decoded += chunk.length;
  }
  if (decoded !== data.length) throw new Error(`decoded ${decoded} bytes of ${data.length} (dictionary ${dictionary}, depth ${depth}, block ${blockSize}, ${mode}, nice ${niceLength})`);
  return { dictionary, depth, blockSize: String(blockSize), mode, niceLength, pushes, encoded, decoded };
}

export const xzEncodeTarget: FuzzTarget = {
  name: "xz-encode",
  about: "xz encoder (src/compress/xz-encode.ts) decoded by xz-decompress",
  engines: false,
  sources: false,
  generate,
  run: (input) => encodeAndDecode(input),
  // The window starts at 1 MiB and grows to the dictionary plus 6 MiB; the hash table is up to 4 MiB;
  // normal mode's binary trees are one array of 8 bytes per window byte (up to 2 x the dictionary).
  allocBudget: (length) => 16 * length + 16 * 1024 * 1024,
};
