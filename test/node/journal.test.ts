// src/node/journal.ts and the sweep that reads journals (src/process/temporaries.ts sweepFolder): a journal is
// finished (its copy written into the destination's inode), voided when it was being written, and kept with
// its copy whenever finishing it would be wrong (another file at the path, the copy missing or not its size).
// A temporary file a kept journal names is never removed. Whole-process kill tests: test/process/crash.test.ts.
import { spawnSync } from "node:child_process";
import { existsSync, linkSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { quotePath } from "../../src/node/attributes.js";
import { copyPathFor, fsyncPath, journalPathFor, writeJournal } from "../../src/node/journal.js";
import type { Journal } from "../../src/node/journal.js";
import { sweepFolder } from "../../src/process/temporaries.js";
import { scratchDir } from "../cli/harness.js";

/** A process ID no process has (beyond pid_max), for names a dead process left. */
const DEAD = 4_194_305;

let root: string;
let count = 0;
beforeAll(() => {
  root = scratchDir("offload-kit-journal-");
});

/** A folder with `lib.so` ("old…") linked as `other.so`, and a dead process's complete copy ("new"). */
function interrupted(newBytes = "new content"): { dir: string; copy: string; journal: Journal } {
  const dir = join(root, `case-${++count}`);
  mkdirSync(dir);
  writeFileSync(join(dir, "lib.so"), "old content, longer than the new one");
  linkSync(join(dir, "lib.so"), join(dir, "other.so"));
  const copy = join(dir, `.lib.so.offload-kit-${DEAD}-1.tmp`);
  writeFileSync(copy, newBytes);
  fsyncPath(copy);
  const stat = statSync(join(dir, "lib.so"));
  const journal = { destination: join(dir, "lib.so"), copy, size: newBytes.length, dev: stat.dev, ino: stat.ino, capability: null };
  return { dir, copy, journal };
}

const warnings: string[] = [];
const warn = (m: string) => warnings.push(m);

describe("a dead process's journal", () => {
  it("is finished: both names hold the copy's bytes, the journal and copy are gone", () => {
    const { dir, journal } = interrupted();
    // Half written when the process died.
    writeFileSync(join(dir, "lib.so"), "new coXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX");
    writeJournal(journal);
    const sweep = sweepFolder(dir, warn);
    expect(sweep.journals).toEqual([{ outcome: "finished", journal: journalPathFor(journal.copy), destination: journal.destination }]);
    expect(readFileSync(join(dir, "other.so"), "utf8")).toBe("new content");
    expect(readdirSync(dir).sort()).toEqual(["lib.so", "other.so"]);
  });

  it("is voided when its line is incomplete: the destination was never touched, the copy goes", () => {
    const { dir, copy } = interrupted();
    writeFileSync(journalPathFor(copy), '{"offloadKitJournal":1,"destination":"/x"');
    const sweep = sweepFolder(dir, warn);
    expect(sweep.journals.map((j) => j.outcome)).toEqual(["voided"]);
    expect(readFileSync(join(dir, "lib.so"), "utf8")).toMatch(/^old content/);
    expect(readdirSync(dir).sort()).toEqual(["lib.so", "other.so"]);
  });

  it("is kept, with its copy, when the path names another file now", () => {
    const { dir, copy, journal } = interrupted();
    writeJournal(journal);
    // The user put a file of their own there since.
    writeFileSync(join(dir, "mine"), "restored by hand");
    renameSync(join(dir, "mine"), join(dir, "lib.so"));
    const sweep = sweepFolder(dir, warn);
    expect(sweep.journals.map((j) => j.outcome)).toEqual(["kept"]);
    expect(readFileSync(join(dir, "lib.so"), "utf8")).toBe("restored by hand");
    expect(existsSync(copy)).toBe(true);
    expect(existsSync(journalPathFor(copy))).toBe(true);
  });

  it("is kept when its copy is not the size it names (never finished from a short copy)", () => {
    const { dir, copy, journal } = interrupted();
    writeJournal(journal);
    truncateSync(copy, 3);
    const sweep = sweepFolder(dir, warn);
    expect(sweep.journals.map((j) => j.outcome)).toEqual(["kept"]);
    expect(readFileSync(join(dir, "other.so"), "utf8")).toMatch(/^old content/);
    expect(existsSync(copy)).toBe(true);
  });

  it("is kept when its copy is missing, and says to look at the destination", () => {
    const { dir, copy, journal } = interrupted();
    writeJournal(journal);
    renameSync(copy, join(dir, "elsewhere"));
    const [kept] = sweepFolder(dir, warn).journals;
    expect(kept).toMatchObject({ outcome: "kept", reason: expect.stringContaining("missing") });
  });

  it("of a living process is left alone, as are its temporaries", () => {
    const dir = join(root, `case-${++count}`);
    mkdirSync(dir);
    const mine = join(dir, `.x.offload-kit-${process.pid}-1.tmp`);
    writeFileSync(mine, "");
    writeFileSync(journalPathFor(mine), "");
    expect(sweepFolder(dir, warn)).toEqual({ journals: [], removed: [] });
    expect(readdirSync(dir)).toHaveLength(2);
    expect(copyPathFor(journalPathFor(mine))).toBe(mine);
  });
});

describe("getfattr's quoting of file names", () => {
  it.runIf(spawnSync("getfattr", ["--version"]).status === 0)("matches getfattr's own dump headers", () => {
    const dir = join(root, `case-${++count}`);
    mkdirSync(dir);
    for (const name of ["plain", "a b", "back\\slash", "new\nline", "cr\rhere", "é-ü\x01=\t"]) {
      const path = join(dir, name);
      writeFileSync(path, "");
      expect(spawnSync("setfattr", ["-n", "user.t", "-v", "1", path]).status).toBe(0);
      const dump = spawnSync("getfattr", ["-d", "--absolute-names", path], { encoding: "utf8", env: { ...process.env, LC_ALL: "C" } }).stdout;
      expect(dump.split("\n")[0]).toBe(`# file: ${quotePath(path)}`);
    }
  });
});
