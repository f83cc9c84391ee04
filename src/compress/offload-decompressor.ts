/**
 * A Decompressor for compressed (version 3) offload binaries over any Codecs (node:zlib and libzstd in
 * Node, fflate and libzstd in browsers): zlib in one call, zstd frame by frame as ZSTD_decompress reads a
 * multi-frame stream, never producing more than the binary's stated inflated size.
 */
import { concatBytes } from "../formats/bytes.js";
import type { Decompressor } from "../formats/offload-binary.js";
import type { Codecs } from "./codecs.js";
import { walkZstdFrames } from "./zstd-frames.js";

export function offloadDecompressor(codecs: Codecs): Decompressor {
  return (format, data, inflatedSize) => {
    if (format === "zlib") return codecs.zlibDecompress(data, inflatedSize);
    const frames = walkZstdFrames((position, length) => data.subarray(position, position + length), 0, data.length);
    const parts: Uint8Array[] = [];
    let room = inflatedSize;
    for (const frame of frames) {
      if (frame.skippable) continue;
      const part = codecs.zstdDecompressFrame(data.subarray(frame.offset, frame.offset + frame.size), room);
      parts.push(part);
      room -= part.length;
    }
    return concatBytes(parts);
  };
}
