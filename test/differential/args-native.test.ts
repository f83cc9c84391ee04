// Differential tests of src/cli/args.ts against the native LLVM 19 tools: for argument vectors that end during
// parsing (errors, help, version), stdout, stderr and the exit code must be identical, with argv[0] set to the
// same name on both sides. Vectors that parse cleanly are only checked to parse cleanly on both sides; their
// values are unit-tested in test/cli/args.test.ts. The packager's table is src/cli/offload-packager-options.ts.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseCommandLine, type ParseResult, type ResponseFileReader } from "../../src/cli/args.js";
import { BUNDLER_OPTIONS, bundlerToolSpec } from "../../src/cli/offload-bundler-options.js";
import { packagerToolSpec } from "../../src/cli/offload-packager-options.js";
import { offloadBinaryToolSpec } from "../../src/cli/offload-binary-options.js";
import { hasNative } from "../native.js";
import { HANG_MS } from "../limits.js";

const BUNDLER_19 = "clang-offload-bundler-19";
const BUNDLER_22 = "clang-offload-bundler-22";
const PACKAGER_19 = "clang-offload-packager-19";
const OFFLOAD_BINARY_22 = "llvm-offload-binary-22";

function versionText(tool: string): string | undefined {
  // test/native.ts: under OFFLOAD_KIT_REQUIRE_NATIVE=1 (CI) a missing tool fails instead of skipping.
  if (!hasNative(tool)) return undefined;
  const run = spawnSync(tool, ["--version"], { encoding: "utf8" });
  return run.status === 0 ? run.stdout : undefined;
}

const bundler19Version = versionText(BUNDLER_19);
const bundler22Version = versionText(BUNDLER_22);
const packager19Version = versionText(PACKAGER_19);
const offloadBinary22Version = versionText(OFFLOAD_BINARY_22);

const STRERROR: Record<string, string> = {
  EISDIR: "Is a directory",
  EACCES: "Permission denied",
  ELOOP: "Too many levels of symbolic links",
  ENAMETOOLONG: "File name too long",
};

/** The reader a Node CLI gives parseCommandLine: stat for existence, then the bytes or the strerror text. */
function nodeReader(cwd: string): ResponseFileReader {
  return {
    cwd,
    readFile(path) {
      try {
        statSync(path);
      } catch {
        return undefined;
      }
      try {
        return readFileSync(path);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? "";
        return { error: STRERROR[code] ?? code };
      }
    },
  };
}

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function runNative(tool: string, argv0: string, args: string[], cwd: string): Outcome {
  const run = spawnSync(tool, args, { argv0, cwd, encoding: "utf8", timeout: HANG_MS });
  return { code: run.status ?? -1, stdout: run.stdout, stderr: run.stderr };
}

function outcome(result: ParseResult): Outcome {
  return result.kind === "exit" ? { code: result.code, stdout: result.stdout, stderr: result.stderr } : { code: -2, stdout: "", stderr: result.stderr };
}

/** Messages only the cl:: layer prints: their absence on the native side means the parse went through. */
const PARSER_MESSAGE = /Unknown command line argument|Did you mean|: for the -{1,2}\S+ option:|positional argument|^OVERVIEW:/m;

const work = mkdtempSync(join(tmpdir(), "offload-kit-args-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
writeFileSync(join(work, "quoted"), `-type=bc -foo "a b" 'c d' e\\ f g\\\\h "x\\"y" -zz\n`);
writeFileSync(join(work, "qq"), "-qq");
writeFileSync(join(work, "self"), "@self");
writeFileSync(join(work, "ping"), "@pong");
writeFileSync(join(work, "pong"), "@ping");
writeFileSync(join(work, "bom"), Buffer.from([0xef, 0xbb, 0xbf, 0x2d, 0x62, 0x6f, 0x6d]));
writeFileSync(join(work, "utf16"), Buffer.from([0xff, 0xfe, 0x2d, 0x00, 0x77, 0x00]));
writeFileSync(join(work, "empty-tokens"), `'' "" -a'b'c"d"e ab\\`);
writeFileSync(join(work, "ok"), "-type=bc -list\n-input=/dev/null\n");
mkdirSync(join(work, "dir"));
mkdirSync(join(work, "sub"));
writeFileSync(join(work, "sub", "outer"), "@qq");

/** Vectors whose run ends in the parser (error exit 1, or help / version exit 0). */
const ENDING_VECTORS: string[][] = [
  [],
  ["-foo"],
  ["--foo"],
  ["---"],
  ["---type=bc"],
  ["-=x"],
  ["-"],
  [""],
  ["-type"],
  ["-targets"],
  ["-type=bc", "-targets"],
  ["-type=bc", "stray"],
  ["-type=bc", "--", "-foo", "--", "x"],
  ["-type=bc", "-list=maybe"],
  ["-type=bc", "-list", "0"],
  ["-type=bc", "-bundle-align=x"],
  ["-type=bc", "-bundle-align=-1"],
  ["-type=bc", "-bundle-align=08"],
  ["-type=bc", "-bundle-align=0O7"],
  ["-type=bc", "-bundle-align="],
  ["-type=bc", "-bundle-align=0x"],
  ["-type=bc", "-bundle-align=0b12"],
  ["-type=bc", "-bundle-align=+5"],
  ["-type=bc", "-bundle-align=4294967296"],
  ["-type=bc", "-bundle-align=18446744073709551616"],
  ["-type=bc", "-bundle-align", "0x1g"],
  ["-type=bc", "-compression-level=abc"],
  ["-type=bc", "-compression-level=2147483648"],
  ["-type=bc", "-compression-level=-2147483649"],
  ["-type=bc", "-compression-level=9223372036854775808"],
  ["-type=bc", "-unbundle=yes", "-verbose=2", "-###=x"],
  ["--help=1"],
  ["--version=0"],
  ["--help"],
  ["-help"],
  ["--help-hidden"],
  ["--help-list"],
  ["--help-list-hidden"],
  ["--version"],
  ["-version"],
  ["-foo", "--help"],
  ["--help", "-foo"],
  ["-bundle-align=x", "--version"],
  ["-type=bc", "-h"],
  ["-h"],
  ["-hh", "-type=bc"],
  ["-hfoo"],
  ["-hx=1"],
  ["-type=bc", "--hel"],
  ["-type=bc", "--versio"],
  ["-type=bc", "--help-lis"],
  ["-type=bc", "--print-option"],
  ["-type=bc", "--print-options=maybe"],
  ["-type=bc", "--helpx"],
  ["-type=bc", "--typ"],
  ["-type=bc", "--lis", "--inpu", "--outpu", "--inputx", "--target=a,b"],
  ["-type=bc", "--bundle-alig=4", "--help=x=y", "--foo=", "-h=maybe"],
  ["@quoted"],
  ["@nonexist"],
  ["-type=bc", "--", "@qq"],
  ["-type=bc", "-input", "@qq", "-x"],
  ["@sub/outer"],
  ["@bom"],
  ["@utf16"],
  ["@empty-tokens"],
  ["-type=bc", "@qq", "@qq"],
];

/** Vectors that parse cleanly (the bundler itself then succeeds or fails on its own terms). */
const PASSING_VECTORS: string[][] = [
  ["-type=bc", "-type=i", "-list", "-input=/dev/null"],
  ["--type", "bc", "--list", "--input", "/dev/null"],
  ["-type=bc", "-list=", "-input=/dev/null"],
  ["-type=bc", "-list=1", "-h=0", "-input=/dev/null"],
  ["-type=bc", "-list", "-input=/dev/null", "-bundle-align=0x10", "-bundle-align=0o7", "-compression-level=-0x10"],
  ["-type=bc", "-list", "-input=/dev/null", "-compression-level=-2147483648", "-compress=False", "-verbose=TRUE"],
  ["-type", "--help"],
  ["-type=bc", "-input", "-x"],
  ["-type=bc", "-targets=a,,b,", "-list", "-input=/dev/null"],
  ["@ok"],
  ["@dir"],
  ["@"],
  ["@self"],
  ["@ping"],
];

describe.skipIf(!bundler19Version)("cl:: parsing against clang-offload-bundler-19", () => {
  const bundler = bundlerToolSpec(bundler19Version ?? "");

  it.each(ENDING_VECTORS.map((args) => [args.join(" "), args]))("%s", (_name, args) => {
    for (const argv0 of [BUNDLER_19, "/opt/kit/bin/offload-bundler"]) {
      const native = runNative(BUNDLER_19, argv0, args, work);
      const ours = outcome(parseCommandLine(bundler, argv0, args, nodeReader(work)));
      expect(ours).toEqual(native);
    }
  });

  it.each(PASSING_VECTORS.map((args) => [args.join(" "), args]))("%s parses on both sides", (_name, args) => {
    const native = runNative(BUNDLER_19, BUNDLER_19, args, work);
    const ours = parseCommandLine(bundler, BUNDLER_19, args, nodeReader(work));
    expect(ours.kind).toBe("ok");
    expect(native.stdout).not.toMatch(PARSER_MESSAGE);
    expect(native.stderr).not.toMatch(PARSER_MESSAGE);
    // A response-file failure is printed by the parser, then the tool carries on with its own checks.
    expect(native.stderr.startsWith(ours.stderr)).toBe(true);
  });

  it("repeats the exact help screens of the native tool", () => {
    for (const flag of ["--help", "--help-hidden", "--help-list", "--help-list-hidden"]) {
      const native = runNative(BUNDLER_19, "/x/y/some-name", [flag], work);
      expect(outcome(parseCommandLine(bundler, "/x/y/some-name", [flag]))).toEqual(native);
    }
  });

  it("suggests the same option for random typos, ties included", () => {
    const args = randomTypos(BUNDLER_OPTIONS.map((option) => option.name), 600, 0x5eed);
    for (let start = 0; start < args.length; start += 200) {
      const batch = args.slice(start, start + 200);
      expect(outcome(parseCommandLine(bundler, BUNDLER_19, batch))).toEqual(runNative(BUNDLER_19, BUNDLER_19, batch, work));
    }
  });
});

describe.skipIf(!bundler22Version)("cl:: parsing against clang-offload-bundler-22", () => {
  it("suggests the same option for random typos under the 22 map order", () => {
    const bundler = bundlerToolSpec(bundler22Version ?? "", 22);
    const args = randomTypos(BUNDLER_OPTIONS.map((option) => option.name), 400, 0x22);
    for (let start = 0; start < args.length; start += 200) {
      const batch = args.slice(start, start + 200);
      expect(outcome(parseCommandLine(bundler, BUNDLER_22, batch))).toEqual(runNative(BUNDLER_22, BUNDLER_22, batch, work));
    }
  });

  it("prints the same help as 19", () => {
    const bundler = bundlerToolSpec(bundler22Version ?? "", 22);
    for (const flag of ["--help", "--help-hidden", "--version"]) {
      expect(outcome(parseCommandLine(bundler, BUNDLER_22, [flag]))).toEqual(runNative(BUNDLER_22, BUNDLER_22, [flag], work));
    }
  });
});

const PACKAGER_ENDING_VECTORS: string[][] = [
  ["-ofoo"],
  ["-o"],
  ["-ho"],
  ["--hel"],
  ["-x=5"],
  ["-q", "--imag", "-archive=x"],
  ["a", "b"],
  ["--image=x", "--", "a", "b"],
  ["--help"],
  ["--help-hidden"],
  ["--help-list"],
  ["-h"],
  ["-h=1"],
  ["--version"],
];

describe("packager model", () => {
  const packager = packagerToolSpec("V\n");

  it("takes one optional positional, also after '--' and '-'", () => {
    expect(parseCommandLine(packager, PACKAGER_19, ["in.o"])).toMatchObject({ kind: "ok", values: { input: "in.o" } });
    expect(parseCommandLine(packager, PACKAGER_19, ["--", "-o"])).toMatchObject({ kind: "ok", values: { input: "-o" } });
    expect(parseCommandLine(packager, PACKAGER_19, ["-", "-o", "x"])).toMatchObject({ kind: "ok", values: { input: "-", o: "x" } });
  });

  it("accumulates --image without splitting at commas, and reads -o=x", () => {
    const result = parseCommandLine(packager, PACKAGER_19, ["--image=a,b", "--image", "c", "-o=x"]);
    expect(result).toMatchObject({ kind: "ok", values: { image: ["a,b", "c"], o: "x" }, occurrences: { image: 2 } });
  });

  it("refuses a value-taking one-letter option inside a group", () => {
    expect(parseCommandLine(packager, PACKAGER_19, ["-ofoo"])).toEqual({
      kind: "exit",
      code: 1,
      stdout: "",
      stderr:
        `${PACKAGER_19}: for the -o option: may not occur within a group!\n` +
        `${PACKAGER_19}: Unknown command line argument '-ofoo'.  Try: '${PACKAGER_19} --help'\n` +
        `${PACKAGER_19}: Did you mean '-o'?\n`,
    });
  });
});

describe.skipIf(!packager19Version)("cl:: parsing against clang-offload-packager-19", () => {
  const packager = packagerToolSpec(packager19Version ?? "");

  it.each(PACKAGER_ENDING_VECTORS.map((args) => [args.join(" "), args]))("%s", (_name, args) => {
    const ours = outcome(parseCommandLine(packager, PACKAGER_19, args, nodeReader(work)));
    expect(ours).toEqual(runNative(PACKAGER_19, PACKAGER_19, args, work));
  });

  it.each([[["-o", "x"]], [["-o=x"]], [[]], [["--"]]])("%j parses on both sides", (args) => {
    const native = runNative(PACKAGER_19, PACKAGER_19, args, work);
    expect(parseCommandLine(packager, PACKAGER_19, args).kind).toBe("ok");
    expect(native.stderr).not.toMatch(PARSER_MESSAGE);
  });

  it("suggests the same option for random typos", () => {
    const args = randomTypos(["o", "image", "archive"], 300, 0x9ac);
    expect(outcome(parseCommandLine(packager, PACKAGER_19, args))).toEqual(runNative(PACKAGER_19, PACKAGER_19, args, work));
  });
});

describe.skipIf(!offloadBinary22Version)("cl:: parsing against llvm-offload-binary-22", () => {
  const tool = offloadBinaryToolSpec(offloadBinary22Version ?? "");

  it.each(PACKAGER_ENDING_VECTORS.map((args) => [args.join(" "), args]))("%s", (_name, args) => {
    expect(outcome(parseCommandLine(tool, OFFLOAD_BINARY_22, args, nodeReader(work)))).toEqual(runNative(OFFLOAD_BINARY_22, OFFLOAD_BINARY_22, args, work));
  });

  it("suggests the same option for random typos (22's option map order)", () => {
    const args = randomTypos(["o", "image", "archive"], 300, 0x22b);
    expect(outcome(parseCommandLine(tool, OFFLOAD_BINARY_22, args))).toEqual(runNative(OFFLOAD_BINARY_22, OFFLOAD_BINARY_22, args, work));
  });
});

/**
 * Deterministic typos of option names (generic ones included): dashes, edits, '=' values and commas, so that
 * ties, grouping (`-h...`), value stealing and ValueDisallowed comparisons all occur. Help and version names
 * are left out (they would end the run), and so are plain names that happen to be hidden LLVM options.
 */
function randomTypos(toolNames: string[], count: number, seed: number): string[] {
  let state = seed >>> 0;
  const random = (limit: number): number => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) % limit;
  };
  const names = [...toolNames, "help", "help-list", "help-hidden", "version", "print-options"];
  const alphabet = [...new Set(names.join("").split(""))];
  const ending = new Set(["help", "help-list", "help-hidden", "help-list-hidden", "version"]);
  const args: string[] = [];
  while (args.length < count) {
    let body = names[random(names.length)]!;
    for (let edits = random(4); edits > 0; edits--) {
      const at = random(body.length + 1);
      const char = alphabet[random(alphabet.length)]!;
      const kind = random(3);
      if (kind === 0) body = body.slice(0, at) + char + body.slice(at);
      else if (kind === 1) body = body.slice(0, at) + body.slice(at + 1);
      else body = body.slice(0, at) + char + body.slice(at + 1);
    }
    if (random(4) === 0) body += `=${random(2) ? "v" : "a,b"}`;
    const name = body.split("=")[0]!;
    if (body === "" || ending.has(name) || (names.includes(name) && !toolNames.includes(name))) continue;
    args.push(["-", "--", "---"][random(3)]! + body);
  }
  return args;
}
