/**
 * Linked ELF executables and shared libraries (`.hip_fatbin` with one bundle or CCOB per translation
 * unit, reached through `__hip_fatbin_wrapper` pointers). Editing them moves bytes under a loaded
 * image, which belongs to the ELF editor (src/elf-edit/, built separately); until it is wired in here,
 * such files are recognised and refused with a clear error rather than mistaken for something else.
 * The container table (./containers.ts) calls this entry exactly as it calls every other one, so wiring the
 * editor in is filling in `planLinkedElf` (from a source: the 1.3 GB libraries are never read whole) and
 * `editLinkedElf` (bytes in memory) below.
 *
 * Recognition: an ELF file whose e_type is ET_EXEC or ET_DYN and which has program headers (e_phnum at
 * byte 44 of ELF32 headers, 56 of ELF64 ones; gABI "ELF Header"). Relocatable objects (ET_REL, no program
 * headers) are fat objects or `.llvm.offloading` holders, handled elsewhere.
 */
import { OffloadKitError } from "../engine/errors.js";
import { isElf } from "../formats/elf.js";
import type { ByteSource } from "../engine/source.js";
import type { CompressContext } from "./containers.js";
import { placeText } from "./outcome.js";
import type { PruneContext } from "./outcome.js";
import type { OutputPlan } from "./plan.js";

const ET_EXEC = 2;
const ET_DYN = 3;

export function isLinkedElf(head: Uint8Array): boolean {
  if (!isElf(head) || head.length < 64) return false;
  const is64 = head[4] === 2;
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const little = head[5] !== 2;
  const type = view.getUint16(16, little);
  const phnum = view.getUint16(is64 ? 56 : 44, little);
  return (type === ET_EXEC || type === ET_DYN) && phnum > 0;
}

function notYet(name: string, where: string): never {
  throw new OffloadKitError("LINKED_ELF_NOT_YET",
    `${placeText(name, where)}: linked ELF files: not yet (executables and shared libraries are edited by the ELF editor, which this build does not include)`,
    { offset: 0, field: "e_type" });
}

export type LinkedElfOperation = "prune" | "compress" | "decompress";

/**
 * What the editor is given: for prune, the PruneContext (selection, allowEmpty, codecs; record each entry's
 * fate with `selectEntries` from ./outcome.ts, which also applies the empty-bundle rule); for compress and
 * decompress, the CompressContext (version, level, codecs).
 */
export type LinkedElfContext = (PruneContext | CompressContext) & { readonly name: string; readonly notes: string[] };

/**
 * The edit of a linked ELF file, planned from the source (only its first bytes have been read): the hook
 * the ELF editor fills in. Until then it refuses, before anything else is read.
 */
export function planLinkedElf(_operation: LinkedElfOperation, _source: ByteSource, ctx: LinkedElfContext, where: string): OutputPlan {
  return notYet(ctx.name, where);
}

/** The same over bytes already in memory (archive members, callers holding the file). */
export function editLinkedElf(_operation: LinkedElfOperation, _bytes: Uint8Array, ctx: LinkedElfContext, where: string): Uint8Array {
  return notYet(ctx.name, where);
}
