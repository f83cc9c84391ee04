/**
 * An LLVM bitstream writer (llvm/include/llvm/Bitstream/BitstreamWriter.h): fixed, VBR and char6 fields
 * packed LSB first, abbreviations (DEFINE_ABBREV, BLOCKINFO), blocks with 32-bit length words, blobs and
 * 32-bit alignment.
 *
 * Unlike LLVM's writer it never seeks back. Every write runs twice: a *measure* pass that only counts bits
 * and records each block's length and any value known only later (the module's VST offset), then a *write*
 * pass that emits those values where LLVM emits a placeholder and back-patches it. So the output can stream
 * straight to a file or to stdout, and the bytes of a big payload (an image constant) are read, shifted into
 * place and handed to the sink in chunks without ever being held whole (issue 8: a 1 GiB image wraps in
 * bounded memory). A payload starts at any bit position, so `emitPayload` shifts bytes across the boundary.
 *
 * | abbrev id | meaning (any block)                                                          |
 * |-----------|------------------------------------------------------------------------------|
 * | 0         | END_BLOCK, then align to 32 bits                                             |
 * | 1         | ENTER_SUBBLOCK: vbr8 block id, vbr4 abbrev width, align 32, u32 length in words |
 * | 2         | DEFINE_ABBREV: vbr5 op count, each op: 1 bit literal?, vbr8 value or 3-bit encoding (+vbr5 width) |
 * | 3         | UNABBREV_RECORD: vbr6 code, vbr6 count, vbr6 each operand                    |
 * | 4...      | the block's BLOCKINFO abbreviations, then its own, in definition order       |
 *
 * Field widths LLVM's reader imposes, whatever the writer could encode (llvm/lib/Bitstream/Reader/
 * BitstreamReader.cpp, 14 and 22 alike): an array's and an unabbreviated record's element count and a blob's
 * length are read by `ReadVBR(6)` into a `uint32_t` (a count of 2^32 or more is cut to its low 32 bits, and the
 * record's elements are then misread: "Malformed global initializer set", "Invalid encoding"); a block's
 * length is one 32-bit word counting 32-bit words; a fixed field holds `width` bits. LLVM's own writer casts
 * the count to `uint32_t` and writes such bitcode anyway; this one refuses (`BITCODE_FIELD_OVERFLOW`) in the
 * measure pass, before a byte is written.
 */
import { OffloadKitError } from "../../engine/errors.js";

/** One abbreviation operand. */
export type AbbrevOp =
  | { readonly literal: number }
  | { readonly fixed: number }
  | { readonly vbr: number }
  | { readonly array: true }
  | { readonly char6: true }
  | { readonly blob: true };

export type Abbrev = readonly AbbrevOp[];

export const lit = (value: number): AbbrevOp => ({ literal: value });
export const fixed = (width: number): AbbrevOp => ({ fixed: width });
export const vbr = (width: number): AbbrevOp => ({ vbr: width });
export const ARRAY: AbbrevOp = { array: true };
export const CHAR6: AbbrevOp = { char6: true };
export const BLOB: AbbrevOp = { blob: true };

const END_BLOCK = 0;
const ENTER_SUBBLOCK = 1;
const DEFINE_ABBREV = 2;
const UNABBREV_RECORD = 3;
export const FIRST_APPLICATION_ABBREV = 4;
const BLOCKINFO_BLOCK_ID = 0;
const BLOCKINFO_CODE_SETBID = 1;

const CHAR6_CODES = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._";
const CHAR6_VALUE = new Int8Array(256).fill(-1);
for (let i = 0; i < CHAR6_CODES.length; i++) CHAR6_VALUE[CHAR6_CODES.charCodeAt(i)] = i;

/** `BitCodeAbbrevOp::isChar6`. */
export function isChar6(byte: number): boolean {
  return CHAR6_VALUE[byte] >= 0;
}

/** Where the bytes go. `write` may keep the array only until it returns (the writer reuses it). */
export interface ByteSink {
  write(bytes: Uint8Array): void;
}

/** Random-access input of a payload (an image): same contract as the engine's ByteSource.read. */
export interface PayloadSource {
  readonly size: number;
  read(dest: Uint8Array, position: number): number;
  readonly bytes?: Uint8Array;
}

/** How each byte of a payload is encoded: an abbreviated array of fixed 8/7-bit or char6 fields, or VBR6. */
export type PayloadEncoding = "fixed8" | "fixed7" | "char6" | "vbr6";

/** Values the measure pass records for the write pass. */
export interface StreamLayout {
  blockWords: number[];
  late: Map<string, number>;
}

interface BlockScope {
  readonly width: number;
  readonly abbrevs: Abbrev[];
  readonly lengthIndex: number;
  readonly startWord: number;
  readonly blockId: number;
}

const CHUNK = 1 << 20;

/** The most elements an array or unabbreviated record (or bytes a blob) may have: `ReadVBR(6)` is 32-bit. */
export const MAX_RECORD_ELEMENTS = 0xffff_ffff;
/** The most 32-bit words a block may hold: its length is one 32-bit word. */
export const MAX_BLOCK_WORDS = 0xffff_ffff;

/** Refuses a record element count (or blob length) LLVM's reader would cut to 32 bits. */
export function checkRecordLength(count: number, what: string): void {
  if (count > MAX_RECORD_ELEMENTS) {
    throw new OffloadKitError(
      "BITCODE_FIELD_OVERFLOW",
      `${what} of ${count} elements does not fit LLVM bitcode: a record holds at most ${MAX_RECORD_ELEMENTS} (LLVM reads the count as 32 bits)`,
      { field: "record length" },
    );
  }
}

export class BitstreamWriter {
  /** Bytes completed so far (in the write pass, also handed to the sink or still in `buffer`). */
  private bytes = 0;
  private acc = 0;
  private accBits = 0;
  private width = 2;
  private abbrevs: Abbrev[] = [];
  private readonly scopes: BlockScope[] = [];
  private readonly blockInfo = new Map<number, Abbrev[]>();
  private blockInfoCurrent = -1;
  private blockCount = 0;
  private readonly buffer: Uint8Array;
  private readonly bufferView: DataView;
  private used = 0;

  private constructor(
    private readonly sink: ByteSink | undefined,
    readonly layout: StreamLayout,
  ) {
    this.buffer = sink === undefined ? new Uint8Array(0) : new Uint8Array(CHUNK);
    this.bufferView = new DataView(this.buffer.buffer);
  }

  /** A pass that counts bits only, filling a fresh layout. */
  static measure(): BitstreamWriter {
    return new BitstreamWriter(undefined, { blockWords: [], late: new Map() });
  }

  /** A pass that writes to `sink`, taking block lengths and late values from a measure pass's layout. */
  static write(sink: ByteSink, layout: StreamLayout): BitstreamWriter {
    return new BitstreamWriter(sink, layout);
  }

  get measuring(): boolean {
    return this.sink === undefined;
  }

  /** `GetCurrentBitNo`. */
  get bitNo(): number {
    return this.bytes * 8 + this.accBits;
  }

  private pushByte(byte: number): void {
    this.bytes++;
    if (this.sink === undefined) return;
    this.buffer[this.used++] = byte;
    if (this.used === CHUNK) this.flushBuffer();
  }

  private flushBuffer(): void {
    if (this.used > 0) this.sink!.write(this.buffer.subarray(0, this.used));
    this.used = 0;
  }

  /** Hands every completed byte to the sink; call once at the end. */
  finish(): void {
    if (this.accBits !== 0) throw new Error("bitstream: finish() before the last word was aligned");
    if (this.sink !== undefined) this.flushBuffer();
  }

  /** `Emit`: the low `width` bits of `value` (width <= 32, value < 2^width). */
  emit(value: number, width: number): void {
    let left = width;
    let rest = value;
    while (left > 0) {
      const room = 8 - this.accBits;
      const take = left < room ? left : room;
      const piece = take === 32 ? rest : rest % (1 << take);
      this.acc |= piece << this.accBits;
      this.accBits += take;
      left -= take;
      rest = Math.floor(rest / (1 << take));
      if (this.accBits === 8) {
        this.pushByte(this.acc & 0xff);
        this.acc = 0;
        this.accBits = 0;
      }
    }
  }

  /** `EmitVBR64`: chunks of width-1 bits, the top bit of each saying another follows. */
  emitVbr(value: number, width: number): void {
    const high = 2 ** (width - 1);
    let rest = value;
    while (rest >= high) {
      this.emit((rest % high) + high, width);
      rest = Math.floor(rest / high);
    }
    this.emit(rest, width);
  }

  /** `FlushToWord`: zero bits up to the next multiple of 32. */
  alignTo32(): void {
    const pad = (32 - (this.bitNo % 32)) % 32;
    if (pad > 0) this.emit(0, pad);
  }

  /** Writes raw bytes at a byte boundary (the Darwin wrapper header, the magic). */
  emitBytes(bytes: Uint8Array): void {
    if (this.accBits !== 0) throw new Error("bitstream: raw bytes off a byte boundary");
    for (const byte of bytes) this.pushByte(byte);
  }

  /** A value the measure pass learns late (e.g. the VST offset); the write pass gets it early. */
  lateValue(name: string): number {
    return this.layout.late.get(name) ?? 0;
  }

  recordLateValue(name: string, value: number): void {
    if (this.measuring) this.layout.late.set(name, value);
    else if (this.layout.late.get(name) !== value) throw new Error(`bitstream: late value ${name} differs between passes`);
  }

  enterSubblock(blockId: number, width: number): void {
    this.emit(ENTER_SUBBLOCK, this.width);
    this.emitVbr(blockId, 8);
    this.emitVbr(width, 4);
    this.alignTo32();
    const lengthIndex = this.blockCount++;
    this.emit(this.measuring ? 0 : this.layout.blockWords[lengthIndex]!, 32);
    this.scopes.push({ width: this.width, abbrevs: this.abbrevs, lengthIndex, startWord: this.bitNo / 32, blockId });
    this.width = width;
    this.abbrevs = [...(this.blockInfo.get(blockId) ?? [])];
  }

  exitBlock(): void {
    this.emit(END_BLOCK, this.width);
    this.alignTo32();
    const scope = this.scopes.pop()!;
    const words = this.bitNo / 32 - scope.startWord;
    if (words > MAX_BLOCK_WORDS) {
      throw new OffloadKitError(
        "BITCODE_FIELD_OVERFLOW",
        `block ${scope.blockId} of ${words * 4} bytes does not fit LLVM bitcode: a block's length is a 32-bit count of 32-bit words (at most ${MAX_BLOCK_WORDS * 4} bytes)`,
        { field: "block length" },
      );
    }
    if (this.measuring) this.layout.blockWords[scope.lengthIndex] = words;
    else if (this.layout.blockWords[scope.lengthIndex] !== words) throw new Error("bitstream: block length differs between passes");
    this.width = scope.width;
    this.abbrevs = scope.abbrevs;
  }

  private emitAbbrevDefinition(abbrev: Abbrev): void {
    this.emit(DEFINE_ABBREV, this.width);
    this.emitVbr(abbrev.length, 5);
    for (const op of abbrev) {
      if ("literal" in op) {
        this.emit(1, 1);
        this.emitVbr(op.literal, 8);
      } else if ("fixed" in op) {
        this.emit(0, 1);
        this.emit(1, 3);
        this.emitVbr(op.fixed, 5);
      } else if ("vbr" in op) {
        this.emit(0, 1);
        this.emit(2, 3);
        this.emitVbr(op.vbr, 5);
      } else {
        this.emit(0, 1);
        this.emit("array" in op ? 3 : "char6" in op ? 4 : 5, 3);
      }
    }
  }

  /** `EmitAbbrev`: defines an abbreviation in the current block; returns its id. */
  defineAbbrev(abbrev: Abbrev): number {
    this.emitAbbrevDefinition(abbrev);
    this.abbrevs.push(abbrev);
    return this.abbrevs.length - 1 + FIRST_APPLICATION_ABBREV;
  }

  /** `EnterBlockInfoBlock`. */
  enterBlockInfo(): void {
    this.enterSubblock(BLOCKINFO_BLOCK_ID, 2);
    this.blockInfoCurrent = -1;
  }

  /** `EmitBlockInfoAbbrev`: an abbreviation every later block `blockId` starts with; returns its id there. */
  defineBlockInfoAbbrev(blockId: number, abbrev: Abbrev): number {
    if (this.blockInfoCurrent !== blockId) {
      this.emitRecord(BLOCKINFO_CODE_SETBID, [blockId]);
      this.blockInfoCurrent = blockId;
    }
    this.emitAbbrevDefinition(abbrev);
    const list = this.blockInfo.get(blockId) ?? [];
    list.push(abbrev);
    this.blockInfo.set(blockId, list);
    return list.length - 1 + FIRST_APPLICATION_ABBREV;
  }

  private emitScalar(op: AbbrevOp, value: number): void {
    if ("fixed" in op) {
      // The VST offset (fixed 32, in words) is the one that can grow with the module.
      if (value >= 2 ** op.fixed) {
        throw new OffloadKitError("BITCODE_FIELD_OVERFLOW", `value ${value} does not fit a ${op.fixed}-bit field of LLVM bitcode`, { field: `fixed(${op.fixed})` });
      }
      this.emit(value, op.fixed);
    }
    else if ("vbr" in op) this.emitVbr(value, op.vbr);
    else if ("char6" in op) this.emit(CHAR6_VALUE[value]!, 6);
    else throw new Error("bitstream: not a scalar operand");
  }

  /** `EmitRecord`: unabbreviated when `abbrevId` is 0, else through that abbreviation. */
  emitRecord(code: number, values: readonly number[], abbrevId = 0): void {
    // No checkRecordLength here: a JS array holds at most 2^32 - 1 values, which LLVM's 32-bit count reads.
    if (abbrevId === 0) {
      this.emit(UNABBREV_RECORD, this.width);
      this.emitVbr(code, 6);
      this.emitVbr(values.length, 6);
      for (const value of values) this.emitVbr(value, 6);
      return;
    }
    const abbrev = this.abbrevs[abbrevId - FIRST_APPLICATION_ABBREV];
    if (abbrev === undefined) throw new Error(`bitstream: no abbreviation ${abbrevId}`);
    this.emit(abbrevId, this.width);
    let next = 0;
    for (let i = 0; i < abbrev.length; i++) {
      const op = abbrev[i]!;
      const value = i === 0 ? code : values[next++];
      if ("literal" in op) {
        if (value !== op.literal) throw new Error(`bitstream: literal ${op.literal} given ${value}`);
      } else if ("array" in op) {
        const element = abbrev[++i]!;
        const rest = values.length - (next - 1);
        this.emitVbr(rest, 6);
        for (let k = next - 1; k < values.length; k++) this.emitScalar(element, values[k]!);
        next = values.length;
      } else if ("blob" in op) {
        throw new Error("bitstream: use emitBlobRecord for blobs");
      } else {
        this.emitScalar(op, value!);
      }
    }
    if (next < values.length) throw new Error("bitstream: too many operands for the abbreviation");
  }

  /** `EmitRecordWithBlob` for an abbreviation [literal code, Blob]. */
  emitBlobRecord(abbrevId: number, blob: Uint8Array): void {
    checkRecordLength(blob.length, "blob");
    this.emit(abbrevId, this.width);
    this.emitVbr(blob.length, 6);
    this.alignTo32();
    this.emitBytes(blob);
    this.alignTo32();
  }

  /**
   * The operands of an array record whose elements are a payload's bytes: `head` values first (already
   * written by the caller through `emitRecordHead`), then `count` bytes of `source` from `position`, each
   * encoded as `encoding`. Streams in chunks; `scratch` bytes at most are held.
   */
  emitPayload(source: PayloadSource, position: number, count: number, encoding: PayloadEncoding, scratch: Uint8Array): void {
    if (this.measuring) {
      this.countPayload(source, position, count, encoding, scratch);
      return;
    }
    let done = 0;
    while (done < count) {
      if (encoding === "fixed8" && this.accBits !== 0 && scratch.length >= 8) {
        // Land the input at the output's phase mod 4, so that whole words line up on both sides.
        const phase = this.used & 3;
        const want = Math.min((scratch.length - 4) & ~3, count - done);
        const dest = scratch.subarray(phase, phase + want);
        if (source.bytes !== undefined) dest.set(source.bytes.subarray(position + done, position + done + want));
        else readInto(source, dest, position + done);
        this.emitFixed8(dest);
        done += want;
        continue;
      }
      const want = Math.min(scratch.length, count - done);
      const chunk = readFully(source, scratch, position + done, want);
      if (encoding === "fixed8") this.emitFixed8(chunk);
      else for (let i = 0; i < chunk.length; i++) this.emitElement(chunk[i]!, encoding);
      done += want;
    }
  }

  private emitElement(byte: number, encoding: PayloadEncoding): void {
    if (encoding === "fixed7") this.emit(byte, 7);
    else if (encoding === "char6") this.emit(CHAR6_VALUE[byte]!, 6);
    else if (encoding === "vbr6") this.emitVbr(byte, 6);
    else this.emit(byte, 8);
  }

  /** Bits only: 6 per byte under 32 and 12 otherwise for VBR6, the field width for the rest. */
  private countPayload(source: PayloadSource, position: number, count: number, encoding: PayloadEncoding, scratch: Uint8Array): void {
    let bits: number;
    if (encoding === "vbr6") {
      let wide = 0;
      let done = 0;
      while (done < count) {
        const want = Math.min(scratch.length, count - done);
        const chunk = readFully(source, scratch, position + done, want);
        for (let i = 0; i < chunk.length; i++) if (chunk[i]! >= 32) wide++;
        done += want;
      }
      bits = count * 6 + wide * 6;
    } else {
      bits = count * (encoding === "fixed8" ? 8 : encoding === "fixed7" ? 7 : 6);
    }
    this.skipBits(bits);
  }

  /** Advances the bit position without output (measure pass only). */
  private skipBits(bits: number): void {
    const total = this.accBits + bits;
    this.bytes += Math.floor(total / 8);
    this.accBits = total % 8;
    this.acc = 0;
  }

  /** Whole bytes at any bit offset: a copy when aligned, a one-pass shift across byte boundaries otherwise. */
  private emitFixed8(chunk: Uint8Array): void {
    const shift = this.accBits;
    if (shift === 0) {
      this.pushBytes(chunk);
      return;
    }
    const back = 8 - shift;
    const backWord = 32 - shift;
    let carry = this.acc;
    const n = chunk.length;
    const input = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const output = this.bufferView;
    let i = 0;
    while (i < n) {
      let room = CHUNK - this.used;
      if (room === 0) {
        this.flushBuffer();
        room = CHUNK;
      }
      const end = Math.min(n, i + room);
      const buffer = this.buffer;
      let at = this.used;
      for (; i < end && (at & 3) !== 0; i++) {
        const byte = chunk[i]!;
        buffer[at++] = (carry | (byte << shift)) & 0xff;
        carry = byte >>> back;
      }
      // Four bytes at a time as one little-endian word shifted across the boundary: aligned Int32Array views
      // when the input's phase matches (emitPayload arranges it), a DataView otherwise (measured: 4x and 2x
      // the byte loop).
      const words = (end - i) >>> 2;
      if (words > 0 && ((chunk.byteOffset + i) & 3) === 0) {
        const in32 = new Int32Array(chunk.buffer, chunk.byteOffset + i, words);
        const out32 = new Int32Array(buffer.buffer, buffer.byteOffset + at, words);
        for (let k = 0; k < words; k++) {
          const word = in32[k]!;
          out32[k] = (word << shift) | carry;
          carry = word >>> backWord;
        }
        i += words * 4;
        at += words * 4;
      }
      for (; i + 4 <= end; i += 4, at += 4) {
        const word = input.getUint32(i, true);
        output.setUint32(at, (word << shift) | carry, true);
        carry = word >>> backWord;
      }
      for (; i < end; i++) {
        const byte = chunk[i]!;
        buffer[at++] = (carry | (byte << shift)) & 0xff;
        carry = byte >>> back;
      }
      this.bytes += at - this.used;
      this.used = at;
    }
    this.acc = carry;
  }

  private pushBytes(chunk: Uint8Array): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.used === CHUNK) this.flushBuffer();
      const n = Math.min(chunk.length - i, CHUNK - this.used);
      this.buffer.set(chunk.subarray(i, i + n), this.used);
      this.used += n;
      this.bytes += n;
      i += n;
    }
  }

  /**
   * The start of an abbreviated array record whose array is a payload: the abbrev id, scalar operands
   * before the array, and the array's vbr6 element count. The caller then emits the elements.
   */
  emitArrayRecordHead(abbrevId: number, code: number, count: number): void {
    const abbrev = this.abbrevs[abbrevId - FIRST_APPLICATION_ABBREV];
    if (abbrev === undefined || abbrev.length !== 3 || !("literal" in abbrev[0]!) || abbrev[0].literal !== code || !("array" in abbrev[1]!)) {
      throw new Error("bitstream: payload records need a [literal code, Array, element] abbreviation");
    }
    checkRecordLength(count, `array of record ${code}`);
    this.emit(abbrevId, this.width);
    this.emitVbr(count, 6);
  }

  /** The start of an unabbreviated record whose operands are a payload's bytes (each a vbr6). */
  emitUnabbrevRecordHead(code: number, count: number): void {
    checkRecordLength(count, `record ${code}`);
    this.emit(UNABBREV_RECORD, this.width);
    this.emitVbr(code, 6);
    this.emitVbr(count, 6);
  }

  /** The element encoding of an array abbreviation's element operand. */
  arrayElementEncoding(abbrevId: number): PayloadEncoding {
    const element = this.abbrevs[abbrevId - FIRST_APPLICATION_ABBREV]![2]!;
    if ("char6" in element) return "char6";
    if ("fixed" in element && element.fixed === 7) return "fixed7";
    if ("fixed" in element && element.fixed === 8) return "fixed8";
    throw new Error("bitstream: unsupported payload element encoding");
  }
}

function readInto(source: PayloadSource, dest: Uint8Array, position: number): void {
  let done = 0;
  while (done < dest.length) {
    const n = source.read(dest.subarray(done), position + done);
    if (n <= 0) throw new Error(`payload: short read at ${position + done}`);
    done += n;
  }
}

function readFully(source: PayloadSource, scratch: Uint8Array, position: number, length: number): Uint8Array {
  if (source.bytes !== undefined) return source.bytes.subarray(position, position + length);
  const view = scratch.subarray(0, length);
  let done = 0;
  while (done < length) {
    const n = source.read(view.subarray(done), position + done);
    if (n <= 0) throw new Error(`payload: short read at ${position + done}`);
    done += n;
  }
  return view;
}

/** `Log2_32_Ceil`: the bits needed for values 0..n-1 (0 for n <= 1). */
export function log2Ceil(n: number): number {
  if (n <= 1) return 0;
  return 32 - Math.clz32(n - 1);
}
