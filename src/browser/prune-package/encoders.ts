/**
 * The page's compressors for a package written again, one per kind a package's tar can come in, each
 * streaming (fed the rewritten tar as it is made; output handed back as it is produced) so that no more than a
 * frame or a block of the plain tar is held: gzip through the platform's CompressionStream (zlib level 6; the
 * CLI writes `gzip -9` through node:zlib), zstd through the libzstd WebAssembly build in frames (level 3 as dpkg-deb and the CLI; a conda package's
 * tar as one frame at level 19, as conda-package-handling writes it and as its reader requires: it stops at the
 * first frame), xz (src/compress/xz-encode.ts, our LZMA2 encoder, in its normal mode: see XZ_MODE) and bzip2 -9
 * (src/compress/bzip2-encode.ts).
 * The bytes differ from the CLI's (other encoders), the decoded tar does not.
 */
import { createBzip2Encoder } from "../../compress/bzip2-encode.js";
import type { ChunkEncoder } from "../../compress/chunk-encoder.js";
import type { Codecs } from "../../compress/codecs.js";
import { createXzEncoder } from "../../compress/xz-encode.js";
import { ZSTD_WASM_MAX_FRAME } from "../../compress/zstd-wasm.js";
import { OffloadKitError } from "../../engine/errors.js";
import { concatBytes } from "../../formats/bytes.js";
import type { Compression } from "../../packages/decoders.js";

/** An encoder the writers await: the platform's gzip is asynchronous; the others are ChunkEncoders. */
export interface PageEncoder {
  push(bytes: Uint8Array): Promise<Uint8Array[]> | Uint8Array[];
  finish(): Promise<Uint8Array[]> | Uint8Array[];
}

/** Which package the tar goes into: a conda package's tars are written as conda-package-handling writes them. */
export type TarPurpose = "deb" | "tarball" | "conda";

/**
 * The xz encoder's mode on the page: "normal" (optimal parsing) writes files within about 1.3% of `xz -6`'s,
 * "fast" about 8% larger, which made a pruned librocrand .deb larger than Debian's original although its
 * data was 35% smaller (in normal mode that data.tar.xz is 0.6% over `xz -6`'s). Normal codes 1.37 MB/s of
 * CPU against fast's 6.8 and `xz -6`'s 1.54 (librocrand, docs/compression.md): a 25 MB library takes about
 * 18 s instead of 4, worth it for a file that is kept and downloaded again.
 */
const XZ_MODE = "normal";

/** zstd frames of a .deb's or a tarball's tar: dpkg, tar and zstd read every frame of a stream. */
const ZSTD_FRAME = 64 * 1024 * 1024;

/**
 * gzip through the platform's CompressionStream (zlib at its default level, 6): fflate's streaming Gzip at level
 * 9 wrote deflate data that does not inflate on about 2% of the package-writer fuzz target's tars ("invalid
 * distance too far back"; the read-back caught each one). The stream is fed as the tar is made and its output
 * taken as it comes, so no more than the stream's own queue is held.
 */
function gzip(): PageEncoder {
  const stream = new CompressionStream("gzip");
  const writer = stream.writable.getWriter();
  const reader = stream.readable.getReader();
  let out: Uint8Array[] = [];
  let failed: unknown;
  const pump = (async () => {
    try {
      for (;;) {
        const next = await reader.read();
        if (next.done) return;
        out.push(next.value);
      }
    } catch (e) {
      failed = e;
    }
  })();
  const take = () => {
    if (failed !== undefined) throw failed;
    const taken = out;
    out = [];
    return taken;
  };
  return {
    async push(bytes) {
      await writer.ready;
      await writer.write(bytes.slice());
      return take();
    },
    async finish() {
      await writer.close();
      await pump;
      return take();
    },
  };
}

function zstd(codecs: Codecs, level: number, frame: number, name: string): ChunkEncoder {
  let held: Uint8Array[] = [];
  let size = 0;
  const flush = (): Uint8Array[] => {
    if (size === 0) return [];
    const bytes = concatBytes(held);
    held = [];
    size = 0;
    return [codecs.zstdCompress(bytes, level)];
  };
  return {
    push(bytes) {
      if (frame === Infinity && size + bytes.length > ZSTD_WASM_MAX_FRAME) {
        throw new OffloadKitError("PACKAGE_TOO_LARGE", `${name}: a conda package's tar is one zstd frame, and one over ${ZSTD_WASM_MAX_FRAME} bytes is more than the page's libzstd holds; offload-kit prune writes it`);
      }
      held.push(bytes.slice());
      size += bytes.length;
      return size >= frame ? flush() : [];
    },
    finish() {
      const last = flush();
      // An empty input is still one frame (zstd writes one for an empty file).
      return last.length > 0 ? last : [codecs.zstdCompress(new Uint8Array(0), level)];
    },
  };
}

function plain(): ChunkEncoder {
  return { push: (bytes) => [bytes.slice()], finish: () => [] };
}

/** The encoder for a tar compressed with `method` (undefined: a plain tar), going into a package of `purpose`. */
export function tarEncoder(method: Compression | undefined, purpose: TarPurpose, codecs: Codecs, name: string): PageEncoder {
  if (method === undefined) return plain();
  if (method === "gzip") return gzip();
  if (method === "zstd") return purpose === "conda" ? zstd(codecs, 19, Infinity, name) : zstd(codecs, 3, ZSTD_FRAME, name);
  if (method === "xz") return createXzEncoder({ mode: XZ_MODE });
  return createBzip2Encoder({ level: 9 });
}
