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
import { readInto } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";

export type Piece =
  | { readonly bytes: Uint8Array }
  | { readonly zeros: number }
  /** `size` bytes of the input from `offset`. */
  | { readonly offset: number; readonly size: number };

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
      if (source.bytes !== undefined) out.set(source.bytes.subarray(piece.offset, piece.offset + piece.size), at);
      else readInto(source, out.subarray(at, at + piece.size), piece.offset);
    }
    at += pieceSize(piece);
  }
  if (plan.compress === undefined) return out;
  return ccobBytes(compressBundleBytes(out, codecs, plan.compress, out.length <= 32 * 1024 * 1024 ? Infinity : undefined));
}
