/**
 * An output described instead of made: literal bytes, runs of zeros and ranges of the input, in order,
 * optionally to be compressed as one CCOB. Containers that can (a plain binary bundle) say what their
 * output is this way, so a Node front end copies the kept payloads straight from the input file through
 * the engine window, or through worker-compressed frames, and never holds the file whole; in memory the
 * plan is simply made into bytes (`materialize`).
 */
import { ccobBytes, compressBundleBytes } from "../bundler/compressed.js";
import type { CompressionSettings } from "../bundler/compressed.js";
import type { Codecs } from "../compress/codecs.js";
import { concatSources } from "../elf-edit/compose.js";
import { OffloadKitError } from "../engine/errors.js";
import { bytesSource, readInto, sliceSource } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";

export type Piece =
  | { readonly bytes: Uint8Array }
  | { readonly zeros: number }
  /**
   * `size` bytes of the input from `offset`, or of `source` when given (a linked ELF's plan copies from
   * the pruned bundles it packs, themselves made of the input's ranges).
   */
  | { readonly offset: number; readonly size: number; readonly source?: ByteSource };

export interface OutputPlan {
  readonly pieces: readonly Piece[];
  /** Bytes the pieces make. */
  readonly size: number;
  /** Compress what the pieces make into one CCOB with these settings (LLVM's frames: one up to 32 MiB). */
  readonly compress?: CompressionSettings;
}

export function pieceSize(piece: Piece): number {
  return "bytes" in piece ? piece.bytes.length : "zeros" in piece ? piece.zeros : piece.size;
}

export function planOf(pieces: readonly Piece[], compress?: CompressionSettings): OutputPlan {
  return { pieces, size: pieces.reduce((n, p) => n + pieceSize(p), 0), compress };
}

/** The bytes a plan makes, reading input ranges from `source`. */
export function materialize(plan: OutputPlan, source: ByteSource, codecs: Codecs): Uint8Array {
  const out = new Uint8Array(plan.size);
  let at = 0;
  for (const piece of plan.pieces) {
    if ("bytes" in piece) out.set(piece.bytes, at);
    else if ("offset" in piece) {
      const from = piece.source ?? source;
      if (from.bytes !== undefined) out.set(from.bytes.subarray(piece.offset, piece.offset + piece.size), at);
      else readInto(from, out.subarray(at, at + piece.size), piece.offset);
    }
    at += pieceSize(piece);
  }
  if (plan.compress === undefined) return out;
  return ccobBytes(compressBundleBytes(out, codecs, plan.compress, out.length <= 32 * 1024 * 1024 ? Infinity : undefined));
}

/**
 * An uncompressed plan as a source of its own, read on demand from `source` (a pruned bundle handed to
 * the ELF editor, which packs it into `.hip_fatbin` without the bytes ever being gathered).
 */
export function planSource(plan: OutputPlan, source: ByteSource): ByteSource {
  if (plan.compress !== undefined) throw new OffloadKitError("INTERNAL", "planSource: a compressed plan has no size before it is compressed");
  return concatSources(plan.pieces.map((piece) =>
    "bytes" in piece ? bytesSource(piece.bytes)
    : "zeros" in piece ? bytesSource(new Uint8Array(piece.zeros))
    : sliceSource(piece.source ?? source, piece.offset, piece.size)));
}
