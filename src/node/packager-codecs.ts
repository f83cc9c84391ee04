/**
 * A Decompressor for compressed (version 3) offload binaries from the Node codecs (src/node/codecs.ts):
 * zlib through node:zlib, zstd through the libzstd WebAssembly build, frame by frame as ZSTD_decompress
 * reads a multi-frame stream. Loaded on demand: the codecs module instantiates libzstd when imported.
 */
import { walkZstdFrames } from "../compress/zstd-frames.js";
import { concatBytes } from "../formats/bytes.js";
import type { Decompressor } from "../formats/offload-binary.js";
import { nodeCodecs } from "./codecs.js";

export function codecDecompressor(): Decompressor {
  return (format, data, inflatedSize) => {
    if (format === "zlib") return nodeCodecs.zlibDecompress(data, inflatedSize);
    const frames = walkZstdFrames((position, length) => data.subarray(position, position + length), 0, data.length);
    const parts: Uint8Array[] = [];
    let room = inflatedSize;
    for (const frame of frames) {
      if (frame.skippable) continue;
      const part = nodeCodecs.zstdDecompressFrame(data.subarray(frame.offset, frame.offset + frame.size), room);
      parts.push(part);
      room -= part.length;
    }
    return concatBytes(parts);
  };
}
