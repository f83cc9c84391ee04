// The package's decompression budget (src/packages/budget.ts): a tar.gz of many members each within any
// per-member ratio, and containers nested so their ratios multiply, stop where the total runs out, with
// one problem naming the package and the member being read; the members before are kept; the CLI exits 1.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { bytesSource } from "../../src/engine/source.js";
import { nodeDecoders } from "../../src/packages/node/io.js";
import { DECOMPRESSION_FLOOR, DECOMPRESSION_RATIO, defaultDecompressionLimit, parseDecompressionLimit } from "../../src/packages/budget.js";
import { memorySpooler } from "../../src/packages/decoders.js";
import { walkPackage } from "../../src/packages/walk.js";
import type { PackageProblem } from "../../src/packages/walk.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { HOSTS, tarEntry, tarOf } from "./build.js";

const app = readFileSync(join(HOSTS, "app"));
const MiB = 1024 * 1024;

/** app first, then `count` members of 1 MiB of zeros: each inflates ~1000:1, within deflate's ratio. */
function manyMembers(count: number): Uint8Array {
  return gzipSync(tarOf([tarEntry("lib/app", app), ...Array.from({ length: count }, (_, i) => tarEntry(`zeros/${i}`, new Uint8Array(MiB)))]));
}

/** A tar.gz holding `count` tar.gz's, each holding 2 MiB of zeros: the decoded total is the levels' product. */
function nested(count: number): Uint8Array {
  const inner = gzipSync(tarOf([tarEntry("z", new Uint8Array(2 * MiB))]));
  return gzipSync(tarOf([tarEntry("lib/app", app), ...Array.from({ length: count }, (_, i) => tarEntry(`i${i}.tar.gz`, inner))]));
}

async function walk(bytes: Uint8Array, name: string, maxDecompressed?: number) {
  const members: string[] = [];
  const problems: PackageProblem[] = [];
  await walkPackage(bytesSource(bytes), name, {
    decoders: nodeDecoders(),
    spooler: memorySpooler(),
    maxDecompressed,
    onMember: ({ path }) => {
      members.push(path.slice(1).join("!"));
    },
    onProblem: (p) => problems.push(p),
  });
  return { members, problems };
}

describe("decompression budget", () => {
  it("the rule: the larger of 2 GiB and 100x the package; the variable's sizes", () => {
    expect(defaultDecompressionLimit(1000)).toBe(DECOMPRESSION_FLOOR);
    expect(defaultDecompressionLimit(100 * MiB)).toBe(DECOMPRESSION_RATIO * 100 * MiB);
    expect(parseDecompressionLimit(undefined)).toBeUndefined();
    expect(parseDecompressionLimit("4096")).toBe(4096);
    expect(parseDecompressionLimit("64M")).toBe(64 * MiB);
    expect(parseDecompressionLimit("3GiB")).toBe(3 * 1024 * MiB);
    expect(parseDecompressionLimit("unlimited")).toBe(Infinity);
    expect(() => parseDecompressionLimit("lots")).toThrow(/OFFLOAD_KIT_MAX_DECOMPRESSED='lots' is not a size/);
  });

  it("a tar.gz of many members, each within ratio, stops where the total runs out; the members before are kept", async () => {
    const bytes = manyMembers(40);
    // Unlimited (the default rule's 2 GiB floor): every member is read.
    const all = await walk(bytes, "many.tar.gz");
    expect(all.problems).toEqual([]);
    expect(all.members).toHaveLength(41);
    const cut = await walk(bytes, "many.tar.gz", 8 * MiB);
    expect(cut.problems).toHaveLength(1);
    const [problem] = cut.problems;
    expect(problem!.code).toBe("PACKAGE_DECOMPRESSION_LIMIT");
    expect(problem!.path[0]).toBe("many.tar.gz");
    expect(problem!.path[1]).toMatch(/^zeros\/\d+$/);
    expect(problem!.message).toContain(`decompression budget of ${8 * MiB} bytes`);
    expect(problem!.message).toContain(`'${problem!.path.join("!")}'`);
    // lib/app and the zero members that fit were handed on, none after the one that ran out.
    expect(cut.members[0]).toBe("lib/app");
    expect(cut.members.length).toBeGreaterThanOrEqual(5);
    expect(cut.members.length).toBeLessThan(9);
    expect(cut.members).not.toContain(problem!.path[1]);
  });

  it("nested containers multiply: the budget counts every level and names the nested member", async () => {
    const bytes = nested(6);
    const all = await walk(bytes, "n.tar.gz");
    expect(all.problems).toEqual([]);
    expect(all.members).toEqual(["lib/app", ...Array.from({ length: 6 }, (_, i) => `i${i}.tar.gz!z`)]);
    const cut = await walk(bytes, "n.tar.gz", 5 * MiB);
    expect(cut.problems.map((p) => p.code)).toEqual(["PACKAGE_DECOMPRESSION_LIMIT"]);
    const path = cut.problems[0]!.path;
    expect(path).toEqual(["n.tar.gz", "i2.tar.gz", "z"]);
    expect(cut.members).toEqual(["lib/app", "i0.tar.gz!z", "i1.tar.gz!z"]);
  });

  it("the CLI: OFFLOAD_KIT_MAX_DECOMPRESSED sets it; the error names package and member, the members before are listed, exit 1", async () => {
    const dir = scratchDir("offload-kit-budget-");
    writeFileSync(join(dir, "bomb.tar.gz"), nested(6));
    const saved = process.env.OFFLOAD_KIT_MAX_DECOMPRESSED;
    process.env.OFFLOAD_KIT_MAX_DECOMPRESSED = "5M";
    try {
      const run = await runInDir(dir, (io) => runOffloadKit("offload-kit", ["ls", "-v", "bomb.tar.gz"], io));
      expect(run.code).toBe(1);
      expect(run.stdout.toString()).toContain("bomb.tar.gz!lib/app: binary bundle");
      expect(run.stderr).toMatch(/bomb\.tar\.gz!i2\.tar\.gz!z: at 0x[0-9a-f]+: decompression budget of 5242880 bytes \(as set\) ran out in 'bomb\.tar\.gz!i2\.tar\.gz!z'/);
      process.env.OFFLOAD_KIT_MAX_DECOMPRESSED = "unlimited";
      expect((await runInDir(dir, (io) => runOffloadKit("offload-kit", ["ls", "bomb.tar.gz"], io))).code).toBe(0);
    } finally {
      if (saved === undefined) delete process.env.OFFLOAD_KIT_MAX_DECOMPRESSED;
      else process.env.OFFLOAD_KIT_MAX_DECOMPRESSED = saved;
    }
  });
});
