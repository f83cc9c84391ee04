// Issue 27 item 6: `offload-kit --help` and every command's --help list the options, each with a one-line
// description, and end with EXAMPLES whose command lines parse with our parser and, where the paths they name can
// be set up from the shipped sample (examples/sample/) and a real linked HIP program (test/fixtures/hosts/app, as
// lib/libfoo.so), run and exit as their text says. Every command of the table is held to it, so a command added
// later without examples fails here. The drop-in tools' help stays the native tools' (no EXAMPLES added).
import { copyFileSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ToolSpec } from "../../src/cli/args.js";
import { listValue, parseCommandLine, stringValue } from "../../src/cli/args.js";
import { runOffloadBinary } from "../../src/cli/offload-binary.js";
import { runBundler } from "../../src/cli/offload-bundler.js";
import { COMMANDS, runOffloadKit } from "../../src/cli/offload-kit.js";
import { runPackager } from "../../src/cli/offload-packager.js";
import { runWrapper } from "../../src/cli/offload-wrapper.js";
import { runInDir, scratchDir } from "./harness.js";

const SAMPLE = new URL("../../examples/sample/", import.meta.url).pathname;
const LINKED_APP = new URL("../fixtures/hosts/app", import.meta.url).pathname;

/** The commands whose output is a summary with rows under -v/--verbose (issue 27 item 4). */
const VERBOSE = new Set(["ls", "sizes", "check", "extract", "unbundle", "replace", "verify", "recover", "prune", "compress", "decompress"]);
/** Examples never run here, and why: each must still parse. */
const NOT_RUN: Record<string, string> = { serve: "serves until stopped" };

const kit = async (dir: string, ...args: string[]) => {
  const run = await runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
  return { code: run.code, stdout: run.stdout.toString(), stderr: run.stderr };
};

/**
 * A folder holding what the examples name: examples/sample/ (copied), lib/libfoo.so (a linked HIP program holding
 * .hip_fatbin), an empty out/ for --out-dir, gfx906.co for replace --with, app.ccob.hipfb (the sample compressed,
 * what compress's example writes and decompress's reads) and build-main/lib, build-pr/lib (the second without gfx906)
 * for diff, split/ (a tree `kpack` split, for unkpack). Made by our own commands where an example's input is another example's output.
 */
async function workdir(): Promise<string> {
  const dir = scratchDir("offload-kit-help-");
  mkdirSync(join(dir, "examples", "sample"), { recursive: true });
  for (const name of readdirSync(SAMPLE)) copyFileSync(join(SAMPLE, name), join(dir, "examples", "sample", name));
  copyFileSync(join(SAMPLE, "gfx906.co"), join(dir, "gfx906.co"));
  for (const folder of ["out", "lib", "build-main/lib", "build-pr/lib"]) mkdirSync(join(dir, folder), { recursive: true });
  copyFileSync(LINKED_APP, join(dir, "lib", "libfoo.so"));
  copyFileSync(LINKED_APP, join(dir, "build-main", "lib", "libfoo.so"));
  mkdirSync(join(dir, "split", "bin"), { recursive: true });
  copyFileSync(LINKED_APP, join(dir, "split", "bin", "app"));
  const setup = [
    ["compress", "-o", "app.ccob.hipfb", "examples/sample/app.hipfb"],
    ["kpack", "--group=app", "split"],
    ["prune", "--drop=gfx906", "-o", "build-pr/lib/libfoo.so", "build-main/lib/libfoo.so"],
  ];
  for (const args of setup) expect((await kit(dir, ...args)).code, args.join(" ")).toBe(0);
  return dir;
}

interface Example {
  readonly line: string;
  readonly what: string;
}

/** The EXAMPLES section's entries: `  offload-kit ...` then what it does, indented six spaces. */
function examplesOf(help: string): Example[] {
  const at = help.indexOf("\nEXAMPLES:\n");
  if (at < 0) return [];
  const lines = help.slice(at + "\nEXAMPLES:\n".length).split("\n");
  const examples: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith("  offload-kit ")) continue;
    const what = lines[i + 1] ?? "";
    expect(what, lines[i]).toMatch(/^ {6}\S/);
    examples.push({ line: lines[i]!.trim(), what: what.trim() });
  }
  return examples;
}

/** The words a shell would pass (these examples hold no quotes); a redirection and what follows are the shell's. */
function words(line: string): string[] {
  const all = line.split(/\s+/).filter((w) => w !== "");
  const redirect = all.indexOf(">");
  return redirect < 0 ? all : all.slice(0, redirect);
}

/** Parses an example as offload-kit would; returns its command, arguments and operands. */
function parseExample(line: string): { command: string; args: string[]; operands: string[] } {
  const [tool, command, ...args] = words(line);
  expect(tool).toBe("offload-kit");
  expect(Object.hasOwn(COMMANDS, command!), line).toBe(true);
  const spec: ToolSpec = COMMANDS[command!]!.spec();
  const parsed = parseCommandLine(spec, `offload-kit ${command}`, args);
  expect(parsed.kind, line).toBe("ok");
  if (parsed.kind !== "ok") return { command: command!, args, operands: [] };
  expect(parsed.stderr, line).toBe("");
  // Written with '=' (or a path after -o): no other value is taken from the next word.
  expect(parsed.detached.filter((d) => !d.takesPath), line).toEqual([]);
  const positional = spec.options.find((o) => o.positional);
  const operands = positional === undefined ? [] : positional.list ? listValue(parsed.values, positional.name) : [stringValue(parsed.values, positional.name)].filter((v) => v !== "");
  return { command: command!, args, operands };
}

/** The exit status an example's text promises ("Exit 0 if so", "exit 1 if anything differs"); 0 when it names none. */
function promisedExit(what: string): number {
  const said = /\bexit (\d+)\b/i.exec(what);
  return said === null ? 0 : Number(said[1]);
}

/**
 * Runs an example in a fresh workdir when everything it names is there: its operands relative paths that exist
 * (completion's operand is a shell, not a path). Returns whether it ran.
 */
async function runExample(example: Example): Promise<boolean> {
  const { command, args, operands } = parseExample(example.line);
  if (Object.hasOwn(NOT_RUN, command)) return false;
  const dir = await workdir();
  const paths = command === "completion" ? [] : operands;
  if (command !== "completion" && (paths.length === 0 || !paths.every((p) => !isAbsolute(p) && existsSync(join(dir, p))))) return false;
  const run = await kit(dir, command, ...args);
  expect({ example: example.line, code: run.code, stderr: run.code === promisedExit(example.what) ? "" : run.stderr }).toEqual({ example: example.line, code: promisedExit(example.what), stderr: "" });
  expect(run.stdout.length, example.line).toBeGreaterThan(0);
  // What -o and --out-dir name is written.
  const written = args.flatMap((a, i) => (a === "-o" ? [args[i + 1]!] : a.startsWith("--out-dir=") ? [a.slice("--out-dir=".length)] : []));
  if (!args.includes("--dry-run")) for (const path of written) expect(existsSync(join(dir, path)), `${example.line}: ${path}`).toBe(true);
  return true;
}

describe("--help of every command: every option with a one-line description, and examples that parse and run", () => {
  it("the table holds the commands this test was written against, and more only with examples (checked below)", () => {
    for (const name of ["ls", "sizes", "check", "extract", "unbundle", "replace", "verify", "recover", "prune", "compress", "decompress", "kernels", "diff", "completion", "serve"]) {
      expect(Object.keys(COMMANDS)).toContain(name);
    }
  });

  for (const [command, subcommand] of Object.entries(COMMANDS)) {
    it(command, async () => {
      const help = await kit(SAMPLE, command, "--help");
      expect({ code: help.code, stderr: help.stderr }).toEqual({ code: 0, stderr: "" });
      const text = help.stdout;
      const spec = subcommand.spec();
      for (const option of spec.options) {
        if (option.positional || option.hidden) continue;
        expect(option.description, `${command} --${option.name}`).not.toMatch(/\n/);
        expect(option.description.length, `${command} --${option.name}`).toBeGreaterThan(0);
        expect(text).toMatch(new RegExp(`\\n {2}--?${option.name}\\b[^\\n]* - ${option.description.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
      }
      if (VERBOSE.has(command)) expect(text).toContain("--verbose");
      // EXAMPLES is the last section.
      expect(text).toMatch(/\nEXAMPLES:\n( {2}offload-kit \S[^\n]*\n {6}\S[^\n]*\n)+$/);
      const examples = examplesOf(text);
      expect(examples.length, command).toBeGreaterThan(0);
      let ran = 0;
      for (const example of examples) {
        expect(parseExample(example.line).command, example.line).toBe(command);
        if (await runExample(example)) ran++;
      }
      // Each command shows at least one example that works on the sample (or the linked program) here.
      if (!Object.hasOwn(NOT_RUN, command)) expect(ran, `${command}: examples run`).toBeGreaterThan(0);
    });
  }

  it("offload-kit --help: the commands, then examples of the three jobs (see inside, will it run, cut it down)", async () => {
    const help = await kit(SAMPLE, "--help");
    expect(help.code).toBe(0);
    for (const name of Object.keys(COMMANDS)) expect(help.stdout).toMatch(new RegExp(`\\n {2}${name} +\\S`));
    expect(help.stdout).toMatch(/\nEXAMPLES:\n( {2}offload-kit \S[^\n]*\n {6}\S[^\n]*\n)+$/);
    const examples = examplesOf(help.stdout);
    const commands = examples.map((e) => parseExample(e.line).command);
    for (const job of ["ls", "check", "prune"]) expect(commands).toContain(job);
    let ran = 0;
    for (const example of examples) if (await runExample(example)) ran++;
    expect(ran).toBeGreaterThanOrEqual(3);
  });
});

describe("the drop-in tools' --help is the native tools' (no EXAMPLES section added)", () => {
  const tools = { "clang-offload-bundler": runBundler, "clang-offload-packager": runPackager, "clang-linker-wrapper": runWrapper, "llvm-offload-binary": runOffloadBinary };
  for (const [tool, main] of Object.entries(tools)) {
    it(tool, async () => {
      const run = await runInDir(SAMPLE, (io) => main(tool, ["--help"], io));
      const text = run.stdout.toString();
      expect(run.code).toBe(0);
      expect(text).toMatch(/^OVERVIEW: /);
      expect(text).not.toContain("EXAMPLES");
      expect(text).not.toContain("offload-kit");
    });
  }
});
