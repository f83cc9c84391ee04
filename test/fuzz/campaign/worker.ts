/**
 * A campaign worker: runs chunks of cases for one parser at a time and reports counts and failures. The
 * main thread watches the shared heartbeat and terminates a worker whose case overruns the time limit.
 */
import { parentPort, workerData } from "node:worker_threads";
import { loadZstd } from "../../../src/compress/zstd-wasm.js";
import { installAllocationWatch } from "./alloc.js";
import { crashText, minimise, runCase } from "./check.js";
import type { CaseStats } from "./check.js";
import type { ChunkDone, FoundFailure, RunChunk } from "./messages.js";
import { targetNamed } from "./targets.js";

const heartbeat = new Int32Array(workerData.heartbeat as SharedArrayBuffer, 0, 2);
const started = new Float64Array(workerData.heartbeat as SharedArrayBuffer, 8, 1);
const ready = new Set<string>();

await loadZstd();
installAllocationWatch();

async function runChunk(chunk: RunChunk): Promise<ChunkDone> {
  const target = targetNamed(chunk.parser);
  if (target === undefined) throw new Error(`no parser named ${chunk.parser}`);
  if (!ready.has(target.name)) {
    await target.setup?.();
    ready.add(target.name);
  }
  const failures: FoundFailure[] = [];
  let ran = 0;
  let accepted = 0;
  let largest = 0;
  let slowestMs = 0;
  let peakHeap = 0;
  for (let index = chunk.start; index < chunk.start + chunk.count; index++) {
    if (chunk.deadline !== 0 && Date.now() > chunk.deadline) break;
    heartbeat[0] = index;
    started[0] = Date.now();
    Atomics.store(heartbeat, 1, 1);
    const stats: CaseStats = { accepted: false, largest: 0 };
    const t = performance.now();
    // A campaign bug must not end the campaign: it is reported like any crash, with the case to rerun.
    const result = await runCase(target, chunk.seed, index, stats).catch((e: unknown) => ({
      failure: { kind: "crash" as const, detail: `campaign error: ${crashText(e)}` }, input: new Uint8Array(0), capacity: 0, chunked: false,
    }));
    const ms = performance.now() - t;
    Atomics.store(heartbeat, 1, 0);
    ran++;
    if ((ran & 63) === 0) {
      const memory = process.memoryUsage();
      peakHeap = Math.max(peakHeap, memory.heapUsed + memory.arrayBuffers);
    }
    if (stats.accepted) accepted++;
    largest = Math.max(largest, stats.largest);
    slowestMs = Math.max(slowestMs, ms);
    let failure = result.failure;
    if (failure === undefined && ms > chunk.timeoutMs) failure = { kind: "hang", detail: `the case took ${Math.round(ms)} ms (limit ${chunk.timeoutMs} ms)` };
    if (failure !== undefined) {
      const minimised = failure.kind === "hang" || failure.detail.startsWith("campaign error") ? result.input : await minimise(target, result.input, result.capacity, result.chunked, failure.kind);
      failures.push({ index, kind: failure.kind, detail: failure.detail, input: result.input, minimised, capacity: result.capacity, chunked: result.chunked });
    }
  }
  return { type: "done", parser: chunk.parser, start: chunk.start, ran, accepted, largest, slowestMs, peakHeap, failures };
}

parentPort!.on("message", (message: RunChunk) => {
  void runChunk(message).then(
    (done) => parentPort!.postMessage(done),
    (error) => {
      throw error;
    },
  );
});
parentPort!.postMessage({ type: "ready" });
