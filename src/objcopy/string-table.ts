/**
 * ELF string tables as llvm-objcopy rebuilds them (llvm/lib/MC/StringTableBuilder.cpp, kind ELF, optimised):
 * the table starts with one NUL; the distinct strings are ordered by their bytes read from the end, greatest first
 * (a string that is a suffix of another sorts right after it), and a string that is a suffix of the one placed
 * before it shares that string's bytes (tail merging). The empty string is offset 0.
 *
 * Strings are byte strings carried as latin1 JavaScript strings, so any name round-trips exactly.
 */

export interface StringTable {
  readonly bytes: Uint8Array;
  /** Offset of a string that was given to {@link buildStringTable}. */
  offsetOf(name: string): number;
}

/** Byte order of `a` and `b` read backwards, an exhausted string being the smallest: the multikey sort's order. */
function compareTails(a: string, b: string): number {
  let i = a.length - 1;
  let j = b.length - 1;
  for (; i >= 0 && j >= 0; i--, j--) {
    const d = a.charCodeAt(i) - b.charCodeAt(j);
    if (d !== 0) return d;
  }
  return (i >= 0 ? 1 : 0) - (j >= 0 ? 1 : 0);
}

export function buildStringTable(names: Iterable<string>): StringTable {
  const distinct = [...new Set(names)].filter((name) => name.length > 0);
  distinct.sort((a, b) => compareTails(b, a));
  const offsets = new Map<string, number>([["", 0]]);
  let size = 1;
  let previous = "";
  for (const name of distinct) {
    if (previous.endsWith(name)) {
      offsets.set(name, size - name.length - 1);
      continue;
    }
    offsets.set(name, size);
    size += name.length + 1;
    previous = name;
  }
  const bytes = new Uint8Array(size);
  for (const [name, offset] of offsets) {
    if (name.length === 0) continue;
    for (let i = 0; i < name.length; i++) bytes[offset + i] = name.charCodeAt(i);
  }
  return {
    bytes,
    offsetOf(name) {
      const offset = offsets.get(name);
      if (offset === undefined) throw new Error(`string '${name}' is not in the table`);
      return offset;
    },
  };
}
