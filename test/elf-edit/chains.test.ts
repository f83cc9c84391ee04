// Editing an edited file: random chains of 2-5 edits (prune with random keep-sets, compress at random
// levels, decompress, replace of one code object) run as whole processes over the nine clang-19 HIP
// programs and Debian's librocrand (librocsparse: a prune chain), each output the next edit's input.
// After every edit the output must pass `offload-kit verify`, load under the stand-in HIP runtime and register exactly what the
// edits so far promise (entries by ID, size and hash; compression aside), eu-elflint --gnu-ld and
// llvm-readelf must report nothing the original did not, and a chain of prunes must give the very bytes
// of one prune to the kept GPUs from the original. At each chain's end GNU strip, eu-strip and
// llvm-strip must still work and the stripped file register the same. The chains come from a seeded
// generator (OFFLOAD_KIT_CHAIN_SEED to try others; the seed is in every failure's message).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CASES, Workshop, keepEntries, run, standinTools } from "./standin.js";
import { HANG_MS } from "../limits.js";
import { rng } from "../engines.js";

const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;
const SEED = Number(process.env.OFFLOAD_KIT_CHAIN_SEED ?? 24);
const CHAINS_PER_PROGRAM = 2;
const ROCRAND = "/usr/lib/x86_64-linux-gnu/librocrand.so.1.1";
const ROCSPARSE = "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1";
const required = process.env.OFFLOAD_KIT_REQUIRE_NATIVE === "1";
const tools = standinTools() && ["eu-strip", "strip", "llvm-strip-19", "eu-elflint"].every((t) => run("which", [t]).status === 0);

/** The processor of an entry ID (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-` is gfx90a); undefined for the host. */
function processorOf(id: string): string | undefined {
  const m = /--(gfx[0-9a-f]+)/.exec(id);
  return m?.[1];
}

/** The registration log without what compression changes (the fat binary's format line). */
function normalize(log: string): string {
  return log.replace(/^fatbin (\d+) (?:bundle|ccob v\d+ method \d+)$/gm, "fatbin $1");
}

/** Diagnostics a checker prints, with the file name taken out (so original and output compare). */
function diagnostics(text: string, file: string): string[] {
  return [...new Set(text.split("\n").map((l) => l.split(file).join("FILE").trim()).filter((l) => l !== ""))].sort();
}

function kit(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: HANG_MS, maxBuffer: 1 << 28 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Program {
  readonly name: string;
  readonly file: string;
  readonly executable: boolean;
}

/** One edit of a chain, as the command line that makes it and what it does to the registrations. */
interface Edit {
  readonly describe: string;
  readonly args: (input: string, output: string) => string[];
  readonly expect: (log: string) => string;
  /** The processors left after it (prunes only). */
  readonly keeps?: readonly string[];
}

/**
 * The registration log with entry `id` of fat binary `index` replaced by `line` (an `  entry ...` line
 * of the donor, as the original registered it).
 */
function replaceEntry(log: string, index: number, id: string, line: string): string {
  let current = -1;
  return log
    .split("\n")
    .map((l) => {
      const fatbin = /^fatbin (\d+)/.exec(l);
      if (fatbin) current = Number(fatbin[1]);
      return current === index && l.startsWith(`  entry ${id} `) ? line : l;
    })
    .join("\n");
}

/** The `  entry ...` lines of each fat binary, by index then ID. */
function entriesByFatbin(log: string): Map<number, Map<string, string>> {
  const out = new Map<number, Map<string, string>>();
  let current = -1;
  for (const l of log.split("\n")) {
    const fatbin = /^fatbin (\d+)/.exec(l);
    if (fatbin) out.set((current = Number(fatbin[1])), new Map());
    const entry = /^ {2}entry (\S+) /.exec(l);
    if (entry) out.get(current)!.set(entry[1], l);
  }
  return out;
}

describe.skipIf(!tools)("chains of edits: every output loads and registers what the edits promise", () => {
  let shop: Workshop;
  const programs: Program[] = [];
  beforeAll(() => {
    shop = new Workshop();
    CASES.forEach((c, i) => programs.push({ name: c.name, file: shop.program(c, `chain${i}`), executable: c.executable }));
    if (existsSync(ROCRAND)) programs.push({ name: "librocrand", file: ROCRAND, executable: false });
    else if (required) throw new Error(`${ROCRAND} is required (OFFLOAD_KIT_REQUIRE_NATIVE=1)`);
  }, 4 * HANG_MS);
  afterAll(() => shop?.remove());

  /** Donor code objects: every plain entry of the original, extracted once (`<file>-<fat binary>-<ID>`). */
  function donors(program: Program, folder: string): Map<string, string> {
    mkdirSync(folder, { recursive: true });
    const r = kit(["extract", `--out-dir=${folder}`, program.file]);
    expect(r.status, r.stderr).toBe(0);
    const base = program.file.split("/").pop()!;
    const out = new Map<string, string>();
    for (const name of readdirSync(folder)) {
      if (name.startsWith(`${base}-`)) out.set(name.slice(base.length + 1), join(folder, name));
    }
    return out;
  }

  /** A random edit that applies to a file whose pruned-to processors are `processors`. */
  function randomEdit(next: () => number, processors: readonly string[], original: string, byFatbin: Map<number, Map<string, string>>, donorFiles: Map<string, string>, prune = false): Edit {
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
    const kind = prune ? "prune" : pick(["prune", "prune", "compress", "decompress", "replace"] as const);
    if (kind === "prune" && processors.length > 1) {
      // A proper subset, never empty.
      const keeps = processors.filter(() => next() < 0.5);
      if (keeps.length === 0 || keeps.length === processors.length) keeps.splice(0, keeps.length, pick(processors));
      // A forced first prune leaves two or more, so that the second has something to choose from.
      if (prune && keeps.length === 1 && processors.length > 2) keeps.push(pick(processors.filter((p) => p !== keeps[0])));
      return {
        describe: `prune --keep=${keeps.join(",")}`,
        args: (input, output) => ["prune", `--keep=${keeps.join(",")}`, "-o", output, input],
        expect: (log) => keepEntries(log, (id) => { const p = processorOf(id); return p === undefined || keeps.includes(p); }, true),
        keeps,
      };
    }
    if (kind === "compress" || kind === "prune") {
      const level = pick([1, 3, 9, 19]);
      return { describe: `compress --level=${level}`, args: (input, output) => ["compress", `--level=${level}`, "-o", output, input], expect: (log) => log };
    }
    if (kind === "decompress") return { describe: "decompress", args: (input, output) => ["decompress", "-o", output, input], expect: (log) => log };
    // Replace one kept code object of one fat binary by the same target's code object from another fat
    // binary of the original (another size, so the layout changes): the registration shows the donor's.
    const choices: { index: number; id: string; donor: string; line: string }[] = [];
    for (const [index, entries] of byFatbin) {
      for (const id of entries.keys()) {
        const p = processorOf(id);
        if (p === undefined || !processors.includes(p)) continue;
        for (const [other, otherEntries] of byFatbin) {
          const donor = donorFiles.get(`${other}-${id.replace(/:/g, "_")}`);
          const line = otherEntries.get(id);
          if (other !== index && donor !== undefined && line !== undefined && line !== entries.get(id)) choices.push({ index, id, donor, line });
        }
      }
    }
    if (choices.length === 0) return randomEdit(next, processors, original, byFatbin, donorFiles);
    const c = pick(choices);
    return {
      describe: `replace --bundle=${c.index} --entry=${c.id}`,
      args: (input, output) => ["replace", `--bundle=${c.index}`, `--entry=${c.id}`, `--with=${c.donor}`, "-o", output, input],
      expect: (log) => replaceEntry(log, c.index, c.id, c.line),
    };
  }

  /** What `file` registers, compression aside; a file that does not load fails with `where` said. */
  function registered(program: Program, file: string, where: string): string {
    try {
      return normalize(shop.registrations(file, program.executable));
    } catch (e) {
      throw new Error(`${where}: ${(e as Error).message}`);
    }
  }

  /** What an output must be: it loads, registers `expected`, and no checker finds anything new. */
  function check(program: Program, output: string, expected: string, where: string): void {
    // The edit verified its output before renaming it into place (src/verify/); so does the command.
    const verified = kit(["verify", output]);
    expect([verified.status, verified.stderr], where).toEqual([0, ""]);
    expect(registered(program, output, where), where).toBe(normalize(expected));
    const lint = (f: string) => diagnostics(run("eu-elflint", ["--gnu-ld", f]).stdout, f);
    const known = lint(program.file);
    expect(lint(output).filter((l) => !known.includes(l)), where).toEqual([]);
    const readelf = (f: string) => run("llvm-readelf-19", ["-a", f]);
    const r0 = readelf(program.file);
    const r1 = readelf(output);
    expect(r1.status, where).toBe(r0.status);
    expect(diagnostics(r1.stderr, output).filter((l) => !diagnostics(r0.stderr, program.file).includes(l)), where).toEqual([]);
  }

  it("runs the chains", () => {
    const next = rng(SEED);
    let edits = 0;
    let identical = 0;
    for (const [p, program] of programs.entries()) {
      const original = shop.registrations(program.file, program.executable);
      const byFatbin = entriesByFatbin(original);
      const processors = [...new Set([...byFatbin.values()].flatMap((m) => [...m.keys()].map(processorOf).filter((x): x is string => x !== undefined)))].sort();
      const donorFiles = donors(program, join(shop.dir, `donors-${p}`));
      for (let chain = 0; chain < CHAINS_PER_PROGRAM; chain++) {
        const length = 2 + Math.floor(next() * 4);
        let input = program.file;
        let expected = original;
        let left: readonly string[] = processors;
        let prunesOnly = true;
        const steps: string[] = [];
        for (let step = 0; step < length; step++) {
          // Every program's first chain starts with two prunes: the case where one prune's bytes are promised.
          const edit = randomEdit(next, left, program.file, byFatbin, donorFiles, chain === 0 && step < 2);
          steps.push(edit.describe);
          const where = `seed ${SEED}, ${program.name}, chain ${chain}: ${steps.join(" | ")}`;
          const output = join(shop.dir, `chain-${p}-${chain}-${step}`);
          const r = kit(edit.args(input, output));
          expect([r.status, r.stderr], where).toEqual([0, ""]);
          expected = edit.expect(expected);
          left = edit.keeps ?? left;
          prunesOnly &&= edit.keeps !== undefined;
          check(program, output, expected, where);
          if (prunesOnly && step > 0) {
            // Pruning an edited file gives the bytes of one prune of the original to what is left.
            const once = `${output}.once`;
            const direct = kit(["prune", `--keep=${left.join(",")}`, "-o", once, program.file]);
            expect(direct.status, where).toBe(0);
            expect(Buffer.compare(readFileSync(output), readFileSync(once)), `${where}: differs from one prune to ${left.join(",")}`).toBe(0);
            identical++;
          }
          input = output;
          edits++;
        }
        for (const strip of [["strip"], ["eu-strip"], ["llvm-strip-19"]]) {
          const stripped = `${input}.${strip[0]}`;
          const s = run(strip[0], ["-o", stripped, input]);
          const where = `seed ${SEED}, ${program.name}, chain ${chain}: ${steps.join(" | ")} | ${strip[0]}`;
          expect([s.status, s.stderr], where).toEqual([0, ""]);
          expect(registered(program, stripped, where), where).toBe(normalize(expected));
        }
      }
    }
    expect(edits).toBeGreaterThanOrEqual(2 * CHAINS_PER_PROGRAM * programs.length);
    expect(identical).toBeGreaterThanOrEqual(programs.length);
    console.log(`chains: seed ${SEED}, ${programs.length} programs, ${edits} edits checked, ${identical} prune chains byte-identical to one prune`);
  }, 20 * HANG_MS);

  it("librocsparse: a prune of a pruned library is the prune to what is left, and registers it", () => {
    if (!existsSync(ROCSPARSE)) {
      if (required) throw new Error(`${ROCSPARSE} is required (OFFLOAD_KIT_REQUIRE_NATIVE=1)`);
      return;
    }
    const folder = existsSync("/dev/shm") ? "/dev/shm" : shop.dir;
    const first = join(folder, `offload-kit-${process.pid}-chain-1.so`);
    const second = join(folder, `offload-kit-${process.pid}-chain-2.so`);
    const once = join(folder, `offload-kit-${process.pid}-chain-once.so`);
    try {
      for (const [args, label] of [
        [["prune", "--keep=gfx90a,gfx1030,gfx908", "-o", first, ROCSPARSE], "first"],
        [["prune", "--keep=gfx90a", "-o", second, first], "second"],
        [["prune", "--keep=gfx90a", "-o", once, ROCSPARSE], "once"],
      ] as const) {
        const r = kit(args);
        expect([r.status, r.stderr], label).toEqual([0, ""]);
      }
      expect(run("cmp", [second, once]).status).toBe(0);
      const keep = (id: string) => { const p = processorOf(id); return p === undefined || p === "gfx90a"; };
      expect(normalize(shop.registrations(second, false))).toBe(normalize(keepEntries(shop.registrations(ROCSPARSE, false), keep, true)));
      const lint = run("eu-elflint", ["--gnu-ld", second]);
      expect(lint.stdout).toBe(run("eu-elflint", ["--gnu-ld", ROCSPARSE]).stdout.split(ROCSPARSE).join(second));
    } finally {
      for (const f of [first, second, once]) spawnSync("rm", ["-f", f]);
    }
  }, 10 * HANG_MS);
});
