/**
 * The locator: every offload bundle and offload binary in a file, whatever holds it. Browser-safe; it
 * reads through a `ByteSource` (a file in Node, a `Uint8Array`, a `Blob` read slice by slice in a
 * worker) and touches only what it must.
 *
 * What holds them, and how each is searched:
 *
 * | container | how |
 * |---|---|
 * | ELF (executable, shared library, object) | from the section table: `.hip_fatbin*` and `.llvm.offloading` (or type SHT_LLVM_OFFLOADING) are walked as regions (below); `.nv_fatbin` and `__nv_relfatbin` are read as NVIDIA fatbin containers back to back (src/formats/nv-fatbin.ts, one bundle of format `nv-fatbin` each, with the wrappers of `.nvFatBinSegment` counted: src/inspect/nv-wrappers.ts); `__CLANG_OFFLOAD_BUNDLE__<id>` sections are the entries of one fat-object bundle (format `object`). Nothing else in the file is searched: the toolchains put device code only in these sections, and other sections hold the magics as data (libamdhip64's `.rodata` has the string `__CLANG_OFFLOAD_BUNDLE__`, libLLVM's code the OffloadBinary magic), so an ELF file with a section table and none of these sections holds no device code. Only an ELF file without a section table, or whose section table cannot be read, is walked whole |
 * | standalone AMDGPU code object, CUDA cubin (EM_CUDA), `.fatbin` (magic 0xBA55ED50) | device code as it stands: one `code-object` or `cubin` bundle, or the fatbin's containers |
 * | archive (`!<arch>`) | each member in turn, by the same rules (nested archives up to 8 deep); thin archives' members live in other files and are not followed |
 * | rocm-kpack archive (`KPAK`) | its TOC (src/formats/kpack.ts): one `kpack` bundle per key, its code objects as entries; blobs are not searched. A kpack'd host binary's code objects are in such archives beside it on disk: src/kpack/node/location.ts adds them for files, the locator itself reads only the one file |
 * | anything else | walked whole, as one region |
 *
 * A region is walked by hopping: at each magic (`__CLANG_OFFLOAD_BUNDLE__`, `CCOB`, `10 FF 10 AD`) the
 * thing there is read with its own header as the authority on its size (a bundle ends at its last
 * payload, a v2/v3 compressed bundle at its total size, a run of offload binaries at the end of its last
 * binary), and the next magic is looked for from there. The search is bounded first (4 KiB, then 64 KiB,
 * then window by window), because in a `.hip_fatbin` section the next bundle starts at the next 4096
 * boundary: locating the 111 bundles of a 1.3 GB library reads about 1 MB, never the payloads. Compressed
 * data is never searched (the magic can occur inside it). A text bundle is recognised only at the start
 * of a file, member or decompressed bundle; a compressed bundle at such a start is walked by the header
 * sizes of the compressed bundles that follow one another (src/formats/ccob.ts `walkCcobs`), as LLVM does.
 *
 * Compressed bundles are opened through `openCompressed` (src/compress/node/decompress.ts in Node, the browser's
 * codecs elsewhere); without it they are reported as problems. Whatever cannot be read becomes a
 * problem with its offset and the walk goes on; only a failing read of the source itself throws.
 *
 * API: `locate(source, options)` returns a `Location`; `onBundle` / `onOffloadBinaries` see each find
 * together with the bytes its offsets refer to, while those are open (a compressed bundle's decompressed
 * contents are released after the call).
 */
import type { Engine } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import { findFirst } from "../engine/find.js";
import { engine as defaultEngine } from "../engine/select.js";
import { bytesSource, readExact, sliceSource } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { Window } from "../engine/window.js";
import { codeObjectEntryId, isAmdgpuCodeObject, parseAmdgpuCodeObject } from "../formats/amdgpu-code-object.js";
import { isArchive, readArchive } from "../formats/archive.js";
import { isKpackArchive, readKpackArchive, readKpackEntry } from "../formats/kpack.js";
import type { KpackEntry } from "../formats/kpack.js";
import { BUNDLE_MAGIC_BYTES, readBinaryBundle } from "../formats/bundle.js";
import {
  CCOB_MAGIC, CCOB_MIN_SIZE, compressionMethodName, formatHash, isCompressedBundle, parseCcobHeader, walkCcobs,
} from "../formats/ccob.js";
import type { CcobMember } from "../formats/ccob.js";
import { ELF_BUNDLE_SECTION_PREFIX, isElf, openElf, sectionNames, sectionRange } from "../formats/elf.js";
import type { ElfFile, ElfSection } from "../formats/elf.js";
import { isNvCubin, isNvFatbin, nvEntryDecodedSize, parseNvCubin, walkNvFatbinContainers } from "../formats/nv-fatbin.js";
import { OFFLOAD_BINARY_MAGIC_BYTES, offloadKindText, readOffloadBinaries } from "../formats/offload-binary.js";
import type { OffloadBinaries, OffloadImage } from "../formats/offload-binary.js";
import { detectTextComment, readTextBundle } from "../formats/text-bundle.js";
import { nvWrapperTargets } from "./nv-wrappers.js";
import { salvageBinaryBundle } from "./salvage.js";
import type {
  CompressedAhead, CompressedBundleInfo, FoundBundle, FoundEntry, FoundOffloadBinaries, FoundOffloadImage, NvFatbinInfo, ScanOptions, ScanProblem,
} from "./scan.js";

/** A bundle found in a file, numbered in the order found (file order). */
export interface LocatedBundle extends FoundBundle {
  /** Running index over the file's bundles, from 0. */
  readonly index: number;
  /** The ELF section it was found in (`.hip_fatbin`; for a fat object, its first bundle section). */
  readonly section?: string;
  /** The archive member it was found in. */
  readonly member?: string;
}

/** A run of offload binaries found in a file. */
export interface LocatedOffloadBinaries extends FoundOffloadBinaries {
  readonly section?: string;
  readonly member?: string;
}

/** A stretch of the file the locator walked, and why. */
export interface SearchedRegion {
  readonly offset: number;
  readonly size: number;
  /** `section`: an offload section named in an ELF section table; `whole`: a file or member that is not ELF, or an ELF one without a readable section table. */
  readonly how: "section" | "whole";
  /** The section's name, for sections. */
  readonly section?: string;
  readonly member?: string;
}

export interface Location {
  readonly size: number;
  /** What the file is: an ELF file, an archive, or anything else (a bundle, a raw blob). */
  readonly container: "elf" | "archive" | "other";
  readonly bundles: readonly LocatedBundle[];
  readonly offloadBinaries: readonly LocatedOffloadBinaries[];
  /** What could not be read, with where; the walk went on past each. */
  readonly problems: readonly ScanProblem[];
  readonly searched: readonly SearchedRegion[];
}

/**
 * A source that answers the search for the next magic itself, from a list made while it streamed
 * (src/inspect/stream-locate.ts): the same answer `nextMagic` would find in the bytes, which it does not
 * keep. It throws (an error that is not ours) when it cannot tell.
 */
export interface IndexedSource extends ByteSource {
  nextMagic(from: number, to: number): { at: number; kind: MagicKind } | undefined;
}

export interface LocateOptions extends ScanOptions {
  readonly engine?: Engine;
  /**
   * Called with each bundle as it is found and the source its entry offsets refer to: the input itself,
   * or, for a bundle that came out of a compressed bundle, the decompressed contents (valid only during
   * the call). An exception thrown here stops the walk and propagates.
   */
  readonly onBundle?: (bundle: LocatedBundle, contents: ByteSource) => void;
  /** Called with each run of offload binaries and its images (`images[i]` is `run.images[i]`, readable through its own `source`). */
  readonly onOffloadBinaries?: (run: LocatedOffloadBinaries, images: readonly OffloadImage[]) => void;
}

/** ELF sections that hold offload bundles or binaries, by name; `.llvm.offloading` is also found by type. */
export function isOffloadSectionName(name: string): boolean {
  return name.startsWith(".hip_fatbin") || name === ".nv_fatbin" || name === "__nv_relfatbin" || name === ".llvm.offloading";
}

/** ELF section type of `.llvm.offloading` (llvm/BinaryFormat/ELF.h). */
const SHT_LLVM_OFFLOADING = 0x6fff4c0b;
const MAX_DEPTH = 8;
/** How many CCOBs, and how many declared bytes, one look ahead hands to `prefetchCompressed` (what may be held decoded at once). */
const PREFETCH_MAX_COUNT = 16;
const PREFETCH_MAX_BYTES = 64 * 1024 * 1024;
/** How far the first looks for the next magic reach: one page, then sixteen, then window after window. */
const SEARCH_STAGES = [4096, 64 * 1024];
/** ELF sections that hold NVIDIA fatbin containers (src/formats/nv-fatbin.ts): read by their headers, not hopped through. */
const NV_FATBIN_SECTIONS = new Set([".nv_fatbin", "__nv_relfatbin"]);

export type MagicKind = "bundle" | "ccob" | "offload";
/** The magics a region walk hops between, in the order a tie would be settled (none can tie: their first bytes differ). */
export const LOCATOR_MAGICS: readonly (readonly [MagicKind, Uint8Array])[] = [
  ["bundle", BUNDLE_MAGIC_BYTES],
  ["ccob", CCOB_MAGIC],
  ["offload", OFFLOAD_BINARY_MAGIC_BYTES],
];
const LONGEST_MAGIC = Math.max(...LOCATOR_MAGICS.map(([, bytes]) => bytes.length));

/** Largest power of two (up to 4096) dividing `offset`. */
export function alignmentOf(offset: number): number {
  let align = 1;
  while (align < 4096 && offset % (align * 2) === 0) align *= 2;
  return align;
}

interface Where {
  readonly section?: string;
  readonly member?: string;
}

/** Where a region's contents come from: the file, or a compressed bundle's decompressed bytes. */
interface RegionContext extends Where {
  readonly source: ByteSource;
  readonly window: Window;
  readonly compressed?: CompressedBundleInfo;
  /** The region starts a file, member or decompressed bundle: text bundles and CCOB walks begin here. */
  readonly blobStart: boolean;
  readonly depth: number;
}

/** Our error as a problem; `base` is where the slice the reader saw starts (its offsets are relative to it). */
function problemOf(e: unknown, base: number): ScanProblem {
  if (!(e instanceof OffloadKitError)) throw e;
  return { offset: base + (e.offset ?? 0), code: e.code, message: e.message };
}

function withWhere<T extends object>(value: T, where: Where): T {
  return {
    ...value,
    ...(where.section !== undefined ? { section: where.section } : {}),
    ...(where.member !== undefined ? { member: where.member } : {}),
  };
}

class Locator {
  readonly bundles: LocatedBundle[] = [];
  readonly offloadBinaries: LocatedOffloadBinaries[] = [];
  readonly problems: ScanProblem[] = [];
  readonly searched: SearchedRegion[] = [];
  private imageIndex = 0;
  readonly engine: Engine;
  private readonly fileWindow: Window;
  /** CCOBs handed to `prefetchCompressed` and not yet reached, by their offset in `source`. */
  private ahead: { source: ByteSource | undefined; byOffset: Map<number, CompressedAhead> } = { source: undefined, byOffset: new Map() };

  constructor(readonly file: ByteSource, readonly options: LocateOptions) {
    this.engine = options.engine ?? defaultEngine();
    this.fileWindow = new Window(this.engine, file);
  }

  /** A file or an archive member: [start, start + size) of the file. */
  blob(start: number, size: number, where: Where, depth: number): "elf" | "archive" | "other" {
    const head = readExact(this.file, start, Math.min(size, 64));
    if (isArchive(head)) {
      this.archive(start, size, where, depth);
      return "archive";
    }
    if (isAmdgpuCodeObject(head)) {
      this.codeObject(start, size, head, where);
      return "elf";
    }
    if (isNvCubin(head)) {
      this.cubin(start, size, head, where);
      return "elf";
    }
    if (isNvFatbin(head)) {
      this.searched.push(withWhere({ offset: start, size, how: "whole" as const }, where));
      this.nvFatbin(start, size, where);
      return "other";
    }
    if (isKpackArchive(head)) {
      this.kpackArchive(start, size, where);
      return "other";
    }
    if (isElf(head, size) && this.elf(start, size, where, depth)) return "elf";
    this.searched.push(withWhere({ offset: start, size, how: "whole" as const }, where));
    this.region(start, start + size, { ...where, source: this.file, window: this.fileWindow, blobStart: true, depth });
    return isElf(head, size) ? "elf" : "other";
  }

  /**
   * A standalone AMDGPU code object (a `.hsaco`, a Tensile `.co`): device code as it stands, one entry of
   * format `code-object` spanning the whole file or member. Its sections are not walked: the toolchains
   * never put bundles in a code object, and its `.rodata` may hold the magics as data.
   */
  private codeObject(start: number, size: number, head: Uint8Array, where: Where): void {
    let object;
    try {
      object = parseAmdgpuCodeObject(head);
    } catch (e) {
      this.problems.push(problemOf(e, start));
      return;
    }
    const id = codeObjectEntryId(object);
    if (id === undefined) {
      this.problems.push({ offset: start, code: "AMDGPU_UNKNOWN_MACH", message: `AMDGPU code object for processor number 0x${object.mach.toString(16)} (e_flags 0x${object.flags.toString(16)}), which is not in the table` });
      return;
    }
    const align = alignmentOf(start);
    this.addBundle(withWhere({ format: "code-object" as const, offset: start, size, align, entries: [{ id, offset: start, size, align }], codeObject: object }, where), this.file);
  }

  /**
   * A rocm-kpack `.kpack` archive (src/formats/kpack.ts): one `kpack` bundle per TOC key, its entries the code
   * objects filed under it by architecture. Plain blobs are entries in the file; zstd-per-kernel frames are
   * decoded (with `decompressOffload`, else a problem) and the entries are positions in the decoded code
   * objects, back to back. The archive's blobs are not searched for magics: they are code objects.
   */
  private kpackArchive(start: number, size: number, where: Where): void {
    const source = sliceSource(this.file, start, size);
    let archive;
    try {
      archive = readKpackArchive(source);
    } catch (e) {
      this.problems.push(problemOf(e, start));
      return;
    }
    this.searched.push(withWhere({ offset: start, size, how: "whole" as const }, where));
    const keys = new Map<string, KpackEntry[]>();
    for (const entry of archive.entries) keys.set(entry.key, [...(keys.get(entry.key) ?? []), entry]);
    const decode = this.options.decompressOffload;
    for (const [key, entries] of keys) {
      const info = (e: KpackEntry) => ({ key, arch: e.arch, compression: archive.compression, storedOffset: start + e.offset, storedSize: e.size });
      const id = (e: KpackEntry) => e.target ?? `hipv4-amdgcn-amd-amdhsa--${e.arch}`;
      const first = entries.reduce((n, e) => Math.min(n, start + e.offset), Infinity);
      const end = entries.reduce((n, e) => Math.max(n, start + e.offset + e.size), 0);
      if (archive.compression === "none") {
        const found = entries.map((e) => ({ id: id(e), offset: start + e.offset, size: e.size, align: alignmentOf(e.offset), kpack: info(e) }));
        this.addBundle(withWhere({ format: "kpack" as const, offset: first, size: end - first, entries: found, kpack: { key } }, where), this.file);
        continue;
      }
      if (decode === undefined) {
        this.problems.push({ offset: first, code: "KPACK_NO_DECODER", message: `kpack: ${key}'s code objects are zstd frames; no decompressor given` });
        continue;
      }
      let decoded: Uint8Array[];
      try {
        decoded = entries.map((e) => readKpackEntry(source, archive.compression, e, (frame, length) => decode("zstd", frame, length)));
      } catch (e) {
        this.problems.push(problemOf(e, start));
        continue;
      }
      const contents = new Uint8Array(decoded.reduce((n, d) => n + d.length, 0));
      let at = 0;
      const found = entries.map((e, i) => {
        contents.set(decoded[i]!, at);
        at += decoded[i]!.length;
        return { id: id(e), offset: at - decoded[i]!.length, size: decoded[i]!.length, align: alignmentOf(at - decoded[i]!.length), kpack: info(e) };
      });
      this.addBundle(withWhere({ format: "kpack" as const, offset: first, size: end - first, entries: found, kpack: { key } }, where), bytesSource(contents));
    }
  }

  private archive(start: number, size: number, where: Where, depth: number): void {
    if (depth >= MAX_DEPTH) {
      this.problems.push({ offset: start, code: "UNSUPPORTED_ARCHIVE", message: `archives nested more than ${MAX_DEPTH} deep are not read` });
      return;
    }
    let index;
    try {
      index = readArchive(sliceSource(this.file, start, size), { engine: this.engine });
    } catch (e) {
      this.problems.push(problemOf(e, start));
      return;
    }
    if (index.thin) {
      this.problems.push({ offset: start, code: "THIN_ARCHIVE", message: "thin archive: its members are other files, which are not read" });
      return;
    }
    for (const member of index.members) {
      // Nested members are named by their path through the archives.
      const name = where.member === undefined ? member.name : `${where.member}(${member.name})`;
      this.blob(start + member.dataOffset, member.size, { member: name }, depth + 1);
    }
  }

  /**
   * Walks an ELF file's offload sections. True when the section table was read (whether or not it names
   * offload sections: without them the file holds no device code); false when there is no section table
   * or it cannot be read, so the file is walked whole.
   */
  private elf(start: number, size: number, where: Where, depth: number): boolean {
    let sections;
    let names;
    let elf;
    try {
      elf = openElf(sliceSource(this.file, start, size));
      sections = elf.sections;
      names = sectionNames(elf);
    } catch (e) {
      this.problems.push(problemOf(e, start));
      return false;
    }
    // No section table (a stripped-down ELF file): nothing says where device code is, so the file is walked whole.
    if (sections.length === 0) return false;
    const regions: { name: string; offset: number; size: number }[] = [];
    const nvSections: { name: string; offset: number; size: number; section: ElfSection }[] = [];
    const objectEntries: FoundEntry[] = [];
    let objectSection: string | undefined;
    let found = false;
    for (let i = 0; i < sections.length; i++) {
      const name = names[i]!;
      const isBundleSection = name.startsWith(ELF_BUNDLE_SECTION_PREFIX);
      if (!isBundleSection && !isOffloadSectionName(name) && sections[i]!.type !== SHT_LLVM_OFFLOADING) continue;
      found = true;
      let range;
      try {
        range = sectionRange(elf, sections[i]!);
      } catch (e) {
        this.problems.push(problemOf(e, start));
        continue;
      }
      const offset = start + range.offset;
      // A `.nv_fatbin` that does not start with NVIDIA's magic (a test's or another tool's) is hopped through as before.
      if (NV_FATBIN_SECTIONS.has(name) && range.size >= 4 && isNvFatbin(readExact(this.file, offset, 4))) {
        nvSections.push({ name, offset, size: range.size, section: sections[i]! });
      } else if (isBundleSection) {
        objectSection ??= name;
        objectEntries.push({ id: name.substring(ELF_BUNDLE_SECTION_PREFIX.length), offset, size: range.size, align: alignmentOf(range.offset) });
      } else if (range.size > 0) {
        regions.push({ name, offset, size: range.size });
      }
    }
    if (!found) return true;
    if (objectEntries.length > 0) {
      // Loops, not Math.min(...spread): a spread of 100,000 arguments overflows a browser Worker's stack.
      const first = objectEntries.reduce((n, e) => Math.min(n, e.offset), Infinity);
      const end = objectEntries.reduce((n, e) => Math.max(n, e.offset + e.size), 0);
      this.searched.push(withWhere({ offset: first, size: end - first, how: "section" as const, section: objectSection }, where));
      this.addBundle(
        withWhere({ format: "object" as const, offset: first, size: end - first, entries: objectEntries }, where),
        this.file,
      );
    }
    for (const region of regions) {
      this.searched.push(withWhere({ offset: region.offset, size: region.size, how: "section" as const, section: region.name }, where));
      this.region(region.offset, region.offset + region.size, {
        ...where, section: region.name, source: this.file, window: this.fileWindow, blobStart: false, depth,
      });
    }
    for (const nv of nvSections) {
      this.searched.push(withWhere({ offset: nv.offset, size: nv.size, how: "section" as const, section: nv.name }, where));
      // Wrappers point into `.nv_fatbin` only; `__nv_relfatbin` holds the device-link inputs of an -rdc link.
      const wrapped = nv.name === ".nv_fatbin" ? this.nvWrapped(elf, names, nv.section, start) : undefined;
      this.nvFatbin(nv.offset, nv.size, { ...where, section: nv.name }, wrapped);
    }
    return true;
  }

  /**
   * The NVIDIA fatbin containers back to back in [start, start + size) of the file (a `.nv_fatbin` section, a
   * `.fatbin` file): one bundle of format `nv-fatbin` per container, read by its headers alone (payloads are
   * never read here); `wrapped`, when known, counts the wrappers pointing at each container's offset in the range.
   */
  private nvFatbin(start: number, size: number, where: Where, wrapped?: ReadonlyMap<number, number>): void {
    const read = (position: number, length: number) => readExact(this.file, start + position, Math.max(0, Math.min(length, size - position)));
    let run;
    try {
      run = walkNvFatbinContainers(read, size);
    } catch (e) {
      this.problems.push(problemOf(e, start));
      return;
    }
    for (const container of run.containers) {
      const entries: FoundEntry[] = container.entries.map((e) => ({ id: e.archName, offset: start + e.payloadOffset, size: e.payloadSize, align: alignmentOf(e.payloadOffset - container.offset) }));
      const nvFatbin: NvFatbinInfo = {
        version: container.version,
        ...(wrapped !== undefined ? { wrappers: wrapped.get(container.offset) ?? 0 } : {}),
        entries: container.entries.map((e) => ({
          kind: e.kind, arch: e.arch, flags: e.flags, compression: e.compression,
          headerOffset: start + e.offset, headerSize: e.headerSize, paddedSize: e.paddedSize,
          compressedSize: e.compressedSize, uncompressedSize: e.uncompressedSize, decodedSize: nvEntryDecodedSize(e),
          versionMajor: e.versionMajor, versionMinor: e.versionMinor, optionsOffset: e.optionsOffset,
        })),
      };
      this.addBundle(withWhere({ format: "nv-fatbin" as const, offset: start + container.offset, size: container.size, entries, nvFatbin }, where), this.file);
    }
    if (run.trailing !== undefined) {
      this.problems.push({ offset: start + run.trailing.offset, code: "NV_TRAILING", message: `${run.trailing.size} bytes after the last fatbin container are not a fatbin container` });
    }
  }

  /** Wrapper counts by container offset in `section`; undefined when the wrapper table is absent or unreadable (a problem only if it fails to read). */
  private nvWrapped(elf: ElfFile, names: readonly string[], section: ElfSection, start: number): ReadonlyMap<number, number> | undefined {
    try {
      return nvWrapperTargets(elf, names, section);
    } catch (e) {
      this.problems.push(problemOf(e, start));
      return undefined;
    }
  }

  /** A standalone cubin (CUDA ELF, EM_CUDA): SASS for one sm_NN as it stands, like a standalone AMDGPU code object. */
  private cubin(start: number, size: number, head: Uint8Array, where: Where): void {
    let cubin;
    try {
      cubin = parseNvCubin(head);
    } catch (e) {
      this.problems.push(problemOf(e, start));
      return;
    }
    const align = alignmentOf(start);
    this.addBundle(withWhere({ format: "cubin" as const, offset: start, size, align, entries: [{ id: `sm_${cubin.arch}`, offset: start, size, align }], cubin }, where), this.file);
  }

  private addBundle(found: Omit<LocatedBundle, "index">, contents: ByteSource): void {
    const bundle: LocatedBundle = { ...found, index: this.bundles.length };
    this.bundles.push(bundle);
    this.options.onBundle?.(bundle, contents);
  }

  /** Walks [start, end) of the context's source, hopping from one find to the next. */
  private region(start: number, end: number, ctx: RegionContext): void {
    let at = start;
    let ccobTrailing: { offset: number; size: number } | undefined;
    if (ctx.blobStart && end - start > 0) {
      const head = readExact(ctx.source, start, Math.min(end - start, 64));
      if (end - start >= CCOB_MIN_SIZE && isCompressedBundle(head)) {
        const walked = this.ccobWalk(start, end, ctx);
        if (walked === undefined) return;
        at = walked.next;
        ccobTrailing = walked.trailing;
      } else {
        const comment = detectTextComment(head);
        if (comment !== undefined) {
          this.textBundle(start, end, comment, ctx);
          return;
        }
      }
    }
    const foundBefore = this.bundles.length + this.offloadBinaries.length;
    while (at < end) {
      const hit = this.nextMagic(ctx.window, at, end);
      if (hit === undefined) break;
      at = this.readAt(hit.at, hit.kind, end, ctx);
    }
    if (ccobTrailing !== undefined && this.bundles.length + this.offloadBinaries.length === foundBefore) {
      this.problems.push({
        offset: ccobTrailing.offset,
        code: "CCOB_TRAILING",
        message: `${ccobTrailing.size} bytes after the last compressed bundle are not a compressed bundle`,
      });
    }
  }

  /**
   * The first magic at or after `from` and before `to` (whole magics only). Reads a page first, then
   * sixteen, then a window at a time, so a find just past a bundle's end costs one small read.
   */
  private nextMagic(w: Window, from: number, to: number): { at: number; kind: MagicKind } | undefined {
    const indexed = (w.source as Partial<IndexedSource>).nextMagic;
    if (indexed !== undefined) return indexed.call(w.source, from, to);
    let position = from;
    let stage = 0;
    while (to - position >= 4) {
      if (!w.holds(position, Math.min(to - position, SEARCH_STAGES[0]!))) {
        w.load(position, stage < SEARCH_STAGES.length ? SEARCH_STAGES[stage++]! : Infinity);
      }
      const chunkEnd = Math.min(w.end, to);
      let best: { at: number; kind: MagicKind } | undefined;
      for (const [kind, magic] of LOCATOR_MAGICS) {
        const hit = findFirst(w, magic, position, best === undefined ? chunkEnd : Math.min(chunkEnd, best.at + magic.length));
        if (hit >= 0 && (best === undefined || hit < best.at)) best = { at: hit, kind };
      }
      if (best !== undefined) return best;
      if (chunkEnd >= to) return undefined;
      // Overlap by a magic's length less one, so one that straddles the boundary is still seen.
      position = Math.max(position + 1, chunkEnd - (LONGEST_MAGIC - 1));
    }
    return undefined;
  }

  /** Reads what starts at `at`; returns where the walk goes on. */
  private readAt(at: number, kind: MagicKind, end: number, ctx: RegionContext): number {
    switch (kind) {
      case "bundle":
        return this.binaryBundle(at, end, ctx);
      case "ccob":
        return this.ccobAt(at, end, ctx);
      case "offload":
        return ctx.compressed !== undefined ? at + 1 : this.offloadRun(at, end, ctx);
    }
  }

  private binaryBundle(at: number, end: number, ctx: RegionContext): number {
    let read;
    try {
      read = readBinaryBundle(sliceSource(ctx.source, at, end - at), { engine: this.engine });
    } catch (e) {
      // A header that fails after good entries: reported at the bundle, as a failed first entry is, with
      // the entries a lenient reading still finds (./salvage.ts; not inside compressed bundles, whose
      // offsets are in decoded bytes no one can slice from the file).
      const problem: ScanProblem = { ...problemOf(e, at), offset: at };
      const salvaged = ctx.compressed === undefined ? salvageBinaryBundle(ctx.source, at, end) : [];
      this.problems.push(salvaged.length > 0 ? { ...problem, entries: salvaged } : problem);
      return at + 1;
    }
    if (read.kind === "none") {
      if (read.problem !== undefined) this.problems.push({ offset: at, code: read.problem.code, message: read.problem.message });
      return at + 1;
    }
    const entries = read.bundle.entries.map((e) => ({ id: e.id, offset: at + e.offset, size: e.size, align: alignmentOf(e.offset) }));
    // A loop, not Math.min(...spread): a bundle of 100,000 entries overflowed a browser Worker's stack (measured).
    const align = entries.length === 0 ? 1 : entries.reduce((n, e) => Math.min(n, e.align), Infinity);
    // Outside the try: what the caller's onBundle throws is not a problem of the input.
    this.addBundle(
      withWhere({ format: "binary" as const, offset: at, size: read.bundle.extent, align, entries, ...this.compressedField(ctx) }, ctx),
      ctx.source,
    );
    // The header is the authority on the bundle's size; its payloads are never searched.
    return at + Math.max(read.bundle.extent, BUNDLE_MAGIC_BYTES.length);
  }

  private compressedField(ctx: RegionContext): { compressed?: CompressedBundleInfo } {
    return ctx.compressed === undefined ? {} : { compressed: ctx.compressed };
  }

  private textBundle(start: number, end: number, comment: string, ctx: RegionContext): void {
    let text;
    try {
      text = readTextBundle(sliceSource(ctx.source, start, end - start), comment, { engine: this.engine });
    } catch (e) {
      this.problems.push(problemOf(e, start));
      return;
    }
    const entries = text.entries.map((e) => ({ id: e.id, offset: start + e.offset, size: e.size, align: 1 }));
    this.addBundle(withWhere({ format: "text" as const, offset: start, size: text.extent, comment, entries, ...this.compressedField(ctx) }, ctx), ctx.source);
  }

  /** A blob that starts with a compressed bundle: the CCOBs back to back, by their header sizes (LLVM's reading). */
  private ccobWalk(start: number, end: number, ctx: RegionContext): { next: number; trailing?: { offset: number; size: number } } | undefined {
    const blob = sliceSource(ctx.source, start, end - start);
    let walk;
    try {
      walk = walkCcobs((position, length) => readExact(blob, position, Math.max(0, Math.min(length, blob.size - position))), blob.size);
    } catch (e) {
      this.problems.push(problemOf(e, start));
      return undefined;
    }
    const prefetch = this.options.prefetchCompressed;
    let told = 0;
    walk.members.forEach((member, i) => {
      // Opening the last member handed on (or the first): hand on the next run while this one is decoded.
      if (prefetch !== undefined && i + 1 >= told) {
        // The same bounds as lookAhead's: stop once the count or the declared bytes are reached.
        const run: CcobMember[] = [];
        let declared = 0;
        for (let k = i + 1; k < walk.members.length && run.length < PREFETCH_MAX_COUNT && declared < PREFETCH_MAX_BYTES; k++) {
          run.push(walk.members[k]!);
          declared += walk.members[k]!.header.uncompressedSize;
        }
        told = i + 1 + run.length;
        if (run.length > 0) prefetch(run.map((m) => ({ blob, member: m })));
      }
      this.compressed(blob, start, member, ctx);
    });
    if (walk.trailing === undefined) return { next: end };
    return { next: start + walk.trailing.offset, trailing: { offset: start + walk.trailing.offset, size: walk.trailing.size } };
  }

  /** A CCOB met while hopping (after other finds in a section, say). */
  private ccobAt(at: number, end: number, ctx: RegionContext): number {
    if (ctx.compressed !== undefined || end - at < CCOB_MIN_SIZE) return at + 1;
    let found = this.ahead.source === ctx.source ? this.ahead.byOffset.get(at) : undefined;
    if (found !== undefined) this.ahead.byOffset.delete(at);
    else found = this.ccobHeaderAt(at, end, ctx);
    if (found === undefined) return at + 1;
    // The last CCOB handed on (or one nobody was told about): tell of the next run while this one is decoded.
    if (this.options.prefetchCompressed !== undefined && (this.ahead.source !== ctx.source || this.ahead.byOffset.size === 0)) {
      this.lookAhead(at + found.member.size, end, ctx);
    }
    this.compressed(found.blob, at, found.member, ctx);
    return at + found.member.size;
  }

  /** The CCOB whose header is at `at` (as one blob to the end of the region), or undefined when it is just the bytes "CCOB". */
  private ccobHeaderAt(at: number, end: number, ctx: RegionContext): CompressedAhead | undefined {
    const blob = sliceSource(ctx.source, at, end - at);
    let header;
    try {
      header = parseCcobHeader(readExact(blob, 0, Math.min(32, blob.size)), 0, blob.size);
    } catch (e) {
      // Four bytes "CCOB" that do not start a header are just data (a failing read is not ours to hide).
      if (!(e instanceof OffloadKitError)) throw e;
      return undefined;
    }
    const total = header.rawTotalSize;
    const usable = total !== undefined && total >= header.headerSize && total <= blob.size;
    // Version 1 has no total size: it runs to the end of its blob (the section), as LLVM reads it.
    const size = usable ? total : blob.size;
    return {
      blob,
      member: { offset: 0, header, dataOffset: header.headerSize, dataSize: size - header.headerSize, size, totalSizeIgnored: total !== undefined && !usable },
    };
  }

  /**
   * Finds the CCOBs that follow one another from `from` on (the next magic each time, as the walk itself
   * would find it) up to a bounded count and declared size, remembers them so the walk opens the same
   * member objects, and hands them to `prefetchCompressed`. Stops at anything that is not a CCOB.
   */
  private lookAhead(from: number, end: number, ctx: RegionContext): void {
    const found: CompressedAhead[] = [];
    const byOffset = new Map<number, CompressedAhead>();
    let declared = 0;
    let position = from;
    while (found.length < PREFETCH_MAX_COUNT && declared < PREFETCH_MAX_BYTES && end - position >= CCOB_MIN_SIZE) {
      const hit = this.nextMagic(ctx.window, position, end);
      if (hit === undefined || hit.kind !== "ccob" || end - hit.at < CCOB_MIN_SIZE) break;
      const next = this.ccobHeaderAt(hit.at, end, ctx);
      if (next === undefined) break;
      found.push(next);
      byOffset.set(hit.at, next);
      declared += next.member.header.uncompressedSize;
      position = hit.at + next.member.size;
    }
    this.ahead = { source: ctx.source, byOffset };
    if (found.length > 0) this.options.prefetchCompressed!(found);
  }

  /** Opens one CCOB (member offsets relative to `blob`, which starts at `base`) and walks its contents. */
  private compressed(blob: ByteSource, base: number, member: CcobMember, ctx: RegionContext): void {
    const at = base + member.offset;
    if (member.totalSizeIgnored) {
      this.problems.push({ offset: at, code: "CCOB_TOTAL_SIZE", message: `compressed bundle total size ${member.header.rawTotalSize} does not fit the input; read to the end, as LLVM 19 does` });
    }
    const open = this.options.openCompressed;
    if (open === undefined) {
      this.problems.push({ offset: at, code: "CCOB_NO_DECOMPRESSOR", message: "compressed offload bundle (CCOB); no decompressor given" });
      return;
    }
    if (ctx.depth >= MAX_DEPTH) {
      this.problems.push({ offset: at, code: "CCOB_NESTED", message: `compressed bundles nested more than ${MAX_DEPTH} deep are not read` });
      return;
    }
    let opened;
    try {
      opened = open(blob, member);
    } catch (e) {
      const problem = problemOf(e, base);
      this.problems.push(e instanceof OffloadKitError && e.offset === undefined ? { ...problem, offset: at } : problem);
      return;
    }
    try {
      const info: CompressedBundleInfo = {
        offset: at,
        size: member.size,
        version: member.header.version,
        method: compressionMethodName(member.header.method),
        declaredSize: member.header.uncompressedSize,
        decompressedSize: opened.source.size,
        storedHash: formatHash(member.header.hash),
        ...(opened.recalculatedHash !== undefined ? { recalculatedHash: formatHash(opened.recalculatedHash) } : {}),
      };
      if (opened.recalculatedHash !== undefined && opened.recalculatedHash !== member.header.hash) {
        this.problems.push({ offset: at, code: "CCOB_HASH_MISMATCH", message: `stored hash ${info.storedHash} does not match the contents (${info.recalculatedHash}); LLVM does not check it` });
      }
      if (opened.source.size < member.header.uncompressedSize) {
        this.problems.push({ offset: at, code: "CCOB_SHORT", message: `declares ${member.header.uncompressedSize} uncompressed bytes but holds ${opened.source.size}; LLVM accepts the shorter contents` });
      }
      const bundlesBefore = this.bundles.length;
      const problemsBefore = this.problems.length;
      this.region(0, opened.source.size, {
        section: ctx.section, member: ctx.member, source: opened.source, window: new Window(this.engine, opened.source),
        compressed: info, blobStart: true, depth: ctx.depth + 1,
      });
      for (let i = problemsBefore; i < this.problems.length; i++) {
        const p = this.problems[i]!;
        this.problems[i] = { ...p, message: `in the compressed bundle at ${at}: ${p.message}` };
      }
      if (this.bundles.length === bundlesBefore) {
        this.problems.push({ offset: at, code: "CCOB_NO_BUNDLE", message: `compressed bundle holds ${opened.source.size} bytes that are not an offload bundle` });
      }
    } finally {
      opened.close();
    }
  }

  private offloadRun(at: number, end: number, ctx: RegionContext): number {
    let read: OffloadBinaries;
    try {
      read = readOffloadBinaries(sliceSource(ctx.source, at, end - at), {
        engine: this.engine, decompress: this.options.decompressOffload, stopAtError: true,
      });
    } catch (e) {
      this.problems.push(problemOf(e, at));
      return at + 1;
    }
    if (read.binaries.length === 0) {
      const stopped = read.stopped!;
      this.problems.push({ offset: at, code: stopped.code, message: `offload binary: ${stopped.message}` });
      return at + 1;
    }
    const images = foundImages(read.images, at, this.imageIndex);
    this.imageIndex += images.length;
    const run: LocatedOffloadBinaries = withWhere({ offset: at, size: read.end, binaries: read.binaries.length, images }, ctx);
    this.offloadBinaries.push(run);
    this.options.onOffloadBinaries?.(run, read.images);
    return at + read.end;
  }
}

/** The images of a run of binaries that starts at `base` in the file, numbered from `firstIndex`. */
export function foundImages(images: readonly OffloadImage[], base: number, firstIndex: number): FoundOffloadImage[] {
  return images.map((image, i) => ({
    index: firstIndex + i,
    binaryOffset: base + image.binaryOffset,
    version: image.version,
    imageKind: image.imageKind,
    offloadKind: image.offloadKind,
    flags: image.flags,
    triple: image.triple,
    arch: image.arch,
    strings: [...image.strings],
    offset: image.compressed ? image.imageOffset : base + image.imageOffset,
    size: image.imageSize,
    compressed: image.compressed,
  }));
}

/** The ID an offload image is known by for `--targets` and reports: `<kind>-<triple>-<arch>`, triples of three fields given an empty environment. */
export function imageTargetId(image: { readonly offloadKind: number; readonly version?: number; readonly triple: string; readonly arch: string }): string {
  const triple = image.triple.split("-").length === 3 ? `${image.triple}-` : image.triple;
  return `${offloadKindText(image.offloadKind, image.version)}-${triple}-${image.arch}`;
}

/** Every bundle and offload binary in `input`, wherever it is held (see the module comment). */
export function locate(input: ByteSource | Uint8Array, options: LocateOptions = {}): Location {
  const source = input instanceof Uint8Array ? bytesSource(input) : input;
  const locator = new Locator(source, options);
  const container = locator.blob(0, source.size, {}, 0);
  return {
    size: source.size,
    container,
    bundles: locator.bundles,
    offloadBinaries: locator.offloadBinaries,
    problems: locator.problems,
    searched: locator.searched,
  };
}
