// Issue 24, items 3 and 4: crash-safe in-place edits (src/node/output.ts, src/node/journal.ts) and a truthful
// exit status (src/process/supervisor.ts). The built bin is killed by strace (`-e inject=SYSCALL:signal=KILL:
// when=N`) at every durable-I/O system call of the commit phase of `prune --in-place` on a real library with a
// second hard link (each such call is one run, killed on entering it); then `offload-kit recover` runs, and both
// names must hold the same bytes, the original's or the finished edit's, with nothing offload-kit made left.
// The same for a library without other links (renamed over) and, as another user, in a folder that user may
// not write (the output waits in $TMPDIR). Then: a signal after the commit exits 0; extended attributes and
// file capabilities survive --in-place.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, linkSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { scratchDir } from "../cli/harness.js";
import { nativeTool } from "../native.js";
import { HANG_MS } from "../limits.js";
import { BIN, leftovers } from "./helpers.js";

const LIBRARY = "/usr/lib/x86_64-linux-gnu/librocrand.so.1.1";
const KIT = join(BIN, "offload-kit.js");
/** The system calls that make or change what is on disk during a commit. */
const DURABLE = ["pwrite64", "fsync", "fdatasync", "rename", "renameat", "renameat2", "unlink", "unlinkat", "ftruncate"];
const LATE_NOTE = "done, then interrupted; the edit is kept";

const strace = nativeTool("strace");
const getfattr = nativeTool("getfattr");
const setcap = nativeTool("setcap");
const isRoot = process.getuid?.() === 0;
const nobody = (() => {
  const id = spawnSync("id", ["-u", "nobody"], { encoding: "utf8" });
  const group = spawnSync("id", ["-g", "nobody"], { encoding: "utf8" });
  return id.status === 0 ? { uid: Number(id.stdout), gid: Number(group.stdout) } : undefined;
})();
const canDropPrivileges = isRoot && nobody !== undefined && spawnSync("setpriv", ["--version"]).status === 0;
const ready = existsSync(LIBRARY) && strace !== undefined;

const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

let root: string;
let original: string;
let pruned: string;
let caseCount = 0;

function env(tmp: string): Record<string, string | undefined> {
  const environment: Record<string, string | undefined> = { ...process.env, TMPDIR: tmp };
  delete environment.NODE_EXTRA_CA_CERTS;
  return environment;
}

interface Case {
  readonly dir: string;
  /** The run's $TMPDIR: where an output waits when its folder refuses new files. */
  readonly tmp: string;
}

/** A fresh folder with lib.so (and its hard link other.so when `linked`), both writable by everyone. */
function newCase(linked: boolean, folderMode = 0o777): Case {
  const dir = join(root, `case-${++caseCount}`);
  const tmp = join(root, `tmp-${caseCount}`);
  mkdirSync(dir);
  mkdirSync(tmp);
  chmodSync(tmp, 0o777);
  copyFileSync(LIBRARY, join(dir, "lib.so"));
  chmodSync(join(dir, "lib.so"), 0o666);
  if (linked) linkSync(join(dir, "lib.so"), join(dir, "other.so"));
  chmodSync(dir, folderMode);
  return { dir, tmp };
}

/** `setpriv` to nobody, or nothing. */
function as(user: "root" | "nobody"): string[] {
  return user === "nobody" ? ["setpriv", `--reuid=${nobody!.uid}`, `--regid=${nobody!.gid}`, "--clear-groups"] : [];
}

function prune(c: Case, user: "root" | "nobody", straceArgs: string[] = []) {
  const command = [...(straceArgs.length > 0 ? [strace!, "-f", "-qq", ...straceArgs] : []), ...as(user), process.execPath, KIT, "prune", "--keep=gfx90a", "--in-place", "lib.so"];
  return spawnSync(command[0]!, command.slice(1), { cwd: c.dir, env: env(c.tmp), encoding: "utf8", timeout: HANG_MS });
}

function recover(c: Case, user: "root" | "nobody") {
  const command = [...as(user), process.execPath, KIT, "recover", c.dir];
  return spawnSync(command[0]!, command.slice(1), { cwd: c.dir, env: env(c.tmp), encoding: "utf8", timeout: HANG_MS });
}

interface KillPoint {
  readonly call: string;
  /** The call's ordinal among the killed thread's calls of that name (strace counts per thread). */
  readonly when: number;
  readonly line: string;
}

/**
 * Runs the edit once under strace, and lists the durable calls of the thread that commits, from its first
 * fsync (the temporary file made durable: the commit phase begins) to its end.
 */
const counted = new Map<string, { points: KillPoint[]; expected: string }>();

function killPoints(linked: boolean, user: "root" | "nobody"): { points: KillPoint[]; expected: string } {
  const key = `${linked} ${user}`;
  if (!counted.has(key)) counted.set(key, countKillPoints(linked, user));
  return counted.get(key)!;
}

function countKillPoints(linked: boolean, user: "root" | "nobody"): { points: KillPoint[]; expected: string } {
  const c = newCase(linked, user === "nobody" ? 0o755 : 0o777);
  const log = join(c.tmp, "strace.log");
  const run = prune(c, user, ["-y", "-o", log, "-e", `trace=${DURABLE.join(",")}`]);
  expect(run.status, run.stderr).toBe(0);
  const calls = readFileSync(log, "utf8").split("\n").flatMap((line) => {
    const match = /^(\d+)\s+(\w+)\(/.exec(line);
    return match === null ? [] : [{ tid: match[1]!, call: match[2]!, line }];
  });
  const first = calls.findIndex((c) => c.call === "fsync" && c.line.includes(".offload-kit-"));
  expect(first).toBeGreaterThan(-1);
  const tid = calls[first]!.tid;
  const seen = new Map<string, number>();
  const points: KillPoint[] = [];
  calls.forEach((call, i) => {
    if (call.tid !== tid) return;
    const when = (seen.get(call.call) ?? 0) + 1;
    seen.set(call.call, when);
    if (i >= first) points.push({ call: call.call, when, line: call.line });
  });
  return { points, expected: sha(join(c.dir, "lib.so")) };
}

/** Kills the edit at `point`, recovers, and checks what every name holds; returns what recovery said. */
function killAndRecover(point: KillPoint, linked: boolean, user: "root" | "nobody", expected: string): string {
  const c = newCase(linked, user === "nobody" ? 0o755 : 0o777);
  const run = prune(c, user, ["-o", "/dev/null", "-e", `trace=${point.call}`, "-e", `inject=${point.call}:signal=KILL:when=${point.when}`]);
  const where = `killed at ${point.call} #${point.when} (${point.line.slice(0, 160)})`;
  // strace ends as its tracee did: by SIGKILL.
  expect({ status: run.status, signal: run.signal }, `${where}: ${run.stderr}`).toEqual({ status: null, signal: "SIGKILL" });
  const recovered = recover(c, user);
  expect(recovered.status, `${where}: ${recovered.stdout}${recovered.stderr}`).toBe(0);
  const names = linked ? ["lib.so", "other.so"] : ["lib.so"];
  const sums = names.map((name) => sha(join(c.dir, name)));
  expect(new Set(sums).size, where).toBe(1);
  expect([original, expected], where).toContain(sums[0]);
  expect(readdirSync(c.dir).sort(), where).toEqual(names);
  expect(leftovers(c.tmp), where).toEqual([]);
  if (linked) expect(statSync(join(c.dir, "lib.so")).ino, where).toBe(statSync(join(c.dir, "other.so")).ino);
  rmSync(c.dir, { recursive: true, force: true });
  rmSync(c.tmp, { recursive: true, force: true });
  return recovered.stdout;
}

beforeAll(() => {
  root = scratchDir("offload-kit-crash-");
  chmodSync(root, 0o755);
  if (!existsSync(LIBRARY)) return;
  original = sha(LIBRARY);
  const c = newCase(false);
  const run = spawnSync(process.execPath, [KIT, "prune", "--keep=gfx90a", "-o", "pruned.so", "lib.so"], { cwd: c.dir, env: env(c.tmp), encoding: "utf8" });
  expect(run.status, run.stderr).toBe(0);
  pruned = sha(join(c.dir, "pruned.so"));
});

describe.runIf(ready)("killed at every durable call of the commit", () => {
  it("a hard-linked library: both names hold the original or the edit after recover", () => {
    const { points, expected } = killPoints(true, "root");
    expect(expected).toBe(pruned);
    // fsync(copy), the journal (write, fsync), fsync(folder), the copy in (pwrite64 per 4 MiB, ftruncate, fsync),
    // unlink(journal), fsync(folder), unlink(copy).
    expect(points.map((p) => p.call)).toEqual(expect.arrayContaining(["fsync", "pwrite64", "ftruncate", "unlink"]));
    const said = points.map((point) => killAndRecover(point, true, "root", expected));
    // Killed once the journal was durable, the edit is finished by recover at least once.
    expect(said.some((s) => s.includes("finished"))).toBe(true);
    console.log(`hard-linked: ${points.length} kill points passed (${points.map((p) => `${p.call}#${p.when}`).join(" ")})`);
  }, HANG_MS);

  it("a library with one name: renamed over, the original or the edit", () => {
    const { points, expected } = killPoints(false, "root");
    expect(expected).toBe(pruned);
    expect(points.map((p) => p.call)).toEqual(expect.arrayContaining(["fsync", "rename"]));
    for (const point of points) killAndRecover(point, false, "root", expected);
    console.log(`renamed: ${points.length} kill points passed (${points.map((p) => `${p.call}#${p.when}`).join(" ")})`);
  }, HANG_MS);

  it.runIf(canDropPrivileges)("as another user, a writable hard-linked library in a folder that user may not write", () => {
    const { points, expected } = killPoints(true, "nobody");
    expect(expected).toBe(pruned);
    for (const point of points) killAndRecover(point, true, "nobody", expected);
    console.log(`unwritable folder: ${points.length} kill points passed`);
  }, HANG_MS);

  it("the next in-place edit of the file finishes an interrupted one before reading it", () => {
    const { points, expected } = killPoints(true, "root");
    // The first write into the destination itself: it is half old, half new when the process dies.
    const midCopy = points.find((p) => p.call === "pwrite64" && / = \d+$/.test(p.line) && /<[^>]*\/lib\.so>/.test(p.line));
    expect(midCopy).toBeDefined();
    const c = newCase(true);
    const killed = prune(c, "root", ["-o", "/dev/null", "-e", `trace=${midCopy!.call}`, "-e", `inject=${midCopy!.call}:signal=KILL:when=${midCopy!.when}`]);
    expect(killed.signal).toBe("SIGKILL");
    expect(sha(join(c.dir, "lib.so"))).not.toBe(expected);
    const next = prune(c, "root");
    expect(next.status, next.stderr).toBe(0);
    expect(next.stderr).toContain("finished writing");
    expect(next.stdout).toContain("unchanged");
    expect([sha(join(c.dir, "lib.so")), sha(join(c.dir, "other.so"))]).toEqual([expected, expected]);
    expect(readdirSync(c.dir).sort()).toEqual(["lib.so", "other.so"]);
  }, HANG_MS);
});

describe.runIf(ready)("a signal after the commit", () => {
  it("SIGINT while the folder is fsynced after the rename: exit 0, the edit kept and said so", async () => {
    const { points, expected } = killPoints(false, "root");
    const rename = points.findIndex((p) => p.call === "rename");
    const after = points.slice(rename).find((p) => p.call === "fsync")!;
    const c = newCase(false);
    const before = statSync(join(c.dir, "lib.so")).ino;
    // That fsync held back 5 s, inside the commit lock: the signal comes while the worker is in it.
    const child = spawn(strace!, ["-f", "-qq", "-o", "/dev/null", "-e", "trace=fsync", "-e", `inject=fsync:delay_exit=5000000:when=${after.when}`,
      process.execPath, KIT, "prune", "--keep=gfx90a", "--in-place", "lib.so"], { cwd: c.dir, env: env(c.tmp), stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
    const deadline = Date.now() + 120_000;
    while (statSync(join(c.dir, "lib.so")).ino === before) {
      if (Date.now() > deadline) throw new Error(`the edit was never committed: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const node = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim().split(" ")[0]);
    process.kill(node, "SIGINT");
    expect(await ended, stderr).toEqual({ code: 0, signal: null });
    expect(stderr).toContain(LATE_NOTE);
    expect(sha(join(c.dir, "lib.so"))).toBe(expected);
    expect(readdirSync(c.dir)).toEqual(["lib.so"]);
  }, HANG_MS);
});

describe.runIf(existsSync(LIBRARY) && getfattr !== undefined)("attributes kept by --in-place", () => {
  it("user.* attributes on a renamed-over library", () => {
    const c = newCase(false);
    expect(spawnSync("setfattr", ["-n", "user.test", "-v", "1", join(c.dir, "lib.so")]).status).toBe(0);
    const run = prune(c, "root");
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toBe("");
    expect(sha(join(c.dir, "lib.so"))).toBe(pruned);
    expect(spawnSync("getfattr", ["-n", "user.test", "--only-values", join(c.dir, "lib.so")], { encoding: "utf8" }).stdout).toBe("1");
  });

  it.runIf(isRoot && setcap !== undefined)("a file capability, renamed over and copied into a hard-linked inode", () => {
    for (const linked of [false, true]) {
      const c = newCase(linked);
      expect(spawnSync("setcap", ["cap_net_raw+ep", join(c.dir, "lib.so")]).status).toBe(0);
      const run = prune(c, "root");
      expect(run.status, run.stderr).toBe(0);
      expect(run.stderr).toBe("");
      expect(sha(join(c.dir, "lib.so"))).toBe(pruned);
      expect(spawnSync("getcap", [join(c.dir, "lib.so")], { encoding: "utf8" }).stdout).toContain("cap_net_raw=ep");
    }
  });

  it.runIf(canDropPrivileges && setcap !== undefined)("a capability another user's write clears: a warning, the edit made", () => {
    const c = newCase(true, 0o755);
    expect(spawnSync("setcap", ["cap_net_raw+ep", join(c.dir, "lib.so")]).status).toBe(0);
    const run = prune(c, "nobody");
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/security\.capability.*could not be set again/);
    expect(sha(join(c.dir, "other.so"))).toBe(pruned);
  });
});
