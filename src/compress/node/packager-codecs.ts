/**
 * The Decompressor for compressed (version 3) offload binaries from the Node codecs (src/compress/node/codecs.ts):
 * zlib through node:zlib, zstd through the libzstd WebAssembly build (src/compress/offload-decompressor.ts).
 */
import { offloadDecompressor } from "../offload-decompressor.js";
import type { Decompressor } from "../../formats/offload-binary.js";
import { nodeCodecs } from "./codecs.js";

export function codecDecompressor(): Decompressor {
  return offloadDecompressor(nodeCodecs);
}
