/**
 * A model of `llvm::StringMap`'s bucket layout (llvm/lib/Support/StringMap.cpp, StringMap.h), kept only
 * to reproduce its iteration order. clang-offload-bundler keeps the entry IDs of a binary bundle, and the
 * worklist of requested targets when unbundling, in StringMaps, so `-list` output and the choice of
 * which output receives an entry follow bucket order, not file order (spec/bundler.md §2.5, §3.3, §6).
 *
 * What is modelled, as upstream does it:
 * - The table is allocated with 16 buckets on the first insert (`init(16)`); a lookup in a never-used
 *   map allocates nothing.
 * - Full hash: LLVM 14 `djbHash(key, 0)`; LLVM 19 and later the low 32 bits of `xxh3_64bits(key)`.
 *   Bucket = hash & (buckets - 1); probing steps by 1, 2, 3, ... A bucket matches when its stored full
 *   hash and its key bytes are equal.
 * - An insert reuses the first tombstone met on the probe path, if any, instead of the empty bucket
 *   that ends the path.
 * - After an insert that adds a key: if items * 4 > buckets * 3 the table doubles; else if
 *   buckets - (items + tombstones) <= buckets / 8 it is rebuilt at the same size. Either way the old
 *   buckets are walked in index order and each live key is placed by the same probing (no tombstones
 *   in the new table). Spec §2.5 words the second test as `buckets - items`; StringMap.cpp counts
 *   the tombstones too, and that is what this follows.
 * - Erasing leaves a tombstone; iteration is bucket 0..N-1, skipping empty buckets and tombstones.
 *
 * Keys are byte strings: JS strings whose char codes are all below 256, one char per byte (or a
 * Uint8Array, turned into such a string). `shouldReverseIterate()` (a build option for LLVM's own tests)
 * is off in release builds and is not modelled.
 */

import { djbHash } from "./djb.js";
import { xxh3Low32 } from "./xxhash.js";

/** Which hash StringMap uses: `"djb"` in LLVM 14, `"xxh3"` in LLVM 19 and 22. */
export type StringMapHash = "xxh3" | "djb";

export interface StringMapOptions {
  /** Defaults to `"xxh3"` (LLVM 19 and later). */
  hash?: StringMapHash;
}

export type StringMapKey = string | Uint8Array;

interface Entry<V> {
  readonly key: string;
  readonly bytes: Uint8Array;
  readonly hash: number;
  value: V;
}

const TOMBSTONE: unique symbol = Symbol("StringMap tombstone");
type Bucket<V> = Entry<V> | typeof TOMBSTONE | undefined;

const INITIAL_BUCKETS = 16;

/** The full hash StringMap stores for `bytes`, as an unsigned 32-bit number. */
export function stringMapHash(bytes: Uint8Array, hash: StringMapHash): number {
  return hash === "djb" ? djbHash(bytes, 0) : xxh3Low32(bytes);
}

/** Converts a key to its byte-string text and bytes; rejects chars that are not one byte. */
function toKey(key: StringMapKey): { text: string; bytes: Uint8Array } {
  if (key instanceof Uint8Array) {
    let text = "";
    // Chunked so a long key does not exceed the engine's argument-count limit.
    for (let start = 0; start < key.length; start += 0x2000) {
      text += String.fromCharCode(...key.subarray(start, start + 0x2000));
    }
    return { text, bytes: key.slice() };
  }
  if (typeof key !== "string") throw new TypeError(`StringMap key must be a string or Uint8Array, got ${typeof key}`);
  const bytes = new Uint8Array(key.length);
  for (let index = 0; index < key.length; index++) {
    const code = key.charCodeAt(index);
    if (code > 0xff) {
      throw new TypeError(
        `StringMap key must be a byte string (char codes below 256), got U+${code.toString(16).toUpperCase().padStart(4, "0")} at index ${index}`,
      );
    }
    bytes[index] = code;
  }
  return { text: key, bytes };
}

/**
 * Triangular probing visits every bucket of a power-of-two table within `buckets` steps, and the rehash
 * rule keeps at least one bucket empty, so this only fires if that invariant is broken: better an error
 * than an endless loop.
 */
function noEmptyBucket(): Error {
  return new Error("StringMap model: probed every bucket without finding an empty one");
}

function equalBytes(left: Uint8Array, right: Uint8Array): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index++) if (left[index] !== right[index]) return false;
  return true;
}

/**
 * `llvm::StringMap<V>` as far as its observable order goes. Like LLVM's, iterators are invalidated by
 * an insert that adds a key (it may rebuild the table); erasing keeps the layout, so walking again from
 * the start after each erase, as the bundler's unbundling loop does, sees the remaining keys in order.
 */
export class StringMapModel<V> {
  readonly hash: StringMapHash;
  #buckets: Bucket<V>[] = [];
  #items = 0;
  #tombstones = 0;

  constructor(options: StringMapOptions = {}) {
    const hash = options.hash ?? "xxh3";
    if (hash !== "xxh3" && hash !== "djb") throw new TypeError(`unknown StringMap hash '${String(hash)}'`);
    this.hash = hash;
  }

  get size(): number {
    return this.#items;
  }

  /** Number of buckets (0 before the first insert). */
  get bucketCount(): number {
    return this.#buckets.length;
  }

  /** Inserts `key`, or replaces the value of an equal key where it is (`map[key] = value`). */
  set(key: StringMapKey, value: V): this {
    const { text, bytes } = toKey(key);
    const hash = stringMapHash(bytes, this.hash);
    const bucket = this.#lookupBucketFor(bytes, hash);
    const item = this.#buckets[bucket];
    if (item !== undefined && item !== TOMBSTONE) {
      item.value = value;
      return this;
    }
    if (item === TOMBSTONE) this.#tombstones--;
    this.#buckets[bucket] = { key: text, bytes, hash, value };
    this.#items++;
    this.#rehashTable();
    return this;
  }

  get(key: StringMapKey): V | undefined {
    const bucket = this.#findKey(key);
    return bucket < 0 ? undefined : (this.#buckets[bucket] as Entry<V>).value;
  }

  has(key: StringMapKey): boolean {
    return this.#findKey(key) >= 0;
  }

  /** Erases `key`, leaving a tombstone in its bucket. Returns whether it was present. */
  delete(key: StringMapKey): boolean {
    const bucket = this.#findKey(key);
    if (bucket < 0) return false;
    this.#buckets[bucket] = TOMBSTONE;
    this.#items--;
    this.#tombstones++;
    return true;
  }

  /** The bucket index holding `key`, or -1: for tests and for explaining an order. */
  bucketOf(key: StringMapKey): number {
    return this.#findKey(key);
  }

  *entries(): IterableIterator<[string, V]> {
    for (let bucket = 0; bucket < this.#buckets.length; bucket++) {
      const item = this.#buckets[bucket];
      if (item !== undefined && item !== TOMBSTONE) yield [item.key, item.value];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): IterableIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries();
  }

  /** StringMapImpl::LookupBucketFor: the bucket holding an equal key, or the one an insert would use. */
  #lookupBucketFor(bytes: Uint8Array, hash: number): number {
    if (this.#buckets.length === 0) this.#buckets = new Array<Bucket<V>>(INITIAL_BUCKETS).fill(undefined);
    const buckets = this.#buckets;
    const mask = buckets.length - 1;
    let bucket = hash & mask;
    let probe = 1;
    let firstTombstone = -1;
    for (;;) {
      const item = buckets[bucket];
      if (item === undefined) return firstTombstone >= 0 ? firstTombstone : bucket;
      if (item === TOMBSTONE) {
        if (firstTombstone < 0) firstTombstone = bucket;
      } else if (item.hash === hash && equalBytes(item.bytes, bytes)) {
        return bucket;
      }
      bucket = (bucket + probe++) & mask;
      if (probe > buckets.length) throw noEmptyBucket();
    }
  }

  /** StringMapImpl::FindKey: the bucket holding `key`, or -1. Never allocates the table. */
  #findKey(key: StringMapKey): number {
    const { bytes } = toKey(key);
    if (this.#buckets.length === 0) return -1;
    const hash = stringMapHash(bytes, this.hash);
    const buckets = this.#buckets;
    const mask = buckets.length - 1;
    let bucket = hash & mask;
    let probe = 1;
    for (;;) {
      const item = buckets[bucket];
      if (item === undefined) return -1;
      if (item !== TOMBSTONE && item.hash === hash && equalBytes(item.bytes, bytes)) return bucket;
      bucket = (bucket + probe++) & mask;
      if (probe > buckets.length) throw noEmptyBucket();
    }
  }

  /** StringMapImpl::RehashTable, run after each insert that added a key. */
  #rehashTable(): void {
    const oldBuckets = this.#buckets;
    const count = oldBuckets.length;
    let newCount: number;
    if (this.#items * 4 > count * 3) newCount = count * 2;
    else if (count - (this.#items + this.#tombstones) <= count / 8) newCount = count;
    else return;

    const newBuckets = new Array<Bucket<V>>(newCount).fill(undefined);
    const mask = newCount - 1;
    for (const item of oldBuckets) {
      if (item === undefined || item === TOMBSTONE) continue;
      let bucket = item.hash & mask;
      let probe = 1;
      while (newBuckets[bucket] !== undefined) bucket = (bucket + probe++) & mask;
      newBuckets[bucket] = item;
    }
    this.#buckets = newBuckets;
    this.#tombstones = 0;
  }
}

/**
 * Inserts `keys` in order into a fresh StringMap (a repeated key keeps its first place) and returns
 * the keys in iteration order: the order `-list` prints a binary bundle's IDs, given its header order.
 */
export function stringMapOrder(keys: Iterable<StringMapKey>, hash: StringMapHash): string[] {
  const map = new StringMapModel<true>({ hash });
  for (const key of keys) map.set(key, true);
  return [...map.keys()];
}
