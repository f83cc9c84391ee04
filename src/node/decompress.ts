/**
 * The hook every Node reader goes through before it looks for bundles: a compressed offload bundle
 * (CCOB) is replaced by its decompressed contents, anything else passes through unchanged. Until the
 * CCOB reader exists, compressed input is refused with a clear error.
 */
import { OffloadKitError } from "../engine/errors.js";
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";

export interface DecompressedInput {
  /** The bytes to read bundles from. */
  readonly source: ByteSource;
  /** Releases whatever decompression held (a temporary file); the caller's source stays open. */
  close(): void;
}

const CCOB = [0x43, 0x43, 0x4f, 0x42];

export function openDecompressed(source: ByteSource): DecompressedInput {
  // LLVM passes inputs shorter than the 8-byte common header through untouched.
  if (source.size >= 8) {
    const head = readExact(source, 0, 4);
    if (CCOB.every((b, i) => head[i] === b)) {
      throw new OffloadKitError("UNSUPPORTED_COMPRESSED", "compressed offload bundles (CCOB) are not supported yet");
    }
  }
  return { source, close() {} };
}
