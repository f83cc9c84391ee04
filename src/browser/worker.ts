/**
 * The Worker entry point: reads Files off the main thread with the library's synchronous readers, each
 * file a BlobSource read slice by slice through FileReaderSync (src/browser/blob-source.ts), and posts
 * back progress, the `ls --json` report with its sizes, or one entry's bytes (src/browser/protocol.ts).
 *
 * The script a worker runs is src/browser/worker-entry.ts: `new OffloadKitWorker()` (src/browser/client.ts)
 * runs a copy of it inlined in the library, or point a Worker at it yourself (`offload-kit/browser-worker`).
 */
import { loadBrowserCodecs } from "../compress/browser.js";
import type { Codecs } from "../compress/codecs.js";
import { isOffloadKitError } from "../engine/errors.js";
import { engine } from "../engine/select.js";
import { BlobSource } from "./blob-source.js";
import { DecodedBundles, inspectSource, locateOptions, readEntry } from "./inspect.js";
import { diffSources, loadKernelTable, queryKernelTable } from "./kernel-tables.js";
import type { DecodeProgress, InspectProgress } from "./inspect.js";
import type { PruneReply, PrunedPart, WorkerFailure, WorkerReply, WorkerRequest } from "./protocol.js";
import { OffloadKitError } from "../engine/errors.js";
import { planPrune } from "../prune/index.js";
import { splitResult } from "./report-parts.js";
import { inspectPackage, readPackageMember } from "./packages.js";
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { materialize } from "../prune/plan.js";
import { treePlace } from "./kpack-tree.js";
import { prunePackage } from "./prune-package/index.js";

export interface WorkerScope {
  postMessage(message: WorkerReply, transfer?: Transferable[]): void;
  addEventListener(type: "message", listener: (event: MessageEvent<WorkerRequest>) => void): void;
}

/** Progress is posted at most this often (a library with thousands of bundles would flood the page otherwise). */
const PROGRESS_INTERVAL_MS = 50;

function failure(e: unknown): WorkerFailure {
  if (isOffloadKitError(e)) return { code: e.code, message: e.message, ...(e.offset !== undefined ? { offset: e.offset } : {}) };
  // Not ours: a bug, or the browser running out of memory. Still an answer, never silence.
  return { code: "INTERNAL", message: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
}

/** The codecs, loaded on first use; a failure is remembered per request only (the next one tries again). */
async function codecs(): Promise<{ codecs?: Codecs; error?: WorkerFailure }> {
  try {
    return { codecs: await loadBrowserCodecs() };
  } catch (e) {
    return { error: failure(e) };
  }
}

/**
 * Compressed bundles decoded while inspecting a file, kept for its downloads (a download then re-reads the
 * file's headers, never decodes again). Bounded: a library of many large compressed bundles keeps the most
 * recently used.
 */
const decoded = new DecodedBundles();

/**
 * The package member last read for a download (a package is walked again to reach a member: the next
 * download from the same member, or a zip of its entries, reads it from here).
 */
let lastMember: { key: string; source: ByteSource } | undefined;

async function memberSource(file: Blob, reads: BlobSource, member: readonly string[]): Promise<{ key: string; source: ByteSource }> {
  const key = `${fileKey(file)}${member.join("\0")}\0`;
  if (lastMember?.key === key) return lastMember;
  lastMember = undefined;
  const named = file as Partial<File>;
  lastMember = { key, source: await readPackageMember(reads, named.name ?? "blob", member) };
  return lastMember;
}

/** A File's name ("blob" for a Blob that has none), as package members are named after it. */
function nameOf(file: Blob): string {
  return (file as Partial<File>).name ?? "blob";
}

/** What names a file across requests (each request carries its own Blob object). */
function fileKey(file: Blob): string {
  const named = file as Partial<File>;
  return `${named.name ?? "blob"}\0${file.size}\0${named.lastModified ?? 0}\0`;
}

/**
 * `offload-kit prune --keep` of a file, as parts the page puts together (src/browser/protocol.ts PrunedPart):
 * ranges of the input stay ranges (the kept code objects of a plain bundle are sliced from the File, never
 * read here), made bytes are copied out of whatever larger buffer holds them (structured clone would copy
 * that whole buffer) and transferred; an output to be compressed is made here, whole. A linked library's
 * plan (src/prune/linked-elf.ts) is ranges of the File too (kept payloads, everything that does not move),
 * plus the patched headers and pointers, zeros, and any fat binary re-encoded here (a pruned CCOB).
 */
function pruned(source: ByteSource, name: string, keep: readonly string[], codecs: Codecs, ranges: "ranges" | "bytes"): { result: PruneReply; transfer: Transferable[] } {
  const plan = planPrune(source, { keep, codecs, name });
  const parts: PrunedPart[] = [];
  const transfer: Transferable[] = [];
  const bytes = (b: Uint8Array) => {
    const copy = b.slice();
    parts.push({ bytes: copy });
    transfer.push(copy.buffer);
  };
  // A member's ranges are of the member, which only this worker holds: they go as bytes.
  const range = (offset: number, size: number) => (ranges === "ranges" ? parts.push({ offset, size }) : bytes(readExact(source, offset, size)));
  if (plan.plan === undefined) range(0, source.size);
  else if (plan.plan.compress !== undefined) bytes(materialize(plan.plan, source, codecs));
  else {
    for (const piece of plan.plan.pieces) {
      if ("bytes" in piece) bytes(piece.bytes);
      else if ("zeros" in piece) parts.push(piece);
      // A range of something other than the input (a linked library's re-encoded CCOB): made here.
      else if (piece.source !== undefined) bytes(piece.source.bytes?.subarray(piece.offset, piece.offset + piece.size) ?? readExact(piece.source, piece.offset, piece.size));
      else range(piece.offset, piece.size);
    }
  }
  const outputSize = parts.reduce((n, p) => n + ("bytes" in p ? p.bytes.length : "zeros" in p ? p.zeros : p.size), 0);
  return {
    result: {
      container: plan.container, changed: plan.plan !== undefined, parts, outputSize,
      kept: plan.entries.filter((e) => e.kept).length, entries: plan.entries.length, notes: plan.notes,
    },
    transfer,
  };
}

async function handle(scope: WorkerScope, request: WorkerRequest): Promise<void> {
  const { id } = request;
  try {
    if (request.op === "kernel-rows") {
      scope.postMessage({ id, op: "kernel-rows", result: queryKernelTable(request.query) });
      return;
    }
    const loaded = await codecs();
    if (request.op === "kernels") {
      scope.postMessage({ id, op: "kernels", result: await loadKernelTable(new BlobSource(request.file), nameOf(request.file), locateOptions({ codecs: loaded.codecs })) });
      return;
    }
    if (request.op === "diff") {
      const options = locateOptions({ codecs: loaded.codecs });
      const side = (file: Blob) => ({ source: new BlobSource(file), name: nameOf(file) });
      scope.postMessage({ id, op: "diff", result: await diffSources(side(request.a), side(request.b), options) });
      return;
    }
    if (request.op === "extract") {
      let decodes = 0;
      const onDecode = (d: DecodeProgress) => {
        if (d.decoded === d.total) decodes++;
      };
      if (request.member !== undefined) {
        const reads = new BlobSource(request.file);
        const member = await memberSource(request.file, reads, request.member);
        // A copy: a plain entry would otherwise be a view of the whole member, and transferring it would detach the member kept.
        const bytes = readEntry(member.source, request.ref, { codecs: loaded.codecs, cache: decoded, key: member.key, onDecode }).slice();
        scope.postMessage({ id, op: "extracted", bytes, stats: { bytesRead: reads.bytesRead, decoded: decodes } }, [bytes.buffer as ArrayBuffer]);
        return;
      }
      const source = new BlobSource(request.file);
      const bytes = readEntry(source, request.ref, { codecs: loaded.codecs, cache: decoded, key: fileKey(request.file), onDecode });
      scope.postMessage({ id, op: "extracted", bytes, stats: { bytesRead: source.bytesRead, decoded: decodes } }, [bytes.buffer as ArrayBuffer]);
      return;
    }
    if (request.op === "prune") {
      if (loaded.codecs === undefined) throw new OffloadKitError(loaded.error!.code, `cannot prune here: ${loaded.error!.message}`);
      if (request.package === true) {
        const source = new BlobSource(request.file);
        // Written back as its kind (./prune-package/): zips, .conda, .deb, tarballs; RPMs and images are the CLI's.
        const result = await prunePackage(source, request.name, request.keep, loaded.codecs);
        // Each buffer once: several parts may be views of one (a structured clone refuses a buffer listed twice).
        const transfer = [...new Set(result.parts.flatMap((p) => ("bytes" in p ? [p.bytes.buffer as ArrayBuffer] : [])))];
        scope.postMessage({ id, op: "pruned", result }, transfer);
        return;
      }
      const { result, transfer } = request.member === undefined
        ? pruned(new BlobSource(request.file), request.name, request.keep, loaded.codecs, "ranges")
        : pruned((await memberSource(request.file, new BlobSource(request.file), request.member)).source, request.name, request.keep, loaded.codecs, "bytes");
      scope.postMessage({ id, op: "pruned", result }, transfer);
      return;
    }
    if (request.op === "inspect-package") {
      const started = performance.now();
      let last = -Infinity;
      const source = new BlobSource(request.file, {
        onRead: (end) => {
          const now = performance.now();
          if (now - last < PROGRESS_INTERVAL_MS) return;
          last = now;
          scope.postMessage({ id, op: "progress", progress: { bundles: 0, images: 0, offset: end } });
        },
      });
      const walked = await inspectPackage(source, request.name, { codecs: loaded.codecs });
      scope.postMessage({
        id, op: "package",
        result: walked === undefined ? undefined : {
          name: request.name, package: walked.package, members: walked.members, problems: walked.problems,
          bytesRead: source.bytesRead, reads: source.reads, milliseconds: performance.now() - started, engine: engine().kind,
          ...(loaded.error !== undefined ? { codecError: loaded.error } : {}),
        },
      });
      return;
    }
    const started = performance.now();
    // Progress is what was found and how far into the file reading has gone (a file searched whole finds
    // nothing for seconds, but its reads move on).
    let progress: InspectProgress = { bundles: 0, images: 0, offset: 0 };
    let last = -Infinity;
    const report = (next: InspectProgress, force = false) => {
      progress = { ...next, offset: Math.max(progress.offset, next.offset) };
      const now = performance.now();
      if (force) last = -Infinity;
      if (now - last < PROGRESS_INTERVAL_MS) return;
      last = now;
      scope.postMessage({ id, op: "progress", progress });
    };
    const source = new BlobSource(request.file, { onRead: (end) => report({ ...progress, offset: end }) });
    const onDecode = (d: DecodeProgress) => report({ ...progress, decoding: d }, d.decoded === d.total);
    // A file inspected again is decoded again (its bundles may be kept from before: they are dropped).
    decoded.forget(fileKey(request.file));
    const kpack = request.tree !== undefined ? { kpack: { place: treePlace(request.tree), path: request.path ?? request.name } } : {};
    const inspection = inspectSource(source, request.name, { codecs: loaded.codecs, onProgress: (p) => report({ ...p, decoding: undefined }), cache: decoded, key: fileKey(request.file), onDecode, ...kpack });
    // In parts (src/browser/report-parts.ts): one message of 100,000 entries blocks the page while it is read.
    const { head, parts } = splitResult({
      ...inspection,
      bytesRead: source.bytesRead,
      reads: source.reads,
      readMilliseconds: source.readMilliseconds,
      milliseconds: performance.now() - started,
      engine: engine().kind,
      ...(loaded.error !== undefined ? { codecError: loaded.error } : {}),
    });
    for (const part of parts) scope.postMessage({ id, op: "part", part });
    scope.postMessage({ id, op: "inspected", result: head });
  } catch (e) {
    scope.postMessage({ id, op: "failed", error: failure(e) });
  }
}

/** Answers the requests that arrive at `scope` (a dedicated worker's global scope). */
export function serveWorker(scope: WorkerScope): void {
  // One request at a time, in order: the readers share one engine window.
  let queue = Promise.resolve();
  scope.addEventListener("message", (event) => {
    queue = queue.then(() => handle(scope, event.data));
  });
}
