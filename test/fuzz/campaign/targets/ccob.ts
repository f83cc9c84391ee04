/**
 * Compressed bundles (CCOB v1-v3, zlib and zstd, several members, several frames): the header walk
 * (src/formats/ccob.ts), the zstd frame walk (src/compress/zstd-frames.ts) and decoding, through the
 * in-memory API (decompressBundles) and the Node path (forEachDecompressed), which must agree; the
 * bundle inside is then read by both engines.
 */
import { decompressBundles } from "../../../../src/bundler/api.js";
import { compressBundleBytes, compressChunk } from "../../../../src/bundler/compressed.js";
import type { CompressionSettings } from "../../../../src/bundler/compressed.js";
import type { Codecs } from "../../../../src/compress/codecs.js";
import { bytesSource, readExact } from "../../../../src/engine/source.js";
import { concatBytes } from "../../../../src/formats/bytes.js";
import { readBinaryBundle } from "../../../../src/formats/bundle.js";
import { CCOB_HEADER_SIZE, writeCcobHeader } from "../../../../src/formats/ccob.js";
import type { CcobVersion } from "../../../../src/formats/ccob.js";
import { nodeCodecs } from "../../../../src/compress/node/codecs.js";
import { forEachDecompressed } from "../../../../src/compress/node/decompress.js";
import { Disagreement, plain } from "../plain.js";
import type { Rand } from "../rand.js";
import { latin1, u16, u32, u64, u8 } from "../sample.js";
import type { Field, Sample } from "../sample.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";
import { bundleSample } from "./bundle.js";

/** Declared sizes above this are refused before decoding (the CLIs' limit is 16 GiB; a fuzz case needs less). */
const MAX_DECOMPRESSED = 64 * 1024 * 1024;

/** Field positions of a zstd frame's header and block headers (read from a valid frame). */
function frameFields(bytes: Uint8Array, at: number, end: number): Field[] {
  const fields: Field[] = [u32(at, "magic"), u8(at + 4, "kind")];
  const d = bytes[at + 4]!;
  const single = (d >> 5) & 1;
  const fcsBytes = [single ? 1 : 0, 2, 4, 8][d >> 6]!;
  let p = at + 5 + (single ? 0 : 1) + [0, 1, 2, 4][d & 3]!;
  if (fcsBytes > 0) fields.push({ at: p, size: fcsBytes, kind: "size" });
  p += fcsBytes;
  while (p + 3 <= end) {
    fields.push({ at: p, size: 3, kind: "size" });
    const h = bytes[p]! | (bytes[p + 1]! << 8) | (bytes[p + 2]! << 16);
    p += 3 + (((h >> 1) & 3) === 1 ? 1 : h >>> 3);
    if (h & 1) break;
  }
  return fields;
}

function payload(r: Rand): Uint8Array {
  const bundle = bundleSample(r).bytes;
  if (r.bool(0.3)) return concatBytes([bundle, new Uint8Array(r.size(4000)).fill(r.int(256))]);
  return bundle;
}

function ccobMember(r: Rand, fields: Field[], base: number): Uint8Array {
  const version = r.pick([1, 2, 2, 3] as CcobVersion[]);
  const method = r.bool(0.8) ? 1 : 0;
  const settings: CompressionSettings = { version, method: method as 0 | 1, level: r.pick([1, 3]) };
  const data = payload(r);
  let member: Uint8Array;
  if (method === 1 && data.length > 64 && r.bool(0.3)) {
    // Several frames, as we write large bundles.
    const cut = r.range(1, data.length - 1);
    const frames = [compressChunk(nodeCodecs, settings, data.subarray(0, cut)), compressChunk(nodeCodecs, settings, data.subarray(cut))];
    const hash = compressBundleBytes(data, nodeCodecs, settings).hash;
    const body = concatBytes(frames);
    member = concatBytes([writeCcobHeader({ version, method: 1, compressedSize: body.length, uncompressedSize: data.length, hash }), body]);
  } else {
    const result = compressBundleBytes(data, nodeCodecs, settings);
    member = concatBytes([result.header, ...result.frames]);
  }
  const header = CCOB_HEADER_SIZE[version];
  fields.push(u16(base + 4, "kind"), u16(base + 6, "kind"));
  if (version === 1) fields.push(u32(base + 8, "size"));
  if (version === 2) fields.push(u32(base + 8, "size"), u32(base + 12, "size"));
  if (version === 3) fields.push(u64(base + 8, "size"), u64(base + 16, "size"));
  if (method === 1) {
    let at = header;
    while (at + 6 < member.length) {
      const frame = frameFields(member, at, member.length);
      fields.push(...frame.map((f) => ({ ...f, at: f.at + base })));
      const last = frame[frame.length - 1]!;
      const h = member[last.at]! | (member[last.at + 1]! << 8) | (member[last.at + 2]! << 16);
      at = last.at + 3 + (((h >> 1) & 3) === 1 ? 1 : h >>> 3) + ((member[at + 4]! >> 2) & 1 ? 4 : 0);
    }
  }
  return member;
}

function ccobSample(r: Rand): Sample {
  const fields: Field[] = [];
  const parts: Uint8Array[] = [];
  let at = 0;
  for (let n = r.bool(0.2) ? r.range(2, 3) : 1; n > 0; n--) {
    const member = ccobMember(r, fields, at);
    parts.push(member);
    at += member.length;
    if (n > 1 && r.bool(0.5)) {
      const pad = new Uint8Array(r.int(8));
      parts.push(pad);
      at += pad.length;
    }
  }
  return { bytes: concatBytes(parts), fields };
}

function summary(bytes: Uint8Array, ctx: RunContext) {
  const read = readBinaryBundle(bytesSource(bytes), { engine: ctx.engine });
  return { bytes, bundle: read.kind === "bundle" ? read.bundle.entries.map((e) => [e.id, e.offset, e.size]) : read.problem?.code ?? "none" };
}

async function memoryPath(input: Uint8Array, codecs: Codecs) {
  return decompressBundles(input, { codecs, maxDecompressedSize: MAX_DECOMPRESSED });
}

function nodePath(input: Uint8Array, chunked: boolean): Uint8Array[] {
  const out: Uint8Array[] = [];
  const source = chunked ? chunkedSource(input, 4096) : bytesSource(input);
  forEachDecompressed(source, { maxDecompressedSize: MAX_DECOMPRESSED, inMemoryLimit: Number.MAX_SAFE_INTEGER }, (decoded) => {
    out.push(readExact(decoded.source, 0, decoded.source.size));
  });
  return out;
}

export const ccobTarget: FuzzTarget = {
  name: "ccob",
  about: "compressed bundles: CCOB headers v1-v3, zstd frames, zlib streams (decompressBundles and the Node path), bundle inside (both engines)",
  engines: true,
  sources: true,
  magic: latin1("CCOB"),
  generate: ccobSample,
  async run(input, ctx) {
    let memory: Uint8Array[] | undefined;
    let memoryError: unknown;
    try {
      memory = await memoryPath(input, nodeCodecs);
    } catch (e) {
      memoryError = e;
    }
    let node: Uint8Array[] | undefined;
    let nodeError: unknown;
    try {
      node = nodePath(input, ctx.chunked);
    } catch (e) {
      nodeError = e;
    }
    // The two paths share the decoder but not the walk's callers: they must say the same.
    const said = (value: unknown, error: unknown) => JSON.stringify(plain(error !== undefined ? { code: (error as { code?: string }).code, message: (error as Error).message } : value));
    if (said(memory, memoryError) !== said(node, nodeError)) {
      throw new Disagreement(`decompressBundles: ${said(memory, memoryError)}\nforEachDecompressed: ${said(node, nodeError)}`);
    }
    if (memoryError !== undefined) throw memoryError;
    return memory!.map((bytes) => summary(bytes, ctx));
  },
  // A zstd block of 4 bytes can stand for 128 KiB (RLE): output beyond 32768 times the input is never real.
  allocBudget: (length) => 64 * 1024 + 32768 * length,
  async roundTrip(input) {
    const first = await memoryPath(input, nodeCodecs);
    for (const bundle of first) {
      const result = compressBundleBytes(bundle, nodeCodecs, { version: 3, method: 1, level: 1 });
      const again = await memoryPath(concatBytes([result.header, ...result.frames]), nodeCodecs);
      if (again.length !== 1 || Buffer.compare(again[0]!, bundle) !== 0) return "the recompressed bundle decompresses differently";
    }
    return undefined;
  },
};
