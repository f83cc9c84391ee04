/**
 * A relocatable HIP object's wrapper relocations, checked as the linker will resolve them: every RELA entry
 * whose symbol is defined in `.hip_fatbin` must point (symbol value + addend) at the start of a
 * clang-offload-bundle or CCOB there, or the linked program hands `__hipRegisterFatBinary` garbage. The
 * locator walks the section's bundles without the relocations, so this is what notices a bundle that moved
 * without its relocation. ELF64 little-endian only (what src/prune/relocatable.ts is used on); anything
 * it cannot read is left to the other checks.
 */
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import type { Finding } from "./findings.js";
import { hex } from "./findings.js";

const ET_REL = 1;
const SHT_SYMTAB = 2;
const SHT_RELA = 4;
const BUNDLE_MAGIC = "__CLANG_OFFLOAD_BUNDLE__";
const CCOB_MAGIC = "CCOB";

interface Section { readonly name: string; readonly type: number; readonly offset: number; readonly size: number; readonly link: number }

function text(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += String.fromCharCode(b);
  return out;
}

/** Findings for `source` when it is an ELF64 LE relocatable object with `.hip_fatbin`; none otherwise. */
export function checkFatbinRelocations(source: ByteSource): Finding[] {
  if (source.size < 64) return [];
  const ehdr = readExact(source, 0, 64);
  const h = new DataView(ehdr.buffer, ehdr.byteOffset, 64);
  if (h.getUint32(0, false) !== 0x7f454c46 || ehdr[4] !== 2 || ehdr[5] !== 1 || h.getUint16(16, true) !== ET_REL) return [];
  const shoff = Number(h.getBigUint64(40, true));
  const shnum = h.getUint16(60, true);
  const shstrndx = h.getUint16(62, true);
  if (shnum === 0 || shoff + shnum * 64 > source.size || shstrndx >= shnum) return [];
  const table = readExact(source, shoff, shnum * 64);
  const t = new DataView(table.buffer, table.byteOffset, table.byteLength);
  const raw = Array.from({ length: shnum }, (_, i) => ({
    name: t.getUint32(i * 64, true), type: t.getUint32(i * 64 + 4, true), offset: Number(t.getBigUint64(i * 64 + 24, true)),
    size: Number(t.getBigUint64(i * 64 + 32, true)), link: t.getUint32(i * 64 + 40, true),
  }));
  if (raw.some((s) => s.type !== 8 && s.offset + s.size > source.size)) return [];
  const names = raw[shstrndx]!;
  const strings = readExact(source, names.offset, names.size);
  const sections: Section[] = raw.map((s) => {
    const end = strings.indexOf(0, s.name);
    return { ...s, name: s.name < strings.length && end >= 0 ? text(strings.subarray(s.name, end)) : "" };
  });
  const fatbin = sections.findIndex((s) => s.name === ".hip_fatbin");
  const symtab = sections.findIndex((s) => s.type === SHT_SYMTAB);
  if (fatbin < 0 || symtab < 0) return [];
  const data = readExact(source, sections[fatbin]!.offset, sections[fatbin]!.size);
  const symbols = readExact(source, sections[symtab]!.offset, sections[symtab]!.size);
  const sv = new DataView(symbols.buffer, symbols.byteOffset, symbols.byteLength);
  const findings: Finding[] = [];
  for (const [index, rela] of sections.entries()) {
    if (rela.type !== SHT_RELA || rela.link !== symtab) continue;
    const bytes = readExact(source, rela.offset, rela.size - (rela.size % 24));
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let at = 0; at + 24 <= bytes.length; at += 24) {
      const symbol = Number(v.getBigUint64(at + 8, true) >> 32n);
      if ((symbol + 1) * 24 > symbols.length || sv.getUint16(symbol * 24 + 6, true) !== fatbin) continue;
      const target = Number(sv.getBigUint64(symbol * 24 + 8, true) + v.getBigInt64(at + 16, true));
      const head = target >= 0 && target < data.length ? text(data.subarray(target, target + BUNDLE_MAGIC.length)) : "";
      if (head.startsWith(BUNDLE_MAGIC) || head.startsWith(CCOB_MAGIC)) continue;
      findings.push({
        code: "RELOCATION_NOT_AT_BUNDLE", field: "r_addend", offset: rela.offset + at + 16, subject: `section ${rela.name} entry ${at / 24}`,
        message: `${rela.name} (section ${index}) entry ${at / 24} points to .hip_fatbin offset ${hex(target)}, where no offload bundle or CCOB starts`,
      });
    }
  }
  return findings;
}
