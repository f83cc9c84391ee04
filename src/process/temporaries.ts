/**
 * Every temporary file or folder a run creates (output temporaries beside their destinations, spools of
 * pipes and standard input, decompressed members) is registered here, so whatever ends the run removes them.
 *
 * Under the bins' supervisor (src/process/supervisor.ts) the run is a worker thread and the registry lives in
 * the supervisor: each registration is a message on a MessagePort the supervisor drains synchronously when a
 * signal comes. The race "the worker creates a temporary after the supervisor cleaned up" is closed by a lock
 * in a SharedArrayBuffer: the worker holds it around "register + create" and around "rename into place", and
 * stops for good (waits for the process to die) once the supervisor has set the stopping flag, so nothing is
 * created or renamed into place after a signal. Used as a library (no supervisor), the registry is a local set
 * emptied at process exit.
 *
 * Names carry the process ID (`.<name>.offload-kit-<pid>-<n>.tmp`, `offload-kit-<pid>-<what>-XXXXXX`), so the
 * temporaries of a process killed by SIGKILL are recognised by the next run creating one in the same folder
 * (`removeStaleTemporaries`): those whose process no longer exists (kill(pid, 0) fails with ESRCH).
 */
import { readdirSync, rmSync, unlinkSync } from "node:fs";
import type { MessageChannel as WorkerMessageChannel, MessagePort } from "node:worker_threads";
import { join } from "node:path";

/** Slots of the shared Int32Array. */
export const LOCK = 0;
export const STOPPING = 1;
export const SHARED_SLOTS = 2;

/** A file is unlinked; a folder (a spool's, with its file inside) removed with what it holds. */
export type TemporaryKind = "file" | "folder";

export interface TemporaryMessage {
  readonly op: "add" | "remove";
  readonly path: string;
  readonly kind?: TemporaryKind;
}

interface Channel {
  readonly port: MessagePort;
  readonly shared: Int32Array;
}

let channel: Channel | undefined;
const local = new Map<string, TemporaryKind>();
let exitHookInstalled = false;

/** Called once in the supervised worker (and in workers it starts): registrations go to the supervisor from now on. */
export function reportTemporariesTo(port: MessagePort, shared: Int32Array): void {
  channel = { port, shared };
}

/** A port of its own to the supervisor for a worker this thread starts (sent in its workerData). */
export interface TemporariesLink {
  readonly port: MessagePort;
  readonly shared: Int32Array;
}

/** Sent to the supervisor: another thread's registrations arrive on `port`. */
export interface PortMessage {
  readonly op: "port";
  readonly port: MessagePort;
}

/**
 * A link for a worker this thread starts (src/bundler/node/batch.ts), so the temporaries that worker creates are
 * known to the supervisor too; undefined without a supervisor. The worker passes it to reportTemporariesTo.
 */
export function linkForWorker(): TemporariesLink | undefined {
  if (channel === undefined) return undefined;
  // Node's global MessageChannel is worker_threads' own (typed as the DOM's): not loading the module for it.
  const { port1, port2 } = new MessageChannel() as unknown as WorkerMessageChannel;
  channel.port.postMessage({ op: "port", port: port1 } satisfies PortMessage, [port1]);
  return { port: port2, shared: channel.shared };
}

function lock(shared: Int32Array): void {
  while (Atomics.compareExchange(shared, LOCK, 0, 1) !== 0) Atomics.wait(shared, LOCK, 1, 50);
  if (Atomics.load(shared, STOPPING) === 1) {
    // The supervisor is removing the temporaries and is about to end the process: do nothing more.
    Atomics.store(shared, LOCK, 0);
    Atomics.notify(shared, LOCK);
    for (;;) Atomics.wait(shared, STOPPING, 1);
  }
}

function unlock(shared: Int32Array): void {
  Atomics.store(shared, LOCK, 0);
  Atomics.notify(shared, LOCK);
}

/** Runs `step` so that no signal's clean-up can happen in the middle of it (and none once it has begun). */
function guarded<T>(step: () => T): T {
  const shared = channel?.shared;
  if (shared === undefined) return step();
  lock(shared);
  try {
    return step();
  } finally {
    unlock(shared);
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => removeTemporaries(local));
}

function add(path: string, kind: TemporaryKind): void {
  if (channel !== undefined) channel.port.postMessage({ op: "add", path, kind } satisfies TemporaryMessage);
  else {
    installExitHook();
    local.set(path, kind);
  }
}

function remove(path: string): void {
  if (channel !== undefined) channel.port.postMessage({ op: "remove", path } satisfies TemporaryMessage);
  else local.delete(path);
}

/** What this thread registered and has not settled (without a supervisor). */
export function localTemporaries(): ReadonlyMap<string, TemporaryKind> {
  return local;
}

/** Registers `path` and creates it with `create` in one step no signal's clean-up can split. */
export function createTemporary<T>(path: string, create: () => T): T {
  removeStaleTemporaries(dirnameOf(path));
  return guarded(() => {
    add(path, "file");
    return create();
  });
}

/** Like createTemporary for a name chosen by `create` (mkdtemp): registered as soon as it exists. */
export function createNamedTemporary(folder: string, create: () => string): string {
  removeStaleTemporaries(folder);
  return guarded(() => {
    const path = create();
    add(path, "folder");
    return path;
  });
}

/** Settles a temporary: `settle` renames it into place (or removes it), then it is no longer ours to remove. */
export function settleTemporary(path: string, settle: () => void): void {
  guarded(() => {
    try {
      settle();
    } finally {
      remove(path);
    }
  });
}

/** Removes a temporary file or folder now. */
export function removeTemporary(path: string): void {
  rmSync(path, { recursive: true, force: true });
  remove(path);
}

/** Applies what the worker reported, in order, to the supervisor's copy of the registry. */
export function applyMessages(messages: Iterable<TemporaryMessage>, into: Map<string, TemporaryKind>): void {
  for (const message of messages) {
    if (message.op === "add") into.set(message.path, message.kind ?? "folder");
    else into.delete(message.path);
  }
}

/**
 * Removes every temporary in `entries`, as fast as a dying process can: a file by one unlink (no lstat
 * first: its kind is known), a folder with its contents.
 */
export function removeTemporaries(entries: ReadonlyMap<string, TemporaryKind>): void {
  for (const [path, kind] of entries) {
    try {
      if (kind === "file") unlinkSync(path);
      else rmSync(path, { recursive: true, force: true });
    } catch {
      // Gone already, or not removable: nothing more a dying process can do.
    }
  }
}

function dirnameOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash === -1 ? "." : slash === 0 ? "/" : path.substring(0, slash);
}

/** `.<name>.offload-kit-<pid>-<n>.tmp` (output temporaries) and `offload-kit-<pid>-<what>-XXXXXX` (spool folders). */
const TEMPORARY_NAME = /^(?:\..*\.offload-kit-(\d+)-\d+\.tmp|offload-kit-(\d+)-[a-z]+-[A-Za-z0-9]{6})$/s;

export function temporaryOwner(name: string): number | undefined {
  const match = TEMPORARY_NAME.exec(name);
  if (match === null) return undefined;
  return Number(match[1] ?? match[2]);
}

function processExists(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, it is someone else's.
    return (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

const sweptFolders = new Set<string>();

/**
 * Removes the temporaries in `folder` left by processes that no longer exist (a SIGKILL, a power cut), once
 * per folder per run. A folder that cannot be listed is left alone: creating the temporary will say why.
 */
export function removeStaleTemporaries(folder: string): void {
  if (sweptFolders.has(folder)) return;
  sweptFolders.add(folder);
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return;
  }
  for (const name of names) {
    const owner = temporaryOwner(name);
    if (owner === undefined || processExists(owner)) continue;
    try {
      rmSync(join(folder, name), { recursive: true, force: true });
    } catch {
      // Not ours to remove after all (another user's folder entry): leave it.
    }
  }
}
