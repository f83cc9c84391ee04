/**
 * Command lines that only print help or a version: run on the main thread, without the worker the
 * supervisor would start (src/process/supervisor.ts), which costs more than the whole command.
 */
const TRIVIAL = /^--?(help|help-hidden|help-list|version)$/;

export function isTrivialCommand(args: readonly string[]): boolean {
  return args.length === 0 || args.some((arg) => TRIVIAL.test(arg));
}
