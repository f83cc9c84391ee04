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
  try {
    reply = { seq: task.seq, frame: runFrameTask(task.op, task.chunk, task.arg) };
  } catch (e) {
    reply = { seq: task.seq, error: e instanceof CodecError ? e.message : String(e) };
  }
  port.postMessage(reply, "frame" in reply ? [reply.frame.buffer as ArrayBuffer] : []);
  // Wake the caller, which waits on this counter instead of running an event loop.
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
});
