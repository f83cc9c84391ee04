/**
 * Compressing many bundles into one temporary file (`offload-kit compress` of a linked ELF library, whose
 * plan needs every compressed fat binary's size before the ELF layout is known): each bundle becomes one
 * CCOB, framed as the in-memory path frames it (one zstd frame up to SINGLE_FRAME_MAX, ZSTD_FRAME_CHUNK
 * frames above; src/bundler/compressed.ts `compressBundleBytes`), so the bytes are the same. The frames of
 * every bundle go to the worker pool (src/compress/node/compress-pool.ts) in one stream, so the workers compress
 * two bundles at once while this thread reads and hashes the next, and the compressed results wait in the
 * file instead of memory (librocsparse0, 111 fat binaries, 1.3 GB: figures in the README's prune section;
 * what remains of the peak is the frames in flight, up to four of 32 MiB, and what the threads' allocators
 * keep; capping the bytes in flight at 32 MiB saved only 7%, measured, so the pool's own bound is kept).
 * The file lives in a temporary folder registered with src/process/temporaries.ts, so a signal removes it.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { OffloadKitError } from "../../engine/errors.js";
import { readInto, sliceSource } from "../../engine/source.js";
import type { ByteSource } from "../../engine/source.js";
import { ZSTD_FRAME_CHUNK, checkVersionLimits, compressChunk } from "../../bundler/compressed.js";
import type { CompressionSettings } from "../../bundler/compressed.js";
import { CCOB_HEADER_SIZE, CompressionMethod, truncatedHash, writeCcobHeader } from "../../formats/ccob.js";
import { nodeCodecs } from "./codecs.js";
import { SINGLE_FRAME_MAX } from "./compress.js";
import { framePool } from "./compress-pool.js";
import { fileError } from "../../node/errors.js";
import { FileSource } from "../../node/file-source.js";
import { temporaryFolder } from "../../node/spool.js";

export interface BundleToCompress {
  readonly source: ByteSource;
  readonly settings: CompressionSettings;
}

/** Where one bundle's CCOB is in the spool, filled in as its frames come back in order. */
interface Placed {
  start: number;
  compressedSize: number;
  header: Uint8Array | undefined;
}

/** A temporary file of compressed bundles; `close` removes it (after the output is written). */
export class CompressedSpool {
  private readonly folder = temporaryFolder("compress");
  private readonly path = join(this.folder.path, "bundles");
  private readonly fd: number;
  private end = 0;
  /** One reader per compressAll call: the sources handed out by earlier calls keep reading theirs. */
  private readonly readers: FileSource[] = [];

  constructor() {
    try {
      this.fd = openSync(this.path, "w+", 0o600);
    } catch (e) {
      this.folder.remove();
      throw fileError(this.path, e);
    }
  }

  private writeAt(bytes: Uint8Array, position: number): void {
    let done = 0;
    while (done < bytes.length) {
      try {
        done += writeSync(this.fd, bytes, done, bytes.length - done, position + done);
      } catch (e) {
        throw fileError(this.path, e);
      }
    }
  }

  /** Compresses each bundle into one CCOB; returns a source over each, in the order given. */
  compressAll(bundles: readonly BundleToCompress[]): ByteSource[] {
    const pool = framePool();
    const placed: Placed[] = [];
    const emit = (at: Placed, headerSize: number, frame: Uint8Array, first: boolean, last: () => Uint8Array | undefined) => {
      if (first) {
        at.start = this.end;
        this.end += headerSize;
      }
      this.writeAt(frame, this.end);
      this.end += frame.length;
      at.compressedSize += frame.length;
      const header = last();
      if (header !== undefined) this.writeAt(header, at.start);
    };
    try {
      for (const { source, settings } of bundles) {
        checkVersionLimits(settings.version, source.size);
        const at: Placed = { start: 0, compressedSize: 0, header: undefined };
        placed.push(at);
        const headerSize = CCOB_HEADER_SIZE[settings.version];
        const zstd = settings.method === CompressionMethod.Zstd;
        const frameSize = !zstd || source.size <= SINGLE_FRAME_MAX ? Math.max(1, source.size) : ZSTD_FRAME_CHUNK;
        const frames = Math.max(1, Math.ceil(source.size / frameSize));
        const hasher = nodeCodecs.md5();
        let returned = 0;
        // The header, once the hash is known (after the last read) and the last frame is back.
        const last = () => {
          if (++returned < frames) return undefined;
          at.header = writeCcobHeader({
            version: settings.version, method: settings.method, compressedSize: at.compressedSize, uncompressedSize: source.size, hash: truncatedHash(hasher.digest()),
          });
          return at.header;
        };
        for (let i = 0; i < frames; i++) {
          const from = i * frameSize;
          const chunk = new Uint8Array(Math.min(frameSize, source.size - from));
          readInto(source, chunk, from);
          hasher.update(chunk);
          const first = i === 0;
          if (zstd) pool.submit("compress", chunk, settings.level, (frame) => emit(at, headerSize, frame, first, last));
          else {
            // zlib streams cannot be cut: compressed here, after what the workers still hold.
            pool.settle(() => false);
            emit(at, headerSize, compressChunk(nodeCodecs, settings, chunk), first, last);
          }
        }
      }
      pool.drain();
    } catch (e) {
      pool.abort();
      throw e;
    }
    const reader = FileSource.open(this.path);
    this.readers.push(reader);
    return placed.map((at) => {
      if (at.header === undefined) throw new OffloadKitError("INTERNAL", "a spooled compressed bundle has no header after the pool drained");
      return sliceSource(reader, at.start, at.header.length + at.compressedSize);
    });
  }

  close(): void {
    for (const reader of this.readers.splice(0)) reader.close();
    closeSync(this.fd);
    this.folder.remove();
  }
}
