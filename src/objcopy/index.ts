/**
 * The two llvm-objcopy edits clang-offload-bundler makes to ELF objects (spec bundler.md §7), done in-process and
 * byte-identical to llvm-objcopy 19:
 *
 * - bundling: `--add-section=<name>=<file> --set-section-flags=<name>=readonly,exclude ...` (addSections);
 * - unbundling the host: `--regex --remove-section=__CLANG_OFFLOAD_BUNDLE__.*` (removeSections).
 *
 * Both read the whole object, rebuild it (./elf-object.ts, ./write.ts) and return the new bytes. Relocatable
 * objects (no program headers) of either class and byte order are supported; anything else is refused with
 * OBJCOPY_UNSUPPORTED, malformed input with OBJCOPY_MALFORMED and the offending offset.
 */
import { OffloadKitError } from "../engine/errors.js";
import { SHT_PROGBITS, readElfObject, unsupported, type ObjSection } from "./elf-object.js";
import { writeElfObject } from "./write.js";

export { readElfObject, type ElfObject } from "./elf-object.js";

export interface AddedSection {
  /** The section name (bytes as latin1 characters). */
  readonly name: string;
  readonly data: Uint8Array;
  /** A --set-section-flags value for it, e.g. "readonly,exclude"; without one the section's flags are 0. */
  readonly flags?: string;
}

const SHF_WRITE = 0x1n;
const SHF_ALLOC = 0x2n;
const SHF_EXECINSTR = 0x4n;
const SHF_MERGE = 0x10n;
const SHF_STRINGS = 0x20n;
const SHF_X86_64_LARGE = 0x10000000n;
const SHF_EXCLUDE = 0x80000000n;
const EM_X86_64 = 62;

/**
 * llvm-objcopy's --set-section-flags for a section it added (ObjcopyOptions.cpp parseSectionFlagSet,
 * ELFObjcopy.cpp getNewShfFlags): `readonly` leaves SHF_WRITE out, which every other set has.
 */
function sectionFlags(spec: string, machine: number): bigint {
  let flags = 0n;
  let readonly = false;
  for (const raw of spec.split(",")) {
    const name = raw.toLowerCase();
    switch (name) {
      case "alloc": flags |= SHF_ALLOC; break;
      case "readonly": readonly = true; break;
      case "code": flags |= SHF_EXECINSTR; break;
      case "merge": flags |= SHF_MERGE; break;
      case "strings": flags |= SHF_STRINGS; break;
      case "exclude": flags |= SHF_EXCLUDE; break;
      case "large":
        if (machine !== EM_X86_64) unsupported("the 'large' section flag is only supported on x86_64");
        flags |= SHF_X86_64_LARGE;
        break;
      case "load": case "noload": case "debug": case "data": case "rom": case "share": case "contents": break;
      default:
        throw new OffloadKitError("OBJCOPY_FLAGS", `unrecognized section flag '${raw}'. Flags supported for ELF: alloc, load, noload, readonly, exclude, debug, code, data, rom, share, contents, merge, strings, large`);
    }
  }
  if (!readonly) flags |= SHF_WRITE;
  return flags;
}

/** `llvm-objcopy --add-section=<name>=<file> [--set-section-flags=<name>=<flags>] ... -- input output`. */
export function addSections(input: Uint8Array, sections: readonly AddedSection[]): Uint8Array {
  const obj = readElfObject(input);
  for (const added of sections) {
    const section: ObjSection = {
      name: added.name, type: SHT_PROGBITS, flags: added.flags === undefined ? 0n : sectionFlags(added.flags, obj.machine),
      addr: 0n, size: added.data.length, link: 0, info: 0, align: 1n, entsize: 0n,
      originalOffset: Number.POSITIVE_INFINITY, inputIndex: 0, data: added.data,
    };
    obj.sections.push(section);
  }
  return writeElfObject(obj);
}

/** `llvm-objcopy --regex --remove-section=<pattern> -- input output`, the pattern given as a predicate on names. */
export function removeSections(input: Uint8Array, remove: (name: string) => boolean): Uint8Array {
  const obj = readElfObject(input);
  const kept = obj.sections.filter((s) => !remove(s.name));
  const keptIndices = new Set(kept.map((s) => s.inputIndex));
  obj.sections.splice(0, obj.sections.length, ...kept);
  // Symbols defined in a removed section go with it (SymbolTableSection::removeSectionReferences).
  const symbols = obj.symbols.filter((sym) => sym.section === undefined || keptIndices.has(sym.section));
  return writeElfObject(symbols.length === obj.symbols.length ? obj : { ...obj, symbols });
}

