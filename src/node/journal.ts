/**
 * Crash-safe writes into an existing inode. An output whose destination must keep its inode (it has other
 * hard links, or its folder refuses a new file: src/node/output.ts) cannot be renamed into place; its bytes are
 * copied into the destination, and a crash in the middle of that copy would leave every name of the file
 * truncated. So the copy is journalled, roll-forward style: the new content is first complete and durable in a
 * temporary file, a journal naming it is made durable, and only then is the destination written. Whatever
 * moment the process dies (SIGKILL, a power cut), the destination holds the original (no journal yet) or the
 * journal's copy is complete, and the next run finishes the copy (`rollForward`): the sweep of stale
 * temporaries (src/process/temporaries.ts) and `offload-kit recover` both do. No backup of the original is
 * needed (a 1.3 GB library costs one extra copy, the temporary file it is written to anyway, not two).
 *
 * Names, in the folder of the temporary file (the destination's folder, or for a folder we may not write
 * `copyOnlyFolder()`), for the process `<pid>` and its `<n>`th output:
 *
 * | name                                      | what                                                      |
 * |-------------------------------------------|-----------------------------------------------------------|
 * | `.<name>.offload-kit-<pid>-<n>.tmp`       | the new content (complete and fsynced once a journal names it) |
 * | `.<name>.offload-kit-<pid>-<n>.journal`   | one line of JSON and a newline, fsynced, with its folder   |
 *
 * The journal's line: `{"offloadKitJournal":1,"destination":ABS,"copy":ABS,"size":N,"dev":D,"ino":I,
 * "capability":HEX|null}`: the destination's path and inode (the journal is refused if the path now names
 * another file), the copy's path and size, and the destination's `security.capability` (which the kernel
 * clears on any write to the inode) to restore after the copy. A journal that does not parse, or whose line has
 * no newline, was being written when the process died: the destination was not touched yet, so the journal
 * and its copy are removed ("voided"). A journal is honoured only if it and its copy belong to the user
 * running (a journal in a shared folder such as /var/tmp must not make root copy another user's file anywhere).
 *
 * The steps of a journalled commit, each a kill point the tests go through (test/process/crash.test.ts):
 * fsync(copy); write + fsync(journal); fsync(folder) — the commit point; pwrite… + ftruncate + fsync
 * (destination); restore the capability; unlink(journal); fsync(folder); unlink(copy). The journal goes before
 * the copy, with a folder fsync between, so a journal never outlives its copy.
 */
import { spawnSync } from "node:child_process";
import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, lstatSync, openSync, readFileSync, readSync, unlinkSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** The version of the journal's line. */
const JOURNAL_VERSION = 1;
/** Bytes copied per read/write: few system calls on a 1.3 GB library, little memory. */
const COPY_CHUNK = 4 << 20;

export interface Journal {
  readonly destination: string;
  readonly copy: string;
  readonly size: number;
  readonly dev: number;
  readonly ino: number;
  /** `security.capability` of the destination as getfattr's hex (`0x…`), restored after the copy. */
  readonly capability: string | null;
}

/** The journal that goes with the temporary file `copy` (`….tmp` → `….journal`). */
export function journalPathFor(copy: string): string {
  return copy.replace(/\.tmp$/, ".journal");
}

/** The copy a journal's name goes with. */
export function copyPathFor(journal: string): string {
  return journal.replace(/\.journal$/, ".tmp");
}

/**
 * Where an output waits when the destination's folder refuses new files: not in /tmp, which is often a tmpfs
 * a power cut empties (and the journal's copy must survive one), but in $TMPDIR when the user chose one, else
 * /var/tmp (kept across reboots, FHS 3.0 §5.15).
 */
export function copyOnlyFolder(): string {
  const chosen = process.env.TMPDIR;
  if (chosen !== undefined && chosen !== "") return chosen;
  try {
    if (lstatSync("/var/tmp").isDirectory()) return "/var/tmp";
  } catch {
    // No /var/tmp: the system's temporary folder.
  }
  return "/tmp";
}

/** Makes the entries of `folder` (names created, renamed or removed) durable. */
export function fsyncFolder(folder: string): void {
  const fd = openSync(folder, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes the file `path` durable (content and metadata), by a descriptor of its own. */
export function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes the journal for `journal.copy` (which must already be complete and fsynced) and makes it durable with
 * its folder: from the return on, the destination's new content is decided.
 */
export function writeJournal(journal: Journal): string {
  const path = journalPathFor(journal.copy);
  const line = `${JSON.stringify({ offloadKitJournal: JOURNAL_VERSION, ...journal })}\n`;
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    const bytes = Buffer.from(line, "utf8");
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done, done);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  fsyncFolder(dirname(path));
  return path;
}

/** The journal at `path`, or undefined when its line is incomplete or not a journal's (it was being written). */
export function readJournal(path: string): Journal | undefined {
  const text = readFileSync(path, "utf8");
  if (!text.endsWith("\n")) return undefined;
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    if (value.offloadKitJournal !== JOURNAL_VERSION) return undefined;
    const { destination, copy, size, dev, ino, capability } = value;
    if (typeof destination !== "string" || typeof copy !== "string" || typeof size !== "number" || typeof dev !== "number" || typeof ino !== "number") return undefined;
    if (capability !== null && typeof capability !== "string") return undefined;
    return { destination, copy, size, dev, ino, capability };
  } catch {
    return undefined;
  }
}

/** What became of a journal found after its process died. */
export type Recovery =
  | { readonly outcome: "finished"; readonly journal: string; readonly destination: string }
  | { readonly outcome: "voided"; readonly journal: string }
  | { readonly outcome: "kept"; readonly journal: string; readonly reason: string; readonly destination?: string };

/**
 * Copies the complete copy into the destination's inode, then removes the journal and the copy. Used for the
 * commit itself (src/node/output.ts) and to finish one a dead process left (`recoverJournal`). Throws on an
 * I/O error, leaving the journal and copy for a later try.
 */
export function rollForward(journal: Journal, journalPath: string, warn: (message: string) => void): void {
  const from = openSync(journal.copy, "r");
  try {
    // Not O_TRUNC: the inode is rewritten from the start and cut at the end, so no block is freed and taken again.
    const to = openSync(journal.destination, constants.O_WRONLY | constants.O_NOFOLLOW);
    try {
      const stat = fstatSync(to);
      if (stat.dev !== journal.dev || stat.ino !== journal.ino) throw new Error(`'${journal.destination}' is no longer the file the journal was written for`);
      const chunk = Buffer.allocUnsafe(Math.min(COPY_CHUNK, Math.max(journal.size, 1)));
      let at = 0;
      while (at < journal.size) {
        const n = readSync(from, chunk, 0, Math.min(chunk.length, journal.size - at), at);
        if (n === 0) throw new Error(`'${journal.copy}' is shorter than its journal says`);
        for (let done = 0; done < n; ) done += writeSync(to, chunk, done, n - done, at + done);
        at += n;
      }
      ftruncateSync(to, journal.size);
      fsyncSync(to);
    } finally {
      closeSync(to);
    }
  } finally {
    closeSync(from);
  }
  if (journal.capability !== null) restoreCapability(journal.destination, journal.capability, warn);
  unlinkSync(journalPath);
  fsyncFolder(dirname(journalPath));
  unlinkSync(journal.copy);
}

/** Sets `security.capability` again (the write cleared it); needs CAP_SETFCAP, so only root can. */
function restoreCapability(path: string, hex: string, warn: (message: string) => void): void {
  const run = spawnSync("setfattr", ["-n", "security.capability", "-v", hex, "--", path], { encoding: "utf8" });
  if (run.error !== undefined || run.status !== 0) {
    const why = run.error !== undefined ? "setfattr is not installed" : run.stderr.trim() || `setfattr exited with ${run.status}`;
    warn(`'${path}': its file capabilities (security.capability) were cleared by the write and could not be set again (${why})`);
  } else {
    // The capability is inode metadata: durable with the rest.
    fsyncPath(path);
  }
}

/**
 * Finishes or voids the journal at `path`, left by a process that no longer exists. Never removes a copy a
 * journal still needs: a journal that cannot be finished is kept, with its copy, and reported.
 */
export function recoverJournal(path: string, warn: (message: string) => void): Recovery {
  let stat;
  try {
    stat = lstatSync(path);
  } catch (e) {
    return { outcome: "kept", journal: path, reason: (e as Error).message };
  }
  const uid = process.getuid?.();
  if (!stat.isFile() || (uid !== undefined && stat.uid !== uid)) {
    return { outcome: "kept", journal: path, reason: `not a journal of this user (uid ${stat.uid}): run recover as its owner` };
  }
  const journal = readJournal(path);
  const copy = copyPathFor(path);
  if (journal === undefined) {
    // Written partly: the destination was never touched, the copy is nobody's only copy.
    rmQuiet(copy);
    rmQuiet(path);
    return { outcome: "voided", journal: path };
  }
  if (journal.copy !== copy) return { outcome: "kept", journal: path, reason: `names a copy other than '${copy}'`, destination: journal.destination };
  let copyStat;
  try {
    copyStat = lstatSync(copy);
  } catch {
    return { outcome: "kept", journal: path, reason: `its copy '${copy}' is missing: check '${journal.destination}' by hand`, destination: journal.destination };
  }
  if (!copyStat.isFile() || (uid !== undefined && copyStat.uid !== uid) || copyStat.size !== journal.size) {
    return { outcome: "kept", journal: path, reason: `its copy '${copy}' is not the one it names (owner or size differ)`, destination: journal.destination };
  }
  try {
    rollForward(journal, path, warn);
  } catch (e) {
    return { outcome: "kept", journal: path, reason: e instanceof Error ? e.message : String(e), destination: journal.destination };
  }
  return { outcome: "finished", journal: path, destination: journal.destination };
}

function rmQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}
