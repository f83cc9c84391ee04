/**
 * A `Blob` (a `File` from an `<input type=file>` or a drop) as a ByteSource, read slice by slice so a
 * multi-GB file is never held whole.
 *
 * Every reader in the library (the locator, bundles, archives, offload binaries, CCOB) is synchronous
 * over ByteSource. Rather than fork each into an async copy, the reading runs in a dedicated Worker,
 * where `FileReaderSync` reads a Blob slice synchronously: `read()` below. The worker entry
 * (src/browser/worker.ts) does that; the page's main thread never blocks. Elsewhere (a main thread)
 * `read()` refuses and `readAsync()` (`slice().arrayBuffer()`) serves the reads a caller makes itself.
 *
 * Measured in headless Chromium 156 on this machine (bench/browser.mjs, one read at 200 random offsets of a
 * 1.3 GB file, three runs): FileReaderSync takes 1.0–1.7 ms for 4–64 KiB and 3.5–9 ms for 1 MiB, against
 * 0.85–1.0 ms and 2.6–3.9 ms for an awaited slice().arrayBuffer(). Synchronous reads cost more,
 * but they let every reader run unchanged, and the locator needs few: with the block cache below,
 * listing the 111 bundles of librocsparse0 takes 114 reads (~2.3 MB, ~200 ms of reading); a region
 * searched window by window is read ahead 8 MiB at a time (READ_AHEAD). FileReaderSync
 * has no BYOB form (and a BYOB stream reader cannot fill Wasm memory, whose buffer cannot be detached):
 * each read lands in a fresh ArrayBuffer and one copy puts it in the engine's window.
 */
import { OffloadKitError } from "../engine/errors.js";
import type { ByteSource } from "../engine/source.js";

interface SyncBlobReader {
  readAsArrayBuffer(blob: Blob): ArrayBuffer;
}

/** FileReaderSync, where this global scope has it (dedicated and shared workers). */
function syncReader(): SyncBlobReader | undefined {
  const constructor = (globalThis as { FileReaderSync?: new () => SyncBlobReader }).FileReaderSync;
  return constructor === undefined ? undefined : new constructor();
}

/** The file changed or vanished since it was chosen (NotReadableError): say where. */
function readFailed(e: unknown, position: number): OffloadKitError {
  return new OffloadKitError("READ_FAILED", `cannot read the file at offset ${position}: ${e instanceof Error ? e.message : String(e)}`, { offset: position, cause: e });
}

/**
 * Small reads are widened to whole 16 KiB blocks and the last few are kept: a read costs ~1.5 ms however
 * small, and the locator's reads come in overlapping pairs (the search that finds the next bundle, then
 * that bundle's header), so a librocsparse0 listing needs about half the reads. Reads larger than
 * CACHED_READ_MAX (window loads) go straight through.
 */
const BLOCK = 16 * 1024;
const CACHED_READ_MAX = 64 * 1024;
const CACHED_SPANS = 4;
/**
 * Large reads that follow one another (a region searched window by window) are read 8 MiB at a time: one
 * FileReaderSync read of 1 MiB ran at ~200 MB/s here, of 4 MiB ~370, of 16 MiB ~680 (bench/browser.mjs).
 */
const READ_AHEAD = 8 * 1024 * 1024;

interface Span {
  readonly position: number;
  readonly bytes: Uint8Array;
}

export class BlobSource implements ByteSource {
  readonly size: number;
  /** Bytes read from the file so far (what a test checks to see that a file is not read twice, or whole). */
  bytesRead = 0;
  /** Reads made so far, and the time they took (ms). */
  reads = 0;
  readMilliseconds = 0;
  private readonly reader: SyncBlobReader | undefined;
  private readonly spans: Span[] = [];
  private ahead: Span | undefined;
  /** Where the last large read started and ended: a large read from within it continues a sequential walk. */
  private lastLarge = { start: -1, end: -1 };

  private readonly onRead: ((end: number) => void) | undefined;

  /** `onRead` hears where each read of the file ended (for progress). */
  constructor(readonly blob: Blob, options: { onRead?: (end: number) => void } = {}) {
    this.size = blob.size;
    this.reader = syncReader();
    this.onRead = options.onRead;
  }

  /** Whether `read()` works here (a worker), or only `readAsync()` does (a main thread). */
  get canReadSync(): boolean {
    return this.reader !== undefined;
  }

  private range(dest: Uint8Array, position: number): number {
    if (!Number.isSafeInteger(position) || position < 0) {
      throw new OffloadKitError("OUT_OF_BOUNDS", `read at ${position} is outside the ${this.size}-byte file`, { offset: position });
    }
    return Math.max(0, Math.min(dest.length, this.size - position));
  }

  private counted(bytes: ArrayBuffer, started: number, position: number): Uint8Array {
    this.readMilliseconds += performance.now() - started;
    this.bytesRead += bytes.byteLength;
    this.reads++;
    this.onRead?.(position + bytes.byteLength);
    return new Uint8Array(bytes);
  }

  /** Bytes [start, end) of the file, synchronously. */
  private readSync(reader: SyncBlobReader, start: number, end: number): Uint8Array {
    const started = performance.now();
    try {
      return this.counted(reader.readAsArrayBuffer(this.blob.slice(start, end)), started, start);
    } catch (e) {
      throw readFailed(e, start);
    }
  }

  read(dest: Uint8Array, position: number): number {
    const reader = this.reader;
    if (reader === undefined) {
      throw new OffloadKitError("SYNC_READ_UNAVAILABLE",
        "a Blob can be read synchronously only in a Worker (FileReaderSync): read it there (offload-kit/browser's OffloadKitWorker), or use readAsync()");
    }
    const n = this.range(dest, position);
    if (n === 0) return 0;
    if (n > CACHED_READ_MAX) return this.readLarge(reader, dest, position, n);
    let span = this.spans.find((s) => position >= s.position && position + n <= s.position + s.bytes.length);
    if (span === undefined) {
      const start = position - (position % BLOCK);
      span = { position: start, bytes: this.readSync(reader, start, Math.min(this.size, Math.ceil((position + n) / BLOCK) * BLOCK)) };
      this.spans.unshift(span);
      this.spans.length = Math.min(this.spans.length, CACHED_SPANS);
    }
    const got = Math.max(0, Math.min(n, span.position + span.bytes.length - position));
    dest.set(span.bytes.subarray(position - span.position, position - span.position + got));
    return got;
  }

  private readLarge(reader: SyncBlobReader, dest: Uint8Array, position: number, n: number): number {
    // A large read that starts in a block already read (a compressed bundle read whole after its header
    // was) takes that part from the block: the file's bytes are read once.
    const ahead = this.ahead;
    const inAhead = ahead !== undefined && position >= ahead.position && position + n <= ahead.position + ahead.bytes.length;
    const cached = inAhead ? undefined : this.spans.find((s) => position >= s.position && position < s.position + s.bytes.length);
    if (cached !== undefined) {
      const have = Math.min(n, cached.position + cached.bytes.length - position);
      dest.set(cached.bytes.subarray(position - cached.position, position - cached.position + have));
      return have === n ? n : have + this.readLarge(reader, dest.subarray(have), position + have, n - have);
    }
    const sequential = position >= this.lastLarge.start && position <= this.lastLarge.end;
    this.lastLarge = { start: position, end: position + n };
    let span = this.ahead;
    if (span === undefined || position < span.position || position + n > span.position + span.bytes.length) {
      const end = sequential ? Math.min(this.size, position + Math.max(n, READ_AHEAD)) : position + n;
      span = { position, bytes: this.readSync(reader, position, end) };
      this.ahead = sequential ? span : undefined;
    }
    const got = Math.max(0, Math.min(n, span.position + span.bytes.length - position));
    dest.set(span.bytes.subarray(position - span.position, position - span.position + got));
    return got;
  }

  /** The asynchronous read, anywhere: `blob.slice().arrayBuffer()`. */
  async readAsync(dest: Uint8Array, position: number): Promise<number> {
    const n = this.range(dest, position);
    if (n === 0) return 0;
    const started = performance.now();
    let bytes: Uint8Array;
    try {
      bytes = this.counted(await this.blob.slice(position, position + n).arrayBuffer(), started, position);
    } catch (e) {
      throw readFailed(e, position);
    }
    dest.set(bytes.subarray(0, n));
    return Math.min(n, bytes.length);
  }
}
