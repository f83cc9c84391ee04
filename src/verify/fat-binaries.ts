/**
 * Would the HIP runtime find every fat binary? Each `__hip_fatbin_wrapper` in `.hipFatBinSegment` is what a
 * constructor hands to `__hipRegisterFatBinary` (clang CGCUDANV.cpp `makeModuleCtorFunction`; ROCm clr
 * hip_platform.cpp), and the runtime walks whatever its `binary` pointer reaches, as loaded:
 *
 * | at | size | __hip_fatbin_wrapper field |
 * |----|------|----------------------------|
 * | 0  | 4    | magic 0x48495046 ("HIPF")  |
 * | 4  | 4    | version 1                  |
 * | 8  | 8    | binary (-> bundle or CCOB) |
 * | 16 | 8    | unused                     |
 *
 * The pointer is read as ld.so leaves it: a dynamic relocation at the field (found through the dynamic table,
 * ./elf-load.ts `forEachRelocation`: RELATIVE's addend, ABS64's symbol + addend, REL / RELR's stored value) or,
 * with none, the stored value (non-PIE executables). It must land inside `.hip_fatbin`, in a PT_LOAD's
 * file-backed bytes, at the start of a clang-offload-bundle whose header parses (src/formats/bundle.ts) or of a
 * CCOB whose header parses and whose total size fits (src/formats/ccob.ts). Written independently of
 * src/elf-edit/hip-fatbin.ts (the editor's reader), which it checks. Fat binaries are numbered in address
 * order, as the editor and prune's outcomes number them.
 */
import { readExact, sliceSource } from "../engine/source.js";
import { BUNDLE_MAGIC_BYTES, readBinaryBundle } from "../formats/bundle.js";
import { isCompressedBundle, parseCcobHeader } from "../formats/ccob.js";
import { DT_SYMTAB, dynamicValue, fileOffsetAt, forEachRelocation, loadAt } from "./elf-load.js";
import type { LoadView, Section } from "./elf-load.js";
import { Findings, hex } from "./findings.js";
import type { Finding } from "./findings.js";

const HIP_FATBIN_MAGIC = 0x48495046;
const WRAPPER_SIZE = 24;
const WRAPPER_BINARY = 8;
const EM_AARCH64 = 183;
const ET_DYN = 3;
const R_X86_64_64 = 1;
const R_X86_64_RELATIVE = 8;
const R_AARCH64_ABS64 = 257;
const R_AARCH64_RELATIVE = 1027;
/** forEachRelocation's type for a RELR address. */
const RELR = -1;
const SYM_SIZE = 24;

export interface FatBinaryCheckOptions {
  /**
   * The entry IDs each fat binary must hold, by index (any order; repeated IDs counted): "holds exactly the
   * planned entries". Fat binaries not in the map are not compared.
   */
  readonly expected?: ReadonlyMap<number, readonly string[]>;
  /** Turns a CCOB into the plain bundle it holds; without it, a CCOB's entries are not compared. */
  readonly decompress?: (ccob: Uint8Array) => Uint8Array;
}

export interface CheckedFatBinary {
  readonly index: number;
  readonly address: number;
  readonly fileOffset: number;
  /** `nv`: an NVIDIA fatbin container (./nv-fat-binaries.ts). */
  readonly format: "bundle" | "ccob" | "nv";
  /** Entry IDs in header order; undefined when not read (a CCOB without `decompress`). */
  readonly entries?: readonly string[];
}

export interface FatBinaryCheck {
  readonly wrappers: number;
  readonly fatBinaries: readonly CheckedFatBinary[];
  readonly findings: Finding[];
}

function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function section(view: LoadView, name: string): Section | undefined {
  return view.sections.find((s) => s.name === name);
}

function sortedText(ids: readonly string[]): string {
  return [...ids].sort().join(", ") || "none";
}

/** Checks every wrapper of a linked file (see the module comment). No `.hipFatBinSegment`: nothing to check. */
export function checkFatBinaries(view: LoadView, options: FatBinaryCheckOptions = {}): FatBinaryCheck {
  const out = new Findings();
  const none: FatBinaryCheck = { wrappers: 0, fatBinaries: [], findings: [] };
  const segment = section(view, ".hipFatBinSegment");
  if (segment === undefined || segment.size === 0) return none;
  const { source, loads } = view;
  if (segment.offset + segment.size > source.size) return none; // SECTION_PAST_EOF says so.
  const subject = "section .hipFatBinSegment";
  if (segment.size % WRAPPER_SIZE !== 0) {
    out.add("BAD_HIP_WRAPPER", subject, "sh_size", segment.at + 32, `.hipFatBinSegment is ${segment.size} bytes, not a whole number of 24-byte __hip_fatbin_wrapper structs`);
  }
  const fatbin = section(view, ".hip_fatbin");
  const aarch64 = view.machine === EM_AARCH64;
  const relative = aarch64 ? R_AARCH64_RELATIVE : R_X86_64_RELATIVE;
  const abs64 = aarch64 ? R_AARCH64_ABS64 : R_X86_64_64;
  const wrapperBytes = readExact(source, segment.offset, segment.size);
  const wrappers = viewOf(wrapperBytes);
  const count = Math.floor(segment.size / WRAPPER_SIZE);

  // The dynamic relocations that write a wrapper's binary field, by the field's address.
  const relocated = new Map<number, { type: number; symbol: number; addend?: number; at: number; table: string }>();
  const end = segment.addr + count * WRAPPER_SIZE;
  forEachRelocation(source, view.dynamic, loads, (table, r, at) => {
    // R_*_NONE (type 0) writes nothing.
    if (r.type !== 0 && r.offset >= segment.addr && r.offset < end && (r.offset - segment.addr) % WRAPPER_SIZE === WRAPPER_BINARY) relocated.set(r.offset, { ...r, at, table });
  });
  const symtab = dynamicValue(view.dynamic, DT_SYMTAB)?.value;

  const targets: { wrapper: number; target: number; field: number }[] = [];
  for (let i = 0; i < count; i++) {
    const at = i * WRAPPER_SIZE;
    const field = segment.offset + at + WRAPPER_BINARY;
    const name = `__hip_fatbin_wrapper ${i} at ${hex(segment.addr + at)} (file offset ${hex(segment.offset + at)})`;
    const magic = wrappers.getUint32(at, true);
    const version = wrappers.getUint32(at + 4, true);
    if (magic !== HIP_FATBIN_MAGIC || version !== 1) {
      out.add("BAD_HIP_WRAPPER", subject, "magic", segment.offset + at, `${name} has magic ${hex(magic)} version ${version}, not HIPF (0x48495046) version 1`);
      continue;
    }
    const stored = Number(wrappers.getBigUint64(at + WRAPPER_BINARY, true));
    const reloc = relocated.get(segment.addr + at + WRAPPER_BINARY);
    let target: number | undefined;
    if (reloc === undefined) {
      if (view.type === ET_DYN) {
        out.add("WRAPPER_NOT_RELOCATED", subject, "binary", field, `${name}: no dynamic relocation sets its binary field (holding ${hex(stored)}) in a position-independent file`);
        continue;
      }
      target = stored;
    } else if (reloc.type === relative) {
      target = reloc.addend ?? stored;
    } else if (reloc.type === RELR) {
      target = stored;
    } else if (reloc.type === abs64 && symtab !== undefined && reloc.symbol !== 0) {
      const entry = fileOffsetAt(loads, symtab + reloc.symbol * SYM_SIZE, SYM_SIZE);
      if (entry !== undefined) target = Number(viewOf(readExact(source, entry + 8, 8)).getBigUint64(0, true)) + (reloc.addend ?? stored);
    }
    if (target === undefined) {
      out.add("BAD_WRAPPER_RELOCATION", subject, "r_info", reloc!.at + 8, `${name}: its binary field is set by a ${reloc!.table} relocation of type ${reloc!.type} (symbol ${reloc!.symbol}) that is not resolved here`);
      continue;
    }
    if (fatbin === undefined || target < fatbin.addr || target >= fatbin.addr + fatbin.size) {
      const range = fatbin === undefined ? "the file has no .hip_fatbin" : `outside .hip_fatbin [${hex(fatbin.addr)}, ${hex(fatbin.addr + fatbin.size)})`;
      out.add("WRAPPER_TARGET_OUTSIDE_FATBIN", subject, "binary", reloc?.addend !== undefined ? reloc.at + 16 : field, `${name} points to ${hex(target)}, ${range}`);
      continue;
    }
    targets.push({ wrapper: i, target, field: reloc?.addend !== undefined ? reloc.at + 16 : field });
  }

  const starts = [...new Set(targets.map((t) => t.target))].sort((a, b) => a - b);
  const fatBinaries: CheckedFatBinary[] = [];
  starts.forEach((address, index) => {
    const owner = targets.find((t) => t.target === address)!;
    const place = `fat binary ${index}`;
    const name = `the fat binary at ${hex(address)} (__hip_fatbin_wrapper ${owner.wrapper})`;
    const fileOffset = fileOffsetAt(loads, address, 1);
    if (fileOffset === undefined) {
      out.add("WRAPPER_TARGET_NOT_LOADED", place, "binary", owner.field, `${name} is not in the file-backed bytes of any PT_LOAD segment`);
      return;
    }
    // It may use the bytes up to the next fat binary, the end of .hip_fatbin, or of its PT_LOAD's file part.
    const load = loadAt(loads, address)!;
    const loadEnd = load.vaddr + load.filesz;
    const limitAddress = Math.min(index + 1 < starts.length ? starts[index + 1] : Infinity, fatbin!.addr + fatbin!.size, loadEnd);
    const limit = Math.min(limitAddress - address, source.size - fileOffset);
    const head = readExact(source, fileOffset, Math.min(limit, 64));
    if (isCompressedBundle(head)) {
      let total: number | undefined;
      try {
        total = parseCcobHeader(head, fileOffset, limit).rawTotalSize;
      } catch (e) {
        out.add("BAD_FAT_BINARY", place, "binary", fileOffset, `${name}: ${(e as Error).message}`);
        return;
      }
      if (total !== undefined && total > limit) {
        out.add("FAT_BINARY_TRUNCATED", place, "total size", fileOffset + 8, `${name} is a compressed bundle of ${total} bytes, but only ${limit} remain before ${index + 1 < starts.length ? "the next one" : "the end of .hip_fatbin"}`);
        return;
      }
      let entries: string[] | undefined;
      if (options.decompress !== undefined && options.expected?.has(index)) {
        try {
          const plain = options.decompress(readExact(source, fileOffset, total ?? limit));
          const read = readBinaryBundle(plain);
          entries = read.kind === "bundle" ? read.bundle.entries.map((e) => e.id) : [];
        } catch (e) {
          out.add("BAD_FAT_BINARY", place, "binary", fileOffset, `${name}: ${(e as Error).message}`);
          return;
        }
      }
      fatBinaries.push({ index, address, fileOffset, format: "ccob", entries });
      return;
    }
    const magic = head.length >= BUNDLE_MAGIC_BYTES.length && BUNDLE_MAGIC_BYTES.every((b, i) => head[i] === b);
    let read: ReturnType<typeof readBinaryBundle> | undefined;
    try {
      read = magic ? readBinaryBundle(sliceSource(source, fileOffset, limit)) : undefined;
    } catch (e) {
      out.add("BAD_FAT_BINARY", place, "binary", fileOffset + ((e as { offset?: number }).offset ?? 0), `${name}: ${(e as Error).message}`);
      return;
    }
    if (read?.kind !== "bundle") {
      const why = read?.problem !== undefined ? `: ${read.problem.message}` : "";
      out.add("WRAPPER_TARGET_NOT_A_BUNDLE", place, "binary", owner.field, `__hip_fatbin_wrapper ${owner.wrapper} points to ${hex(address)} (file offset ${hex(fileOffset)}), where no offload bundle or CCOB starts${why}`);
      return;
    }
    fatBinaries.push({ index, address, fileOffset, format: "bundle", entries: read.bundle.entries.map((e) => e.id) });
  });

  for (const [index, ids] of options.expected ?? []) {
    const found = fatBinaries.find((f) => f.index === index);
    if (found === undefined) {
      if (index >= starts.length) out.add("FAT_BINARY_MISSING", `fat binary ${index}`, "binary", segment.offset, `fat binary ${index} was planned, but the wrappers reach only ${starts.length}`);
      continue;
    }
    if (found.entries === undefined) continue;
    if (sortedText(found.entries) !== sortedText(ids)) {
      out.add("FAT_BINARY_ENTRIES", `fat binary ${index}`, "entries", found.fileOffset,
        `fat binary ${index} at ${hex(found.address)} holds ${sortedText(found.entries)}; the plan kept ${sortedText(ids)}`);
    }
  }
  return { wrappers: count, fatBinaries, findings: out.done() };
}
