/**
 * Compressing many bundles into one temporary file (`offload-kit compress` of a linked ELF library, whose
 * plan needs every compressed fat binary's size before the ELF layout is known): each bundle becomes one
 * CCOB, framed as the in-memory path frames it (one zstd frame up to SINGLE_FRAME_MAX, ZSTD_FRAME_CHUNK
 * frames above; src/bundler/compressed.ts `compressBundleBytes`), so the bytes are the same. This thread
 * reads each frame's bytes and hashes them (MD5, node:crypto) while libzstd compresses them elsewhere, and
 * the compressed results wait in the file instead of memory. Two ways, the same bytes:
 * - `compressAllAsync` (Node with zstd in node:zlib): libuv's thread pool compresses, at most
 *   FRAMES_IN_FLIGHT frames and BYTES_IN_FLIGHT input bytes at once (one frame always), so the peak is
 *   the process itself plus those frames: no worker isolate, no frame copied to another thread.
 * - `compressAll` (Node 20, the WebAssembly libzstd): the worker pool (src/compress/node/compress-pool.ts), two
 *   bundles at once, frames read into buffers the workers hand back; each worker's WebAssembly memory
 *   grows to its largest frame and stays.
 * Figures: the README's prune section and bench/prune.mjs. The file lives in a temporary folder
 * registered with src/process/temporaries.ts, so a signal removes it.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { OffloadKitError } from "../../engine/errors.js";
import { readInto, sliceSource } from "../../engine/source.js";
import type { ByteSource } from "../../engine/source.js";
import { ZSTD_FRAME_CHUNK, checkVersionLimits, compressChunk } from "../../bundler/compressed.js";
import type { CompressionSettings } from "../../bundler/compressed.js";
import type { Md5Hasher } from "../codecs.js";
import { CCOB_HEADER_SIZE, CompressionMethod, truncatedHash, writeCcobHeader } from "../../formats/ccob.js";
import { nodeCodecs } from "./codecs.js";
import { SINGLE_FRAME_MAX } from "./compress.js";
import { framePool } from "./compress-pool.js";
import { nativeZstdCompressAsync, releaseFrame } from "./zstd-native.js";
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

/**
 * Frames given to libuv's thread pool at once: two compressing (two cores) and one waiting, so a core
 * never idles while this thread hashes. Their input bytes live in one FrameRing of RING_BYTES (at least
 * SINGLE_FRAME_MAX, so any frame fits once the ring is empty). Measured on librocsparse0: see the README.
 */
const FRAMES_IN_FLIGHT = 3;
const RING_BYTES = 48 * 1024 * 1024;

/**
 * The input bytes of the frames in flight, carved from one buffer in the order they are taken and given
 * back oldest first (frames are retired in order). One buffer reused: a new array per frame is garbage
 * the collector frees late (measured: 80-200 MB of dead frames held on librocsparse0, against 48 here).
 */
class FrameRing {
  private buffer: Uint8Array | undefined;
  private readonly live: { from: number; to: number }[] = [];

  constructor(private readonly capacity: number) {}

  /** `size` contiguous bytes that no frame in flight uses, or undefined until the oldest is given back. */
  take(size: number): Uint8Array | undefined {
    if (size > this.capacity) throw new OffloadKitError("INTERNAL", `a ${size}-byte frame is larger than the ${this.capacity}-byte ring`);
    this.buffer ??= new Uint8Array(this.capacity);
    const newest = this.live.at(-1);
    for (const from of newest === undefined ? [0] : [newest.to, 0]) {
      const to = from + size;
      if (to <= this.capacity && this.live.every((r) => to <= r.from || from >= r.to)) {
        this.live.push({ from, to });
        return this.buffer.subarray(from, to);
      }
    }
    return undefined;
  }

  /** Gives back the oldest frame's bytes. */
  release(): void {
    this.live.shift();
  }
}

/** How a bundle of `size` bytes is cut: frames of `frameSize` input bytes (the last shorter), `frames` of them. */
function framing(size: number, settings: CompressionSettings): { zstd: boolean; frameSize: number; frames: number } {
  const zstd = settings.method === CompressionMethod.Zstd;
  const frameSize = !zstd || size <= SINGLE_FRAME_MAX ? Math.max(1, size) : ZSTD_FRAME_CHUNK;
  return { zstd, frameSize, frames: Math.max(1, Math.ceil(size / frameSize)) };
}

/** Counts a bundle's frames as they come back; after the last (and the last read) it makes the CCOB header. */
function headerWhenDone(at: Placed, size: number, settings: CompressionSettings, frames: number, hasher: Md5Hasher): () => Uint8Array | undefined {
  let returned = 0;
  return () => {
    if (++returned < frames) return undefined;
    at.header = writeCcobHeader({
      version: settings.version, method: settings.method, compressedSize: at.compressedSize, uncompressedSize: size, hash: truncatedHash(hasher.digest()),
    });
    return at.header;
  };
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
    const emit = this.emitter();
    try {
      for (const { source, settings } of bundles) {
        checkVersionLimits(settings.version, source.size);
        const at: Placed = { start: 0, compressedSize: 0, header: undefined };
        placed.push(at);
        const headerSize = CCOB_HEADER_SIZE[settings.version];
        const { zstd, frameSize, frames } = framing(source.size, settings);
        const hasher = nodeCodecs.md5();
        const last = headerWhenDone(at, source.size, settings, frames, hasher);
        for (let i = 0; i < frames; i++) {
          const from = i * frameSize;
          const chunk = pool.buffer(Math.min(frameSize, source.size - from));
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
    return this.sources(placed);
  }

  /**
   * compressAll with libzstd on libuv's thread pool (node:zlib's asynchronous zstd: Node 22.15 and
   * later), the same bytes; frames are written in order as the oldest comes back.
   */
  async compressAllAsync(bundles: readonly BundleToCompress[]): Promise<ByteSource[]> {
    const placed: Placed[] = [];
    const emit = this.emitter();
    const queue: { frame: Promise<Uint8Array>; done: (frame: Uint8Array) => void }[] = [];
    const ring = new FrameRing(Math.max(RING_BYTES, SINGLE_FRAME_MAX));
    const retire = async () => {
      const oldest = queue.shift()!;
      const frame = await oldest.frame;
      ring.release();
      oldest.done(frame);
      releaseFrame(frame);
    };
    // On a failure the frames still in flight finish on the pool and are dropped; the caller closes the spool.
    for (const { source, settings } of bundles) {
      checkVersionLimits(settings.version, source.size);
      const at: Placed = { start: 0, compressedSize: 0, header: undefined };
      placed.push(at);
      const headerSize = CCOB_HEADER_SIZE[settings.version];
      const { zstd, frameSize, frames } = framing(source.size, settings);
      const hasher = nodeCodecs.md5();
      const last = headerWhenDone(at, source.size, settings, frames, hasher);
      for (let i = 0; i < frames; i++) {
        const from = i * frameSize;
        const size = Math.min(frameSize, source.size - from);
        const first = i === 0;
        if (!zstd) {
          while (queue.length > 0) await retire();
          const whole = new Uint8Array(size);
          readInto(source, whole, from);
          hasher.update(whole);
          emit(at, headerSize, compressChunk(nodeCodecs, settings, whole), first, last);
          continue;
        }
        while (queue.length >= FRAMES_IN_FLIGHT) await retire();
        let chunk = ring.take(size);
        while (chunk === undefined) {
          await retire();
          chunk = ring.take(size);
        }
        readInto(source, chunk, from);
        const frame = nativeZstdCompressAsync(chunk, settings.level);
        // Awaited in turn by retire(); until then a failure must not count as unhandled.
        frame.catch(() => undefined);
        queue.push({ frame, done: (compressed) => emit(at, headerSize, compressed, first, last) });
        // Hashed here while the thread pool compresses the same bytes (both only read them).
        hasher.update(chunk);
      }
    }
    while (queue.length > 0) await retire();
    return this.sources(placed);
  }

  /** Appends a bundle's frames in order: the first reserves room for its header, written once it is known. */
  private emitter(): (at: Placed, headerSize: number, frame: Uint8Array, first: boolean, last: () => Uint8Array | undefined) => void {
    return (at, headerSize, frame, first, last) => {
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
  }

  private sources(placed: readonly Placed[]): ByteSource[] {
    const reader = FileSource.open(this.path);
    this.readers.push(reader);
    return placed.map((at) => {
      if (at.header === undefined) throw new OffloadKitError("INTERNAL", "a spooled compressed bundle has no header after its frames came back");
      return sliceSource(reader, at.start, at.header.length + at.compressedSize);
    });
  }

  close(): void {
    for (const reader of this.readers.splice(0)) reader.close();
    closeSync(this.fd);
    this.folder.remove();
  }
}
