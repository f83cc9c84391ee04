/**
 * A minimal linked ELF64 executable holding fat binaries, built byte by byte for tests that need no
 * compiler: a read-only PT_LOAD with .hip_fatbin (bundles 4096-aligned) followed by `.tail` (so the
 * segment must be split), and a writable PT_LOAD with .hipFatBinSegment (wrappers holding absolute
 * addresses, as in a non-PIE executable). Then `.shstrtab` and the section header table.
 */
import { SHF_ALLOC, SHT_NOBITS, openLinkedElf } from "../../src/elf-edit/elf64.js";
import { bytesSource } from "../../src/engine/source.js";
import { writeBinaryBundle } from "../../src/formats/bundle.js";

export const BASE = 0x400000;
const PAGE = 0x1000;

export interface Synthetic {
  readonly bytes: Uint8Array;
  readonly fatbinOffset: number;
  readonly wrapperOffset: number;
  readonly tailOffset: number;
  readonly tailAddress: number;
  readonly bundles: readonly Uint8Array[];
}

function align(value: number, to: number): number {
  return Math.ceil(value / to) * to;
}

/** `entrySizes[i]` lists the payload sizes of bundle i's device entries (IDs gfx906, gfx90a, gfx1100, ...). */
export function syntheticExecutable(entrySizes: readonly (readonly number[])[], extraPhdrs = 0): Synthetic {
  const archs = ["gfx906", "gfx90a", "gfx1100", "gfx942"];
  const bundles = entrySizes.map((sizes, b) =>
    writeBinaryBundle(
      [
        { id: "host-x86_64-unknown-linux-gnu-", data: new Uint8Array(0) },
        ...sizes.map((size, i) => ({ id: `hipv4-amdgcn-amd-amdhsa--${archs[i]}`, data: new Uint8Array(size).fill(0x11 * (b + 1) + i) })),
      ],
      4096,
    ),
  );
  const phnum = 2 + extraPhdrs;
  const fatbinOffset = align(64 + phnum * 56, PAGE);
  const starts: number[] = [];
  let at = fatbinOffset;
  for (const bundle of bundles) {
    at = align(at, 4096);
    starts.push(at);
    at += bundle.length;
  }
  const fatbinSize = at - fatbinOffset;
  const tailOffset = align(at, 8);
  const tail = new Uint8Array(200).map((_, i) => (i * 7 + 3) & 0xff);
  const roEnd = tailOffset + tail.length;
  const wrapperOffset = align(roEnd, PAGE);
  const wrappersSize = bundles.length * 24;
  const names = "\0.hip_fatbin\0.tail\0.hipFatBinSegment\0.shstrtab\0";
  const shstrOffset = wrapperOffset + wrappersSize;
  const shoff = align(shstrOffset + names.length, 8);
  const size = shoff + 5 * 64;
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  const u64 = (p: number, v: number) => view.setBigUint64(p, BigInt(v), true);
  bytes.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1], 0);
  view.setUint16(16, 2, true); // ET_EXEC
  view.setUint16(18, 62, true); // x86-64
  view.setUint32(20, 1, true);
  u64(32, 64);
  u64(40, shoff);
  view.setUint16(52, 64, true);
  view.setUint16(54, 56, true);
  view.setUint16(56, phnum, true);
  view.setUint16(58, 64, true);
  view.setUint16(60, 5, true);
  view.setUint16(62, 4, true);
  const phdr = (i: number, type: number, flags: number, offset: number, filesz: number, memsz: number) => {
    const p = 64 + i * 56;
    view.setUint32(p, type, true);
    view.setUint32(p + 4, flags, true);
    u64(p + 8, offset);
    u64(p + 16, BASE + offset);
    u64(p + 24, BASE + offset);
    u64(p + 32, filesz);
    u64(p + 40, memsz);
    u64(p + 48, PAGE);
  };
  phdr(0, 1, 4, 0, roEnd, roEnd);
  phdr(1, 1, 6, wrapperOffset, wrappersSize, wrappersSize + 64);
  bundles.forEach((bundle, i) => {
    bytes.set(bundle, starts[i]);
    const w = wrapperOffset + i * 24;
    view.setUint32(w, 0x48495046, true);
    view.setUint32(w + 4, 1, true);
    u64(w + 8, BASE + starts[i]);
  });
  bytes.set(tail, tailOffset);
  for (let i = 0; i < names.length; i++) bytes[shstrOffset + i] = names.charCodeAt(i);
  const shdr = (i: number, name: string, type: number, flags: number, offset: number, length: number, alignment: number) => {
    const p = shoff + i * 64;
    view.setUint32(p, names.indexOf(`\0${name}\0`) + 1, true);
    view.setUint32(p + 4, type, true);
    u64(p + 8, flags);
    u64(p + 16, flags & 2 ? BASE + offset : 0);
    u64(p + 24, offset);
    u64(p + 32, length);
    u64(p + 48, alignment);
  };
  shdr(1, ".hip_fatbin", 1, 2, fatbinOffset, fatbinSize, 4096);
  shdr(2, ".tail", 1, 2, tailOffset, tail.length, 8);
  shdr(3, ".hipFatBinSegment", 1, 3, wrapperOffset, wrappersSize, 8);
  shdr(4, ".shstrtab", 3, 0, shstrOffset, names.length, 1);
  return { bytes, fatbinOffset, wrapperOffset, tailOffset, tailAddress: BASE + tailOffset, bundles };
}

/** The bytes a loader maps at [vaddr, vaddr + length), through the file's PT_LOAD headers. */
export function loadedBytes(file: Uint8Array, vaddr: number, length: number): Uint8Array | undefined {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const phoff = Number(view.getBigUint64(32, true));
  const phnum = view.getUint16(56, true);
  for (let i = 0; i < phnum; i++) {
    const p = phoff + i * 56;
    if (view.getUint32(p, true) !== 1) continue;
    const offset = Number(view.getBigUint64(p + 8, true));
    const start = Number(view.getBigUint64(p + 16, true));
    const filesz = Number(view.getBigUint64(p + 32, true));
    if (vaddr >= start && vaddr + length <= start + filesz) return file.subarray(offset + vaddr - start, offset + vaddr - start + length);
  }
  return undefined;
}

/**
 * The allocated sections (but `except`) whose bytes a loader maps differently in `output` than in
 * `original`: "everything else loads at the same addresses with the same bytes" is an empty list.
 */
export function changedLoadedSections(original: Uint8Array, output: Uint8Array, except: readonly string[]): string[] {
  const elf = openLinkedElf(bytesSource(original));
  const changed: string[] = [];
  for (const s of elf.sections) {
    if ((s.flags & SHF_ALLOC) === 0 || s.type === SHT_NOBITS || s.size === 0 || except.includes(s.name)) continue;
    const before = loadedBytes(original, s.addr, s.size);
    const after = loadedBytes(output, s.addr, s.size);
    if (before === undefined || after === undefined || Buffer.compare(before, after) !== 0) changed.push(s.name);
  }
  return changed;
}
