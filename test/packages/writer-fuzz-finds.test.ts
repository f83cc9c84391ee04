// What the package-writer fuzz target (test/fuzz/campaign/targets/package-writer.ts) found in the writers the
// CLI and the page share (src/packages/write/), each pinned here:
//  - a tar entry whose size is in a pax record that agrees with the header's size field: the edit rewrote the
//    field only, readers take the pax size, so the tar written read wrong (the page's read-back said
//    VERIFY_FAILED). Refused first (TAR_SIZE_IN_PAX); now the pax size record is rewritten with the field
//    (src/packages/write/tar-entry.ts, as the CLI's data.tar and layer writers do);
//  - a zip whose members share bytes, or whose local header offset lies past the directory: rewriteZip copied
//    the bytes between local offsets, so the page's reply held ranges outside the file (negative sizes) or
//    members written wrong; a stored member declaring another size than it stores was read past its end.
//    Refused now (ZIP_OVERLAP, ZIP_BAD_LOCAL, ZIP_BAD_SIZE) before anything is written;
//  - a zip member whose mode says symbolic link was edited as a file (the walker, and so the inspector, never
//    reads it); it is left as it is now, as the tar writers leave links;
//  - a wheel's RECORD decoded as UTF-8 and encoded again: a byte-order mark or a byte that is not UTF-8 in a
//    row nobody edited came back changed. Rewritten as bytes now;
//  - a .deb's md5sums line naming a non-ASCII path was not rewritten (its bytes were compared as latin1 with
//    the tar's UTF-8 name), so dpkg's md5sums said the old file's hash; and md5sums/control were decoded with
//    TextDecoder("latin1"), which browsers take for windows-1252: bytes 0x80-0x9f came back as other bytes.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { inflateRawSync } from "node:zlib";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { prunePackage } from "../../src/browser/prune-package/index.js";
import { loadBrowserCodecs } from "../../src/compress/browser.js";
import type { Codecs } from "../../src/compress/codecs.js";
import { OffloadKitError } from "../../src/engine/errors.js";
import { bytesSource } from "../../src/engine/source.js";
import { ChunkReader } from "../../src/packages/chunks.js";
import { readZip, zipDataOffset } from "../../src/packages/zip.js";
import { crc32 } from "../../src/inspector/zip.js";
import { editControlMember } from "../../src/packages/write/deb.js";
import type { EditedFile } from "../../src/packages/write/deb.js";
import { rewriteTarStream } from "../../src/packages/write/tar-stream.js";
import { tarEntry, tarOf } from "./build.js";

const BUNDLE = new Uint8Array(readFileSync(new URL("../fixtures/bundler/align16.19.bc", import.meta.url)));
let codecs: Codecs;

beforeAll(async () => {
  codecs = await loadBrowserCodecs();
});

/** A pax record: `<length> key=value\n`, the length counting itself. */
function paxRecord(key: string, value: string): Uint8Array {
  const body = ` ${key}=${value}\n`;
  let length = body.length + 1;
  while (String(length).length + body.length !== length) length = String(length).length + body.length;
  return Buffer.from(`${length}${body}`);
}

describe("writers: a pax size agreeing with the header's", () => {
  const tar = tarOf([
    tarEntry("PaxHeaders/x", Buffer.concat([paxRecord("path", "usr/lib/libx.so"), paxRecord("size", String(BUNDLE.length))]), { type: "x" }),
    tarEntry("usr/lib/libx.so", BUNDLE),
  ]);

  it("rewriteTarStream gives the entry its new body with the pax size record rewritten too (every other record kept)", async () => {
    const parts: Uint8Array[] = [];
    const body = new Uint8Array(10).fill(7);
    await rewriteTarStream(ChunkReader.ofSource(bytesSource(tar)), (b) => { parts.push(b.slice()); }, () => body, "t.tar");
    const out = Buffer.concat(parts);
    // Read back as readers read it: the pax size is the new body's, the path record kept.
    const python = spawnSync("python3", ["-c", "import sys,tarfile,io\nt=tarfile.open(fileobj=io.BytesIO(sys.stdin.buffer.read()))\nm=t.getmembers()[0]\nprint(m.name,m.size,t.extractfile(m).read().hex(),m.pax_headers.get('size'))"], { input: out, encoding: "utf8" });
    expect(python.status, python.stderr).toBe(0);
    expect(python.stdout.trim()).toBe(`usr/lib/libx.so 10 ${Buffer.from(body).toString("hex")} 10`);
  });

  it("the page's writer prunes it (its own read-back passes), no longer refusing it", async () => {
    const reply = await prunePackage(bytesSource(tar), "t.tar", ["gfx906"], codecs);
    expect(reply.changed).toBe(true);
  });

  it("the same entry without the pax size is written: the header's size is the new body's", async () => {
    const plain = tarOf([tarEntry("PaxHeaders/x", paxRecord("path", "usr/lib/libx.so"), { type: "x" }), tarEntry("usr/lib/libx.so", BUNDLE)]);
    const reply = await prunePackage(bytesSource(plain), "t.tar", ["gfx906"], codecs);
    expect(reply.changed).toBe(true);
    expect(reply.outputSize).toBeLessThanOrEqual(plain.length);
  });
});

/** windows-1252's 0x80-0x9f, what a browser's TextDecoder("latin1") gives for them (WHATWG Encoding). */
const CP1252 = [0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178];

describe("writers: md5sums and control, byte for byte", () => {
  const original = globalThis.TextDecoder;
  afterEach(() => {
    globalThis.TextDecoder = original;
  });

  const md5 = (b: Uint8Array) => createHash("md5").update(b).digest("hex");
  const entry = (name: string) => ({ name, type: "file" as const, size: 0, linkName: "", mode: 0o644, headerOffset: 0, dataOffset: 512 });
  // lib\u0101.so is `lib\xc4\x81.so` in UTF-8: a byte in 0x80-0x9f, as many non-ASCII names have.
  const path = "usr/lib/lib\u0101.so";
  const newBytes = Buffer.from("new");
  const files: EditedFile[] = [{ path, md5: md5(newBytes), sha256: "", oldSize: 4000, newSize: 3 }];
  const md5sums = Buffer.concat([Buffer.from(`${"0".repeat(32)}  ${path}\n`, "utf8"), Buffer.from(`${"1".repeat(32)}  usr/share/doc/\u0152\u2122.txt\n`, "utf8")]);

  it("the line naming an edited non-ASCII path gets its new md5; the other line keeps every byte", () => {
    const out = editControlMember(entry("./md5sums"), md5sums, files, {})!;
    expect(Buffer.from(out).toString("utf8").split("\n")[0]).toBe(`${md5(newBytes)}  ${path}`);
    // The new md5 is as long as the old: every byte after it is the input's.
    expect(Buffer.from(out).subarray(32).equals(md5sums.subarray(32))).toBe(true);
  });

  it("with a browser's TextDecoder (latin1 read as windows-1252), md5sums and control keep bytes 0x80-0x9f", () => {
    globalThis.TextDecoder = class extends original {
      constructor(label?: string, options?: TextDecoderOptions) {
        super(label, options);
        if (label?.toLowerCase() === "latin1") {
          this.decode = ((input?: AllowSharedBufferSource) => Array.from(new Uint8Array(input as ArrayBuffer), (b) => String.fromCharCode(b >= 0x80 && b <= 0x9f ? CP1252[b - 0x80]! : b)).join("")) as TextDecoder["decode"];
        }
      }
    } as typeof TextDecoder;
    const out = editControlMember(entry("./md5sums"), md5sums, files, {})!;
    expect(Buffer.from(out).subarray(32).equals(md5sums.subarray(32))).toBe(true);
    const control = Buffer.concat([Buffer.from("Package: p\nInstalled-Size: 100\nDescription: caf"), Buffer.from([0xc3, 0xa9, 0xe2, 0x80, 0x9c, 0x0a])]);
    const edited = editControlMember(entry("./control"), control, files, {})!;
    expect(Buffer.from(edited).toString("latin1")).toBe(control.toString("latin1").replace("Installed-Size: 100", "Installed-Size: 97"));
  });
});

interface StoredMember {
  readonly name: string;
  readonly data: Uint8Array;
  /** The central directory's local header offset, when not where the member is. */
  readonly local?: number;
  /** The declared (uncompressed) size, when not the data's. */
  readonly size?: number;
  /** The Unix mode in the directory's external attributes (default a regular file, 0o100644). */
  readonly mode?: number;
}

/** A zip of stored members, written here so its fields can lie. */
function storedZip(members: readonly StoredMember[]): Uint8Array {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let at = 0;
  for (const m of members) {
    const name = Buffer.from(m.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc32(m.data), 14);
    local.writeUInt32LE(m.data.length, 18);
    local.writeUInt32LE(m.size ?? m.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(0x314, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt32LE(crc32(m.data), 16);
    c.writeUInt32LE(m.data.length, 20);
    c.writeUInt32LE(m.size ?? m.data.length, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(((m.mode ?? 0o100644) * 65536) >>> 0, 38);
    c.writeUInt32LE(m.local ?? at, 42);
    locals.push(local, name, Buffer.from(m.data));
    central.push(c, name);
    at += 30 + name.length + m.data.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members.length, 8);
  end.writeUInt16LE(members.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(at, 16);
  return Buffer.concat([...locals, directory, end]);
}

describe("writers: zips whose fields lie", () => {
  const refusal = (bytes: Uint8Array) => prunePackage(bytesSource(bytes), "t.whl", ["gfx906"], codecs).then(() => undefined, (e: unknown) => e as OffloadKitError);
  const readme = Buffer.from("no device code\n");

  it("a member the writer does not read whose local header offset lies past the directory: refused, no range outside the file", async () => {
    // A directory entry: the writer reads no bytes of it, only copies it.
    const error = await refusal(storedZip([{ name: "a/libx.so", data: BUNDLE }, { name: "a/doc/", data: new Uint8Array(0), local: 0xffffffff }]));
    expect(error).toBeInstanceOf(OffloadKitError);
    expect(error!.code).toBe("ZIP_BAD_LOCAL");
  });

  it("two members sharing one local header (the overlapping-files bomb): refused, ZIP_OVERLAP", async () => {
    const error = await refusal(storedZip([{ name: "a/libx.so", data: BUNDLE }, { name: "a/libx.so", data: readme, local: 0 }]));
    expect(error).toBeInstanceOf(OffloadKitError);
    expect(error!.code).toBe("ZIP_OVERLAP");
  });

  it("a stored member declaring more bytes than it stores: refused, ZIP_BAD_SIZE (as the walker says)", async () => {
    const error = await refusal(storedZip([{ name: "a/libx.so", data: BUNDLE, size: BUNDLE.length + 100 }, { name: "a/README", data: readme }]));
    expect(error).toBeInstanceOf(OffloadKitError);
    expect(error!.code).toBe("ZIP_BAD_SIZE");
  });

  it("a member whose mode says symbolic link is left as it is, even when its bytes are a bundle; the regular one is edited", async () => {
    const input = storedZip([{ name: "a/libx.so", data: BUNDLE }, { name: "a/liby.so", data: BUNDLE, mode: 0o120777 }]);
    const reply = await prunePackage(bytesSource(input), "t.whl", ["gfx906"], codecs);
    expect(reply.changed).toBe(true);
    expect(reply.entries).toBe(3);
    const output = Buffer.concat(reply.parts.map((p) => ("bytes" in p ? p.bytes : "zeros" in p ? new Uint8Array(p.zeros) : input.subarray(p.offset, p.offset + p.size))));
    const source = bytesSource(output);
    const link = readZip(source).members.find((m) => m.name === "a/liby.so")!;
    expect(link.method).toBe(0);
    expect(output.subarray(zipDataOffset(source, link), zipDataOffset(source, link) + link.size).equals(BUNDLE)).toBe(true);
  });

  it("RECORD with a byte-order mark and a byte that is not UTF-8: the edited row rewritten, every other byte kept", async () => {
    const hash = (b: Uint8Array) => createHash("sha256").update(b).digest("base64url");
    const record = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(`a/libx.so,sha256=${hash(BUNDLE)},${BUNDLE.length}\n`),
      Buffer.from("a/caf"), Buffer.from([0xe9]), Buffer.from(`.txt,sha256=${hash(readme)},${readme.length}\n`),
      Buffer.from("a-1.0.dist-info/RECORD,,\n"),
    ]);
    const input = storedZip([{ name: "a/libx.so", data: BUNDLE }, { name: "a/caf\u00e9.txt", data: readme }, { name: "a-1.0.dist-info/RECORD", data: record }]);
    const reply = await prunePackage(bytesSource(input), "a-1.0-py3-none-any.whl", ["gfx906"], codecs);
    expect(reply.changed).toBe(true);
    const output = Buffer.concat(reply.parts.map((p) => ("bytes" in p ? p.bytes : "zeros" in p ? new Uint8Array(p.zeros) : input.subarray(p.offset, p.offset + p.size))));
    const source = bytesSource(output);
    const member = readZip(source).members.find((m) => m.name.endsWith("RECORD"))!;
    const stored = output.subarray(zipDataOffset(source, member), zipDataOffset(source, member) + member.compressedSize);
    const after = member.method === 8 ? inflateRawSync(stored) : Buffer.from(stored);
    const libx = readZip(source).members.find((m) => m.name === "a/libx.so")!;
    const newBytes = inflateRawSync(output.subarray(zipDataOffset(source, libx), zipDataOffset(source, libx) + libx.compressedSize));
    const firstRow = Buffer.from(`a/libx.so,sha256=${hash(BUNDLE)},${BUNDLE.length}\n`).length;
    expect(after.subarray(0, 3).equals(record.subarray(0, 3))).toBe(true);
    expect(after.subarray(3, after.indexOf(0x0a) + 1).toString()).toBe(`a/libx.so,sha256=${hash(newBytes)},${newBytes.length}\n`);
    expect(after.subarray(after.indexOf(0x0a) + 1).equals(record.subarray(3 + firstRow))).toBe(true);
  });
});
