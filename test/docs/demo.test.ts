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
    // The real listing of the sample, and of the pruned output: gfx906's entry gone, gfx90a's kept.
    expect(result.stdout).toContain("hipv4-amdgcn-amd-amdhsa--gfx906");
    const afterPrune = result.stdout.slice(result.stdout.indexOf("$ offload-kit ls $TMP/app-gfx90a.hipfb"));
    expect(afterPrune.split("$ offload-bundler")[0]).not.toContain("gfx906");
    expect(afterPrune).toContain("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-");
    expect(result.stdout).toContain("byte-identical to clang-offload-bundler 19's app.hipfb: yes");
    expect(result.stdout).toContain("docs/");
    expect(demoFolders().filter((name) => !before.has(name))).toEqual([]);
  });
});
