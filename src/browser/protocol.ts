/**
 * The messages between the main thread (src/browser/client.ts) and the Worker (src/browser/worker.ts).
 * Files travel as the Blob itself (structured clone shares the file, it is not copied); entry bytes come
 * back transferred.
 */
import type { EntryRef, InspectProgress, Inspection } from "./inspect.js";

export type WorkerRequest =
  | { readonly id: number; readonly op: "inspect"; readonly file: Blob; readonly name: string }
  | { readonly id: number; readonly op: "extract"; readonly file: Blob; readonly ref: EntryRef };

export interface WorkerFailure {
  readonly code: string;
  readonly message: string;
  readonly offset?: number;
}

export interface InspectResult extends Inspection {
  /** Bytes read from the file, and in how many reads (the file is never read whole, nor twice). */
  readonly bytesRead: number;
  readonly reads: number;
  /** Of `milliseconds`, the time spent waiting for reads. */
  readonly readMilliseconds: number;
  /** Time spent in the worker, reading and parsing. */
  readonly milliseconds: number;
  readonly engine: "wasm" | "ts";
  /** Set when the codecs could not load: compressed bundles are then reported as problems. */
  readonly codecError?: WorkerFailure;
}

/** What reading one entry cost: bytes read from the file, and compressed bundles decoded (0 when kept from before). */
export interface ExtractStats {
  readonly bytesRead: number;
  readonly decoded: number;
}

export type WorkerReply =
  | { readonly id: number; readonly op: "progress"; readonly progress: InspectProgress }
  | { readonly id: number; readonly op: "inspected"; readonly result: InspectResult }
  | { readonly id: number; readonly op: "extracted"; readonly bytes: Uint8Array; readonly stats: ExtractStats }
  | { readonly id: number; readonly op: "failed"; readonly error: WorkerFailure };
