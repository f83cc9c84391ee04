/**
 * The test commands' split (test/tiers.ts, vitest.config.ts): every test file runs in exactly one vitest project,
 * the one its tier names, so `npm run test:full` runs each file once and nothing falls out of every command.
 * Asked of vitest itself (`vitest list`), so the globs are judged by the matcher that uses them.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { HANG_MS } from "../limits.js";
import { tierOf } from "../tiers.js";

const root = resolve(import.meta.dirname, "../..");

function testFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (name === "fixtures" || name.startsWith(".")) return [];
    if (statSync(join(root, path)).isDirectory()) return testFiles(path);
    return name.endsWith(".test.ts") ? [path] : [];
  });
}

describe("test tiers", () => {
  it("decide by the longest entry, and leave unnamed files in npm test", () => {
    expect(tierOf("test/formats/bundle.test.ts")).toBe("quick");
    expect(tierOf("test/browser/page.test.ts")).toBe("slow");
    expect(tierOf("test/browser/blob-source.test.ts")).toBe("quick");
    expect(tierOf("test/fuzz/campaign.test.ts")).toBe("slow");
    expect(tierOf("test/fuzz/corpus.test.ts")).toBe("quick");
    expect(tierOf("test/fuzz/locate-engines.test.ts")).toBe("standard");
    expect(tierOf("test/somewhere-new/thing.test.ts")).toBe("standard");
  });

  it("put every test file in exactly one vitest project, the one its tier names", () => {
    const listed = spawnSync(process.execPath, [join(root, "node_modules/vitest/vitest.mjs"), "list", "--filesOnly", "--json"], {
      cwd: root,
      encoding: "utf8",
      timeout: HANG_MS,
    });
    expect(listed.status).toBe(0);
    const runs = (JSON.parse(listed.stdout) as Array<{ file: string; projectName: string }>).map(
      ({ file, projectName }) => `${relative(root, file).split("\\").join("/")} ${projectName}`,
    );
    const expected = testFiles("test").map((file) => `${file} ${tierOf(file)}`);
    expect(runs.sort()).toEqual(expected.sort());
    // Each tier holds something, so no command runs an empty suite.
    for (const tier of ["quick", "standard", "slow"]) expect(runs.some((run) => run.endsWith(` ${tier}`))).toBe(true);
  });
});
