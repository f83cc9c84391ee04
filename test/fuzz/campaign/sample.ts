/**
 * Valid inputs with their structure, and structure-aware mutation. A generator returns the bytes and
 * the header fields it wrote (counts, sizes, offsets, kinds): mutations set those to edge values, cut
 * the input at or around every field, splice two valid inputs, flip, insert and delete bytes, or throw
 * the structure away for random bytes.
 */
import { concatBytes, latin1Encode } from "../../../src/formats/bytes.js";
import type { Rand } from "./rand.js";

export type FieldKind = "count" | "size" | "offset" | "kind" | "text" | "magic";

export interface Field {
  readonly at: number;
  /** 1, 2, 3 (zstd block headers), 4 or 8 bytes; text fields are `length` bytes. */
  readonly size: number;
  readonly kind: FieldKind;
  readonly bigEndian?: boolean;
  /** Decimal ASCII (archive headers): edge values are written as text, space-padded. */
  readonly decimal?: boolean;
}

export interface Sample {
  readonly bytes: Uint8Array;
  readonly fields: readonly Field[];
}

/** Text tokens a parser gives meaning to (target IDs, option names, archive names). */
export type Dictionary = readonly string[];

function read(bytes: Uint8Array, field: Field): bigint {
  let value = 0n;
  for (let k = 0; k < field.size; k++) {
    const index = field.bigEndian ? field.at + k : field.at + field.size - 1 - k;
    value = (value << 8n) | BigInt(bytes[index] ?? 0);
  }
  return value;
}

function write(bytes: Uint8Array, field: Field, value: bigint): void {
  if (field.decimal) {
    const text = value.toString().slice(0, field.size).padEnd(field.size, " ");
    for (let k = 0; k < field.size && field.at + k < bytes.length; k++) bytes[field.at + k] = text.charCodeAt(k);
    return;
  }
  for (let k = 0; k < field.size; k++) {
    const index = field.bigEndian ? field.at + field.size - 1 - k : field.at + k;
    if (index < bytes.length) bytes[index] = Number((value >> BigInt(8 * k)) & 0xffn);
  }
}

function edgeValue(r: Rand, field: Field, current: bigint, length: number): bigint {
  const bits = BigInt(Math.min(64, field.size * 8));
  const max = (1n << bits) - 1n;
  const values = [
    0n, 1n, 2n, 3n, 7n, 8n, 0x7fn, 0x80n, 0xffn, 0x100n, 0xffffn, 0x10000n, 0x7fffffffn, 0x80000000n, 0xffffffffn,
    0x100000000n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n, 2n ** 63n, max, max - 1n,
    BigInt(length), BigInt(length) + 1n, BigInt(Math.max(0, length - 1)), BigInt(length) * 2n,
    current + 1n, current - 1n, current * 2n, current + BigInt(length), 100000n, BigInt(r.int(length + 64)),
    BigInt(r.int(2 ** 31)) * BigInt(r.int(2 ** 31)),
  ];
  if (field.decimal) values.push(9999999999n, 99999999999n);
  const v = r.pick(values);
  return v < 0n ? 0n : v & max;
}

export interface MutationContext {
  /** Another valid input of the same parser (for splices). */
  readonly other: () => Sample;
  readonly dictionary?: Dictionary;
  /** Bytes every input of this parser starts with (random inputs keep it half the time). */
  readonly magic?: Uint8Array;
}

/** One structure-aware mutation of `sample`; several may be stacked. */
function mutateOnce(r: Rand, bytes: Uint8Array, fields: readonly Field[], ctx: MutationContext): Uint8Array {
  const n = bytes.length;
  const op = r.int(fields.length > 0 ? 12 : 8);
  switch (op) {
    case 0: // truncation anywhere
      return bytes.subarray(0, r.int(n + 1));
    case 1: { // byte flips
      const out = bytes.slice();
      for (let k = r.range(1, 4); k > 0 && n > 0; k--) out[r.int(n)] = r.bool(0.5) ? r.int(256) : out[r.int(n)]! ^ (1 << r.int(8));
      return out;
    }
    case 2: { // insert bytes
      const at = r.int(n + 1);
      const insert = ctx.dictionary && r.bool(0.6) ? tokenBytes(r.pick(ctx.dictionary)) : r.bytes(r.size(32));
      return concat(bytes.subarray(0, at), insert, bytes.subarray(at));
    }
    case 3: { // delete a range
      const at = r.int(n + 1);
      return concat(bytes.subarray(0, at), bytes.subarray(Math.min(n, at + r.size(64))));
    }
    case 4: { // splice with another valid input
      const other = ctx.other().bytes;
      const cut = r.int(n + 1);
      const from = r.int(other.length + 1);
      return r.bool(0.5) ? concat(bytes.subarray(0, cut), other.subarray(from)) : concat(bytes, other);
    }
    case 5: { // duplicate a range
      const at = r.int(n + 1);
      const length = r.size(128);
      return concat(bytes.subarray(0, at), bytes.subarray(at, at + length), bytes.subarray(at));
    }
    case 6: { // random bytes, the magic kept half the time
      const body = r.bytes(r.size(256));
      return ctx.magic && r.bool(0.5) ? concat(ctx.magic, body) : body;
    }
    case 7: { // overwrite with a dictionary token or random text
      const out = bytes.slice();
      const token = ctx.dictionary && ctx.dictionary.length > 0 ? tokenBytes(r.pick(ctx.dictionary)) : r.bytes(r.range(1, 8));
      const at = r.int(n + 1);
      out.set(token.subarray(0, Math.max(0, n - at)), at);
      return out;
    }
    case 8:
    case 9:
    case 10: { // a header field set to an edge value
      const field = r.pick(fields);
      const out = bytes.slice();
      if (field.kind === "text") {
        const token = ctx.dictionary && r.bool(0.7) ? tokenBytes(r.pick(ctx.dictionary)) : r.bytes(r.int(field.size + 2));
        out.set(token.subarray(0, Math.max(0, Math.min(field.size, n - field.at))), field.at);
        return out;
      }
      write(out, field, edgeValue(r, field, read(out, field), n));
      return out;
    }
    default: { // truncation at (or one byte either side of) a field boundary
      const field = r.pick(fields);
      const at = r.pick([field.at, field.at + field.size, field.at + 1, Math.max(0, field.at - 1), field.at + field.size - 1]);
      return bytes.subarray(0, Math.min(n, Math.max(0, at)));
    }
  }
}

/** A mutated copy of `sample` (one to three stacked mutations; fields only guide the first). */
export function mutate(r: Rand, sample: Sample, ctx: MutationContext): Uint8Array {
  let bytes = mutateOnce(r, sample.bytes, sample.fields, ctx);
  for (let k = r.int(3); k > 0; k--) bytes = mutateOnce(r, bytes, r.bool(0.5) ? sample.fields.filter((f) => f.at < bytes.length) : [], ctx);
  return bytes;
}

/** Bytes as a latin1 string of one char per byte (and back), as IDs are held. */
export const latin1 = latin1Encode;

const utf8 = new TextEncoder();

/** A dictionary token's bytes: UTF-8, so tokens such as a byte-order mark become what a file would hold. */
function tokenBytes(token: string): Uint8Array {
  return utf8.encode(token);
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  return concatBytes(parts);
}

/** Field helpers for generators. */
export const u8 = (at: number, kind: FieldKind): Field => ({ at, size: 1, kind });
export const u16 = (at: number, kind: FieldKind, bigEndian = false): Field => ({ at, size: 2, kind, bigEndian });
export const u32 = (at: number, kind: FieldKind, bigEndian = false): Field => ({ at, size: 4, kind, bigEndian });
export const u64 = (at: number, kind: FieldKind, bigEndian = false): Field => ({ at, size: 8, kind, bigEndian });
