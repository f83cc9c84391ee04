/** A worker thread of src/compress/node/compress-pool.ts: compresses chunks into zstd frames, or decodes frames. */
import { workerData } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import { CodecError } from "../codecs.js";
import { loadZstd } from "../zstd-wasm.js";
import { runFrameTask } from "./compress-pool.js";
import { useNativeZstd } from "./zstd-native.js";
import type { FrameReply, FrameTask } from "./compress-pool.js";

const { port, signal } = workerData as { port: MessagePort; signal: Int32Array };

if (!useNativeZstd()) await loadZstd();

port.on("message", (task: FrameTask) => {
  let reply: FrameReply;
  const transfer: ArrayBuffer[] = [];
  try {
    const frame = runFrameTask(task.op, task.chunk, task.arg);
    transfer.push(frame.buffer as ArrayBuffer);
    // The input goes back for the caller to fill again, rather than waiting here for the collector.
    const input = task.chunk.buffer !== frame.buffer ? task.chunk : undefined;
    if (input !== undefined) transfer.push(input.buffer as ArrayBuffer);
    reply = { seq: task.seq, frame, input };
  } catch (e) {
    reply = { seq: task.seq, error: e instanceof CodecError ? e.message : String(e) };
  }
  port.postMessage(reply, transfer);
  // Wake the caller, which waits on this counter instead of running an event loop.
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
});
