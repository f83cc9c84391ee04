/** What the campaign's main thread and its workers say to each other. */
import type { FailureKind } from "./check.js";

export interface RunChunk {
  readonly type: "run";
  readonly parser: string;
  readonly seed: string;
  readonly start: number;
  readonly count: number;
  /** Stop early at this time (epoch ms), 0 for never. */
  readonly deadline: number;
  readonly timeoutMs: number;
}

export interface FoundFailure {
  readonly index: number;
  readonly kind: FailureKind;
  readonly detail: string;
  readonly input: Uint8Array;
  readonly minimised: Uint8Array;
  readonly capacity: number;
  readonly chunked: boolean;
}

export interface ChunkDone {
  readonly type: "done";
  readonly parser: string;
  readonly start: number;
  readonly ran: number;
  readonly accepted: number;
  readonly largest: number;
  readonly slowestMs: number;
  /** Highest heap + array-buffer memory of the worker seen during the chunk (sampled every 64 cases). */
  readonly peakHeap: number;
  readonly failures: readonly FoundFailure[];
}

/** Layout of the shared heartbeat: Int32 [case index, busy], Float64 at byte 8: case start (epoch ms). */
export const HEARTBEAT_BYTES = 16;
