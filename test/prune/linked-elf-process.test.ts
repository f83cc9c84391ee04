// `offload-kit prune|compress|decompress` on linked HIP programs, run as whole processes of
// dist/bin/offload-kit.js: programs built with clang-19 (test/elf-edit/standin.ts, the same builds as the
// ELF editor's own tests) and, where installed, Debian's librocrand1 and librocsparse0. The stand-in HIP
// runtime preloaded ahead of libamdhip64 records what each output's constructors register: the same
// number of fat binaries as the original, each with exactly the expected entries, byte-identical (it
// hashes every payload, decoding CCOBs with libzstd).
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { transformWith } from "../../src/prune/index.js";
import { CASES, Workshop, keepEntries, standinTools } from "../elf-edit/standin.js";
import { HANG_MS } from "../limits.js";

const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;
const available = standinTools();
const required = process.env.OFFLOAD_KIT_REQUIRE_NATIVE === "1";
/** What --keep=gfx90a keeps (src/prune/select.ts: any gfx90a, whatever its features; host entries always). */
const keep90a = (id: string): boolean => id.startsWith("host-") || /--gfx90a(:|$)/.test(id);

function kit(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: HANG_MS, maxBuffer: 1 << 28 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function ok(...args: string[]): string {
  const r = kit(...args);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return r.stdout;
}

const fatbins = (log: string): number => log.match(/^fatbin /gm)?.length ?? 0;
/** The log as `compress` leaves it: every fat binary a CCOB (v`version`, zstd), entries unchanged. */
const asCompressed = (log: string, version: number): string => log.replace(/^(fatbin \d+) bundle$/gm, `$1 ccob v${version} method 1`);
/** The log as `decompress` leaves it: every fat binary plain. */
const asPlain = (log: string): string => log.replace(/^(fatbin \d+) ccob v\d+ method \d+$/gm, "$1 bundle");

describe.skipIf(!available)("offload-kit prune/compress/decompress on linked HIP programs (stand-in runtime)", () => {
  let shop: Workshop;
  beforeAll(() => {
    shop = new Workshop();
  }, HANG_MS);
  afterAll(() => shop?.remove());

  // A library with one plain and one compressed fat binary (GNU ld), an -fgpu-rdc PIE executable (lld),
  // and a non-PIE executable with a CCOB.
  const chosen = [CASES[4], CASES[6], CASES[7]];

  it.each(chosen.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const tag = c.name.replace(/[^a-z0-9]+/gi, "-");
    const original = shop.program(c, tag);
    const before = shop.registrations(original, c.executable);
    expect(fatbins(before)).toBeGreaterThan(0);
    expect(before).toMatch(/^ {2}entry hipv4-amdgcn-amd-amdhsa--gfx906 /m);

    // prune: dry run first (its size is the real output's), then the file; CCOB fat binaries are pruned too.
    const dry = JSON.parse(ok("prune", "--keep=gfx90a", "--dry-run", "--json", original));
    const pruned = `${original}.pruned`;
    ok("prune", "--keep=gfx90a", original, "-o", pruned);
    expect(statSync(pruned).size).toBe(dry.files[0].outputSize);
    expect(dry.files[0].saved).toBeGreaterThan(0);
    expect(statSync(pruned).mode).toBe(statSync(original).mode);
    const prunedLog = shop.registrations(pruned, c.executable);
    expect(fatbins(prunedLog)).toBe(fatbins(before));
    expect(prunedLog).toBe(keepEntries(before, keep90a, true));
    expect(prunedLog).not.toMatch(/gfx906|gfx1100/);

    // compress (v2 and v3) and decompress back: the same entries, byte for byte.
    for (const version of [2, 3]) {
      const compressed = `${original}.v${version}`;
      ok("compress", `--format=${version}`, original, "-o", compressed);
      const log = shop.registrations(compressed, c.executable);
      // Fat binaries compressed already stay as they were.
      expect(log).toBe(asCompressed(before, version));
      expect(log).not.toMatch(/^fatbin \d+ bundle$/m);
      expect(asPlain(log)).toBe(asPlain(before));
      expect(statSync(compressed).size).toBeLessThan(statSync(original).size);
      const plain = `${compressed}.plain`;
      ok("decompress", compressed, "-o", plain);
      const back = shop.registrations(plain, c.executable);
      expect(fatbins(back)).toBe(fatbins(before));
      expect(back).toBe(asPlain(before));
    }

    // The empty-bundle rule: dropping every GPU fails naming the fat binary and writes nothing, unless allowed.
    const empty = `${original}.empty`;
    const everyGpu = "--drop=gfx906,gfx90a,gfx1100";
    const refused = kit("prune", everyGpu, original, "-o", empty);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/\(fat binary 0\): .* keeps none of the bundle's device entries/);
    expect(existsSync(empty)).toBe(false);
    ok("prune", everyGpu, "--allow-empty", original, "-o", empty);
    const emptyLog = shop.registrations(empty, c.executable);
    expect(fatbins(emptyLog)).toBe(fatbins(before));
    expect(emptyLog).toBe(keepEntries(before, (id) => id.startsWith("host-"), true));

    // --in-place gives what -o gave.
    const inPlace = `${original}.in-place`;
    copyFileSync(original, inPlace);
    ok("prune", "--keep=gfx90a", "--in-place", inPlace);
    expect(Buffer.compare(readFileSync(inPlace), readFileSync(pruned))).toBe(0);
  }, HANG_MS);

  // compress spools the compressed fat binaries into a temporary folder (src/compress/node/compress-spool.ts): a dry
  // run and a real one agree on the size, the output is what the in-memory path makes, and nothing is left.
  it("compress leaves no temporary file, and its dry run, its output and the in-memory path agree", () => {
    const c = CASES[4];
    const original = shop.program(c, "spool");
    const tmp = join(shop.dir, "private-tmp");
    mkdirSync(tmp, { recursive: true });
    const env = { ...process.env, TMPDIR: tmp };
    const run = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: HANG_MS, env });
    const dry = run("compress", "--dry-run", "--json", original);
    expect(dry.stderr).toBe("");
    const compressed = `${original}.compressed`;
    const real = run("compress", original, "-o", compressed);
    expect(real.stderr).toBe("");
    expect(real.status).toBe(0);
    expect(statSync(compressed).size).toBe(JSON.parse(dry.stdout).files[0].outputSize);
    // Node 24 may keep its compile cache in TMPDIR; only our own folders count.
    expect(readdirSync(tmp).filter((name) => name.startsWith("offload-kit-"))).toEqual([]);
    const inMemory = transformWith(readFileSync(original), { codecs: nodeCodecs }, "compress");
    expect(Buffer.compare(readFileSync(compressed), inMemory.output)).toBe(0);
  }, HANG_MS);
});

const LIBRARIES = ["/usr/lib/x86_64-linux-gnu/librocrand.so.1.1", "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1"];

describe.skipIf(!available)("Debian ROCm libraries through offload-kit (stand-in runtime)", () => {
  let shop: Workshop;
  let scratch: string;
  beforeAll(() => {
    shop = new Workshop();
    scratch = existsSync("/dev/shm") ? "/dev/shm" : shop.dir;
  }, HANG_MS);
  afterAll(() => shop?.remove());

  it.each(LIBRARIES)("prune --keep=gfx90a: %s", (library) => {
    if (!existsSync(library)) {
      if (required) throw new Error(`${library} is required (OFFLOAD_KIT_REQUIRE_NATIVE=1)`);
      return;
    }
    const output = join(scratch, `offload-kit-${process.pid}-pruned.so`);
    try {
      const report = JSON.parse(ok("prune", "--keep=gfx90a", "--json", library, "-o", output));
      expect(statSync(output).size).toBe(report.files[0].outputSize);
      const dropped = report.files[0].entries.filter((e: { kept: boolean }) => !e.kept).reduce((n: number, e: { size: number }) => n + e.size, 0);
      // Page rounding and the payload alignment cost a little; at least 95% of the dropped bytes leave the file.
      expect(report.files[0].saved).toBeGreaterThanOrEqual(0.95 * dropped);
      const before = shop.registrations(library, false);
      const after = shop.registrations(output, false);
      expect(fatbins(after)).toBe(fatbins(before));
      expect(after).toBe(keepEntries(before, keep90a, true));
    } finally {
      rmSync(output, { force: true });
    }
  }, HANG_MS);

  it.each(LIBRARIES)("compress, then decompress: %s", (library) => {
    if (!existsSync(library)) {
      if (required) throw new Error(`${library} is required (OFFLOAD_KIT_REQUIRE_NATIVE=1)`);
      return;
    }
    const compressed = join(scratch, `offload-kit-${process.pid}-compressed.so`);
    const plain = join(scratch, `offload-kit-${process.pid}-plain.so`);
    try {
      ok("compress", library, "-o", compressed);
      expect(statSync(compressed).size).toBeLessThan(statSync(library).size);
      const before = shop.registrations(library, false);
      const log = shop.registrations(compressed, false);
      expect(log).toBe(asCompressed(before, 2));
      ok("decompress", compressed, "-o", plain);
      expect(shop.registrations(plain, false)).toBe(asPlain(before));
    } finally {
      rmSync(compressed, { force: true });
      rmSync(plain, { force: true });
    }
  }, HANG_MS);
});

/** The stand-in's hash of a payload (FNV-1a 64, test/fixtures/hip-standin/standin.c). */
function fnv1a(bytes: Uint8Array): string {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, "0");
}

/** The lines of `after` that differ from `before` (the same number of lines), as [before, after] pairs. */
function changedLines(before: string, after: string): [string, string][] {
  const a = before.split("\n");
  const b = after.split("\n");
  expect(b.length).toBe(a.length);
  return a.flatMap((line, i): [string, string][] => (line === b[i] ? [] : [[line, b[i]]]));
}

describe.skipIf(!available)("offload-kit replace (stand-in runtime)", () => {
  let shop: Workshop;
  beforeAll(() => {
    shop = new Workshop();
  }, HANG_MS);
  afterAll(() => shop?.remove());

  it.each([CASES[4], CASES[7]].map((c) => [c.name, c] as const))("one code object swapped, plain and CCOB fat binaries: %s", (_name, c) => {
    const tag = `replace-${c.name.replace(/[^a-z0-9]+/gi, "-")}`;
    const original = shop.program(c, tag);
    const before = shop.registrations(original, c.executable);
    const id = "hipv4-amdgcn-amd-amdhsa--gfx90a";
    const count = fatbins(before);
    expect(count).toBeGreaterThan(1);
    // Without --bundle the entry is in every fat binary: refused, nothing written.
    const ambiguous = kit("replace", `--entry=${id}`, `--with=${original}`, original, "-o", `${original}.x`);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain("give --bundle=N");
    expect(existsSync(`${original}.x`)).toBe(false);
    for (let n = 0; n < count; n++) {
      // Larger than any fat binary (.hip_fatbin moves to a new PT_LOAD at the end), and small.
      for (const size of [300_000, 1000]) {
        const payload = new Uint8Array(size).map((_, i) => (i * 7 + n + size) & 0xff);
        const code = join(shop.dir, `${tag}-${n}-${size}.co`);
        writeFileSync(code, payload);
        const output = `${original}.replaced-${n}-${size}`;
        ok("replace", `--entry=${id}`, `--bundle=${n}`, `--with=${code}`, original, "-o", output);
        const after = shop.registrations(output, c.executable);
        const changed = changedLines(before, after);
        expect(changed).toHaveLength(1);
        expect(changed[0][0]).toMatch(new RegExp(`^ {2}entry ${id} \\d+ [0-9a-f]{16}$`));
        expect(changed[0][1]).toBe(`  entry ${id} ${size} ${fnv1a(payload)}`);
      }
    }
  }, HANG_MS);

  it("a bundle file", () => {
    const dir = shop.dir;
    const bundle = join(dir, "kernels.bundle");
    const host = new Uint8Array(0);
    writeFileSync(bundle, writeBinaryBundle([{ id: "host-x86_64-unknown-linux-gnu-", data: host }, { id: "hip-amdgcn-amd-amdhsa--gfx90a", data: new Uint8Array(5000).fill(1) }, { id: "hip-amdgcn-amd-amdhsa--gfx1100", data: new Uint8Array(3000).fill(2) }], 4096));
    const code = join(dir, "new.co");
    writeFileSync(code, new Uint8Array(7000).fill(3));
    ok("replace", "--entry=hip-amdgcn-amd-amdhsa--gfx90a", `--with=${code}`, bundle, "-o", `${bundle}.out`);
    const out = new Uint8Array(readFileSync(`${bundle}.out`));
    expect(Buffer.compare(out, writeBinaryBundle([{ id: "host-x86_64-unknown-linux-gnu-", data: host }, { id: "hip-amdgcn-amd-amdhsa--gfx90a", data: new Uint8Array(7000).fill(3) }, { id: "hip-amdgcn-amd-amdhsa--gfx1100", data: new Uint8Array(3000).fill(2) }], 4096))).toBe(0);
    const missing = kit("replace", "--entry=hip-amdgcn-amd-amdhsa--gfx906", `--with=${code}`, bundle, "--dry-run");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no entry 'hip-amdgcn-amd-amdhsa--gfx906'");
  });
});
