/**
 * cpio "newc" (SVR4, magic `070701`; `070702` adds a checksum), the payload format of RPM, read as a
 * stream as rpm2cpio | cpio -i reads it. A 110-byte ASCII header of thirteen 8-digit hex fields, then the
 * name (namesize bytes, NUL included) padded so header + name is a multiple of 4, then the data padded to 4.
 * The entry named `TRAILER!!!` ends the archive.
 *
 * | offset | field | | offset | field |
 * |---|---|---|---|---|
 * | 0 | magic (6) | | 54 | filesize |
 * | 6 | ino | | 62-86 | dev/rdev major, minor |
 * | 14 | mode | | 94 | namesize |
 * | 22-46 | uid, gid, nlink, mtime | | 102 | check |
 *
 * Hard links carry their data once, on the last of the entries sharing an inode; the others have size 0.
 */
import { OffloadKitError } from "../engine/errors.js";
import type { ChunkReader } from "./chunks.js";
import { truncated } from "./chunks.js";
import type { TarEntry } from "./tar.js";

const HEADER = 110;
const MAX_NAME = 1 << 16;
const utf8 = new TextDecoder("utf-8");

export function isCpio(head: Uint8Array): boolean {
  return head.length >= 6 && String.fromCharCode(...head.subarray(0, 6)).startsWith("07070") && (head[5] === 0x31 || head[5] === 0x32);
}

function hex(header: Uint8Array, index: number, offset: number): number {
  const raw = String.fromCharCode(...header.subarray(6 + index * 8, 14 + index * 8));
  if (!/^[0-9a-fA-F]{8}$/.test(raw)) throw new OffloadKitError("CPIO_MALFORMED", `malformed cpio header at offset ${offset}: field ${index} '${raw}' is not hex`, { offset: offset + 6 + index * 8 });
  return parseInt(raw, 16);
}

/** The entries of a newc cpio stream (same shape as tar's; the caller may read each body, the rest is skipped). */
export async function* walkCpio(reader: ChunkReader): AsyncGenerator<TarEntry> {
  for (;;) {
    const headerOffset = reader.position;
    const header = await reader.read(HEADER);
    if (header.length === 0) return;
    if (header.length < HEADER) throw truncated("cpio header", headerOffset, HEADER, header.length);
    if (!isCpio(header)) throw new OffloadKitError("CPIO_MALFORMED", `malformed cpio header at offset ${headerOffset}: no 070701 magic`, { offset: headerOffset, field: "magic" });
    const mode = hex(header, 1, headerOffset);
    const size = hex(header, 6, headerOffset);
    const nameSize = hex(header, 11, headerOffset);
    if (nameSize === 0 || nameSize > MAX_NAME) throw new OffloadKitError("CPIO_MALFORMED", `malformed cpio header at offset ${headerOffset}: name size ${nameSize}`, { offset: headerOffset + 94, field: "namesize" });
    const namePadded = nameSize + ((4 - ((HEADER + nameSize) % 4)) % 4);
    const nameBytes = await reader.read(namePadded);
    if (nameBytes.length < namePadded) throw truncated("cpio name", headerOffset + HEADER, namePadded, nameBytes.length);
    const name = utf8.decode(nameBytes.subarray(0, nameSize - 1));
    if (name === "TRAILER!!!") return;
    const format = mode & 0o170000;
    const type = format === 0o100000 ? "file" : format === 0o040000 ? "directory" : format === 0o120000 ? "symlink" : "other";
    const dataOffset = reader.position;
    let linkName = "";
    if (type === "symlink") {
      const target = await reader.read(Math.min(size, MAX_NAME));
      linkName = utf8.decode(target);
    }
    yield { name, type, size: type === "symlink" ? 0 : size, linkName, mode: mode & 0o7777, headerOffset, dataOffset };
    const rest = size + ((4 - (size % 4)) % 4) - (reader.position - dataOffset);
    if (rest > 0) {
      const skipped = await reader.skip(rest);
      if (skipped < rest && reader.position - dataOffset < size) throw truncated(`cpio member '${name}'`, dataOffset, size, reader.position - dataOffset);
    }
  }
}
