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
 * - A signal after the run's commit (its outputs are in place: the PHASE slot says COMMITTED) does not undo or
 *   disown the edit: the supervisor says "done, then interrupted; the edit is kept" and lets the worker finish
 *   (its report), for at most LATE_GRACE_MS, then ends with the worker's status, or 0 if it was still busy. If the
 *   worker starts new work instead (it creates a temporary), that work is stopped as before: 128+N.
 * - A closed stdout (EPIPE) ends the run the same way by SIGPIPE, as `ls | head` ends `ls`.
 *
 * Commands too short to be worth a thread (see each bin's `inline`) run on the main thread, where the same
 * clean-up runs on EPIPE; a signal there is handled at the end of the (short) run.
 */
import { writeSync } from "node:fs";
import { isatty } from "node:tty";
import { MessageChannel, Worker, receiveMessageOnPort } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import { COMMITTED, LATE_SIGNAL_NOTE, LOCK, PHASE, SHARED_SLOTS, STOPPING, applyMessages, removeTemporaries } from "./temporaries.js";
import type { TemporaryKind } from "./temporaries.js";
import type { RunContext, SignalMessage, SupervisedData, WorkerMessage } from "./run.js";

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGPIPE: 13, SIGTERM: 15 };

/** Dies by `signal` with its default disposition, as a C program re-raising it does. */
export function raise(signal: NodeJS.Signals): never {
  // Node ignores SIGPIPE and handles the others through listeners; a listener added and removed leaves the
  // default disposition behind (libuv restores SIG_DFL when the last handler of a signal goes).
  for (const listener of process.listeners(signal)) process.off(signal, listener);
  const placeholder = () => undefined;
  process.on(signal, placeholder);
  process.off(signal, placeholder);
  process.kill(process.pid, signal);
  // Not reached where signals exist; elsewhere (Windows) the shell's convention for it.
  process.exit(128 + (SIGNAL_NUMBERS[signal] ?? 0));
}

const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/** How long a worker that has committed its edit may go on (printing its report) after a signal. */
const LATE_GRACE_MS = 50;

/** Runs the bundled program `program` (a module using src/process/run.ts) in a worker, supervised. */
export function supervise(program: URL): void {
  const context: RunContext = {
    argv1: process.argv[1],
    args: process.argv.slice(2),
    stdoutIsTTY: isatty(1),
    stderrIsTTY: isatty(2),
  };
  const shared = new Int32Array(new SharedArrayBuffer(SHARED_SLOTS * 4));
  const channel = new MessageChannel();
  const pending = new Map<string, TemporaryKind>();
  let ending = false;
  /** A signal came after the commit: the worker's end decides the status. */
  let late: NodeJS.Signals | undefined;

  const worker = new Worker(program, {
    workerData: { offloadKitSupervised: true, context, port: channel.port2, shared } satisfies SupervisedData,
    transferList: [channel.port2],
  });

  // The worker's port, then one per worker it started (src/bundler/node/batch.ts), in the order they were announced.
  const ports: MessagePort[] = [channel.port1];
  const drain = (): void => {
    for (let i = 0; i < ports.length; i++) {
      for (let message = receiveMessageOnPort(ports[i]!); message !== undefined; message = receiveMessageOnPort(ports[i]!)) {
        accept(message.message as WorkerMessage);
      }
    }
  };
  const end = (signal: NodeJS.Signals): void => {
    if (ending) return;
    ending = true;
    // Wait for the worker to leave a step that must not be split (creating or renaming a temporary).
    while (Atomics.compareExchange(shared, LOCK, 0, 1) !== 0) Atomics.wait(shared, LOCK, 1, 20);
    Atomics.store(shared, STOPPING, 1);
    // Wakes a worker waiting for the lock, so it sees STOPPING at once.
    Atomics.notify(shared, LOCK);
    drain();
    if (Atomics.load(shared, PHASE) === COMMITTED) {
      late = signal;
      try {
        writeSync(2, `${LATE_SIGNAL_NOTE}\n`);
      } catch {
        // No stderr: the status says it.
      }
      // The worker still busy after the grace: its report is cut, the edit is not.
      setTimeout(() => {
        void worker.terminate();
        finish(0);
      }, LATE_GRACE_MS);
      return;
    }
    stop(signal);
  };
  const finish = (code: number): void => {
    drain();
    removeTemporaries(pending);
    process.exit(code);
  };
  const stop = (signal: NodeJS.Signals): void => {
    // Stops the worker's JavaScript at once (even inside a synchronous loop), so the removals below
    // have the CPU to themselves; the process ends with them anyway.
    void worker.terminate();
    removeTemporaries(pending);
    raise(signal);
  };
  const accept = (message: WorkerMessage): void => {
    if (message.op === "signal") end((message as SignalMessage).signal);
    else if (message.op === "stopped") {
      // After a late signal the worker began new work, which the signal stops.
      if (late !== undefined) stop(late);
    }
    else if (message.op === "port") {
      ports.push(message.port);
      message.port.on("message", accept);
      message.port.unref();
    } else applyMessages([message], pending);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, () => end(signal));
  channel.port1.on("message", accept);
  channel.port1.unref();

  worker.on("error", (e) => {
    const detail = e instanceof Error ? e.message : String(e);
    process.stderr.write(`error: internal error in offload-kit: ${detail} (please report it)\n`);
    drain();
    removeTemporaries(pending);
    process.exitCode = 70;
  });
  worker.on("exit", (code) => {
    // Registrations still queued (a run that failed after creating something) are read before leaving.
    drain();
    if (late !== undefined) finish(code);
    if (ending) return;
    removeTemporaries(pending);
    if (process.exitCode === undefined || process.exitCode === 0) process.exitCode = code;
  });
}
