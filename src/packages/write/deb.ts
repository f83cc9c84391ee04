/**
 * The parts of a Debian package an edit touches, without I/O (the CLI's writer, src/packages/node/edit-deb.ts,
 * and the page's, src/browser/prune-package/deb.ts, both use them): the ar members, an ar header with a new
 * size, and control.tar's `md5sums` lines and `Installed-Size` for the files edited in data.tar.
 *
 * | ar | bytes |
 * |---|---|
 * | magic `!<arch>\n` | 8 |
 * | per member: name(16) mtime(12) uid(6) gid(6) mode(8) size(10, decimal) `` `\n `` | 60 |
 * | member data, padded with `\n` to an even size | size |
 */
import { OffloadKitError } from "../../engine/errors.js";
import type { ByteSource } from "../../engine/source.js";
import { bytesSource, readExact } from "../../engine/source.js";
import { byteStringToUnicode, concatBytes, latin1Decode, latin1Encode } from "../../formats/bytes.js";
import { ChunkReader } from "../chunks.js";
import { TAR_BLOCK, walkTar } from "../tar.js";
import type { TarEntry } from "../tar.js";
import { headerSize, padding, tarHeaderWithSize } from "./tar-headers.js";

export const AR_MAGIC = "!<arch>\n";
export const AR_HEADER = 60;
/** control.tar is read whole (it holds a few small text files); a larger one is refused. */
export const MAX_CONTROL = 64 * 1024 * 1024;

export interface ArMember {
  readonly name: string;
  readonly headerOffset: number;
  readonly header: Uint8Array;
  readonly dataOffset: number;
  readonly size: number;
}

export function malformed(message: string, offset: number, field?: string): OffloadKitError {
  return new OffloadKitError("DEB_MALFORMED", `malformed .deb: ${message}`, { offset, field });
}

/** The ar members of a .deb, in order (dpkg's ar: names padded with spaces, GNU `/` allowed, sizes in decimal). */
export function readDebMembers(source: ByteSource): ArMember[] {
  if (source.size < 8 || String.fromCharCode(...readExact(source, 0, 8)) !== AR_MAGIC) throw malformed("no ar magic", 0, "magic");
  const members: ArMember[] = [];
  let at = 8;
  while (at + AR_HEADER <= source.size) {
    const header = readExact(source, at, AR_HEADER);
    const text = String.fromCharCode(...header);
    const size = Number(text.slice(48, 58).trim());
    if (text.slice(58, 60) !== "`\n" || text.slice(48, 58).trim() === "" || !Number.isSafeInteger(size)) throw malformed(`bad ar member header at offset ${at}`, at, "header");
    if (at + AR_HEADER + size > source.size) throw malformed(`member at offset ${at} runs past the end`, at, "size");
    members.push({ name: text.slice(0, 16).trimEnd().replace(/\/$/, ""), headerOffset: at, header, dataOffset: at + AR_HEADER, size });
    at += AR_HEADER + size + (size % 2);
  }
  if (members[0]?.name !== "debian-binary") throw malformed("the first member is not debian-binary", 8, "name");
  return members;
}

/** The ar header with its size field set to `size` (decimal, left-aligned, space-padded, as ar writes it). */
export function arHeader(header: Uint8Array, size: number, name: string): Uint8Array {
  const text = String(size);
  if (text.length > 10) throw new OffloadKitError("DEB_TOO_LARGE", `${name}: ${size} bytes do not fit an ar header`);
  const out = header.slice();
  for (let i = 0; i < 10; i++) out[48 + i] = i < text.length ? text.charCodeAt(i) : 0x20;
  return out;
}

/** A tar path as md5sums names it: no leading `./` or `/`. */
export function md5sumsPath(name: string): string {
  return name.replace(/^\.?\/+/, "").replace(/^\.\//, "");
}

/** A file edited inside a package: its path as md5sums names it, its new digests and both sizes. */
export interface EditedFile {
  readonly path: string;
  readonly md5: string;
  /** Hex, as conda's paths.json says it. */
  readonly sha256: string;
  readonly oldSize: number;
  readonly newSize: number;
}

/** A small tar (control.tar) with some members' bodies replaced; every other byte kept. */
export async function replaceTarMembers(tar: Uint8Array, replace: (entry: TarEntry, body: Uint8Array) => Uint8Array | undefined): Promise<Uint8Array> {
  const reader = ChunkReader.ofSource(bytesSource(tar));
  const parts: Uint8Array[] = [];
  let copied = 0;
  for await (const entry of walkTar(reader)) {
    if (entry.type !== "file") continue;
    const body = tar.subarray(entry.dataOffset, entry.dataOffset + entry.size);
    const now = replace(entry, body);
    if (now === undefined) continue;
    const header = tar.subarray(entry.headerOffset, entry.headerOffset + TAR_BLOCK);
    if (entry.sizeInPax === true || headerSize(header) !== entry.size) throw new OffloadKitError("DEB_UNSUPPORTED", `control.tar member '${entry.name}': its size is in a pax record`, { offset: entry.headerOffset });
    parts.push(tar.subarray(copied, entry.headerOffset), tarHeaderWithSize(header, now.length), now, new Uint8Array(padding(now.length)));
    copied = entry.dataOffset + entry.size + padding(entry.size);
  }
  parts.push(tar.subarray(copied));
  return concatBytes(parts);
}

/** dpkg-gencontrol's count: each file's size in KiB, rounded up. */
function kib(size: number): number {
  return Math.ceil(size / 1024);
}

/** md5sums with the edited files' lines rewritten; control with Installed-Size lowered. */
export function editControlMember(entry: TarEntry, body: Uint8Array, files: readonly EditedFile[], sizes: { before?: number; after?: number }): Uint8Array | undefined {
  const base = entry.name.replace(/^\.?\/*/, "");
  // One char per byte, both ways: every byte not rewritten is written back as it was. Not TextDecoder("latin1"):
  // browsers take that label for windows-1252 (0x80-0x9f become other code points, written back wrong).
  const text = latin1Decode(body);
  const encode = latin1Encode;
  if (base === "md5sums") {
    const byPath = new Map(files.map((f) => [f.path, f.md5]));
    return encode(text.split("\n").map((line) => {
      const match = /^([0-9a-f]{32})( [ *])(.*)$/.exec(line);
      // The path's bytes are UTF-8 (dpkg writes the tar's name bytes), and tar names are read as UTF-8: compared as text.
      const md5 = match === null ? undefined : byPath.get(md5sumsPath(byteStringToUnicode(match[3]!)));
      return md5 === undefined ? line : `${md5}${match![2]}${match![3]}`;
    }).join("\n"));
  }
  if (base === "control") {
    const match = /^Installed-Size:[ \t]*(\d+)[ \t]*$/m.exec(text);
    if (match === null) return undefined;
    const before = Number(match[1]);
    const after = Math.max(0, before - files.reduce((n, f) => n + kib(f.oldSize) - kib(f.newSize), 0));
    sizes.before = before;
    sizes.after = after;
    return encode(text.slice(0, match.index) + `Installed-Size: ${after}` + text.slice(match.index + match[0].length));
  }
  return undefined;
}

/** Where a .deb's control.tar and data.tar are among its members (DEB_MALFORMED when one is missing). */
export function debTars(members: readonly ArMember[]): { readonly controlAt: number; readonly dataAt: number } {
  const dataAt = members.findIndex((m) => m.name.startsWith("data.tar"));
  const controlAt = members.findIndex((m) => m.name.startsWith("control.tar"));
  if (dataAt < 0) throw malformed("no data.tar member", 8);
  if (controlAt < 0) throw malformed("no control.tar member", 8);
  return { controlAt, dataAt };
}
