/**
 * Locating device code in a package member while it streams past, without keeping the member: for
 * `ls`, `sizes` and `check` of a member the package walker (src/packages/walk.ts) can only read front
 * to back (a `.deb`'s data.tar.xz, a deflated wheel member). The answer is the locator's own
 * (src/inspect/locate.ts), computed afterwards over what was kept; where that needs a byte that was not
 * kept, the read throws `CaptureMiss` and the walker falls back to spooling the member.
 *
 * Only an ELF file with a section table is taken this way (the locator searches only its offload
 * sections, which are known only when the section table has gone by, usually at the very end); any
 * other member is spooled as before. While the member streams:
 *
 * | kept | why |
 * |---|---|
 * | its first 4 KiB | the ELF header |
 * | the section table (`e_shoff`, `e_shnum` from the header) and the 1 MiB before it | the table, and the section-name string table linkers put just before it |
 * | 64 KiB either side of each `\0.shstrtab\0` before the table (the latest 8) | the section names where a large `.strtab` or `.symtab` lies between them and the table (lld's and GNU ld's order: `.symtab`, `.shstrtab`, `.strtab`, table; rocBLAS's 400 MB code objects have 36 MB of `.strtab` there) |
 * | 4 KiB from each magic (`__CLANG_OFFLOAD_BUNDLE__`, `CCOB`, `10 FF 10 AD`) the walk reaches | a bundle header as `readBinaryBundle` reads it; a whole compressed bundle or offload binary (its header gives its size) |
 * | the position of every magic in every stretch scanned | the locator's search for the next magic, answered from the list (`nextMagic`) |
 *
 * The scan hops as the locator does: from a bundle header that reads, past its payloads to its extent;
 * past a compressed bundle or offload binary by its declared size. So the payloads (1.29 GB of
 * librocsparse's 1.31 GB) are counted but never searched. A stretch hopped over is not scanned: a
 * question about it (the sections turned out to cut a hop short) is a miss, never a guess. At most
 * `MAX_KEPT` bytes are kept; a capture over that is not taken, and a read of it is a miss.
 */
import { OffloadKitError } from "../engine/errors.js";
import type { Engine } from "../engine/engine.js";
import { findAll } from "../engine/find.js";
import { engine as defaultEngine } from "../engine/select.js";
import { bytesSource, sliceSource } from "../engine/source.js";
import { Window } from "../engine/window.js";
import { readBinaryBundle } from "../formats/bundle.js";
import { parseCcobHeader } from "../formats/ccob.js";
import { isElf } from "../formats/elf.js";
import { LOCATOR_MAGICS } from "./locate.js";
import type { IndexedSource, MagicKind } from "./locate.js";

/** Bytes kept after each magic the walk reaches: what `readBinaryBundle` loads first (its HEADER_PROBE). */
const PROBE = 4096;
/** Bytes kept at the start of the member (the ELF header is 52 or 64). */
const HEAD = 4096;
/** Bytes kept before the section table, for the section-name string table. */
const BEFORE_TABLE = 1 << 20;
/**
 * What marks a section-name string table before anything says where it is: the table's own name, as
 * every linker writes it (a string table starts with a NUL and ends each name with one). Whether a kept
 * stretch holds the names is decided by the section table when it arrives, never by the marker.
 */
const NAMES_MARKER = new TextEncoder().encode("\0.shstrtab\0");
/** Bytes kept either side of a names marker (the names table around its own name). */
const NAMES_AROUND = 64 * 1024;
/** Names markers kept at once: past it the oldest is dropped (the real one is usually the last before the table). */
const MAX_NAMES_CANDIDATES = 8;
/** The most bytes kept for one member. */
export const MAX_KEPT = 48 * 1024 * 1024;
/** The most magic positions listed for one member (a `.rodata` full of "CCOB" would list without end): past it, every search is a miss. */
const MAX_HITS = 200_000;
const LONGEST = Math.max(...LOCATOR_MAGICS.map(([, bytes]) => bytes.length));

/** A read of a byte the streaming locator did not keep: the member must be read again, from a spool. */
export class CaptureMiss extends Error {
  constructor(readonly offset: number, readonly length: number) {
    super(`bytes [${offset}, ${offset + length}) of the streamed member were not kept`);
  }
}

export function isCaptureMiss(e: unknown): e is CaptureMiss {
  return e instanceof CaptureMiss;
}

interface Kept {
  readonly start: number;
  bytes: Uint8Array;
  /** Bytes filled from `start` on. */
  filled: number;
}

interface Hit {
  readonly at: number;
  readonly kind: MagicKind;
}

export interface SectionTablePlace {
  readonly offset: number;
  readonly size: number;
  readonly is64: boolean;
  readonly littleEndian: boolean;
  /** e_shstrndx: the section holding the section names. */
  readonly namesIndex: number;
}

/** Where the section table is, from an ELF header: undefined when the member is not an ELF file with one. */
export function elfSectionTable(head: Uint8Array, size: number): SectionTablePlace | undefined {
  if (head.length < 64 || !isElf(head, size)) return undefined;
  const is64 = head[4] === 2;
  const little = head[5] === 1;
  if (!is64 && head[4] !== 1) return undefined;
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const offset = is64 ? Number(view.getBigUint64(40, little)) : view.getUint32(32, little);
  const count = view.getUint16(is64 ? 60 : 48, little);
  const entry = is64 ? 64 : 40;
  // No table, or one numbered through section 0 (e_shnum 0, SHN_XINDEX): spooled as before.
  if (offset === 0 || count === 0 || !Number.isSafeInteger(offset) || offset + count * entry > size) return undefined;
  return { offset, size: count * entry, is64, littleEndian: little, namesIndex: view.getUint16(is64 ? 62 : 50, little) };
}

/**
 * Takes a member's bytes in order (`push`), keeping what the locator will read; `finish` gives the
 * member as an `IndexedSource` whose reads of anything not kept throw `CaptureMiss`.
 */
export class MemberCapture {
  private position = 0;
  private readonly kept: Kept[] = [];
  /** The kept stretches not yet filled (the only ones a chunk is copied into). */
  private open: Kept[] = [];
  private keptBytes = 0;
  private readonly hits: Hit[] = [];
  /** Hits the walk reached whose fate (a hop, or one byte on) waits for their kept bytes. */
  private readonly pending: { hit: Hit; kept: Kept | undefined }[] = [];
  /** Where the walk goes on: hits before this lie in a stretch hopped over. */
  private next = 0;
  /** Per magic: every start before this has been checked. */
  private readonly checked: number[];
  /** Stretches where every start was checked for every magic, [start, end), in order. */
  private readonly scanned: [number, number][] = [];
  private runStart = 0;
  /** The last bytes of the stream so far, for a magic across two chunks. */
  private carry = new Uint8Array(0);
  private readonly engine: Engine;
  /** Whether the section table is still to be read for where the section names lie. */
  private tableUnread = true;
  /** The last NAMES_AROUND bytes of the stream (byte p at p % NAMES_AROUND), for the names before a marker. */
  private readonly recent = new Uint8Array(NAMES_AROUND);
  /** Stretches kept around names markers, oldest first. */
  private readonly candidates: Kept[] = [];
  /** Every names marker starting before this has been checked. */
  private namesChecked = 0;

  constructor(readonly size: number, private readonly place: SectionTablePlace, engine?: Engine) {
    this.engine = engine ?? defaultEngine();
    this.checked = LOCATOR_MAGICS.map(() => 0);
    this.keep(0, Math.min(HEAD, size));
    const before = Math.max(HEAD, place.offset - BEFORE_TABLE);
    if (before < place.offset) this.keep(before, place.offset - before);
    this.keep(Math.max(place.offset, HEAD), place.offset + place.size - Math.max(place.offset, HEAD));
  }

  /** Once the table has gone by: keeps the section names too when they are still to come (a table before its sections). */
  private afterTable(): void {
    const { offset: tableOffset, size: tableSize, is64, littleEndian, namesIndex } = this.place;
    if (!this.tableUnread) return;
    // The table is in the head's keep or its own (both, split, when it starts in the head: then it is not read here).
    const table = this.kept.find((k) => k.start <= tableOffset && tableOffset + tableSize <= k.start + k.bytes.length);
    if (table === undefined) {
      this.tableUnread = false;
      return;
    }
    if (table.start + table.filled < tableOffset + tableSize) return;
    this.tableUnread = false;
    const at = tableOffset - table.start + namesIndex * (is64 ? 64 : 40);
    if (namesIndex === 0 || namesIndex * (is64 ? 64 : 40) >= tableSize) return;
    const view = new DataView(table.bytes.buffer, table.bytes.byteOffset, table.bytes.byteLength);
    const offset = Number(is64 ? view.getBigUint64(at + 24, littleEndian) : view.getUint32(at + 16, littleEndian));
    const length = Number(is64 ? view.getBigUint64(at + 32, littleEndian) : view.getUint32(at + 20, littleEndian));
    if (offset >= this.position && offset + length <= this.size) this.keep(offset, length);
    // The names are known now: the markers' stretches that do not reach them are let go.
    for (const k of [...this.candidates]) if (k.start + k.bytes.length <= offset || offset + length <= k.start) this.drop(k);
  }

  /** Forgets a kept stretch (a names candidate no longer wanted). */
  private drop(k: Kept): void {
    this.kept.splice(this.kept.indexOf(k), 1);
    if (this.open.includes(k)) this.open.splice(this.open.indexOf(k), 1);
    if (this.candidates.includes(k)) this.candidates.splice(this.candidates.indexOf(k), 1);
    this.keptBytes -= k.bytes.length;
  }

  /**
   * While the section table is still to come: keeps NAMES_AROUND bytes either side of each names
   * marker starting in this chunk (or across its start), before the table's offset.
   */
  private findNames(chunk: Uint8Array, c0: number, c1: number): void {
    const end = Math.min(c1, this.place.offset);
    const from = Math.max(this.namesChecked, c0 - (NAMES_MARKER.length - 1), 0);
    if (!this.tableUnread || from + NAMES_MARKER.length > end) return;
    const found: number[] = [];
    if (from < c0) {
      const joint = new Uint8Array(c0 - from + Math.min(chunk.length, NAMES_MARKER.length - 1));
      this.recentInto(joint, from, c0);
      joint.set(chunk.subarray(0, joint.length - (c0 - from)), c0 - from);
      for (let p = 0; p < c0 - from && p + NAMES_MARKER.length <= joint.length; p++) {
        if (NAMES_MARKER.every((b, i) => joint[p + i] === b)) found.push(from + p);
      }
    }
    const start = Math.max(0, from - c0);
    if (start + NAMES_MARKER.length <= end - c0) {
      findAll(new Window(this.engine, bytesSource(chunk)), NAMES_MARKER, start, end - c0, (p) => {
        found.push(c0 + p);
      });
    }
    this.namesChecked = Math.max(from, end - NAMES_MARKER.length + 1);
    for (const at of found) {
      const begin = Math.max(0, at - NAMES_AROUND, c0 - NAMES_AROUND);
      // A stretch already kept around an earlier marker reaches this one's names too.
      if (this.candidates.some((k) => k.start <= begin && at + NAMES_AROUND <= k.start + k.bytes.length)) continue;
      const kept = this.keep(begin, Math.min(this.size, at + NAMES_AROUND) - begin);
      if (kept === undefined) continue;
      const before = Math.max(0, Math.min(c0, begin + kept.bytes.length) - begin);
      this.recentInto(kept.bytes, begin, begin + before);
      kept.filled = before;
      this.candidates.push(kept);
      if (this.candidates.length > MAX_NAMES_CANDIDATES) this.drop(this.candidates[0]!);
    }
  }

  /** Copies stream bytes [from, to) (within the last NAMES_AROUND before the chunk in hand) into `dest` from its start. */
  private recentInto(dest: Uint8Array, from: number, to: number): void {
    for (let p = from; p < to;) {
      const at = p % NAMES_AROUND;
      const n = Math.min(to - p, NAMES_AROUND - at);
      dest.set(this.recent.subarray(at, at + n), p - from);
      p += n;
    }
  }

  /** Remembers the end of `chunk` (stream bytes from c0) as the recent bytes. */
  private remember(chunk: Uint8Array, c0: number): void {
    const n = Math.min(chunk.length, NAMES_AROUND);
    for (let p = c0 + chunk.length - n; p < c0 + chunk.length;) {
      const at = p % NAMES_AROUND;
      const m = Math.min(c0 + chunk.length - p, NAMES_AROUND - at);
      this.recent.set(chunk.subarray(p - c0, p - c0 + m), at);
      p += m;
    }
  }

  /** Keeps [start, start + length) from now on (bytes already gone are taken from the chunk in hand). */
  private keep(start: number, length: number): Kept | undefined {
    if (length <= 0 || this.keptBytes + length > MAX_KEPT) return undefined;
    const kept: Kept = { start, bytes: new Uint8Array(length), filled: 0 };
    this.keptBytes += length;
    this.kept.push(kept);
    this.open.push(kept);
    return kept;
  }

  /** Copies what `chunk` (stream bytes [base, base + chunk.length)) holds of each kept stretch. */
  private fill(chunk: Uint8Array, base: number, from: number): void {
    for (const k of this.open) {
      const want = k.start + k.filled;
      if (k.filled === k.bytes.length || want < base || want >= base + chunk.length || want < from) continue;
      const n = Math.min(k.bytes.length - k.filled, base + chunk.length - want);
      k.bytes.set(chunk.subarray(want - base, want - base + n), k.filled);
      k.filled += n;
    }
    if (this.open.some((k) => k.filled === k.bytes.length)) this.open = this.open.filter((k) => k.filled < k.bytes.length);
  }

  push(chunk: Uint8Array): void {
    const c0 = this.position;
    const c1 = c0 + chunk.length;
    if (c1 > this.size) throw new OffloadKitError("PACKAGE_SIZE_MISMATCH", `member yields more than its declared ${this.size} bytes`, { offset: this.size });
    this.fill(chunk, c0, 0);
    this.afterTable();
    const names = this.tableUnread && c0 < this.place.offset;
    if (names) this.findNames(chunk, c0, c1);
    // The names (or a marker's stretch) may start within this very chunk.
    this.fill(chunk, c0, 0);
    if (names) this.remember(chunk, c0);
    const found = this.hits.length > MAX_HITS ? [] : this.scan(chunk, c0, c1);
    this.position = c1;
    for (const hit of found) {
      this.hits.push(hit);
      if (hit.at < this.next) continue;
      // A magic the walk may reach: keep its header, starting from bytes still in hand.
      this.pending.push({ hit, kept: this.keepFrom(hit, chunk, c0) });
    }
    this.decide(chunk, c0);
    const tail = Math.min(LONGEST - 1, c1);
    const joined = new Uint8Array(tail);
    const fromChunk = Math.min(tail, chunk.length);
    joined.set(this.carry.subarray(this.carry.length - (tail - fromChunk)), 0);
    joined.set(chunk.subarray(chunk.length - fromChunk), tail - fromChunk);
    this.carry = joined;
  }

  /** Keeps PROBE bytes from a hit, filled at once from the carry and the chunk in hand. */
  private keepFrom(hit: Hit, chunk: Uint8Array, c0: number): Kept | undefined {
    const kept = this.keep(hit.at, Math.min(PROBE, this.size - hit.at));
    if (kept === undefined) return undefined;
    if (hit.at < c0) {
      const n = Math.min(c0 - hit.at, kept.bytes.length);
      kept.bytes.set(this.carry.subarray(this.carry.length - (c0 - hit.at), this.carry.length - (c0 - hit.at) + n));
      kept.filled = n;
    }
    this.fill(chunk, c0, hit.at);
    return kept;
  }

  /** The magics starting in this chunk (or in the carry, across the boundary), in order of position. */
  private scan(chunk: Uint8Array, c0: number, c1: number): Hit[] {
    const hits: Hit[] = [];
    const lowest = Math.min(...this.checked);
    if (this.next > lowest) {
      // The walk hops over [lowest, next): that stretch is not scanned.
      if (lowest > this.runStart) this.scanned.push([this.runStart, lowest]);
      this.runStart = this.next;
    }
    LOCATOR_MAGICS.forEach(([kind, magic], k) => {
      const from = Math.max(this.checked[k]!, this.next, c0 - this.carry.length);
      if (from + magic.length > c1) return;
      if (from < c0) {
        // Starts in the carry: a few bytes, compared directly.
        const joint = new Uint8Array(c0 - from + Math.min(chunk.length, magic.length - 1));
        joint.set(this.carry.subarray(this.carry.length - (c0 - from)));
        joint.set(chunk.subarray(0, joint.length - (c0 - from)), c0 - from);
        for (let p = 0; p < c0 - from && p + magic.length <= joint.length; p++) {
          if (magic.every((b, i) => joint[p + i] === b)) hits.push({ at: from + p, kind });
        }
      }
      const start = Math.max(0, from - c0);
      if (start + magic.length <= chunk.length) {
        findAll(new Window(this.engine, bytesSource(chunk)), magic, start, chunk.length, (p) => {
          hits.push({ at: c0 + p, kind });
        });
      }
      this.checked[k] = Math.max(from, c1 - magic.length + 1);
    });
    return hits.sort((a, b) => a.at - b.at);
  }

  /** Settles the pending hits whose kept bytes are complete, in order: where the walk goes on from each. */
  private decide(chunk?: Uint8Array, c0 = 0): void {
    while (this.pending.length > 0) {
      const { hit, kept } = this.pending[0]!;
      if (kept !== undefined && kept.filled < kept.bytes.length && this.position < this.size) return;
      this.pending.shift();
      if (hit.at < this.next) continue;
      this.next = hit.at + this.extent(hit, kept, chunk, c0);
    }
  }

  /** How far the walk hops from a hit (1 when what is there does not read), as locate.ts does. */
  private extent(hit: Hit, kept: Kept | undefined, chunk: Uint8Array | undefined, c0: number): number {
    if (kept === undefined) return 1;
    const room = this.size - hit.at;
    try {
      switch (hit.kind) {
        case "bundle": {
          const read = readBinaryBundle(sliceSource(this.source(), hit.at, room), { engine: this.engine });
          return read.kind === "none" ? 1 : Math.max(read.bundle.extent, LOCATOR_MAGICS[0]![1].length);
        }
        case "ccob": {
          const header = parseCcobHeader(kept.bytes.subarray(0, kept.filled), 0, room);
          const total = header.rawTotalSize;
          if (total === undefined || total < header.headerSize || total > room) return 1;
          this.grow(kept, total, chunk, c0);
          return total;
        }
        case "offload": {
          if (kept.filled < 16) return 1;
          const total = Number(new DataView(kept.bytes.buffer, kept.bytes.byteOffset).getBigUint64(8, true));
          if (total < 16 || total > room) return 1;
          this.grow(kept, total, chunk, c0);
          return total;
        }
      }
    } catch (e) {
      if (e instanceof CaptureMiss || e instanceof OffloadKitError) return 1;
      throw e;
    }
  }

  /**
   * Keeps a whole compressed bundle or offload binary: its probe completed within the chunk in hand
   * (`chunk`, stream bytes from `c0`), which holds the bytes that followed it.
   */
  private grow(kept: Kept, length: number, chunk: Uint8Array | undefined, c0: number): void {
    if (length <= kept.bytes.length || this.keptBytes + length - kept.bytes.length > MAX_KEPT) return;
    const end = kept.start + kept.filled;
    if (end < this.position && (chunk === undefined || end < c0)) return;
    const bytes = new Uint8Array(length);
    bytes.set(kept.bytes.subarray(0, kept.filled));
    this.keptBytes += length - kept.bytes.length;
    kept.bytes = bytes;
    if (!this.open.includes(kept)) this.open.push(kept);
    if (chunk !== undefined && end < this.position) {
      const n = Math.min(length - kept.filled, c0 + chunk.length - end);
      bytes.set(chunk.subarray(end - c0, end - c0 + n), kept.filled);
      kept.filled += n;
    }
  }

  /** Whether every magic start in [from, to] was checked. */
  private covered(from: number, to: number, runs: readonly [number, number][]): boolean {
    return runs.some(([start, end]) => start <= from && to < end);
  }

  /** The member as kept (valid during streaming too, for the scan's own reads). */
  source(): IndexedSource {
    const size = this.size;
    const kept = this.kept;
    const hits = this.hits;
    const runs = this.scanned;
    const capture = this;
    return {
      size,
      read(dest, position) {
        const n = Math.max(0, Math.min(dest.length, size - position));
        if (n === 0) return 0;
        // Pieced together from overlapping stretches when one does not hold it all (the names across a marker's stretch and the table's).
        for (let p = position; p < position + n;) {
          const k = kept.find((x) => x.start <= p && p < x.start + x.filled);
          if (k === undefined) throw new CaptureMiss(position, n);
          const m = Math.min(position + n, k.start + k.filled) - p;
          dest.set(k.bytes.subarray(p - k.start, p - k.start + m), p - position);
          p += m;
        }
        return n;
      },
      nextMagic(from, to) {
        if (hits.length > MAX_HITS) throw new CaptureMiss(from, to - from);
        let found: Hit | undefined;
        for (const hit of hits) {
          if (hit.at < from) continue;
          if (hit.at >= to) break;
          const length = LOCATOR_MAGICS.find(([kind]) => kind === hit.kind)![1].length;
          if (hit.at + length <= to) {
            found = hit;
            break;
          }
        }
        const last = found?.at ?? to - 1;
        if (last >= from && !capture.covered(from, last, runs)) throw new CaptureMiss(from, last - from + 1);
        return found === undefined ? undefined : { at: found.at, kind: found.kind };
      },
    };
  }

  /** After the last byte: the member as kept. */
  finish(): IndexedSource {
    if (this.position < this.size) {
      throw new OffloadKitError("PACKAGE_TRUNCATED", `member ends early: ${this.size} bytes declared, stream ended after ${this.position}`, { offset: this.position });
    }
    this.decide();
    // Past its last check, each magic has no room to start: everything scanned reaches the end.
    if (this.next < this.size) this.scanned.push([this.runStart, this.size]);
    else if (Math.min(...this.checked) > this.runStart) this.scanned.push([this.runStart, Math.min(...this.checked)]);
    this.hits.sort((a, b) => a.at - b.at);
    return this.source();
  }
}

/** A capture for a member starting with `head`, or undefined when it must be spooled (not an ELF file with a section table). */
export function captureMember(head: Uint8Array, size: number): MemberCapture | undefined {
  const table = elfSectionTable(head, size);
  return table === undefined ? undefined : new MemberCapture(size, table);
}
