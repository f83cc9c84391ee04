/**
 * `npm start` is a newcomer's first run (issue 27, item 1): it must show the three jobs on the shipped sample
 * with the built CLIs, finish, leave nothing behind, and point at the docs.
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { HANG_MS } from "../limits.js";

const root = resolve(import.meta.dirname, "../..");

describe("npm start (scripts/demo.mjs)", () => {
  it("runs ls, sizes, check and prune on the sample and says where to look next", () => {
    const demoFolders = () => readdirSync(tmpdir()).filter((name) => name.startsWith("offload-kit-demo-"));
    const before = new Set(demoFolders());
    const result = spawnSync(process.execPath, [join(root, "scripts/demo.mjs")], { encoding: "utf8", timeout: HANG_MS });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    for (const command of ["$ offload-kit ls app.hipfb", "$ offload-kit sizes app.hipfb", "$ offload-kit check --gpu=gfx90a:xnack- app.hipfb", "$ offload-kit prune --keep=gfx90a app.hipfb -o $TMP/app-gfx90a.hipfb"]) {
      expect(result.stdout).toContain(command);
    }
    // The pruned output is real and smaller (the commands' own wording is theirs to change, so it is not matched).
    const sizes = /app-gfx90a\.hipfb: (\d+) bytes \(app\.hipfb: (\d+) bytes\)/.exec(result.stdout);
    expect(sizes).not.toBeNull();
    expect(Number(sizes![2])).toBe(15397);
    expect(Number(sizes![1])).toBeGreaterThan(0);
    expect(Number(sizes![1])).toBeLessThan(15397);
    expect(result.stdout).toContain("byte-identical to clang-offload-bundler 19's app.hipfb: yes");
    expect(result.stdout).toContain("docs/");
    expect(demoFolders().filter((name) => !before.has(name))).toEqual([]);
  });
});
