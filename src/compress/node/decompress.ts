/**
 * The hook every Node reader goes through before it looks for bundles: a compressed offload bundle
 * (CCOB, src/formats/ccob.ts) is replaced by its decompressed contents, anything else passes through
 * unchanged (CompressedOffloadBundle::decompress; spec bundler.md §5).
 *
 * Bounded: a member declaring more than `maxDecompressedSize` (default 16 GiB, or the environment's
 * OFFLOAD_KIT_MAX_DECOMPRESSED) is refused before anything is allocated; members up to
 * `inMemoryLimit` (256 MiB) are decoded into one buffer, larger ones frame by frame into a temporary
 * file that a FileSource then reads, so no more than one zstd frame is held at a time.
 *
 * Several CCOBs in one input are walked by their header sizes. `openDecompressed` gives the first,
 * as upstream LLVM's unbundling reads only the first; `forEachDecompressed` gives each in turn, for
 * listing. (LLVM 19 and 22.1 fail on such inputs with "Src size is incorrect".)
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { Md5Hasher } from "../codecs.js";
import { OffloadKitError } from "../../engine/errors.js";
import { bytesSource, readExact, readInto } from "../../engine/source.js";
import type { ByteSource } from "../../engine/source.js";
import { CCOB_MIN_SIZE, isCompressedBundle, truncatedHash, walkCcobs } from "../../formats/ccob.js";
import type { CcobMember, CcobWalk } from "../../formats/ccob.js";
import {
  DEFAULT_MAX_DECOMPRESSED_SIZE,
  checkDeclaredSize,
  decodeCcobMember,
  formatDecompressionReport,
} from "../../bundler/compressed.js";
import type { FrameDecoder, TimerLine } from "../../bundler/compressed.js";
import { CompressionMethod } from "../../formats/ccob.js";
import { walkZstdFrames } from "../zstd-frames.js";
import { framePool } from "./compress-pool.js";
import type { FramePool } from "./compress-pool.js";
import type { ScanOptions } from "../../inspect/scan.js";
import { nodeCodecs } from "./codecs.js";
import { fileError } from "../../node/errors.js";
import { FileSource } from "../../node/file-source.js";
import { temporaryFolder } from "../../node/spool.js";

export interface DecompressedInput {
  /** The bytes to read bundles from. */
  readonly source: ByteSource;
  /** The CCOB it came from, when the input was compressed. */
  readonly member?: CcobMember;
  /** The walk of the whole input, when it was compressed. */
  readonly walk?: CcobWalk;
  /** The truncated MD5 of the decompressed bytes, when asked for (`recalculateHash`) or under -verbose. */
  readonly recalculatedHash?: bigint;
  /** Releases whatever decompression held (a temporary file); the caller's source stays open. */
  close(): void;
}

/** What -verbose prints while decompressing, and the timers it reports at exit. */
export interface VerboseSink {
  text(text: string): void;
  timer(line: TimerLine): void;
}

export interface DecompressOptions {
  readonly maxDecompressedSize?: number;
  /** Decoded members larger than this go to a temporary file. */
  readonly inMemoryLimit?: number;
  /** -verbose: the report lines (and "Uncompressed bundle.") go here, with a recomputed hash. */
  readonly verbose?: VerboseSink;
  /** Recompute the truncated MD5 of what was decompressed (LLVM only does under -verbose). */
  readonly recalculateHash?: boolean;
}

export const DEFAULT_IN_MEMORY_LIMIT = 256 * 1024 * 1024;

/** Members of several frames holding at least this much are decoded on worker threads. */
export const PARALLEL_DECODE_MIN = 16 * 1024 * 1024;

/** Decodes the frames of one member on the worker pool (frames we write for large bundles). */
const parallelFrames: FrameDecoder = (frames, readAt, emit) => {
  const total = frames.reduce((n, f) => n + (f.contentSize ?? 0), 0);
  if (total < PARALLEL_DECODE_MIN) {
    for (const f of frames) emit(nodeCodecs.zstdDecompressFrame(readAt(f.offset, f.size), f.contentSize!));
    return;
  }
  const pool = framePool();
  try {
    // slice(): the frame's own buffer, so it can be transferred to the worker.
    for (const f of frames) pool.submit("decompress", readAt(f.offset, f.size).slice(), f.contentSize!, emit);
    pool.drain();
  } catch (e) {
    pool.abort();
    throw e;
  }
};

/**
 * Decodes the CCOBs a walk finds ahead (locate's `prefetchCompressed`) on worker threads while the walk
 * handles the one before: a `.hip_fatbin` section of ROCm 6 carries one CCOB per translation unit, dozens
 * back to back, each one zstd frame that one thread would decode in turn. `open` is the walk's
 * `openCompressed`: it waits for that member's frame if it was handed on, then decodes it as any other
 * member (same checks, same errors). Only members that would be decoded in memory and hold exactly one
 * zstd frame of known size are handed on; anything else, and everything after a worker failed, is
 * decoded by `open` on this thread, which then reports the failure as LLVM words it.
 */
export class CcobPrefetch {
  private pool: FramePool | undefined;
  private readonly ready = new WeakMap<CcobMember, Uint8Array>();
  private readonly queued = new WeakSet<CcobMember>();
  private failed = false;
  /** Members handed to the workers, and members opened from what they decoded. */
  readonly stats = { handedOn: 0, openedAhead: 0 };

  /**
   * `minBytes`: a run decoding to less than this is left to `open` (default PARALLEL_DECODE_MIN; with
   * OFFLOAD_KIT_PREFETCH=0 in the environment, nothing is decoded ahead, for comparisons).
   */
  constructor(
    private readonly options: DecompressOptions = {},
    private readonly minBytes = process.env.OFFLOAD_KIT_PREFETCH === "0" ? Infinity : PARALLEL_DECODE_MIN,
  ) {}

  readonly prefetch = (ahead: readonly { blob: ByteSource; member: CcobMember }[]): void => {
    const limit = Math.min(this.options.inMemoryLimit ?? DEFAULT_IN_MEMORY_LIMIT, this.options.maxDecompressedSize ?? defaultMaxDecompressedSize());
    const frames = ahead.map(({ blob, member }) => ({ blob, member, frame: singleFrame(blob, member, limit) }));
    // Starting workers costs more than decoding a few small bundles here.
    if (frames.reduce((n, f) => n + (f.frame?.contentSize ?? 0), 0) < this.minBytes) return;
    for (const { blob, member, frame } of frames) {
      if (this.failed) return;
      if (frame === undefined) continue;
      try {
        this.pool ??= framePool();
        // readExact gives the frame its own buffer, which goes to the worker.
        this.pool.submit("decompress", readExact(blob, frame.offset, frame.size), frame.contentSize, (out) => this.ready.set(member, out));
        this.queued.add(member);
        this.stats.handedOn++;
      } catch {
        this.fail();
      }
    }
  };

  readonly open = (blob: ByteSource, member: CcobMember): DecompressedInput => {
    if (this.queued.has(member)) {
      this.queued.delete(member);
      try {
        this.pool!.settle(() => this.ready.has(member));
      } catch {
        // The worker's failure is reported by decoding the member here, with LLVM's words.
        this.fail();
      }
    }
    const predecoded = this.ready.get(member);
    this.ready.delete(member);
    if (predecoded !== undefined) this.stats.openedAhead++;
    return decompressMember(blob, member, this.options, predecoded);
  };

  /** Stops the workers (queued results not yet taken are dropped). */
  close(): void {
    this.pool?.abort();
    this.pool = undefined;
  }

  private fail(): void {
    this.failed = true;
    this.close();
  }
}

/** Runs `use` with a walk's decompression hooks (openCompressed, prefetchCompressed) over one CcobPrefetch, closed after. */
export function withCcobPrefetch<T>(options: DecompressOptions, use: (hooks: Pick<ScanOptions, "openCompressed" | "prefetchCompressed">) => T): T {
  const prefetch = new CcobPrefetch(options);
  try {
    return use({ openCompressed: prefetch.open, prefetchCompressed: prefetch.prefetch });
  } finally {
    prefetch.close();
  }
}

/** The one zstd frame of a member worth handing to a worker, if it is that simple. */
function singleFrame(blob: ByteSource, member: CcobMember, limit: number): { offset: number; size: number; contentSize: number } | undefined {
  const declared = member.header.uncompressedSize;
  if (member.header.method !== CompressionMethod.Zstd || declared > limit) return undefined;
  let frames;
  try {
    frames = walkZstdFrames(readerOf(blob), member.dataOffset, member.dataSize);
  } catch {
    return undefined;
  }
  if (frames.length !== 1) return undefined;
  const [frame] = frames;
  if (frame.skippable || frame.contentSize === undefined || frame.contentSize > declared) return undefined;
  return { offset: frame.offset, size: frame.size, contentSize: frame.contentSize };
}

export function defaultMaxDecompressedSize(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const text = env.OFFLOAD_KIT_MAX_DECOMPRESSED;
  const value = text === undefined ? NaN : Number(text);
  return Number.isSafeInteger(value) && value >= 0 ? value : DEFAULT_MAX_DECOMPRESSED_SIZE;
}

/**
 * Decoded frames as one source, without concatenating them: a copy of a few hundred MiB costs as
 * much again in page faults as the copy itself (measured: 200 MiB in 8 MiB frames, 1.6 -> x s).
 */
export function chunksSource(chunks: readonly Uint8Array[]): ByteSource {
  const starts: number[] = [];
  let size = 0;
  for (const chunk of chunks) {
    starts.push(size);
    size += chunk.length;
  }
  let last = 0;
  return {
    size,
    read(dest, position) {
      if (position < 0 || position >= size || dest.length === 0) return 0;
      // Readers go forward: start from the chunk the last read ended in.
      let i = starts[last] <= position ? last : 0;
      while (i + 1 < chunks.length && starts[i + 1] <= position) i++;
      let done = 0;
      while (done < dest.length && i < chunks.length) {
        const chunk = chunks[i];
        const from = position + done - starts[i];
        const n = Math.min(chunk.length - from, dest.length - done);
        dest.set(chunk.subarray(from, from + n), done);
        done += n;
        if (from + n === chunk.length) i++;
      }
      last = Math.min(i, chunks.length - 1);
      return done;
    },
  };
}

function readerOf(source: ByteSource) {
  return (position: number, length: number) => readExact(source, position, Math.max(0, Math.min(length, source.size - position)));
}

/** Is this input compressed, as LLVM 19 decides (the magic, and at least a v1 header's 20 bytes)? */
export function isCompressedInput(source: ByteSource): boolean {
  if (source.size < CCOB_MIN_SIZE) return false;
  // Asked once per archive member: the magic goes through one reused buffer.
  readInto(source, magicScratch, 0);
  return isCompressedBundle(magicScratch);
}

const magicScratch = new Uint8Array(4);

function cpuSeconds(start: NodeJS.CpuUsage): { user: number; system: number } {
  const used = process.cpuUsage(start);
  return { user: used.user / 1e6, system: used.system / 1e6 };
}

/**
 * Decodes one member into memory or a temporary file. `predecoded`: its one zstd frame, already decoded
 * (CcobPrefetch); everything else (size checks, hash, report) happens as for any member.
 */
export function decompressMember(source: ByteSource, member: CcobMember, options: DecompressOptions = {}, predecoded?: Uint8Array): DecompressedInput {
  checkDeclaredSize(member, { maxDecompressedSize: options.maxDecompressedSize ?? defaultMaxDecompressedSize() });
  const declared = member.header.uncompressedSize;
  const verbose = options.verbose;
  const hasher: Md5Hasher | undefined = verbose === undefined && !options.recalculateHash ? undefined : nodeCodecs.md5();
  const cpu = process.cpuUsage();
  const readAt = readerOf(source);
  if (declared <= (options.inMemoryLimit ?? DEFAULT_IN_MEMORY_LIMIT)) {
    // A member LLVM wrote is one frame: its output is used as is, without a copy into a second buffer.
    const chunks: Uint8Array[] = [];
    const codecs = predecoded === undefined ? nodeCodecs : { ...nodeCodecs, zstdDecompressFrame: () => predecoded };
    const result = decodeCcobMember(readAt, member, codecs, (chunk) => chunks.push(chunk), hasher, parallelFrames);
    const recalculatedHash = report(verbose, member, result.seconds, cpuSeconds(cpu), hasher);
    const source = chunks.length === 1 ? bytesSource(chunks[0]) : chunksSource(chunks);
    return { source, member, recalculatedHash, close() {} };
  }
  const folder = temporaryFolder("ccob");
  const path = join(folder.path, "decompressed");
  let fd: number | undefined;
  try {
    fd = openSync(path, "w");
    let at = 0;
    const result = decodeCcobMember(readAt, member, nodeCodecs, (chunk) => {
      let done = 0;
      while (done < chunk.length) {
        try {
          done += writeSync(fd!, chunk, done, chunk.length - done, at + done);
        } catch (e) {
          throw fileError(path, e);
        }
      }
      at += chunk.length;
    }, hasher, parallelFrames);
    closeSync(fd);
    fd = undefined;
    const recalculatedHash = report(verbose, member, result.seconds, cpuSeconds(cpu), hasher);
    const file = FileSource.open(path);
    return {
      source: file,
      member,
      recalculatedHash,
      close() {
        file.close();
        folder.remove();
      },
    };
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    folder.remove();
    throw e;
  }
}

function report(
  verbose: VerboseSink | undefined,
  member: CcobMember,
  seconds: number,
  cpu: { user: number; system: number },
  hasher?: Md5Hasher,
): bigint | undefined {
  if (hasher === undefined) return undefined;
  const t = performance.now();
  const recalculatedHash = truncatedHash(hasher.digest());
  if (verbose === undefined) return recalculatedHash;
  const hashSeconds = (performance.now() - t) / 1000;
  verbose.timer({ name: "Decompression time", user: cpu.user, system: cpu.system, wall: seconds });
  verbose.timer({ name: "Hash recalculation time", user: hashSeconds, system: 0, wall: hashSeconds });
  verbose.text(formatDecompressionReport({ member, seconds, recalculatedHash }));
  return recalculatedHash;
}

function walkOf(source: ByteSource): CcobWalk {
  return walkCcobs(readerOf(source), source.size);
}

function failedToDecompress(e: unknown): never {
  if (e instanceof OffloadKitError && !e.message.startsWith("Failed to decompress input: ")) {
    throw new OffloadKitError(e.code, `Failed to decompress input: ${e.message}`, { offset: e.offset, field: e.field, cause: e });
  }
  throw e;
}

/**
 * The input as the bundle readers should see it: itself, or the first CCOB's contents. Header
 * errors read as LLVM's ("Failed to decompress input: Compressed bundle header size too small").
 */
export function openDecompressed(source: ByteSource, options: DecompressOptions = {}): DecompressedInput {
  if (!isCompressedInput(source)) {
    options.verbose?.text("Uncompressed bundle.\n");
    return { source, close() {} };
  }
  let walk: CcobWalk;
  try {
    walk = walkOf(source);
  } catch (e) {
    failedToDecompress(e);
  }
  const input = decompressMember(source, walk.members[0], options);
  return { ...input, walk, close: () => input.close() };
}

/** Calls `use` with each CCOB's contents in turn (or once with the input itself when uncompressed). */
export function forEachDecompressed(source: ByteSource, options: DecompressOptions, use: (input: DecompressedInput, index: number) => void): void {
  if (!isCompressedInput(source)) {
    options.verbose?.text("Uncompressed bundle.\n");
    use({ source, close() {} }, 0);
    return;
  }
  let walk: CcobWalk;
  try {
    walk = walkOf(source);
  } catch (e) {
    failedToDecompress(e);
  }
  walk.members.forEach((member, index) => {
    const input = decompressMember(source, member, options);
    try {
      use({ ...input, walk }, index);
    } finally {
      input.close();
    }
  });
}
