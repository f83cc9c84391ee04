/**
 * What a bin's main thread loads: only this and the supervisor, not the program. The program (`<bin>.main.js`)
 * runs in the supervised worker, or right here for command lines that only print help or a version (a worker
 * costs more than such a command) and for `offload-kit serve`, which is long-running, asynchronous, and
 * handles its signals itself on the main thread.
 */
import { supervise } from "./supervisor.js";

const TRIVIAL = /^--?(help|help-hidden|help-list|version)$/;
const KIT_MAIN_THREAD = new Set(["serve", "help", "version"]);

export function runsInline(bin: string, args: readonly string[]): boolean {
  if (args.length === 0 || args.some((arg) => TRIVIAL.test(arg))) return true;
  return bin === "offload-kit" && KIT_MAIN_THREAD.has(args[0]!);
}

/** Runs `program`, the bundled `<bin>.main.js` beside the bin. */
export async function launch(bin: string, program: URL): Promise<void> {
  if (runsInline(bin, process.argv.slice(2))) await import(program.href);
  else supervise(program);
}
