/**
 * Which of a file's bundles are fat binaries (what the HIP runtime registers one by one, each of which must
 * hold code the device can load), and where each came from, for `check`'s verdicts per fat binary.
 *
 * A fat binary is a bundle (or compressed bundle) in a `.hip_fatbin` section, of a linked executable or
 * library or of an object (clang's CGCUDANV.cpp emits one per translation unit, each registered through its
 * own `__hip_fatbin_wrapper`), or a bundle file on its own (`hipModuleLoad` takes one). The bundles of fat
 * objects (`__CLANG_OFFLOAD_BUNDLE__<id>` sections) and the bundles that are archive members are inputs to a
 * device link, not registered as they are, so they are not fat binaries.
 *
 * Where one came from is read from the ELF file (src/elf-edit/hip-fatbin.ts finds the wrappers and where
 * they point): the wrapper registering it (its index in `.hipFatBinSegment`), a symbol defined at its first
 * byte in `.hip_fatbin` (`__hip_fatbin_<cuid>`, the linker's `__hip_fatbin`), else the nearest one before it,
 * and the source file of its translation unit (the STT_FILE symbol the wrapper's local symbol follows in
 * `.symtab`: `kernels_b.hip`). A stripped library has none of the symbols; then only the wrapper is named.
 */
import { isOffloadKitError } from "../engine/errors.js";
import type { ByteSource } from "../engine/source.js";
import { SHT_DYNSYM, SHT_SYMTAB, openLinkedElf, sectionBytes } from "../elf-edit/elf64.js";
import type { LinkedElf, SectionHeader } from "../elf-edit/elf64.js";
import { HIP_FATBIN_SECTION, readHipFatbinLayout } from "../elf-edit/hip-fatbin.js";
import type { LocatedBundle } from "./locate.js";
import { isCaptureMiss } from "./stream-locate.js";

const SYM_SIZE = 24;
const STT_FILE = 4;

export interface FatBinaryOrigin {
  /** The `__hip_fatbin_wrapper` that registers it: its index in `.hipFatBinSegment` (registration order). */
  readonly wrapper?: number;
  /** A symbol at its first byte, or the nearest before it in `.hip_fatbin` (`name+0x1000`). */
  readonly symbol?: string;
  /** The source file of the translation unit that made it (the STT_FILE symbol before its wrapper's). */
  readonly file?: string;
}

/** Whether `bundle` is a fat binary by the rule above. */
export function isFatBinary(bundle: LocatedBundle): boolean {
  // An NVIDIA container is one when the CUDA runtime registers it: a wrapper points at it (a container no
  // wrapper points at is never loaded, `__nv_relfatbin` holds device-link inputs), or it is a `.fatbin` file.
  if (bundle.format === "nv-fatbin") return bundle.section === undefined ? bundle.member === undefined : (bundle.nvFatbin?.wrappers ?? 0) > 0;
  // A kpack'd host's HIPK wrapper is a fat binary whose code objects are in archives; an archive's key is not one.
  if (bundle.format === "kpack") return bundle.kpack?.wrapper !== undefined;
  if (bundle.section !== undefined) return bundle.section.startsWith(HIP_FATBIN_SECTION);
  // A standalone code object or cubin is device code itself, not a fat binary a host program registers.
  return bundle.member === undefined && bundle.format !== "object" && bundle.format !== "code-object" && bundle.format !== "cubin";
}

/** Where the bundle's bytes start in the file: a compressed bundle's own offset, not its decompressed bundle's. */
export function fatBinaryOffset(bundle: LocatedBundle): number {
  return bundle.compressed?.offset ?? bundle.offset;
}

interface ElfSymbol {
  readonly name: string;
  readonly type: number;
  readonly section: number;
  readonly value: number;
}

function symbolsOf(elf: LinkedElf, table: SectionHeader): ElfSymbol[] {
  const strings = elf.sections[table.link];
  if (strings === undefined) return [];
  const names = sectionBytes(elf, strings);
  const bytes = sectionBytes(elf, table);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const decoder = new TextDecoder("latin1");
  const symbols: ElfSymbol[] = [];
  for (let at = SYM_SIZE; at + SYM_SIZE <= bytes.length; at += SYM_SIZE) {
    const start = view.getUint32(at, true);
    let end = start;
    while (end < names.length && names[end] !== 0) end++;
    symbols.push({
      name: decoder.decode(names.subarray(Math.min(start, names.length), end)),
      type: view.getUint8(at + 4) & 0xf,
      section: view.getUint16(at + 6, true),
      value: Number(view.getBigUint64(at + 8, true)),
    });
  }
  return symbols;
}

/**
 * The origin of each fat binary in a linked ELF file's `.hip_fatbin`, by its file offset; empty when the file
 * is not one (or its wrappers cannot be read: `check` judges the bundles all the same, unnamed). Reads the
 * wrappers, relocations and symbol tables, never the bundles' payloads.
 */
export function fatBinaryOrigins(source: ByteSource): Map<number, FatBinaryOrigin> {
  const origins = new Map<number, FatBinaryOrigin>();
  let layout: ReturnType<typeof readHipFatbinLayout>;
  try {
    layout = readHipFatbinLayout(openLinkedElf(source));
  } catch (e) {
    // Not a linked 64-bit little-endian ELF file with readable wrappers, or (streamed package members)
    // bytes that were not kept: the fat binaries stay unnamed.
    if (isOffloadKitError(e) || isCaptureMiss(e)) return origins;
    throw e;
  }
  const { elf, fatbin, segment } = layout;
  const table = elf.sections.find((s) => s.type === SHT_SYMTAB) ?? elf.sections.find((s) => s.type === SHT_DYNSYM);
  let symbols: ElfSymbol[] = [];
  try {
    if (table !== undefined) symbols = symbolsOf(elf, table);
  } catch (e) {
    if (!isOffloadKitError(e) && !isCaptureMiss(e)) throw e;
  }
  const inFatbin = symbols.filter((s) => s.section === fatbin.index && s.name !== "").sort((a, b) => a.value - b.value);
  for (const bundle of layout.bundles) {
    const wrapper = layout.wrappers.findIndex((w) => w.target === bundle.address);
    let symbol: string | undefined;
    const before = inFatbin.filter((s) => s.value <= bundle.address);
    const nearest = before[before.length - 1];
    if (nearest !== undefined) symbol = nearest.value === bundle.address ? nearest.name : `${nearest.name}+0x${(bundle.address - nearest.value).toString(16)}`;
    let file: string | undefined;
    if (wrapper >= 0) {
      const address = layout.wrappers[wrapper]!.address;
      const at = symbols.findIndex((s) => s.section === segment.index && s.value === address);
      for (let i = at - 1; at > 0 && i >= 0; i--) {
        if (symbols[i]!.type === STT_FILE) {
          file = symbols[i]!.name;
          break;
        }
      }
    }
    origins.set(bundle.fileOffset, {
      ...(wrapper >= 0 ? { wrapper } : {}),
      ...(symbol !== undefined ? { symbol } : {}),
      ...(file !== undefined ? { file } : {}),
    });
  }
  return origins;
}

/** `kernels_b.hip, __hip_fatbin_wrapper 1`: an origin for reports (empty when nothing is known). */
export function describeOrigin(origin: FatBinaryOrigin | undefined): string {
  if (origin === undefined) return "";
  const parts: string[] = [];
  if (origin.file !== undefined) parts.push(origin.file);
  if (origin.symbol !== undefined) parts.push(origin.symbol);
  if (origin.wrapper !== undefined) parts.push(`__hip_fatbin_wrapper ${origin.wrapper}`);
  return parts.join(", ");
}
