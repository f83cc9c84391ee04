// `offload-kit prune`, `compress` and `decompress` as whole processes (the built CLI): what --dry-run and
// --json say, where outputs go, --in-place keeping the mode, and bad input leaving every file as it was.
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseBinaryBundle, writeBinaryBundle } from "../../src/formats/bundle.js";
import { isCompressedBundle } from "../../src/formats/ccob.js";
import { scratchDir } from "./harness.js";
import { HANG_MS } from "../limits.js";

const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;
const FIXTURES = new URL("../fixtures/", import.meta.url).pathname;
const HOST = "host-x86_64-unknown-linux-gnu-";
const G90A = "hip-amdgcn-amd-amdhsa--gfx90a:xnack-";
const G906 = "hip-amdgcn-amd-amdhsa--gfx906";
const G1100 = "hip-amdgcn-amd-amdhsa--gfx1100";
const enc = (text: string) => new TextEncoder().encode(text);

const ENTRIES = [
  { id: HOST, data: enc("host") },
  { id: G906, data: enc("x".repeat(5000)) },
  { id: G90A, data: enc("y".repeat(3000)) },
  { id: G1100, data: enc("z".repeat(2000)) },
];

function kit(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: "utf8", timeout: HANG_MS });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A folder with `lib.bundle` (align 4096) and `other.bundle`. */
function workdir(): string {
  const dir = scratchDir("offload-kit-prune-cli-");
  writeFileSync(join(dir, "lib.bundle"), writeBinaryBundle(ENTRIES, 4096));
  writeFileSync(join(dir, "other.bundle"), writeBinaryBundle([ENTRIES[0], ENTRIES[2], ENTRIES[3]], 1));
  return dir;
}

function listing(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).sort().map((f) => [f, readFileSync(join(dir, f)).toString("base64")]));
}

describe("offload-kit prune", () => {
  it("reads a pipe as any command does (spooled), and refuses one for --in-place", () => {
    const dir = workdir();
    const piped = spawnSync("bash", ["-c", `'${process.execPath}' '${BIN}' prune --keep=gfx90a -o piped.bundle <(cat lib.bundle) && '${process.execPath}' '${BIN}' prune --keep=gfx90a -o direct.bundle lib.bundle`], { cwd: dir, encoding: "utf8", timeout: HANG_MS });
    expect([piped.status, piped.stderr]).toEqual([0, ""]);
    expect(readFileSync(join(dir, "piped.bundle"))).toEqual(readFileSync(join(dir, "direct.bundle")));
    const inPlace = spawnSync("bash", ["-c", `'${process.execPath}' '${BIN}' prune --keep=gfx90a --in-place <(cat lib.bundle)`], { cwd: dir, encoding: "utf8", timeout: HANG_MS });
    expect(inPlace.status).toBe(1);
    expect(inPlace.stderr).toMatch(/not a regular file \(--in-place replaces a file\)/);
  });

  it("--dry-run says what would go and the bytes saved, and writes nothing: one line per file and a total; entries under -v", () => {
    const dir = workdir();
    const before = listing(dir);
    const size = writeBinaryBundle(ENTRIES, 4096).length;
    const after = writeBinaryBundle([ENTRIES[0], ENTRIES[2]], 4096).length;
    const otherSize = writeBinaryBundle([ENTRIES[0], ENTRIES[2], ENTRIES[3]], 1).length;
    const otherAfter = writeBinaryBundle([ENTRIES[0], ENTRIES[2]], 1).length;
    const summary = kit(dir, "prune", "--keep=gfx90a", "--dry-run", "lib.bundle", "other.bundle");
    expect([summary.code, summary.stderr]).toEqual([0, ""]);
    const saved = size - after + otherSize - otherAfter;
    expect(summary.stdout).toBe(
      `lib.bundle: bundle (4 entries: host, gfx906, gfx90a:xnack-, gfx1100), ${size} -> ${after} bytes, would save ${size - after} (${(100 * (size - after) / size).toFixed(1)}%); would drop gfx906, gfx1100\n` +
      `other.bundle: bundle (3 entries: host, gfx90a:xnack-, gfx1100), ${otherSize} -> ${otherAfter} bytes, would save ${otherSize - otherAfter} (${(100 * (otherSize - otherAfter) / otherSize).toFixed(1)}%); would drop gfx1100\n` +
      `total: 2 files, 2 would change, ${size + otherSize} -> ${after + otherAfter} bytes, would save ${saved} (${(100 * saved / (size + otherSize)).toFixed(1)}%)\n` +
      "  code that would be dropped, by GPU: gfx906 1 entry 5000 bytes; gfx1100 2 entries 4000 bytes\n");
    const run = kit(dir, "prune", "--keep=gfx90a", "--dry-run", "-v", "lib.bundle", "other.bundle");
    expect([run.code, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toContain(`lib.bundle: bundle (4 entries: host, gfx906, gfx90a:xnack-, gfx1100), ${size} -> ${after} bytes, would save ${size - after}`);
    expect(run.stdout).toMatch(/would drop +hip-amdgcn-amd-amdhsa--gfx906 +5000 bytes/);
    expect(run.stdout).toMatch(/kept +hip-amdgcn-amd-amdhsa--gfx90a:xnack- +3000 bytes/);
    expect(run.stdout).toMatch(/host +host-x86_64-unknown-linux-gnu- +4 bytes/);
    expect(listing(dir)).toEqual(before);
  });

  it("--json reports every entry and the sizes", () => {
    const dir = workdir();
    const run = kit(dir, "prune", "--drop=gfx1100,gfx906", "--dry-run", "--json", "lib.bundle");
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.selection).toEqual({ mode: "drop", gpus: ["gfx1100", "gfx906"] });
    const file = report.files[0];
    expect(file).toMatchObject({ input: "lib.bundle", output: null, container: "bundle", changed: true, inputSize: writeBinaryBundle(ENTRIES, 4096).length, droppedBytes: 7000 });
    expect(file.saved).toBe(file.inputSize - file.outputSize);
    expect(file.entries.map((e: { id: string; kept: boolean; matched: string[] }) => [e.id, e.kept, e.matched])).toEqual([
      [HOST, true, []], [G906, false, ["gfx906"]], [G90A, true, []], [G1100, false, ["gfx1100"]],
    ]);
  });

  it("-o and --out-dir write what the bundler would write for the kept entries", () => {
    const dir = workdir();
    expect(kit(dir, "prune", "--keep=gfx1100", "lib.bundle", "-o", "small.bundle").code).toBe(0);
    expect(new Uint8Array(readFileSync(join(dir, "small.bundle")))).toEqual(writeBinaryBundle([ENTRIES[0], ENTRIES[3]], 4096));
    const run = kit(dir, "prune", "--keep=gfx1100", "--out-dir=.", "lib.bundle");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("is the input itself (use --in-place to replace it)");
  });

  it("-o - writes the output to stdout and the report to stderr", () => {
    const dir = workdir();
    const r = spawnSync(process.execPath, [BIN, "prune", "--keep=gfx1100", "lib.bundle", "-o", "-"], { cwd: dir, timeout: HANG_MS });
    expect(r.status).toBe(0);
    expect(new Uint8Array(r.stdout)).toEqual(writeBinaryBundle([ENTRIES[0], ENTRIES[3]], 4096));
    expect(r.stderr.toString()).toContain("lib.bundle: bundle (4 entries: ");
  });

  it("--in-place replaces each input, keeping its mode", () => {
    const dir = workdir();
    chmodSync(join(dir, "lib.bundle"), 0o750);
    const run = kit(dir, "prune", "--keep=gfx90a", "--in-place", "lib.bundle", "other.bundle");
    expect([run.code, run.stderr]).toEqual([0, ""]);
    expect(parseBinaryBundle(new Uint8Array(readFileSync(join(dir, "lib.bundle")))).map((e) => e.id)).toEqual([HOST, G90A]);
    expect(parseBinaryBundle(new Uint8Array(readFileSync(join(dir, "other.bundle")))).map((e) => e.id)).toEqual([HOST, G90A]);
    expect(statSync(join(dir, "lib.bundle")).mode & 0o777).toBe(0o750);
    expect(readdirSync(dir).sort()).toEqual(["lib.bundle", "other.bundle"]);
  });

  it("a failure in any input leaves every file byte-identical and no temporary file behind", () => {
    const dir = workdir();
    writeFileSync(join(dir, "cut.bundle"), writeBinaryBundle(ENTRIES, 1).subarray(0, 100));
    const before = listing(dir);
    const run = kit(dir, "prune", "--keep=gfx90a", "--in-place", "lib.bundle", "cut.bundle");
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/error: cut\.bundle: (truncated|malformed) bundle header: .*offset \d+/);
    expect(listing(dir)).toEqual(before);
  });

  it("a bundle left with no device code is an error naming it, unless --allow-empty", () => {
    const dir = workdir();
    const before = listing(dir);
    // -o with --out-dir is a usage error (status 2), refused before anything is read.
    const run = kit(dir, "prune", "--keep=gfx906", "--out-dir=.", "other.bundle", "-o", "x");
    expect(run.code).toBe(2);
    const empty = kit(dir, "prune", "--keep=gfx906", "--in-place", "lib.bundle", "other.bundle");
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain("other.bundle: --keep=gfx906 keeps none of the bundle's device entries (hip-amdgcn-amd-amdhsa--gfx90a:xnack-, hip-amdgcn-amd-amdhsa--gfx1100)");
    expect(listing(dir)).toEqual(before);
    mkdirSync(join(dir, "out"));
    expect(kit(dir, "prune", "--keep=gfx906", "--allow-empty", "--out-dir=out", "lib.bundle", "other.bundle").code).toBe(0);
    expect(parseBinaryBundle(new Uint8Array(readFileSync(join(dir, "out", "other.bundle")))).map((e) => e.id)).toEqual([HOST]);
  });

  it("a keep or drop list that matches nothing is an error, and nothing is written", () => {
    const dir = workdir();
    const before = listing(dir);
    const keep = kit(dir, "prune", "--keep=gfx942", "--allow-empty", "--in-place", "lib.bundle", "other.bundle");
    expect(keep.code).toBe(1);
    expect(keep.stderr).toContain("--keep=gfx942 matches no entry in any of the 2 inputs; nothing was written");
    const drop = kit(dir, "prune", "--drop=sm_80", "--in-place", "lib.bundle");
    expect(drop.stderr).toContain("--drop=sm_80 matches no entry in lib.bundle");
    expect(listing(dir)).toEqual(before);
    const partly = kit(dir, "prune", "--keep=gfx90a,gfx942", "--dry-run", "lib.bundle");
    expect(partly.code).toBe(0);
    expect(partly.stderr).toContain("warning: --keep: no entry in the inputs is for gfx942");
  });

  it("usage errors and missing folders are refused before anything is read", () => {
    const dir = workdir();
    expect(kit(dir, "prune", "--keep=gfx90a", "lib.bundle", "other.bundle", "-o", "x").stderr).toContain("-o names one output, but 2 inputs were given");
    expect(kit(dir, "prune", "--keep=gfx90a", "--drop=gfx906", "lib.bundle", "-o", "x").stderr).toContain("give exactly one of --keep=GPU,... and --drop=GPU,...");
    expect(kit(dir, "prune", "--keep=gfx90a", "lib.bundle").stderr).toContain("say where the output goes");
    expect(kit(dir, "prune", "--keep=gfx90a", "--out-dir=missing", "lib.bundle").stderr).toContain("'missing': No such file or directory");
    expect(kit(dir, "prune", "--keep=gfx9x", "--dry-run", "lib.bundle").stderr).toContain("invalid GPU 'gfx9x'");
    expect(readdirSync(dir).sort()).toEqual(["lib.bundle", "other.bundle"]);
  });

  it("linked ELF files: the dry run's size is the written file's", () => {
    const dir = workdir();
    copyFileSync(join(FIXTURES, "hosts/app"), join(dir, "app"));
    const dry = kit(dir, "prune", "--keep=gfx90a", "--dry-run", "--json", "app");
    expect(dry.code).toBe(0);
    const planned = JSON.parse(dry.stdout).files[0];
    expect(planned.container).toBe("linked ELF");
    expect(planned.saved).toBeGreaterThan(0);
    expect(kit(dir, "prune", "--keep=gfx90a", "app", "-o", "app.pruned").code).toBe(0);
    expect(statSync(join(dir, "app.pruned")).size).toBe(planned.outputSize);
    expect(statSync(join(dir, "app.pruned")).mode).toBe(statSync(join(dir, "app")).mode);
    for (const command of ["compress", "decompress"]) expect(kit(dir, command, "--dry-run", "app").code).toBe(0);
  });

  it("fat objects and archives through the CLI", () => {
    const dir = workdir();
    copyFileSync(join(FIXTURES, "hosts/libboth.a"), join(dir, "libboth.a"));
    const run = kit(dir, "prune", "--keep=gfx906", "--json", "libboth.a", "-o", "lib906.a");
    expect(run.code).toBe(0);
    const file = JSON.parse(run.stdout).files[0];
    expect(file.container).toBe("archive");
    expect(file.entries.filter((e: { kept: boolean }) => !e.kept).map((e: { where: string; id: string }) => [e.where, e.id])).toEqual([["member fat.o", "hip-amdgcn-amd-amdhsa--gfx90a"]]);
    expect(statSync(join(dir, "lib906.a")).size).toBe(file.outputSize);
  });
});

describe("offload-kit compress / decompress", () => {
  it("round-trips a bundle in place and says what it did", () => {
    const dir = workdir();
    const original = readFileSync(join(dir, "lib.bundle"));
    const c = kit(dir, "compress", "--in-place", "lib.bundle");
    expect([c.code, c.stderr]).toEqual([0, ""]);
    expect(c.stdout).toMatch(/^lib\.bundle: bundle, \d+ -> \d+ bytes, saves \d+ .*\(in place\)\n$/);
    expect(isCompressedBundle(new Uint8Array(readFileSync(join(dir, "lib.bundle"))))).toBe(true);
    expect(kit(dir, "compress", "--in-place", "lib.bundle").stdout).toMatch(/^lib\.bundle: bundle, \d+ bytes, unchanged\n$/);
    expect(kit(dir, "decompress", "--in-place", "lib.bundle").code).toBe(0);
    expect(readFileSync(join(dir, "lib.bundle"))).toEqual(original);
  });

  it("--format picks the CCOB version and refuses others", () => {
    const dir = workdir();
    expect(kit(dir, "compress", "--format=3", "--level=5", "lib.bundle", "-o", "v3.ccob").code).toBe(0);
    expect(readFileSync(join(dir, "v3.ccob")).readUInt16LE(4)).toBe(3);
    expect(kit(dir, "compress", "--format=4", "lib.bundle", "-o", "v4.ccob").stderr).toContain("--format must be 2");
    expect(kit(dir, "compress", "--level=high", "lib.bundle", "-o", "x.ccob").stderr).toContain("--level must be an integer");
    expect(kit(dir, "compress", "--dry-run", "--json", "lib.bundle").stdout).toContain('"operation": "compress"');
  });
});
