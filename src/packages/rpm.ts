/**
 * RPM (rpm's lib/header.c, "RPM file format" in rpm's docs/manual/format.md): a 96-byte lead, the
 * signature header padded to 8 bytes, the main header, then the payload (a cpio archive, compressed as
 * the main header's RPMTAG_PAYLOADCOMPRESSOR says).
 *
 * | part | layout |
 * |---|---|
 * | lead | magic `ED AB EE DB` (0), version (4), type (6), arch (8), name (10, 66), os (76), signature type (78) |
 * | header | magic `8E AD E8 01` (0), reserved (4), index count (8, BE u32), store size (12, BE u32), then count x 16-byte index entries (tag, type, offset, count: BE u32), then the store |
 *
 * The index and store sizes are checked against the file before anything is read through them (a damaged
 * header fails at its own offset); only the payload compressor and format are taken from the header.
 */
import { OffloadKitError } from "../engine/errors.js";
import type { ByteSource } from "../engine/source.js";
import { readExact } from "../engine/source.js";

const LEAD_SIZE = 96;
const HEADER_MAGIC = 0x8eade801;
const RPMTAG_PAYLOADFORMAT = 1124;
const RPMTAG_PAYLOADCOMPRESSOR = 1125;
const RPM_STRING_TYPE = 6;
/** rpm's own limits (hdrchkTags, hdrchkData): 0x00ffff index entries, 256 MiB of store. */
const MAX_TAGS = 0xffff;
const MAX_STORE = 256 * 1024 * 1024;

export interface RpmLayout {
  /** Where the payload starts. */
  readonly payloadOffset: number;
  /** RPMTAG_PAYLOADCOMPRESSOR (`gzip` when absent, as rpm assumes), and RPMTAG_PAYLOADFORMAT (`cpio`). */
  readonly compressor: string;
  readonly format: string;
}

export function isRpm(head: Uint8Array): boolean {
  return head.length >= 4 && head[0] === 0xed && head[1] === 0xab && head[2] === 0xee && head[3] === 0xdb;
}

function damaged(message: string, offset: number, field: string): OffloadKitError {
  return new OffloadKitError("RPM_BAD_HEADER", `damaged RPM header at offset ${offset}: ${message}`, { offset, field });
}

interface Header {
  readonly end: number;
  readonly strings: Map<number, string>;
}

function readHeader(source: ByteSource, offset: number, what: string): Header {
  if (offset + 16 > source.size) throw damaged(`the ${what} header is cut off`, offset, "header");
  const intro = readExact(source, offset, 16);
  const v = new DataView(intro.buffer, intro.byteOffset, 16);
  if (v.getUint32(0) !== HEADER_MAGIC) throw damaged(`no ${what} header magic`, offset, "magic");
  const count = v.getUint32(8);
  const storeSize = v.getUint32(12);
  if (count > MAX_TAGS) throw damaged(`${what} header declares ${count} tags`, offset + 8, "index count");
  if (storeSize > MAX_STORE) throw damaged(`${what} header declares a ${storeSize}-byte store`, offset + 12, "store size");
  const end = offset + 16 + count * 16 + storeSize;
  if (end > source.size) throw damaged(`the ${what} header (${end - offset} bytes) runs past the end of the ${source.size}-byte file`, offset, "store size");
  const index = readExact(source, offset + 16, count * 16);
  const iv = new DataView(index.buffer, index.byteOffset, index.byteLength);
  const storeStart = offset + 16 + count * 16;
  const strings = new Map<number, string>();
  for (let i = 0; i < count; i++) {
    const tag = iv.getUint32(i * 16);
    const type = iv.getUint32(i * 16 + 4);
    const at = iv.getUint32(i * 16 + 8);
    if (at > storeSize) throw damaged(`tag ${tag}'s data offset ${at} is outside the ${storeSize}-byte store`, offset + 16 + i * 16 + 8, "index offset");
    if ((tag === RPMTAG_PAYLOADCOMPRESSOR || tag === RPMTAG_PAYLOADFORMAT) && type === RPM_STRING_TYPE) {
      const bytes = readExact(source, storeStart + at, Math.min(64, storeSize - at));
      const nul = bytes.indexOf(0);
      if (nul < 0) throw damaged(`tag ${tag}'s string is not terminated`, storeStart + at, "store");
      strings.set(tag, String.fromCharCode(...bytes.subarray(0, nul)));
    }
  }
  return { end, strings };
}

export function readRpm(source: ByteSource): RpmLayout {
  if (source.size < LEAD_SIZE) throw damaged("the lead is cut off", 0, "lead");
  const signature = readHeader(source, LEAD_SIZE, "signature");
  const mainOffset = signature.end + ((8 - (signature.end % 8)) % 8);
  const main = readHeader(source, mainOffset, "main");
  return {
    payloadOffset: main.end,
    compressor: main.strings.get(RPMTAG_PAYLOADCOMPRESSOR) ?? "gzip",
    format: main.strings.get(RPMTAG_PAYLOADFORMAT) ?? "cpio",
  };
}

/** Why an RPM is not written back (the CLI's writers and the page's say the same). */
export function rpmRefusal(path: string): OffloadKitError {
  return new OffloadKitError("RPM_NOT_WRITABLE",
    `${path}: an RPM is not written again: its signature header's digests and the packager's signature over them cover ` +
    "the payload, and offload-kit cannot sign for the vendor (rpm -K and dnf would reject the result); " +
    "prune the installed files instead (offload-kit prune --in-place DIR), or rebuild the package with rpmbuild", { field: "package" });
}
