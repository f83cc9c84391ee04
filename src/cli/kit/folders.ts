/**
 * What ls, sizes and extract say about the folders named (src/inspect/node/folders.ts), as check says it:
 * the unreadable entries on stderr, a closing line counting the files looked at, and the same in --json.
 */
import type { PathsRun } from "../../inspect/node/folders.js";
import type { CliIO } from "../io.js";
import { printError } from "../io.js";
import { plural } from "./common.js";

/** Prints each directory or entry a walk could not read; returns whether there was one. */
export function printUnreadable(io: CliIO, name: string, run: PathsRun): boolean {
  for (const u of run.unreadable) printError(io, name, u.message);
  return run.unreadable.length > 0;
}

/** `in folders: 5 files looked at, 2 with offload code, 3 skipped (no offload code)`, or "" when no folder was named. */
export function foldersNote(run: PathsRun): string {
  if (!run.folders) return "";
  const parts = [
    `${plural(run.lookedAt, "file")} looked at`,
    `${run.found} with offload code`,
    `${run.skipped.length} skipped (no offload code)`,
    ...(run.unreadable.length > 0 ? [`${plural(run.unreadable.length, "entry", "entries")} could not be read`] : []),
  ];
  return `in folders: ${parts.join(", ")}`;
}

/** The lines for folders that held no offload file: `dir: no offload files`. */
export function emptyFoldersText(run: PathsRun): string {
  return run.emptyDirectories.map((dir) => `${dir}: no offload files\n`).join("");
}

/** check's keys for a walk, added to a command's --json only when a folder was named (so files alone answer as before). */
export function foldersJson(run: PathsRun): Record<string, unknown> {
  if (!run.folders) return {};
  return { lookedAt: run.lookedAt, skipped: run.skipped, emptyDirectories: run.emptyDirectories, unreadable: run.unreadable };
}
