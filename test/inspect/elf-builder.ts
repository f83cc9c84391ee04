/**
 * A minimal ELF64 little-endian writer for tests: a header, the given sections' bytes (each at its
 * alignment), a section-name string table and the section header table. Enough for readers of the
 * section table; nothing runs.
 */
export interface TestSection {
  readonly name: string;
  readonly data: Uint8Array;
  /** SHT_PROGBITS (1) unless given. */
  readonly type?: number;
  readonly align?: number;
}

const SHT_STRTAB = 3;

function alignUp(value: number, align: number): number {
  return Math.ceil(value / align) * align;
}

export function buildElf64(sections: readonly TestSection[], options: { type?: number } = {}): Uint8Array {
  const names = ["", ...sections.map((s) => s.name), ".shstrtab"];
  const nameOffsets: number[] = [];
  let strtab = "";
  for (const name of names) {
    nameOffsets.push(strtab.length);
    strtab += `${name}\0`;
  }
  const strtabBytes = new TextEncoder().encode(strtab);
  const all = [...sections.map((s) => ({ ...s, type: s.type ?? 1, align: s.align ?? 1 })), { name: ".shstrtab", data: strtabBytes, type: SHT_STRTAB, align: 1 }];
  let at = 64;
  const offsets: number[] = [];
  for (const s of all) {
    at = alignUp(at, s.align);
    offsets.push(at);
    at += s.data.length;
  }
  const shoff = alignUp(at, 8);
  const count = all.length + 1;
  const out = new Uint8Array(shoff + count * 64);
  const view = new DataView(out.buffer);
  out.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1], 0);
  view.setUint16(16, options.type ?? 3, true);
  view.setUint16(18, 62, true);
  view.setUint32(20, 1, true);
  view.setBigUint64(40, BigInt(shoff), true);
  view.setUint16(52, 64, true);
  view.setUint16(58, 64, true);
  view.setUint16(60, count, true);
  view.setUint16(62, count - 1, true);
  all.forEach((s, i) => {
    out.set(s.data, offsets[i]!);
    const h = shoff + (i + 1) * 64;
    view.setUint32(h, nameOffsets[i + 1]!, true);
    view.setUint32(h + 4, s.type, true);
    view.setBigUint64(h + 24, BigInt(offsets[i]!), true);
    view.setBigUint64(h + 32, BigInt(s.data.length), true);
    view.setBigUint64(h + 48, BigInt(s.align), true);
  });
  return out;
}

/** Pads `parts` to 4096 boundaries, as the linker lays out `.hip_fatbin`. */
export function fatbin(parts: readonly Uint8Array[]): { bytes: Uint8Array; offsets: number[] } {
  const offsets: number[] = [];
  let size = 0;
  for (const p of parts) {
    size = Math.ceil(size / 4096) * 4096;
    offsets.push(size);
    size += p.length;
  }
  const bytes = new Uint8Array(size);
  parts.forEach((p, i) => bytes.set(p, offsets[i]!));
  return { bytes, offsets };
}
