/**
 * Writing a compressed offload bundle from Node (`-compress`; CompressedOffloadBundle::compress,
 * spec bundler.md §5): the uncompressed bundle is produced as a stream of writes, hashed with MD5 as it
 * goes, cut into ZSTD_FRAME_CHUNK pieces and compressed piece by piece (one zstd frame each; on worker
 * threads when the bundle is large, src/compress/node/compress-pool.ts), so neither the bundle nor its inputs
 * are ever held whole. The header, known only at the end, is written last over a placeholder.
 */
import { OffloadKitError } from "../../engine/errors.js";
import type { ByteSource } from "../../engine/source.js";
import {
  ZSTD_FRAME_CHUNK,
  checkVersionLimits,
  compressChunk,
  formatCompressionReport,
} from "../../bundler/compressed.js";
import type { CompressionSettings } from "../../bundler/compressed.js";
import { CCOB_HEADER_SIZE, CompressionMethod, truncatedHash, writeCcobHeader } from "../../formats/ccob.js";
import { nodeCodecs } from "./codecs.js";
import type { FramePool } from "./compress-pool.js";
import { framePool } from "./compress-pool.js";
import type { VerboseSink } from "./decompress.js";
import type { OutputFile } from "../../node/output.js";

/** What bundle writers need from their output; OutputFile and CompressingWriter both provide it. */
export interface BundleSink {
  write(bytes: Uint8Array): void;
  writeZeros(count: number): void;
  readonly position: number;
}

/** Bundles larger than this are cut into ZSTD_FRAME_CHUNK frames compressed on worker threads. */
export const SINGLE_FRAME_MAX = 32 * 1024 * 1024;

const READ_CHUNK = 4 * 1024 * 1024;

/**
 * Accepts the uncompressed bundle as writes and produces the CCOB into `out`. Input bytes are read
 * straight into the buffer of the frame they belong to (copyFrom), which is then handed to a worker
 * without a copy. zlib streams cannot be cut into independent pieces the way zstd frames can, so a
 * zlib bundle is one buffer.
 */
export class CompressingWriter implements BundleSink {
  position = 0;
  private readonly hasher = nodeCodecs.md5();
  private hashSeconds = 0;
  private compressSeconds = 0;
  private chunk: Uint8Array | undefined;
  private fill = 0;
  private compressedSize = 0;
  private readonly frameSize: number;
  private readonly pool: FramePool | undefined;
  private readonly held: Uint8Array[] = [];
  private readonly cpuStart = process.cpuUsage();

  constructor(
    private readonly out: OutputFile,
    private readonly settings: CompressionSettings,
    private readonly expectedSize: number,
  ) {
    checkVersionLimits(settings.version, expectedSize);
    // stdout cannot seek back to the header: there the compressed frames wait in memory.
    if (out.tempPath !== undefined) out.writeZeros(CCOB_HEADER_SIZE[settings.version]);
    const oneFrame = settings.method === CompressionMethod.Zlib || expectedSize <= SINGLE_FRAME_MAX;
    this.frameSize = oneFrame ? Math.max(1, expectedSize) : ZSTD_FRAME_CHUNK;
    this.pool = oneFrame ? undefined : framePool();
  }

  /** The buffer the next bytes go into (a new one when the last was handed on). */
  private space(): Uint8Array {
    if (this.chunk === undefined) {
      this.chunk = new Uint8Array(Math.max(1, Math.min(this.frameSize, this.expectedSize - this.position)));
      this.fill = 0;
    }
    return this.chunk.subarray(this.fill);
  }

  private filled(count: number): void {
    const t = performance.now();
    this.hasher.update(this.chunk!.subarray(this.fill, this.fill + count));
    this.hashSeconds += (performance.now() - t) / 1000;
    this.fill += count;
    this.position += count;
    if (this.fill === this.chunk!.length) this.flushChunk();
  }

  write(bytes: Uint8Array): void {
    let done = 0;
    while (done < bytes.length) {
      const room = this.space();
      const n = Math.min(room.length, bytes.length - done);
      room.set(bytes.subarray(done, done + n));
      done += n;
      this.filled(n);
    }
  }

  writeZeros(count: number): void {
    while (count > 0) {
      const n = Math.min(count, this.space().length);
      this.filled(n); // new buffers are zeroed already
      count -= n;
    }
  }

  /** Copies `length` bytes of `source` from `position` into the bundle, reading straight into frame buffers. */
  copyFrom(source: ByteSource, position: number, length: number): void {
    let done = 0;
    while (done < length) {
      const room = this.space();
      const n = source.read(room.subarray(0, Math.min(room.length, length - done, READ_CHUNK)), position + done);
      if (n <= 0) throw new OffloadKitError("SHORT_READ", `the input ended early at offset ${position + done}`, { offset: position + done });
      done += n;
      this.filled(n);
    }
  }

  private flushChunk(): void {
    if (this.chunk === undefined) return;
    const chunk = this.chunk.subarray(0, this.fill);
    this.chunk = undefined;
    if (this.pool !== undefined) {
      this.pool.submit("compress", chunk, this.settings.level, (frame) => this.emit(frame));
      return;
    }
    const t = performance.now();
    const frame = compressChunk(nodeCodecs, this.settings, chunk);
    this.compressSeconds += (performance.now() - t) / 1000;
    this.emit(frame);
  }

  private emit(frame: Uint8Array): void {
    this.compressedSize += frame.length;
    if (this.out.tempPath !== undefined) this.out.write(frame);
    else this.held.push(frame);
  }

  /** Stops the workers after an error (the output itself is discarded by withOutputs). */
  abort(): void {
    this.pool?.abort();
  }

  /** Compresses what is left and writes the header; -verbose lines go to `verbose`. */
  finish(verbose?: VerboseSink): void {
    const t = performance.now();
    // An empty bundle is still one (empty) frame, as LLVM compresses zero bytes.
    if (this.position === 0) this.space();
    this.flushChunk();
    if (this.pool !== undefined) {
      this.pool.drain();
      this.compressSeconds = (performance.now() - t) / 1000 + this.pool.seconds;
    }
    const uncompressedSize = this.position;
    const hash = truncatedHash(this.hasher.digest());
    const header = writeCcobHeader({
      version: this.settings.version,
      method: this.settings.method,
      compressedSize: this.compressedSize,
      uncompressedSize,
      hash,
    });
    if (this.out.tempPath !== undefined) this.out.writeAt(header, 0);
    else {
      this.out.write(header);
      for (const frame of this.held) this.out.write(frame);
    }
    if (verbose !== undefined) {
      const cpu = process.cpuUsage(this.cpuStart);
      verbose.text(
        formatCompressionReport({
          version: this.settings.version,
          method: this.settings.method,
          level: this.settings.level,
          uncompressedSize,
          compressedSize: this.compressedSize,
          hash,
          compressSeconds: this.compressSeconds,
        }),
      );
      verbose.timer({ name: "Compression time", user: Math.max(0, cpu.user / 1e6 - this.hashSeconds), system: cpu.system / 1e6, wall: this.compressSeconds });
      verbose.timer({ name: "Hash calculation time", user: this.hashSeconds, system: 0, wall: this.hashSeconds });
    }
  }
}
