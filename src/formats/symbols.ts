/**
 * Which symbols an archive symbol table lists for a member, as LLVM 19's archive writer decides
 * (`getSymbolicFile` + `getSymbols` + `isArchiveSymbol` in llvm/lib/Object/ArchiveWriter.cpp, file
 * kinds from `identify_magic` in llvm/lib/BinaryFormat/Magic.cpp and `SymbolicFile::isSymbolicFile`).
 *
 * - Not a symbolic file (plain data, bundles, archives, ...): no symbols, and the member does not count
 *   as an object (an archive of only such members has no symbol table).
 * - ELF (any e_type): the symbol table's global defined symbols (formats/elf.ts); a relocatable object
 *   with a `.llvm.lto` section is read as that bitcode instead.
 * - Bitcode: the irsymtab's global defined symbols (formats/bitcode.ts). A file LLVM cannot read is a
 *   warning and a blob (GNU archives), as the writer's forward-compatibility rule says.
 * - Mach-O, COFF, Wasm, XCOFF, GOFF members are symbolic to LLVM but not indexed here: an error.
 */
import { OffloadKitError } from "../engine/errors.js";
import { sliceSource } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { packSymbols } from "./archive.js";
import type { PackedSymbols } from "./archive.js";
import { BitcodeError, IrSymtabUnavailable, bitcodeArchiveSymbols, isBitcode } from "./bitcode.js";
import { ET_REL, elfArchiveSymbols, findEmbeddedBitcode, isElf, openElf } from "./elf.js";

export type MemberSymbols =
  /** Not a symbolic file. */
  | { readonly kind: "none" }
  /** A symbolic file (it counts as an object) and its archive symbols, possibly none. */
  | { readonly kind: "symbols"; readonly symbols: PackedSymbols }
  /** Bitcode LLVM could not read: a warning, and the member is stored as a blob. */
  | { readonly kind: "unreadable"; readonly message: string };

export type SymbolicKind = "bitcode" | "elf" | "other" | "none";

/** `identify_magic` narrowed to what `isSymbolicFile` (with an LLVMContext) accepts. */
export function symbolicKind(head: Uint8Array, size: number): SymbolicKind {
  if (size < 4 || head.length < 4) return "none";
  const [b0, b1] = head;
  const starts = (...bytes: number[]) => bytes.every((b, i) => head[i] === b);
  if (isBitcode(head)) return "bitcode";
  if (head[0] === 0x7f && isElf(head, size)) return "elf";
  switch (b0) {
    case 0x00:
      if (starts(0, 0, 0xff, 0xff)) {
        // Import libraries and bigobj COFF are symbolic; only CL's LTO objects (bigobj + ClGl UUID) are not.
        return size >= 32 && head.length >= 32 && isClGlObject(head) ? "none" : "other";
      }
      if (starts(0, 0, 0, 0, 0x20, 0, 0, 0, 0xff, 0xff, 0, 0, 0xff, 0xff, 0, 0)) return "none";
      if (b1 === 0) return "other";
      if (starts(0, 0x61, 0x73, 0x6d)) return "other";
      return "none";
    case 0x01:
      return b1 === 0xdf || b1 === 0xf7 ? "other" : "none";
    case 0x03:
      return starts(0x03, 0xf0, 0x00) ? "other" : "none";
    case 0xfe:
    case 0xce:
    case 0xcf:
      return machOType(head, size) !== 0 ? "other" : "none";
    case 0xf0:
    case 0x83:
    case 0x84:
    case 0x66:
    case 0x50:
      if (starts(0x50, 0xed, 0x55, 0xba)) return "none";
      return b1 === 0x01 || b1 === 0x02 ? "other" : "none";
    case 0x4c:
    case 0xc4:
      return b1 === 0x01 || b1 === 0x02 ? "other" : "none";
    case 0x90:
    case 0x68:
      return b1 === 0x02 ? "other" : "none";
    case 0x64:
      return b1 === 0x86 || b1 === 0xaa ? "other" : "none";
    case 0x41:
      return b1 === 0xa6 ? "other" : "none";
    case 0x4d:
      return isPeCoff(head) ? "other" : "none";
    default:
      return "none";
  }
}

const CLGL_UUID = [0x38, 0xfe, 0xb3, 0x0c, 0xa5, 0xd9, 0xab, 0x4d, 0xac, 0x9b, 0xd6, 0xb6, 0x22, 0x26, 0x53, 0xc2];

function isClGlObject(head: Uint8Array): boolean {
  return CLGL_UUID.every((b, i) => head[12 + i] === b);
}

/** Mach-O file type (1..12 are symbolic), 0 when not Mach-O or too short. */
function machOType(head: Uint8Array, size: number): number {
  const native = (head[0] === 0xfe && head[1] === 0xed && head[2] === 0xfa && (head[3] === 0xce || head[3] === 0xcf));
  const reverse = ((head[0] === 0xce || head[0] === 0xcf) && head[1] === 0xfa && head[2] === 0xed && head[3] === 0xfe);
  if (!native && !reverse) return 0;
  const is32 = native ? head[3] === 0xce : head[0] === 0xce;
  if (size < (is32 ? 28 : 32) || head.length < 16) return 0;
  // LLVM's own arithmetic (it shifts the middle byte by 12, not 16), kept for identical verdicts.
  const type = native
    ? (head[12] << 24) | (head[13] << 12) | (head[14] << 8) | head[15]
    : (head[15] << 24) | (head[14] << 12) | (head[13] << 8) | head[12];
  return type >= 1 && type <= 12 ? type : 0;
}

function isPeCoff(head: Uint8Array): boolean {
  if (head[0] !== 0x4d || head[1] !== 0x5a || head.length < 0x40) return false;
  const at = head[0x3c] | (head[0x3d] << 8) | (head[0x3e] << 16) | (head[0x3f] * 0x1000000);
  return at + 4 <= head.length && head[at] === 0x50 && head[at + 1] === 0x45 && head[at + 2] === 0 && head[at + 3] === 0;
}

function unsupported(what: string): OffloadKitError {
  return new OffloadKitError("UNSUPPORTED_SYMBOLS", `computing archive symbols for ${what} is not supported`);
}

function fromBitcode(source: ByteSource): MemberSymbols {
  try {
    return { kind: "symbols", symbols: bitcodeArchiveSymbols(source) };
  } catch (e) {
    if (e instanceof BitcodeError) return { kind: "unreadable", message: e.message };
    if (e instanceof IrSymtabUnavailable) throw unsupported(`bitcode without a usable IR symbol table (${e.message})`);
    throw e;
  }
}

/** The first bytes of a member, reused: the magic decides everything and is not kept. */
const headScratch = new Uint8Array(1024);

/**
 * What `getSymbolicFile` would make of a member, from its first bytes only: callers that would read a
 * whole payload to index it ask this first, so a member that is not symbolic costs one small read.
 */
export function memberSymbolicKind(source: ByteSource): SymbolicKind {
  const want = Math.min(source.size, headScratch.length);
  let got = 0;
  while (got < want) {
    const n = source.read(headScratch.subarray(got, want), got);
    if (n <= 0) break;
    got += n;
  }
  return symbolicKind(headScratch.subarray(0, got), source.size);
}

/**
 * The archive symbols of one member's bytes. Throws OffloadKitError where LLVM's writer fails (a
 * malformed ELF file) or where this reimplementation cannot follow it.
 */
export function archiveMemberSymbols(source: ByteSource): MemberSymbols {
  const kind = memberSymbolicKind(source);
  if (kind === "none") return { kind: "none" };
  if (kind === "other") throw unsupported("non-ELF object files (Mach-O, COFF, Wasm, XCOFF, GOFF)");
  if (kind === "bitcode") return fromBitcode(source);
  const elf = openElf(source);
  if (elf.header.type === ET_REL) {
    const lto = findEmbeddedBitcode(elf);
    if (lto !== undefined) {
      // Not the bitcode branch of getSymbolicFile: an unreadable embedded module is an error, not a warning.
      const symbols = fromBitcode(sliceSource(source, lto.offset, lto.size));
      if (symbols.kind === "unreadable") throw new OffloadKitError("BITCODE_MALFORMED", symbols.message);
      return symbols;
    }
  }
  return { kind: "symbols", symbols: packSymbols(elfArchiveSymbols(elf)) };
}
