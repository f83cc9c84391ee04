/**
 * Bundles kept in the sections of an ELF object: clang-offload-bundler's ObjectFileHandler (spec bundler.md §7),
 * used for `-type=o` (and archive members) whenever the host input, or the input being read, is an object file.
 *
 * - Bundling: each target's payload becomes a section `__CLANG_OFFLOAD_BUNDLE__<id>` with flags readonly,exclude,
 *   added to the host object in -targets order; the host's own section holds one 0x00 byte. LLVM runs
 *   llvm-objcopy for this; we make the same bytes with src/objcopy.
 * - Reading: those sections, in section order, are the entries. A section of exactly one 0x00 byte is the host
 *   entry; LLVM 19 hands out the object without the bundle sections for it (`llvm-objcopy --regex
 *   --remove-section=__CLANG_OFFLOAD_BUNDLE__.*`), which {@link hostObject} makes.
 *
 * ELF only: the other object formats LLVM opens (COFF, Mach-O, Wasm, XCOFF) are refused with UNSUPPORTED_OBJECT.
 * An ELF file LLVM cannot open falls back to the binary format, as CreateFileHandler does.
 */
import { OffloadKitError } from "../engine/errors.js";
import { readExact, readInto } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { ELF_BUNDLE_SECTION_PREFIX, listElfBundleEntries, openElf } from "../formats/elf.js";
import { OBJECT_SNIFF_SIZE, identifyObjectFile } from "../formats/object-file.js";
import { addSections, removeSections } from "../objcopy/index.js";
import type { IndexedEntry } from "./read.js";

/**
 * The entries of an object-file input, or undefined when the binary format handles it (not an object file, or
 * an ELF file LLVM's createBinary refuses).
 */
export function objectBundleEntries(source: ByteSource): IndexedEntry[] | undefined {
  // Asked once per archive member: the head goes through one reused buffer.
  const head = sniffScratch.subarray(0, Math.min(source.size, OBJECT_SNIFF_SIZE));
  readInto(source, head, 0);
  const format = identifyObjectFile(head);
  if (format === undefined) return undefined;
  if (format !== "elf") {
    throw new OffloadKitError("UNSUPPORTED_OBJECT",
      `bundles stored in ${format.toUpperCase()} object-file sections are not supported (offload-kit reads and writes them in ELF objects only)`);
  }
  let elf;
  try {
    elf = openElf(source);
  } catch {
    return undefined;
  }
  return listElfBundleEntries(elf);
}

const sniffScratch = new Uint8Array(OBJECT_SNIFF_SIZE);

/** Whether an object input's entry is the host's (one 0x00 byte). */
export function isObjectHostEntry(source: ByteSource, entry: IndexedEntry): boolean {
  return entry.size === 1 && readExact(source, entry.offset, 1)[0] === 0;
}

const isBundleSection = (name: string) => name.startsWith(ELF_BUNDLE_SECTION_PREFIX);

/** The host object of a fat object: the input without its bundle sections (what LLVM 19's objcopy run writes). */
export function hostObject(fatObject: Uint8Array): Uint8Array {
  return removeSections(fatObject, isBundleSection);
}

/** The host entry's payload section: one 0x00 byte. */
export const HOST_SECTION_CONTENT = new Uint8Array(1);

/** Adds one section per target to the host object, in -targets order (the host's holds one 0x00 byte). */
export function bundleObject(hostInput: Uint8Array, targets: readonly string[], hostIndex: number, payload: (index: number) => Uint8Array): Uint8Array {
  return addSections(hostInput, targets.map((id, i) => ({
    name: ELF_BUNDLE_SECTION_PREFIX + id,
    data: i === hostIndex ? HOST_SECTION_CONTENT : payload(i),
    flags: "readonly,exclude",
  })));
}

/** The error for an object handler without a host target (clang-offload-bundler 19 crashes with SIGSEGV here). */
export function noHostForObject(): OffloadKitError {
  return new OffloadKitError("OBJECT_WITHOUT_HOST",
    "bundling into an object file needs a host target (the first input is an object file and no host target is given)");
}

/** One argument as LLVM's `sys::printArg(OS, Arg, /*Quote=*\/true)` prints it. */
function quoted(arg: string): string {
  return `"${arg.replace(/["\\$]/g, (c) => `\\${c}`)}"`;
}

/** The llvm-objcopy command lines `-###` prints (to stderr, each ending in a newline). */
export function objcopyBundleCommand(targets: readonly string[], inputs: readonly string[], hostIndex: number, hostTemp: string, output: string): string {
  const args = ["llvm-objcopy"];
  targets.forEach((id, i) => {
    const name = ELF_BUNDLE_SECTION_PREFIX + id;
    args.push(`--add-section=${name}=${i === hostIndex ? hostTemp : inputs[i]}`, `--set-section-flags=${name}=readonly,exclude`);
  });
  args.push("--", inputs[hostIndex]!, output);
  return `${args.map(quoted).join(" ")}\n`;
}

export function objcopyHostCommand(input: string, temp: string): string {
  return `${["llvm-objcopy", "--regex", `--remove-section=${ELF_BUNDLE_SECTION_PREFIX}.*`, "--", input, temp].map(quoted).join(" ")}\n`;
}
