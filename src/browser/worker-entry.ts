/**
 * The script a Worker runs (`offload-kit/browser-worker`): answers the page's requests (src/browser/worker.ts).
 * Inlined into the library by scripts/build-browser.mjs for OffloadKitWorker's default.
 */
import { serveWorker } from "./worker.js";
import type { WorkerScope } from "./worker.js";

serveWorker(globalThis as unknown as WorkerScope);
