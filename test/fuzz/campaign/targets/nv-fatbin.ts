/**
 * NVIDIA fatbins (src/formats/nv-fatbin.ts) and the LZ4 block decoder (src/compress/lz4-block.ts).
 *
 * `nv-fatbin`: containers of synthetic entries (PTX and ELF kinds, 64- to 112-byte headers, payloads stored
 * plain, as LZ4 blocks or as zstd frames), or the nvcc 13 fixtures' real sections, mutated by field. The
 * in-memory parse and the positioned-read walk (through a chunked source) must agree; every entry is then
 * decoded, each failure our error. Round trip: each container rebuilt from its entries is its own bytes, and
 * a container of every other entry parses to those entries.
 *
 * `lz4-block`: a u32 capacity and an LZ4 block from a small greedy encoder here (literal runs, overlapping
 * and distant matches, length extensions); decoding never gives more than the capacity, and a valid block
 * decodes to what was encoded. Round trip: src/compress/lz4-block.ts's encoder over the decoded bytes and
 * over the raw input decodes back to them.
 */
import { decodeLz4Block, encodeLz4Block as encodeLz4BlockProduction } from "../../../../src/compress/lz4-block.js";
import { nodeCodecs } from "../../../../src/compress/node/codecs.js";
import { OffloadKitError } from "../../../../src/engine/errors.js";
import { readExact } from "../../../../src/engine/source.js";
import { concatBytes } from "../../../../src/formats/bytes.js";
import {
  NV_FLAG_LZ4, NV_FLAG_ZSTD, decodeNvEntry, parseNvFatbinContainer, parseNvFatbinContainers, walkNvFatbinContainers, writeNvFatbinContainer,
} from "../../../../src/formats/nv-fatbin.js";
import { fatbinSections } from "../../../fixtures/nv/sections.js";
import type { Rand } from "../rand.js";
import { u16, u32, u64 } from "../sample.js";
import type { Field, Sample } from "../sample.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";

/** A valid LZ4 block for `data`: greedy matches of 4+ bytes found through a hash of the next 4 bytes. */
export function encodeLz4Block(data: Uint8Array): Uint8Array {
  const out: number[] = [];
  const table = new Map<number, number>();
  const lengthBytes = (n: number) => {
    for (; n >= 255; n -= 255) out.push(255);
    out.push(n);
  };
  let anchor = 0;
  let at = 0;
  // The format wants the last 5 bytes as literals and no match starting in the last 12.
  while (at + 12 <= data.length) {
    const key = data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24);
    const candidate = table.get(key);
    table.set(key, at);
    if (candidate === undefined || at - candidate > 65535 || !data.subarray(candidate, candidate + 4).every((b, i) => b === data[at + i])) {
      at++;
      continue;
    }
    let length = 4;
    while (at + length < data.length - 5 && data[candidate + length] === data[at + length]) length++;
    const literals = at - anchor;
    out.push((Math.min(literals, 15) << 4) | Math.min(length - 4, 15));
    if (literals >= 15) lengthBytes(literals - 15);
    for (let i = anchor; i < at; i++) out.push(data[i]!);
    out.push((at - candidate) & 0xff, (at - candidate) >> 8);
    if (length - 4 >= 15) lengthBytes(length - 4 - 15);
    at += length;
    anchor = at;
  }
  const literals = data.length - anchor;
  out.push(Math.min(literals, 15) << 4);
  if (literals >= 15) lengthBytes(literals - 15);
  for (let i = anchor; i < data.length; i++) out.push(data[i]!);
  return Uint8Array.from(out);
}

/** Data worth compressing: runs, repeats at short and long distances, noise. */
function compressible(r: Rand, max: number): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  const want = r.size(max);
  while (total < want) {
    const choice = r.int(4);
    const part = choice === 0 ? new Uint8Array(r.size(300)).fill(r.int(256))
      : choice === 1 && total > 0 ? parts[r.int(parts.length)]!.slice()
        : choice === 2 ? Uint8Array.from({ length: r.size(200) }, (_, i) => "abc"[i % (1 + r.int(3))]!.charCodeAt(0))
          : r.bytes(r.size(64));
    parts.push(part);
    total += part.length;
  }
  return concatBytes(parts).subarray(0, want);
}

function align(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/** One entry: header fields recorded at `base`. */
function entrySample(r: Rand, fields: Field[], base: number): Uint8Array {
  const kind = r.pick([1, 2, 2, r.int(5)]);
  const headerSize = r.pick([64, 64, 72, 80, 112]);
  const plain = kind === 1 ? concatBytes([compressible(r, 400), Uint8Array.of(0)]) : compressible(r, 600);
  const method = r.pick(["none", "none", "lz4", "zstd"] as const);
  const stored = method === "lz4" ? encodeLz4Block(plain) : method === "zstd" ? nodeCodecs.zstdCompress(plain, 1) : plain;
  const padded = align(stored.length, r.pick([8, 16]));
  const header = new Uint8Array(headerSize);
  const view = new DataView(header.buffer);
  view.setUint16(0, kind, true);
  view.setUint16(2, 0x0101, true);
  view.setUint32(4, headerSize, true);
  view.setUint32(8, padded, true);
  view.setUint32(16, method === "none" ? 0 : stored.length, true);
  view.setUint32(20, headerSize > 64 && r.bool(0.5) ? 64 : 0, true);
  view.setUint16(24, r.int(10), true);
  view.setUint16(26, r.int(10), true);
  view.setUint32(28, r.pick([50, 75, 80, 86, 90, 100, 120]), true);
  view.setUint32(40, 0x11 | (method === "lz4" ? NV_FLAG_LZ4 : method === "zstd" ? NV_FLAG_ZSTD : 0) | (r.bool(0.1) ? 0x100000 : 0), true);
  view.setUint32(56, method === "none" ? 0 : plain.length, true);
  fields.push(u16(base, "kind"), u32(base + 4, "size"), u64(base + 8, "size"), u32(base + 16, "size"), u32(base + 20, "offset"),
    u32(base + 28, "kind"), u64(base + 40, "kind"), u64(base + 56, "size"));
  const payload = new Uint8Array(padded);
  payload.set(stored);
  return concatBytes([header, payload]);
}

let seeds: Uint8Array[] | undefined;

function fixtureSections(): Uint8Array[] {
  // The campaign runs bundled under test/fuzz/.build, from the repository root.
  const dir = `${process.cwd()}/test/fixtures/nv`;
  seeds ??= ["kernels.zstd.o", "kernels-sm100.fatbin", "libkernels.so"].flatMap((name) => fatbinSections(name, dir).map((s) => s.bytes.slice()));
  return seeds;
}

function containerSample(r: Rand, fields: Field[], base: number): Uint8Array {
  const parts: Uint8Array[] = [];
  let at = base + 16;
  for (let n = r.size(4); n > 0; n--) {
    const entry = entrySample(r, fields, at);
    parts.push(entry);
    at += entry.length;
  }
  const body = concatBytes(parts);
  const header = new Uint8Array(16);
  const view = new DataView(header.buffer);
  view.setUint32(0, 0xba55ed50, true);
  view.setUint16(4, 1, true);
  view.setUint16(6, 16, true);
  view.setUint32(8, body.length, true);
  fields.push(u32(base, "magic"), u16(base + 4, "kind"), u16(base + 6, "size"), u64(base + 8, "size"));
  return concatBytes([header, body]);
}

function fatbinSample(r: Rand): Sample {
  if (r.bool(0.15)) {
    const bytes = r.pick(fixtureSections());
    // The real sections' fields, found by parsing them.
    const fields: Field[] = [];
    for (const c of parseNvFatbinContainers(bytes).containers) {
      fields.push(u32(c.offset, "magic"), u16(c.offset + 6, "size"), u64(c.offset + 8, "size"));
      for (const e of c.entries) fields.push(u32(e.offset + 4, "size"), u64(e.offset + 8, "size"), u32(e.offset + 16, "size"), u64(e.offset + 40, "kind"), u64(e.offset + 56, "size"));
    }
    return { bytes, fields };
  }
  const fields: Field[] = [];
  const parts: Uint8Array[] = [];
  let at = 0;
  for (let n = r.bool(0.3) ? r.range(2, 3) : 1; n > 0; n--) {
    const container = containerSample(r, fields, at);
    parts.push(container);
    at += container.length;
  }
  return { bytes: concatBytes(parts), fields };
}

const zstd = (frame: Uint8Array, capacity: number) => nodeCodecs.zstdDecompressFrame(frame, capacity);

function describeRun(input: Uint8Array, ctx: RunContext) {
  const run = parseNvFatbinContainers(input);
  if (ctx.chunked) {
    const source = chunkedSource(input);
    const walked = walkNvFatbinContainers((p, l) => readExact(source, p, Math.max(0, Math.min(l, input.length - p))), input.length);
    const a = JSON.stringify(run.containers.map((c) => c.entries.map((e) => [e.offset, e.headerSize, e.paddedSize, e.archName])));
    const b = JSON.stringify(walked.containers.map((c) => c.entries.map((e) => [e.offset, e.headerSize, e.paddedSize, e.archName])));
    if (a !== b || run.end !== walked.end) throw new Error(`in-memory parse and positioned walk disagree:\n${a}\n${b}`);
  }
  return {
    end: run.end,
    trailing: run.trailing ?? null,
    containers: run.containers.map((c) => c.entries.map((e) => {
      let decoded: number | string;
      try {
        decoded = decodeNvEntry(e, e.rawPayload, zstd).length;
      } catch (error) {
        if (!(error instanceof OffloadKitError)) throw error;
        decoded = error.code;
      }
      return [e.archName, e.compression, e.payloadSize, decoded];
    })),
  };
}

export const nvFatbinTarget: FuzzTarget = {
  name: "nv-fatbin",
  about: "NVIDIA fatbin containers and entries (in memory and by positioned reads), entry decoding (plain, LZ4, zstd), rebuilt containers",
  engines: false,
  sources: true,
  magic: Uint8Array.of(0x50, 0xed, 0x55, 0xba),
  generate: fatbinSample,
  run: describeRun,
  // Decoding is bounded by the formats' own ratios (LZ4 255:1, zstd 32768:1).
  allocBudget: (length) => 64 * 1024 + 32768 * length,
  roundTrip(input) {
    for (const c of parseNvFatbinContainers(input).containers) {
      const rebuilt = writeNvFatbinContainer(c.entries, { header: c.rawHeader });
      if (Buffer.compare(rebuilt, input.subarray(c.offset, c.offset + c.size)) !== 0) return `container at ${c.offset} rebuilds differently`;
      const kept = c.entries.filter((_, i) => i % 2 === 0);
      const again = parseNvFatbinContainer(writeNvFatbinContainer(kept));
      if (again.entries.length !== kept.length || again.entries.some((e, i) => Buffer.compare(e.rawHeader, kept[i]!.rawHeader) !== 0 || Buffer.compare(e.rawPayload, kept[i]!.rawPayload) !== 0)) {
        return `a container of every other entry of the one at ${c.offset} parses differently`;
      }
    }
    return undefined;
  },
};

function lz4Sample(r: Rand): Sample {
  const data = compressible(r, 3000);
  const block = encodeLz4Block(data);
  const head = new Uint8Array(4);
  new DataView(head.buffer).setUint32(0, r.bool(0.8) ? data.length : data.length + r.int(64), true);
  return { bytes: concatBytes([head, block]), fields: [u32(0, "size")] };
}

/** Capacities above this are cut to it: the decoder allocates the capacity it is given. */
const MAX_CAPACITY = 1 << 20;

export const lz4BlockTarget: FuzzTarget = {
  name: "lz4-block",
  about: "LZ4 raw blocks (src/compress/lz4-block.ts): bounded output, bounded reads",
  engines: false,
  sources: false,
  generate: lz4Sample,
  run(input) {
    if (input.length < 4) return "short";
    const capacity = Math.min(new DataView(input.buffer, input.byteOffset).getUint32(0, true), MAX_CAPACITY);
    const out = decodeLz4Block(input.subarray(4), capacity);
    if (out.length > capacity) throw new Error(`decoded ${out.length} bytes into a capacity of ${capacity}`);
    return { length: out.length, head: Buffer.from(out.subarray(0, 16)).toString("hex") };
  },
  allocBudget: () => 2 * MAX_CAPACITY,
  roundTrip(input) {
    if (input.length < 4) return undefined;
    const capacity = Math.min(new DataView(input.buffer, input.byteOffset).getUint32(0, true), MAX_CAPACITY);
    const out = decodeLz4Block(input.subarray(4), capacity);
    const again = decodeLz4Block(encodeLz4Block(out), out.length);
    if (Buffer.compare(again, out) !== 0) return "re-encoded block decodes differently";
    // The production encoder (compress of NVIDIA entries) over the decoded bytes and over the raw input bytes.
    for (const data of [out, input.subarray(4)]) {
      const block = encodeLz4BlockProduction(data);
      if (Buffer.compare(decodeLz4Block(block, data.length), data) !== 0) return `src/compress/lz4-block.ts encodeLz4Block: ${data.length} bytes decode differently`;
    }
    return undefined;
  },
};
