/**
 * The fields of a tar header an edit changes: its size (octal, or GNU base-256 from 8 GiB) and its checksum.
 * Shared by every writer that puts a tar back together (a .deb's data.tar, tarballs, conda packages, image
 * layers), in Node and in the page.
 */
import { TAR_BLOCK } from "../tar.js";

/** A tar header with its size field set to `size` (octal, or GNU base-256 from 8 GiB) and its checksum again. */
export function tarHeaderWithSize(block: Uint8Array, size: number): Uint8Array {
  const out = block.slice();
  if (size < 8 ** 11) {
    const octal = size.toString(8).padStart(11, "0");
    for (let i = 0; i < 11; i++) out[124 + i] = octal.charCodeAt(i);
    out[135] = 0;
  } else {
    out.fill(0, 124, 136);
    out[124] = 0x80;
    let value = size;
    for (let i = 135; i > 124; i--) {
      out[i] = value % 256;
      value = Math.floor(value / 256);
    }
  }
  out.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of out) sum += b;
  const checksum = sum.toString(8).padStart(6, "0");
  for (let i = 0; i < 6; i++) out[148 + i] = checksum.charCodeAt(i);
  out[154] = 0;
  out[155] = 0x20;
  return out;
}

/** The header's own size field (not a pax override): an edit must be able to set it. */
export function headerSize(block: Uint8Array): number {
  if ((block[124]! & 0x80) !== 0) {
    let value = 0;
    for (let i = 125; i < 136; i++) value = value * 256 + block[i]!;
    return value;
  }
  return parseInt(String.fromCharCode(...block.subarray(124, 136)).replace(/[\0 ]/g, "") || "0", 8);
}

export function padding(size: number): number {
  return (TAR_BLOCK - (size % TAR_BLOCK)) % TAR_BLOCK;
}
