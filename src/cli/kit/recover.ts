/**
 * `offload-kit recover [DIR...] [--json]`: finishes what a run killed in the middle of an edit left (SIGKILL,
 * a power cut). In each folder (default: the current one) and in the folder where outputs wait when their own
 * folder refuses new files (src/node/journal.ts `copyOnlyFolder`), a journal of a process no longer running is
 * finished (its complete copy written into the destination: "rolled forward") or, if it was being written,
 * voided; the other temporaries of dead processes are removed, never one a journal still needs. Any run that
 * writes into a folder does the same there first (src/process/temporaries.ts); this is the explicit way.
 * Exit status 1 when a journal had to be kept (the reason is printed; its copy stays).
 */
import { resolve } from "node:path";
import { copyOnlyFolder } from "../../node/journal.js";
import { sweepFolder } from "../../process/temporaries.js";
import type { Sweep } from "../../process/temporaries.js";
import { flagValue, listValue } from "../args.js";
import { printError, printWarning } from "../io.js";
import type { Subcommand } from "./common.js";
import { JSON_OPTION, VERSION_TEXT, plural } from "./common.js";

export const recover: Subcommand = {
  summary: "Finish or undo the edits of an interrupted run (journals, stale temporary files): [DIR...].",
  spec: () => ({
    overview:
      "offload-kit recover: finish the in-place edits a killed run left journalled, and remove its temporary files\n\n" +
      "Looks in each DIR (default: the current folder) and in the folder where outputs wait when their own folder\n" +
      "refuses new files ($TMPDIR, else /var/tmp). Only files of processes that no longer run are touched.\n",
    options: [{ name: "folders", kind: "string", list: true, positional: true, description: "<dir>..." }, JSON_OPTION],
    version: VERSION_TEXT,
  }),
  run(values, { name, io }) {
    const given = listValue(values, "folders");
    const folders = [...new Set([...(given.length === 0 ? ["."] : given), copyOnlyFolder()].map((f) => resolve(io.cwd, f)))];
    const sweeps: { folder: string; sweep: Sweep }[] = folders.map((folder) => ({ folder, sweep: sweepFolder(folder, (m) => printWarning(io, name, m)) }));
    const journals = sweeps.flatMap((s) => s.sweep.journals);
    const removed = sweeps.flatMap((s) => s.sweep.removed);
    const kept = journals.filter((j) => j.outcome === "kept");
    if (flagValue(values, "json")) {
      io.stdout(`${JSON.stringify({ folders, journals, removed }, null, 2)}\n`);
    } else {
      for (const j of journals) {
        if (j.outcome === "finished") io.stdout(`finished  ${j.destination} (from ${j.journal})\n`);
        else if (j.outcome === "voided") io.stdout(`voided    ${j.journal} (written before the destination was touched)\n`);
      }
      for (const path of removed) io.stdout(`removed   ${path}\n`);
      const finished = journals.filter((j) => j.outcome === "finished").length;
      io.stdout(`${plural(finished, "edit")} finished, ${plural(journals.length - finished - kept.length, "journal")} voided, ${plural(removed.length, "stale temporary", "stale temporaries")} removed\n`);
    }
    for (const j of kept) if (j.outcome === "kept") printError(io, name, `'${j.journal}' kept: ${j.reason}`);
    return kept.length > 0 ? 1 : 0;
  },
};
