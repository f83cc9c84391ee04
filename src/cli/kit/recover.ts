/**
 * `offload-kit recover [DIR...] [--json]`: finishes what a run killed in the middle of an edit left (SIGKILL,
 * a power cut). In each folder (default: the current one) and in the folder where outputs wait when their own
 * folder refuses new files (src/node/journal.ts `copyOnlyFolder`), a journal of a process no longer running is
 * finished (its complete copy written into the destination: "rolled forward") or, if it was being written,
 * voided; the other temporaries of dead processes are removed, never one a journal still needs. Any run that
 * writes into a folder does the same there first (src/process/temporaries.ts); this is the explicit way.
 * Exit status 1 when a journal had to be kept (the reason is printed; its copy stays). Reports one line per
 * folder where something was done and a total (-v: each file), under the folder's name as typed.
 */
import { resolve } from "node:path";
import { copyOnlyFolder } from "../../node/journal.js";
import { sweepFolder } from "../../process/temporaries.js";
import type { Sweep } from "../../process/temporaries.js";
import { flagValue, listValue } from "../args.js";
import { printError } from "../io.js";
import type { Subcommand } from "./common.js";
import { JSON_OPTION, VERSION_TEXT, Warnings, examplesHelp, plural, verboseOption } from "./common.js";

/** A path below a swept folder, under the folder's name as typed (`lib/x.so`, not `/home/me/lib/x.so`). */
function shownPath(typed: ReadonlyMap<string, string>, path: string): string {
  for (const [absolute, name] of typed) {
    if (path.startsWith(`${absolute}/`)) return `${name.endsWith("/") ? name : `${name}/`}${path.slice(absolute.length + 1)}`;
  }
  return path;
}

function shownJournal(j: Sweep["journals"][number], shown: (path: string) => string): Sweep["journals"][number] {
  return { ...j, journal: shown(j.journal), ...("destination" in j && j.destination !== undefined ? { destination: shown(j.destination) } : {}) };
}

export const recover: Subcommand = {
  summary: "Finish or undo the edits of an interrupted run (journals, stale temporary files): [DIR...].",
  spec: () => ({
    overview:
      "offload-kit recover: finish the in-place edits a killed run left journalled, and remove its temporary files\n\n" +
      "Looks in each DIR (default: the current folder) and in the folder where outputs wait when their own folder\n" +
      "refuses new files ($TMPDIR, else /var/tmp). Only files of processes that no longer run are touched.\n",
    options: [
      { name: "folders", kind: "string", list: true, positional: true, description: "<dir>..." },
      JSON_OPTION,
      verboseOption("each journal finished or voided and each temporary removed"),
    ],
    version: VERSION_TEXT,
    epilogue: examplesHelp([
      { command: "offload-kit recover", what: "Finish or undo what a killed run left in the current folder (and in $TMPDIR)" },
      { command: "offload-kit recover -v lib", what: "The same in lib/, each file finished, voided or removed listed" },
    ]),
  }),
  run(values, { name, io }) {
    const given = listValue(values, "folders");
    const verbose = flagValue(values, "verbose");
    const warnings = new Warnings(io, name);
    // Swept by absolute path; reported under the name typed, so a relative folder stays relative.
    const typed = new Map<string, string>();
    for (const f of [...(given.length === 0 ? ["."] : given), copyOnlyFolder()]) if (!typed.has(resolve(io.cwd, f))) typed.set(resolve(io.cwd, f), f);
    const folders = [...typed.keys()];
    const shown = (path: string) => shownPath(typed, path);
    const sweeps: { folder: string; sweep: Sweep }[] = folders.map((folder) => ({ folder, sweep: sweepFolder(folder, (m) => warnings.warn("RECOVER_WARNING", m)) }));
    const journals = sweeps.flatMap((s) => s.sweep.journals);
    const removed = sweeps.flatMap((s) => s.sweep.removed);
    const kept = journals.filter((j) => j.outcome === "kept");
    const finishedIn = (list: Sweep["journals"]) => list.filter((j) => j.outcome === "finished").length;
    const voidedIn = (list: Sweep["journals"]) => list.filter((j) => j.outcome === "voided").length;
    if (flagValue(values, "json")) {
      io.stdout(`${JSON.stringify({ folders: folders.map((f) => typed.get(f)!), journals: journals.map((j) => shownJournal(j, shown)), removed: removed.map(shown), warnings: warnings.list }, null, 2)}\n`);
    } else {
      for (const { folder, sweep } of sweeps) {
        // One line per folder where something was done; -v: each file.
        if (sweep.journals.length === 0 && sweep.removed.length === 0) continue;
        io.stdout(`${typed.get(folder)}: ${plural(finishedIn(sweep.journals), "edit")} finished, ${plural(voidedIn(sweep.journals), "journal")} voided, ${plural(sweep.removed.length, "stale temporary", "stale temporaries")} removed\n`);
        if (!verbose) continue;
        for (const j of sweep.journals) {
          if (j.outcome === "finished") io.stdout(`  finished  ${shown(j.destination)} (from ${shown(j.journal)})\n`);
          else if (j.outcome === "voided") io.stdout(`  voided    ${shown(j.journal)} (written before the destination was touched)\n`);
        }
        for (const path of sweep.removed) io.stdout(`  removed   ${shown(path)}\n`);
      }
      io.stdout(`total: ${plural(finishedIn(journals), "edit")} finished, ${plural(voidedIn(journals), "journal")} voided, ${plural(removed.length, "stale temporary", "stale temporaries")} removed\n`);
    }
    for (const j of kept) if (j.outcome === "kept") printError(io, name, `'${shown(j.journal)}' kept: ${j.reason}`);
    return kept.length > 0 ? 1 : 0;
  },
};
