/**
 * The build stamp (issue 27, item 5): `npm test` builds only when what the build reads has changed since the
 * last finished build. Run here as a whole process over a scratch tree shaped like the repository, with a
 * stand-in build command that counts its runs and writes the outputs, so the real 15-45 s build is not needed.
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HANG_MS } from "../limits.js";
// @ts-expect-error: a plain .mjs build script without types
import { BUILD_INPUTS, BUILD_OUTPUTS, freshness } from "../../scripts/build-if-stale.mjs";

const script = resolve(import.meta.dirname, "../../scripts/build-if-stale.mjs");
let root = "";

function write(path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

/** Runs build-if-stale in the scratch tree; the stand-in build logs each run to build.log. */
function run(...args: string[]) {
  const build = "node fake-build.mjs";
  const result = spawnSync(process.execPath, [script, ...args], {
    encoding: "utf8",
    timeout: HANG_MS,
    env: { ...process.env, OFFLOAD_KIT_BUILD_ROOT: root, OFFLOAD_KIT_BUILD_COMMAND: build },
  });
  return { status: result.status, out: result.stdout + result.stderr };
}
const builds = (): number => (existsSync(join(root, "build.log")) ? readFileSync(join(root, "build.log"), "utf8").split("\n").length - 1 : 0);

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "offload-kit-stamp-"));
  write("src/index.ts", "export const a = 1;\n");
  write("src/wasm/bytes.generated.ts", "export const bytes = 'old';\n");
  write("assembly/index.ts", "export function f(): i32 { return 1; }\n");
  write("scripts/bundle-bins.mjs", "// bins\n");
  write("package.json", "{}\n");
  // The stand-in build, framed as package.json's build script frames the real one (--begin first, --end last,
  // here called in-process to spare two Node starts a build): fails when FAIL exists, else writes every output;
  // EDIT_DURING makes it edit a source after the inputs were hashed.
  write(
    "fake-build.mjs",
    `import { appendFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { begin, end } from ${JSON.stringify(pathToFileURL(script).href)};
begin(process.cwd());
appendFileSync("build.log", "built\\n");
if (existsSync("EDIT_DURING")) writeFileSync("src/index.ts", "export const a = 5;\\n");
if (existsSync("FAIL")) process.exit(3);
for (const output of ${JSON.stringify(BUILD_OUTPUTS)}) { mkdirSync(dirname(output), { recursive: true }); writeFileSync(output, "x" + Date.now()); }
end(process.cwd());
`,
  );
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("scripts/build-if-stale.mjs", () => {
  it("builds once, then not again while nothing changed", () => {
    expect(run("--check").status).toBe(1);
    const first = run();
    expect(first.status).toBe(0);
    expect(first.out).toContain("no build stamp");
    expect(builds()).toBe(1);
    const second = run();
    expect(second.status).toBe(0);
    expect(second.out).toContain("build is fresh");
    expect(builds()).toBe(1);
    expect(run("--check").status).toBe(0);
  });

  it("rebuilds when a source, an assembly kernel, a build script or package.json changes", () => {
    run();
    const edits: Array<[string, string]> = [
      ["src/index.ts", "export const a = 2;\n"],
      ["assembly/index.ts", "export function f(): i32 { return 2; }\n"],
      ["scripts/bundle-bins.mjs", "// bins, changed\n"],
      ["package.json", '{"version": "2"}\n'],
      ["src/new-module.ts", "export {};\n"],
    ];
    for (const [index, [path, text]] of edits.entries()) {
      write(path, text);
      const result = run();
      expect(result.out).toContain("sources changed");
      expect(builds()).toBe(index + 2);
    }
    rmSync(join(root, "src/new-module.ts"));
    run();
    expect(builds()).toBe(edits.length + 2);
    expect(BUILD_INPUTS).toEqual(expect.arrayContaining(["src", "assembly", "scripts", "package.json"]));
  });

  it("does not rebuild for a touch, for the files the build itself writes, or for the demo", () => {
    write("scripts/demo.mjs", "// npm start\n");
    run();
    write("scripts/demo.mjs", "// npm start, reworded\n");
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, "src/index.ts"), later, later);
    write("src/wasm/bytes.generated.ts", "export const bytes = 'rewritten by a build';\n");
    expect(run().out).toContain("build is fresh");
    expect(builds()).toBe(1);
  });

  it("rebuilds when an output is missing", () => {
    run();
    rmSync(join(root, "dist/bin/offload-kit.js"));
    expect(freshness(root)).toMatchObject({ fresh: false, why: expect.stringContaining("dist/bin/offload-kit.js") });
    expect(run().status).toBe(0);
    expect(builds()).toBe(2);
    expect(existsSync(join(root, "dist/bin/offload-kit.js"))).toBe(true);
  });

  it("rebuilds under another major version of Node, as CI's second run on Node 24 needs", () => {
    run();
    const stampPath = join(root, "dist/.build-stamp");
    const stamp = JSON.parse(readFileSync(stampPath, "utf8")) as { node: string };
    expect(stamp.node).toBe(process.version);
    writeFileSync(stampPath, JSON.stringify({ ...stamp, node: "v0.12.18" }));
    expect(run().out).toContain(`built by Node v0.12.18, this is Node ${process.version}`);
    expect(builds()).toBe(2);
  });

  it("leaves no stamp after a failed build, so the next run builds again", () => {
    run();
    write("src/index.ts", "export const a = 3;\n");
    appendFileSync(join(root, "FAIL"), "");
    expect(run().status).toBe(3);
    expect(existsSync(join(root, "dist/.build-stamp"))).toBe(false);
    rmSync(join(root, "FAIL"));
    expect(run().out).toContain("no build stamp");
    expect(builds()).toBe(3);
    expect(run().out).toContain("build is fresh");
  });

  it("sees an edit made while the build runs: the hash is the one taken when it began", () => {
    run();
    write("src/index.ts", "export const a = 4;\n");
    appendFileSync(join(root, "EDIT_DURING"), "");
    expect(run().status).toBe(0);
    expect(readFileSync(join(root, "src/index.ts"), "utf8")).toBe("export const a = 5;\n");
    expect(freshness(root)).toMatchObject({ fresh: false, why: expect.stringContaining("sources changed") });
  });
});
