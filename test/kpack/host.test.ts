// kpack'd host binaries made by rocm-kpack (test/fixtures/kpack): HIPK wrappers, their co_index, the marker each
// points at (through the R_X86_64_RELATIVE addend: the file holds 0), and the archives the runtime's search finds.
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bytesSource } from "../../src/engine/source.js";
import { openElf } from "../../src/formats/elf.js";
import { parseKpackMarker, writeKpackMarker } from "../../src/formats/kpack-marker.js";
import { OffloadKitError } from "../../src/engine/errors.js";
import { kpackKey, readKpackHost } from "../../src/kpack/host.js";
import { compatibleKpackTargets } from "../../src/kpack/targets.js";
import { installedKpackArchives, kpackCandidates, listInstalledKpack, loadKpack } from "../../src/kpack/node/resolve.js";

const FIXTURES = join(import.meta.dirname, "../fixtures");
const TREE = join(FIXTURES, "kpack/tree/stage");
const read = (path: string) => new Uint8Array(readFileSync(path));
const NO_ENV = {};

describe("a kpack'd host binary", () => {
  it("app: three HIPK wrappers with co_index 0..2, each pointing at the one marker", () => {
    const bytes = read(join(TREE, "bin/app"));
    const host = readKpackHost(bytesSource(bytes))!;
    expect(host.hipfWrappers).toBe(0);
    expect(host.markerSection).toBe(true);
    expect(host.wrappers.map((w) => w.coIndex)).toEqual([0, 1, 2]);
    expect(host.wrappers.map(kpackKey)).toEqual(["stage/bin/app#0", "stage/bin/app#1", "stage/bin/app#2"]);
    for (const w of host.wrappers) {
      // A PIE: the pointer field holds 0 in the file; the marker is found through the RELATIVE relocation's addend.
      expect(new DataView(bytes.buffer).getBigUint64(w.offset + 8, true)).toBe(0n);
      expect(w.marker).toEqual({ kernelName: "stage/bin/app", searchPaths: ["../.kpack/test_lib_@GFXARCH@.kpack"], size: w.marker.size });
    }
    // The marker is the .rocm_kpack_ref section's contents, byte for byte as rocm-kpack wrote it.
    const marker = host.wrappers[0]!;
    expect(Buffer.from(bytes.subarray(marker.markerOffset, marker.markerOffset + marker.marker.size)).equals(Buffer.from(writeKpackMarker(marker.marker)))).toBe(true);
  });

  it("its section header offset is unaligned, and the ELF reader takes it", () => {
    const bytes = read(join(TREE, "bin/app"));
    const shoff = Number(new DataView(bytes.buffer).getBigUint64(40, true));
    expect(shoff % 8).not.toBe(0);
    expect(openElf(bytesSource(bytes)).sections.some((s) => s.size > 0)).toBe(true);
  });

  it("the fat binary before the split is not kpack'd; a shared library is", () => {
    expect(readKpackHost(bytesSource(read(join(FIXTURES, "hosts/app"))))).toBeUndefined();
    const lib = readKpackHost(bytesSource(read(join(TREE, "lib/libk.so"))))!;
    expect(lib.wrappers.map(kpackKey)).toEqual(["stage/lib/libk.so#0"]);
  });

  it("a marker that is not what the runtime accepts is a typed error", () => {
    const bad = (value: Parameters<typeof writeKpackMarker>[0] | Uint8Array) => {
      try {
        parseKpackMarker(value instanceof Uint8Array ? value : writeKpackMarker(value), 100);
      } catch (e) {
        expect(e).toBeInstanceOf(OffloadKitError);
        return (e as OffloadKitError).code;
      }
      return "ok";
    };
    expect(bad({ kernelName: "x", searchPaths: [] })).toBe("KPACK_BAD_MARKER");
    expect(bad(Uint8Array.of(0x92, 1, 2))).toBe("KPACK_BAD_MARKER");
    expect(bad(Uint8Array.of(0x81, 0xa1))).toBe("KPACK_BAD_MARKER");
    expect(bad({ kernelName: "x", searchPaths: ["a"] })).toBe("ok");
  });
});

describe("search as rocm-kpack's runtime searches", () => {
  const app = join(TREE, "bin/app");
  const lib = join(TREE, "lib/libk.so");
  const hostOf = (path: string) => readKpackHost(bytesSource(read(path)))!;

  it("feature subsets, most specific first, flags kept in order", () => {
    expect(compatibleKpackTargets("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-")).toEqual(["gfx90a:sramecc+:xnack-", "gfx90a:sramecc+", "gfx90a:xnack-", "gfx90a"]);
    expect(compatibleKpackTargets("gfx1100")).toEqual(["gfx1100"]);
    expect(compatibleKpackTargets("")).toEqual([]);
  });

  it("candidates: search paths relative to the binary's directory, @GFXARCH@ expanded per GPU", () => {
    expect(kpackCandidates(app, ["../.kpack/test_lib_@GFXARCH@.kpack"], ["gfx90a:xnack-"], NO_ENV)).toEqual([
      resolve(TREE, ".kpack/test_lib_gfx90a:xnack-.kpack"), resolve(TREE, ".kpack/test_lib_gfx90a.kpack"),
    ]);
    expect(kpackCandidates(app, ["../x.kpack"], ["gfx906"], { ROCM_KPACK_PATH_PREFIX: "/p/a.kpack:/p/b.kpack" })).toEqual(["/p/a.kpack", "/p/b.kpack", resolve(TREE, "x.kpack")]);
    expect(kpackCandidates(app, ["../x.kpack"], ["gfx906"], { ROCM_KPACK_PATH: "/o.kpack", ROCM_KPACK_PATH_PREFIX: "/p.kpack" })).toEqual(["/o.kpack"]);
  });

  it("loads what each GPU gets, naming the archive; misses as the runtime's errors", () => {
    const on = (path: string, gpu: string, env = NO_ENV) => loadKpack(path, hostOf(path), [gpu], env).lookups.map((l) => l.found[0]?.archivePath ?? l.miss);
    expect(on(app, "gfx90a:sramecc+")).toEqual(Array(3).fill(resolve(TREE, ".kpack/test_lib_gfx90a.kpack")));
    // An MI200 as the runtime names it: 'gfx90a:xnack-' comes before 'gfx90a', and libk's archive (same group, so
    // test_lib_gfx90a:xnack-.kpack) serves it first, without app's keys. The runtime stops there: app loads nothing.
    expect(on(app, "gfx90a:sramecc+:xnack-")).toEqual(Array(3).fill("kernel-not-found"));
    expect(on(app, "gfx906")).toEqual(Array(3).fill(resolve(TREE, ".kpack/test_lib_gfx906.kpack")));
    expect(on(app, "gfx1030")).toEqual(Array(3).fill("archive-not-found"));
    // The group's gfx1100 archive is libk's: found for gfx1100, without app's keys.
    expect(on(app, "gfx1100")).toEqual(Array(3).fill("kernel-not-found"));
    // libk's gfx90a code is filed under gfx90a:xnack-: a GPU named plain gfx90a (or xnack+) tries 'gfx90a', app's archive.
    expect(on(lib, "gfx90a:xnack-")).toEqual([resolve(TREE, ".kpack/test_lib_gfx90a:xnack-.kpack")]);
    expect(on(lib, "gfx90a")).toEqual(["kernel-not-found"]);
    expect(on(lib, "gfx90a:xnack+")).toEqual(["kernel-not-found"]);
    expect(on(lib, "gfx1100")).toEqual([resolve(TREE, ".kpack/test_lib_gfx1100.kpack")]);
    // An archive serving the GPU but without the key ends the search: rocm-kpack's gfx900 test archive has no stage/bin/app.
    const noop = join(FIXTURES, "kpack/runtime/test_noop.kpack");
    expect(on(app, "gfx900", { ROCM_KPACK_PATH: noop })).toEqual(Array(3).fill("kernel-not-found"));
    expect(on(app, "gfx1100", { ROCM_KPACK_PATH: noop })).toEqual(Array(3).fill("arch-not-found"));
    // A prefix archive is searched first: here it serves gfx906 (without the key) before the tree's own archive.
    expect(on(app, "gfx906", { ROCM_KPACK_PATH_PREFIX: noop })).toEqual(Array(3).fill("kernel-not-found"));
    expect(on(app, "gfx906", { ROCM_KPACK_DISABLE: "1" })).toEqual(Array(3).fill("disabled"));
    expect(on(app, "gfx906", { ROCM_KPACK_DISABLE: "0" })).toEqual(Array(3).fill(resolve(TREE, ".kpack/test_lib_gfx906.kpack")));
  });

  it("an archive is chosen by its TOC's gfx_arches, not its name", () => {
    const dir = mkdtempSync(join(tmpdir(), "kpack-arches-"));
    try {
      cpSync(TREE, join(dir, "stage"), { recursive: true });
      // Named for gfx1100, serving gfx906: found by name for gfx1100, but serves only gfx906.
      cpSync(join(TREE, ".kpack/test_lib_gfx906.kpack"), join(dir, "stage/.kpack/test_lib_gfx1100.kpack"));
      const moved = join(dir, "stage/bin/app");
      expect(loadKpack(moved, hostOf(moved), ["gfx1100"], NO_ENV).lookups[0]!.miss).toBe("arch-not-found");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("without a GPU: every installed archive the pattern matches, listed from the directory", () => {
    expect(installedKpackArchives(lib, ["../.kpack/test_lib_@GFXARCH@.kpack"], NO_ENV).map((p) => p.substring(TREE.length + 1))).toEqual([
      ".kpack/test_lib_gfx1100.kpack", ".kpack/test_lib_gfx906.kpack", ".kpack/test_lib_gfx90a.kpack", ".kpack/test_lib_gfx90a:xnack-.kpack",
    ]);
    const listed = listInstalledKpack(lib, hostOf(lib), NO_ENV);
    expect(listed.lookups[0]!.found.map((f) => f.entry.arch)).toEqual(["gfx1100", "gfx90a:xnack-"]);
  });
});

afterAll(() => undefined);
