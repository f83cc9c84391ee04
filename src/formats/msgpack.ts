/**
 * MessagePack (https://github.com/msgpack/msgpack/blob/master/spec.md), decoded with a bound on everything an
 * untrusted file states: the AMDGPU metadata note of a code object (NT_AMDGPU_METADATA, code object v3 and
 * later) and rocm-kpack's markers and archive TOCs are msgpack, and all three come from files we did not write.
 *
 * Why a decoder of our own: the two users read a few kilobytes to a few megabytes, and each length, count and
 * nesting level must be checked before it is used (a 5-byte `array32` header can claim four billion elements);
 * a general-purpose library allocates from those counts. Here:
 * - every length is checked against the bytes left before anything is sliced or decoded;
 * - an array or map count is checked against the bytes left too (each element takes at least one byte), so no
 *   allocation is ever larger than the input;
 * - nesting is limited (`maxDepth`, 64 by default: the metadata note nests 4 deep, a kpack TOC 5);
 * - maps decode into `Map`s, so a key such as `__proto__` is data, never an object's prototype.
 *
 * The encoder writes the smallest form of each value, as msgpack-python (rocm-kpack's writer) and LLVM's
 * `msgpack::Writer` do: positive/negative fixints, then the narrowest int, fixstr/str8/16/32, bin8/16/32,
 * fixarray/array16/32, fixmap/map16/32, float64 for non-integers.
 */
import { OffloadKitError } from "../engine/errors.js";

/** A decoded value. Integers beyond 2^53 decode as bigint; `ext` types keep their type byte and payload. */
export type MsgpackValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | MsgpackValue[]
  | MsgpackMap
  | MsgpackExt;
export type MsgpackMap = Map<MsgpackValue, MsgpackValue>;
export interface MsgpackExt {
  readonly ext: number;
  readonly data: Uint8Array;
}

export interface MsgpackDecodeOptions {
  /** Deepest nesting of arrays and maps accepted (64). */
  readonly maxDepth?: number;
  /** Where `decodeMsgpack`'s input sits in its file, added to error offsets (0). */
  readonly baseOffset?: number;
  /**
   * Map entries whose string key is in this set are checked (the same bounds) but not built, and left out of
   * the map: a reader that needs a few keys of large maps skips the rest without allocating for them.
   */
  readonly skipKeys?: ReadonlySet<string>;
  /**
   * Called with each map once it is decoded, with where its bytes start and end in `bytes` and its depth: a
   * reader that keeps only part of a document can find a map's bytes again (to decode or transcode them later).
   */
  readonly onMap?: (map: MsgpackMap, start: number, end: number, depth: number) => void;
}

export interface MsgpackDecoded {
  readonly value: MsgpackValue;
  /** Bytes the value took: a stream of values is read by decoding again from here. */
  readonly end: number;
}

const utf8 = new TextDecoder("utf-8", { fatal: false });

/** Short ASCII strings already made, by a hash of their bytes (direct-mapped; a collision just replaces). */
const TEXT_CACHE_SIZE = 4096;
const cachedBytes: (Uint8Array | undefined)[] = new Array(TEXT_CACHE_SIZE);
const cachedText: string[] = new Array(TEXT_CACHE_SIZE);

/**
 * A string's bytes as text. Short ASCII strings (every key of a metadata note, most values) are built directly
 * and kept: TextDecoder's per-call cost was a fifth of reading librocsparse's 88,137 kernel maps, and the same
 * few dozen keys repeat in every kernel map (measured: docs/benchmarks.md).
 */
function decodeText(bytes: Uint8Array): string {
  const length = bytes.length;
  if (length > 64) return utf8.decode(bytes);
  let hash = length;
  for (let i = 0; i < length; i++) {
    const b = bytes[i]!;
    if (b >= 0x80) return utf8.decode(bytes);
    hash = (Math.imul(hash, 31) + b) | 0;
  }
  const slot = hash & (TEXT_CACHE_SIZE - 1);
  const cached = cachedBytes[slot];
  if (cached !== undefined && cached.length === length) {
    let same = true;
    for (let i = 0; i < length; i++) {
      if (cached[i] !== bytes[i]) {
        same = false;
        break;
      }
    }
    if (same) return cachedText[slot]!;
  }
  const text = String.fromCharCode.apply(null, bytes as unknown as number[]);
  cachedBytes[slot] = bytes.slice();
  cachedText[slot] = text;
  return text;
}

/**
 * Decodes the one value at `bytes[start]`. Throws `OffloadKitError("malformed-msgpack")` with the offset of the
 * offending byte for a truncated value, a reserved type byte (0xc1), a count or length the input cannot hold, or
 * nesting deeper than `maxDepth`.
 */
export function decodeMsgpack(bytes: Uint8Array, start = 0, options: MsgpackDecodeOptions = {}): MsgpackDecoded {
  const maxDepth = options.maxDepth ?? 64;
  const base = options.baseOffset ?? 0;
  const skipKeys = options.skipKeys;
  const onMap = options.onMap;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = start;

  const fail = (message: string, offset: number): never => {
    throw new OffloadKitError("malformed-msgpack", `msgpack: ${message} at offset ${base + offset}`, {
      offset: base + offset,
      field: "msgpack",
    });
  };
  const need = (count: number, what: string): void => {
    if (count > bytes.length - at) fail(`${what} needs ${count} bytes, ${bytes.length - at} left`, at);
  };
  const u8 = (): number => {
    need(1, "a byte");
    return bytes[at++]!;
  };
  const u16 = (): number => {
    need(2, "a 16-bit field");
    const v = view.getUint16(at);
    at += 2;
    return v;
  };
  const u32 = (): number => {
    need(4, "a 32-bit field");
    const v = view.getUint32(at);
    at += 4;
    return v;
  };
  const take = (length: number, what: string): Uint8Array => {
    need(length, what);
    const out = bytes.subarray(at, at + length);
    at += length;
    return out;
  };
  const int64 = (signed: boolean): number | bigint => {
    need(8, "a 64-bit field");
    const v = signed ? view.getBigInt64(at) : view.getBigUint64(at);
    at += 8;
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  };
  /** A count of elements, each taking at least `minBytes`: refused before anything is allocated for it. */
  const count = (n: number, minBytes: number, what: string, headerAt: number): number => {
    if (n * minBytes > bytes.length - at) fail(`${what} of ${n} elements cannot fit in the ${bytes.length - at} bytes left`, headerAt);
    return n;
  };

  const value = (depth: number): MsgpackValue => {
    const headerAt = at;
    const type = u8();
    if (type <= 0x7f) return type;
    if (type >= 0xe0) return type - 0x100;
    if ((type & 0xf0) === 0x80) return map(type & 0x0f, depth, headerAt);
    if ((type & 0xf0) === 0x90) return array(type & 0x0f, depth, headerAt);
    if ((type & 0xe0) === 0xa0) return decodeText(take(type & 0x1f, "a string"));
    switch (type) {
      case 0xc0: return null;
      case 0xc2: return false;
      case 0xc3: return true;
      case 0xc4: return take(u8(), "a bin").slice();
      case 0xc5: return take(u16(), "a bin").slice();
      case 0xc6: return take(u32(), "a bin").slice();
      case 0xc7: return ext(u8());
      case 0xc8: return ext(u16());
      case 0xc9: return ext(u32());
      case 0xca: { need(4, "a float32"); const v = view.getFloat32(at); at += 4; return v; }
      case 0xcb: { need(8, "a float64"); const v = view.getFloat64(at); at += 8; return v; }
      case 0xcc: return u8();
      case 0xcd: return u16();
      case 0xce: return u32();
      case 0xcf: return int64(false);
      case 0xd0: { const v = u8(); return v >= 0x80 ? v - 0x100 : v; }
      case 0xd1: { const v = u16(); return v >= 0x8000 ? v - 0x10000 : v; }
      case 0xd2: { const v = u32(); return v | 0; }
      case 0xd3: return int64(true);
      case 0xd4: return ext(1);
      case 0xd5: return ext(2);
      case 0xd6: return ext(4);
      case 0xd7: return ext(8);
      case 0xd8: return ext(16);
      case 0xd9: return decodeText(take(u8(), "a string"));
      case 0xda: return decodeText(take(u16(), "a string"));
      case 0xdb: return decodeText(take(u32(), "a string"));
      case 0xdc: return array(u16(), depth, headerAt);
      case 0xdd: return array(u32(), depth, headerAt);
      case 0xde: return map(u16(), depth, headerAt);
      case 0xdf: return map(u32(), depth, headerAt);
      default: return fail(`reserved type byte 0x${type.toString(16)}`, headerAt);
    }
  };
  const ext = (length: number): MsgpackExt => {
    const type = u8();
    return { ext: type >= 0x80 ? type - 0x100 : type, data: take(length, "an ext").slice() };
  };
  const array = (n: number, depth: number, headerAt: number): MsgpackValue[] => {
    if (depth >= maxDepth) fail(`nesting deeper than ${maxDepth}`, headerAt);
    const items: MsgpackValue[] = new Array(count(n, 1, "an array", headerAt));
    for (let i = 0; i < n; i++) items[i] = value(depth + 1);
    return items;
  };
  const map = (n: number, depth: number, headerAt: number): MsgpackMap => {
    if (depth >= maxDepth) fail(`nesting deeper than ${maxDepth}`, headerAt);
    count(n, 2, "a map", headerAt);
    const out: MsgpackMap = new Map();
    for (let i = 0; i < n; i++) {
      const key = value(depth + 1);
      if (skipKeys !== undefined && typeof key === "string" && skipKeys.has(key)) skip(depth + 1);
      else out.set(key, value(depth + 1));
    }
    if (onMap !== undefined) onMap(out, headerAt, at, depth);
    return out;
  };
  /** Walks one value as `value` does, with the same checks, building nothing. */
  const skip = (depth: number): void => {
    const headerAt = at;
    const type = u8();
    if (type <= 0x7f || type >= 0xe0 || type === 0xc0 || type === 0xc2 || type === 0xc3) return;
    let items = -1;
    let perItem = 1;
    if ((type & 0xf0) === 0x80) (items = type & 0x0f), (perItem = 2);
    else if ((type & 0xf0) === 0x90) items = type & 0x0f;
    else if ((type & 0xe0) === 0xa0) return void take(type & 0x1f, "a string");
    else if (type === 0xdc) items = u16();
    else if (type === 0xdd) items = u32();
    else if (type === 0xde) (items = u16()), (perItem = 2);
    else if (type === 0xdf) (items = u32()), (perItem = 2);
    if (items >= 0) {
      if (depth >= maxDepth) fail(`nesting deeper than ${maxDepth}`, headerAt);
      count(items, perItem, perItem === 2 ? "a map" : "an array", headerAt);
      for (let i = 0; i < items * perItem; i++) skip(depth + 1);
      return;
    }
    // A scalar, string, bin or ext: decoded and dropped (no container, so nothing larger than the input is built).
    at = headerAt;
    value(depth);
  };

  if (start < 0 || start > bytes.length) fail(`start ${start} outside the ${bytes.length} bytes`, 0);
  const decoded = value(0);
  return { value: decoded, end: at };
}

/** Decodes `bytes` as exactly one value; bytes left after it are an error (a note's padding is cut off first). */
export function decodeMsgpackExactly(bytes: Uint8Array, options: MsgpackDecodeOptions = {}): MsgpackValue {
  const { value, end } = decodeMsgpack(bytes, 0, options);
  if (end !== bytes.length) {
    const offset = (options.baseOffset ?? 0) + end;
    throw new OffloadKitError("malformed-msgpack", `msgpack: ${bytes.length - end} bytes after the value at offset ${offset}`, {
      offset,
      field: "msgpack",
    });
  }
  return value;
}

/** A map's string-keyed entry (`undefined` when the value is not a map or has no such key). */
export function msgpackField(value: MsgpackValue | undefined, key: string): MsgpackValue | undefined {
  return value instanceof Map ? value.get(key) : undefined;
}

/**
 * The value as JSON can hold it: maps become null-prototype objects keyed by `String(key)`, bigints become
 * numbers when exact and decimal strings otherwise, bins and exts become `{ bin: hex }` / `{ ext, hex }`.
 */
export function msgpackToJson(value: MsgpackValue): unknown {
  if (value === null || typeof value === "boolean" || typeof value === "number" || typeof value === "string") return value;
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Uint8Array) return { bin: hex(value) };
  if (Array.isArray(value)) return value.map(msgpackToJson);
  if (value instanceof Map) {
    const out: Record<string, unknown> = Object.create(null);
    for (const [k, v] of value) out[typeof k === "string" ? k : JSON.stringify(msgpackToJson(k))] = msgpackToJson(v);
    return out;
  }
  return { ext: value.ext, hex: hex(value.data) };
}

function hex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}

/** A value the encoder takes: plain objects are written as maps in their key order. */
export type MsgpackInput =
  | MsgpackValue
  | undefined
  | readonly MsgpackInput[]
  | ReadonlyMap<MsgpackInput, MsgpackInput>
  | { readonly [key: string]: MsgpackInput };

/** Encodes `value` in the smallest form of each part (see the module's docblock). `undefined` map entries are skipped. */
export function encodeMsgpack(value: MsgpackInput): Uint8Array {
  const parts: Uint8Array[] = [];
  let length = 0;
  const push = (bytes: Uint8Array): void => {
    parts.push(bytes);
    length += bytes.length;
  };
  const head = (...bytes: number[]): void => push(Uint8Array.from(bytes));
  const be = (type: number, size: 1 | 2 | 4 | 8, v: number | bigint): void => {
    const out = new Uint8Array(1 + size);
    const view = new DataView(out.buffer);
    out[0] = type;
    if (size === 1) view.setUint8(1, Number(v) & 0xff);
    else if (size === 2) view.setUint16(1, Number(v) & 0xffff);
    else if (size === 4) view.setUint32(1, Number(v) >>> 0);
    else view.setBigUint64(1, BigInt.asUintN(64, BigInt(v)));
    push(out);
  };
  const sized = (n: number, fix: number | undefined, fixMax: number, t8: number | undefined, t16: number, t32: number): void => {
    if (fix !== undefined && n <= fixMax) head(fix | n);
    else if (t8 !== undefined && n <= 0xff) be(t8, 1, n);
    else if (n <= 0xffff) be(t16, 2, n);
    else be(t32, 4, n);
  };
  const integer = (v: bigint): void => {
    if (v >= 0n) {
      if (v <= 0x7fn) head(Number(v));
      else if (v <= 0xffn) be(0xcc, 1, v);
      else if (v <= 0xffffn) be(0xcd, 2, v);
      else if (v <= 0xffffffffn) be(0xce, 4, v);
      else be(0xcf, 8, v);
    } else if (v >= -32n) head(Number(v) & 0xff);
    else if (v >= -0x80n) be(0xd0, 1, v);
    else if (v >= -0x8000n) be(0xd1, 2, v);
    else if (v >= -0x80000000n) be(0xd2, 4, v);
    else be(0xd3, 8, v);
  };
  const write = (v: MsgpackInput): void => {
    if (v === null || v === undefined) return head(0xc0);
    if (v === false) return head(0xc2);
    if (v === true) return head(0xc3);
    if (typeof v === "bigint") return integer(v);
    if (typeof v === "number") {
      if (Number.isSafeInteger(v)) return integer(BigInt(v));
      const out = new Uint8Array(9);
      out[0] = 0xcb;
      new DataView(out.buffer).setFloat64(1, v);
      return push(out);
    }
    if (typeof v === "string") {
      const bytes = new TextEncoder().encode(v);
      sized(bytes.length, 0xa0, 31, 0xd9, 0xda, 0xdb);
      return push(bytes);
    }
    if (v instanceof Uint8Array) {
      sized(v.length, undefined, 0, 0xc4, 0xc5, 0xc6);
      return push(v);
    }
    if (Array.isArray(v)) {
      sized(v.length, 0x90, 15, undefined, 0xdc, 0xdd);
      for (const item of v) write(item);
      return;
    }
    if (v instanceof Map) {
      sized(v.size, 0x80, 15, undefined, 0xde, 0xdf);
      for (const [key, item] of v) {
        write(key);
        write(item);
      }
      return;
    }
    if (isExt(v)) {
      const n = v.data.length;
      const fixed = [1, 2, 4, 8, 16].indexOf(n);
      if (fixed >= 0) head(0xd4 + fixed, v.ext & 0xff);
      else {
        sized(n, undefined, 0, 0xc7, 0xc8, 0xc9);
        head(v.ext & 0xff);
      }
      return push(v.data);
    }
    const entries = Object.entries(v as { readonly [key: string]: MsgpackInput }).filter(([, item]) => item !== undefined);
    sized(entries.length, 0x80, 15, undefined, 0xde, 0xdf);
    for (const [key, item] of entries) {
      write(key);
      write(item);
    }
  };
  write(value);
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function isExt(v: object): v is MsgpackExt {
  return "ext" in v && "data" in v && (v as MsgpackExt).data instanceof Uint8Array && Object.keys(v).length === 2;
}
