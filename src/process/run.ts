/**
 * The side of src/process/supervisor.ts that runs the command: each bin's program calls `runCommand` with its
 * body. Started by the supervisor, it is a worker thread that reports its temporaries over the supervisor's
 * port; started directly (a trivially short command run inline, or the program imported on its own), it runs
 * on the main thread and cleans up after itself.
 */
import { isatty } from "node:tty";
import { isMainThread, workerData } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import { deferLateSignals, localTemporaries, removeTemporaries, reportTemporariesTo } from "./temporaries.js";
import type { PortMessage, TemporaryMessage } from "./temporaries.js";
import { raise } from "./supervisor.js";

export interface RunContext {
  /** process.argv[1] as the process got it (the bin's path). */
  readonly argv1: string | undefined;
  /** The command-line arguments (process.argv.slice(2)). */
  readonly args: readonly string[];
  readonly stdoutIsTTY: boolean;
  readonly stderrIsTTY: boolean;
}

export interface SupervisedData {
  readonly offloadKitSupervised: true;
  readonly context: RunContext;
  readonly port: MessagePort;
  readonly shared: Int32Array;
}

/** A request from the worker: end the process by this signal (after the clean-up). */
export interface SignalMessage {
  readonly op: "signal";
  readonly signal: NodeJS.Signals;
}

export type WorkerMessage = TemporaryMessage | SignalMessage | PortMessage;

let port: MessagePort | undefined;

/** A closed stdout or stderr: the run ends by SIGPIPE after the clean-up, as `ls | head` ends `ls`. Never returns. */
export function endByBrokenPipe(): never {
  if (port !== undefined) {
    // The supervisor cleans up and raises the signal; this thread waits for the end.
    port.postMessage({ op: "signal", signal: "SIGPIPE" } satisfies SignalMessage);
    const forever = new Int32Array(new SharedArrayBuffer(4));
    for (;;) Atomics.wait(forever, 0, 0);
  }
  removeTemporaries(localTemporaries());
  return raise("SIGPIPE");
}

/** Runs a bin's `body` with the process's command line; its result is the exit code. */
export async function runCommand(body: (context: RunContext) => number | Promise<number>): Promise<void> {
  const data = isMainThread ? undefined : (workerData as SupervisedData | undefined);
  if (data?.offloadKitSupervised === true) {
    port = data.port;
    reportTemporariesTo(data.port, data.shared);
    process.exitCode = await body(data.context);
    return;
  }
  // On the main thread nothing listens for signals until an edit is committed; from then on one is noted, not obeyed.
  deferLateSignals();
  process.exitCode = await body({
    argv1: process.argv[1],
    args: process.argv.slice(2),
    stdoutIsTTY: isatty(1),
    stderrIsTTY: isatty(2),
  });
}
