/**
 * The text `llvm-objdump --offloading` prints (llvm/tools/llvm-objdump/OffloadDump.cpp, release 19), for
 * `offload-kit ls --objdump`: for an object file a blank line and the `<file>:\tfile format <name>` line of
 * llvm-objdump itself (ELFObjectFile::getFileFormatName), then for every image
 *
 *     \nOFFLOADING IMAGE [<n>]:\nkind            <kind>\narch            <arch>\ntriple          <triple>\nproducer        <kind name>\n
 *
 * with each label left-justified in 16 columns, `<n>` counting across the input. Browser-safe.
 */
import type { ElfHeader } from "../formats/elf.js";
import { getOffloadKindName, objdumpImageKindName } from "../formats/offload-binary.js";
import type { LlvmMajor, OffloadImage } from "../formats/offload-binary.js";

const ELF32: Record<number, string | [string, string]> = {
  2: "elf32-sparc", 3: "elf32-i386", 4: "elf32-m68k", 6: "elf32-iamcu", 8: "elf32-mips", 18: "elf32-sparc",
  20: ["elf32-powerpcle", "elf32-powerpc"], 40: ["elf32-littlearm", "elf32-bigarm"], 62: "elf32-x86-64", 83: "elf32-avr",
  94: "elf32-xtensa", 105: "elf32-msp430", 164: "elf32-hexagon", 224: "elf32-amdgpu", 243: "elf32-littleriscv",
  244: "elf32-lanai", 252: "elf32-csky", 258: "elf32-loongarch",
};

const ELF64: Record<number, string | [string, string]> = {
  3: "elf64-i386", 8: "elf64-mips", 21: ["elf64-powerpcle", "elf64-powerpc"], 22: "elf64-s390", 43: "elf64-sparc",
  62: "elf64-x86-64", 183: ["elf64-littleaarch64", "elf64-bigaarch64"], 224: "elf64-amdgpu", 243: "elf64-littleriscv",
  247: "elf64-bpf", 251: "elf64-ve", 258: "elf64-loongarch",
};

/** `ELFObjectFile::getFileFormatName`: "elf64-x86-64", "elf32-littlearm", ... */
export function elfFileFormatName(header: ElfHeader): string {
  const table = header.is64 ? ELF64 : ELF32;
  const name = table[header.machine];
  if (name === undefined) return header.is64 ? "elf64-unknown" : "elf32-unknown";
  return typeof name === "string" ? name : name[header.littleEndian ? 0 : 1];
}

/** One image block, as printBinary writes it. */
export function objdumpImageBlock(image: OffloadImage, index: number, llvm: LlvmMajor = 19): string {
  const row = (label: string, value: string) => `${label.padEnd(16)}${value}\n`;
  return (
    `\nOFFLOADING IMAGE [${index}]:\n` +
    row("kind", objdumpImageKindName(image.imageKind)) +
    row("arch", image.arch) +
    row("triple", image.triple) +
    row("producer", getOffloadKindName(image.offloadKind, llvm))
  );
}

/** Everything llvm-objdump --offloading prints for one input file (an ELF object or raw offload binaries). */
export function objdumpOffloading(path: string, images: readonly OffloadImage[], elf?: ElfHeader, llvm: LlvmMajor = 19): string {
  const head = elf === undefined ? "" : `\n${path}:\tfile format ${elfFileFormatName(elf)}\n`;
  return head + images.map((image, i) => objdumpImageBlock(image, i, llvm)).join("");
}
