// A short fuzz campaign in `npm test`: a couple of seconds per parser, the whole campaign machinery
// (workers, time limits, every check) as `npm run fuzz` runs it for the long campaign in the README.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("fuzz campaign (short)", () => {
  it("runs every parser for two seconds with no failure", () => {
    const run = spawnSync(process.execPath, ["test/fuzz/fuzz.mjs", "--seconds", "2", "--workers", "1", "--no-save", "--seed", "npm-test"], {
      encoding: "utf8",
      timeout: 120_000,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.status, output).toBe(0);
    expect(output).toContain("no failures");
    const rows = run.stdout.split("\n").filter((line) => / cases /.test(line));
    expect(rows.length, output).toBeGreaterThanOrEqual(9);
    for (const row of rows) expect(Number(/(\d+) cases/.exec(row)![1]), row).toBeGreaterThan(50);
  }, 150_000);
});
