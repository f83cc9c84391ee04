/**
 * The ELF writer (src/objcopy/): llvm-objcopy's add-section and remove-section edits on any ELF input. An input
 * is either refused with our error or rewritten into an ELF file that reads back with the sections expected (the
 * input's plus the added ones; the input's without the bundle ones). Byte equality with llvm-objcopy on these
 * inputs is test/objcopy/objcopy-hostile-native.test.ts. (remove(add(x)) = remove(x) does not hold, for
 * llvm-objcopy either: sections sharing an offset can change order.)
 */
import { ELF_BUNDLE_SECTION_PREFIX } from "../../../../src/formats/elf.js";
import { MAX_PADDING } from "../../../../src/objcopy/write.js";
import { addSections, readElfObject, removeSections } from "../../../../src/objcopy/index.js";
import type { FuzzTarget } from "../target.js";
import { elfSample } from "./elf.js";

const isBundle = (name: string) => name.startsWith(ELF_BUNDLE_SECTION_PREFIX);

function added(input: Uint8Array) {
  return [
    { name: `${ELF_BUNDLE_SECTION_PREFIX}host-x86_64-unknown-linux-gnu-`, data: Uint8Array.of(0), flags: "readonly,exclude" },
    { name: `${ELF_BUNDLE_SECTION_PREFIX}hip-amdgcn-amd-amdhsa--gfx906`, data: input.subarray(0, 32), flags: "readonly,exclude" },
  ];
}

function describe(bytes: Uint8Array) {
  const obj = readElfObject(bytes);
  return { length: bytes.length, sections: obj.sections.map((s) => [s.name, s.type, s.size, s.originalOffset]), symbols: obj.symbols.length };
}

export const objcopyTarget: FuzzTarget = {
  name: "objcopy",
  about: "ELF writer: addSections / removeSections (llvm-objcopy --add-section, --remove-section) and reading the result back",
  engines: false,
  sources: false,
  magic: Uint8Array.of(0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0),
  dictionary: [ELF_BUNDLE_SECTION_PREFIX, ".symtab", ".strtab", ".shstrtab", ".rela.text", ".group", "\0"],
  generate: elfSample,
  run(input) {
    const withBundles = addSections(input, added(input));
    return { added: describe(withBundles), removed: describe(removeSections(input, isBundle)) };
  },
  roundTrip(input) {
    const names = readElfObject(input).sections.map((s) => s.name);
    const addedNames = readElfObject(addSections(input, added(input))).sections.map((s) => s.name);
    const expected = [...names, ...added(input).map((s) => s.name)];
    if (JSON.stringify(addedNames) !== JSON.stringify(expected)) return "the added sections are not the input's plus the new ones, in order";
    const kept = readElfObject(removeSections(input, isBundle)).sections.map((s) => s.name);
    if (JSON.stringify(kept) !== JSON.stringify(names.filter((n) => !isBundle(n)))) return "removing the bundle sections removed something else";
    return undefined;
  },
  // The output is the input rebuilt, plus at most MAX_PADDING bytes of alignment padding and the added sections.
  allocBudget: (length) => 4 * length + MAX_PADDING + 4096,
};
