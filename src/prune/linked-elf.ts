/**
 * Linked ELF executables and shared libraries: `.hip_fatbin` holds one bundle or CCOB per translation unit,
 * reached through `__hip_fatbin_wrapper` pointers. Each of them is edited by the same code as a bundle file
 * (./bundle-file.ts: the selection, the empty-bundle rule, the recovered alignment and compression level;
 * `replace`'s swap, each fat binary one bundle for `--bundle`), and the ELF editor (src/elf-edit/) packs the
 * results, updates every pointer and frees the whole pages that become empty. Every fat binary stays (each is
 * registered by a constructor, so none can go without a dangling pointer); `--allow-empty` leaves one with no
 * device entry.
 *
 * Nothing reads the file whole: the editor reads headers, tables and bundle headers; a pruned plain bundle is
 * its new header and ranges of the input (./plan.ts `planSource`, expanded into the file's plan); a CCOB to
 * prune and a plain bundle to compress are read, one at a time, while planning, and only the (compressed)
 * result is kept until it is written (in Node, compress hands every plain bundle to a BundleCompressor, which
 * compresses them on worker threads into a temporary file instead); a CCOB to decompress is decoded while
 * planning for its size and again when written (`decodedWhenRead`). The plan returned copies every other byte
 * from the input.
 *
 * Recognition: an ELF file whose e_type is ET_EXEC or ET_DYN and which has program headers (e_phnum at
 * byte 44 of ELF32 headers, 56 of ELF64 ones; gABI "ELF Header"). Relocatable objects (ET_REL, no program
 * headers) are fat objects or `.llvm.offloading` holders, handled elsewhere.
 */
import { OffloadKitError } from "../engine/errors.js";
import { isElf } from "../formats/elf.js";
import { bytesSource, readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { outputPieces, planHipFatbinRewriteOf } from "../elf-edit/rewrite.js";
import type { FatbinBundle } from "../elf-edit/hip-fatbin.js";
import type { CompressionSettings } from "../bundler/compressed.js";
import {
  compressBundleFile, decompressBundleFile, planBinaryBundlePrune, planCompressBundleFile, planReplaceInBinaryBundle, pruneBundleFile, replaceInBundleFile,
} from "./bundle-file.js";
import type { CompressContext } from "./containers.js";
import { placeText } from "./outcome.js";
import { pickBundle } from "./swap.js";
import type { ReplaceContext } from "./swap.js";
import type { PruneContext } from "./outcome.js";
import { planNvLinkedElfPrune, planNvLinkedElfTransform } from "./nv-linked-elf.js";
import { materialize, pieceSize, planOf, planSource } from "./plan.js";
import type { OutputPlan, Piece } from "./plan.js";

const ET_EXEC = 2;
const ET_DYN = 3;

export function isLinkedElf(head: Uint8Array): boolean {
  if (!isElf(head) || head.length < 64) return false;
  const is64 = head[4] === 2;
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const little = head[5] !== 2;
  const type = view.getUint16(16, little);
  const phnum = view.getUint16(is64 ? 56 : 44, little);
  return (type === ET_EXEC || type === ET_DYN) && phnum > 0;
}

export type LinkedElfOperation = "prune" | "compress" | "decompress" | "replace";

/**
 * For prune, the PruneContext (its outcomes record every entry); for compress and decompress, the
 * CompressContext; for replace, the ReplaceContext.
 */
export type LinkedElfContext = (PruneContext | CompressContext | ReplaceContext) & { readonly name: string; readonly notes: string[] };

/** Where a fat binary is, for messages and outcomes. */
function bundlePlace(bundle: FatbinBundle, where: string): string {
  return [where, `fat binary ${bundle.index}`].filter((w) => w !== "").join(", ");
}

/**
 * The pieces of each planned fat binary (./plan.ts `planSource`) as pieces of the input: the ranges of the
 * bundle moved by its file offset. Lets the plan of the whole file name input ranges, made bytes and zeros
 * only (and the payloads `replace` takes from elsewhere), so a browser puts the output together from slices
 * of the File (src/browser/worker.ts) and Node copies straight from the input.
 */
type Expansions = Map<ByteSource, readonly Piece[]>;

function plannedBundle(plan: OutputPlan, bundle: FatbinBundle, expansions: Expansions): ByteSource {
  const source = planSource(plan, bundle.source);
  expansions.set(source, plan.pieces.map((piece): Piece => ("offset" in piece && piece.source === undefined ? { offset: piece.offset + bundle.fileOffset, size: piece.size } : piece)));
  return source;
}

/** The pieces making bytes [from, from + length) of an expanded fat binary. */
function expandRange(pieces: readonly Piece[], from: number, length: number): Piece[] {
  const out: Piece[] = [];
  let at = 0;
  const end = from + length;
  for (const piece of pieces) {
    const size = pieceSize(piece);
    const lo = Math.max(from, at);
    const hi = Math.min(end, at + size);
    if (lo < hi) {
      const skip = lo - at;
      const n = hi - lo;
      out.push("bytes" in piece ? { bytes: piece.bytes.subarray(skip, skip + n) } : "zeros" in piece ? { zeros: n } : { offset: piece.offset + skip, size: n, source: piece.source });
    }
    at += size;
    if (at >= end) break;
  }
  return out;
}

/** The new contents of one fat binary, or undefined when the operation leaves it as it is. */
function editBundle(operation: LinkedElfOperation, bundle: FatbinBundle, ctx: LinkedElfContext, where: string, expansions: Expansions): ByteSource | undefined {
  const inner = bundlePlace(bundle, where);
  const place = placeText(ctx.name, inner);
  if (operation === "prune") {
    const prune = ctx as PruneContext;
    if (bundle.format === "bundle") {
      const plan = planBinaryBundlePrune(bundle.source, prune, inner);
      return plan === undefined ? undefined : plannedBundle(plan, bundle, expansions);
    }
    const bytes = readExact(bundle.source, 0, bundle.size);
    const pruned = pruneBundleFile(bytes, prune, inner);
    return pruned === bytes ? undefined : bytesSource(pruned);
  }
  if (operation === "replace") {
    const replace = ctx as ReplaceContext;
    // Fat binaries are met in index order: --bundle=N is fat binary N.
    if (!pickBundle(replace, inner)) return undefined;
    if (bundle.format === "bundle") {
      const plan = planReplaceInBinaryBundle(bundle.source, replace, inner);
      return plan === undefined ? undefined : plannedBundle(plan, bundle, expansions);
    }
    const bytes = readExact(bundle.source, 0, bundle.size);
    const replaced = replaceInBundleFile(bytes, replace, inner, true);
    return replaced === bytes ? undefined : bytesSource(replaced);
  }
  const compress = ctx as CompressContext;
  if (operation === "compress") {
    if (bundle.format !== "bundle") return undefined;
    const bytes = readExact(bundle.source, 0, bundle.size);
    const compressed = compressBundleFile(bytes, { version: compress.version, level: compress.level, codecs: compress.codecs }, place);
    return compressed === undefined ? undefined : bytesSource(compressed);
  }
  if (bundle.format !== "ccob") return undefined;
  const decode = () => decompressBundleFile(readExact(bundle.source, 0, bundle.size), compress.codecs, place);
  // Decoded once now (a damaged CCOB fails the plan, dry runs included) for its size, then dropped.
  const plain = decode();
  return plain === undefined ? undefined : decodedWhenRead(plain, decode);
}

/** Decoded bytes kept from planning: the ELF editor reads each replacement's magic before writing. */
const HEAD = 4096;

/**
 * The contents of a CCOB, decoded again when the output is written and dropped once its last byte is
 * read: the writer reads each fat binary once, in order, so a decompressed library is held one fat
 * binary at a time (librocsparse0's 111 would be 1.2 GB at once). Reads within the first HEAD bytes
 * (the editor's check of each replacement while planning) are answered from a copy kept from planning.
 */
function decodedWhenRead(plain: Uint8Array, decode: () => Uint8Array | undefined): ByteSource {
  const size = plain.length;
  const head = plain.slice(0, HEAD);
  let held: Uint8Array | undefined;
  return {
    size,
    read(dest, position) {
      const n = Math.max(0, Math.min(dest.length, size - position));
      if (held === undefined && position + n <= head.length) {
        dest.set(head.subarray(position, position + n));
        return n;
      }
      if (held === undefined) {
        held = decode();
        if (held?.length !== size) throw new OffloadKitError("INTERNAL", `a compressed bundle decoded to ${size} bytes, then to ${held?.length}`);
      }
      dest.set(held.subarray(position, position + n));
      if (position + n >= size) held = undefined;
      return n;
    },
  };
}

/**
 * Compresses every bundle given (each into one CCOB, as `compressBundleFile` would) and returns a source
 * over each result, in order: how a front end with threads and files compresses a library's fat binaries
 * in parallel without holding them (src/compress/node/compress-spool.ts).
 */
export type BundleCompressor = (bundles: readonly { readonly source: ByteSource; readonly settings: CompressionSettings }[]) => ByteSource[];

let bundleCompressor: BundleCompressor | undefined;

/**
 * Runs `run` with `compressor` compressing linked libraries' fat binaries. A scope rather than a context
 * field because the commands build their contexts through the browser-safe API (./index.ts) and only the
 * Node file layer (./node.ts) owns temporary files and worker threads.
 */
export function withBundleCompressor<T>(compressor: BundleCompressor, run: () => T): T {
  const outer = bundleCompressor;
  bundleCompressor = compressor;
  try {
    return run();
  } finally {
    bundleCompressor = outer;
  }
}

/**
 * Compress with a BundleCompressor: the fat binaries are listed and checked first (a pass of the editor
 * that changes nothing), compressed all at once, then packed.
 */
function compressedBundles(source: ByteSource, ctx: CompressContext, where: string, compressor: BundleCompressor): (bundle: FatbinBundle) => ByteSource | undefined {
  const todo: { index: number; source: ByteSource; settings: CompressionSettings }[] = [];
  planHipFatbinRewriteOf(source, {
    bundles: (bundle) => {
      if (bundle.format !== "bundle") return undefined;
      const plan = planCompressBundleFile(bundle.source, { version: ctx.version, level: ctx.level }, placeText(ctx.name, bundlePlace(bundle, where)));
      if (plan?.compress !== undefined) todo.push({ index: bundle.index, source: bundle.source, settings: plan.compress });
      return undefined;
    },
  });
  const results = compressor(todo);
  const byIndex = new Map(todo.map((t, i) => [t.index, results[i]]));
  return (bundle) => byIndex.get(bundle.index);
}

/**
 * The edit of a linked ELF file, planned from the source: every fat binary edited, then packed by the
 * ELF editor. "unchanged" when no fat binary changes.
 */
export function planLinkedElf(operation: LinkedElfOperation, source: ByteSource, ctx: LinkedElfContext, where: string): OutputPlan | "unchanged" {
  const nv = operation === "prune" ? planNvLinkedElfPrune(source, ctx as PruneContext, where)
    // NVIDIA entries are LZ4-encoded by the plan itself, not by the zstd spool: a listing pass (./node.ts
    // compressAhead) is told there is nothing for it and stops, rather than encoding every entry twice.
    : operation === "compress" || operation === "decompress" ? planNvLinkedElfTransform(operation, source, ctx as CompressContext, where, () => bundleCompressor?.([])) : undefined;
  if (nv !== undefined) return nv;
  const expansions: Expansions = new Map();
  const edit = operation === "compress" && bundleCompressor !== undefined
    ? compressedBundles(source, ctx as CompressContext, where, bundleCompressor)
    : (bundle: FatbinBundle) => editBundle(operation, bundle, ctx, where, expansions);
  const rewrite = planHipFatbinRewriteOf(source, {
    bundles: (bundle) => {
      // A fat binary that stays is copied from its own source, a slice of the input.
      expansions.set(bundle.source, [{ offset: bundle.fileOffset, size: bundle.size }]);
      return edit(bundle);
    },
  });
  if (rewrite.bundles.every((b) => !b.replaced)) return "unchanged";
  const pieces = outputPieces(rewrite).flatMap((piece): Piece[] => {
    if (piece.kind === "bytes") return [{ bytes: piece.bytes }];
    if (piece.kind === "zeros") return [{ zeros: piece.length }];
    if (piece.source === source) return [{ offset: piece.from, size: piece.length }];
    const expanded = expansions.get(piece.source);
    return expanded !== undefined ? expandRange(expanded, piece.from, piece.length) : [{ offset: piece.from, size: piece.length, source: piece.source }];
  });
  const plan = planOf(pieces);
  if (plan.size !== rewrite.outputSize) throw new OffloadKitError("INTERNAL", `linked ELF plan: ${plan.size} bytes planned, the editor's plan has ${rewrite.outputSize}`);
  return plan;
}

/** The same over bytes already in memory (archive members, callers holding the file). */
export function editLinkedElf(operation: LinkedElfOperation, bytes: Uint8Array, ctx: LinkedElfContext, where: string): Uint8Array {
  const source = bytesSource(bytes);
  const plan = planLinkedElf(operation, source, ctx, where);
  return plan === "unchanged" ? bytes : materialize(plan, source, ctx.codecs);
}
