/**
 * The AMDGPU metadata note of a code object: what `llvm-readelf --notes` prints as "AMDGPU Metadata", the
 * kernels a code object holds and the resources each uses (registers, LDS, scratch, wave size).
 *
 * Follows llvm/include/llvm/Object/ELF.h (`ELFFile::notes`, `Elf_Note_Iterator`), llvm/docs/AMDGPUUsage.rst
 * ("Code Object Metadata", "Note Records") and llvm/lib/BinaryFormat/AMDGPUMetadataVerifier.cpp.
 *
 * | code object | note name | type                         | descriptor                                   |
 * |-------------|-----------|------------------------------|----------------------------------------------|
 * | v2          | "AMD"     | 10 NT_AMD_HSA_METADATA       | YAML text (src/formats/amdgpu-yaml.ts)       |
 * | v3 to v6    | "AMDGPU"  | 32 NT_AMDGPU_METADATA        | one MessagePack map (src/formats/msgpack.ts) |
 *
 * A note record: `n_namesz` u32, `n_descsz` u32, `n_type` u32, the name (NUL included) padded to the
 * alignment, the descriptor padded to the alignment. The alignment is the segment's `p_align` or the
 * section's `sh_addralign`: 8 when it says 8, 4 when it says 0 to 4; anything else is an error, as in LLVM.
 *
 * Where the notes are: the SHT_NOTE sections when the file has a readable section table (what llvm-readelf
 * prints), else its PT_NOTE segments (a stripped loadable object). Everything the file states is bounded
 * before use: the program and section header tables against the file size, each note against its region,
 * each msgpack length, count and depth by the decoder. Only the headers and the note bytes are read.
 */
import { OffloadKitError } from "../engine/errors.js";
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { latin1Decode } from "./bytes.js";
import { decodeAmdgpuYaml } from "./amdgpu-yaml.js";
import { decodeMsgpackExactly, msgpackField } from "./msgpack.js";
import type { MsgpackDecodeOptions, MsgpackMap, MsgpackValue } from "./msgpack.js";

export const NT_AMD_HSA_METADATA = 10;
export const NT_AMDGPU_METADATA = 32;
export const PT_NOTE = 4;
export const SHT_NOTE = 7;

const ELF64_HEADER_SIZE = 64;
const ELF64_PHDR_SIZE = 56;
const ELF64_SHDR_SIZE = 64;
const NOTE_HEADER_SIZE = 12;
/** A note region larger than this is refused: a metadata note grows with its kernels, and even a large library's stays far below it. */
export const MAX_NOTE_REGION = 256 * 1024 * 1024;
/** Deepest msgpack nesting a metadata document may have (it nests 4 deep; `.args` maps inside the kernel list). */
export const METADATA_MAX_DEPTH = 16;

/** One note record: where its descriptor is in the code object. */
export interface ElfNote {
  readonly name: string;
  readonly type: number;
  readonly descOffset: number;
  readonly descSize: number;
}

/** Where notes were found: sections (named) or segments. */
export interface NoteRegion {
  readonly offset: number;
  readonly size: number;
  readonly align: 4 | 8;
  readonly from: "section" | "segment";
}

export type AmdgpuMetadata =
  /** v3 and later: the decoded msgpack document (a map with `amdhsa.version`, `amdhsa.kernels`, ...). */
  | { readonly format: "msgpack"; readonly document: MsgpackMap; readonly noteOffset: number; readonly noteSize: number; readonly bytes: Uint8Array }
  /** v2: the YAML document (src/formats/amdgpu-yaml.ts), decoded into the same kind of map (`Version`, `Kernels`, ...). */
  | { readonly format: "yaml"; readonly document: MsgpackMap; readonly noteOffset: number; readonly noteSize: number };

function malformed(message: string, offset: number, field: string): OffloadKitError {
  return new OffloadKitError("AMDGPU_NOTE_MALFORMED", message, { offset, field });
}

function noteAlign(raw: number, offset: number, field: string): 4 | 8 {
  if (raw <= 4) return 4;
  if (raw === 8) return 8;
  throw malformed(`alignment (${raw}) is not 4 or 8`, offset, field);
}

function alignUp(n: number, align: number): number {
  return Math.ceil(n / align) * align;
}

/**
 * The note records of one region (`bytes`, found at `baseOffset` in the code object), walked as
 * `Elf_Note_Iterator` walks them: a record that does not fit in what is left is an error.
 */
export function walkNotes(bytes: Uint8Array, align: 4 | 8, baseOffset = 0): ElfNote[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const notes: ElfNote[] = [];
  let at = 0;
  while (at < bytes.length) {
    const where = baseOffset + at;
    if (bytes.length - at < NOTE_HEADER_SIZE) throw malformed(`ELF note overflows container: ${bytes.length - at} bytes left for a 12-byte note header`, where, "n_namesz");
    const nameSize = view.getUint32(at, true);
    const descSize = view.getUint32(at + 4, true);
    const type = view.getUint32(at + 8, true);
    const nameAt = at + NOTE_HEADER_SIZE;
    const descAt = nameAt + alignUp(nameSize, align);
    if (descAt > bytes.length) throw malformed(`ELF note name (${nameSize} bytes) overflows container`, where, "n_namesz");
    if (descSize > bytes.length - descAt) throw malformed(`ELF note descriptor (${descSize} bytes) overflows container`, where, "n_descsz");
    let nameEnd = nameAt + nameSize;
    if (nameSize > 0 && bytes[nameEnd - 1] === 0) nameEnd--;
    notes.push({ name: latin1Decode(bytes.subarray(nameAt, nameEnd)), type, descOffset: baseOffset + descAt, descSize });
    // The last record's padding may be cut off by the region's end, as LLVM accepts.
    at = Math.min(bytes.length, descAt + alignUp(descSize, align));
  }
  return notes;
}

/** Little-endian u64 as a number; above 2^53 it is not exact, but then it is larger than any file anyway. */
function u64(view: DataView, at: number): number {
  return view.getUint32(at + 4, true) * 4294967296 + view.getUint32(at, true);
}

/**
 * Where the notes of a little-endian ELF64 file are (see the module docblock). Throws AMDGPU_NOTE_MALFORMED
 * for a header table or region outside the file.
 */
export function listNoteRegions(source: ByteSource): NoteRegion[] {
  const size = source.size;
  if (size < ELF64_HEADER_SIZE) throw malformed(`code object of ${size} bytes is smaller than an ELF64 header`, 0, "e_ident");
  const header = readExact(source, 0, ELF64_HEADER_SIZE);
  if (header[0] !== 0x7f || header[1] !== 0x45 || header[2] !== 0x4c || header[3] !== 0x46) throw malformed("not an ELF file", 0, "e_ident");
  if (header[4] !== 2 || header[5] !== 1) throw malformed("not a little-endian ELF64 file (AMDGPU code objects are)", 4, "e_ident");
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  const regions: NoteRegion[] = [];
  const region = (offset: number, length: number, align: 4 | 8, from: NoteRegion["from"], field: string, headerAt: number): void => {
    if (length === 0) return;
    if (length > MAX_NOTE_REGION) throw malformed(`note ${from} of ${length} bytes is larger than ${MAX_NOTE_REGION}`, headerAt, field);
    if (offset > size || length > size - offset) throw malformed(`note ${from} [${offset}, +${length}) goes past the end of the ${size}-byte file`, headerAt, field);
    regions.push({ offset, size: length, align, from });
  };

  const shoff = u64(view, 40);
  const shentsize = view.getUint16(58, true);
  let shnum = view.getUint16(60, true);
  if (shoff !== 0 && shentsize === ELF64_SHDR_SIZE && shoff <= size - ELF64_SHDR_SIZE) {
    if (shnum === 0) shnum = u64(new DataView(readExact(source, shoff, ELF64_SHDR_SIZE).buffer), 32);
    if (shnum <= (size - shoff) / ELF64_SHDR_SIZE) {
      const table = readExact(source, shoff, shnum * ELF64_SHDR_SIZE);
      const t = new DataView(table.buffer, table.byteOffset, table.byteLength);
      for (let i = 0; i < shnum; i++) {
        const at = i * ELF64_SHDR_SIZE;
        if (t.getUint32(at + 4, true) !== SHT_NOTE) continue;
        const headerAt = shoff + at;
        region(u64(t, at + 24), u64(t, at + 32), noteAlign(u64(t, at + 48), headerAt + 48, "sh_addralign"), "section", "sh_offset", headerAt);
      }
      if (shnum > 0) return regions;
    }
  }

  const phoff = u64(view, 32);
  const phentsize = view.getUint16(54, true);
  const phnum = view.getUint16(56, true);
  if (phnum === 0 || phoff === 0) return regions;
  if (phentsize !== ELF64_PHDR_SIZE) throw malformed(`invalid e_phentsize in ELF header: ${phentsize}`, 54, "e_phentsize");
  if (phoff > size || phnum * ELF64_PHDR_SIZE > size - phoff) throw malformed("program headers are longer than the file", 32, "e_phoff");
  const table = readExact(source, phoff, phnum * ELF64_PHDR_SIZE);
  const t = new DataView(table.buffer, table.byteOffset, table.byteLength);
  for (let i = 0; i < phnum; i++) {
    const at = i * ELF64_PHDR_SIZE;
    if (t.getUint32(at, true) !== PT_NOTE) continue;
    const headerAt = phoff + at;
    region(u64(t, at + 8), u64(t, at + 32), noteAlign(u64(t, at + 48), headerAt + 48, "p_align"), "segment", "p_offset", headerAt);
  }
  return regions;
}

/** Every note record of the code object, region by region. */
export function readNotes(source: ByteSource): ElfNote[] {
  const notes: ElfNote[] = [];
  for (const region of listNoteRegions(source)) notes.push(...walkNotes(readExact(source, region.offset, region.size), region.align, region.offset));
  return notes;
}

/** Whether a note is the metadata note: `AMDGPU` / NT_AMDGPU_METADATA, or v2's `AMD` / NT_AMD_HSA_METADATA. */
function metadataFormat(note: ElfNote): "msgpack" | "yaml" | undefined {
  if (note.name === "AMDGPU" && note.type === NT_AMDGPU_METADATA) return "msgpack";
  if (note.name === "AMD" && note.type === NT_AMD_HSA_METADATA) return "yaml";
  return undefined;
}

/**
 * Decodes a NT_AMDGPU_METADATA descriptor: exactly one msgpack map (`baseOffset` places error offsets in the
 * code object). Throws `malformed-msgpack` for bad msgpack, AMDGPU_METADATA_MALFORMED when it is not a map.
 */
export function decodeAmdgpuMetadata(desc: Uint8Array, baseOffset = 0, skipKeys?: ReadonlySet<string>, onMap?: MsgpackDecodeOptions["onMap"]): MsgpackMap {
  const document = decodeMsgpackExactly(desc, { maxDepth: METADATA_MAX_DEPTH, baseOffset, skipKeys, onMap });
  if (!(document instanceof Map)) throw new OffloadKitError("AMDGPU_METADATA_MALFORMED", "AMDGPU metadata is not a map", { offset: baseOffset, field: "amdhsa" });
  return document;
}

/**
 * The code object's metadata note, decoded (v3 and later) or located (v2); undefined when it has none.
 * The first metadata note counts, as the runtime's loader takes the first. `skipKeys` leaves map entries out
 * unbuilt (still checked): `.args` is most of a note and a kernel table does not show it; `onMap` tells where
 * each map's bytes are in `bytes` (the descriptor), so a skipped part can be decoded later.
 */
export function readAmdgpuMetadata(source: ByteSource, options: Pick<MsgpackDecodeOptions, "skipKeys" | "onMap"> = {}): AmdgpuMetadata | undefined {
  for (const note of readNotes(source)) {
    const format = metadataFormat(note);
    if (format === undefined) continue;
    if (format === "yaml") {
      const document = decodeAmdgpuYaml(readExact(source, note.descOffset, note.descSize), { maxDepth: METADATA_MAX_DEPTH, baseOffset: note.descOffset });
      return { format, document, noteOffset: note.descOffset, noteSize: note.descSize };
    }
    const bytes = readExact(source, note.descOffset, note.descSize);
    const document = decodeAmdgpuMetadata(bytes, note.descOffset, options.skipKeys, options.onMap);
    return { format, document, noteOffset: note.descOffset, noteSize: note.descSize, bytes };
  }
  return undefined;
}

/**
 * `amdhsa.kernels` (v2: `Kernels`): each kernel's map (entries that are not maps are skipped: the verifier
 * would reject them).
 */
export function metadataKernels(document: MsgpackMap, format: AmdgpuMetadata["format"] = "msgpack"): MsgpackMap[] {
  const list = msgpackField(document, format === "yaml" ? "Kernels" : "amdhsa.kernels");
  if (!Array.isArray(list)) return [];
  return list.filter((k): k is MsgpackMap => k instanceof Map);
}

/**
 * `amdhsa.version` as [major, minor] (1.0 is v3, 1.1 v4, 1.2 v5, 1.3 v6 in LLVM's streamer); v2's `Version`
 * (1.0 in LLVM 14).
 */
export function metadataVersion(document: MsgpackMap, format: AmdgpuMetadata["format"] = "msgpack"): readonly [number, number] | undefined {
  const version: MsgpackValue | undefined = msgpackField(document, format === "yaml" ? "Version" : "amdhsa.version");
  if (!Array.isArray(version) || typeof version[0] !== "number" || typeof version[1] !== "number") return undefined;
  return [version[0], version[1]];
}
