// What the package-writer fuzz target (test/fuzz/campaign/targets/package-writer.ts) found in the writers the
// CLI and the page share (src/packages/write/), each pinned here:
//  - a tar entry whose size is in a pax record that agrees with the header's size field: the edit rewrote the
//    field only, readers take the pax size, so the tar written read wrong (the page's read-back said
//    VERIFY_FAILED). It is refused as every other pax-sized entry is: TAR_SIZE_IN_PAX, naming it;
//  - a .deb's md5sums line naming a non-ASCII path was not rewritten (its bytes were compared as latin1 with
//    the tar's UTF-8 name), so dpkg's md5sums said the old file's hash; and md5sums/control were decoded with
//    TextDecoder("latin1"), which browsers take for windows-1252: bytes 0x80-0x9f came back as other bytes.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { prunePackage } from "../../src/browser/prune-package/index.js";
import { loadBrowserCodecs } from "../../src/compress/browser.js";
import type { Codecs } from "../../src/compress/codecs.js";
import { OffloadKitError } from "../../src/engine/errors.js";
import { bytesSource } from "../../src/engine/source.js";
import { ChunkReader } from "../../src/packages/chunks.js";
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

  it("rewriteTarStream refuses to give the entry a new body (TAR_SIZE_IN_PAX), as when they disagree", async () => {
    const error = await rewriteTarStream(ChunkReader.ofSource(bytesSource(tar)), () => {}, () => new Uint8Array(10), "t.tar").then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(OffloadKitError);
    expect((error as OffloadKitError).code).toBe("TAR_SIZE_IN_PAX");
    expect((error as OffloadKitError).message).toContain("usr/lib/libx.so");
  });

  it("the page's writer says so (not VERIFY_FAILED after writing a tar that reads wrong)", async () => {
    const error = await prunePackage(bytesSource(tar), "t.tar", ["gfx906"], codecs).then(() => undefined, (e: unknown) => e);
    expect((error as OffloadKitError).code).toBe("TAR_SIZE_IN_PAX");
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
          this.decode = ((input?: AllowSharedBufferSource) => Array.from(new Uint8Array(input as ArrayBuffer), (b) => String.fromCharCode(b >= 0x80 && b <= 0x9f ? CP1252[b - 0x80]! : b)).join("")) as typeof this.decode;
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
