// Issue 19, item 3: an existing output is treated as the native tool treats it, compared with the native tool
// on the same case. clang-offload-bundler and both wrappers write through raw_fd_ostream: a read-only file is
// refused (not for root, whose open succeeds), the file keeps its mode and owner, its hard links see the new
// bytes. clang-offload-packager writes through FileOutputBuffer: a new file (0666 less the umask) is renamed
// over whatever was there. An output that is also an input works in all of them. Ours still writes a
// temporary file first (src/node/output.ts), so a failure leaves the destination as it was.
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, linkSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { scratchDir } from "../cli/harness.js";
import { bash, native, ours } from "./helpers.js";
import type { Tool } from "./helpers.js";

const FIXTURES = new URL("../fixtures/", import.meta.url).pathname;
const GFX906 = "hip-amdgcn-amd-amdhsa--gfx906";
const HOST = "host-x86_64-unknown-linux-gnu-";

interface Case {
  readonly name: string;
  readonly ours: Tool;
  readonly native: Parameters<typeof native>[0];
  /** The command writing `out`, reading `input` where an input file is named. */
  readonly command: (bin: string, out: string, input: string) => string;
  /** The native tool writes through the existing file (raw_fd_ostream) rather than renaming a new one over it. */
  readonly inPlace: boolean;
}

const CASES: readonly Case[] = [
  {
    name: "offload-bundler", ours: "offload-bundler", native: "clang-offload-bundler-19", inPlace: true,
    command: (bin, out, input) => `${bin} -type=bc -targets=${HOST},${GFX906} -input=${input} -input=dev.txt -output=${out}`,
  },
  {
    name: "offload-packager", ours: "offload-packager", native: "clang-offload-packager-19", inPlace: false,
    command: (bin, out, input) => `${bin} -o ${out} --image=file=${input},triple=amdgcn-amd-amdhsa,arch=gfx906,kind=hip`,
  },
  {
    name: "offload-wrapper (14)", ours: "offload-wrapper", native: "clang-offload-wrapper-14", inPlace: true,
    command: (bin, out, input) => `${bin} -target=x86_64-pc-linux-gnu -o ${out} ${input}`,
  },
  {
    name: "offload-wrapper (22)", ours: "offload-wrapper", native: "llvm-offload-wrapper-22", inPlace: true,
    command: (bin, out, input) => `${bin} --kind=openmp -o ${out} ${input}`,
  },
];

let root: string;
let counter = 0;
beforeAll(() => {
  root = scratchDir("offload-kit-outputs-");
  // Other users (nobody) must reach the cases.
  chmodSync(root, 0o755);
});

/** A fresh folder holding the inputs, readable by everyone. */
function caseDir(): string {
  const dir = join(root, `case-${++counter}`);
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  copyFileSync(join(FIXTURES, "bundler/in-host.txt"), join(dir, "in.txt"));
  copyFileSync(join(FIXTURES, "bundler/in-dev.txt"), join(dir, "dev.txt"));
  for (const name of ["in.txt", "dev.txt"]) chmodSync(join(dir, name), 0o644);
  return dir;
}

interface Outcome {
  status: number | null;
  /** The diagnostic after `error: ` (the program name differs). */
  error: string;
  mode: string;
  links: number;
  owner: string;
  /** The destination's bytes after the run differ from "old". */
  replaced: boolean;
  /** A second name of the destination (a hard link) has the destination's new bytes. */
  linkSeesNewBytes?: boolean;
}

function outcome(dir: string, status: number | null, stderr: string, extraLink?: string): Outcome {
  const out = join(dir, "out");
  const stat = statSync(out);
  const bytes = readFileSync(out);
  return {
    status,
    error: stderr.includes("error: ") ? stderr.slice(stderr.indexOf("error: ") + 7).trim() : stderr.trim(),
    mode: (stat.mode & 0o7777).toString(8),
    links: stat.nlink,
    owner: `${stat.uid}:${stat.gid}`,
    replaced: bytes.toString("latin1") !== "old",
    ...(extraLink !== undefined ? { linkSeesNewBytes: readFileSync(join(dir, extraLink)).equals(bytes) } : {}),
  };
}

type Setup = (dir: string) => { prefix?: string; link?: string };

/** Runs the case's command for `bin` in a fresh folder prepared by `setup`. */
function runCase(test: Case, bin: string, setup: Setup, env: Record<string, string> = {}): Outcome {
  const dir = caseDir();
  const { prefix = "", link } = setup(dir);
  const input = test.ours === "offload-bundler" ? "in.txt" : "dev.txt";
  const run = bash(`${prefix}${test.command(bin, "out", input)}`, dir, env);
  return outcome(dir, run.status, run.stderr, link);
}

const existing = (mode: number, owner?: { uid: number; gid: number }): Setup => (dir) => {
  writeFileSync(join(dir, "out"), "old");
  chmodSync(join(dir, "out"), mode);
  if (owner !== undefined) chownSync(join(dir, "out"), owner.uid, owner.gid);
  return {};
};

const isRoot = process.getuid?.() === 0;
const nobody = (() => {
  const id = spawnSync("id", ["-u", "nobody"], { encoding: "utf8" });
  const group = spawnSync("id", ["-g", "nobody"], { encoding: "utf8" });
  return id.status === 0 ? { uid: Number(id.stdout), gid: Number(group.stdout) } : undefined;
})();
const canDropPrivileges = isRoot && nobody !== undefined && spawnSync("setpriv", ["--version"]).status === 0;

describe.each(CASES)("$name", (test) => {
  const nativeBin = native(test.native);
  const both = (setup: Setup): { mine: Outcome; theirs: Outcome | undefined } => ({
    mine: runCase(test, ours(test.ours), setup),
    theirs: nativeBin === undefined ? undefined : runCase(test, nativeBin, setup),
  });

  it("an existing 0600 output: the mode the native tool leaves", () => {
    const { mine, theirs } = both(existing(0o600));
    expect(mine.status).toBe(0);
    expect(mine.mode).toBe(test.inPlace ? "600" : "644");
    if (theirs !== undefined) expect(mine).toEqual(theirs);
  });

  it("a new output: 0666 less the umask", () => {
    const { mine, theirs } = both(() => ({ prefix: "umask 027; " }));
    expect(mine.mode).toBe("640");
    if (theirs !== undefined) expect(mine).toEqual(theirs);
  });

  it("a hard-linked output: written through the link as natively (in place), or split from it (packager)", () => {
    const linked: Setup = (dir) => {
      writeFileSync(join(dir, "out"), "old");
      linkSync(join(dir, "out"), join(dir, "other"));
      return { link: "other" };
    };
    const { mine, theirs } = both(linked);
    expect(mine.status).toBe(0);
    expect(mine.linkSeesNewBytes).toBe(test.inPlace);
    expect(mine.links).toBe(test.inPlace ? 2 : 1);
    if (theirs !== undefined) expect(mine).toEqual(theirs);
    // The same in the supervised worker, where the copy into the inode is made under the temporaries lock.
    expect(runCase(test, ours(test.ours), linked, { OFFLOAD_KIT_INLINE_BYTES: "0" })).toEqual(mine);
  });

  it("the output is also an input: succeeds, with the native bytes", () => {
    const run = (bin: string) => {
      const dir = caseDir();
      const same = test.ours === "offload-bundler" ? "in.txt" : "dev.txt";
      const result = bash(test.command(bin, same, same), dir);
      return { status: result.status, stderr: result.stderr, bytes: readFileSync(join(dir, same)).toString("latin1") };
    };
    const mine = run(ours(test.ours));
    expect(mine.status, mine.stderr).toBe(0);
    if (nativeBin !== undefined) expect(mine).toEqual(run(nativeBin));
  });

  it.runIf(isRoot)("a read-only output as root: replaced, as root's open succeeds natively", () => {
    const { mine, theirs } = both(existing(0o444));
    expect(mine.status).toBe(0);
    expect(mine.replaced).toBe(true);
    if (theirs !== undefined) expect(mine).toEqual(theirs);
  });

  it.runIf(isRoot && nobody !== undefined)("owned by another user, written by root: the owner the native tool leaves", () => {
    const { mine, theirs } = both(existing(0o644, nobody));
    expect(mine.owner).toBe(test.inPlace ? `${nobody!.uid}:${nobody!.gid}` : "0:0");
    if (theirs !== undefined) expect(mine).toEqual(theirs);
  });

  it.runIf(canDropPrivileges)("a read-only output as another user: the native verdict and message, the file unchanged", () => {
    const asNobody = (bin: string) => {
      const dir = caseDir();
      existing(0o444, nobody)(dir);
      const input = test.ours === "offload-bundler" ? "in.txt" : "dev.txt";
      const run = bash(`setpriv --reuid=${nobody!.uid} --regid=${nobody!.gid} --clear-groups ${test.command(bin, "out", input)}`, dir, { HOME: "/" });
      return outcome(dir, run.status, run.stderr);
    };
    const mine = asNobody(ours(test.ours));
    if (test.inPlace) {
      expect(mine.status).toBe(1);
      expect(mine.replaced).toBe(false);
      expect(mine.error).toMatch(/Permission denied$/);
    } else {
      expect(mine.replaced).toBe(true);
    }
    if (nativeBin !== undefined) expect(mine).toEqual(asNobody(nativeBin));
  });

  it.runIf(canDropPrivileges)("another user's writable, hard-linked file in a folder that user may not write: the native result", () => {
    const asNobody = (bin: string) => {
      const dir = caseDir();
      writeFileSync(join(dir, "out"), "old");
      chmodSync(join(dir, "out"), 0o666);
      linkSync(join(dir, "out"), join(dir, "other"));
      // No temporary file can be made beside the output: ours waits in the temporary folder, then is copied in.
      chmodSync(dir, 0o755);
      const input = test.ours === "offload-bundler" ? "in.txt" : "dev.txt";
      const run = bash(`setpriv --reuid=${nobody!.uid} --regid=${nobody!.gid} --clear-groups ${test.command(bin, "out", input)}`, dir, { HOME: "/" });
      return outcome(dir, run.status, run.stderr, "other");
    };
    const mine = asNobody(ours(test.ours));
    if (test.inPlace) expect(mine).toMatchObject({ status: 0, replaced: true, linkSeesNewBytes: true, mode: "666", owner: "0:0" });
    if (nativeBin !== undefined) expect(mine).toEqual(asNobody(nativeBin));
  });
});
