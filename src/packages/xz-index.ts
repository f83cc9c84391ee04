/**
 * Reading an xz file again from the middle: a member that the streaming locator could not answer for is
 * read a second time (src/packages/walk.ts), and decoding the whole `.deb`'s data.tar.xz from its first
 * byte for each such member made the walk quadratic. An xz file written in blocks (dpkg-deb since 1.21,
 * `xz -T`, `--block-size`) says in its index where each block starts and what it decodes to, so the
 * stream can start again at the block holding the wanted byte: a re-read costs that member plus at most
 * one block.
 *
 * The xz file format 1.2.1 (tukaani.org/xz/xz-file-format.txt), little-endian, sizes as varints (7 bits
 * per byte, low first, at most 9 bytes):
 *
 * | part | bytes | fields |
 * |---|---|---|
 * | stream header | 12 | `FD 37 7A 58 5A 00`, stream flags (2), CRC32 of the flags (4) |
 * | blocks | each padded to 4 | block header, compressed data, check |
 * | index | padded to 4 | `00`, record count, per block: unpadded size, uncompressed size; zero padding; CRC32 of all before it (4) |
 * | stream footer | 12 | CRC32 of the next 6 bytes (4), backward size (4: index size / 4 - 1), stream flags (2), `YZ` |
 *
 * Blocks from k on, behind the original stream header and followed by an index of their own records and
 * a footer, are a valid xz stream of their own: the decoder needs nothing else. Only a file holding one
 * stream whose blocks and index account for every byte is read this way (stream padding or concatenated
 * streams are decoded from the start, as before).
 */
import type { ByteSource } from "../engine/source.js";
import { readExact } from "../engine/source.js";
import { sourceChunks } from "./chunks.js";

const HEADER_MAGIC = [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00];
const STREAM_HEADER = 12;
const STREAM_FOOTER = 12;
/** The largest index read (a 2 GB stream of 1 MiB blocks has a 10 kB index). */
const MAX_INDEX = 16 * 1024 * 1024;

export interface XzBlock {
  /** Where the block starts in the file. */
  readonly offset: number;
  readonly unpaddedSize: number;
  /** Where its data starts in the decoded stream, and how much it decodes to. */
  readonly start: number;
  readonly size: number;
}

export interface XzLayout {
  readonly blocks: readonly XzBlock[];
  /** Where the index starts (the blocks end here). */
  readonly indexOffset: number;
}

let crcTable: Uint32Array | undefined;

/** CRC-32 (IEEE 802.3, reflected 0xEDB88320), as xz's headers, index and footer use. */
export function crc32(bytes: Uint8Array): number {
  if (crcTable === undefined) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const b of bytes) crc = crcTable[(crc ^ b) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The blocks of a single-stream xz file, from its index; undefined when it is not one whose index accounts for every byte. */
export function readXzLayout(source: ByteSource): XzLayout | undefined {
  if (source.size < STREAM_HEADER + STREAM_FOOTER) return undefined;
  const header = readExact(source, 0, STREAM_HEADER);
  if (!HEADER_MAGIC.every((b, i) => header[i] === b)) return undefined;
  const footer = readExact(source, source.size - STREAM_FOOTER, STREAM_FOOTER);
  const view = new DataView(footer.buffer, footer.byteOffset, footer.byteLength);
  if (footer[10] !== 0x59 || footer[11] !== 0x5a || !sameBytes(footer.subarray(8, 10), header.subarray(6, 8))) return undefined;
  if (crc32(footer.subarray(4, 10)) !== view.getUint32(0, true)) return undefined;
  const indexSize = (view.getUint32(4, true) + 1) * 4;
  const indexOffset = source.size - STREAM_FOOTER - indexSize;
  if (indexSize > MAX_INDEX || indexOffset < STREAM_HEADER) return undefined;
  const index = readExact(source, indexOffset, indexSize);
  if (index[0] !== 0 || crc32(index.subarray(0, indexSize - 4)) !== new DataView(index.buffer, index.byteOffset).getUint32(indexSize - 4, true)) return undefined;
  let at = 1;
  const varint = (): number | undefined => {
    let value = 0;
    for (let k = 0; k < 9 && at < indexSize - 4; k++) {
      const b = index[at++]!;
      value += (b & 0x7f) * 2 ** (7 * k);
      if ((b & 0x80) === 0) return Number.isSafeInteger(value) ? value : undefined;
    }
    return undefined;
  };
  const count = varint();
  if (count === undefined || count === 0) return undefined;
  const blocks: XzBlock[] = [];
  let offset = STREAM_HEADER;
  let start = 0;
  for (let k = 0; k < count; k++) {
    const unpaddedSize = varint();
    const size = varint();
    if (unpaddedSize === undefined || size === undefined || unpaddedSize < 5) return undefined;
    blocks.push({ offset, unpaddedSize, start, size });
    offset += Math.ceil(unpaddedSize / 4) * 4;
    start += size;
  }
  // The blocks must end where the index starts: no stream padding, no second stream.
  return offset === indexOffset ? { blocks, indexOffset } : undefined;
}

function writeVarint(out: number[], value: number): void {
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
}

/**
 * An xz stream that decodes to `source`'s decoded stream from the start of the block holding byte
 * `from`, and how many of its first bytes to skip to reach `from`; undefined when `source` is not a
 * single-stream xz file with an index, or `from` is in its first block (decoding from the start is the same).
 */
export function xzStreamFrom(source: ByteSource, from: number, layout = readXzLayout(source)): { chunks: AsyncIterable<Uint8Array>; skip: number } | undefined {
  if (layout === undefined) return undefined;
  let k = layout.blocks.length - 1;
  while (k > 0 && layout.blocks[k]!.start > from) k--;
  if (k === 0) return undefined;
  const header = readExact(source, 0, STREAM_HEADER);
  const records: number[] = [0];
  writeVarint(records, layout.blocks.length - k);
  for (const block of layout.blocks.slice(k)) {
    writeVarint(records, block.unpaddedSize);
    writeVarint(records, block.size);
  }
  while ((records.length + 4) % 4 !== 0) records.push(0);
  const index = new Uint8Array(records.length + 4);
  index.set(records);
  new DataView(index.buffer).setUint32(records.length, crc32(index.subarray(0, records.length)), true);
  const footer = new Uint8Array(STREAM_FOOTER);
  const view = new DataView(footer.buffer);
  view.setUint32(4, index.length / 4 - 1, true);
  footer.set(header.subarray(6, 8), 8);
  footer.set([0x59, 0x5a], 10);
  view.setUint32(0, crc32(footer.subarray(4, 10)), true);
  const first = layout.blocks[k]!;
  async function* chunks(): AsyncGenerator<Uint8Array> {
    yield header;
    yield* sourceChunks(source, first.offset, layout!.indexOffset - first.offset);
    yield index;
    yield footer;
  }
  return { chunks: chunks(), skip: from - first.start };
}
