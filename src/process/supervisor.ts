/**
 * How the bins run so that a signal can stop them. The work is synchronous (readSync/writeSync loops), and no
 * JavaScript runs on a thread while such a loop runs; Node delivers signals only to the main thread's event
 * loop, never to worker threads. So the main thread is a small supervisor that stays idle, and the command runs
 * in a worker thread (the same bundled program, imported again there):
 *
 * - stdout and stderr are written by the worker with writeSync on descriptors 1 and 2 (src/cli/io.ts), so their
 *   order is kept and nothing waits in the supervisor; argv, the terminal flags, env and cwd are the process's.
 * - The worker's exit code is the process's.
 * - On SIGINT, SIGTERM or SIGHUP the supervisor runs at once: it takes the temporaries lock and sets the
 *   stopping flag (src/process/temporaries.ts: the worker can then neither create a temporary nor put an
 *   output in place), drains the worker's registrations with receiveMessageOnPort, removes every temporary,
 *   and dies by the same signal (its listener removed, the default disposition is back), so the shell sees
 *   128+N. The worker is not waited for: the process ends with it.
 * - A closed stdout (EPIPE) ends the run the same way by SIGPIPE, as `ls | head` ends `ls`.
 *
 * Commands too short to be worth a thread (see each bin's `inline`) run on the main thread, where the same
 * clean-up runs on EPIPE; a signal there is handled at the end of the (short) run.
 */
import { MessageChannel, Worker, isMainThread, receiveMessageOnPort, workerData } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import { rmSync } from "node:fs";
import { SHARED_SLOTS, LOCK, STOPPING, localTemporaries, pendingPaths, reportTemporariesTo } from "./temporaries.js";
import type { TemporaryMessage } from "./temporaries.js";

export interface RunContext {
  /** process.argv[1] as the process got it (the bin's path). */
  readonly argv1: string | undefined;
  /** The command-line arguments (process.argv.slice(2)). */
  readonly args: readonly string[];
  readonly stdoutIsTTY: boolean;
  readonly stderrIsTTY: boolean;
}

interface SupervisedData {
  readonly offloadKitSupervised: true;
  readonly context: RunContext;
  readonly port: MessagePort;
  readonly shared: Int32Array;
}

/** A request from the worker: end the process by this signal (after the clean-up). */
interface SignalMessage {
  readonly op: "signal";
  readonly signal: NodeJS.Signals;
}

type WorkerMessage = TemporaryMessage | SignalMessage;

let port: MessagePort | undefined;

/** The signal a broken pipe ends the run with: cleans up and never returns. */
export function endByBrokenPipe(): never {
  return endBySignal("SIGPIPE");
}

function endBySignal(signal: NodeJS.Signals): never {
  if (port !== undefined) {
    // The supervisor cleans up and raises the signal; this thread waits for the end.
    port.postMessage({ op: "signal", signal } satisfies SignalMessage);
    const forever = new Int32Array(new SharedArrayBuffer(4));
    for (;;) Atomics.wait(forever, 0, 0);
  }
  removeAll(localTemporaries());
  raise(signal);
}

function removeAll(paths: Iterable<string>): void {
  for (const path of paths) {
    try {
      rmSync(path, { recursive: true, force: true });
    } catch {
      // Gone already, or not removable: nothing more a dying process can do.
    }
  }
}

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGPIPE: 13, SIGTERM: 15 };

/** Dies by `signal` with its default disposition, as a C program re-raising it does. */
function raise(signal: NodeJS.Signals): never {
  // Node ignores SIGPIPE and handles the others through listeners; a listener added and removed leaves the
  // default disposition behind (libuv restores SIG_DFL when the last handler of a signal goes).
  const listeners = process.listeners(signal);
  for (const listener of listeners) process.off(signal, listener);
  const placeholder = () => undefined;
  process.on(signal, placeholder);
  process.off(signal, placeholder);
  process.kill(process.pid, signal);
  // Not reached where signals exist; elsewhere (Windows) the shell's convention for it.
  process.exit(128 + (SIGNAL_NUMBERS[signal] ?? 0));
}

const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/**
 * Runs `body` supervised: on the main thread of a bin, starts the worker (or runs `body` here when `inline`
 * says the command is trivially short); in the worker, runs `body` and reports to the supervisor.
 * `entry` is the bundled program's own URL (import.meta.url of the bin's module).
 */
export async function runSupervised(
  entry: string,
  body: (context: RunContext) => number | Promise<number>,
  options: { readonly inline?: (args: readonly string[]) => boolean } = {},
): Promise<void> {
  const data = isMainThread ? undefined : (workerData as SupervisedData | undefined);
  if (data?.offloadKitSupervised === true) {
    port = data.port;
    reportTemporariesTo(data.port, data.shared);
    process.exitCode = await body(data.context);
    return;
  }
  const context: RunContext = {
    argv1: process.argv[1],
    args: process.argv.slice(2),
    stdoutIsTTY: process.stdout.isTTY === true,
    stderrIsTTY: process.stderr.isTTY === true,
  };
  if (!isMainThread || options.inline?.(context.args) === true) {
    process.exitCode = await body(context);
    return;
  }
  supervise(entry, context);
}

function supervise(entry: string, context: RunContext): void {
  const shared = new Int32Array(new SharedArrayBuffer(SHARED_SLOTS * 4));
  const channel = new MessageChannel();
  const pending = new Set<string>();
  let ending = false;

  const end = (signal: NodeJS.Signals): void => {
    if (ending) return;
    ending = true;
    // Wait for the worker to leave a step that must not be split (creating or renaming a temporary).
    while (Atomics.compareExchange(shared, LOCK, 0, 1) !== 0) Atomics.wait(shared, LOCK, 1, 20);
    Atomics.store(shared, STOPPING, 1);
    for (let message = receiveMessageOnPort(channel.port1); message !== undefined; message = receiveMessageOnPort(channel.port1)) {
      accept(message.message as WorkerMessage);
    }
    removeAll(pending);
    raise(signal);
  };
  const accept = (message: WorkerMessage): void => {
    if (message.op === "signal") end(message.signal);
    else pendingPaths([message], pending);
  };

  for (const signal of STOP_SIGNALS) process.on(signal, () => end(signal));
  channel.port1.on("message", accept);
  channel.port1.unref();

  const worker = new Worker(new URL(entry), {
    workerData: { offloadKitSupervised: true, context, port: channel.port2, shared } satisfies SupervisedData,
    transferList: [channel.port2],
    // The worker writes fds 1 and 2 itself; its own process.stdout/stderr objects are not used.
    stdout: false,
    stderr: false,
  });
  worker.on("error", (e) => {
    const detail = e instanceof Error ? e.message : String(e);
    process.stderr.write(`error: internal error in offload-kit: ${detail} (please report it)\n`);
    removeAll(pending);
    process.exitCode = 70;
  });
  worker.on("exit", (code) => {
    // Registrations still queued (a run that failed after creating something) are read before leaving.
    for (let message = receiveMessageOnPort(channel.port1); message !== undefined; message = receiveMessageOnPort(channel.port1)) {
      accept(message.message as WorkerMessage);
    }
    if (ending) return;
    removeAll(pending);
    if (process.exitCode === undefined || process.exitCode === 0) process.exitCode = code;
  });
}
