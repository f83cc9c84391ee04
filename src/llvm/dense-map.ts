/**
 * A model of `llvm::DenseMap<StringRef, V>`'s bucket layout (llvm/include/llvm/ADT/DenseMap.h), kept only
 * to reproduce its iteration order. clang-offload-packager 19 parses each `--image` into a
 * `DenseMap<StringRef, StringRef>` and copies it, in iteration order, into the MapVector the offload binary
 * writer walks, so the order of an offload binary's string entries is this map's bucket order over *all*
 * the image's keys, `file` and `kind` included (spec offload-binary.md §1; test/differential/packager-native).
 *
 * What is modelled, as upstream does it:
 * - No buckets until the first insert, which allocates max(64, NextPowerOf2(0 - 1)) = 64 buckets.
 * - Hash: `DenseMapInfo<StringRef>::getHashValue`, the low 32 bits of `hash_value(StringRef)` (hashing.ts).
 *   Bucket = hash & (buckets - 1); quadratic probing, the step growing by one each time (1, 2, 3, ...).
 * - InsertIntoBucket: when (entries + 1) * 4 >= buckets * 3 the table doubles; else when fewer than one
 *   bucket in eight would stay empty (buckets - (entries + 1 + tombstones) <= buckets / 8) it is rebuilt at
 *   the same size. A rebuild walks the old buckets in index order and re-inserts each live key by the same
 *   probing. Either way the key is then placed by a fresh probe of the new table.
 * - Iteration is bucket 0..N-1.
 *
 * Erasing is not modelled: the packager never erases. Keys are byte strings (char codes below 256).
 */
import { latin1Encode } from "../formats/bytes.js";
import { denseMapStringHash } from "./hashing.js";

const INITIAL_BUCKETS = 64;

interface Entry<V> {
  readonly key: string;
  readonly hash: number;
  value: V;
}

export class DenseMapModel<V> {
  #buckets: (Entry<V> | undefined)[] = [];
  #entries = 0;

  get size(): number {
    return this.#entries;
  }

  get bucketCount(): number {
    return this.#buckets.length;
  }

  has(key: string): boolean {
    return this.#find(key, denseMapStringHash(latin1Encode(key))) !== undefined;
  }

  get(key: string): V | undefined {
    return this.#find(key, denseMapStringHash(latin1Encode(key)))?.value;
  }

  /** `map[key] = value`: replaces the value of a present key where it is, or inserts. */
  set(key: string, value: V): this {
    const hash = denseMapStringHash(latin1Encode(key));
    const found = this.#find(key, hash);
    if (found !== undefined) {
      found.value = value;
      return this;
    }
    const buckets = this.#buckets.length;
    const entries = this.#entries + 1;
    if (entries * 4 >= buckets * 3) this.#grow(Math.max(INITIAL_BUCKETS, buckets * 2));
    else if (buckets - entries <= buckets / 8) this.#grow(buckets);
    this.#place({ key, hash, value });
    this.#entries = entries;
    return this;
  }

  *entries(): IterableIterator<[string, V]> {
    for (const entry of this.#buckets) if (entry !== undefined) yield [entry.key, entry.value];
  }

  *keys(): IterableIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries();
  }

  /** The bucket a key sits in, or -1 (for tests and explanations). */
  bucketOf(key: string): number {
    const entry = this.#find(key, denseMapStringHash(latin1Encode(key)));
    return entry === undefined ? -1 : this.#buckets.indexOf(entry);
  }

  #find(key: string, hash: number): Entry<V> | undefined {
    const buckets = this.#buckets;
    if (buckets.length === 0) return undefined;
    const mask = buckets.length - 1;
    let bucket = hash & mask;
    for (let probe = 1; ; probe++) {
      const entry = buckets[bucket];
      if (entry === undefined) return undefined;
      if (entry.key === key) return entry;
      bucket = (bucket + probe) & mask;
    }
  }

  #place(entry: Entry<V>): void {
    const buckets = this.#buckets;
    const mask = buckets.length - 1;
    let bucket = entry.hash & mask;
    for (let probe = 1; buckets[bucket] !== undefined; probe++) bucket = (bucket + probe) & mask;
    buckets[bucket] = entry;
  }

  #grow(count: number): void {
    const old = this.#buckets;
    this.#buckets = new Array<Entry<V> | undefined>(count).fill(undefined);
    for (const entry of old) if (entry !== undefined) this.#place(entry);
  }
}

/** Keys in the iteration order of a DenseMap they were inserted into in the given order. */
export function denseMapOrder(keys: Iterable<string>): string[] {
  const map = new DenseMapModel<true>();
  for (const key of keys) map.set(key, true);
  return [...map.keys()];
}
