// The CLI on packages, in-process: ls/sizes/check/extract on a tarball of the fixture fat binaries,
// the text and JSON shapes, per-package totals, check naming members without code, a damaged package.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HOSTS, tarEntry, tarOf } from "./build.js";

const app = readFileSync(join(HOSTS, "app"));
const dir = scratchDir("offload-kit-pkg-cli-");
const pkg = gzipSync(tarOf([tarEntry("lib/app", app), tarEntry("doc/readme", Buffer.from("text\n")), tarEntry("lib/libboth.a", readFileSync(join(HOSTS, "libboth.a")))]));
writeFileSync(join(dir, "p.tar.gz"), pkg);
writeFileSync(join(dir, "cut.tar.gz"), pkg.subarray(0, Math.floor(pkg.length * 0.8)));
const kit = (...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));

describe("offload-kit on packages", () => {
  it("ls names each find pkg!member and --json adds the member path as a list", async () => {
    const summary = (await kit("ls", "p.tar.gz")).stdout.toString();
    // Issue 27 item 4: without -v, the package is one line, what its members hold together.
    expect(summary).toMatch(/^p\.tar\.gz: gzip package, 3 members, 2 with offload code; 4 bundles, 12 entries, 1 offload image: host, gfx906, gfx90a\n$/);
    const text = await kit("ls", "-v", "p.tar.gz");
    expect(text.code).toBe(0);
    const out = text.stdout.toString();
    expect(out).toMatch(/^p\.tar\.gz: gzip package, 3 members, 2 with offload code\n/);
    expect(out).toContain("p.tar.gz!lib/app: binary bundle at 0x1000");
    expect(out).not.toContain("doc/readme");
    const json = JSON.parse((await kit("ls", "--json", "p.tar.gz")).stdout.toString()).files[0];
    expect(json.members.map((m: { path: string; member: string[] }) => [m.path, m.member])).toEqual([
      ["p.tar.gz!lib/app", ["lib/app"]],
      ["p.tar.gz!lib/libboth.a", ["lib/libboth.a"]],
    ]);
    const alone = JSON.parse((await runInDir(HOSTS, (io) => runOffloadKit("offload-kit", ["ls", "--json", "app"], io))).stdout.toString()).files[0];
    expect({ ...json.members[0], path: "app", member: undefined }).toEqual({ ...alone, member: undefined });
  });

  it("sizes totals per member and per package", async () => {
    const summary = (await kit("sizes", "p.tar.gz")).stdout.toString();
    expect(summary).toMatch(/^p\.tar\.gz: gzip package, 3 members, 2 with offload code; \d+ entries, [\d,]+ bytes in 2 members\n {2}TARGET/);
    expect(summary).not.toContain("total");
    const run = await kit("sizes", "-v", "p.tar.gz");
    expect(run.code).toBe(0);
    const out = run.stdout.toString();
    expect(out).toContain("p.tar.gz!lib/app: 3 bundles, 9 entries, 21,256 bytes");
    expect(out).toMatch(/p\.tar\.gz: package total, \d+ entries, [\d,]+ bytes in 2 members/);
    // One total per run: the package's, not again for the run.
    expect(out.match(/total/g)).toHaveLength(1);
  });

  it("check answers per package and names the members with no code for the GPU", async () => {
    const yes = await kit("check", "--gpu=gfx906", "p.tar.gz");
    expect(yes.code).toBe(0);
    expect(yes.stdout.toString()).toContain("p.tar.gz: package,");
    const no = await kit("check", "--gpu=gfx1100", "--json", "p.tar.gz");
    expect(no.code).toBe(1);
    const input = JSON.parse(no.stdout.toString()).inputs[0];
    expect(input.kind).toBe("package");
    expect(input.membersWithoutCode).toEqual(["lib/app", "lib/libboth.a"]);
    expect((await kit("check", "--gpu=gfx1100", "p.tar.gz")).stdout.toString()).toContain("members with no code for gfx1100: lib/app, lib/libboth.a");
  });

  it("a damaged package: the members before the damage are reported, the error names member and offset, exit 1", async () => {
    const run = await kit("ls", "-v", "cut.tar.gz");
    expect(run.code).toBe(1);
    expect(run.stdout.toString()).toContain("cut.tar.gz!lib/app: binary bundle");
    expect(run.stderr).toMatch(/cut\.tar\.gz(!lib\/libboth\.a)?: at 0x[0-9a-f]+: /);
  });

  it("extract writes each member's entries under its flattened path, inside --out-dir", async () => {
    const run = await kit("extract", "--out-dir=out", "p.tar.gz");
    expect(run.code).toBe(0);
    const names = readdirSync(join(dir, "out"));
    expect(names.filter((n) => n.startsWith("p.tar.gz!lib_app-"))).toHaveLength(9);
    expect(names.every((n) => n.startsWith("p.tar.gz!lib_"))).toBe(true);
  });
});
