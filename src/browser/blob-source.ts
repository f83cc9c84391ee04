/**
 * A `Blob` (a `File` from an `<input type=file>` or a drop) as a ByteSource, read slice by slice so a
 * multi-GB file is never held whole.
 *
 * Every reader in the library (the locator, bundles, archives, offload binaries, CCOB) is synchronous
 * over ByteSource. Rather than fork each into an async copy, the reading runs in a dedicated Worker,
 * where `FileReaderSync` reads a Blob slice synchronously: `read()` below. The worker entry
 * (src/browser/worker.ts) does that; the page's main thread never blocks. Elsewhere (a main thread)
 * `read()` refuses and `readAsync()` (`slice().arrayBuffer()`) serves small reads and downloads.
 *
 * Measured in headless Chromium 156 on this machine (bench/browser.mjs): a FileReaderSync read of 4 KiB
 * costs ~25 µs and 1 MiB ~0.25 ms, so the ~300 reads that locate the 111 bundles of a 1.3 GB library take
 * well under 100 ms. The bytes land in a fresh ArrayBuffer per read (FileReaderSync has no BYOB form, and
 * a BYOB stream reader cannot fill Wasm memory, whose buffer cannot be detached), then one copy puts them
 * in the engine's window: at ~10 GB/s that copy is noise next to the read.
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

export class BlobSource implements ByteSource {
  readonly size: number;
  /** Bytes read so far (what a test checks to see that a file is not read twice, or whole). */
  bytesRead = 0;
  /** Reads made so far, and the time they took (ms). */
  reads = 0;
  readMilliseconds = 0;
  private readonly reader: SyncBlobReader | undefined;

  constructor(readonly blob: Blob) {
    this.size = blob.size;
    this.reader = syncReader();
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

  /** Copies what a read returned into `dest` and counts it. */
  private deliver(dest: Uint8Array, bytes: ArrayBuffer, n: number): number {
    const got = Math.min(n, bytes.byteLength);
    dest.set(new Uint8Array(bytes, 0, got));
    this.bytesRead += got;
    this.reads++;
    return got;
  }

  read(dest: Uint8Array, position: number): number {
    const reader = this.reader;
    if (reader === undefined) {
      throw new OffloadKitError("SYNC_READ_UNAVAILABLE",
        "a Blob can be read synchronously only in a Worker (FileReaderSync): read it there (offload-kit/browser's OffloadKitWorker), or use readAsync()");
    }
    const n = this.range(dest, position);
    if (n === 0) return 0;
    let bytes: ArrayBuffer;
    const started = performance.now();
    try {
      bytes = reader.readAsArrayBuffer(this.blob.slice(position, position + n));
    } catch (e) {
      throw readFailed(e, position);
    }
    this.readMilliseconds += performance.now() - started;
    return this.deliver(dest, bytes, n);
  }

  /** The asynchronous read, anywhere: `blob.slice().arrayBuffer()`. */
  async readAsync(dest: Uint8Array, position: number): Promise<number> {
    const n = this.range(dest, position);
    if (n === 0) return 0;
    let bytes: ArrayBuffer;
    const started = performance.now();
    try {
      bytes = await this.blob.slice(position, position + n).arrayBuffer();
    } catch (e) {
      throw readFailed(e, position);
    }
    this.readMilliseconds += performance.now() - started;
    return this.deliver(dest, bytes, n);
  }
}
