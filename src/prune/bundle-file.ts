/**
 * Bundle files: binary and text bundles, and compressed bundles (CCOB) holding either. Pruned, they are
 * what clang-offload-bundler 19 writes when bundling the kept entries in their original order: the
 * binary layout with the file's own `-bundle-align` (src/formats/bundle.ts `layoutBinaryBundle`), the
 * text framing with the file's comment style (src/formats/text-bundle.ts), and a CCOB re-encoded with
 * the same version, method and level (src/bundler/compressed.ts, LLVM's parameters).
 *
 * Two facts the files do not record are recovered:
 * - The alignment: the power of two up to 64 KiB whose layout reproduces every payload offset of the
 *   original (clang uses 4096 for HIP; the bundler's default is 1). Several reproduce a file only when
 *   every padding gap is zero (an alignment leaving a gap is the only one that reproduces it), and then
 *   the smallest, 1, is taken: a file with no gap at all is what -bundle-align=1 writes, while one written
 *   at a larger alignment has a gap before its first payload unless the header happens to end on that
 *   alignment (offsets 192, 2920, 5992 of a -bundle-align=1 file are all multiples of 8). A file no alignment
 *   reproduces (written by another tool) is rewritten with the largest power of two dividing all its
 *   offsets, and a note says so.
 * - The compression level: a CCOB header has no level field. The original contents are compressed again
 *   at LLVM's default for the method (zstd 3, zlib 6) and, for contents up to 1 MiB, at levels 1 to 12
 *   (zlib 1 to 9), with the original's framing; the level whose output equals the stored bytes is the level.
 *   When none does (another libzstd, LLVM's long-distance matching on a build without it, or a level
 *   outside the search), the default is used and a note says the level was assumed. `level` forces one.
 *
 * Browser-safe: everything is in memory and the codecs are handed in.
 */
import { OffloadKitError } from "../engine/errors.js";
import type { Codecs } from "../compress/codecs.js";
import { walkZstdFrames } from "../compress/zstd-frames.js";
import {
  DEFAULT_MAX_DECOMPRESSED_SIZE, DEFAULT_ZLIB_LEVEL, DEFAULT_ZSTD_LEVEL, ZSTD_FRAME_CHUNK, ccobBytes, compressBundleBytes, decodeCcobMemberBytes,
} from "../bundler/compressed.js";
import type { CompressionSettings } from "../bundler/compressed.js";
import { BUNDLE_MAGIC_SIZE, distinctEntries, isBinaryBundle, layoutBinaryBundle, readBinaryBundle, writeBinaryBundle } from "../formats/bundle.js";
import type { BundleEntry } from "../formats/bundle.js";
import { concatBytes } from "../formats/bytes.js";
import { CCOB_MIN_SIZE, CompressionMethod, compressionMethodName, isCompressedBundle, walkCcobs } from "../formats/ccob.js";
import type { CcobMember, CcobVersion } from "../formats/ccob.js";
import { detectTextComment, readTextBundle, writeTextBundle } from "../formats/text-bundle.js";
import type { TextComment } from "../formats/text-bundle.js";
import { bytesSource, readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { placeText, selectEntries } from "./outcome.js";
import type { PruneContext } from "./outcome.js";
import { materialize, planOf } from "./plan.js";
import { isReplaced, payloadBytes, pickBundle } from "./swap.js";
import type { ReplaceContext } from "./swap.js";
import type { OutputPlan, Piece } from "./plan.js";

export type PlainLayout =
  | { readonly kind: "binary"; readonly align: number; readonly exact: boolean }
  | { readonly kind: "text"; readonly comment: TextComment };

export interface PlainBundle {
  readonly layout: PlainLayout;
  /** Entries in file order, payloads as views into the input. */
  readonly entries: readonly { readonly id: string; readonly size: number; readonly data: Uint8Array }[];
}

/** Largest -bundle-align tried when recovering a file's alignment. */
const MAX_ALIGN = 64 * 1024;
/**
 * Contents up to this size are compressed at every usual level to find the stored one; larger ones at the
 * default only (the search is for small bundles: where the default does not match, usually nothing does,
 * because the libzstd differs; see the module comment).
 */
const LEVEL_SEARCH_MAX = 1024 * 1024;
const ZSTD_LEVELS = [3, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12];
const ZLIB_LEVELS = [6, 1, 2, 3, 4, 5, 7, 8, 9];

/** Is this the start of a bundle file of any kind (binary, text, compressed)? */
export function isBundleFile(head: Uint8Array): boolean {
  return isBinaryBundle(head) || detectTextComment(head) !== undefined || (head.length >= 4 && isCompressedBundle(head));
}

/** The -bundle-align that reproduces these payload offsets (smallest first; see the module comment), if any. */
export function recoverAlignment(entries: readonly BundleEntry[]): number | undefined {
  for (let align = 1; align <= MAX_ALIGN; align *= 2) {
    const layout = layoutBinaryBundle(entries, align);
    if (layout.offsets.every((offset, i) => offset === entries[i].offset)) return align;
  }
  return undefined;
}

function largestDividingPowerOfTwo(offsets: readonly number[]): number {
  let align = MAX_ALIGN;
  while (align > 1 && offsets.some((o) => o % align !== 0)) align /= 2;
  return align;
}

interface BinaryRead {
  readonly layout: PlainLayout & { readonly kind: "binary" };
  readonly entries: readonly BundleEntry[];
}

/** Reads a binary bundle's header through the engine window; undefined without the magic, an error naming `place` when damaged. */
function readBinaryHeader(source: ByteSource, place: string): BinaryRead | undefined {
  if (!isBinaryBundle(readExact(source, 0, Math.min(source.size, BUNDLE_MAGIC_SIZE)))) return undefined;
  const read = readBinaryBundle(source);
  if (read.kind === "none") {
    const problem = read.problem;
    throw new OffloadKitError(problem?.code ?? "BUNDLE_TRUNCATED",
      `${place}: ${problem?.message ?? `truncated bundle header: only ${source.size} bytes after the ${BUNDLE_MAGIC_SIZE}-byte magic`}`,
      { offset: problem?.offset ?? source.size, field: problem?.field ?? "entry count" });
  }
  const entries = distinctEntries(read.bundle.entries);
  const recovered = entries.length === read.bundle.entries.length ? recoverAlignment(entries) : undefined;
  const align = recovered ?? largestDividingPowerOfTwo(entries.map((e) => e.offset));
  return { layout: { kind: "binary", align, exact: recovered !== undefined }, entries };
}

/** Reads a plain bundle; undefined when the bytes are not one. A damaged binary header is an error naming `place`. */
export function readPlainBundle(bytes: Uint8Array, place: string): PlainBundle | undefined {
  const comment = detectTextComment(bytes.subarray(0, 64));
  if (comment !== undefined) {
    const text = readTextBundle(bytes, comment);
    return { layout: { kind: "text", comment }, entries: text.entries.map((e) => ({ id: e.id, size: e.size, data: bytes.subarray(e.offset, e.offset + e.size) })) };
  }
  const binary = readBinaryHeader(bytesSource(bytes), place);
  if (binary === undefined) return undefined;
  return { layout: binary.layout, entries: binary.entries.map((e) => ({ id: e.id, size: e.size, data: bytes.subarray(e.offset, e.offset + e.size) })) };
}

/**
 * Prunes a binary bundle read through `source` without reading its payloads: the plan is the new header and
 * the kept payloads' ranges, each after the zeros its alignment needs. Undefined when nothing goes.
 */
export function planBinaryBundlePrune(source: ByteSource, ctx: PruneContext, where: string): OutputPlan | undefined {
  const place = placeText(ctx.name, where);
  const binary = readBinaryHeader(source, place);
  if (binary === undefined) throw new OffloadKitError("NOT_A_BUNDLE", `${place}: not an offload bundle`, { offset: 0, field: "magic" });
  const kept = selectEntries(binary.entries, ctx, where);
  if (kept.length === binary.entries.length) return undefined;
  if (!binary.layout.exact) {
    ctx.notes.push(`${place}: its payload offsets match no -bundle-align clang-offload-bundler uses; rewritten with alignment ${binary.layout.align}`);
  }
  const layout = layoutBinaryBundle(kept, binary.layout.align);
  const pieces: Piece[] = [{ bytes: layout.header }];
  let at = layout.header.length;
  kept.forEach((entry, i) => {
    if (layout.offsets[i] > at) pieces.push({ zeros: layout.offsets[i] - at });
    pieces.push({ offset: entry.offset, size: entry.size });
    at = layout.offsets[i] + entry.size;
  });
  return planOf(pieces);
}

/** Whether a source starts a plain binary bundle (one that can be pruned without reading it whole). */
export function startsBinaryBundle(source: ByteSource): boolean {
  return isBinaryBundle(readExact(source, 0, Math.min(source.size, BUNDLE_MAGIC_SIZE)));
}

export function writePlainBundle(layout: PlainLayout, entries: readonly { id: string; data: Uint8Array }[]): Uint8Array {
  return layout.kind === "text" ? writeTextBundle(layout.comment, entries) : writeBinaryBundle(entries, layout.align);
}

/** Prunes one plain bundle (`where` names it inside the file for messages). */
export function prunePlainBundle(bytes: Uint8Array, ctx: PruneContext, where: string): Uint8Array {
  const source = bytesSource(bytes);
  if (startsBinaryBundle(source)) {
    const plan = planBinaryBundlePrune(source, ctx, where);
    return plan === undefined ? bytes : materialize(plan, source, ctx.codecs);
  }
  const place = placeText(ctx.name, where);
  const bundle = readPlainBundle(bytes, place);
  if (bundle === undefined) throw new OffloadKitError("NOT_A_BUNDLE", `${place}: not an offload bundle`, { offset: 0, field: "magic" });
  const kept = selectEntries(bundle.entries, ctx, where);
  // Nothing goes: the bundle stays byte for byte, whoever wrote it.
  if (kept.length === bundle.entries.length) return bytes;
  return writePlainBundle(bundle.layout, kept);
}

function readAtOf(bytes: Uint8Array) {
  return (position: number, length: number) => bytes.subarray(position, position + length);
}

/** The CCOBs of a file, walked by their header sizes; anything after them but zero padding is an error. */
export function ccobMembers(bytes: Uint8Array, place: string): readonly CcobMember[] {
  const walk = walkCcobs(readAtOf(bytes), bytes.length);
  if (walk.trailing !== undefined) {
    throw new OffloadKitError("CCOB_TRAILING", `${place}: ${walk.trailing.size} bytes after the last compressed bundle at offset ${walk.trailing.offset} are not a compressed bundle`,
      { offset: walk.trailing.offset, field: "magic" });
  }
  return walk.members;
}

function decodeMember(bytes: Uint8Array, member: CcobMember, codecs: Codecs, place: string): Uint8Array {
  try {
    return decodeCcobMemberBytes(readAtOf(bytes), member, codecs, { maxDecompressedSize: DEFAULT_MAX_DECOMPRESSED_SIZE });
  } catch (e) {
    if (e instanceof OffloadKitError) throw new OffloadKitError(e.code, `${place}: ${e.message}`, { offset: e.offset, field: e.field, cause: e });
    throw e;
  }
}

/** How the member's stream was cut: one zstd frame (LLVM), or frames of ZSTD_FRAME_CHUNK (our writer, for large bundles). */
function frameSizeOf(bytes: Uint8Array, member: CcobMember): number {
  if (member.header.method !== CompressionMethod.Zstd) return Infinity;
  try {
    return walkZstdFrames(readAtOf(bytes), member.dataOffset, member.dataSize).length > 1 ? ZSTD_FRAME_CHUNK : Infinity;
  } catch {
    return Infinity;
  }
}

function encode(contents: Uint8Array, codecs: Codecs, settings: CompressionSettings, frameSize: number): Uint8Array {
  return ccobBytes(compressBundleBytes(contents, codecs, settings, frameSize));
}

export interface StoredLevel {
  readonly level: number;
  /** Re-compressing the contents at `level` gave the stored bytes. */
  readonly matched: boolean;
}

/** The level a CCOB member was written at, found by compressing its contents again (see the module comment). */
export function storedLevel(bytes: Uint8Array, member: CcobMember, contents: Uint8Array, codecs: Codecs): StoredLevel {
  const { version, method } = member.header;
  const candidates = method === CompressionMethod.Zstd ? ZSTD_LEVELS : ZLIB_LEVELS;
  const frameSize = frameSizeOf(bytes, member);
  const stored = bytes.subarray(member.offset, member.offset + member.size);
  const tries = contents.length <= LEVEL_SEARCH_MAX ? candidates : candidates.slice(0, 1);
  for (const level of tries) {
    const again = encode(contents, codecs, { version, method, level }, frameSize);
    if (again.length === stored.length && again.every((b, i) => b === stored[i])) return { level, matched: true };
  }
  return { level: method === CompressionMethod.Zstd ? DEFAULT_ZSTD_LEVEL : DEFAULT_ZLIB_LEVEL, matched: false };
}

/** Prunes a bundle file of any kind. */
export function pruneBundleFile(bytes: Uint8Array, ctx: PruneContext, where = ""): Uint8Array {
  if (!(bytes.length >= CCOB_MIN_SIZE && isCompressedBundle(bytes))) return prunePlainBundle(bytes, ctx, where);
  return editCcobMembers(bytes, ctx, where, (contents, inner) => prunePlainBundle(contents, ctx, inner));
}

/**
 * Edits the plain bundle inside each CCOB member of `bytes` with `edit` (which returns its argument when it
 * changes nothing) and re-encodes the changed ones with the member's version, method and level (found again,
 * see the module comment, unless `ctx.level` forces one). Returns `bytes` itself when nothing changed.
 */
export function editCcobMembers(
  bytes: Uint8Array,
  ctx: { readonly name: string; readonly codecs: Codecs; readonly notes: string[]; readonly level?: number },
  where: string,
  edit: (contents: Uint8Array, where: string) => Uint8Array,
): Uint8Array {
  const members = ccobMembers(bytes, placeText(ctx.name, where));
  let changed = false;
  const outputs = members.map((member, i) => {
    const inner = members.length === 1 ? where : [where, `compressed bundle ${i}`].filter((w) => w !== "").join(", ");
    const place = placeText(ctx.name, inner);
    const contents = decodeMember(bytes, member, ctx.codecs, place);
    const edited = edit(contents, inner);
    if (edited === contents) return bytes.subarray(member.offset, member.offset + member.size);
    changed = true;
    const { version, method } = member.header;
    let level = ctx.level;
    if (level === undefined) {
      const found = storedLevel(bytes, member, contents, ctx.codecs);
      level = found.level;
      if (!found.matched) {
        ctx.notes.push(`${place}: compressing the original contents again at ${compressionMethodName(method)} level ${level} (or any usual level) does ` +
          `not reproduce the stored bytes, so the level it was written at is unknown; re-encoded at level ${level}`);
      }
    }
    return encode(edited, ctx.codecs, { version, method, level }, frameSizeOf(bytes, member));
  });
  if (!changed) return bytes;
  return outputs.length === 1 ? outputs[0] : concatBytes(outputs);
}

/**
 * A binary bundle read through `source` with the payload of entry `id` taken from `payload` instead: the
 * new header (same entry order and recovered alignment) and ranges of the input and of `payload`.
 * Undefined when the bundle has no entry `id`.
 */
export function planBinaryBundleReplace(source: ByteSource, id: string, payload: ByteSource, place: string): OutputPlan | undefined {
  const binary = readBinaryHeader(source, place);
  if (binary === undefined) throw new OffloadKitError("NOT_A_BUNDLE", `${place}: not an offload bundle`, { offset: 0, field: "magic" });
  if (!binary.entries.some((e) => e.id === id)) return undefined;
  const entries = binary.entries.map((e) => (e.id === id ? { id, size: payload.size } : e));
  const layout = layoutBinaryBundle(entries, binary.layout.align);
  const pieces: Piece[] = [{ bytes: layout.header }];
  let at = layout.header.length;
  binary.entries.forEach((entry, i) => {
    if (layout.offsets[i] > at) pieces.push({ zeros: layout.offsets[i] - at });
    pieces.push(entry.id === id ? { offset: 0, size: payload.size, source: payload } : { offset: entry.offset, size: entry.size });
    at = layout.offsets[i] + entries[i].size;
  });
  return planOf(pieces);
}

/** `replace` in a plain binary bundle read through `source`, as a plan; undefined when it has no such entry. */
export function planReplaceInBinaryBundle(source: ByteSource, ctx: ReplaceContext, where: string): OutputPlan | undefined {
  const plan = planBinaryBundleReplace(source, ctx.entry, ctx.payload, placeText(ctx.name, where));
  if (plan !== undefined) isReplaced(ctx, ctx.entry, where);
  return plan;
}

/**
 * `replace` in a plain bundle held in memory: a binary one keeps its order and recovered alignment, a text
 * one its comment style (what clang-offload-bundler writes for the same entries). `bytes` itself without the entry.
 */
export function replaceInPlainBundle(bytes: Uint8Array, ctx: ReplaceContext, where: string): Uint8Array {
  const source = bytesSource(bytes);
  if (startsBinaryBundle(source)) {
    const plan = planReplaceInBinaryBundle(source, ctx, where);
    return plan === undefined ? bytes : materialize(plan, source, ctx.codecs);
  }
  const place = placeText(ctx.name, where);
  const bundle = readPlainBundle(bytes, place);
  if (bundle === undefined) throw new OffloadKitError("NOT_A_BUNDLE", `${place}: not an offload bundle`, { offset: 0, field: "magic" });
  let found = false;
  const entries = bundle.entries.map((entry) => {
    if (!isReplaced(ctx, entry.id, where)) return entry;
    found = true;
    return { id: entry.id, size: ctx.payload.size, data: payloadBytes(ctx) };
  });
  return found ? writePlainBundle(bundle.layout, entries) : bytes;
}

/**
 * `replace` in a bundle file of any kind. Each compressed bundle of a CCOB file is a bundle of its own for
 * `--bundle`, re-encoded as `prune` re-encodes it; `counted` says the caller has numbered (and picked) this
 * one already (a linked ELF file's fat binary). `bytes` itself when nothing changes.
 */
export function replaceInBundleFile(bytes: Uint8Array, ctx: ReplaceContext, where = "", counted = false): Uint8Array {
  const plain = (contents: Uint8Array, inner: string) => (counted || pickBundle(ctx, inner) ? replaceInPlainBundle(contents, ctx, inner) : contents);
  if (!(bytes.length >= CCOB_MIN_SIZE && isCompressedBundle(bytes))) return plain(bytes, where);
  return editCcobMembers(bytes, ctx, where, plain);
}

export interface CompressFileOptions {
  /** CCOB version: 2 (what LLVM 19 writes and reads; the default) or 3 (LLVM 22's). */
  readonly version?: CcobVersion;
  /** zstd level (default 3, LLVM's). */
  readonly level?: number;
  readonly codecs: Codecs;
}

/**
 * `clang-offload-bundler -compress` of a plain bundle file, as a plan over `source` (the whole file, to be
 * compressed); undefined for a compressed one, which stays as it is.
 */
export function planCompressBundleFile(source: ByteSource, options: Omit<CompressFileOptions, "codecs">, place: string): OutputPlan | undefined {
  const head = readExact(source, 0, Math.min(source.size, 64));
  if (head.length >= CCOB_MIN_SIZE && isCompressedBundle(head)) return undefined;
  if (detectTextComment(head) === undefined && readBinaryHeader(source, place) === undefined) {
    throw new OffloadKitError("NOT_A_BUNDLE", `${place}: not an offload bundle`, { offset: 0, field: "magic" });
  }
  return planOf([{ offset: 0, size: source.size }], { version: options.version ?? 2, method: CompressionMethod.Zstd, level: options.level ?? DEFAULT_ZSTD_LEVEL });
}

/** `clang-offload-bundler -compress` of a plain bundle file; a compressed one is returned as it is (undefined). */
export function compressBundleFile(bytes: Uint8Array, options: CompressFileOptions, place: string): Uint8Array | undefined {
  const source = bytesSource(bytes);
  const plan = planCompressBundleFile(source, options, place);
  return plan === undefined ? undefined : materialize(plan, source, options.codecs);
}

/** The plain bundle(s) inside a compressed bundle file (concatenated, in order); undefined for a plain file. */
export function decompressBundleFile(bytes: Uint8Array, codecs: Codecs, place: string): Uint8Array | undefined {
  if (!(bytes.length >= CCOB_MIN_SIZE && isCompressedBundle(bytes))) return undefined;
  const members = ccobMembers(bytes, place);
  const contents = members.map((member) => decodeMember(bytes, member, codecs, place));
  return contents.length === 1 ? contents[0] : concatBytes(contents);
}
