// Real Debian packages (apt-get download, as CI can): ls, extract and sizes on the .deb give what they give
// on the library unpacked by dpkg-deb -x, byte for byte. Skips when apt-get cannot fetch them, fails then
// under OFFLOAD_KIT_REQUIRE_NATIVE=1.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { inspectPackage } from "../../src/browser/index.js";
import { bytesSource } from "../../src/engine/source.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";
import { download } from "./apt.js";

const kit = (cwd: string, ...args: string[]) => runInDir(cwd, (io) => runOffloadKit("offload-kit", args, io));

function unpack(dir: string, deb: string): string {
  const out = join(dir, "unpacked");
  execFileSync("dpkg-deb", ["-x", deb, out], { cwd: dir });
  return out;
}

describe.each([
  ["librocrand1", "usr/lib/x86_64-linux-gnu/librocrand.so.1.1"],
])("%s", (name, library) => {
  it("ls --json and extract on the .deb equal ls and extract on the unpacked library", async () => {
    const dir = scratchDir("offload-kit-deb-");
    const deb = download(dir, name);
    if (deb === undefined) return;
    const unpacked = unpack(dir, deb);
    const fromDeb = await kit(dir, "ls", "--json", deb);
    expect(fromDeb.stderr).toBe("");
    expect(fromDeb.code).toBe(0);
    const pkg = JSON.parse(fromDeb.stdout.toString()).files[0];
    expect(pkg.package.format).toBe("deb");
    const member = pkg.members.find((m: { member: string[] }) => m.member.join("/") === library);
    expect(member.path).toBe(`${deb}!${library}`);
    const fromFile = JSON.parse((await kit(dir, "ls", "--json", join(unpacked, library))).stdout.toString()).files[0];
    const strip = ({ path: _p, member: _m, ...rest }: Record<string, unknown>) => rest;
    expect(strip(member)).toEqual(strip(fromFile));
    expect(member.bundles.length).toBeGreaterThan(0);

    await kit(dir, "extract", "--out-dir=from-deb", deb);
    await kit(dir, "extract", "--out-dir=from-file", join(unpacked, library));
    const digests = (out: string, prefix: string) => readdirSync(join(dir, out)).sort().map((f) => {
      expect(f.startsWith(prefix)).toBe(true);
      return [f.slice(prefix.length), createHash("sha256").update(readFileSync(join(dir, out, f))).digest("hex")];
    });
    const base = library.slice(library.lastIndexOf("/") + 1);
    const a = digests("from-deb", `${deb}!${library.replaceAll("/", "_")}`);
    const b = digests("from-file", base);
    expect(a.length).toBeGreaterThan(0);
    expect(a).toEqual(b);
  }, HANG_MS);

  it("ls, sizes and check --json locate the library as it streams (nothing spooled), as they do spooled", async () => {
    const dir = scratchDir("offload-kit-deb-");
    const deb = download(dir, name);
    if (deb === undefined) return;
    const run = async (args: string[], stream?: string) => {
      if (stream !== undefined) process.env.OFFLOAD_KIT_STREAM = stream;
      try {
        const out = await kit(dir, ...args, deb);
        expect(out.stderr).toBe("");
        return JSON.parse(out.stdout.toString());
      } finally {
        delete process.env.OFFLOAD_KIT_STREAM;
      }
    };
    for (const args of [["ls", "--json"], ["sizes", "--json"], ["check", "--json", "--gpu=gfx90a"]]) {
      const streamed = await run(args);
      const spooled = await run(args, "off");
      const pkg = streamed.files?.[0]?.package;
      if (pkg !== undefined) {
        // The library (25 MB) is over the 16 MiB kept in memory: spooled to disk unless streamed.
        expect(pkg).toMatchObject({ streamed: 1, spooledToDisk: 0, largestSpooled: 0 });
        expect(spooled.files[0].package).toMatchObject({ streamed: 0, largestSpooled: 25_384_336 });
        for (const field of ["streamed", "spooledToDisk", "largestSpooled"]) {
          delete streamed.files[0].package[field];
          delete spooled.files[0].package[field];
        }
      }
      expect(streamed, args.join(" ")).toEqual(spooled);
    }
  }, HANG_MS);
});

describe("librocsparse0 (1.3 GB library in a 94 MB data.tar.xz)", () => {
  it("sizes --json on the .deb equals sizes on the unpacked library; the member located as it streams, never spooled", async () => {
    const dir = scratchDir("offload-kit-deb-");
    const deb = download(dir, "librocsparse0");
    if (deb === undefined) return;
    const library = "usr/lib/x86_64-linux-gnu/librocsparse.so.0.1";
    const fromDeb = await kit(dir, "sizes", "--json", deb);
    expect(fromDeb.code).toBe(0);
    const pkg = JSON.parse(fromDeb.stdout.toString()).files[0];
    expect(pkg.package).toMatchObject({ streamed: 1, spooledToDisk: 0, largestSpooled: 0 });
    const member = pkg.members.find((m: { member: string[] }) => m.member.join("/") === library);
    const unpacked = unpack(dir, deb);
    const fromFile = JSON.parse((await kit(dir, "sizes", "--json", join(unpacked, library))).stdout.toString()).files[0];
    const strip = ({ path: _p, member: _m, ...rest }: Record<string, unknown>) => rest;
    expect(strip(member)).toEqual(strip(fromFile));
    expect(member.bundles.length).toBe(111);
  }, HANG_MS);

  it("the browser API (inspectPackage, in-page decoders) reports the 1.3 GB member as ls --json does, located as it streams", async () => {
    const dir = scratchDir("offload-kit-deb-");
    const deb = download(dir, "librocsparse0");
    if (deb === undefined) return;
    // More than the page may hold of one member (BROWSER_MAX_DECOMPRESSED): it must not be held.
    const result = await inspectPackage(bytesSource(new Uint8Array(readFileSync(join(dir, deb)))), deb);
    expect(result!.problems).toEqual([]);
    expect(result!.package).toMatchObject({ streamed: 1, spooledToDisk: 0 });
    const listed = JSON.parse((await kit(dir, "ls", "--json", deb)).stdout.toString()).files[0];
    expect(result!.members.map((m) => m.report)).toEqual(listed.members.map(({ member: _m, ...rest }: Record<string, unknown>) => rest));
    expect(result!.members[0]!.report.bundles.length).toBe(111);
  }, HANG_MS);
});
