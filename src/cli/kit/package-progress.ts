/**
 * Progress on stderr while packages are edited (prune, compress, decompress of a package or of a folder
 * holding packages): a long .deb or image is minutes of decoding with nothing else to show for it.
 *
 * - `--progress`: one line per member edited, as it is written (`offload-kit prune: progress: x.deb!usr/lib/y.so:
 *   38016 -> 29824 bytes`), whatever stderr is (a log keeps them);
 * - else, when stderr is a terminal: one status line, redrawn at most ten times a second and cleared at the
 *   end (`x.deb: 1200 members read, 2 edited`);
 * - else (a pipe, a file): nothing, so scripts reading stderr see only warnings and errors.
 */
import type { PlannedEdit } from "../../prune/index.js";
import type { FileEdit } from "../../prune/node.js";
import type { OptionSpec } from "../args.js";
import type { CliIO } from "../io.js";
import { KIT_CATEGORY as category } from "./common.js";

export const PROGRESS_OPTION: OptionSpec = {
  name: "progress", kind: "flag", category,
  description: "Say each package member as it is edited, on stderr (default on a terminal: one status line)",
};

/** What the package writers call: a member read (`edit` undefined) or edited. */
export type PackageProgress = (member: string, edit?: FileEdit<PlannedEdit>) => void;

/** The reporter for a run, or undefined when nothing is to be shown. */
export function packageProgress(io: CliIO, name: string, requested: boolean, terminal: boolean): { readonly progress?: PackageProgress; finish(): void } {
  if (requested) {
    return {
      progress: (member, edit) => {
        if (edit === undefined) return;
        const planned = edit.planned;
        if (edit.error !== undefined) io.stderr(`${name}: progress: ${member}: failed\n`);
        else if (planned?.plan === undefined) io.stderr(`${name}: progress: ${member}: unchanged\n`);
        else io.stderr(`${name}: progress: ${member}: ${planned.inputSize} -> ${edit.outputSize ?? planned.inputSize} bytes\n`);
      },
      finish() {},
    };
  }
  if (!terminal) return { finish() {} };
  let read = 0;
  let edited = 0;
  let last = 0;
  let drawn = false;
  return {
    progress: (member, edit) => {
      if (edit === undefined) read++;
      else if (edit.planned?.plan !== undefined) edited++;
      const now = performance.now();
      if (now - last < 100) return;
      last = now;
      const pkg = member.slice(0, Math.max(0, member.indexOf("!")));
      io.stderr(`\r${pkg}: ${read} members read, ${edited} edited\x1b[K`);
      drawn = true;
    },
    finish() {
      if (drawn) io.stderr("\r\x1b[K");
      drawn = false;
    },
  };
}
