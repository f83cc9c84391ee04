// Issue 26: the `pkg!member` names `ls` prints are inputs. ls, sizes, check and extract read that one member as
// a file of that name (the same answers as for the file itself, under the member's name); prune and compress
// write the edited member out as a plain file, byte for byte what the file alone gives; --in-place is refused;
// a member that is not there is an error naming it. Nested levels (a zip in a tarball) are named with one `!` each.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HOSTS, tarEntry, tarOf } from "./build.js";

const app = readFileSync(join(HOSTS, "app"));
const libboth = readFileSync(join(HOSTS, "libboth.a"));
const dir = scratchDir("offload-kit-member-inputs-");
writeFileSync(join(dir, "app"), app);
mkdirSync(join(dir, "stage/lib"), { recursive: true });
writeFileSync(join(dir, "stage/lib/app"), app);
writeFileSync(join(dir, "stage/lib/libboth.a"), libboth);
execFileSync("python3", ["-m", "zipfile", "-c", join(dir, "inner.zip"), "lib"], { cwd: join(dir, "stage") });
writeFileSync(join(dir, "p.tar.gz"), gzipSync(tarOf([
  tarEntry("lib/app", app), tarEntry("doc/readme", Buffer.from("text\n")), tarEntry("lib/libboth.a", libboth), tarEntry("wheels/inner.zip", readFileSync(join(dir, "inner.zip"))),
])));
const kit = async (...args: string[]) => {
  const r = await runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
  return { code: r.code, stdout: r.stdout.toString(), stderr: r.stderr };
};

describe("pkg!member as an input", () => {
  it("ls and sizes read the member as the file itself, under the member's name (nested levels too)", async () => {
    const alone = await kit("ls", "app");
    for (const name of ["p.tar.gz!lib/app", "p.tar.gz!wheels/inner.zip!lib/app"]) {
      const member = await kit("ls", name);
      expect([member.code, member.stderr]).toEqual([0, ""]);
      expect(member.stdout).toBe(alone.stdout.replaceAll("app:", `${name}:`));
    }
    const sizes = await kit("sizes", "p.tar.gz!lib/libboth.a");
    expect(sizes.code).toBe(0);
    expect(sizes.stdout).toBe((await kit("sizes", join(HOSTS, "libboth.a"))).stdout.replaceAll(join(HOSTS, "libboth.a"), "p.tar.gz!lib/libboth.a"));
  });

  it("check judges the member alone; a member not there is an error naming it", async () => {
    const yes = await kit("check", "--gpu=gfx90a", "p.tar.gz!lib/app");
    expect([yes.code, yes.stderr]).toEqual([0, ""]);
    expect(yes.stdout).toMatch(/^p\.tar\.gz!lib\/app: embedded bundles, 6 device entries, 3 loadable on gfx90a/);
    const no = await kit("check", "--gpu=gfx1100", "p.tar.gz!lib/app");
    expect(no.code).toBe(1);
    const missing = await kit("check", "--gpu=gfx90a", "p.tar.gz!lib/nope");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("'p.tar.gz!lib/nope': no such member in the package");
    const ls = await kit("ls", "p.tar.gz!lib/nope");
    expect(ls.code).toBe(1);
    expect(ls.stderr).toContain("'p.tar.gz!lib/nope': no such member in the package");
  });

  it("extract writes the member's entries as for the file", async () => {
    mkdirSync(join(dir, "x-member"));
    mkdirSync(join(dir, "x-file"));
    expect((await kit("extract", "--out-dir=x-member", "p.tar.gz!lib/app")).code).toBe(0);
    expect((await kit("extract", "--out-dir=x-file", "app")).code).toBe(0);
    const names = readdirSync(join(dir, "x-file")).sort();
    expect(names.length).toBe(9);
    expect(readdirSync(join(dir, "x-member")).sort()).toEqual(names);
    for (const name of names) expect(readFileSync(join(dir, "x-member", name))).toEqual(readFileSync(join(dir, "x-file", name)));
  });

  it("prune and compress -o write the edited member as a plain file, as the file alone gives it; --in-place is refused", async () => {
    const member = await kit("prune", "--keep=gfx90a", "-o", "member.app", "p.tar.gz!wheels/inner.zip!lib/app");
    expect([member.code, member.stderr]).toEqual([0, ""]);
    expect(member.stdout).toMatch(/^p\.tar\.gz!wheels\/inner\.zip!lib\/app: linked ELF \(9 entries: host, gfx906, gfx90a\), 38016 -> \d+ bytes, saves \d+ .*-> member\.app\n/);
    expect((await kit("prune", "--keep=gfx90a", "-o", "file.app", "app")).code).toBe(0);
    expect(readFileSync(join(dir, "member.app"))).toEqual(readFileSync(join(dir, "file.app")));
    mkdirSync(join(dir, "out"));
    expect((await kit("compress", "--out-dir=out", "p.tar.gz!lib/libboth.a")).code).toBe(0);
    expect((await kit("compress", "-o", "libboth.c", join(HOSTS, "libboth.a"))).code).toBe(0);
    expect(readFileSync(join(dir, "out/libboth.a"))).toEqual(readFileSync(join(dir, "libboth.c")));
    const inPlace = await kit("prune", "--keep=gfx90a", "--in-place", "p.tar.gz!lib/app");
    expect(inPlace.code).toBe(1);
    expect(inPlace.stderr).toContain("'p.tar.gz!lib/app': a package member cannot be replaced in place");
    const missing = await kit("prune", "--keep=gfx90a", "-o", "x", "p.tar.gz!lib/none");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("'p.tar.gz!lib/none': no such member in the package");
  });
});
