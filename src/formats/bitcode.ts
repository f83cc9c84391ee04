/**
 * LLVM bitcode, as far as archive symbol tables need it: the top-level block structure and the IR
 * symbol table (irsymtab) that every bitcode writer since LLVM 5 appends, read without parsing the IR.
 *
 * Follows llvm/lib/Bitcode/Reader/BitcodeReader.cpp (`initStream`, `getBitcodeFileContents`,
 * `readBlobInRecord`), llvm/include/llvm/Bitstream/BitstreamReader.h (cursor, abbreviations, blobs) and
 * llvm/include/llvm/Object/IRSymtab.h (storage format, version 3). The archive writer asks
 * `IRObjectFile` for symbols; its symbol list (ModuleSymbolTable order, flags) is the one irsymtab
 * stores, so the stored table gives the same archive symbols without an IR parser.
 *
 * | at | size | field                                                                      |
 * |----|------|----------------------------------------------------------------------------|
 * | 0  | 4    | "BC" 0xC0DE (or the wrapper 0x0B17C0DE: u32 version, offset, size, cputype) |
 * | 4  | ...  | bitstream, abbreviation width 2: IDENTIFICATION (13), MODULE (8), SYMTAB    |
 * |    |      | (25) and STRTAB (23) blocks, each [1, vbr8 id, vbr4 width, align32, u32 words] |
 *
 * irsymtab (the SYMTAB blob; all words u32 LE; a Str is {offset, size} into the STRTAB blob, a Range
 * {byte offset, count} into the SYMTAB blob):
 *
 * | at | field                                                                                 |
 * |----|---------------------------------------------------------------------------------------|
 * | 0  | Version (3)                                                                           |
 * | 4  | Producer (Str), Modules, Comdats (Ranges)                                              |
 * | 28 | Symbols (Range of 24-byte {Name Str, IRName Str, ComdatIndex, Flags})                 |
 * | 36 | Uncommons, TargetTriple, SourceFileName, COFFLinkerOpts, DependentLibraries            |
 *
 * Symbol flag bits: 0-1 visibility, 3 undefined, 4 weak, 5 common, 6 indirect, 7 used, 8 tls,
 * 9 may_omit, 10 global, 11 format_specific, 12 unnamed_addr, 13 executable.
 */
import { bytesSource, readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import type { PackedSymbols } from "./archive.js";
import { latin1Decode } from "./bytes.js";

const IDENTIFICATION_BLOCK_ID = 13;
const MODULE_BLOCK_ID = 8;
const STRTAB_BLOCK_ID = 23;
const SYMTAB_BLOCK_ID = 25;
const BLOB_RECORD = 1;

export const IRSYMTAB_VERSION = 3;
const HEADER_SIZE = 76;
const SYMBOL_SIZE = 24;
const FB_UNDEFINED = 3;
const FB_GLOBAL = 10;
const FB_FORMAT_SPECIFIC = 11;

export function isBitcode(head: Uint8Array): boolean {
  if (head.length < 4) return false;
  return (head[0] === 0x42 && head[1] === 0x43 && head[2] === 0xc0 && head[3] === 0xde) ||
    (head[0] === 0xde && head[1] === 0xc0 && head[2] === 0x17 && head[3] === 0x0b);
}

/** A bitcode reading failure, worded like LLVM's reader where it has a word for it. */
export class BitcodeError extends Error {}

interface Abbrev {
  readonly ops: readonly { readonly literal?: number; readonly encoding?: number; readonly width?: number }[];
}

const FIXED = 1;
const VBR = 2;
const ARRAY = 3;
const CHAR6 = 4;
const BLOB = 5;

/**
 * Random access to a source's bytes through a few cached 4 KiB pages: the walk touches block headers
 * scattered through the file, so only those pages are read (a module block is skipped by its length).
 */
class PagedBytes {
  private static readonly PAGE = 4096;
  private static readonly SLOTS = 4;
  /** Reused across instances: indexing many members allocates no pages. */
  private static readonly buffers = Array.from({ length: PagedBytes.SLOTS }, () => new Uint8Array(PagedBytes.PAGE));
  /** The instance whose pages the shared buffers hold. */
  private static owner: PagedBytes | undefined;
  private readonly slotPage = new Array<number>(PagedBytes.SLOTS).fill(-1);
  private next = 0;
  private lastPage = -1;
  private lastSlot = 0;

  constructor(private readonly source: ByteSource, readonly length: number, private readonly base = 0) {}

  byte(at: number): number {
    if (PagedBytes.owner !== this) {
      PagedBytes.owner = this;
      this.slotPage.fill(-1);
      this.lastPage = -1;
    }
    const index = Math.floor(at / PagedBytes.PAGE);
    if (index !== this.lastPage) {
      let slot = this.slotPage.indexOf(index);
      if (slot === -1) {
        slot = this.next;
        this.next = (this.next + 1) % PagedBytes.SLOTS;
        const start = index * PagedBytes.PAGE;
        const want = Math.min(PagedBytes.PAGE, this.length - start);
        const buffer = PagedBytes.buffers[slot].subarray(0, want);
        let done = 0;
        while (done < want) {
          const n = this.source.read(buffer.subarray(done), this.base + start + done);
          if (n <= 0) throw new BitcodeError("Malformed block");
          done += n;
        }
        this.slotPage[slot] = index;
      }
      this.lastPage = index;
      this.lastSlot = slot;
    }
    return PagedBytes.buffers[this.lastSlot][at - index * PagedBytes.PAGE];
  }
}

/** A bit cursor (LLVM's SimpleBitstreamCursor, reading LSB first). */
class BitCursor {
  bit = 0;
  constructor(readonly bytes: PagedBytes) {}

  get size(): number {
    return this.bytes.length;
  }

  atEnd(): boolean {
    return this.bit >= this.bytes.length * 8;
  }

  read(width: number): number {
    if (width === 0) return 0;
    if (this.bit + width > this.bytes.length * 8) throw new BitcodeError("Malformed block");
    // A byte's worth of bits at a time; multiplication keeps widths above 31 exact.
    let value = 0;
    let scale = 1;
    let at = this.bit;
    let left = width;
    while (left > 0) {
      const shift = at & 7;
      const take = Math.min(8 - shift, left);
      value += ((this.bytes.byte(Math.floor(at / 8)) >>> shift) & ((1 << take) - 1)) * scale;
      scale *= 2 ** take;
      at += take;
      left -= take;
    }
    this.bit = at;
    return value;
  }

  readVbr(width: number): number {
    const high = 2 ** (width - 1);
    let value = 0;
    let scale = 1;
    for (;;) {
      const piece = this.read(width);
      value += (piece % high) * scale;
      if (piece < high) return value;
      scale *= high;
      if (scale > 2 ** 64) throw new BitcodeError("Unterminated VBR");
    }
  }

  alignTo32(): void {
    this.bit = Math.ceil(this.bit / 32) * 32;
  }

  canSkipToByte(position: number): boolean {
    return position === 0 || this.bytes.length > position - 1;
  }
}

/** One block's abbreviation list and record reader. */
class BlockReader {
  private readonly abbrevs: Abbrev[] = [];
  constructor(private readonly cursor: BitCursor) {}

  defineAbbrev(): void {
    const c = this.cursor;
    const count = c.readVbr(5);
    const ops: { literal?: number; encoding?: number; width?: number }[] = [];
    for (let i = 0; i < count; i++) {
      if (c.read(1) === 1) {
        ops.push({ literal: c.readVbr(8) });
        continue;
      }
      const encoding = c.read(3);
      if (encoding < FIXED || encoding > BLOB) throw new BitcodeError("Invalid encoding");
      if (encoding === FIXED || encoding === VBR) {
        const width = c.readVbr(5);
        if (width === 0) {
          ops.push({ literal: 0 });
          continue;
        }
        if ((encoding === VBR && width > 32) || width > 64) throw new BitcodeError("Fixed or VBR abbrev record with size > MaxChunkData");
        ops.push({ encoding, width });
      } else {
        ops.push({ encoding });
      }
    }
    if (ops.length === 0) throw new BitcodeError("Abbrev record with no operands");
    this.abbrevs.push({ ops });
  }

  private field(op: { encoding?: number; width?: number }): number {
    const c = this.cursor;
    if (op.encoding === FIXED) return c.read(op.width!);
    if (op.encoding === VBR) return c.readVbr(op.width!);
    if (op.encoding === CHAR6) return c.read(6);
    throw new BitcodeError("Malformed block");
  }

  /** Reads one record; returns its code and, for a blob record, the blob's byte range. */
  readRecord(abbrevId: number): { code: number; blob?: { offset: number; size: number } } {
    const c = this.cursor;
    if (abbrevId === 3) {
      const code = c.readVbr(6);
      const count = c.readVbr(6);
      for (let i = 0; i < count; i++) c.readVbr(6);
      return { code };
    }
    const abbrev = this.abbrevs[abbrevId - 4];
    if (abbrev === undefined) throw new BitcodeError("Invalid abbrev number");
    const [first, ...rest] = abbrev.ops;
    let code: number;
    if (first.literal !== undefined) code = first.literal;
    else if (first.encoding === ARRAY || first.encoding === BLOB) throw new BitcodeError("Abbreviation starts with an Array or a Blob");
    else code = this.field(first);
    let blob: { offset: number; size: number } | undefined;
    for (let i = 0; i < rest.length; i++) {
      const op = rest[i];
      if (op.literal !== undefined) continue;
      if (op.encoding === ARRAY) {
        const count = c.readVbr(6);
        const element = rest[i + 1];
        if (element === undefined || i + 2 !== rest.length) throw new BitcodeError("Array op not second to last");
        if (element.literal !== undefined || element.encoding === ARRAY || element.encoding === BLOB) {
          throw new BitcodeError("Array element type can't be an Array or a Blob");
        }
        for (let k = 0; k < count; k++) this.field(element);
        break;
      }
      if (op.encoding === BLOB) {
        const size = c.readVbr(6);
        c.alignTo32();
        const offset = c.bit / 8;
        const end = c.bit + Math.ceil(size / 4) * 32;
        if (!c.canSkipToByte(end / 8)) throw new BitcodeError("Blob ends too soon");
        c.bit = end;
        blob = { offset, size };
        continue;
      }
      this.field(op);
    }
    return { code, blob };
  }
}

/** `BitstreamCursor::SkipBlock` after the block ID has been read. */
function skipBlock(c: BitCursor): void {
  c.readVbr(4);
  c.alignTo32();
  const words = c.read(32);
  const to = c.bit + words * 32;
  if (c.atEnd()) throw new BitcodeError("can't skip block: already at end of stream");
  if (!c.canSkipToByte(to / 8)) throw new BitcodeError(`can't skip to bit ${to} from ${c.bit}`);
  c.bit = to;
}

/** `readBlobInRecord`: enters the block and returns the last record `BLOB_RECORD`'s blob, if any. */
function readBlobInBlock(c: BitCursor): { offset: number; size: number } | undefined {
  const width = c.readVbr(4);
  c.alignTo32();
  c.read(32);
  if (width === 0) throw new BitcodeError("can't enter sub-block: current code size is 0");
  if (c.atEnd()) throw new BitcodeError("can't enter sub block: already at end of stream");
  const block = new BlockReader(c);
  let blob: { offset: number; size: number } | undefined;
  for (;;) {
    if (c.atEnd()) throw new BitcodeError("Malformed block");
    const id = c.read(width);
    if (id === 0) {
      c.alignTo32();
      return blob;
    }
    if (id === 1) {
      c.readVbr(8);
      skipBlock(c);
      continue;
    }
    if (id === 2) {
      block.defineAbbrev();
      continue;
    }
    const record = block.readRecord(id);
    if (record.code === BLOB_RECORD && record.blob !== undefined) blob = record.blob;
  }
}

export interface BitcodeContents {
  /** Number of MODULE_BLOCKs. */
  readonly modules: number;
  /** The first SYMTAB blob and the STRTAB blob that follows it, as byte ranges of the input. */
  readonly symtab?: { offset: number; size: number };
  readonly strtab?: { offset: number; size: number };
}

/** `getBitcodeFileContents`: the top-level walk; throws BitcodeError with LLVM's wording. */
export function readBitcodeContents(input: ByteSource | Uint8Array): BitcodeContents {
  const source = input instanceof Uint8Array ? bytesSource(input) : input;
  if (source.size % 4 !== 0) throw new BitcodeError("Invalid bitcode signature");
  let base = 0;
  let length = source.size;
  const head = readExact(source, 0, Math.min(source.size, 20));
  if (head.length >= 4 && head[0] === 0xde && head[1] === 0xc0 && head[2] === 0x17 && head[3] === 0x0b) {
    if (head.length < 20) throw new BitcodeError("Invalid bitcode wrapper header");
    const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
    base = view.getUint32(8, true);
    length = view.getUint32(12, true);
    if (base + length > source.size) throw new BitcodeError("Invalid bitcode wrapper header");
  }
  if (length < 4) throw new BitcodeError("file too small to contain bitcode header");
  const magic = readExact(source, base, 4);
  if (!(magic[0] === 0x42 && magic[1] === 0x43 && magic[2] === 0xc0 && magic[3] === 0xde)) {
    throw new BitcodeError("Invalid bitcode signature");
  }
  const c = new BitCursor(new PagedBytes(source, length, base));
  c.bit = 32;
  const top = new BlockReader(c);
  let modules = 0;
  let symtab: { offset: number; size: number } | undefined;
  let strtab: { offset: number; size: number } | undefined;
  const absolute = (blob: { offset: number; size: number }) => ({ offset: base + blob.offset, size: blob.size });
  for (;;) {
    const begin = Math.floor(c.bit / 8);
    // Trailing garbage (Apple's ar pads members) too short to hold another module ends the walk.
    if (begin + 8 >= length) return { modules, symtab, strtab };
    if (c.atEnd()) throw new BitcodeError("Malformed block");
    const id = c.read(2);
    if (id === 0) throw new BitcodeError("Malformed block");
    if (id === 2) {
      top.defineAbbrev();
      continue;
    }
    if (id !== 1) {
      top.readRecord(id);
      continue;
    }
    let block = c.readVbr(8);
    if (block === IDENTIFICATION_BLOCK_ID) {
      skipBlock(c);
      if (c.atEnd() || c.read(2) !== 1) throw new BitcodeError("Malformed block");
      block = c.readVbr(8);
      if (block !== MODULE_BLOCK_ID) throw new BitcodeError("Malformed block");
    }
    if (block === MODULE_BLOCK_ID) {
      skipBlock(c);
      modules++;
    } else if (block === STRTAB_BLOCK_ID) {
      const blob = readBlobInBlock(c);
      if (symtab !== undefined && strtab === undefined) strtab = blob === undefined ? { offset: 0, size: 0 } : absolute(blob);
    } else if (block === SYMTAB_BLOCK_ID) {
      const blob = readBlobInBlock(c);
      if (symtab === undefined && blob !== undefined && blob.size > 0) symtab = absolute(blob);
    } else {
      skipBlock(c);
    }
  }
}

export interface IrSymbol {
  readonly name: string;
  readonly flags: number;
}

export interface IrSymbolTable {
  readonly version: number;
  readonly producer: string;
  readonly modules: number;
  readonly symbols: readonly IrSymbol[];
}

/** Why a file's irsymtab cannot stand in for LLVM's own reading of the module. */
export class IrSymtabUnavailable extends Error {}

/** Reusable buffers for the two blobs, so indexing many members does not allocate per member. */
let symtabScratch: Uint8Array = new Uint8Array(0);
let strtabScratch: Uint8Array = new Uint8Array(0);

function readInto(source: ByteSource, range: { offset: number; size: number }, scratch: Uint8Array): Uint8Array {
  const buffer = scratch.length >= range.size ? scratch : new Uint8Array(Math.max(range.size, scratch.length * 2));
  const view = buffer.subarray(0, range.size);
  let done = 0;
  while (done < range.size) {
    const n = source.read(view.subarray(done), range.offset + done);
    if (n <= 0) throw new BitcodeError("Malformed block");
    done += n;
  }
  return buffer;
}

/** The located, validated irsymtab: its symbol array and string table, in scratch buffers. */
interface IrTables {
  readonly table: Uint8Array;
  readonly strings: Uint8Array;
  readonly view: DataView;
  readonly producer: { offset: number; size: number };
  readonly symbolsAt: number;
  readonly symbolCount: number;
}

function locateIrTables(source: ByteSource): IrTables {
  const contents = readBitcodeContents(source);
  const { symtab, strtab } = contents;
  if (symtab === undefined || strtab === undefined || strtab.size === 0 || symtab.size < HEADER_SIZE) {
    throw new IrSymtabUnavailable("the bitcode has no IR symbol table (irsymtab)");
  }
  symtabScratch = readInto(source, symtab, symtabScratch);
  strtabScratch = readInto(source, strtab, strtabScratch);
  const table = symtabScratch.subarray(0, symtab.size);
  const strings = strtabScratch.subarray(0, strtab.size);
  const view = new DataView(table.buffer, table.byteOffset, table.byteLength);
  const word = (at: number) => view.getUint32(at, true);
  const version = word(0);
  if (version !== IRSYMTAB_VERSION) throw new IrSymtabUnavailable(`irsymtab version ${version} (expected ${IRSYMTAB_VERSION})`);
  const moduleCount = word(16);
  if (moduleCount !== contents.modules) {
    throw new IrSymtabUnavailable(`irsymtab describes ${moduleCount} module(s), the file has ${contents.modules}`);
  }
  const symbolsAt = word(28);
  const symbolCount = word(32);
  if (symbolsAt + symbolCount * SYMBOL_SIZE > table.length) throw new IrSymtabUnavailable("irsymtab symbols out of range");
  return { table, strings, view, producer: { offset: word(4), size: word(8) }, symbolsAt, symbolCount };
}

function checkedString(strings: Uint8Array, offset: number, size: number): Uint8Array {
  if (offset + size > strings.length) throw new IrSymtabUnavailable("irsymtab string out of range");
  return strings.subarray(offset, offset + size);
}

/** The stored irsymtab of a bitcode file (throws BitcodeError or IrSymtabUnavailable). */
export function readIrSymbolTable(input: ByteSource | Uint8Array): IrSymbolTable {
  const source = input instanceof Uint8Array ? bytesSource(input) : input;
  const t = locateIrTables(source);
  const symbols: IrSymbol[] = [];
  for (let i = 0; i < t.symbolCount; i++) {
    const at = t.symbolsAt + i * SYMBOL_SIZE;
    const name = latin1Decode(checkedString(t.strings, t.view.getUint32(at, true), t.view.getUint32(at + 4, true)));
    symbols.push({ name, flags: t.view.getUint32(at + 20, true) });
  }
  return {
    version: IRSYMTAB_VERSION,
    producer: latin1Decode(checkedString(t.strings, t.producer.offset, t.producer.size)),
    modules: t.view.getUint32(16, true),
    symbols,
  };
}

/** `isArchiveSymbol` on an IR symbol: global, defined and not format-specific. */
export function isArchiveIrSymbol(symbol: IrSymbol): boolean {
  return isArchiveFlags(symbol.flags);
}

function isArchiveFlags(flags: number): boolean {
  const bit = (n: number) => (flags >>> n) & 1;
  return bit(FB_GLOBAL) === 1 && bit(FB_UNDEFINED) === 0 && bit(FB_FORMAT_SPECIFIC) === 0;
}

/** Output buffer for packing names, reused across members (the result is copied out at its size). */
let packScratch: Uint8Array = new Uint8Array(4096);

/** The names the archive writer lists for a bitcode member, in order, packed (no string per symbol). */
export function bitcodeArchiveSymbols(input: ByteSource | Uint8Array): PackedSymbols {
  const source = input instanceof Uint8Array ? bytesSource(input) : input;
  const { view, strings, symbolsAt, symbolCount } = locateIrTables(source);
  let out = 0;
  let count = 0;
  for (let i = 0; i < symbolCount; i++) {
    const at = symbolsAt + i * SYMBOL_SIZE;
    if (!isArchiveFlags(view.getUint32(at + 20, true))) continue;
    const offset = view.getUint32(at, true);
    const length = view.getUint32(at + 4, true);
    if (offset + length > strings.length) throw new IrSymtabUnavailable("irsymtab string out of range");
    if (out + length + 1 > packScratch.length) {
      const grown = new Uint8Array(Math.max(packScratch.length * 2, out + length + 1));
      grown.set(packScratch.subarray(0, out));
      packScratch = grown;
    }
    // Byte by byte: names are short, and a subarray per name was 26 MB of garbage per 1000 members (measured).
    for (let k = 0; k < length; k++) packScratch[out + k] = strings[offset + k];
    packScratch[out + length] = 0;
    out += length + 1;
    count++;
  }
  return { count, bytes: packScratch.slice(0, out) };
}
