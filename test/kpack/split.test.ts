// offload-kit kpack: the archives are byte for byte rocm-kpack's split_artifacts' for the same binary
// (test/fixtures/kpack/tree), the rewritten host reads back as a kpack'd host whose code objects are the native
// bundler's, it still runs, and it is smaller.
import { cpSync, readFileSync, readdirSync, statSync } from "node:fs";
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { bytesSource } from "../../src/engine/source.js";
import { readKpackArchive } from "../../src/formats/kpack.js";
import { kpackKey, readKpackHost } from "../../src/kpack/host.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";

const FIXTURES = join(import.meta.dirname, "../fixtures");

describe("offload-kit kpack", () => {
  const dir = scratchDir("offload-kit-kpack-split-");
  const kit = (...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
  const expected = new Map<string, string>();

  beforeAll(() => {
    cpSync(join(FIXTURES, "hosts/app"), join(dir, "plain/stage/bin/app"));
    cpSync(join(FIXTURES, "hosts/app"), join(dir, "zstd/stage/bin/app"));
    for (const line of readFileSync(join(FIXTURES, "hosts/expected.tsv"), "utf8").trim().split("\n")) {
      const [file, index, id, , hash] = line.split("\t");
      if (file === "app") expected.set(`${index}-${id}`, hash!);
    }
  });

  it("writes rocm-kpack's archives, byte for byte, and a smaller host that still runs", async () => {
    const run = await kit("kpack", "plain/stage", "--group=test_lib", "--prefix=stage");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.toString()).toContain("3 fat binaries kpack'd as 'stage/bin/app'");
    for (const arch of ["gfx906", "gfx90a"]) {
      const ours = readFileSync(join(dir, `plain/stage/.kpack/test_lib_${arch}.kpack`));
      expect(ours.equals(readFileSync(join(FIXTURES, `kpack/tree/stage/.kpack/test_lib_${arch}.kpack`))), arch).toBe(true);
    }
    const app = join(dir, "plain/stage/bin/app");
    expect(statSync(app).size).toBeLessThan(statSync(join(FIXTURES, "hosts/app")).size);
    // The host too: rocm-kpack's layout (.rocm_kpack_ref in its own PT_LOAD, .hip_fatbin zero-paged), byte for byte.
    expect(readFileSync(app).equals(readFileSync(join(FIXTURES, "kpack/tree/stage/bin/app")))).toBe(true);
    const host = readKpackHost(bytesSource(new Uint8Array(readFileSync(app))))!;
    expect(host.hipfWrappers).toBe(0);
    expect(host.wrappers.map(kpackKey)).toEqual(["stage/bin/app#0", "stage/bin/app#1", "stage/bin/app#2"]);
    expect(host.wrappers[0]!.marker.searchPaths).toEqual(["../.kpack/test_lib_@GFXARCH@.kpack"]);
    if (process.platform === "linux" && process.arch === "x64") {
      // Its registration stubs (hosts/src/stubs.c) take the HIPK wrappers as they took the HIPF ones.
      const ran = spawnSync(app, [], { timeout: HANG_MS });
      expect(ran.status).toBe(0);
    }
  });

  it("the rewritten host lists and extracts the code objects the native bundler took out of the fat binary", async () => {
    const ls = (await kit("ls", "-v", "plain/stage/bin/app")).stdout.toString();
    expect(ls).not.toContain("binary bundle");
    expect(ls.match(/HIPK wrapper \d \(co_index \d\)/g)).toHaveLength(3);
    for (const tree of ["plain", "zstd"]) {
      if (tree === "zstd") expect((await kit("kpack", "zstd/stage", "--group=g", "--compression=zstd-per-kernel")).code).toBe(0);
      const run = await kit("extract", `--out-dir=${tree}-out`, `${tree}/stage/bin/app`);
      expect(run.code, run.stderr).toBe(0);
      const names = readdirSync(join(dir, `${tree}-out`)).sort();
      expect(names).toHaveLength(6);
      for (const name of names) {
        expect(createHash("sha256").update(readFileSync(join(dir, `${tree}-out`, name))).digest("hex"), name).toBe(expected.get(name.substring(4)));
      }
    }
    expect(readKpackArchive(bytesSource(new Uint8Array(readFileSync(join(dir, "zstd/stage/.kpack/g_gfx906.kpack"))))).compression).toBe("zstd-per-kernel");
    expect((await kit("check", "--gpu=gfx90a", "zstd/stage/bin/app")).code).toBe(0);
    expect((await kit("check", "--gpu=gfx1100", "zstd/stage/bin/app")).code).toBe(1);
  });

  it("unkpack puts the code objects back: the same entries as before the split, and it still runs", async () => {
    cpSync(join(FIXTURES, "hosts/app"), join(dir, "undo/stage/bin/app"));
    expect((await kit("kpack", "undo/stage", "--group=g", "--compression=zstd-per-kernel")).code).toBe(0);
    const run = await kit("unkpack", "undo/stage/bin/app");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.toString()).toContain("3 wrappers, 6 code objects put back");
    expect(readKpackHost(bytesSource(new Uint8Array(readFileSync(join(dir, "undo/stage/bin/app")))))).toBeUndefined();
    expect((await kit("extract", "--out-dir=undo-out", "undo/stage/bin/app")).code).toBe(0);
    const names = readdirSync(join(dir, "undo-out")).sort();
    // The host entries come back too (empty, as clang writes them): every line of the native extraction.
    expect(names).toEqual([...expected.keys()].map((k) => `app-${k}`).sort());
    for (const name of names) {
      expect(createHash("sha256").update(readFileSync(join(dir, "undo-out", name))).digest("hex"), name).toBe(expected.get(name.substring(4)));
    }
    if (process.platform === "linux" && process.arch === "x64") expect(spawnSync(join(dir, "undo/stage/bin/app"), [], { timeout: HANG_MS }).status).toBe(0);
    // rocm-kpack's own split of the same app (its zero-paged layout) comes back to the same entries.
    cpSync(join(FIXTURES, "kpack/tree"), join(dir, "rk"), { recursive: true });
    const rk = await kit("unkpack", "rk/stage/bin/app");
    expect(rk.code, rk.stderr).toBe(0);
    expect((await kit("extract", "--out-dir=rk-out", "rk/stage/bin/app")).code).toBe(0);
    expect(readdirSync(join(dir, "rk-out")).sort()).toEqual(names);
    for (const name of names) {
      expect(createHash("sha256").update(readFileSync(join(dir, "rk-out", name))).digest("hex"), name).toBe(expected.get(name.substring(4)));
    }
    if (process.platform === "linux" && process.arch === "x64") expect(spawnSync(join(dir, "rk/stage/bin/app"), [], { timeout: HANG_MS }).status).toBe(0);
  });

  it("libraries (a CCOB among them, -fgpu-rdc) and a PIE: every host byte for byte rocm-kpack's, the archives but for -fgpu-rdc's second wrapper", async () => {
    cpSync(join(FIXTURES, "kpack/standin/orig"), join(dir, "standin"), { recursive: true });
    const run = await kit("kpack", "standin", "--group=standin", "--prefix=stage");
    expect(run.code, run.stderr).toBe(0);
    const rocm = join(FIXTURES, "kpack/standin/split");
    for (const file of ["lib/liba.so", "lib/libccob.so", "lib/librdc.so", "bin/pie"]) {
      expect(readFileSync(join(dir, "standin", file)).equals(readFileSync(join(rocm, file))), file).toBe(true);
    }
    const entries = (path: string) => {
      const bytes = new Uint8Array(readFileSync(path));
      const archive = readKpackArchive(bytesSource(bytes));
      return new Map(archive.entries.map((e) => [e.key, createHash("sha256").update(bytes.subarray(e.offset, e.offset + e.size)).digest("hex")]));
    };
    for (const arch of ["gfx906", "gfx90a", "gfx1100"]) {
      const ours = entries(join(dir, `standin/.kpack/standin_${arch}.kpack`));
      const theirs = entries(join(rocm, `.kpack/standin_${arch}.kpack`));
      // rocm-kpack numbers code objects by fat binary; the runtime looks them up by wrapper. librdc.so's two
      // wrappers share one fat binary: rocm-kpack files it once (#0), we file it for each wrapper.
      expect([...ours.keys()].sort()).toEqual([...theirs.keys(), "stage/lib/librdc.so#1"].sort());
      for (const [key, hash] of theirs) expect(ours.get(key), `${arch} ${key}`).toBe(hash);
      expect(ours.get("stage/lib/librdc.so#1")).toBe(theirs.get("stage/lib/librdc.so#0"));
    }
    expect((await kit("check", "--gpu=gfx90a", "standin/lib/librdc.so")).code).toBe(0);
  });

  it("a second run adds to the group's archives and leaves kpack'd hosts alone", async () => {
    cpSync(join(FIXTURES, "hosts/app"), join(dir, "twice/a/app"));
    expect((await kit("kpack", "twice", "--group=g")).code).toBe(0);
    cpSync(join(FIXTURES, "hosts/app"), join(dir, "twice/b/app"));
    const run = await kit("kpack", "twice", "--group=g");
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("a/app: not split: already kpack'd");
    const archive = readKpackArchive(bytesSource(new Uint8Array(readFileSync(join(dir, "twice/.kpack/g_gfx906.kpack")))));
    expect(archive.entries.map((e) => e.key)).toEqual(["a/app#0", "a/app#1", "a/app#2", "b/app#0", "b/app#1", "b/app#2"]);
    expect((await kit("check", "--gpu=gfx906", "twice/a/app", "twice/b/app")).code).toBe(0);
  });

  it("refuses without a group; a tree without HIP hosts is left as it is", async () => {
    expect((await kit("kpack", "plain/stage")).code).toBe(2);
    cpSync(join(FIXTURES, "hosts/omp.o"), join(dir, "none/omp.o"));
    const run = await kit("kpack", "none", "--group=g");
    expect(run.code).toBe(0);
    expect(run.stdout.toString()).toContain("no HIP host binary found");
    expect(readdirSync(join(dir, "none"))).toEqual(["omp.o"]);
  });
});
