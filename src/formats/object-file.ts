/**
 * Recognising object files by their first bytes, the way clang-offload-bundler decides (for -type=o
 * and members of -type=a) between its object handler (bundles in sections) and the binary format:
 * `createBinary(...)` succeeding with an `ObjectFile` (llvm/lib/BinaryFormat/Magic.cpp,
 * llvm/lib/Object/Binary.cpp). Archives, universal Mach-O and bitcode are binaries but not object
 * files, so the binary format applies to them.
 */

export type ObjectFormat = "elf" | "macho" | "coff" | "wasm" | "xcoff";

/** Bytes needed to decide. */
export const OBJECT_SNIFF_SIZE = 64;

const COFF_MACHINES = new Set([0x014c, 0x8664, 0x01c0, 0x01c4, 0xaa64, 0xa641, 0xa64e, 0x0200, 0x01f0, 0x01f1, 0x0166, 0x0169]);

export function identifyObjectFile(head: Uint8Array): ObjectFormat | undefined {
  if (head.length >= 52 && head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c && head[3] === 0x46) {
    const elfClass = head[4];
    const data = head[5];
    if ((elfClass === 1 || (elfClass === 2 && head.length >= 64)) && (data === 1 || data === 2)) return "elf";
    return undefined;
  }
  if (head.length >= 28) {
    const be = (head[0] << 24) | (head[1] << 16) | (head[2] << 8) | head[3];
    const word = be >>> 0;
    if (word === 0xfeedface || word === 0xcefaedfe || word === 0xfeedfacf || word === 0xcffaedfe) return "macho";
  }
  if (head.length >= 8 && head[0] === 0 && head[1] === 0x61 && head[2] === 0x73 && head[3] === 0x6d) return "wasm";
  if (head.length >= 20) {
    const machine = head[0] | (head[1] << 8);
    if (COFF_MACHINES.has(machine)) return "coff";
    const xcoff = (head[0] << 8) | head[1];
    if (xcoff === 0x01df || xcoff === 0x01f7) return "xcoff";
  }
  return undefined;
}
