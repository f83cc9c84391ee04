/**
 * Node built-ins that only some runs need, loaded on first use. A static `import "node:zlib"` (or crypto,
 * worker_threads) makes every start pay for it: measured on Node 20.20 here, `node -e 'require("node:zlib")'`
 * 39.4 ms against 34.9 ms for node:os, crypto 40.4, worker_threads 37.9. A plain unbundle needs none of them;
 * compressed bundles, digests, worker pools and `offload-kit serve` load theirs when they first run.
 */
import { createRequire } from "node:module";

const load = createRequire(import.meta.url);

export const zlibModule = (): typeof import("node:zlib") => load("node:zlib");
export const cryptoModule = (): typeof import("node:crypto") => load("node:crypto");
export const workerThreadsModule = (): typeof import("node:worker_threads") => load("node:worker_threads");
export const httpModule = (): typeof import("node:http") => load("node:http");
