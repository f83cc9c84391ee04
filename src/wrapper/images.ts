/**
 * Device images as the wrapper modules embed them: each becomes an `[N x i8]` constant, and what LLVM makes
 * of its bytes decides the bitcode. `ConstantDataArray::get` turns empty or all-zero data into a
 * zeroinitializer, returns one shared constant for equal contents, and the writer picks the record and
 * abbreviation from the bytes (`CST_CODE_CSTRING` when only the last byte is 0, with char6 or 7-bit fields
 * when every byte allows; else `CST_CODE_STRING` with 8-bit fields). This module reads each image once, in
 * chunks, to learn those facts, and compares equal-size images to find the shared ones, so no image is ever
 * held whole (a 1 GiB image stays a file).
 */
import type { PayloadSource } from "../llvm/bitcode/bitstream.js";
import { isChar6 } from "../llvm/bitcode/bitstream.js";
import type { ImageData } from "../llvm/bitcode/ir.js";

const SCAN_CHUNK = 1 << 20;

/** An image classified for the writer. */
export interface PreparedImage {
  readonly source: PayloadSource;
  /** Empty or all zero bytes: the constant is a zeroinitializer. */
  readonly zero: boolean;
  readonly data: ImageData;
  /** Images with equal bytes share an identity (and so one constant). */
  readonly identity: string;
}

function readChunk(source: PayloadSource, scratch: Uint8Array, position: number, length: number): Uint8Array {
  if (source.bytes !== undefined) return source.bytes.subarray(position, position + length);
  const view = scratch.subarray(0, length);
  let done = 0;
  while (done < length) {
    const n = source.read(view.subarray(done), position + done);
    if (n <= 0) throw new Error(`image: short read at offset ${position + done}`);
    done += n;
  }
  return view;
}

/**
 * How many bytes at the start of `chunk` are zero, four at a time where aligned: an all-zero image (a sparse
 * file, a `.bss`-like blob) is scanned whole, and the byte loop cost 3x more (measured: 15 s against 5 s for
 * 4.4 GB, the read included).
 */
function zeroPrefix(chunk: Uint8Array): number {
  const n = chunk.length;
  let i = 0;
  for (; i < n && ((chunk.byteOffset + i) & 3) !== 0; i++) if (chunk[i] !== 0) return i;
  if (i === n) return n;
  const words = new Int32Array(chunk.buffer, chunk.byteOffset + i, (n - i) >>> 2);
  let k = 0;
  while (k < words.length && words[k] === 0) k++;
  for (i += k * 4; i < n; i++) if (chunk[i] !== 0) return i;
  return n;
}

/** One pass over the bytes, stopping as soon as the answer cannot change. */
function classify(source: PayloadSource, scratch: Uint8Array): { zero: boolean; cString: boolean; sevenBit: boolean; char6: boolean } {
  const size = source.size;
  if (size === 0) return { zero: true, cString: false, sevenBit: true, char6: true };
  const last = readChunk(source, scratch, size - 1, 1)[0]!;
  if (last !== 0) return { zero: false, cString: false, sevenBit: false, char6: false };
  // The last byte is 0: a C string unless another 0 comes first; all zero if nothing else is non-zero.
  let nonZero = false;
  let interiorZero = false;
  let sevenBit = true;
  let char6 = true;
  const body = size - 1;
  for (let at = 0; at < body && !(interiorZero && nonZero); at += SCAN_CHUNK) {
    const chunk = readChunk(source, scratch, at, Math.min(SCAN_CHUNK, body - at));
    let i = 0;
    if (!nonZero) {
      i = zeroPrefix(chunk);
      if (i > 0) interiorZero = true;
    }
    for (; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte === 0) {
        interiorZero = true;
        if (nonZero) break;
        continue;
      }
      nonZero = true;
      if (byte >= 128) sevenBit = false;
      if (char6 && !isChar6(byte)) char6 = false;
      if (interiorZero) break;
    }
  }
  if (!nonZero) return { zero: true, cString: false, sevenBit: true, char6: true };
  return { zero: false, cString: !interiorZero, sevenBit: !interiorZero && sevenBit, char6: !interiorZero && char6 };
}

function sameBytes(left: PayloadSource, right: PayloadSource, scratch: Uint8Array, other: Uint8Array): boolean {
  for (let at = 0; at < left.size; at += SCAN_CHUNK) {
    const n = Math.min(SCAN_CHUNK, left.size - at);
    const a = readChunk(left, scratch, at, n);
    const b = readChunk(right, other, at, n);
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  }
  return true;
}

/** Classifies every image and groups equal ones (same size, then byte comparison). */
export function prepareImages(sources: readonly PayloadSource[], prefix = "image"): PreparedImage[] {
  const scratch = new Uint8Array(sources.some((s) => s.bytes === undefined) ? SCAN_CHUNK : 0);
  const other = new Uint8Array(scratch.length);
  const prepared: PreparedImage[] = [];
  sources.forEach((source, index) => {
    const facts = classify(source, scratch);
    let identity = `${prefix}${index}`;
    if (!facts.zero) {
      const twin = prepared.find((p) => !p.zero && p.source.size === source.size && sameBytes(p.source, source, scratch, other));
      if (twin !== undefined) identity = twin.identity;
    }
    prepared.push({
      source,
      zero: facts.zero,
      identity,
      data: { source, cString: facts.cString, sevenBit: facts.sevenBit, char6: facts.char6 },
    });
  });
  return prepared;
}

/**
 * How many elements the record holding an image's bytes has: none for a zeroinitializer, the bytes before the
 * final NUL for a C string (`CST_CODE_CSTRING`), every byte otherwise (`CST_CODE_STRING`).
 */
export function recordElements(image: Pick<PreparedImage, "zero" | "data">): number {
  if (image.zero) return 0;
  return image.data.cString ? image.data.source.size - 1 : image.data.source.size;
}

/** An in-memory image. */
export function bytesPayload(bytes: Uint8Array): PayloadSource {
  return {
    size: bytes.length,
    bytes,
    read(dest, position) {
      const n = Math.max(0, Math.min(dest.length, bytes.length - position));
      dest.set(bytes.subarray(position, position + n));
      return n;
    },
  };
}
