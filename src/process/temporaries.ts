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
 * (`removeStaleTemporaries`): those whose process no longer exists (kill(pid, 0) fails with ESRCH). A
 * `.<name>.offload-kit-<pid>-<n>.journal` beside one says that temporary file is the only complete copy of a
 * destination being written in place (src/node/journal.ts): the sweep finishes that write first, and never
 * removes a temporary file a journal still names.
 *
 * The commit point. Putting a group of outputs in place (src/node/output.ts `commitOutputs`) runs under the
 * lock, and marks the shared PHASE slot COMMITTED: a signal that comes after it finds the edit made, so the
 * supervisor does not undo or disown it (it exits with the run's status, after "done, then interrupted; the
 * edit is kept"). The next temporary created marks the run WORKING again. Without a supervisor, in a bin's
 * inline run (`deferLateSignals`), the signals are caught from the first commit on and the run ends normally.
 */
import { existsSync, readdirSync, rmSync, unlinkSync, writeSync } from "node:fs";
import type { MessageChannel as WorkerMessageChannel, MessagePort } from "node:worker_threads";
import { join } from "node:path";
import { recoverJournal } from "../node/journal.js";
import type { Recovery } from "../node/journal.js";

/** Slots of the shared Int32Array. */
export const LOCK = 0;
export const STOPPING = 1;
/** WORKING or COMMITTED: whether the last thing the run did was to put its outputs in place. */
export const PHASE = 2;
export const SHARED_SLOTS = 3;
export const WORKING = 0;
export const COMMITTED = 1;

/** A file is unlinked; a folder (a spool's, with its file inside) removed with what it holds. */
export type TemporaryKind = "file" | "folder";

export interface TemporaryMessage {
  readonly op: "add" | "remove" | "stopped";
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

/**
 * Once the supervisor has set STOPPING (it holds the lock then, or is about to end the process), this thread
 * does nothing more: it says so (a signal after a commit lets the run finish, unless it starts new work) and waits
 * for the process to end.
 */
function stopForGood(shared: Int32Array): never {
  channel?.port.postMessage({ op: "stopped", path: "" } satisfies TemporaryMessage);
  for (;;) Atomics.wait(shared, STOPPING, 1);
}

function lock(shared: Int32Array): void {
  while (Atomics.compareExchange(shared, LOCK, 0, 1) !== 0) {
    if (Atomics.load(shared, STOPPING) === 1) stopForGood(shared);
    Atomics.wait(shared, LOCK, 1, 50);
  }
  if (Atomics.load(shared, STOPPING) === 1) {
    Atomics.store(shared, LOCK, 0);
    Atomics.notify(shared, LOCK);
    stopForGood(shared);
  }
}

function unlock(shared: Int32Array): void {
  Atomics.store(shared, LOCK, 0);
  Atomics.notify(shared, LOCK);
}

/** How deep this thread is in guarded steps: a commit of a group holds the lock around each output's own. */
let depth = 0;

/** Runs `step` so that no signal's clean-up can happen in the middle of it (and none once it has begun). */
function guarded<T>(step: () => T): T {
  const shared = channel?.shared;
  if (shared === undefined || depth > 0) {
    depth++;
    try {
      return step();
    } finally {
      depth--;
    }
  }
  lock(shared);
  depth++;
  try {
    return step();
  } finally {
    depth--;
    unlock(shared);
  }
}

let lateSignalsDeferred = false;
let lateSignalsCaught = false;

/**
 * For a bin's run on the main thread (src/process/run.ts): from the first commit on, SIGINT, SIGTERM and
 * SIGHUP no longer end the process by their default action (the edit is made: the shell must not be told it
 * was not); the run ends normally and says "done, then interrupted". Not for the library: a program using it
 * keeps its own signals.
 */
export function deferLateSignals(): void {
  lateSignalsDeferred = true;
}

function catchLateSignals(): void {
  if (!lateSignalsDeferred || lateSignalsCaught) return;
  lateSignalsCaught = true;
  const note = (): void => {
    try {
      writeSync(2, `${LATE_SIGNAL_NOTE}\n`);
    } catch {
      // No stderr: the status says it.
    }
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, note);
}

/** What a run stopped by a signal after its commit says on stderr, before its normal exit status. */
export const LATE_SIGNAL_NOTE = "offload-kit: done, then interrupted; the edit is kept";

/**
 * Puts a group of outputs in place: `commit` runs under the lock (a signal waits for it), and calls
 * `markCommitted` at each output's commit point (see the module docblock).
 */
export function commitOutputs(commit: () => void): void {
  catchLateSignals();
  guarded(commit);
}

/** An output is in place (renamed, or its journal durable): a signal from now on finds the edit made. */
export function markCommitted(): void {
  if (channel !== undefined) Atomics.store(channel.shared, PHASE, COMMITTED);
}

/** New work begins: a signal from now on stops the run as before its commit. */
function working(): void {
  if (channel !== undefined) Atomics.store(channel.shared, PHASE, WORKING);
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
    working();
    add(path, "file");
    return create();
  });
}

/** Like createTemporary for a name chosen by `create` (mkdtemp): registered as soon as it exists. */
export function createNamedTemporary(folder: string, create: () => string): string {
  removeStaleTemporaries(folder);
  return guarded(() => {
    working();
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
    else if (message.op === "remove") into.delete(message.path);
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

/**
 * `.<name>.offload-kit-<pid>-<n>.tmp` (output temporaries), `.<name>.offload-kit-<pid>-<n>.journal` (their
 * journals) and `offload-kit-<pid>-<what>-XXXXXX` (spool folders).
 */
const TEMPORARY_NAME = /^(?:\..*\.offload-kit-(\d+)-\d+\.(?:tmp|journal)|offload-kit-(\d+)-[a-z]+-[A-Za-z0-9]{6})$/s;
const JOURNAL_NAME = /\.offload-kit-\d+-\d+\.journal$/;

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

/** What a sweep did: the journals it found, and the stale temporaries it removed. */
export interface Sweep {
  readonly journals: readonly Recovery[];
  readonly removed: readonly string[];
}

function warnOnStderr(message: string): void {
  try {
    writeSync(2, `offload-kit: warning: ${message}\n`);
  } catch {
    // No stderr to say it on.
  }
}

/**
 * Finishes the journals and removes the temporaries in `folder` that processes no longer running left (a
 * SIGKILL, a power cut). Journals first (src/node/journal.ts `recoverJournal`): a finished one removes its
 * copy; one that cannot be finished keeps it, and no temporary a journal names is removed. A folder that
 * cannot be listed is left alone.
 */
export function sweepFolder(folder: string, warn: (message: string) => void = warnOnStderr): Sweep {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return { journals: [], removed: [] };
  }
  const stale = names.filter((name) => {
    const owner = temporaryOwner(name);
    return owner !== undefined && !processExists(owner);
  });
  const journals = stale.filter((name) => JOURNAL_NAME.test(name)).map((name) => recoverJournal(join(folder, name), warn));
  const removed: string[] = [];
  for (const name of stale) {
    if (JOURNAL_NAME.test(name)) continue;
    const path = join(folder, name);
    if (name.endsWith(".tmp") && existsSync(path.replace(/\.tmp$/, ".journal"))) continue;
    try {
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      // Not ours to remove after all (another user's folder entry): leave it.
    }
  }
  return { journals, removed };
}

/**
 * The sweep of `folder` a run makes before creating a temporary in it, once per folder per run. A journal it
 * finishes is said on stderr (the user learns their earlier edit was completed).
 */
export function removeStaleTemporaries(folder: string): void {
  if (sweptFolders.has(folder)) return;
  sweptFolders.add(folder);
  const sweep = sweepFolder(folder);
  for (const recovery of sweep.journals) {
    if (recovery.outcome === "finished") warnOnStderr(`finished writing '${recovery.destination}', which an interrupted run had begun`);
    else if (recovery.outcome === "kept") warnOnStderr(`'${recovery.journal}' could not be finished (${recovery.reason}); its copy is kept (see 'offload-kit recover')`);
  }
}
