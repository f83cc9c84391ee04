/**
 * Code size per kernel: the `st_size` of the kernel's STT_FUNC symbol (`<name>`, beside the `<name>.kd`
 * descriptor object; code object v2's STT_AMDGPU_HSA_KERNEL `<name>`), from the code object's `.symtab`, or `.dynsym` when it was stripped. What
 * `llvm-readelf -s` prints as Size. Read through src/formats/elf.ts (section table bounded by the file) and
 * one positioned read per table.
 */
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { openElf, sectionRange } from "../formats/elf.js";
import { latin1Decode } from "../formats/bytes.js";

const SHT_SYMTAB = 2;
const SHT_DYNSYM = 11;
const STT_FUNC = 2;
/** Code object v2's kernel symbols (llvm/include/llvm/BinaryFormat/ELF.h STT_AMDGPU_HSA_KERNEL). */
const STT_AMDGPU_HSA_KERNEL = 10;
const SYMBOL_SIZE = 24;

/** Function symbols by name and their sizes in bytes. */
export function functionSizes(source: ByteSource): Map<string, number> {
  const elf = openElf(source);
  const sizes = new Map<string, number>();
  const table = elf.sections.find((s) => s.type === SHT_SYMTAB) ?? elf.sections.find((s) => s.type === SHT_DYNSYM);
  if (table === undefined || !elf.header.is64 || !elf.header.littleEndian || table.link >= elf.sections.length) return sizes;
  const range = sectionRange(elf, table);
  const strings = sectionRange(elf, elf.sections[table.link]!);
  const bytes = readExact(source, range.offset, range.size - (range.size % SYMBOL_SIZE));
  const names = readExact(source, strings.offset, strings.size);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = SYMBOL_SIZE; at + SYMBOL_SIZE <= bytes.length; at += SYMBOL_SIZE) {
    const type = bytes[at + 4]! & 0xf;
    if (type !== STT_FUNC && type !== STT_AMDGPU_HSA_KERNEL) continue;
    const nameAt = view.getUint32(at, true);
    if (nameAt >= names.length) continue;
    const end = names.indexOf(0, nameAt);
    const name = latin1Decode(names.subarray(nameAt, end < 0 ? names.length : end));
    const size = view.getUint32(at + 16, true) + view.getUint32(at + 20, true) * 4294967296;
    sizes.set(name, size);
  }
  return sizes;
}
