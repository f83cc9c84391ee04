/**
 * Finding every offload bundle in a file: one that starts at byte 0 (binary, text or compressed), or
 * binary bundles embedded anywhere (a host executable's .hip_fatbin section, a library). Embedded
 * bundles are found by the engine's magic scan; each is parsed with the bundle's own header as the
 * authority on its size, and scanning resumes after it, so payload bytes are not re-scanned.
 *
 * Offload binaries (0x10FF10AD, clang-offload-packager's format) are found the same way, anywhere in the
 * file: at each magic, the binaries that follow one another from there are read until one cannot be (a
 * section's end, say); images are numbered across the file. See scanOffloadBinaries.
 */
import type { Engine } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import { findFirst } from "../engine/find.js";
import { engine as defaultEngine } from "../engine/select.js";
import { bytesSource, readExact, sliceSource } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { Window } from "../engine/window.js";
import { BUNDLE_MAGIC_BYTES, readBinaryBundle } from "../formats/bundle.js";
import type { BundleProblem } from "../formats/bundle.js";
import { detectTextComment, readTextBundle } from "../formats/text-bundle.js";
import { CCOB_MIN_SIZE, compressionMethodName, formatHash, isCompressedBundle, walkCcobs } from "../formats/ccob.js";
import type { CcobMember } from "../formats/ccob.js";
import { OFFLOAD_BINARY_MAGIC_BYTES, readOffloadBinaries } from "../formats/offload-binary.js";
import type { Decompressor } from "../formats/offload-binary.js";

export interface FoundEntry {
  readonly id: string;
  /** Absolute position of the payload in the file. */
  readonly offset: number;
  readonly size: number;
  /** Largest power of two (up to 4096) dividing the payload's offset from the bundle start. */
  readonly align: number;
}

export interface FoundBundle {
  readonly format: "binary" | "text";
  /** Where the bundle starts in the file. */
  readonly offset: number;
  /** Bytes the bundle spans (header to last payload byte). */
  readonly size: number;
  /** Text bundles: the comment that starts marker lines. */
  readonly comment?: string;
  /** Binary bundles: the alignment every payload offset is a multiple of (largest power of two up to 4096). */
  readonly align?: number;
  readonly entries: readonly FoundEntry[];
  /**
   * Set when the bundle came out of a compressed bundle (CCOB): `offset` and `size` above and the
   * entries' offsets are then positions in the decompressed bytes.
   */
  readonly compressed?: CompressedBundleInfo;
}

export interface CompressedBundleInfo {
  /** Where the CCOB starts in the file, and the bytes it spans (header + compressed stream). */
  readonly offset: number;
  readonly size: number;
  readonly version: number;
  readonly method: "zlib" | "zstd";
  /** As declared in the header, and as actually decompressed (LLVM accepts fewer). */
  readonly declaredSize: number;
  readonly decompressedSize: number;
  readonly storedHash: string;
  /** The truncated MD5 of the decompressed bytes, when the decompressor computed it. */
  readonly recalculatedHash?: string;
}

/** Decompresses one CCOB of the input (src/node/decompress.ts in Node); scan.ts itself stays browser-safe. */
export type OpenCompressed = (
  source: ByteSource,
  member: CcobMember,
) => { readonly source: ByteSource; readonly recalculatedHash?: bigint; close(): void };

export interface ScanOptions {
  /** Without it, compressed bundles are reported as problems ("compressed; no decompressor given"). */
  readonly openCompressed?: OpenCompressed;
  /** Inflates compressed (v3) offload binaries; without it they are reported as problems. */
  readonly decompressOffload?: Decompressor;
}

/** One image of an offload binary found in a file. */
export interface FoundOffloadImage {
  /** Running index over the file's images (what llvm-objdump --offloading prints as [N]). */
  readonly index: number;
  /** Where its binary starts in the file. */
  readonly binaryOffset: number;
  readonly version: number;
  readonly imageKind: number;
  readonly offloadKind: number;
  readonly flags: number;
  readonly triple: string;
  readonly arch: string;
  /** Every key/value pair (byte strings), in stored order, a repeated key once with its last value. */
  readonly strings: readonly (readonly [string, string])[];
  /** Position of the image in the file; in the inflated bytes when `compressed`. */
  readonly offset: number;
  readonly size: number;
  readonly compressed: boolean;
}

/** Offload binaries that follow one another from one magic. */
export interface FoundOffloadBinaries {
  readonly offset: number;
  /** Bytes from the first binary's start to the last one's end. */
  readonly size: number;
  readonly binaries: number;
  readonly images: readonly FoundOffloadImage[];
}

export interface ScanProblem {
  /** Where the bundle that could not be read starts. */
  readonly offset: number;
  readonly code: string;
  readonly message: string;
}

export interface ScanReport {
  readonly size: number;
  readonly bundles: readonly FoundBundle[];
  /** Offload binaries found in the file (absent where the file is a text or compressed bundle). */
  readonly offloadBinaries?: readonly FoundOffloadBinaries[];
  /** Magic occurrences that did not lead to a readable bundle. */
  readonly problems: readonly ScanProblem[];
}

function alignmentOf(offset: number): number {
  let align = 1;
  while (align < 4096 && offset % (align * 2) === 0) align *= 2;
  return align;
}

function binaryAt(source: ByteSource, base: number, engine: Engine): { bundle?: FoundBundle; problem?: BundleProblem | ScanProblem } {
  const slice = sliceSource(source, base, source.size - base);
  try {
    const read = readBinaryBundle(slice, { engine });
    if (read.kind === "none") return { problem: read.problem };
    const entries = read.bundle.entries.map((e) => ({
      id: e.id,
      offset: base + e.offset,
      size: e.size,
      align: alignmentOf(e.offset),
    }));
    const align = entries.length === 0 ? 1 : Math.min(...entries.map((e) => e.align));
    return { bundle: { format: "binary", offset: base, size: read.bundle.extent, align, entries } };
  } catch (e) {
    if (e instanceof OffloadKitError) return { problem: { offset: base, code: e.code, message: e.message } };
    throw e;
  }
}

/**
 * The CCOBs of an input that starts with one, walked by their header sizes; each is decompressed and
 * scanned. Checks LLVM does not make (it accepts both) are reported as problems: a stored hash that
 * differs from the contents, fewer bytes than declared, a total size that had to be ignored.
 */
function scanCompressed(source: ByteSource, engine: Engine, openCompressed: OpenCompressed): ScanReport {
  const bundles: FoundBundle[] = [];
  const problems: ScanProblem[] = [];
  const readAt = (position: number, length: number) => readExact(source, position, Math.max(0, Math.min(length, source.size - position)));
  const walk = walkCcobs(readAt, source.size);
  for (const member of walk.members) {
    const at = member.offset;
    if (member.totalSizeIgnored) {
      problems.push({ offset: at, code: "CCOB_TOTAL_SIZE", message: `compressed bundle total size ${member.header.rawTotalSize} does not fit the input; read to the end, as LLVM 19 does` });
    }
    let opened;
    try {
      opened = openCompressed(source, member);
    } catch (e) {
      if (!(e instanceof OffloadKitError)) throw e;
      problems.push({ offset: e.offset ?? at, code: e.code, message: e.message });
      continue;
    }
    try {
      const inner = scanBundles(opened.source, engine);
      const compressed: CompressedBundleInfo = {
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
        problems.push({ offset: at, code: "CCOB_HASH_MISMATCH", message: `stored hash ${compressed.storedHash} does not match the contents (${compressed.recalculatedHash}); LLVM does not check it` });
      }
      if (opened.source.size < member.header.uncompressedSize) {
        problems.push({ offset: at, code: "CCOB_SHORT", message: `declares ${member.header.uncompressedSize} uncompressed bytes but holds ${opened.source.size}; LLVM accepts the shorter contents` });
      }
      if (inner.bundles.length === 0) {
        problems.push({ offset: at, code: "CCOB_NO_BUNDLE", message: `compressed bundle holds ${opened.source.size} bytes that are not an offload bundle` });
      }
      for (const bundle of inner.bundles) bundles.push({ ...bundle, compressed });
      for (const problem of inner.problems) problems.push({ ...problem, message: `in the compressed bundle at ${at}: ${problem.message}` });
    } finally {
      opened.close();
    }
  }
  if (walk.trailing !== undefined) {
    problems.push({ offset: walk.trailing.offset, code: "CCOB_TRAILING", message: `${walk.trailing.size} bytes after the last compressed bundle are not a compressed bundle` });
  }
  return { size: source.size, bundles, problems };
}

/** Every bundle in `input`: one at byte 0 (compressed ones decompressed), or all binary bundles embedded in it. */
export function scanBundles(input: ByteSource | Uint8Array, engine: Engine = defaultEngine(), options: ScanOptions = {}): ScanReport {
  const source = input instanceof Uint8Array ? bytesSource(input) : input;
  const head = readExact(source, 0, Math.min(source.size, 64));
  if (source.size >= CCOB_MIN_SIZE && isCompressedBundle(head)) {
    if (options.openCompressed !== undefined) return scanCompressed(source, engine, options.openCompressed);
    return { size: source.size, bundles: [], problems: [{ offset: 0, code: "CCOB_NO_DECOMPRESSOR", message: "compressed offload bundle (CCOB); no decompressor given" }] };
  }
  const comment = detectTextComment(head);
  if (comment !== undefined) {
    const text = readTextBundle(source, comment, { engine });
    const entries = text.entries.map((e) => ({ id: e.id, offset: e.offset, size: e.size, align: 1 }));
    return { size: source.size, bundles: [{ format: "text", offset: 0, size: text.extent, comment, entries }], problems: [] };
  }
  const bundles: FoundBundle[] = [];
  const problems: ScanProblem[] = [];
  const w = new Window(engine, source);
  let from = 0;
  for (;;) {
    const base = findFirst(w, BUNDLE_MAGIC_BYTES, from);
    if (base < 0) break;
    const { bundle, problem } = binaryAt(source, base, engine);
    if (bundle !== undefined) {
      bundles.push(bundle);
      // The header is the authority on the bundle's size; its payloads are not searched again.
      from = base + Math.max(bundle.size, BUNDLE_MAGIC_BYTES.length);
    } else {
      if (problem !== undefined) problems.push({ offset: base, code: problem.code, message: problem.message });
      from = base + 1;
    }
  }
  const offload = scanOffloadBinaries(source, engine, options);
  return { size: source.size, bundles, offloadBinaries: offload.found, problems: [...problems, ...offload.problems] };
}

/**
 * Every run of offload binaries in `input`: at each magic, the binaries back to back from there, until the
 * end or one that cannot be read. A magic where not even one binary can be read is a problem; the end of a
 * run is not (a `.llvm.offloading` section is followed by other data). Scanning resumes after each run.
 */
export function scanOffloadBinaries(
  input: ByteSource | Uint8Array, engine: Engine = defaultEngine(), options: ScanOptions = {},
): { found: FoundOffloadBinaries[]; problems: ScanProblem[] } {
  const source = input instanceof Uint8Array ? bytesSource(input) : input;
  const found: FoundOffloadBinaries[] = [];
  const problems: ScanProblem[] = [];
  const w = new Window(engine, source);
  let from = 0;
  let index = 0;
  for (;;) {
    const base = findFirst(w, OFFLOAD_BINARY_MAGIC_BYTES, from);
    if (base < 0) break;
    const read = readOffloadBinaries(sliceSource(source, base, source.size - base), {
      engine, decompress: options.decompressOffload, stopAtError: true,
    });
    if (read.binaries.length === 0) {
      const stopped = read.stopped!;
      problems.push({ offset: base, code: stopped.code, message: `offload binary: ${stopped.message}` });
      from = base + 1;
      continue;
    }
    const images = read.images.map((image) => ({
      index: index++,
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
    found.push({ offset: base, size: read.end, binaries: read.binaries.length, images });
    from = base + read.end;
  }
  return { found, problems };
}
