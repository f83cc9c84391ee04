/**
 * A compressed range of the dropped File (a .deb's data.tar.xz, a tarball, a conda package's tar.zst) as the
 * plain bytes it holds, streamed: the page's decoders (src/browser/packages.ts browserDecoders: the platform's
 * DecompressionStream for gzip, xz-decompress for xz, src/packages/bzip2.ts for bzip2) but for zstd, which is
 * decoded frame by frame with libzstd's WebAssembly build (src/compress/zstd-wasm.ts; DecompressionStream has
 * no zstd in Node 20 and in many browsers), each frame no larger than its blocks can make.
 */
import type { Codecs } from "../../compress/codecs.js";
import { CodecError } from "../../compress/codecs.js";
import { walkZstdFrames } from "../../compress/zstd-frames.js";
import { OffloadKitError } from "../../engine/errors.js";
import { readExact } from "../../engine/source.js";
import type { ByteSource } from "../../engine/source.js";
import { sourceChunks } from "../../packages/chunks.js";
import type { Compression } from "../../packages/decoders.js";
import { browserDecoders } from "../packages.js";

async function* zstdFrames(source: ByteSource, start: number, length: number, codecs: Codecs, name: string): AsyncGenerator<Uint8Array> {
  const readAt = (position: number, size: number) => readExact(source, position, Math.max(0, Math.min(size, start + length - position)));
  let frames;
  try {
    frames = walkZstdFrames(readAt, start, length);
  } catch (e) {
    if (e instanceof CodecError) throw new OffloadKitError("DECODE_FAILED", `${name}: zstd data is corrupt (${e.message})`, { offset: (e as { offset?: number }).offset ?? start });
    throw e;
  }
  for (const frame of frames) {
    if (frame.skippable) continue;
    try {
      yield codecs.zstdDecompressFrame(readAt(frame.offset, frame.size), Math.min(frame.contentSize ?? frame.maxOutput, frame.maxOutput));
    } catch (e) {
      if (e instanceof CodecError) throw new OffloadKitError("DECODE_FAILED", `${name}: zstd frame at offset ${frame.offset} does not decode (${e.message})`, { offset: frame.offset });
      throw e;
    }
  }
}

/** The bytes [start, start + length) of `source`, decoded with `method` (undefined: as they are). */
export function decodedRange(source: ByteSource, start: number, length: number, method: Compression | undefined, codecs: Codecs, name: string): AsyncIterable<Uint8Array> {
  if (method === undefined) return sourceChunks(source, start, length);
  if (method === "zstd") return zstdFrames(source, start, length, codecs, name);
  return browserDecoders().decode(method, sourceChunks(source, start, length));
}

/** Every chunk of `stream`, joined (small things: a control.tar, a paths.json's tar). */
export async function collect(stream: AsyncIterable<Uint8Array>, limit: number, name: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > limit) throw new OffloadKitError("PACKAGE_TOO_LARGE", `${name}: decodes to more than ${limit} bytes`);
    parts.push(chunk.slice());
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
