/**
 * The StringMap model (src/llvm/string-map.ts) and LLVM 14's djb hash (src/llvm/djb.ts): the orders
 * observed from the native bundlers, and the table mechanics of StringMap.cpp (growth, tombstone reuse,
 * same-size rehash) on keys picked for their home buckets. test/differential/string-map-native.test.ts
 * checks the same model against the native tools and against llvm::StringMap itself.
 */
import { describe, expect, it } from "vitest";
import { djbHash } from "../../src/llvm/djb.js";
import { StringMapModel, stringMapHash, stringMapOrder, type StringMapHash } from "../../src/llvm/string-map.js";

function latin1(text: string): Uint8Array {
  return Uint8Array.from(text, (char) => char.charCodeAt(0));
}

/** `count` distinct keys of the form `key<n>` whose home bucket in a 16-bucket table is `bucket`. */
function keysWithHome(hash: StringMapHash, bucket: number, count: number, exclude = new Set<string>()): string[] {
  const found: string[] = [];
  for (let index = 0; found.length < count; index++) {
    const key = `key${index}`;
    if (!exclude.has(key) && (stringMapHash(latin1(key), hash) & 15) === bucket) found.push(key);
  }
  return found;
}

describe("djbHash", () => {
  it("is h = h * 33 + byte from the seed, wrapped to u32", () => {
    expect(djbHash(latin1(""))).toBe(0);
    expect(djbHash(latin1("a"))).toBe(97);
    expect(djbHash(latin1("ab"))).toBe(97 * 33 + 98);
    expect(djbHash(latin1(""), 5381)).toBe(5381);
    expect(djbHash(latin1("a"), 5381)).toBe(5381 * 33 + 97);
  });

  it("wraps like the BigInt definition on long inputs and high bytes", () => {
    let state = 12345;
    for (let round = 0; round < 200; round++) {
      const bytes = new Uint8Array(round * 3);
      for (let index = 0; index < bytes.length; index++) {
        state = (Math.imul(state, 1103515245) + 12345) >>> 0;
        bytes[index] = state >>> 24;
      }
      const seed = round % 2 === 0 ? 0 : 5381;
      let expected = BigInt(seed);
      for (const byte of bytes) expected = (expected * 33n + BigInt(byte)) & 0xffffffffn;
      expect(djbHash(bytes, seed)).toBe(Number(expected));
    }
  });
});

describe("stringMapOrder: orders seen from the native bundlers", () => {
  // clang-offload-bundler-19/-22 -list of a bundle made with
  // -targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906,...--gfx908,...--gfx1030
  // (spec/bundler.md §2.5); 19 and 22 store the host ID with a trailing '-'.
  const stored19 = [
    "host-x86_64-unknown-linux-gnu-",
    "hip-amdgcn-amd-amdhsa--gfx906",
    "hip-amdgcn-amd-amdhsa--gfx908",
    "hip-amdgcn-amd-amdhsa--gfx1030",
  ];

  it("19/22: gfx906 and gfx1030 share a home bucket, so insertion order matters", () => {
    expect(stringMapOrder(stored19, "xxh3")).toEqual([
      "hip-amdgcn-amd-amdhsa--gfx906",
      "hip-amdgcn-amd-amdhsa--gfx1030",
      "hip-amdgcn-amd-amdhsa--gfx908",
      "host-x86_64-unknown-linux-gnu-",
    ]);
    expect(stringMapOrder([...stored19].reverse(), "xxh3")).toEqual([
      "hip-amdgcn-amd-amdhsa--gfx1030",
      "hip-amdgcn-amd-amdhsa--gfx906",
      "hip-amdgcn-amd-amdhsa--gfx908",
      "host-x86_64-unknown-linux-gnu-",
    ]);
  });

  it("14: the same targets, stored verbatim, hashed with djb", () => {
    const stored14 = ["host-x86_64-unknown-linux-gnu", ...stored19.slice(1)];
    expect(stringMapOrder(stored14, "djb")).toEqual([
      "hip-amdgcn-amd-amdhsa--gfx906",
      "hip-amdgcn-amd-amdhsa--gfx908",
      "hip-amdgcn-amd-amdhsa--gfx1030",
      "host-x86_64-unknown-linux-gnu",
    ]);
  });

  it("a repeated key keeps its first place", () => {
    expect(stringMapOrder(["b", "a", "b"], "xxh3")).toEqual(stringMapOrder(["b", "a"], "xxh3"));
  });
});

describe.each(["xxh3", "djb"] as const)("StringMapModel (%s)", (hash) => {
  it("works like a map", () => {
    const map = new StringMapModel<number>({ hash });
    expect(map.size).toBe(0);
    expect(map.get("a")).toBeUndefined();
    expect(map.has("a")).toBe(false);
    expect(map.delete("a")).toBe(false);
    // Lookups and erases do not allocate the table; only an insert does (init(16)).
    expect(map.bucketCount).toBe(0);
    map.set("a", 1).set("b", 2);
    expect(map.bucketCount).toBe(16);
    expect(map.size).toBe(2);
    expect(map.get("a")).toBe(1);
    expect(map.has("b")).toBe(true);
    expect(map.delete("a")).toBe(true);
    expect(map.delete("a")).toBe(false);
    expect(map.size).toBe(1);
    expect([...map]).toEqual([["b", 2]]);
    expect([...map.values()]).toEqual([2]);
  });

  it("replaces the value of an equal key in place", () => {
    const map = new StringMapModel<string>({ hash });
    const keys = Array.from({ length: 10 }, (_, index) => `target-${index}`);
    for (const key of keys) map.set(key, "first");
    const order = [...map.keys()];
    map.set(keys[4]!, "second");
    expect([...map.keys()]).toEqual(order);
    expect(map.size).toBe(10);
    expect(map.get(keys[4]!)).toBe("second");
  });

  it("grows from 16 to 32 buckets at the 13th key and to 64 at the 25th", () => {
    const map = new StringMapModel<number>({ hash });
    for (let index = 1; index <= 25; index++) {
      map.set(`k${index}`, index);
      const expected = index <= 12 ? 16 : index <= 24 ? 32 : 64;
      expect(map.bucketCount, `after ${index} keys`).toBe(expected);
    }
  });

  it("probes +1, +2, +3 from the home bucket", () => {
    const [first, second, third, fourth] = keysWithHome(hash, 5, 4);
    const map = new StringMapModel<number>({ hash });
    for (const key of [first!, second!, third!, fourth!]) map.set(key, 0);
    expect([first, second, third, fourth].map((key) => map.bucketOf(key!))).toEqual([5, 6, 8, 11]);
    expect([...map.keys()]).toEqual([first, second, third, fourth]);
  });

  it("reuses the first tombstone on the probe path, and finds keys past it", () => {
    const [first, second, third] = keysWithHome(hash, 9, 3);
    const map = new StringMapModel<number>({ hash });
    map.set(first!, 1).set(second!, 2);
    expect(map.delete(first!)).toBe(true);
    // `second` is still found past the tombstone, and updating it does not move it into the hole.
    map.set(second!, 22);
    expect(map.bucketOf(second!)).toBe(10);
    map.set(third!, 3);
    expect(map.bucketOf(third!)).toBe(9);
    expect([...map.entries()]).toEqual([
      [third, 3],
      [second, 22],
    ]);
  });

  it("erasing keeps the layout, so re-walking from the start sees the remaining keys in order", () => {
    const map = new StringMapModel<number>({ hash });
    const keys = Array.from({ length: 20 }, (_, index) => `hip-amdgcn-amd-amdhsa--gfx${900 + index}`);
    keys.forEach((key, index) => map.set(key, index));
    const order = [...map.keys()];
    const remaining = [...order];
    for (const victim of [order[3]!, order[0]!, order[17]!, order[9]!]) {
      map.delete(victim);
      remaining.splice(remaining.indexOf(victim), 1);
      expect([...map.keys()]).toEqual(remaining);
    }
  });

  it("rebuilds at the same size when fewer than 1/8 of the buckets are empty, dropping tombstones", () => {
    const home = 3;
    const [first, second] = keysWithHome(hash, home, 2);
    const map = new StringMapModel<number>({ hash });
    map.set(first!, 1).set(second!, 2);
    map.delete(first!); // items 1, tombstones 1; `second` sits at home + 1 behind the tombstone
    // Fillers land in empty home buckets, so they never reuse the tombstone at `home`.
    const fillerBuckets = Array.from({ length: 16 }, (_, bucket) => bucket).filter(
      (bucket) => bucket !== home && bucket !== home + 1,
    );
    const used = new Set([first!, second!]);
    const fillers = fillerBuckets.map((bucket) => {
      const [key] = keysWithHome(hash, bucket, 1, used);
      used.add(key!);
      return key!;
    });
    // 11 insert+erase pairs: items 1, tombstones 12, so 13 buckets are not empty.
    for (const filler of fillers.slice(0, 11)) {
      map.set(filler, 0);
      map.delete(filler);
    }
    expect(map.bucketOf(second!)).toBe(home + 1);
    // The 14th non-empty bucket: 16 - 14 <= 16 / 8, so the table is rebuilt at 16 buckets.
    map.set(fillers[11]!, 0);
    expect(map.bucketCount).toBe(16);
    expect(map.bucketOf(second!)).toBe(home);
    expect(map.size).toBe(2);
  });

  it("takes Uint8Array keys as the same byte strings", () => {
    const map = new StringMapModel<number>({ hash });
    map.set(Uint8Array.of(0x68, 0xff, 0x00), 7);
    expect(map.get("h\u00ff\u0000")).toBe(7);
    expect([...map.keys()]).toEqual(["h\u00ff\u0000"]);
  });

  it("rejects keys that are not byte strings", () => {
    const map = new StringMapModel<number>({ hash });
    expect(() => map.set("gfx\u0100", 1)).toThrow(TypeError);
    expect(() => map.get("\u{1F600}")).toThrow(TypeError);
    expect(() => stringMapOrder(["ok", "not ok \u2014"], hash)).toThrow(/byte string/);
  });
});

describe("StringMapModel options", () => {
  it("defaults to xxh3 and rejects unknown hashes", () => {
    expect(new StringMapModel().hash).toBe("xxh3");
    expect(() => new StringMapModel({ hash: "fnv" as StringMapHash })).toThrow(TypeError);
  });
});
