/**
 * What the output checker (./index.ts) reports: findings, not exceptions, so one pass lists every problem
 * of a file (as eu-elflint and llvm-readobj do) and a caller can compare an output's list with its input's.
 */

export interface Finding {
  /** Stable code (`PHDRS_PAST_EOF`, `SEGMENT_NOT_LOADED`, ...). */
  readonly code: string;
  /** Worded like LLVM's object-file errors, naming the values that disagree. */
  readonly message: string;
  /** File offset of the offending field (or of the thing it points at, when the field is in memory only). */
  readonly offset: number;
  /** The field at fault (`e_phoff`, `p_offset`, `sh_offset`, `DT_STRTAB`, `binary`). */
  readonly field: string;
  /**
   * What the field belongs to, stable across a rewrite (`PT_DYNAMIC`, `PT_LOAD`, `section .dynamic`,
   * `fat binary 3`): with the code and field, the key by which an output's finding is matched with the
   * same finding in its input (indices of program headers move when a rewrite adds one; names do not).
   */
  readonly subject: string;
}

export function hex(n: number): string {
  return `0x${n.toString(16)}`;
}

/** The key under which a finding counts as "the same" in an input and its output. */
export function findingKey(f: Finding): string {
  return `${f.code}\u0000${f.subject}\u0000${f.field}`;
}

/** The findings of `output` that `input` does not already have (an odd input may stay as odd, not get worse). */
export function newFindings(output: readonly Finding[], input: readonly Finding[]): Finding[] {
  const known = new Set(input.map(findingKey));
  return output.filter((f) => !known.has(findingKey(f)));
}

/**
 * Collects findings, keeping at most `perKey` of each code and subject: a relocation table with 10,000 bad
 * entries is one problem, reported with its first few examples and a count.
 */
export class Findings {
  readonly list: Finding[] = [];
  private readonly counts = new Map<string, number>();

  constructor(private readonly perKey = 4) {}

  add(code: string, subject: string, field: string, offset: number, message: string): void {
    const key = `${code}\u0000${subject}`;
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    if (n <= this.perKey) this.list.push({ code, message, offset, field, subject });
  }

  /** The findings, with a note on each code and subject whose further examples were left out. */
  done(): Finding[] {
    const out = [...this.list];
    for (const [key, n] of this.counts) {
      if (n <= this.perKey) continue;
      const [code, subject] = key.split("\u0000");
      const last = [...this.list].reverse().find((f) => f.code === code && f.subject === subject)!;
      out.push({ ...last, message: `${n - this.perKey} more like the above (${subject}: ${code})` });
    }
    return out;
  }
}
