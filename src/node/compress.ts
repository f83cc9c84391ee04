/**
 * Writing a compressed offload bundle from Node (`-compress`; CompressedOffloadBundle::compress,
 * spec bundler.md §5): the uncompressed bundle is produced as a stream of writes, hashed with MD5 as it
 * goes, cut into ZSTD_FRAME_CHUNK pieces and compressed piece by piece (one zstd frame each; on worker
 * threads when the bundle is large, src/node/compress-pool.ts), so neither the bundle nor its inputs
 * are ever held whole. The header, known only at the end, is written last over a placeholder.
 */
import {
  ZSTD_FRAME_CHUNK,
  checkVersionLimits,
  compressChunk,
  formatCompressionReport,
} from "../bundler/compressed.js";
import type { CompressionSettings } from "../bundler/compressed.js";
import { concatBytes } from "../formats/bytes.js";
import { CCOB_HEADER_SIZE, CompressionMethod, truncatedHash, writeCcobHeader } from "../formats/ccob.js";
import { nodeCodecs } from "./codecs.js";
import type { FramePool } from "./compress-pool.js";
import { framePool } from "./compress-pool.js";
import type { VerboseSink } from "./decompress.js";
import type { OutputFile } from "./output.js";

/** What bundle writers need from their output; OutputFile and CompressingWriter both provide it. */
export interface BundleSink {
  write(bytes: Uint8Array): void;
  writeZeros(count: number): void;
  readonly position: number;
}

const ZEROS = new Uint8Array(64 * 1024);

/** Bundles at least this large are compressed on worker threads (below it, starting them costs more). */
export const PARALLEL_THRESHOLD = 2 * ZSTD_FRAME_CHUNK;

/**
 * Accepts the uncompressed bundle as writes and produces the CCOB into `out`. zlib streams cannot be
 * cut into independent pieces the way zstd frames can, so a zlib bundle is gathered whole first.
 */
export class CompressingWriter implements BundleSink {
  position = 0;
  private readonly hasher = nodeCodecs.md5();
  private hashSeconds = 0;
  private compressSeconds = 0;
  private pending: Uint8Array[] = [];
  private pendingSize = 0;
  private compressedSize = 0;
  private readonly headerSize: number;
  private readonly pool: FramePool | undefined;
  private readonly held: Uint8Array[] = [];
  private readonly cpuStart = process.cpuUsage();

  constructor(
    private readonly out: OutputFile,
    private readonly settings: CompressionSettings,
    expectedSize: number,
  ) {
    this.headerSize = CCOB_HEADER_SIZE[settings.version];
    checkVersionLimits(settings.version, expectedSize);
    // stdout cannot seek back to the header: there the compressed frames wait in memory.
    if (out.tempPath !== undefined) out.writeZeros(this.headerSize);
    const parallel = settings.method === CompressionMethod.Zstd && expectedSize >= PARALLEL_THRESHOLD;
    this.pool = parallel ? framePool() : undefined;
  }

  write(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    const t = performance.now();
    this.hasher.update(bytes);
    this.hashSeconds += (performance.now() - t) / 1000;
    this.position += bytes.length;
    const chunk = this.settings.method === CompressionMethod.Zlib ? Infinity : ZSTD_FRAME_CHUNK;
    let rest = bytes;
    while (rest.length > 0) {
      const take = Math.min(rest.length, chunk - this.pendingSize);
      // Inputs are read into reused buffers: keep a copy of what waits for a full chunk.
      this.pending.push(rest.slice(0, take));
      this.pendingSize += take;
      rest = rest.subarray(take);
      if (this.pendingSize === chunk) this.flushChunk();
    }
  }

  writeZeros(count: number): void {
    while (count > 0) {
      const n = Math.min(count, ZEROS.length);
      this.write(ZEROS.subarray(0, n));
      count -= n;
    }
  }

  private takePending(): Uint8Array {
    const parts = this.pending;
    this.pending = [];
    this.pendingSize = 0;
    return parts.length === 1 ? parts[0] : concatBytes(parts);
  }

  private flushChunk(): void {
    const chunk = this.takePending();
    if (this.pool !== undefined) {
      this.pool.submit(chunk, this.settings.level, (frame) => this.emit(frame));
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

  /** Compresses what is left and writes the header; -verbose lines go to `verbose`. */
  finish(verbose?: VerboseSink): void {
    const t = performance.now();
    // An empty bundle is still one (empty) frame, as LLVM compresses zero bytes.
    if (this.pendingSize > 0 || this.position === 0 || this.settings.method === CompressionMethod.Zlib) this.flushChunk();
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
