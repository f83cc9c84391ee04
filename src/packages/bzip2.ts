/**
 * bzip2 decoded as a stream, without the `bzip2` program: in browsers, and in Node when the program is
 * missing. A TypeScript port of the block decoder in unbzip2-stream 1.4.3's `lib/bzip2.js` (antimatter15's
 * bzip2.js after Rob Landley's micro-bunzip, both MIT; the layout and limits follow libbzip2 1.0.8's
 * decompress.c), with two changes the measurements and the fuzz campaign asked for (README, "Packages"):
 * output goes into byte arrays instead of a per-byte callback and a JS array (the library's cost), and a
 * run of RUNA/RUNB symbols is bounded (in the library, 32 of them overflow the run length to a negative
 * number and `while (t--)` never ends: a hang on crafted input; libbzip2 refuses runs past 2 M).
 *
 * | part | layout |
 * |---|---|
 * | stream header | `BZh` + level `1`-`9` (block size in 100 kB) |
 * | block | 48-bit magic 0x314159265359, block CRC (32), randomised (1), BWT origin (24), symbol map (16 + 16 x 16), groups (3), selectors (15 + unary MTF), Huffman lengths (5 + deltas), then the symbols |
 * | end of stream | 48-bit magic 0x177245385090, the stream CRC (32), padding to a byte |
 *
 * The decoder is synchronous and works a block at a time, so before each block this holds as much input as
 * a block can take (`25000 + 100000 x level` bytes, unbzip2-stream's bound; a 900 kB block of random bytes
 * compresses to about 904 kB) or the rest of the stream. A block that needs more (crafted; libbzip2's
 * encoder never writes one) is decoded again with twice the input held, up to 3 bytes per block byte
 * (libbzip2's own bound on a compressed block), and refused past that. Memory is one block of input, the BWT buffer
 * (4 bytes x 100 kB x level) and one block's output. Streams may follow one another; bytes after the last
 * that do not start another stream are ignored, as `bzip2 -d` ignores "trailing garbage".
 *
 * The ported decoder's notice (unbzip2-stream/lib/bzip2.js):
 * Copyright 2011 by antimatter15 (antimatter15@gmail.com). Based on micro-bunzip by Rob Landley (rob@landley.net).
 * Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
 * associated documentation files (the "Software"), to deal in the Software without restriction, including
 * without limitation the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 * copies of the Software, and to permit persons to whom the Software is furnished to do so, subject to the
 * following conditions: The above copyright notice and this permission notice shall be included in all
 * copies or substantial portions of the Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY
 * KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A
 * PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY
 * CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF
 * OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
 */
import { OffloadKitError } from "../engine/errors.js";
import { BZIP2_CRC_TABLE } from "../compress/bzip2-crc.js";

/** Output is handed on in pieces of this size. */
const PIECE = 64 * 1024;
const MAX_HUFCODE_BITS = 20;
const MAX_SYMBOLS = 258;
const GROUP_SIZE = 50;
const BLOCK_MAGIC_HI = 0x314159;
const BLOCK_MAGIC_LO = 0x265359;
const END_MAGIC_HI = 0x177245;
const END_MAGIC_LO = 0x385090;

const CRC_TABLE = BZIP2_CRC_TABLE;

/** The held input ran out: only possible at the end of the input (else more is pulled first). */
class InputEnded extends Error {}

function corrupt(detail: string): OffloadKitError {
  return new OffloadKitError("DECODE_FAILED", `bzip2 data is corrupt or cut short (${detail})`);
}

/** A big-endian bit reader over the input held. */
class Bits {
  data = new Uint8Array(0);
  pos = 0;
  /** Bytes dropped from the front of `data` so far (so a mark survives `append`). */
  private dropped = 0;
  private buffer = 0;
  private count = 0;

  mark(): { at: number; buffer: number; count: number } {
    return { at: this.dropped + this.pos, buffer: this.buffer, count: this.count };
  }

  reset(mark: { at: number; buffer: number; count: number }): void {
    this.pos = mark.at - this.dropped;
    this.buffer = mark.buffer;
    this.count = mark.count;
  }

  read(n: number): number {
    while (this.count < n) {
      if (this.pos >= this.data.length) throw new InputEnded();
      this.buffer = ((this.buffer << 8) | this.data[this.pos++]!) >>> 0;
      this.count += 8;
    }
    this.count -= n;
    const value = (this.buffer >>> this.count) & ((1 << n) - 1);
    this.buffer &= (1 << this.count) - 1;
    return value;
  }

  read32(): number {
    return ((this.read(16) << 16) | this.read(16)) >>> 0;
  }

  /** Drops the bits left in the current byte. */
  align(): void {
    this.count -= this.count & 7;
    this.buffer &= (1 << this.count) - 1;
  }

  /** Bytes held and not yet consumed (whole bytes in the bit buffer count as held). */
  get held(): number {
    return this.data.length - this.pos + (this.count >> 3);
  }

  /** Appends input, dropping what was consumed. */
  append(chunks: readonly Uint8Array[]): void {
    const rest = this.data.length - this.pos;
    const total = rest + chunks.reduce((n, c) => n + c.length, 0);
    const next = new Uint8Array(total);
    next.set(this.data.subarray(this.pos));
    let at = rest;
    for (const c of chunks) {
      next.set(c, at);
      at += c.length;
    }
    this.data = next;
    this.dropped += this.pos;
    this.pos = 0;
  }
}

/** Tables reused from block to block. */
class BlockState {
  readonly byteCount = new Int32Array(256);
  readonly symToByte = new Uint8Array(256);
  readonly mtfSymbol = new Int32Array(256);
  readonly selectors = new Uint8Array(0x8000);
  readonly length = new Uint8Array(MAX_SYMBOLS);
  readonly temp = new Uint16Array(MAX_HUFCODE_BITS + 1);
  readonly groups = Array.from({ length: 6 }, () => ({
    permute: new Int32Array(MAX_SYMBOLS), limit: new Int32Array(MAX_HUFCODE_BITS + 2), base: new Int32Array(MAX_HUFCODE_BITS + 2), minLen: 0, maxLen: 0,
  }));
  work: Int32Array;

  constructor(readonly blockSize: number) {
    this.work = new Int32Array(100000 * blockSize);
  }
}

/**
 * Decodes one block into `emit`'s pieces; returns the block's CRC, or undefined at the end-of-stream
 * marker (after checking the stream CRC against `streamCrc`).
 */
function decodeBlock(bits: Bits, s: BlockState, streamCrc: number, out: (bytes: Uint8Array) => void): number | undefined {
  const hi = bits.read(24);
  const lo = bits.read(24);
  if (hi === END_MAGIC_HI && lo === END_MAGIC_LO) {
    const stored = bits.read32();
    if (stored !== streamCrc >>> 0) throw corrupt(`stream CRC ${stored.toString(16)}, computed ${(streamCrc >>> 0).toString(16)}`);
    bits.align();
    return undefined;
  }
  if (hi !== BLOCK_MAGIC_HI || lo !== BLOCK_MAGIC_LO) throw corrupt("no block magic");
  const blockCrc = bits.read32();
  if (bits.read(1)) throw corrupt("randomised blocks (bzip2 < 0.9.5) are not read");
  const bufsize = s.work.length;
  const origPtr = bits.read(24);
  if (origPtr > bufsize) throw corrupt(`BWT origin ${origPtr} past the ${bufsize}-byte block`);
  const used = bits.read(16);
  let symTotal = 0;
  for (let i = 0; i < 16; i++) {
    if (used & (1 << (15 - i))) {
      const k = bits.read(16);
      for (let j = 0; j < 16; j++) if (k & (1 << (15 - j))) s.symToByte[symTotal++] = 16 * i + j;
    }
  }
  if (symTotal === 0) throw corrupt("a block uses no byte values");
  const groupCount = bits.read(3);
  if (groupCount < 2 || groupCount > 6) throw corrupt(`${groupCount} Huffman groups`);
  const nSelectors = bits.read(15);
  if (nSelectors === 0) throw corrupt("no selectors");
  const mtf = s.mtfSymbol;
  for (let i = 0; i < groupCount; i++) mtf[i] = i;
  for (let i = 0; i < nSelectors; i++) {
    let j = 0;
    while (bits.read(1)) if (++j >= groupCount) throw corrupt("selector past the groups");
    const uc = mtf[j]!;
    for (let k = j - 1; k >= 0; k--) mtf[k + 1] = mtf[k]!;
    mtf[0] = uc;
    s.selectors[i] = uc;
  }
  const symCount = symTotal + 2;
  const length = s.length;
  const temp = s.temp;
  for (let g = 0; g < groupCount; g++) {
    let t = bits.read(5);
    for (let i = 0; i < symCount; i++) {
      for (;;) {
        if (t < 1 || t > MAX_HUFCODE_BITS) throw corrupt(`Huffman code length ${t}`);
        if (!bits.read(1)) break;
        t += bits.read(1) ? -1 : 1;
      }
      length[i] = t;
    }
    let minLen = length[0]!;
    let maxLen = minLen;
    for (let i = 1; i < symCount; i++) {
      if (length[i]! > maxLen) maxLen = length[i]!;
      else if (length[i]! < minLen) minLen = length[i]!;
    }
    const group = s.groups[g]!;
    group.minLen = minLen;
    group.maxLen = maxLen;
    let pp = 0;
    for (let i = minLen; i <= maxLen; i++) for (let sym = 0; sym < symCount; sym++) if (length[sym] === i) group.permute[pp++] = sym;
    for (let i = minLen; i <= maxLen; i++) temp[i] = group.limit[i] = 0;
    for (let i = 0; i < symCount; i++) temp[length[i]!]!++;
    pp = 0;
    let acc = 0;
    for (let i = minLen; i < maxLen; i++) {
      pp += temp[i]!;
      group.limit[i] = pp - 1;
      pp <<= 1;
      acc += temp[i]!;
      group.base[i + 1] = pp - acc;
    }
    group.limit[maxLen] = pp + temp[maxLen]! - 1;
    group.base[minLen] = 0;
  }
  const byteCount = s.byteCount;
  for (let i = 0; i < 256; i++) {
    mtf[i] = i;
    byteCount[i] = 0;
  }
  const buf = s.work;
  let runPos = 0;
  let run = 0;
  let count = 0;
  let left = 0;
  let selector = 0;
  let group = s.groups[0]!;
  for (;;) {
    if (left-- === 0) {
      left = GROUP_SIZE - 1;
      if (selector >= nSelectors) throw corrupt("more symbols than selectors");
      group = s.groups[s.selectors[selector++]!]!;
    }
    let i = group.minLen;
    let j = bits.read(i);
    for (;;) {
      if (i > group.maxLen) throw corrupt("bad Huffman code");
      if (j <= group.limit[i]!) break;
      i++;
      j = (j << 1) | bits.read(1);
    }
    j -= group.base[i]!;
    if (j < 0 || j >= MAX_SYMBOLS) throw corrupt("bad Huffman code");
    const nextSym = group.permute[j]!;
    if (nextSym <= 1) {
      if (runPos === 0) {
        runPos = 1;
        run = 0;
      }
      run += nextSym === 0 ? runPos : 2 * runPos;
      // The library let runPos overflow here (a hang); no run may exceed the block.
      if (run > bufsize) throw corrupt(`a run of ${run} bytes in a ${bufsize}-byte block`);
      runPos *= 2;
      continue;
    }
    if (runPos !== 0) {
      runPos = 0;
      if (count + run > bufsize) throw corrupt("a run past the end of the block");
      const uc = s.symToByte[mtf[0]!]!;
      byteCount[uc]! += run;
      buf.fill(uc, count, count + run);
      count += run;
    }
    if (nextSym > symTotal) break;
    if (count >= bufsize) throw corrupt("more bytes than the block holds");
    const index = nextSym - 1;
    const uc = mtf[index]!;
    for (let k = index - 1; k >= 0; k--) mtf[k + 1] = mtf[k]!;
    mtf[0] = uc;
    const byte = s.symToByte[uc]!;
    byteCount[byte]!++;
    buf[count++] = byte;
  }
  if (origPtr >= count) throw corrupt(`BWT origin ${origPtr} past the block's ${count} bytes`);
  let sum = 0;
  for (let i = 0; i < 256; i++) {
    const k = sum + byteCount[i]!;
    byteCount[i] = sum;
    sum = k;
  }
  for (let i = 0; i < count; i++) {
    const uc = buf[i]! & 0xff;
    buf[byteCount[uc]!]! |= i << 8;
    byteCount[uc]!++;
  }
  let crc = -1;
  let piece = new Uint8Array(PIECE);
  let at = 0;
  let pos = buf[origPtr]!;
  let current = pos & 0xff;
  pos >>= 8;
  let repeat = -1;
  while (count-- > 0) {
    const previous = current;
    pos = buf[pos]!;
    current = pos & 0xff;
    pos >>= 8;
    let copies = 1;
    let outbyte = current;
    if (repeat++ === 3) {
      copies = current;
      outbyte = previous;
      current = -1;
    }
    while (copies-- > 0) {
      crc = (crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ outbyte) & 0xff]!;
      piece[at++] = outbyte;
      if (at === PIECE) {
        out(piece);
        piece = new Uint8Array(PIECE);
        at = 0;
      }
    }
    if (current !== previous) repeat = 0;
  }
  if (at > 0) out(piece.subarray(0, at));
  crc = ~crc >>> 0;
  if (crc !== blockCrc) throw corrupt(`block CRC ${blockCrc.toString(16)}, computed ${crc.toString(16)}`);
  return ((streamCrc << 1) | (streamCrc >>> 31)) ^ crc;
}

/** A bzip2 stream (or several back to back), decoded; fails with DECODE_FAILED on corrupt or cut input. */
export async function* decodeBzip2(input: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const iterator = input[Symbol.asyncIterator]();
  const bits = new Bits();
  let ended = false;
  let read = 0;
  /** Pulls input until `n` bytes are held, or the input ends. */
  const hold = async (n: number) => {
    const chunks: Uint8Array[] = [];
    let more = 0;
    while (!ended && bits.held + more < n) {
      const next = await iterator.next();
      if (next.done === true) ended = true;
      else {
        chunks.push(next.value);
        more += next.value.length;
        read += next.value.length;
      }
    }
    if (chunks.length > 0) bits.append(chunks);
  };
  let state: BlockState | undefined;
  let streams = 0;
  let streamCrc = 0;
  try {
    for (;;) {
      if (state === undefined) {
        await hold(4);
        if (bits.held === 0 && ended) {
          if (streams === 0) throw corrupt("no bzip2 stream");
          return;
        }
        // bzip2 -d's rule after a whole stream: a byte that differs from `BZh1`-`BZh9` makes the rest trailing
        // garbage (ignored), while the input ending inside a header that matched so far is a cut stream.
        let level = -1;
        let matched = true;
        for (const expected of [0x42, 0x5a, 0x68]) {
          if (bits.read(8) !== expected) {
            matched = false;
            break;
          }
        }
        if (matched) level = bits.read(8) - 0x30;
        if (level < 1 || level > 9) {
          if (streams > 0) break;
          throw corrupt("no BZh header");
        }
        state = new BlockState(level);
        streamCrc = 0;
        continue;
      }
      let want = 25000 + 100000 * state.blockSize;
      let pieces: Uint8Array[];
      let blockCrc: number | undefined;
      for (;;) {
        await hold(want);
        const mark = bits.mark();
        pieces = [];
        try {
          blockCrc = decodeBlock(bits, state, streamCrc, (p) => pieces.push(p));
          break;
        } catch (e) {
          if (!(e instanceof InputEnded) || ended || want >= 300000 * state.blockSize) throw e;
          bits.reset(mark);
          want = Math.min(2 * want, 300000 * state.blockSize);
        }
      }
      if (blockCrc === undefined) {
        state = undefined;
        streams++;
        continue;
      }
      streamCrc = blockCrc;
      yield* pieces;
    }
    // Trailing garbage: read to the end, so a failing input is still heard.
    while (!(await iterator.next()).done);
  } catch (e) {
    if (e instanceof OffloadKitError) throw e;
    if (e instanceof InputEnded) throw corrupt(`the stream ends early, after ${read} bytes of input`);
    throw e;
  } finally {
    await iterator.return?.();
  }
}
