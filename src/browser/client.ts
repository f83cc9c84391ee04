/**
 * The main thread's side of the Worker (src/browser/worker.ts): `new OffloadKitWorker()` starts one, and
 * `inspect(file)` / `extract(file, ref)` return promises that always settle: with the answer, with the
 * worker's OffloadKitError, or with WORKER_FAILED when the worker cannot start or dies.
 *
 * Where the worker's code comes from: by default a copy of it inlined in the library at build time
 * (scripts/build-browser.mjs), started from a blob: URL, so no bundler needs to know about workers and no
 * file is copied by hand; or a URL you give (`new OffloadKitWorker({ url })`, pointing at the
 * `offload-kit/browser-worker` module as your bundler emits it, or a file you serve: what a page with a
 * Content-Security-Policy that refuses blob: workers needs); or a Worker you started yourself.
 */
import type { TreeFile } from "./kpack-tree.js";
import { OffloadKitError } from "../engine/errors.js";
import type { EntryRef, InspectProgress } from "./inspect.js";
import type { DiffSummary, KernelQuery, KernelRows, KernelTableSummary } from "./kernel-tables.js";
import type { ExtractStats, InspectResult, PackageResult, PruneReply, WorkerReply, WorkerRequest } from "./protocol.js";
import { ResultAssembler } from "./report-parts.js";

export interface OffloadKitWorkerOptions {
  /** The worker script (see above); default: the copy inlined in the library. */
  readonly url?: string | URL;
  /** How `url` is loaded: "module" for an ES module worker (default "classic", what the inlined copy is). */
  readonly type?: WorkerType;
  /** A worker already running src/browser/worker.ts. */
  readonly worker?: Worker;
}

export interface InspectRequestOptions {
  /** The name reported as `path` (default: the File's name). */
  readonly name?: string;
  readonly onProgress?: (progress: InspectProgress) => void;
  /**
   * The files dropped with it, by their paths in the folder (`webkitRelativePath`), and `path`, its own: a
   * kpack'd host's code objects are then looked for in the tree's `.kpack` archives as the runtime looks
   * beside the binary on disk (inspect only).
   */
  readonly tree?: readonly TreeFile[];
  readonly path?: string;
}

/** A request without its id (assigned when sent). */
type RequestBody = WorkerRequest extends infer R ? (R extends unknown ? Omit<R, "id"> : never) : never;

interface Pending {
  resolve(reply: WorkerReply): void;
  reject(error: OffloadKitError): void;
  onProgress?: (progress: InspectProgress) => void;
  /** The parts of an inspect result received so far (src/browser/report-parts.ts). */
  parts?: ResultAssembler;
}

async function inlineWorker(): Promise<Worker> {
  const { WORKER_SOURCE } = await import("./worker-source.generated.js");
  const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "text/javascript" }));
  try {
    return new Worker(url);
  } finally {
    // The worker has fetched its script by the time it runs; a pending fetch keeps the blob alive.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }
}

export class OffloadKitWorker {
  private readonly worker: Promise<Worker>;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failed: OffloadKitError | undefined;

  constructor(options: OffloadKitWorkerOptions = {}) {
    const start = async () => {
      if (options.worker !== undefined) return options.worker;
      if (options.url !== undefined) return new Worker(options.url, { type: options.type ?? "classic" });
      return inlineWorker();
    };
    this.worker = start().then(
      (worker) => {
        worker.addEventListener("message", (event: MessageEvent<WorkerReply>) => this.receive(event.data));
        worker.addEventListener("error", (event: ErrorEvent) => {
          event.preventDefault();
          this.fail(`the offload-kit worker failed: ${event.message || "its script could not be loaded"}`);
        });
        worker.addEventListener("messageerror", () => this.fail("the offload-kit worker sent a message that could not be read"));
        return worker;
      },
      (e: unknown) => {
        this.fail(`the offload-kit worker could not be started: ${e instanceof Error ? e.message : String(e)}`);
        throw this.failed;
      },
    );
    // The rejection is reported through each request; do not let it surface as unhandled.
    this.worker.catch(() => {});
  }

  private fail(message: string): void {
    this.failed = new OffloadKitError("WORKER_FAILED", message);
    for (const pending of this.pending.values()) pending.reject(this.failed);
    this.pending.clear();
  }

  private receive(reply: WorkerReply): void {
    const pending = this.pending.get(reply.id);
    if (pending === undefined) return;
    if (reply.op === "progress") {
      pending.onProgress?.(reply.progress);
      return;
    }
    if (reply.op === "part") {
      // Appended as it arrives: each message is a task of its own on this thread, none holds the whole list.
      (pending.parts ??= new ResultAssembler()).add(reply.part);
      return;
    }
    this.pending.delete(reply.id);
    if (reply.op === "failed") {
      pending.reject(new OffloadKitError(reply.error.code, reply.error.message, { offset: reply.error.offset }));
    } else if (reply.op === "inspected") {
      const parts = pending.parts ?? new ResultAssembler();
      const result = parts.finish(reply.result);
      pending.resolve({ ...reply, result: { ...result, delivery: { messages: parts.parts + 1, largestPart: parts.largestPart } } });
    } else {
      pending.resolve(reply);
    }
  }

  private async request(message: RequestBody, onProgress?: (p: InspectProgress) => void): Promise<WorkerReply> {
    if (this.failed !== undefined) throw this.failed;
    const worker = await this.worker;
    const id = this.nextId++;
    return new Promise<WorkerReply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      worker.postMessage({ ...message, id } as WorkerRequest);
    });
  }

  /** Every bundle and offload binary in `file`, as `offload-kit ls --json` reports it, with its sizes. */
  async inspect(file: Blob, options: InspectRequestOptions = {}): Promise<InspectResult> {
    const name = options.name ?? ((file as File).name || "blob");
    const tree = options.tree !== undefined ? { tree: options.tree, path: options.path ?? name } : {};
    const reply = await this.request({ op: "inspect", file, name, ...tree }, options.onProgress);
    if (reply.op !== "inspected") throw new OffloadKitError("INTERNAL", `unexpected reply '${reply.op}' from the worker`);
    return reply.result;
  }

  /**
   * `file` walked as a package (a wheel, .deb, .rpm, conda package, tarball, compressed stream or image
   * layout, told by its content as `offload-kit ls` tells it): each member with device code inspected.
   * Undefined when the file is not a package (then `inspect` is the answer).
   */
  async inspectPackage(file: Blob, options: InspectRequestOptions = {}): Promise<PackageResult | undefined> {
    const name = options.name ?? ((file as File).name || "blob");
    const reply = await this.request({ op: "inspect-package", file, name }, options.onProgress);
    if (reply.op !== "package") throw new OffloadKitError("INTERNAL", `unexpected reply '${reply.op}' from the worker`);
    return reply.result;
  }

  /**
   * One entry's bytes (decompressed for an entry of a compressed bundle or a compressed offload image);
   * with `member`, an entry of that member of the package `file` is (as inspectPackage named it).
   */
  async extract(file: Blob, ref: EntryRef, options: { member?: readonly string[] } = {}): Promise<Uint8Array> {
    return (await this.extractWithStats(file, ref, options)).bytes;
  }

  /**
   * extract(), with what it cost: a compressed bundle this worker decoded for an earlier request on the same
   * file is kept (bounded, src/browser/inspect.ts DecodedBundles), and then `decoded` is 0.
   */
  async extractWithStats(file: Blob, ref: EntryRef, options: { member?: readonly string[] } = {}): Promise<{ bytes: Uint8Array } & ExtractStats> {
    const reply = await this.request({ op: "extract", file, ref, ...(options.member !== undefined ? { member: options.member } : {}) });
    if (reply.op !== "extracted") throw new OffloadKitError("INTERNAL", `unexpected reply '${reply.op}' from the worker`);
    return { bytes: reply.bytes, ...reply.stats };
  }

  /**
   * `offload-kit prune --keep=GPU,...` of `file`, as the parts the output is made of (src/browser/protocol.ts);
   * `prunedBlob` puts them together. Linked ELF files (executables, shared libraries) too: their output is
   * slices of `file` and the bytes the ELF editor made, never the whole file in memory. With `member`, that
   * member of the package `file` is (as inspectPackage named it): what `offload-kit prune` writes for the
   * member extracted. With `package`, the package itself rewritten, as `offload-kit prune x.whl -o out.whl`
   * writes it (src/browser/prune-package/: zips, .conda, .deb and tarballs; RPMs and images are refused, saying so).
   */
  async prune(file: Blob, keep: readonly string[], options: { name?: string; member?: readonly string[]; package?: boolean } = {}): Promise<PruneReply> {
    const name = options.name ?? ((file as File).name || "blob");
    const reply = await this.request({ op: "prune", file, name, keep, ...(options.member !== undefined ? { member: options.member } : {}), ...(options.package === true ? { package: true } : {}) });
    if (reply.op !== "pruned") throw new OffloadKitError("INTERNAL", `unexpected reply '${reply.op}' from the worker`);
    return reply.result;
  }

  /**
   * The kernels of `file` (as `offload-kit kernels` lists them), kept in the worker as a table: the summary
   * comes back, and `kernelRows` asks for a window of it sorted and filtered (src/browser/kernel-tables.ts).
   */
  async kernels(file: Blob): Promise<KernelTableSummary> {
    const reply = await this.request({ op: "kernels", file });
    if (reply.op !== "kernels") throw new OffloadKitError("INTERNAL", `unexpected reply '${reply.op}' from the worker`);
    return reply.result;
  }

  async kernelRows(query: KernelQuery): Promise<KernelRows> {
    const reply = await this.request({ op: "kernel-rows", query });
    if (reply.op !== "kernel-rows") throw new OffloadKitError("INTERNAL", `unexpected reply '${reply.op}' from the worker`);
    return reply.result;
  }

  /** `offload-kit diff a b`: per target ID and per kernel. */
  async diff(a: Blob, b: Blob): Promise<DiffSummary> {
    const reply = await this.request({ op: "diff", a, b });
    if (reply.op !== "diff") throw new OffloadKitError("INTERNAL", `unexpected reply '${reply.op}' from the worker`);
    return reply.result;
  }

  /** Stops the worker; requests still pending reject. */
  terminate(): void {
    this.fail("the offload-kit worker was terminated");
    void this.worker.then((worker) => worker.terminate(), () => {});
  }
}

/** The pruned file as a Blob: the ranges of the input are slices of `file` (nothing read), the rest the worker's bytes. */
export function prunedBlob(file: Blob, result: PruneReply): Blob {
  return new Blob(result.parts.map((p) => ("bytes" in p ? (p.bytes as Uint8Array<ArrayBuffer>) : "zeros" in p ? new Uint8Array(p.zeros) : file.slice(p.offset, p.offset + p.size))));
}
