/**
 * The page's compressors for a package written again, one per kind a package's tar can come in, each
 * streaming (fed the rewritten tar as it is made; output handed back as it is produced) so that no more than a
 * frame or a block of the plain tar is held: gzip at level 9 (fflate; the CLI's `gzip -9` through node:zlib),
 * zstd through the libzstd WebAssembly build in frames (level 3 as dpkg-deb and the CLI; a conda package's
 * tar as one frame at level 19, as conda-package-handling writes it and as its reader requires: it stops at the
 * first frame), xz (src/compress/xz-encode.ts, our LZMA2 encoder) and bzip2 -9 (src/compress/bzip2-encode.ts).
 * The bytes differ from the CLI's (other encoders), the decoded tar does not.
 */
import { Gzip } from "fflate";
import { createBzip2Encoder } from "../../compress/bzip2-encode.js";
import type { ChunkEncoder } from "../../compress/chunk-encoder.js";
import type { Codecs } from "../../compress/codecs.js";
import { createXzEncoder } from "../../compress/xz-encode.js";
import { ZSTD_WASM_MAX_FRAME } from "../../compress/zstd-wasm.js";
import { OffloadKitError } from "../../engine/errors.js";
import { concatBytes } from "../../formats/bytes.js";
import type { Compression } from "../../packages/decoders.js";

/** Which package the tar goes into: a conda package's tars are written as conda-package-handling writes them. */
export type TarPurpose = "deb" | "tarball" | "conda";

/** zstd frames of a .deb's or a tarball's tar: dpkg, tar and zstd read every frame of a stream. */
const ZSTD_FRAME = 64 * 1024 * 1024;

function gzip(): ChunkEncoder {
  let out: Uint8Array[] = [];
  // mtime 0: as node:zlib's gzip (the CLI) writes it, so the output does not depend on the clock.
  const encoder = new Gzip({ level: 9, mtime: 0 }, (chunk) => {
    out.push(chunk);
  });
  const take = () => {
    const taken = out;
    out = [];
    return taken;
  };
  return {
    push(bytes) {
      encoder.push(bytes, false);
      return take();
    },
    finish() {
      encoder.push(new Uint8Array(0), true);
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
export function tarEncoder(method: Compression | undefined, purpose: TarPurpose, codecs: Codecs, name: string): ChunkEncoder {
  if (method === undefined) return plain();
  if (method === "gzip") return gzip();
  if (method === "zstd") return purpose === "conda" ? zstd(codecs, 19, Infinity, name) : zstd(codecs, 3, ZSTD_FRAME, name);
  if (method === "xz") return createXzEncoder();
  return createBzip2Encoder({ level: 9 });
}
