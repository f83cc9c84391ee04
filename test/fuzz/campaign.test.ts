// A short fuzz campaign in `npm test`: 300 cases per parser, the whole campaign machinery (workers, every
// check) as `npm run fuzz` runs it for the long campaign in the README. A count of cases rather than seconds,
// and a per-case limit that only a real hang reaches: on a busy machine the result must not change.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { HANG_MS } from "../limits.js";

describe("fuzz campaign (short)", () => {
  it("runs 300 cases of every parser with no failure", () => {
    const args = ["--cases", "300", "--timeout-ms", String(HANG_MS / 10), "--workers", "1", "--no-save", "--seed", "npm-test"];
    const run = spawnSync(process.execPath, ["test/fuzz/fuzz.mjs", ...args], {
      encoding: "utf8",
      timeout: HANG_MS,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.status, output).toBe(0);
    expect(output).toContain("no failures");
    const rows = run.stdout.split("\n").filter((line) => / cases /.test(line));
    expect(rows.length, output).toBeGreaterThanOrEqual(9);
    for (const row of rows) expect(Number(/(\d+) cases/.exec(row)![1]), row).toBe(300);
  }, HANG_MS);
});
