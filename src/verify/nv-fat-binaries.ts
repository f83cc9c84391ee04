/**
 * Would the CUDA runtime find every fatbin container? Each `__fatBinC_Wrapper_t` in `.nvFatBinSegment` is what a
 * constructor hands to `__cudaRegisterFatBinary` (or, version 2, `__cudaRegisterLinkedBinary`), and the
 * runtime reads the container its `data` pointer reaches, as loaded (NVIDIA's fatbinary_section.h):
 *
 * | at | size | __fatBinC_Wrapper_t field |
 * |----|------|---------------------------|
 * | 0  | 4    | magic 0x466243B1          |
 * | 4  | 4    | version 1 or 2            |
 * | 8  | 8    | data (-> container)       |
 * | 16 | 8    | filename_or_fatbins       |
 *
 * The pointer is read as ld.so leaves it (./elf-load.ts `forEachRelocation`: RELATIVE's addend, RELR's stored
 * value; none: the stored value of a non-PIE executable). It must land in `.nv_fatbin`, in a PT_LOAD's
 * file-backed bytes, at the start of a whole container that parses (src/formats/nv-fatbin.ts); next to a
 * RELATIVE relocation, a stored copy that is not 0 must equal the addend (the runtime of a file loaded
 * without relocation processing, and every tool reading the file, sees that copy). The whole section must
 * read as containers end to end (those no wrapper points at included), and every LZ4 entry must decode to the
 * size its header states (zstd entries are not decoded here: offload-kit never writes them). Written independently of
 * src/elf-edit/ (the editor), which it checks. Containers are numbered in address order, as prune's
 * outcomes number them (`fat binary N`).
 */
import { decodeLz4Block } from "../compress/lz4-block.js";
import { readExact } from "../engine/source.js";
import { NV_WRAPPER_MAGIC, NV_WRAPPER_SIZE, parseNvFatbinContainers } from "../formats/nv-fatbin.js";
import { fileOffsetAt, forEachRelocation } from "./elf-load.js";
import type { LoadView, Section } from "./elf-load.js";
import type { CheckedFatBinary, FatBinaryCheck, FatBinaryCheckOptions } from "./fat-binaries.js";
import { Findings, hex } from "./findings.js";

const DATA = 8;
const ET_DYN = 3;
const EM_AARCH64 = 183;
const R_X86_64_RELATIVE = 8;
const R_AARCH64_RELATIVE = 1027;
/** forEachRelocation's type for a RELR address. */
const RELR = -1;

function section(view: LoadView, name: string): Section | undefined {
  return view.sections.find((s) => s.name === name);
}

function sortedText(ids: readonly string[]): string {
  return [...ids].sort().join(", ") || "none";
}

/** Checks every NVIDIA wrapper and container of a linked file (see the module comment). No `.nvFatBinSegment`: nothing to check. */
export function checkNvFatBinaries(view: LoadView, options: Pick<FatBinaryCheckOptions, "expected"> = {}): FatBinaryCheck {
  const out = new Findings();
  const none: FatBinaryCheck = { wrappers: 0, fatBinaries: [], findings: [] };
  const segment = section(view, ".nvFatBinSegment");
  const fatbin = section(view, ".nv_fatbin");
  if (segment === undefined || fatbin === undefined) return none;
  const { source, loads } = view;
  if (segment.offset + segment.size > source.size || fatbin.offset + fatbin.size > source.size) return none; // SECTION_PAST_EOF says so.

  // The containers, end to end.
  const subject = "section .nv_fatbin";
  const bytes = readExact(source, fatbin.offset, fatbin.size);
  const fatBinaries: CheckedFatBinary[] = [];
  const starts = new Map<number, number>();
  try {
    const run = parseNvFatbinContainers(bytes);
    if (run.trailing !== undefined) {
      out.add("BAD_NV_FATBIN", subject, "contents", fatbin.offset + run.trailing.offset, `.nv_fatbin holds ${run.trailing.size} bytes after its last container that are neither zeros nor a container`);
    }
    run.containers.forEach((c, index) => {
      starts.set(fatbin.addr + c.offset, index);
      // Every LZ4 entry must decode to exactly its stated size (what `compress` writes; the driver decodes the same way).
      for (const [k, e] of c.entries.entries()) {
        if (e.compression !== "lz4") continue;
        let decoded = -1;
        try {
          decoded = decodeLz4Block(bytes.subarray(e.payloadOffset, e.payloadOffset + e.compressedSize), e.uncompressedSize).length;
        } catch {
          // Reported below.
        }
        if (decoded !== e.uncompressedSize) {
          out.add("NV_ENTRY_UNDECODABLE", `fat binary ${index} entry ${k}`, "payload", fatbin.offset + e.payloadOffset,
            `fat binary ${index}'s ${e.archName} entry (LZ4, ${e.compressedSize} bytes) does not decode to the ${e.uncompressedSize} bytes its header states`);
        }
      }
      fatBinaries.push({ index, address: fatbin.addr + c.offset, fileOffset: fatbin.offset + c.offset, format: "nv", entries: c.entries.map((e) => e.archName) });
    });
  } catch (e) {
    const offset = (e as { offset?: number }).offset ?? 0;
    out.add("BAD_NV_FATBIN", subject, (e as { field?: string }).field ?? "contents", fatbin.offset + offset, `.nv_fatbin: ${(e as Error).message}`);
  }

  // The wrappers.
  const wrapperSubject = "section .nvFatBinSegment";
  if (segment.size % NV_WRAPPER_SIZE !== 0) {
    out.add("BAD_NV_WRAPPER", wrapperSubject, "sh_size", segment.at + 32, `.nvFatBinSegment is ${segment.size} bytes, not a whole number of 24-byte __fatBinC_Wrapper_t structs`);
  }
  const count = Math.floor(segment.size / NV_WRAPPER_SIZE);
  const relative = view.machine === EM_AARCH64 ? R_AARCH64_RELATIVE : R_X86_64_RELATIVE;
  const relocated = new Map<number, { type: number; addend?: number; at: number; table: string }>();
  const end = segment.addr + count * NV_WRAPPER_SIZE;
  forEachRelocation(source, view.dynamic, loads, (table, r, at) => {
    if (r.type !== 0 && r.offset >= segment.addr && r.offset < end && (r.offset - segment.addr) % NV_WRAPPER_SIZE === DATA) relocated.set(r.offset, { ...r, at, table });
  });
  const wrappers = new DataView(readExact(source, segment.offset, count * NV_WRAPPER_SIZE).buffer);
  for (let i = 0; i < count; i++) {
    const at = i * NV_WRAPPER_SIZE;
    const field = segment.offset + at + DATA;
    const name = `__fatBinC_Wrapper_t ${i} at ${hex(segment.addr + at)} (file offset ${hex(segment.offset + at)})`;
    const magic = wrappers.getUint32(at, true);
    const version = wrappers.getUint32(at + 4, true);
    if (magic !== NV_WRAPPER_MAGIC || (version !== 1 && version !== 2)) {
      out.add("BAD_NV_WRAPPER", wrapperSubject, "magic", segment.offset + at, `${name} has magic ${hex(magic)} version ${version}, not 0x466243B1 version 1 or 2`);
      continue;
    }
    const stored = Number(wrappers.getBigUint64(at + DATA, true));
    const reloc = relocated.get(segment.addr + at + DATA);
    let target: number;
    if (reloc === undefined) {
      if (view.type === ET_DYN) {
        out.add("WRAPPER_NOT_RELOCATED", wrapperSubject, "data", field, `${name}: no dynamic relocation sets its data field (holding ${hex(stored)}) in a position-independent file`);
        continue;
      }
      target = stored;
    } else if (reloc.type === relative) {
      target = reloc.addend ?? stored;
      if (reloc.addend !== undefined && stored !== 0 && stored !== reloc.addend) {
        out.add("NV_WRAPPER_COPY_DIFFERS", wrapperSubject, "data", field, `${name}: its stored data ${hex(stored)} differs from its ${reloc.table} relocation's addend ${hex(reloc.addend)}`);
      }
    } else if (reloc.type === RELR) {
      target = stored;
    } else {
      out.add("BAD_WRAPPER_RELOCATION", wrapperSubject, "r_info", reloc.at + 8, `${name}: its data field is set by a ${reloc.table} relocation of type ${reloc.type} that is not resolved here`);
      continue;
    }
    const where = reloc?.addend !== undefined ? reloc.at + 16 : field;
    if (target < fatbin.addr || target >= fatbin.addr + fatbin.size) {
      out.add("WRAPPER_TARGET_OUTSIDE_FATBIN", wrapperSubject, "data", where, `${name} points to ${hex(target)}, outside .nv_fatbin [${hex(fatbin.addr)}, ${hex(fatbin.addr + fatbin.size)})`);
      continue;
    }
    if (fileOffsetAt(loads, target, 16) === undefined) {
      out.add("WRAPPER_TARGET_NOT_LOADED", wrapperSubject, "data", where, `${name} points to ${hex(target)}, not in the file-backed bytes of any PT_LOAD segment`);
      continue;
    }
    if (!starts.has(target)) {
      out.add("WRAPPER_TARGET_NOT_A_CONTAINER", wrapperSubject, "data", where, `${name} points to ${hex(target)}, where no whole fatbin container of .nv_fatbin starts`);
    }
  }

  for (const [index, ids] of options.expected ?? []) {
    const found = fatBinaries[index];
    if (found === undefined) {
      out.add("FAT_BINARY_MISSING", `fat binary ${index}`, "contents", fatbin.offset, `fat binary ${index} was planned, but .nv_fatbin holds ${fatBinaries.length} containers`);
      continue;
    }
    if (sortedText(found.entries ?? []) !== sortedText(ids)) {
      out.add("FAT_BINARY_ENTRIES", `fat binary ${index}`, "entries", found.fileOffset,
        `fat binary ${index} at ${hex(found.address)} holds ${sortedText(found.entries ?? [])}; the plan kept ${sortedText(ids)}`);
    }
  }
  return { wrappers: count, fatBinaries, findings: out.done() };
}

