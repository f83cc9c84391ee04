/**
 * Writers of the streamed package formats for the campaign's generators (tar with GNU and pax extensions,
 * cpio newc, docker-save and OCI image layouts), each giving the header fields it wrote so mutations can
 * aim at them. Also what the streamed targets share: the input fed as a stream in pieces whose sizes come
 * from the input itself (so a case replays the same way), and the rule that an error names a real offset.
 */
import { gzipSync } from "node:zlib";
import { OffloadKitError } from "../../../../src/engine/errors.js";
import { TAR_BLOCK } from "../../../../src/packages/tar.js";
import type { Rand } from "../rand.js";
import type { Field, Sample } from "../sample.js";

const utf8 = new TextEncoder();

/** Names the walkers give meaning to: whiteouts, image layout files, hostile paths, long paths. */
export const PACKAGE_NAMES = [
  "usr/lib/libx.so", "./usr/lib/liby.so", "/abs/z", "../../etc/passwd", "a\\b", "nul\0x", ".wh.libx.so", "usr/lib/.wh.libx.so",
  "usr/.wh..wh..opq", ".wh..wh..opq", "usr/lib/", "manifest.json", "index.json", "oci-layout", "blobs/sha256/", "TRAILER!!!",
  `${"d/".repeat(60)}long.so`, "",
];

/** A Sample under construction: bytes and the fields written so far. */
export class Writer {
  readonly bytes: number[] = [];
  readonly fields: Field[] = [];

  get length(): number {
    return this.bytes.length;
  }

  push(data: ArrayLike<number>): void {
    for (let i = 0; i < data.length; i++) this.bytes.push(data[i]!);
  }

  field(at: number, size: number, kind: Field["kind"], extra: Partial<Field> = {}): void {
    this.fields.push({ at, size, kind, ...extra });
  }

  sample(): Sample {
    return { bytes: Uint8Array.from(this.bytes), fields: this.fields };
  }
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, "0").slice(-(width - 1)) + "\0";
}

export function tarChecksum(header: Uint8Array): void {
  header.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of header) sum += b;
  header.set(utf8.encode(`${sum.toString(8).padStart(6, "0")}\0 `), 148);
}

export interface TarHeaderOptions {
  readonly type?: string;
  readonly linkName?: string;
  /** "ustar" (POSIX), "gnu", or "v7" (no magic). */
  readonly magic?: "ustar" | "gnu" | "v7";
  /** Write the size as GNU base-256. */
  readonly base256?: boolean;
  /** Declared size when it differs from the body's. */
  readonly size?: number;
  readonly prefix?: string;
}

/** One tar header and its body, padded, with the header's fields. */
export function writeTarEntry(w: Writer, name: string, body: Uint8Array, options: TarHeaderOptions = {}): void {
  const at = w.length;
  const header = new Uint8Array(TAR_BLOCK);
  const put = (text: string, offset: number, max: number) => header.set(utf8.encode(text).subarray(0, max), offset);
  put(name, 0, 100);
  put(octal(0o644, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  const size = options.size ?? body.length;
  if (options.base256) {
    header[124] = 0x80;
    let v = size;
    for (let i = 135; i > 124; i--) {
      header[i] = v % 256;
      v = Math.floor(v / 256);
    }
  } else put(octal(size, 12), 124, 12);
  put(octal(0, 12), 136, 12);
  put(options.type ?? "0", 156, 1);
  if (options.linkName !== undefined) put(options.linkName, 157, 100);
  const magic = options.magic ?? "ustar";
  if (magic === "ustar") {
    put("ustar\0", 257, 6);
    put("00", 263, 2);
    if (options.prefix !== undefined) put(options.prefix, 345, 155);
  } else if (magic === "gnu") put("ustar  \0", 257, 8);
  tarChecksum(header);
  w.push(header);
  w.field(at, 100, "text");
  w.field(at + 100, 8, "size", { decimal: true });
  w.field(at + 124, 12, "size", { decimal: true });
  if (options.base256) w.field(at + 128, 8, "size", { bigEndian: true });
  w.field(at + 156, 1, "kind");
  w.field(at + 157, 100, "text");
  if (magic === "ustar") w.field(at + 345, 155, "text");
  w.field(at + 257, 6, "magic");
  w.push(body);
  w.push(new Uint8Array((TAR_BLOCK - (body.length % TAR_BLOCK)) % TAR_BLOCK));
}

/** A pax extended header body: `<length> <key>=<value>\n` records. */
export function paxRecords(records: readonly [string, string][]): Uint8Array {
  let text = "";
  for (const [key, value] of records) {
    const body = ` ${key}=${value}\n`;
    let length = body.length + 1;
    while (String(length).length + body.length !== length) length = String(length).length + body.length;
    text += `${length}${body}`;
  }
  return utf8.encode(text);
}

export function endTar(w: Writer): void {
  w.push(new Uint8Array(2 * TAR_BLOCK));
}

/** One entry of a tar with a random header flavour: ustar, GNU long name, pax, base-256, v7. */
export function randomTarEntry(r: Rand, w: Writer, name: string, body: Uint8Array, type = "0", linkName?: string): void {
  const flavour = r.int(6);
  if (flavour === 1) {
    const longName = utf8.encode(`${name}\0`);
    writeTarEntry(w, "././@LongLink", longName, { type: "L", magic: "gnu" });
    if (linkName !== undefined && r.bool(0.5)) writeTarEntry(w, "././@LongLink", utf8.encode(`${linkName}\0`), { type: "K", magic: "gnu" });
    writeTarEntry(w, name.slice(0, 99), body, { type, linkName, magic: "gnu" });
    return;
  }
  if (flavour === 2) {
    const at = w.length + TAR_BLOCK;
    const records: [string, string][] = [["path", name]];
    if (linkName !== undefined) records.push(["linkpath", linkName]);
    if (r.bool(0.3)) records.push(["size", String(body.length)]);
    if (r.bool(0.2)) records.push(["mtime", "1700000000.5"]);
    writeTarEntry(w, "PaxHeaders/x", paxRecords(records), { type: r.bool(0.85) ? "x" : "g" });
    w.field(at, 2, "text");
    writeTarEntry(w, name.slice(0, 100), body, { type, linkName, size: r.bool(0.3) ? 0 : undefined });
    return;
  }
  if (flavour === 3) return writeTarEntry(w, name, body, { type, linkName, base256: true, magic: "gnu" });
  if (flavour === 4 && name.length > 100 && name.indexOf("/") > 0) {
    const cut = name.lastIndexOf("/", 100);
    if (cut > 0 && cut <= 155) return writeTarEntry(w, name.slice(cut + 1), body, { type, linkName, prefix: name.slice(0, cut) });
  }
  if (flavour === 5) return writeTarEntry(w, name, body, { type, linkName, magic: "v7" });
  writeTarEntry(w, name, body, { type, linkName });
}

/** A tar of a few entries of every kind (files, directories, links, devices), maybe missing its end blocks. */
export function tarSample(r: Rand, names = PACKAGE_NAMES): Sample {
  const w = new Writer();
  for (let i = r.int(5); i >= 0; i--) {
    const kind = r.pick(["0", "0", "0", "5", "2", "1", "3", "7", "\0"]);
    const name = r.pick(names) + (r.bool(0.4) ? String(r.int(9)) : "");
    const body = kind === "0" || kind === "7" || kind === "\0" ? r.bytes(r.size(1200)) : new Uint8Array(0);
    randomTarEntry(r, w, name, body, kind, kind === "1" || kind === "2" ? r.pick(names) : undefined);
  }
  if (r.bool(0.85)) endTar(w);
  return w.sample();
}

/** A newc cpio archive: files, directories, symlinks, a hard-link pair, the trailer (usually). */
export function cpioSample(r: Rand, names = PACKAGE_NAMES): Sample {
  const w = new Writer();
  const hex = (n: number) => (n >>> 0).toString(16).padStart(8, "0");
  const entry = (name: string, data: Uint8Array, mode: number, nlink = 1) => {
    const at = w.length;
    const nameBytes = utf8.encode(`${name}\0`);
    const magic = r.bool(0.9) ? "070701" : "070702";
    w.push(utf8.encode(`${magic}${[r.int(1000), mode, 0, 0, nlink, 0, data.length, 0, 0, 0, 0, nameBytes.length, 0].map(hex).join("")}`));
    w.field(at, 6, "magic");
    w.field(at + 14, 8, "text");
    w.field(at + 54, 8, "text");
    w.field(at + 94, 8, "text");
    w.push(nameBytes);
    w.push(new Uint8Array((4 - ((110 + nameBytes.length) % 4)) % 4));
    w.push(data);
    w.push(new Uint8Array((4 - (data.length % 4)) % 4));
  };
  for (let i = r.int(5); i >= 0; i--) {
    const name = r.pick(names);
    switch (r.int(5)) {
      case 0: entry(name, new Uint8Array(0), 0o040755); break;
      case 1: entry(name, utf8.encode(r.pick(names)), 0o120777); break;
      case 2: entry(name, new Uint8Array(0), 0o100644, 2); entry(`${name}.2`, r.bytes(r.size(300)), 0o100644, 2); break;
      default: entry(name, r.bytes(r.size(600)), 0o100644);
    }
  }
  if (r.bool(0.9)) entry("TRAILER!!!", new Uint8Array(0), 0);
  return w.sample();
}

/** Hex field values a cpio header can hold, for the dictionary. */
export const CPIO_TOKENS = ["FFFFFFFF", "7FFFFFFF", "00000000", "0000FFFF", "00010000", "00100000", "0001A4ED", "zzzzzzzz", "070701", "070702", "TRAILER!!!"];

/**
 * Recomputes the checksum of every 512-byte block that has one in a tar, on two inputs in three (by the input's
 * length): a mutated size or name then reaches the parser instead of stopping at the checksum, as a
 * custom mutator does for checksummed formats. The third keeps the bad checksums.
 */
export function repairTarChecksums(input: Uint8Array): Uint8Array {
  // Only a tar from its first byte: in a compressed stream, "ustar" at a block's offset 257 is data, and
  // rewriting it would corrupt a valid input.
  if (input.length % 3 === 0 || input.length < TAR_BLOCK || String.fromCharCode(...input.subarray(257, 262)) !== "ustar") return input;
  const out = input.slice();
  for (let at = 0; at + TAR_BLOCK <= out.length; at += TAR_BLOCK) {
    const block = out.subarray(at, at + TAR_BLOCK);
    const magic = String.fromCharCode(...block.subarray(257, 262));
    if (magic === "ustar") tarChecksum(block);
  }
  return out;
}

/**
 * The input as a stream, in pieces of 1 to 4096 bytes whose sizes follow from its bytes (a case replays
 * the same way; the reader's joins of pieces are exercised).
 */
export async function* pieces(input: Uint8Array): AsyncGenerator<Uint8Array> {
  let at = 0;
  let state = input.length * 2654435761 >>> 0;
  while (at < input.length) {
    state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0;
    const step = [1, 7, 64, 511, 512, 513, 4096][state % 7]!;
    yield input.slice(at, at + step);
    at += step;
  }
}

/**
 * Our errors must point inside what was read: an offset in [0, limit] (a stream's offsets count decoded
 * bytes, so `limit` is what the input could decode to). Anything else is a crash of the target.
 */
export function checkOffset(e: unknown, limit: number): never {
  if (e instanceof OffloadKitError) {
    if (e.offset !== undefined && (!Number.isSafeInteger(e.offset) || e.offset < 0 || e.offset > limit)) {
      throw new Error(`error ${e.code} at offset ${e.offset}, outside the ${limit} bytes read: ${e.message}`);
    }
  }
  throw e;
}

/** A layer: a tar with files, directories, whiteouts and opaque markers over a small set of paths. */
export function layerTar(r: Rand, paths: readonly string[]): Uint8Array {
  const w = new Writer();
  for (let i = r.range(1, 5); i > 0; i--) {
    const path = r.pick(paths);
    const slash = path.lastIndexOf("/");
    const dir = slash < 0 ? "" : path.slice(0, slash + 1);
    switch (r.int(6)) {
      case 0: writeTarEntry(w, `${dir}.wh.${path.slice(slash + 1)}`, new Uint8Array(0)); break;
      case 1: writeTarEntry(w, `${dir}.wh..wh..opq`, new Uint8Array(0)); break;
      case 2: writeTarEntry(w, dir === "" ? "./" : dir, new Uint8Array(0), { type: "5" }); break;
      case 3: writeTarEntry(w, path, new Uint8Array(0), { type: "2", linkName: r.pick(paths) }); break;
      default: writeTarEntry(w, r.bool(0.3) ? `./${path}` : path, r.bytes(r.range(1, 40)));
    }
  }
  endTar(w);
  return Uint8Array.from(w.bytes);
}

const IMAGE_PATHS = ["usr/lib/libx.so", "usr/lib/liby.so", "usr/lib/sub/libz.so", "opt/a.so", "etc/conf", "usr/lib/sub"];

/** A docker-save or OCI layout tarball of 1-3 layers (plain or gzip), with its outer fields. */
export function imageSample(r: Rand): Sample {
  const layers = Array.from({ length: r.range(1, 3) }, () => {
    const tar = layerTar(r, IMAGE_PATHS);
    return r.bool(0.5) ? gzipSync(tar, { level: 1 }) : tar;
  });
  const w = new Writer();
  const hexName = (i: number) => `${i.toString(16).padStart(2, "0")}${"ab".repeat(31)}`;
  if (r.bool(0.5)) {
    const names = layers.map((_, i) => `${hexName(i)}/layer.tar`);
    const manifest = [{ Config: "config.json", RepoTags: r.bool(0.7) ? ["test:1"] : [], Layers: r.bool(0.1) ? [...names, "missing/layer.tar"] : names }];
    if (r.bool(0.2)) manifest.push({ ...manifest[0]!, RepoTags: ["test:2"] });
    layers.forEach((layer, i) => writeTarEntry(w, names[i]!, layer));
    if (r.bool(0.2)) writeTarEntry(w, `${hexName(9)}/layer.tar`, new Uint8Array(0), { type: "2", linkName: `../${names[0]}` });
    writeTarEntry(w, "config.json", utf8.encode("{}"));
    writeTarEntry(w, "manifest.json", utf8.encode(JSON.stringify(manifest)));
  } else {
    const digest = (i: number) => `sha256:${hexName(i)}`;
    const blob = (d: string) => `blobs/${d.replace(":", "/")}`;
    const manifest = { schemaVersion: 2, layers: layers.map((_, i) => ({ digest: digest(i + 16) })) };
    const nested = r.bool(0.2);
    const index = { schemaVersion: 2, manifests: [{ digest: nested ? digest(64) : digest(32), annotations: { "org.opencontainers.image.ref.name": "test:1" } }] };
    writeTarEntry(w, "oci-layout", utf8.encode('{"imageLayoutVersion":"1.0.0"}'));
    writeTarEntry(w, "index.json", utf8.encode(JSON.stringify(index)));
    if (nested) writeTarEntry(w, blob(digest(64)), utf8.encode(JSON.stringify({ manifests: [{ digest: digest(32) }] })));
    writeTarEntry(w, blob(digest(32)), utf8.encode(JSON.stringify(manifest)));
    layers.forEach((layer, i) => writeTarEntry(w, blob(digest(i + 16)), layer));
  }
  endTar(w);
  return w.sample();
}
