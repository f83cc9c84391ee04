/**
 * Compressing zstd frames on worker threads while the calling thread keeps reading inputs and hashing,
 * without making the bundler asynchronous: tasks go out on a MessagePort, each worker bumps a shared
 * counter when it answers, and the caller blocks on that counter (Atomics.wait) and collects answers
 * with receiveMessageOnPort. Frames come back in any order and are handed on in submission order.
 * libzstd here is node:zlib's (Node 22.15 and later) or the single-threaded WebAssembly build; LLVM
 * compresses on one thread, so two cores give us the margin over the native tool (bench/ccob.mjs).
 */
import { availableParallelism } from "node:os";
import type { MessagePort, Worker } from "node:worker_threads";
import { CodecError } from "../codecs.js";
import { zstdCompress, zstdDecompressFrame } from "../zstd-wasm.js";
import { nativeZstdCompress, nativeZstdDecompressFrame, useNativeZstd } from "./zstd-native.js";
import { workerThreadsModule } from "../../node/builtins.js";

/** What a worker does with a chunk: compress it into one frame at a level, or decode one frame into at most `arg` bytes. */
export type FrameOp = "compress" | "decompress";

export interface FramePool {
  /**
   * A buffer of `size` bytes for the next chunk to submit: one a worker gave back when one is large enough.
   * A new array per frame would wait, dead, in the worker until its collector ran (Node 20: the
   * WebAssembly libzstd copies it in and is done with it).
   */
  buffer(size: number): Uint8Array;
  /** Queues `chunk` (its buffer is transferred) for `op`; `done` gets the result, in submission order. */
  submit(op: FrameOp, chunk: Uint8Array, arg: number, done: (frame: Uint8Array) => void): void;
  /** Waits until `until()` holds or nothing is queued (results are handed on as they come); the workers stay up. */
  settle(until: () => boolean): void;
  /** Waits for every queued frame and stops the workers. */
  drain(): void;
  /** Stops the workers without waiting (after an error). */
  abort(): void;
  /** Wall-clock seconds from the first submission to the end of drain(). */
  readonly seconds: number;
}

export interface FrameTask {
  readonly seq: number;
  readonly op: FrameOp;
  readonly chunk: Uint8Array;
  /** Compression level, or output capacity when decoding. */
  readonly arg: number;
}

/** One frame of work, in this thread; the result owns its whole buffer, so it can be transferred. */
export function runFrameTask(op: FrameOp, chunk: Uint8Array, arg: number): Uint8Array {
  if (!useNativeZstd()) return op === "compress" ? zstdCompress(chunk, arg) : zstdDecompressFrame(chunk, arg);
  const out = op === "compress" ? nativeZstdCompress(chunk, arg) : nativeZstdDecompressFrame(chunk, arg);
  // node:zlib's small outputs can be slices of a shared pool, which must not be transferred.
  return out.byteOffset === 0 && out.byteLength === out.buffer.byteLength ? out : out.slice();
}

/** A result, with the task's input handed back (transferred) for the caller to reuse; or an error. */
export type FrameReply = { readonly seq: number; readonly frame: Uint8Array; readonly input?: Uint8Array } | { readonly seq: number; readonly error: string };

/** Given-back buffers kept for reuse: enough for the next submissions, not a second set of frames in flight. */
const SPARE_BUFFERS = 2;

/** Frames in flight per worker: one compressing, one queued, so a worker never waits for the caller. */
const IN_FLIGHT_PER_WORKER = 2;

function workerUrl(): URL | undefined {
  // Under a TypeScript runner the worker's .ts file cannot be started directly: compress in this thread.
  return import.meta.url.endsWith(".ts") ? undefined : new URL("./compress-worker.js", import.meta.url);
}

class InThreadPool implements FramePool {
  seconds = 0;
  buffer(size: number): Uint8Array {
    return new Uint8Array(size);
  }
  submit(op: FrameOp, chunk: Uint8Array, arg: number, done: (frame: Uint8Array) => void): void {
    const t = performance.now();
    const frame = runFrameTask(op, chunk, arg);
    this.seconds += (performance.now() - t) / 1000;
    done(frame);
  }
  settle(): void {}
  drain(): void {}
  abort(): void {}
}

class WorkerPool implements FramePool {
  seconds = 0;
  private readonly signal = new Int32Array(new SharedArrayBuffer(4));
  private readonly workers: { worker: Worker; port: MessagePort; busy: number }[] = [];
  private readonly waiting = new Map<number, (frame: Uint8Array) => void>();
  private readonly ready = new Map<number, Uint8Array>();
  private readonly spare: ArrayBuffer[] = [];
  /** Buffers buffer() handed out: theirs are transferred whole even under a shorter view. */
  private readonly lent = new WeakSet<ArrayBuffer>();
  /** Tasks whose input is such a buffer (it comes back as a new ArrayBuffer object). */
  private readonly lentTasks = new Set<number>();
  private nextSeq = 0;
  private nextEmit = 0;
  private started = 0;
  private stopped = false;
  /** Replies taken from the ports; the signal counts replies posted, so a difference is a reply in transit. */
  private received = 0;

  constructor(url: URL, count: number) {
    for (let i = 0; i < count; i++) {
      const { MessageChannel, Worker } = workerThreadsModule();
      const { port1, port2 } = new MessageChannel();
      const worker = new Worker(url, { workerData: { port: port2, signal: this.signal }, transferList: [port2] });
      worker.unref();
      this.workers.push({ worker, port: port1, busy: 0 });
    }
  }

  buffer(size: number): Uint8Array {
    const fits = this.spare.filter((b) => b.byteLength >= size).sort((a, b) => a.byteLength - b.byteLength)[0];
    const buffer = fits ?? new ArrayBuffer(size);
    if (fits !== undefined) this.spare.splice(this.spare.indexOf(fits), 1);
    this.lent.add(buffer);
    return new Uint8Array(buffer, 0, size);
  }

  /** Keeps a given-back buffer, the largest SPARE_BUFFERS of them. */
  private keep(buffer: ArrayBuffer): void {
    this.spare.push(buffer);
    this.spare.sort((a, b) => b.byteLength - a.byteLength);
    this.spare.length = Math.min(this.spare.length, SPARE_BUFFERS);
  }

  submit(op: FrameOp, chunk: Uint8Array, arg: number, done: (frame: Uint8Array) => void): void {
    if (this.started === 0) this.started = performance.now();
    while (this.workers.every((w) => w.busy >= IN_FLIGHT_PER_WORKER)) this.collect(true);
    const target = this.workers.reduce((a, b) => (b.busy < a.busy ? b : a));
    const seq = this.nextSeq++;
    this.waiting.set(seq, done);
    target.busy++;
    const task: FrameTask = { seq, op, chunk, arg };
    const whole = chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength;
    const lent = this.lent.has(chunk.buffer as ArrayBuffer);
    if (lent) this.lentTasks.add(seq);
    const transfer = whole || lent;
    target.port.postMessage(task, transfer ? [chunk.buffer as ArrayBuffer] : []);
    this.collect(false);
  }

  /** Takes every answer that has arrived; with `block`, waits until at least one has. */
  private collect(block: boolean): void {
    for (;;) {
      const seen = Atomics.load(this.signal, 0);
      let got = false;
      const receive = workerThreadsModule().receiveMessageOnPort;
      for (const w of this.workers) {
        for (let m = receive(w.port); m !== undefined; m = receive(w.port)) {
          got = true;
          this.received++;
          w.busy--;
          const reply = m.message as FrameReply;
          if ("error" in reply) {
            this.stop();
            throw new CodecError(reply.error);
          }
          this.ready.set(reply.seq, reply.frame);
          // Only buffers buffer() lent: a caller that allocates its own (CompressingWriter) never asks again.
          if (this.lentTasks.delete(reply.seq) && reply.input !== undefined) this.keep(reply.input.buffer as ArrayBuffer);
        }
      }
      this.emitReady();
      if (got || !block) return;
      // A worker bumps the counter right after posting, but the message can reach this end of the port
      // later (Node 20, measured): then the counter has moved already and waiting for it to move again
      // slept the full timeout, about once per bundle (librocsparse0's compress took 18 s instead of 5).
      // With a reply in transit, only yield briefly.
      Atomics.wait(this.signal, 0, seen, seen > this.received ? 1 : 1000);
    }
  }

  private emitReady(): void {
    for (let frame = this.ready.get(this.nextEmit); frame !== undefined; frame = this.ready.get(this.nextEmit)) {
      this.ready.delete(this.nextEmit);
      const done = this.waiting.get(this.nextEmit)!;
      this.waiting.delete(this.nextEmit);
      this.nextEmit++;
      done(frame);
    }
  }

  settle(until: () => boolean): void {
    while (!this.stopped && this.nextEmit < this.nextSeq && !until()) this.collect(true);
  }

  /** Waits for every queued frame; the workers stay up. */
  flush(): void {
    this.settle(() => false);
  }

  drain(): void {
    this.flush();
    if (this.started !== 0) this.seconds = (performance.now() - this.started) / 1000;
    this.stop();
  }

  abort(): void {
    this.stop();
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const w of this.workers) {
      w.port.close();
      void w.worker.terminate();
    }
  }
}

let helper: WorkerPool | undefined;

/**
 * Runs one frame task on a worker thread and waits for it: how a synchronous caller gets zstd before
 * this thread has loaded libzstd (its loading is asynchronous). One worker, started on first use and
 * kept (unref'd) for the next calls. Undefined under a TypeScript runner, where workers cannot start.
 */
export function runOnWorker(op: FrameOp, chunk: Uint8Array, arg: number): Uint8Array | undefined {
  const url = workerUrl();
  if (url === undefined) return undefined;
  helper ??= new WorkerPool(url, 1);
  let result: Uint8Array | undefined;
  try {
    // A copy the worker may own: the caller's bytes stay usable.
    helper.submit(op, chunk.slice(), arg, (frame) => (result = frame));
    helper.flush();
  } catch (e) {
    // A failed task stops the pool: the next call starts a fresh worker.
    helper = undefined;
    throw e;
  }
  return result;
}

/** A pool sized to the machine (two workers at least, so one core hashes, reads and writes while they work). */
export function framePool(): FramePool {
  const url = workerUrl();
  if (url === undefined) return new InThreadPool();
  return new WorkerPool(url, Math.max(2, Math.min(4, availableParallelism())));
}
