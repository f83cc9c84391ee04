/**
 * The messages between the main thread (src/browser/client.ts) and the Worker (src/browser/worker.ts).
 * Files travel as the Blob itself (structured clone shares the file, it is not copied); entry bytes come
 * back transferred.
 */
import type { EntryRef, InspectProgress, Inspection } from "./inspect.js";
import type { ReportPart } from "./report-parts.js";
import type { DiffSummary, KernelQuery, KernelRows, KernelTableSummary } from "./kernel-tables.js";
import type { PackageProblem, PackageWalk } from "../packages/walk.js";
import type { TreeFile } from "./kpack-tree.js";

export type WorkerRequest =
  /**
   * With `tree` (the files dropped with it, `path` being its own path among them), a kpack'd host's code
   * objects are looked for in the tree's `.kpack` archives (src/browser/kpack-tree.ts).
   */
  | { readonly id: number; readonly op: "inspect"; readonly file: Blob; readonly name: string; readonly tree?: readonly TreeFile[]; readonly path?: string }
  /** The file walked as a package (src/browser/packages.ts inspectPackage) when its content is one. */
  | { readonly id: number; readonly op: "inspect-package"; readonly file: Blob; readonly name: string }
  /** An entry's bytes; with `member`, of that member of the package `file` is (its path inside it, as inspect-package gave it). */
  | { readonly id: number; readonly op: "extract"; readonly file: Blob; readonly ref: EntryRef; readonly member?: readonly string[] }
  /**
   * `offload-kit prune --keep=GPU,...` of the file (src/prune/index.ts planPrune), `name` as its messages name it;
   * with `member`, of that member of the package `file` is (the package walked again to reach it).
   */
  | { readonly id: number; readonly op: "prune"; readonly file: Blob; readonly name: string; readonly keep: readonly string[]; readonly member?: readonly string[]; readonly package?: boolean }
  /** The kernels of `file`, kept in the worker as a table (src/browser/kernel-tables.ts); then windows of it. */
  | { readonly id: number; readonly op: "kernels"; readonly file: Blob }
  | { readonly id: number; readonly op: "kernel-rows"; readonly query: KernelQuery }
  /** `offload-kit diff a b`. */
  | { readonly id: number; readonly op: "diff"; readonly a: Blob; readonly b: Blob };

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
  /**
   * Set by the client: how the result arrived (src/browser/report-parts.ts): in how many messages, and the
   * most items (bundles, entries, size rows) one of them carried.
   */
  readonly delivery?: { readonly messages: number; readonly largestPart: number };
}

/** What reading one entry cost: bytes read from the file, and compressed bundles decoded (0 when kept from before). */
export interface ExtractStats {
  readonly bytesRead: number;
  readonly decoded: number;
}

/**
 * A pruned file as the parts it is made of, in order: bytes the worker made (transferred), runs of zeros,
 * and ranges of the input file, which the page slices from the File itself (a Blob of slices: the kept
 * code objects of a plain bundle are never read into memory, on either side). A compressed output comes
 * as one part of bytes. A package member's output has no ranges (the member is not a slice of the File).
 */
export type PrunedPart =
  | { readonly bytes: Uint8Array }
  | { readonly zeros: number }
  | { readonly offset: number; readonly size: number };

export interface PruneReply {
  /** What prune took the file for (`bundle`, `archive`, `fat object`, ...). */
  readonly container: string;
  /** False: the output is the input unchanged (`parts` is then one range, the whole file). */
  readonly changed: boolean;
  readonly parts: readonly PrunedPart[];
  readonly outputSize: number;
  /** Entries kept and seen, host entries included (`offload-kit prune` keeps every host entry). */
  readonly kept: number;
  readonly entries: number;
  readonly notes: readonly string[];
}

/** One member of a package holding device code: its inspection, as `inspect` gives a plain file's. */
export interface PackageMemberResult extends Inspection {
  /** The member's path inside the package, one element per level (its report's `path` is `name!a!b`). */
  readonly member: readonly string[];
  /** The container `prune` would take the member for (`bundle`, `linked ELF`, ...); undefined when none. */
  readonly editableAs?: string;
}

/**
 * A package walked in the worker: the members with device code (or problems), each inspected whole in
 * memory (so a member's entries are not ranges of the File), and the walk's counts. Sent in one message:
 * a package's members are not split into parts as a single file's report is.
 */
export interface PackageResult {
  readonly name: string;
  readonly package: PackageWalk;
  readonly members: readonly PackageMemberResult[];
  readonly problems: readonly PackageProblem[];
  readonly bytesRead: number;
  readonly reads: number;
  readonly milliseconds: number;
  readonly engine: "wasm" | "ts";
  readonly codecError?: WorkerFailure;
}

export type WorkerReply =
  | { readonly id: number; readonly op: "progress"; readonly progress: InspectProgress }
  /** A slice of the result's long lists; the parts come first, then "inspected" with the rest. */
  | { readonly id: number; readonly op: "part"; readonly part: ReportPart }
  | { readonly id: number; readonly op: "inspected"; readonly result: InspectResult }
  /** The answer to "inspect-package": undefined when the file is not a package. */
  | { readonly id: number; readonly op: "package"; readonly result: PackageResult | undefined }
  | { readonly id: number; readonly op: "extracted"; readonly bytes: Uint8Array; readonly stats: ExtractStats }
  | { readonly id: number; readonly op: "pruned"; readonly result: PruneReply }
  | { readonly id: number; readonly op: "kernels"; readonly result: KernelTableSummary }
  | { readonly id: number; readonly op: "kernel-rows"; readonly result: KernelRows }
  | { readonly id: number; readonly op: "diff"; readonly result: DiffSummary }
  | { readonly id: number; readonly op: "failed"; readonly error: WorkerFailure };
