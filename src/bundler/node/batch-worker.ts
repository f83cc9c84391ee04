/** A worker thread of src/bundler/node/batch.ts: unbundles the slices of inputs it is sent. */
import { parentPort, workerData } from "node:worker_threads";
import { reportTemporariesTo } from "../../process/temporaries.js";
import { unbundleOne } from "./batch.js";
import type { WorkerReply, WorkerRequest, WorkerSetup } from "./batch.js";

const setup = workerData as WorkerSetup;
const port = parentPort!;
if (setup.temporaries !== undefined) reportTemporariesTo(setup.temporaries.port, setup.temporaries.shared);

port.on("message", (request: WorkerRequest) => {
  if (request.kind === "stop") {
    port.close();
    return;
  }
  const results = request.inputs.map((input) => unbundleOne(input, setup.options, setup.outDir));
  port.postMessage({ kind: "results", start: request.start, results } satisfies WorkerReply);
});
port.postMessage({ kind: "ready" } satisfies WorkerReply);
