/**
 * MessagePack bytes written straight out as indented JSON text: the same bytes
 * `JSON.stringify(msgpackToJson(decodeMsgpack(bytes).value), null, 2)` gives (src/formats/msgpack.ts), without
 * building the Maps, the plain objects or the strings in between.
 *
 * Why: `kernels --json` of librocsparse writes 777 metadata notes (117 MB of msgpack, 370 MB of JSON); building
 * each kernel's Map, then its object, then its indented string was most of that command's time and garbage
 * (measured: docs/benchmarks.md). ASCII strings are copied byte for byte (escaped where JSON needs it), integers
 * are written digit by digit.
 *
 * Only input `decodeMsgpack` has already accepted is given here (the same bounds were checked there). Whatever
 * this writer cannot make byte-identical to the object route answers `false` and the caller takes that route
 * instead: maps of more than 64 entries, non-string or array-index map keys (a JS object orders those first), repeated keys (an object keeps
 * one), strings with non-ASCII bytes (decoded by TextDecoder's replacement rules), floats, and anything
 * truncated.
 */

/** A byte buffer that grows, and is handed to `sink` when asked (between values, never inside one). */
export class JsonByteWriter {
  private buffer: Uint8Array;
  /** Bytes written and not yet handed on. */
  at = 0;
  private readonly encoder = new TextEncoder();

  /** `capacity`: the buffer's first size (it doubles as needed and shrinks back to this after a large value). */
  constructor(private readonly sink: (bytes: Uint8Array) => void, private readonly capacity = 1 << 18) {
    this.buffer = new Uint8Array(capacity);
  }

  /** Room for `n` more bytes (the buffer grows: a value is never split across a flush). */
  room(n: number): void {
    if (this.at + n <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.at + n) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buffer.subarray(0, this.at));
    this.buffer = grown;
  }

  byte(b: number): void {
    this.room(1);
    this.buffer[this.at++] = b;
  }

  /** `text` as UTF-8 (JSON text made by JSON.stringify, or our own punctuation). */
  text(text: string): void {
    this.room(text.length * 3);
    this.at += this.encoder.encodeInto(text, this.buffer.subarray(this.at)).written;
  }

  /** A newline and `indent` spaces. */
  newline(indent: number): void {
    this.room(indent + 1);
    const b = this.buffer;
    b[this.at++] = 0x0a;
    for (let i = 0; i < indent; i++) b[this.at++] = 0x20;
  }

  /** Bytes 0..`at` of the buffer as they are now; valid until the next write. */
  get bytes(): Uint8Array {
    return this.buffer.subarray(0, this.at);
  }

  /** Drops what was written after `mark` (a value that must take the other route). */
  rewind(mark: number): void {
    this.at = mark;
  }

  /** Hands what is buffered to the sink and empties the buffer; a large buffer shrinks back. */
  flush(): void {
    if (this.at > 0) this.sink(this.buffer.subarray(0, this.at));
    this.at = 0;
    if (this.buffer.length > Math.max(1 << 22, this.capacity)) this.buffer = new Uint8Array(this.capacity);
  }

  /** Internal: the buffer, for the transcoder's byte loops. */
  raw(): Uint8Array {
    return this.buffer;
  }
}

const HEX = "0123456789abcdef";
const SHORT_ESCAPES: Record<number, string> = { 0x08: "\\b", 0x09: "\\t", 0x0a: "\\n", 0x0c: "\\f", 0x0d: "\\r", 0x22: '\\"', 0x5c: "\\\\" };

/** The most entries a map may have to be transcoded here (its keys are compared pairwise). */
const MAX_TRANSCODED_MAP = 64;

/** Thrown inside the transcoder when the object route must be taken; never escapes it. */
const UNUSUAL = Symbol("unusual");

/**
 * Writes the msgpack value at `bytes[start]` as JSON text indented as JSON.stringify(_, null, 2) indents a value
 * nested `indent` spaces deep. Returns the value's end, or -1 (with nothing kept in `out`) when the caller must
 * use the object route (see the module docblock).
 */
export function transcodeMsgpackJson(bytes: Uint8Array, start: number, indent: number, out: JsonByteWriter): number {
  const mark = out.at;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = start;

  const need = (n: number): void => {
    if (n > bytes.length - at) throw UNUSUAL;
  };
  const digits = (n: number): void => {
    // Integers of at most 32 bits here (64-bit ones take the other route): written as String(n) writes them.
    out.room(12);
    const buffer = out.raw();
    let w = out.at;
    if (n < 0) {
      buffer[w++] = 0x2d;
      n = -n;
    }
    const first = w;
    do {
      buffer[w++] = 0x30 + (n % 10);
      n = Math.floor(n / 10);
    } while (n > 0);
    for (let i = first, j = w - 1; i < j; i++, j--) {
      const t = buffer[i]!;
      buffer[i] = buffer[j]!;
      buffer[j] = t;
    }
    out.at = w;
  };
  /** A string of `length` bytes at `at` as a JSON string, when it is ASCII. */
  const string = (length: number): void => {
    need(length);
    out.room(length * 6 + 2);
    const buffer = out.raw();
    let w = out.at;
    buffer[w++] = 0x22;
    for (let i = at, end = at + length; i < end; i++) {
      const b = bytes[i]!;
      if (b >= 0x80) throw UNUSUAL;
      if (b >= 0x20 && b !== 0x22 && b !== 0x5c) buffer[w++] = b;
      else {
        const escape = SHORT_ESCAPES[b] ?? `\\u00${HEX[b >> 4]}${HEX[b & 15]}`;
        for (let j = 0; j < escape.length; j++) buffer[w++] = escape.charCodeAt(j);
      }
    }
    buffer[w++] = 0x22;
    out.at = w;
    at += length;
  };
  /** The length of a string header at `at` (moving past it), or -1 when the byte there does not start a string. */
  const stringHeader = (): number => {
    need(1);
    const type = bytes[at]!;
    if ((type & 0xe0) === 0xa0) return (at++, type & 0x1f);
    if (type === 0xd9) return (need(2), (at += 2), bytes[at - 1]!);
    if (type === 0xda) return (need(3), (at += 3), view.getUint16(at - 2));
    if (type === 0xdb) return (need(5), (at += 5), view.getUint32(at - 4));
    return -1;
  };
  const isIndexKey = (keyAt: number, length: number): boolean => {
    if (length === 0 || length > 10) return false;
    if (bytes[keyAt] === 0x30 && length > 1) return false;
    let n = 0;
    for (let i = keyAt; i < keyAt + length; i++) {
      const b = bytes[i]!;
      if (b < 0x30 || b > 0x39) return false;
      n = n * 10 + (b - 0x30);
    }
    return n < 4294967295;
  };
  let keys = new Int32Array(64);
  let keyTop = 0;
  const sameBytes = (a: number, b: number, length: number): boolean => {
    for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
    return true;
  };

  const map = (n: number, depth: number): void => {
    if (n === 0) return out.text("{}");
    // Repeated keys are looked for pairwise: a map larger than a kernel's (about 25 keys) takes the other route.
    if (n > MAX_TRANSCODED_MAP) throw UNUSUAL;
    out.byte(0x7b);
    // This map's keys so far, as (start, length) pairs on a stack shared by every level.
    const base = keyTop;
    for (let i = 0; i < n; i++) {
      if (i > 0) out.byte(0x2c);
      out.newline(depth + 2);
      const length = stringHeader();
      if (length < 0) throw UNUSUAL;
      need(length);
      if (isIndexKey(at, length)) throw UNUSUAL;
      for (let j = base; j < keyTop; j += 2) {
        if (keys[j + 1] === length && sameBytes(keys[j]!, at, length)) throw UNUSUAL;
      }
      if (keyTop + 2 > keys.length) {
        const grown = new Int32Array(keys.length * 2);
        grown.set(keys);
        keys = grown;
      }
      keys[keyTop++] = at;
      keys[keyTop++] = length;
      string(length);
      out.byte(0x3a);
      out.byte(0x20);
      value(depth + 2);
    }
    keyTop = base;
    out.newline(depth);
    out.byte(0x7d);
  };
  const array = (n: number, depth: number): void => {
    if (n === 0) return out.text("[]");
    out.byte(0x5b);
    for (let i = 0; i < n; i++) {
      if (i > 0) out.byte(0x2c);
      out.newline(depth + 2);
      value(depth + 2);
    }
    out.newline(depth);
    out.byte(0x5d);
  };
  const value = (depth: number): void => {
    need(1);
    const type = bytes[at]!;
    if (type <= 0x7f) return (at++, digits(type));
    if (type >= 0xe0) return (at++, digits(type - 0x100));
    if ((type & 0xf0) === 0x80) return (at++, map(type & 0x0f, depth));
    if ((type & 0xf0) === 0x90) return (at++, array(type & 0x0f, depth));
    const length = stringHeader();
    if (length >= 0) return string(length);
    at++;
    switch (type) {
      case 0xc0: return out.text("null");
      case 0xc2: return out.text("false");
      case 0xc3: return out.text("true");
      case 0xcc: need(1); at += 1; return digits(bytes[at - 1]!);
      case 0xcd: need(2); at += 2; return digits(view.getUint16(at - 2));
      case 0xce: need(4); at += 4; return digits(view.getUint32(at - 4));
      case 0xd0: need(1); at += 1; return digits(view.getInt8(at - 1));
      case 0xd1: need(2); at += 2; return digits(view.getInt16(at - 2));
      case 0xd2: need(4); at += 4; return digits(view.getInt32(at - 4));
      case 0xdc: need(2); at += 2; return array(view.getUint16(at - 2), depth);
      case 0xdd: need(4); at += 4; return array(view.getUint32(at - 4), depth);
      case 0xde: need(2); at += 2; return map(view.getUint16(at - 2), depth);
      case 0xdf: need(4); at += 4; return map(view.getUint32(at - 4), depth);
      // 64-bit integers (exact only up to 2^53), floats, bins and exts: the object route.
      default: throw UNUSUAL;
    }
  };

  try {
    value(indent);
    return at;
  } catch (e) {
    if (e !== UNUSUAL) throw e;
    out.rewind(mark);
    return -1;
  }
}
