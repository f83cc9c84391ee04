// offload-kit check as a process (node dist/bin/offload-kit.js, built by `npm run build`), one test per
// item of issue 19 it answers:
// 5. libraries with the bundle or OffloadBinary magic as data (a gcc-built .so with the string in .rodata;
//    Debian's libamdhip64, libamd_comgr, libclang-cpp and libLLVM when installed) have no device code and
//    no "malformed bundle", while a .hip_fatbin section made with gcc is read;
// 6. directory walks as `find` without -L (links to files once, linked folders not entered, `ln -s . self`,
//    an unreadable folder reported and skipped, for a process without root's rights);
// 7. xnack/sramecc with a bare processor and rocminfo's spelling (librocsparse0 and librocrand1 when installed);
// 8. a file made by offload-packager is checked by its images;
// 9. a summary per target ID, then the detail with bundle index and offset, in text and --json;
// 11. per-file errors on stderr.
// The Debian libraries are not a CI requirement (as in test/differential/library-native.test.ts): those
// cases skip where a library is absent. gcc is, so under OFFLOAD_KIT_REQUIRE_NATIVE=1 its absence fails.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { latin1Encode } from "../../src/formats/bytes.js";
import { nativeTool } from "../native.js";
import { scratchDir } from "./harness.js";
import { HANG_MS } from "../limits.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const BIN = join(ROOT, "dist/bin/offload-kit.js");
const PACKAGER = join(ROOT, "dist/bin/offload-packager.js");
const LIB = "/usr/lib/x86_64-linux-gnu";
const HOST = "host-x86_64-unknown-linux-gnu-";
const G = (id: string) => `hip-amdgcn-amd-amdhsa--${id}`;
const TIMEOUT = HANG_MS;

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(args: readonly string[], options: { cwd?: string; prefix?: readonly string[] } = {}): Run {
  const command = [...(options.prefix ?? []), process.execPath, BIN, ...args];
  const r = spawnSync(command[0]!, command.slice(1), { cwd: options.cwd, encoding: "utf8", maxBuffer: 1 << 28, timeout: TIMEOUT });
  // The bins name themselves by their path unless found on PATH: diagnostics are compared under one name.
  return { code: r.status, stdout: r.stdout, stderr: r.stderr.replace(/^\S*offload-kit(?:\.js)? /gm, "offload-kit ") };
}

const check = (args: readonly string[], options?: { cwd?: string; prefix?: readonly string[] }) => run(["check", ...args], options);

function bundle(ids: readonly string[]): Uint8Array {
  return writeBinaryBundle(ids.map((id) => ({ id, data: latin1Encode(`code for ${id}`) })));
}

/** `unsigned char NAME[] = {...}` for a C file. */
function cArray(bytes: Uint8Array): string {
  return `{${Array.from(bytes, (b) => String(b)).join(",")}}`;
}

const gcc = nativeTool("gcc");

describe("issue 19 item 5: magics outside the offload sections are not device code", () => {
  it.skipIf(gcc === undefined)("a gcc-built library with the magics in .rodata: no device code, no problem; a .hip_fatbin section is read", () => {
    const dir = scratchDir("offload-kit-check-elf-");
    // The string libamdhip64 holds, and the OffloadBinary magic followed by a version no binary has.
    writeFileSync(join(dir, "strings.c"), [
      'const char bundler_text[] = "__CLANG_OFFLOAD_BUNDLE__\\0vector::reserve";',
      "const unsigned int offload_magic[] = {0x10ff10ad, 0x0335800f, 0x12345678};",
      "int used(int i) { return bundler_text[i] + (int)offload_magic[i]; }",
    ].join("\n"));
    const fatbin = bundle([HOST, G("gfx90a")]);
    writeFileSync(join(dir, "fatbin.c"), [
      `__attribute__((section(".hip_fatbin"), aligned(4096), used)) const unsigned char fatbin[] = ${cArray(fatbin)};`,
      'const char stray[] = "__CLANG_OFFLOAD_BUNDLE__ in .rodata";',
      "int f(int i) { return fatbin[i] + stray[i]; }",
    ].join("\n"));
    for (const name of ["strings", "fatbin"]) {
      const built = spawnSync(gcc!, ["-shared", "-fPIC", "-O1", "-o", join(dir, `lib${name}.so`), join(dir, `${name}.c`)], { encoding: "utf8" });
      expect(built.status, built.stderr).toBe(0);
    }
    const strings = check(["--gpu=gfx90a", "libstrings.so"], { cwd: dir });
    expect(strings.stderr).toBe("");
    expect(strings.stdout).toBe("libstrings.so: no offload bundles or offload binaries\nFAIL: 1 of 1 inputs have no device code gfx90a can load\n");
    expect(strings.code).toBe(1);
    // The same locator serves ls and sizes: no warning there either.
    const ls = run(["ls", "libstrings.so"], { cwd: dir });
    expect([ls.code, ls.stderr, ls.stdout]).toEqual([0, "", expect.stringContaining("no offload bundles found")]);
    expect(ls.stdout).not.toMatch(/malformed|offload binary/);
    expect(run(["sizes", "libstrings.so"], { cwd: dir }).stderr).toBe("");

    const fat = check(["--gpu=gfx90a", "libfatbin.so"], { cwd: dir });
    expect(fat.stderr).toBe("");
    expect(fat.code).toBe(0);
    // Issue 24 item 6: a bundle in .hip_fatbin is a fat binary, counted in the headline.
    expect(fat.stdout).toMatch(/^libfatbin\.so: embedded bundles, 1 device entry, 1 loadable on gfx90a; 1 of 1 fat binary OK; OK\n/);
    // In a directory, a library without device code is skipped, not failed.
    const tree = check(["--gpu=gfx90a", "."], { cwd: dir });
    expect(tree.code).toBe(0);
    expect(tree.stdout).toContain("./libfatbin.so: embedded bundles");
    expect(tree.stdout).not.toContain("libstrings.so");
  }, TIMEOUT);

  const libraries = [`${LIB}/libamdhip64.so.5`, `${LIB}/libamd_comgr.so.2`, "/usr/lib/llvm-19/lib/libclang-cpp.so.19.1", "/usr/lib/llvm-19/lib/libLLVM.so.19.1"];
  for (const library of libraries) it.skipIf(!existsSync(library))(`${library}: no device code, plainly (when installed)`, () => {
    const r = check(["--gpu=gfx90a", library]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(`${library}: no offload bundles or offload binaries\nFAIL: 1 of 1 inputs have no device code gfx90a can load\n`);
    const json = JSON.parse(check(["--gpu=gfx90a", "--json", library]).stdout);
    expect([json.inputs[0].kind, json.inputs[0].problems, json.inputs[0].error]).toEqual(["none", [], undefined]);
  }, TIMEOUT);

  it.skipIf(!existsSync("/usr/lib/llvm-19/lib/libLLVM.so.19.1"))("a directory of such libraries holds no offload files, and nothing fails on the way", () => {
    const r = check(["--gpu=gfx90a", "/usr/lib/llvm-19/lib"]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^\/usr\/lib\/llvm-19\/lib: no offload files\nFAIL: 1 of 1 inputs have no device code gfx90a can load \(\d+ other files skipped\)\n$/);
  }, TIMEOUT);
});

describe("issue 19 item 6: directory walks as find without -L", () => {
  function tree(): string {
    const dir = scratchDir("offload-kit-check-walk-");
    const top = join(dir, "tree");
    mkdirSync(join(top, "sub"), { recursive: true });
    mkdirSync(join(top, "locked"));
    mkdirSync(join(dir, "outside"));
    writeFileSync(join(top, "a.hipfb.1.1"), bundle([HOST, G("gfx90a")]));
    symlinkSync("a.hipfb.1.1", join(top, "a.hipfb.1"));
    symlinkSync("a.hipfb.1", join(top, "a.hipfb"));
    writeFileSync(join(top, "sub", "b.hipfb"), bundle([HOST, G("gfx90a:xnack-")]));
    writeFileSync(join(top, "locked", "c.hipfb"), bundle([HOST, G("gfx906")]));
    writeFileSync(join(dir, "outside", "d.hipfb"), bundle([HOST, G("gfx906")]));
    symlinkSync(".", join(top, "self"));
    symlinkSync("../outside", join(top, "elsewhere"));
    symlinkSync("missing", join(top, "dangling"));
    symlinkSync("loop2", join(top, "loop1"));
    symlinkSync("loop1", join(top, "loop2"));
    return dir;
  }

  it("counts a linked file once, under the first name met below the folder as typed, enters no linked folder, survives `ln -s . self`", () => {
    const dir = tree();
    const r = check(["--gpu=gfx90a:xnack-", "--json", "tree"], { cwd: dir });
    expect(r.stderr).toBe("");
    const report = JSON.parse(r.stdout);
    // tree/a.hipfb -> a.hipfb.1 -> a.hipfb.1.1: one file, named as first met (relative, as the folder was typed).
    expect(report.inputs.map((i: { path: string }) => i.path)).toEqual(["tree/a.hipfb", "tree/locked/c.hipfb", "tree/sub/b.hipfb"]);
    expect(report.unreadable).toEqual([]);
    expect(r.code).toBe(1);
    // A link named on the command line is followed, and keeps its name.
    const link = check(["--gpu=gfx90a", "tree/a.hipfb"], { cwd: dir });
    expect([link.code, link.stdout.split("\n")[0]]).toEqual([0, "tree/a.hipfb: bundle, 1 device entry, 1 loadable on gfx90a; OK"]);
    // So is a link to a folder named on the command line (as find -H does).
    const folder = check(["--gpu=gfx906", "tree/elsewhere"], { cwd: dir });
    expect([folder.code, folder.stdout.split("\n")[0]]).toEqual([0, "tree/elsewhere/d.hipfb: bundle, 1 device entry, 1 loadable on gfx906; OK"]);
  }, TIMEOUT);

  // Root reads every folder: the unreadable case runs the process as nobody, where that is possible.
  const setpriv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"];
  const asNobody = process.getuid?.() === 0 && spawnSync(setpriv[0]!, [...setpriv.slice(1), process.execPath, "-e", `require("fs").accessSync(${JSON.stringify(BIN)}, 4)`]).status === 0;

  it.skipIf(!asNobody)("reports an unreadable folder on stderr and in --json, skips it and goes on", () => {
    const dir = tree();
    chmodSync(dir, 0o755);
    chmodSync(join(dir, "tree/locked"), 0o000);
    writeFileSync(join(dir, "tree/sub/secret.hipfb"), bundle([HOST, G("gfx90a")]), { mode: 0o600 });
    const r = check(["--gpu=gfx90a:xnack-", "tree"], { cwd: dir, prefix: setpriv });
    expect(r.stderr).toBe("offload-kit check: error: 'tree/locked': Permission denied\noffload-kit check: error: 'tree/sub/secret.hipfb': Permission denied\n");
    expect(r.stdout).toContain("tree/a.hipfb: bundle, 1 device entry, 1 loadable on gfx90a:xnack-; OK\n");
    expect(r.stdout).toContain("tree/sub/b.hipfb: bundle");
    expect(r.stdout).toMatch(/FAIL: every input found has device code gfx90a:xnack- can load, but not every file could be read \(2 entries could not be read\)\n$/);
    expect(r.code).toBe(1);
    const json = JSON.parse(check(["--gpu=gfx90a:xnack-", "--json", "tree"], { cwd: dir, prefix: setpriv }).stdout);
    expect(json.unreadable).toEqual([
      { path: "tree/locked", code: "EACCES", message: "'tree/locked': Permission denied" },
      { path: "tree/sub/secret.hipfb", code: "EACCES", message: "'tree/sub/secret.hipfb': Permission denied" },
    ]);
    expect(json.inputs).toHaveLength(2);
    expect(json.ok).toBe(false);
  }, TIMEOUT);
});

describe("issue 19 item 7: xnack and sramecc", () => {
  it("passes a file when some variant loads whichever way the unstated feature is set", () => {
    const dir = scratchDir("offload-kit-check-xnack-");
    writeFileSync(join(dir, "both.hipfb"), bundle([HOST, G("gfx90a:xnack+"), G("gfx90a:xnack-"), G("gfx906")]));
    writeFileSync(join(dir, "plus.hipfb"), bundle([HOST, G("gfx90a:xnack+")]));
    expect(check(["--gpu=gfx90a", "both.hipfb"], { cwd: dir }).stdout).toBe(
      "both.hipfb: bundle, 3 device entries, loadable on gfx90a: 1 with xnack off (-), 1 with xnack on (+); OK\n" +
      "OK: every input has device code gfx90a can load, whichever way xnack is set\n",
    );
    const both = check(["-v", "--gpu=gfx90a", "both.hipfb"], { cwd: dir });
    expect(both.code).toBe(0);
    expect(both.stdout).toContain("both.hipfb: bundle, 3 device entries, loadable on gfx90a: 1 with xnack off (-), 1 with xnack on (+)\n");
    expect(both.stdout).toMatch(/hip-amdgcn-amd-amdhsa--gfx90a:xnack\+\s+1\s+\d+\s+\?\s+loads only with xnack on \(\+\); --gpu=gfx90a does not say how xnack is set\n/);
    expect(both.stdout).toContain("OK: every input has device code gfx90a can load, whichever way xnack is set\n");
    const plus = check(["--gpu=gfx90a", "plus.hipfb"], { cwd: dir });
    expect(plus.code).toBe(1);
    expect(plus.stdout).toContain("plus.hipfb: bundle, 1 device entry, loadable on gfx90a: 0 with xnack off (-), 1 with xnack on (+); FAIL (it holds gfx90a:xnack+)\n");
    // Stated settings, in every spelling.
    for (const gpu of ["gfx90a:xnack+", "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+"]) expect(check([`--gpu=${gpu}`, "plus.hipfb"], { cwd: dir }).code).toBe(0);
    for (const gpu of ["gfx90a:xnack-", "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"]) {
      const r = check([`--gpu=${gpu}`, "both.hipfb", "plus.hipfb"], { cwd: dir });
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(`FAIL: 1 of 2 inputs have no device code ${gpu} can load\n`);
    }
    const bad = check(["--gpu=amdgcn-amd-amdhsa--gfx90a:xnack", "both.hipfb"], { cwd: dir });
    // A usage error (its exit code is src/cli/kit/common.ts's usageError's, not a verdict's).
    expect(bad.code).not.toBe(0);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toMatch(/invalid GPU 'amdgcn-amd-amdhsa--gfx90a:xnack'/);
  }, TIMEOUT);

  const libraries = [`${LIB}/librocsparse.so.0`, `${LIB}/librocrand.so.1`];
  for (const library of libraries) it.skipIf(!existsSync(library))(`${library} ships both xnack variants of gfx90a: passes a bare gfx90a (when installed)`, () => {
    for (const gpu of ["gfx90a", "gfx90a:xnack-", "gfx90a:xnack+", "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"]) {
      const r = check([`--gpu=${gpu}`, library]);
      expect([gpu, r.code, r.stderr]).toEqual([gpu, 0, ""]);
    }
    expect(check(["--gpu=gfx90a", library]).stdout).toContain("OK: every input has device code gfx90a can load, whichever way xnack is set\n");
  }, TIMEOUT);
});

describe("issue 19 item 8: offload binaries", () => {
  it("checks the images of a file made by offload-packager", () => {
    const dir = scratchDir("offload-kit-check-packager-");
    writeFileSync(join(dir, "a.o"), "device code for gfx90a");
    writeFileSync(join(dir, "b.o"), "device code for gfx906");
    const packed = spawnSync(process.execPath, [PACKAGER, "-o", "images.bin",
      "--image=file=a.o,triple=amdgcn-amd-amdhsa,arch=gfx90a:xnack+,kind=openmp",
      "--image=file=b.o,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=openmp"], { cwd: dir, encoding: "utf8" });
    expect(packed.status, packed.stderr).toBe(0);
    const r = check(["--gpu=gfx90a:xnack+", "--verbose", "images.bin"], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^images\.bin: offload binary, 2 device entries, 1 loadable on gfx90a:xnack\+\n/);
    expect(r.stdout).toMatch(/\n {2}image 0\s+0x[0-9a-f]+\s+22\s+yes\s+openmp-amdgcn-amd-amdhsa--gfx90a:xnack\+\n {2}image 1\s+0x[0-9a-f]+\s+22\s+no\s+openmp-amdgcn-amd-amdhsa--gfx906\n/);
    expect(check(["--gpu=gfx90a:xnack-", "images.bin"], { cwd: dir }).code).toBe(1);
    // sizes sees the same two images.
    expect(JSON.parse(run(["sizes", "--json", "images.bin"], { cwd: dir }).stdout).files[0].images).toBe(2);
    const json = JSON.parse(check(["--gpu=gfx906", "--kind=openmp", "--json", "images.bin"], { cwd: dir }).stdout);
    expect(json.inputs[0].entries.map((e: { image: number; id: string; verdict: string }) => [e.image, e.id, e.verdict])).toEqual([
      [0, "openmp-amdgcn-amd-amdhsa--gfx90a:xnack+", "not-loadable"], [1, "openmp-amdgcn-amd-amdhsa--gfx906", "loadable"],
    ]);
  }, TIMEOUT);
});

describe("issue 19 item 9: summary per target, then the detail with bundle index and offset", () => {
  const APP = join(ROOT, "test/fixtures/hosts/app");

  it("on a host executable with three bundles, one compressed", () => {
    const summary = check(["--gpu=gfx90a", APP]);
    expect(summary.stdout).toBe(`${APP}: embedded bundles, 6 device entries, 3 loadable on gfx90a; 3 of 3 fat binaries OK; OK\nOK: every input has device code gfx90a can load\n`);
    const r = check(["--gpu=gfx90a", "-v", APP]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe([
      `${APP}: embedded bundles, 6 device entries, 3 loadable on gfx90a; 3 of 3 fat binaries OK`,
      "  TARGET                           ENTRIES  BYTES   LOADS  WHY",
      "  host-x86_64-unknown-linux--            3       0  -      host code (not device code)",
      "  hipv4-amdgcn-amd-amdhsa--gfx906        3   9,064  no     processor 'gfx906' is not 'gfx90a'",
      "  hipv4-amdgcn-amd-amdhsa--gfx90a        3  12,192  yes    built for any sramecc and any xnack",
      "  FROM      OFFSET         SIZE  LOADS  ENTRY",
      "  bundle 0         0x2000     0  -      host-x86_64-unknown-linux--",
      "  bundle 0         0x2000  3008  no     hipv4-amdgcn-amd-amdhsa--gfx906",
      "  bundle 0         0x3000  4064  yes    hipv4-amdgcn-amd-amdhsa--gfx90a",
      "  bundle 1         0x5000     0  -      host-x86_64-unknown-linux--",
      "  bundle 1         0x5000  3024  no     hipv4-amdgcn-amd-amdhsa--gfx906",
      "  bundle 1         0x6000  4064  yes    hipv4-amdgcn-amd-amdhsa--gfx90a",
      "  bundle 2  0x7000+0x1000     0  -      host-x86_64-unknown-linux--",
      "  bundle 2  0x7000+0x1000  3032  no     hipv4-amdgcn-amd-amdhsa--gfx906",
      "  bundle 2  0x7000+0x2000  4064  yes    hipv4-amdgcn-amd-amdhsa--gfx90a",
      // Issue 24 item 6: each fat binary, where it starts (a compressed one: the CCOB) and its translation unit.
      "  FAT BINARY    OFFSET  FROM                           OK   WHY",
      "  fat binary 0  0x1000  a.hip, __hip_fatbin_wrapper 0  yes  1 loadable",
      "  fat binary 1  0x4000  b.hip, __hip_fatbin_wrapper 1  yes  1 loadable",
      "  fat binary 2  0x7000  c.hip, __hip_fatbin_wrapper 2  yes  1 loadable",
      "OK: every input has device code gfx90a can load",
      "",
    ].join("\n"));
    const json = JSON.parse(check(["--gpu=gfx90a", "--json", APP]).stdout);
    expect(json.inputs[0].targets).toEqual([
      { id: "host-x86_64-unknown-linux--", entries: 3, bytes: 0, verdict: "host", message: "host code (not device code)" },
      { id: "hipv4-amdgcn-amd-amdhsa--gfx906", entries: 3, bytes: 9064, verdict: "not-loadable", reason: "processor-mismatch", message: "processor 'gfx906' is not 'gfx90a'" },
      { id: "hipv4-amdgcn-amd-amdhsa--gfx90a", entries: 3, bytes: 12192, verdict: "loadable", reason: "any-features", message: "built for any sramecc and any xnack" },
    ]);
    expect(json.inputs[0].entries[8]).toEqual({
      bundle: 2, offset: 0x2000, compressedAt: 0x7000, id: "hipv4-amdgcn-amd-amdhsa--gfx90a", size: 4064,
      verdict: "loadable", reason: "any-features", message: "built for any sramecc and any xnack",
    });
  }, TIMEOUT);

  it.skipIf(!existsSync(`${LIB}/librocsparse.so.0`))("on librocsparse0: 8 summary rows before 888 detail rows (when installed)", () => {
    // Issue 27 item 4: without -v, one line and the verdict.
    expect(check(["--gpu=gfx90a", `${LIB}/librocsparse.so.0`]).stdout.split("\n")).toHaveLength(3);
    const lines = check(["--gpu=gfx90a", "-v", `${LIB}/librocsparse.so.0`]).stdout.split("\n");
    expect(lines[1]).toMatch(/^ {2}TARGET\s+ENTRIES\s+BYTES\s+LOADS\s+WHY$/);
    expect(lines[10]).toMatch(/^ {2}FROM\s+OFFSET\s+SIZE\s+LOADS\s+ENTRY$/);
    expect(lines.slice(2, 10).every((l) => /^ {2}\S+\s+111\s/.test(l))).toBe(true);
    expect(lines[11 + 887]).toMatch(/^ {2}bundle 110\s+0x[0-9a-f]+\s+\d+\s+\?\s+hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-$/);
    const json = JSON.parse(check(["--gpu=gfx90a", "--json", `${LIB}/librocsparse.so.0`]).stdout);
    expect(json.inputs[0].targets).toHaveLength(8);
    expect(new Set(json.inputs[0].entries.map((e: { bundle: number }) => e.bundle)).size).toBe(111);
  }, TIMEOUT);
});

describe("issue 19 item 11: per-file errors on stderr", () => {
  it("names a missing file once, on stderr, and a damaged one with where", () => {
    const dir = scratchDir("offload-kit-check-errors-");
    const damaged = bundle([HOST, G("gfx90a")]);
    // The first entry's ID length runs far past the end.
    new DataView(damaged.buffer).setBigUint64(8 + 8 + 16, 1n << 40n, true);
    writeFileSync(join(dir, "damaged.hipfb"), damaged);
    const r = check(["--gpu=gfx90a", "nope.a", "damaged.hipfb"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("FAIL: 2 of 2 inputs have no device code gfx90a can load\n");
    expect(r.stderr).toMatch(/^offload-kit check: error: 'nope\.a': No such file or directory\noffload-kit check: error: damaged\.hipfb: at 0x0: malformed bundle header: .+\n$/);
  }, TIMEOUT);

  it("names a path that cannot be looked at (under a file, a loop of links) as ls does, not as an internal error", () => {
    const dir = scratchDir("offload-kit-check-unstat-");
    writeFileSync(join(dir, "plain"), "not a folder");
    symlinkSync("loop2", join(dir, "loop1"));
    symlinkSync("loop1", join(dir, "loop2"));
    const r = check(["--gpu=gfx90a", "plain/x.hipfb", "loop1"], { cwd: dir });
    expect(r.stderr).toBe("offload-kit check: error: 'plain/x.hipfb': Not a directory\noffload-kit check: error: 'loop1': Too many levels of symbolic links\n");
    expect(r.stdout).toBe("FAIL: 2 of 2 inputs have no device code gfx90a can load\n");
    expect(r.code).toBe(1);
    // The same words as ls, whose open reports them.
    const ls = run(["ls", "plain/x.hipfb", "loop1"], { cwd: dir });
    expect(ls.stderr).toBe("offload-kit ls: error: 'plain/x.hipfb': Not a directory\noffload-kit ls: error: 'loop1': Too many levels of symbolic links\n");
  }, TIMEOUT);
});
