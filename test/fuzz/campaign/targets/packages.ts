/**
 * Package indexes read at random access (src/packages/zip.ts, src/packages/rpm.ts): the zip central
 * directory (zip64 records and extra fields included) with each member's data offset, and the RPM lead and
 * headers. The streamed formats (tar, cpio, decoders) are async and covered by test/packages/hostile.test.ts.
 * Every member name must flatten to one safe file name (src/packages/names.ts).
 */
import { bytesSource } from "../../../../src/engine/source.js";
import { flattenMemberPath } from "../../../../src/packages/names.js";
import { readRpm } from "../../../../src/packages/rpm.js";
import { readZip, zipDataOffset } from "../../../../src/packages/zip.js";
import { attempt } from "../plain.js";
import type { Rand } from "../rand.js";
import type { Field, Sample } from "../sample.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";

const NAMES = ["torch/lib/libtorch_hip.so", "../../etc/x", "/abs", "a\\b", "nul\0x", "x.dist-info/RECORD", "info-x.tar.zst", "pkg-x.tar.zst", ""];

function le(value: number, size: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < size; i++) out.push(Math.floor(value / 2 ** (8 * i)) & 255);
  return out;
}

/** A zip of a few members (stored or "deflate" bytes, zip64 extra fields sometimes), with its fields. */
export function zipSample(r: Rand): Sample {
  const bytes: number[] = [];
  const fields: Field[] = [];
  const central: number[] = [];
  const centralFields: { at: number; size: number; kind: Field["kind"] }[] = [];
  const count = r.int(4);
  const zip64 = r.bool(0.3);
  for (let i = 0; i < count; i++) {
    const name = new TextEncoder().encode(r.pick(NAMES) + (r.bool(0.5) ? String(r.int(9)) : ""));
    const data = r.bytes(r.size(40));
    const method = r.pick([0, 8, 12, 93]);
    const localAt = bytes.length;
    fields.push({ at: localAt + 18, size: 4, kind: "size" }, { at: localAt + 26, size: 2, kind: "size" }, { at: localAt + 28, size: 2, kind: "size" });
    bytes.push(0x50, 0x4b, 3, 4, ...le(20, 2), ...le(0, 2), ...le(method, 2), 0, 0, 0, 0, 0, 0, 0, 0, ...le(data.length, 4), ...le(data.length, 4), ...le(name.length, 2), ...le(0, 2), ...name, ...data);
    const extra = zip64 ? [1, 0, 24, 0, ...le(data.length, 8), ...le(data.length, 8), ...le(localAt, 8)] : [];
    const c = central.length;
    centralFields.push({ at: c + 20, size: 4, kind: "size" }, { at: c + 24, size: 4, kind: "size" }, { at: c + 42, size: 4, kind: "offset" }, { at: c + 28, size: 2, kind: "size" }, { at: c + 30, size: 2, kind: "size" });
    const small = (v: number) => (zip64 ? 0xffffffff : v);
    central.push(0x50, 0x4b, 1, 2, ...le(0x314, 2), ...le(20, 2), ...le(r.pick([0, 1, 8]), 2), ...le(method, 2), 0, 0, 0, 0, 0, 0, 0, 0,
      ...le(small(data.length), 4), ...le(small(data.length), 4), ...le(name.length, 2), ...le(extra.length, 2), ...le(0, 2), 0, 0, 0, 0,
      ...le(r.pick([0o100644, 0o120777, 0]) * 65536, 4), ...le(small(localAt), 4), ...name, ...extra);
  }
  const dirAt = bytes.length;
  for (const f of centralFields) fields.push({ at: dirAt + f.at, size: f.size, kind: f.kind });
  bytes.push(...central);
  if (zip64) {
    const recordAt = bytes.length;
    fields.push({ at: recordAt + 32, size: 8, kind: "count" }, { at: recordAt + 40, size: 8, kind: "size" }, { at: recordAt + 48, size: 8, kind: "offset" });
    bytes.push(0x50, 0x4b, 6, 6, ...le(44, 8), ...le(45, 2), ...le(45, 2), 0, 0, 0, 0, 0, 0, 0, 0, ...le(count, 8), ...le(count, 8), ...le(central.length, 8), ...le(dirAt, 8));
    fields.push({ at: bytes.length + 8, size: 8, kind: "offset" });
    bytes.push(0x50, 0x4b, 6, 7, 0, 0, 0, 0, ...le(recordAt, 8), 1, 0, 0, 0);
  }
  const endAt = bytes.length;
  fields.push({ at: endAt + 10, size: 2, kind: "count" }, { at: endAt + 12, size: 4, kind: "size" }, { at: endAt + 16, size: 4, kind: "offset" }, { at: endAt + 20, size: 2, kind: "size" });
  bytes.push(0x50, 0x4b, 5, 6, 0, 0, 0, 0, ...le(zip64 ? 0xffff : count, 2), ...le(zip64 ? 0xffff : count, 2), ...le(zip64 ? 0xffffffff : central.length, 4), ...le(zip64 ? 0xffffffff : dirAt, 4), 0, 0);
  return { bytes: Uint8Array.from(bytes), fields };
}

/** An RPM: lead, a signature header, a main header with payload tags, a few payload bytes. */
export function rpmSample(r: Rand): Sample {
  const bytes: number[] = [0xed, 0xab, 0xee, 0xdb, 3, 0, ...new Array(90).fill(0)];
  const fields: Field[] = [];
  const be = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  const header = (tags: readonly [number, number, string][]) => {
    const at = bytes.length;
    const store: number[] = [];
    const index: number[] = [];
    tags.forEach(([tag, type, value], i) => {
      fields.push({ at: at + 16 + i * 16 + 8, size: 4, kind: "offset", bigEndian: true }, { at: at + 16 + i * 16 + 4, size: 4, kind: "kind", bigEndian: true });
      index.push(...be(tag), ...be(type), ...be(store.length), ...be(1));
      store.push(...new TextEncoder().encode(`${value}\0`));
    });
    fields.push({ at: at + 8, size: 4, kind: "count", bigEndian: true }, { at: at + 12, size: 4, kind: "size", bigEndian: true });
    bytes.push(0x8e, 0xad, 0xe8, 0x01, 0, 0, 0, 0, ...be(tags.length), ...be(store.length), ...index, ...store);
  };
  header(r.bool(0.5) ? [] : [[1000, 6, "sig"]]);
  while (bytes.length % 8) bytes.push(0);
  header([[1000, 6, "name"], [1124, 6, r.pick(["cpio", "ar"])], [1125, 6, r.pick(["zstd", "xz", "gzip", "bzip2", ""])]]);
  bytes.push(...r.bytes(r.size(16)));
  return { bytes: Uint8Array.from(bytes), fields };
}

function source(input: Uint8Array, ctx: RunContext) {
  return ctx.chunked ? chunkedSource(input) : bytesSource(input);
}

export const zipTarget: FuzzTarget = {
  name: "zip",
  about: "zip central directory, zip64 records and extra fields, local headers (readZip, zipDataOffset); flattened member names",
  engines: false,
  sources: true,
  magic: Uint8Array.of(0x50, 0x4b, 3, 4),
  dictionary: NAMES,
  generate: zipSample,
  run(input, ctx) {
    const s = source(input, ctx);
    const index = readZip(s);
    return index.members.map((m) => {
      const flat = flattenMemberPath("p.whl", [m.name]);
      if (/[/\\\0]/.test(flat) || flat === "." || flat === "..") throw new Error(`member name '${m.name}' flattens to '${flat}'`);
      return { ...m, flat, data: attempt(() => zipDataOffset(s, m)) };
    });
  },
};

export const rpmTarget: FuzzTarget = {
  name: "rpm",
  about: "RPM lead, signature and main headers (readRpm)",
  engines: false,
  sources: true,
  magic: Uint8Array.of(0xed, 0xab, 0xee, 0xdb),
  generate: rpmSample,
  run(input, ctx) {
    return readRpm(source(input, ctx));
  },
};
