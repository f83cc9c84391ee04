/**
 * ELF section reader (src/formats/elf.ts): header, section table (e_shnum and e_shstrndx escapes),
 * section names, bundle sections, `.llvm.lto`, archive symbols; and an archive member's bundle entries
 * (memberBundleEntries), which falls back to the binary bundle reader on both engines. 32/64-bit, LE/BE.
 */
import { bytesSource } from "../../../../src/engine/source.js";
import { elfArchiveSymbols, findEmbeddedBitcode, listElfBundleEntries, openElf, sectionNames } from "../../../../src/formats/elf.js";
import { archiveMemberSymbols } from "../../../../src/formats/symbols.js";
import { memberBundleEntries } from "../../../../src/bundler/node/archive.js";
import { attempt } from "../plain.js";
import type { Rand } from "../rand.js";
import type { Field, Sample } from "../sample.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";
import { randomId } from "./bundle.js";

interface Section {
  name: string;
  type: number;
  data: Uint8Array;
  link?: number;
  entsize?: number;
}

class Out {
  bytes: number[] = [];
  constructor(readonly is64: boolean, readonly little: boolean) {}
  int(value: number, size: number): void {
    let v = BigInt(value);
    const b: number[] = [];
    for (let k = 0; k < size; k++) {
      b.push(Number(v & 0xffn));
      v >>= 8n;
    }
    this.bytes.push(...(this.little ? b : b.reverse()));
  }
  word(value: number): void {
    this.int(value, this.is64 ? 8 : 4);
  }
  align(n: number): void {
    while (this.bytes.length % n) this.bytes.push(0);
  }
}

/** A relocatable ELF file written from scratch, with the positions of every header field. */
export function elfSample(r: Rand): Sample {
  const is64 = r.bool(0.7);
  const little = r.bool(0.8);
  const machine = r.pick([62, 224, 40, 183, 243, 252, 3]);
  const strtab: string[] = [""];
  const symbols: { name: number; info: number; shndx: number }[] = [{ name: 0, info: 0, shndx: 0 }];
  const addString = (s: string) => {
    const at = strtab.join("\0").length + 1;
    strtab.push(s);
    return at;
  };
  for (let i = r.int(6); i > 0; i--) {
    symbols.push({ name: addString(r.pick(["main", "$d", "$x.1", "kernel", ".L0 ", "", "g"]) + r.int(9)), info: r.pick([0x10, 0x12, 0x11, 0x03, 0x04, 0x00, 0x22]), shndx: r.pick([0, 1, 2, 0xfff1]) });
  }
  const sections: Section[] = [{ name: "", type: 0, data: new Uint8Array(0) }];
  for (let i = r.int(4); i > 0; i--) {
    sections.push({ name: `__CLANG_OFFLOAD_BUNDLE__${randomId(r).replace(/\0/g, "")}`, type: 1, data: r.bool(0.3) ? Uint8Array.of(0) : r.bytes(r.size(40)) });
  }
  if (r.bool(0.3)) sections.push({ name: ".llvm.lto", type: 1, data: r.bytes(r.size(24)) });
  if (r.bool(0.3)) sections.push({ name: ".bss", type: 8, data: new Uint8Array(0) });
  const strtabIndex = sections.length;
  sections.push({ name: ".strtab", type: 3, data: new TextEncoder().encode(`${strtab.join("\0")}\0`) });
  const symOut = new Out(is64, little);
  for (const s of symbols) {
    if (is64) {
      symOut.int(s.name, 4); symOut.int(s.info, 1); symOut.int(0, 1); symOut.int(s.shndx, 2); symOut.int(0, 8); symOut.int(0, 8);
    } else {
      symOut.int(s.name, 4); symOut.int(0, 4); symOut.int(0, 4); symOut.int(s.info, 1); symOut.int(0, 1); symOut.int(s.shndx, 2);
    }
  }
  if (r.bool(0.8)) sections.push({ name: ".symtab", type: 2, data: Uint8Array.from(symOut.bytes), link: strtabIndex, entsize: is64 ? 24 : 16 });
  const shstrIndex = sections.length;
  sections.push({ name: ".shstrtab", type: 3, data: new Uint8Array(0) });
  let names = "\0";
  const nameOffsets = sections.map((s) => {
    if (s.name === "") return 0;
    const at = names.length;
    names += `${s.name}\0`;
    return at;
  });
  sections[shstrIndex]!.data = Uint8Array.from(names, (c) => c.charCodeAt(0) & 0xff);

  const out = new Out(is64, little);
  const fields: Field[] = [];
  const f = (size: number, kind: Field["kind"]) => fields.push({ at: out.bytes.length, size, kind, bigEndian: !little });
  out.bytes.push(0x7f, 0x45, 0x4c, 0x46, is64 ? 2 : 1, little ? 1 : 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  fields.push({ at: 4, size: 1, kind: "kind" }, { at: 5, size: 1, kind: "kind" });
  const escapeCount = r.bool(0.1);
  const escapeNames = r.bool(0.1);
  f(2, "kind"); out.int(1, 2); // e_type
  f(2, "kind"); out.int(machine, 2);
  out.int(1, 4); out.word(0); out.word(0);
  const shoffAt = out.bytes.length;
  f(is64 ? 8 : 4, "offset"); out.word(0);
  out.int(0, 4); out.int(is64 ? 64 : 52, 2); out.int(0, 2); out.int(0, 2);
  f(2, "size"); out.int(is64 ? 64 : 40, 2);
  f(2, "count"); out.int(escapeCount ? 0 : sections.length, 2);
  f(2, "count"); out.int(escapeNames ? 0xffff : shstrIndex, 2);
  const offsets = sections.map((s) => {
    out.align(8);
    const at = out.bytes.length;
    if (s.type !== 8) out.bytes.push(...s.data);
    return at;
  });
  out.align(8);
  const shoff = out.bytes.length;
  const patch = new Out(is64, little);
  patch.word(shoff);
  out.bytes.splice(shoffAt, patch.bytes.length, ...patch.bytes);
  sections.forEach((s, i) => {
    f(4, "offset"); out.int(nameOffsets[i]!, 4);
    f(4, "kind"); out.int(s.type, 4);
    out.word(0); out.word(0);
    f(is64 ? 8 : 4, "offset"); out.word(i === 0 ? 0 : offsets[i]!);
    f(is64 ? 8 : 4, "size"); out.word(i === 0 ? (escapeCount ? sections.length : 0) : s.data.length);
    f(4, "count"); out.int(i === 0 && escapeNames ? shstrIndex : s.link ?? 0, 4);
    out.int(0, 4); out.word(1);
    f(is64 ? 8 : 4, "size"); out.word(s.entsize ?? 0);
  });
  return { bytes: Uint8Array.from(out.bytes), fields };
}

export const elfTarget: FuzzTarget = {
  name: "elf",
  about: "ELF section reader: openElf, sectionNames, bundle sections, .llvm.lto, archive symbols, memberBundleEntries (both engines)",
  engines: true,
  sources: true,
  magic: Uint8Array.of(0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0),
  dictionary: ["__CLANG_OFFLOAD_BUNDLE__", ".llvm.lto", ".symtab", ".strtab", "\0"],
  generate: elfSample,
  run(input: Uint8Array, ctx: RunContext) {
    const source = () => (ctx.chunked ? chunkedSource(input) : bytesSource(input));
    const elf = openElf(source());
    return {
      header: elf.header,
      sections: elf.sections,
      names: attempt(() => sectionNames(elf)),
      bundles: attempt(() => listElfBundleEntries(elf)),
      lto: attempt(() => findEmbeddedBitcode(elf)),
      symbols: attempt(() => elfArchiveSymbols(elf)),
      member: attempt(() => archiveMemberSymbols(source())),
      entries: attempt(() => memberBundleEntries(source(), ctx.engine)),
    };
  },
};
