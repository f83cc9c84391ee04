// Unit tests of the cl:: emulation. Expected texts were taken from clang-offload-bundler-19 runs (Debian 19.1.7);
// test/differential/args-native.test.ts re-checks them live and holds the packager model.
import { describe, expect, it } from "vitest";
import {
  editDistance,
  expandResponseFiles,
  formatHelp,
  listValue,
  parseCommandLine,
  parseLlvmInt,
  parseLlvmUnsigned,
  programName,
  tokenizeGnuCommandLine,
  type ParseResult,
  type ResponseFileReader,
  type ToolSpec,
} from "../../src/cli/args.js";
import { BUNDLER_OPTIONS, bundlerToolSpec } from "../../src/cli/offload-bundler-options.js";

const B = "clang-offload-bundler-19";
const bundler = bundlerToolSpec("Debian clang-offload-bundler version 19.1.7 (3~deb12u1)\n");

function parse(...args: string[]): ParseResult {
  return parseCommandLine(bundler, B, args);
}

function ok(result: ParseResult): Extract<ParseResult, { kind: "ok" }> {
  if (result.kind !== "ok") throw new Error(`expected a successful parse, got exit ${result.code}: ${result.stderr}`);
  return result;
}

function failure(result: ParseResult): string {
  expect(result).toMatchObject({ kind: "exit", code: 1, stdout: "" });
  return result.kind === "exit" ? result.stderr : "";
}

const MISSING_TYPE = `${B}: for the --type option: must be specified at least once!\n`;
const unknown = (arg: string, suggestion?: string): string =>
  `${B}: Unknown command line argument '${arg}'.  Try: '${B} --help'\n` + (suggestion ? `${B}: Did you mean '${suggestion}'?\n` : "");

describe("option spellings", () => {
  it.each([
    [["-type=bc"]],
    [["--type=bc"]],
    [["-type", "bc"]],
    [["--type", "bc"]],
  ])("%j sets -type", (args) => {
    const result = ok(parse(...args));
    expect(result.values.type).toBe("bc");
    expect(result.occurrences.type).toBe(1);
    expect(result.stderr).toBe("");
  });

  it("keeps the last value of a repeated cl::opt (LLVM 15+)", () => {
    const result = ok(parse("-type=bc", "-type=i"));
    expect(result.values.type).toBe("i");
    expect(result.occurrences.type).toBe(2);
  });

  it("rejects a repeated cl::opt under LLVM 14 rules, and keeps parsing", () => {
    const legacy: ToolSpec = { ...bundler, singleOccurrence: true };
    expect(failure(parseCommandLine(legacy, B, ["-type=bc", "-type=i", "-list", "-list"]))).toBe(
      `${B}: for the --type option: must occur exactly one time!\n${B}: for the --list option: may only occur zero or one times!\n`,
    );
  });

  it("takes the next argument as the value even when it looks like an option", () => {
    expect(ok(parse("-type", "--help")).values.type).toBe("--help");
  });

  it("gives defaults to options not given", () => {
    const { values, occurrences } = ok(parse("-type=bc"));
    expect(values).toMatchObject({ "bundle-align": 1, "compression-level": 0, list: false, input: [], targets: [] });
    expect(occurrences["bundle-align"]).toBe(0);
  });
});

describe("boolean flags", () => {
  it.each([
    ["-list", true],
    ["--list", true],
    ["-list=", true],
    ["-list=true", true],
    ["-list=TRUE", true],
    ["-list=True", true],
    ["-list=1", true],
    ["-list=false", false],
    ["-list=FALSE", false],
    ["-list=False", false],
    ["-list=0", false],
  ])("%s gives %s", (arg, expected) => {
    expect(ok(parse("-type=bc", arg)).values.list).toBe(expected);
  });

  it("rejects other values with LLVM's wording", () => {
    expect(failure(parse("-type=bc", "-list=maybe"))).toBe(
      `${B}: for the --list option: 'maybe' is invalid value for boolean argument! Try 0 or 1\n`,
    );
  });

  it("does not take the next argument as its value", () => {
    expect(failure(parse("-type=bc", "-list", "0"))).toBe(unknown("0"));
  });
});

describe("lists and comma splitting", () => {
  it("accumulates, splitting every occurrence at commas", () => {
    const result = ok(parse("-type=bc", "-targets=a,b", "-targets", "c"));
    expect(listValue(result.values, "targets")).toEqual(["a", "b", "c"]);
    // Each comma-separated piece is an occurrence (getNumOccurrences() counts 3).
    expect(result.occurrences.targets).toBe(3);
  });

  it("keeps empty pieces", () => {
    expect(ok(parse("-type=bc", "-targets=a,,b,")).values.targets).toEqual(["a", "", "b", ""]);
  });

  it("splits -inputs but not -input", () => {
    const result = ok(parse("-type=bc", "-inputs=a,b", "-input=c,d"));
    expect(result.values.inputs).toEqual(["a", "b"]);
    expect(result.values.input).toEqual(["c,d"]);
  });
});

describe("numbers", () => {
  it.each([
    ["16", 16],
    ["0x10", 16],
    ["0X10", 16],
    ["0b101", 5],
    ["0B101", 5],
    ["0o17", 15],
    ["010", 8],
    ["0", 0],
    ["4294967295", 4294967295],
  ])("uint %s is %d", (text, expected) => {
    expect(parseLlvmUnsigned(text)).toBe(expected);
    expect(ok(parse("-type=bc", `-bundle-align=${text}`)).values["bundle-align"]).toBe(expected);
  });

  it.each(["x", "-1", "08", "0O7", "", "0x", "0b12", "+5", " 5", "4294967296", "18446744073709551616", "1e3"])(
    "uint %j is rejected",
    (text) => {
      expect(parseLlvmUnsigned(text)).toBeUndefined();
      expect(failure(parse("-type=bc", `-bundle-align=${text}`))).toBe(
        `${B}: for the --bundle-align option: '${text}' value invalid for uint argument!\n`,
      );
    },
  );

  it.each([
    ["-0x10", -16],
    ["-2147483648", -2147483648],
    ["2147483647", 2147483647],
    ["-0", 0],
  ])("int %s is %d", (text, expected) => {
    expect(parseLlvmInt(text)).toBe(expected);
    expect(ok(parse("-type=bc", `-compression-level=${text}`)).values["compression-level"]).toBe(expected);
  });

  it.each(["abc", "2147483648", "-2147483649", "99999999999", "--5", ""])("int %j is rejected", (text) => {
    expect(failure(parse("-type=bc", `-compression-level=${text}`))).toBe(
      `${B}: for the --compression-level option: '${text}' value invalid for integer argument!\n`,
    );
  });
});

describe("errors", () => {
  it("reports an unknown option, the nearest one, then the missing required option", () => {
    expect(failure(parse("-foo"))).toBe(unknown("-foo", "--###") + MISSING_TYPE);
    expect(failure(parse("--foo"))).toBe(unknown("--foo", "--###") + MISSING_TYPE);
  });

  it("names the program by its basename but repeats argv[0] in the hint", () => {
    const result = parseCommandLine(bundler, "/usr/bin/clang-offload-bundler-19", ["-type=bc", "-foo"]);
    expect(failure(result)).toBe(
      `${B}: Unknown command line argument '-foo'.  Try: '/usr/bin/clang-offload-bundler-19 --help'\n${B}: Did you mean '--###'?\n`,
    );
  });

  it("suggests with the value when the option takes one", () => {
    expect(failure(parse("---type=bc"))).toBe(unknown("---type=bc", "--type=bc") + MISSING_TYPE);
    expect(failure(parse("-=x"))).toBe(unknown("-=x", "--###=x") + MISSING_TYPE);
  });

  it("compares the whole text, '=' included, with options that take no value", () => {
    expect(failure(parse("-type=bc", "--versio"))).toBe(unknown("--versio", "--version"));
  });

  it("reports a missing value", () => {
    expect(failure(parse("-type"))).toBe(`${B}: for the --type option: requires a value!\n` + MISSING_TYPE);
    expect(failure(parse("-type=bc", "-targets"))).toBe(`${B}: for the --targets option: requires a value!\n`);
  });

  it("gives no suggestion for a stray positional, '-' or anything after '--'", () => {
    expect(failure(parse("-type=bc", "stray"))).toBe(unknown("stray"));
    expect(failure(parse("-"))).toBe(unknown("-") + MISSING_TYPE);
    expect(failure(parse("-type=bc", "--", "-foo", "--"))).toBe(unknown("-foo") + unknown("--"));
    expect(failure(parse("-type=bc", ""))).toBe(unknown(""));
  });

  it("rejects values on options declared ValueDisallowed", () => {
    expect(failure(parse("--help=1"))).toBe(`${B}: for the --help option: does not allow a value! '1' specified.\n` + MISSING_TYPE);
  });

  it("breaks ties between equally near options by the native map order", () => {
    expect(failure(parse("-type=bc", "--lis"))).toBe(unknown("--lis", "--list"));
    // "inputx" is one edit from both "input" and "inputs"; input comes first in the 19 map.
    expect(failure(parse("-type=bc", "--inputx"))).toBe(unknown("--inputx", "--input"));
    const reversed: ToolSpec = { ...bundler, mapOrder: ["inputs", "input"] };
    expect(failure(parseCommandLine(reversed, B, ["-type=bc", "--inputx"]))).toBe(unknown("--inputx", "--inputs"));
  });
});

describe("grouping of one-letter options", () => {
  it("reads -hh as -h -h", () => {
    const result = parse("-hh", "-type=bc");
    expect(result).toMatchObject({ kind: "exit", code: 0, stderr: "" });
  });

  it("suggests for the unconsumed rest of a group", () => {
    // -h is consumed from "hfoo", so the suggestion is for "foo"; for "--hel" it is for "el".
    expect(failure(parse("-hfoo"))).toBe(unknown("-hfoo", "--###") + MISSING_TYPE);
    expect(failure(parse("-type=bc", "--hel"))).toBe(unknown("--hel", "--help"));
  });
});

describe("help and version", () => {
  it("--help prints categorized help and exits 0, even after errors", () => {
    const result = parse("-foo", "--help");
    expect(result).toMatchObject({ kind: "exit", code: 0, stderr: unknown("-foo", "--###") });
    expect(result.kind === "exit" && result.stdout).toBe(formatHelp(bundler, B, { categorized: true, showHidden: false }));
  });

  it("stops at --help: later arguments are never looked at", () => {
    expect(parse("--help", "-foo")).toMatchObject({ kind: "exit", code: 0, stderr: "" });
  });

  it.each([
    ["--help-hidden", true, true],
    ["-help-list", false, false],
    ["--help-list-hidden", false, true],
  ])("%s", (arg, categorized, showHidden) => {
    expect(parse(arg)).toEqual({ kind: "exit", code: 0, stderr: "", stdout: formatHelp(bundler, B, { categorized, showHidden }) });
  });

  it("-h is the bundler's own hidden flag: help list after a successful parse only", () => {
    expect(parse("-type=bc", "-h")).toEqual({
      kind: "exit",
      code: 0,
      stderr: "",
      stdout: formatHelp(bundler, B, { categorized: false, showHidden: false }),
    });
    expect(failure(parse("-h"))).toBe(MISSING_TYPE);
    expect(ok(parse("-type=bc", "-h=0")).values.h).toBe(false);
  });

  it("--version prints the caller's text", () => {
    expect(parse("-bundle-align=x", "--version")).toEqual({
      kind: "exit",
      code: 0,
      stdout: "Debian clang-offload-bundler version 19.1.7 (3~deb12u1)\n",
      stderr: `${B}: for the --bundle-align option: 'x' value invalid for uint argument!\n`,
    });
  });

  it("lays out the bundler's help as LLVM does", () => {
    const help = formatHelp(bundler, "/usr/bin/clang-offload-bundler-19", { categorized: true, showHidden: false });
    expect(help).toContain("USAGE: clang-offload-bundler-19 [options]\n\nOPTIONS:\n\nGeneric Options:\n\n");
    expect(help).toContain("  --help-list             - Display list of available options (--help-list-hidden for more)\n");
    expect(help).toContain("\nclang-offload-bundler options:\n\n  --###                   - Print any");
    expect(help).toContain("  --compression-level=<n> - Specify the compression level (integer)\n");
    expect(help).toContain("  --type=<string>         - Type of the files to be bundled/unbundled.\n                            Current supported types are:\n");
    expect(help).not.toContain("--print-options");
    expect(help).not.toContain("Alias for -help");
    const list = formatHelp(bundler, B, { categorized: false, showHidden: false });
    expect(list).not.toContain("Generic Options");
    expect(list).not.toContain("--help-list ");
  });

  it("lays out enum options and their values (llvm-offload-wrapper-22 --kind)", () => {
    const wrapper: ToolSpec = {
      overview: "Generate runtime registration code for a device binary image\n",
      version: "V\n",
      options: [
        {
          name: "kind",
          kind: "enum",
          required: true,
          description: "Wrap for offload kind:",
          category: "llvm-offload-wrapper options",
          values: [
            { name: "openmp", description: "Wrap OpenMP binaries" },
            { name: "cuda", description: "Wrap CUDA binaries" },
            { name: "hip", description: "Wrap HIP binaries" },
          ],
        },
      ],
    };
    const help = formatHelp(wrapper, "w", { categorized: true, showHidden: true });
    expect(help).toContain(
      "\nllvm-offload-wrapper options:\n\n" +
        "  --kind=<value>      - Wrap for offload kind:\n" +
        "    =openmp           -   Wrap OpenMP binaries\n" +
        "    =cuda             -   Wrap CUDA binaries\n" +
        "    =hip              -   Wrap HIP binaries\n",
    );
    expect(ok(parseCommandLine(wrapper, "w", ["--kind=hip"])).values.kind).toBe("hip");
    expect(failure(parseCommandLine(wrapper, "w", ["--kind", "sycl"]))).toBe("w: for the --kind option: Cannot find option named 'sycl'!\n");
    expect(failure(parseCommandLine(wrapper, "w", []))).toBe("w: for the --kind option: must be specified at least once!\n");
  });

  it("prints blank continuation lines and aliases", () => {
    const tool: ToolSpec = {
      overview: "",
      version: "",
      options: [
        { name: "xy", kind: "flag", description: "first\n\nthird\n", aliases: [{ name: "z", description: "Alias for --xy" }] },
      ],
    };
    const help = formatHelp(tool, "t", { categorized: false, showHidden: false });
    expect(help).toBe(
      "USAGE: t [options]\n\nOPTIONS:\n" +
        "  --help    - Display available options (--help-hidden for more)\n" +
        "  --version - Display the version of this program\n" +
        "  --xy      - first\n" +
        "              \n" +
        "              third\n" +
        "  -z        - Alias for --xy\n",
    );
    const result = ok(parseCommandLine(tool, "t", ["-z"]));
    expect(result.values.xy).toBe(true);
    expect(result.occurrences.xy).toBe(1);
  });
});

describe("positional arguments", () => {
  it("reports missing required positionals before missing options", () => {
    const tool: ToolSpec = {
      overview: "",
      version: "",
      options: [
        { name: "input", kind: "string", positional: true, required: true, description: "<input file>" },
        { name: "kind", kind: "string", required: true, description: "k" },
      ],
    };
    expect(failure(parseCommandLine(tool, "w", []))).toBe(
      "w: Not enough positional command line arguments specified!\nMust specify at least 1 positional argument: See: w --help\n" +
        "w: for the --kind option: must be specified at least once!\n",
    );
  });

  it("gives list positionals what required ones leave", () => {
    const tool: ToolSpec = {
      overview: "",
      version: "",
      options: [
        { name: "first", kind: "string", positional: true, required: true, description: "<first>" },
        { name: "rest", kind: "string", positional: true, list: true, description: "<rest>..." },
        { name: "n", kind: "uint", positional: true, required: true, description: "<n>" },
      ],
    };
    expect(ok(parseCommandLine(tool, "t", ["a", "b", "c", "7"])).values).toMatchObject({ first: "a", rest: ["b", "c"], n: 7 });
    // A bad positional value is printed (named by its description) but, as in LLVM, does not fail the parse.
    const result = ok(parseCommandLine(tool, "t", ["a", "x"]));
    expect(result.values).toMatchObject({ first: "a", rest: [], n: 0 });
    expect(result.stderr).toBe("<n> option: 'x' value invalid for uint argument!\n");
  });
});

describe("response files", () => {
  function reader(files: Record<string, string | Uint8Array | { error: string }>, cwd = "/work"): ResponseFileReader {
    // The file system resolves "." components, as stat() does.
    return { cwd, readFile: (path) => files[path.replaceAll("/./", "/")] };
  }

  it("tokenizes like TokenizeGNUCommandLine", () => {
    expect(tokenizeGnuCommandLine(`-type=bc -foo "a b" 'c d' e\\ f g\\\\h "x\\"y" -zz\n`)).toEqual([
      "-type=bc",
      "-foo",
      "a b",
      "c d",
      "e f",
      "g\\h",
      'x"y',
      "-zz",
    ]);
    expect(tokenizeGnuCommandLine(`-a'b'c"d"e ''  "" ab\\`)).toEqual(["-abcde", "ab\\"]);
    expect(tokenizeGnuCommandLine(`"unterminated`)).toEqual(["unterminated"]);
    expect(tokenizeGnuCommandLine("a\tb\r\nc\vd")).toEqual(["a", "b", "c\vd"]);
  });

  it("expands @file anywhere, even after -- and as an option's value", () => {
    const files = { "/work/r": "-qq" };
    expect(expandResponseFiles(["-type=bc", "--", "@r", "-input", "@r"], reader(files))).toEqual({
      args: ["-type=bc", "--", "-qq", "-input", "-qq"],
    });
    const result = parseCommandLine(bundler, B, ["-input", "@r", "-type=bc"], reader(files));
    expect(ok(result).values.input).toEqual(["-qq"]);
  });

  it("keeps @file when the file does not exist", () => {
    expect(failure(parseCommandLine(bundler, B, ["@nonexist"], reader({})))).toBe(unknown("@nonexist") + MISSING_TYPE);
  });

  it("does not expand without a reader", () => {
    expect(failure(parseCommandLine(bundler, B, ["-type=bc", "@r"]))).toBe(unknown("@r"));
  });

  it("resolves nested names against the current directory", () => {
    const files = { "/work/sub/outer": "@inner", "/work/inner": "-fromcwd", "/work/sub/inner": "-fromsub" };
    expect(expandResponseFiles(["@sub/outer", "@/work/inner"], reader(files))).toEqual({ args: ["-fromcwd", "-fromcwd"] });
  });

  it("expands the same file twice in a row but not inside itself", () => {
    const files = { "/work/c": "-x1", "/work/a": "@b", "/work/b": "@a", "/work/self": "@self" };
    expect(expandResponseFiles(["@c", "@c"], reader(files))).toEqual({ args: ["-x1", "-x1"] });
    expect(expandResponseFiles(["@a"], reader(files))).toEqual({ error: "recursive expansion of: '/work/a'" });
    expect(expandResponseFiles(["@./self"], reader(files))).toEqual({ error: "recursive expansion of: '/work/./self'" });
  });

  it("on a read failure prints the error and parses nothing, without stopping the tool", () => {
    const result = parseCommandLine(bundler, B, ["-type=bc", "@dir"], reader({ "/work/dir": { error: "Is a directory" } }));
    expect(result).toMatchObject({ kind: "ok", stderr: "cannot not open file '/work/dir': Is a directory\n" });
    expect(ok(result).values).toMatchObject({ type: "", list: false });
    // "@" alone names the current directory itself.
    expect(expandResponseFiles(["@"], reader({ "/work": { error: "Is a directory" } }))).toEqual({
      error: "cannot not open file '/work': Is a directory",
    });
  });

  it("drops byte order marks and reads UTF-16", () => {
    const utf8Bom = new Uint8Array([0xef, 0xbb, 0xbf, 0x2d, 0x62]);
    const utf16le = new Uint8Array([0xff, 0xfe, 0x2d, 0x00, 0x63, 0x00]);
    const files = { "/work/a": utf8Bom, "/work/b": utf16le, "/work/c": "\ufeff-d" };
    expect(expandResponseFiles(["@a", "@b", "@c"], reader(files))).toEqual({ args: ["-b", "-c", "-d"] });
  });
});

describe("helpers", () => {
  it("computes Levenshtein distance", () => {
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("###", "foo")).toBe(3);
    expect(editDistance("help", "el")).toBe(2);
  });

  it("takes the basename of argv[0] like sys::path::filename", () => {
    expect(programName("/usr/bin/tool")).toBe("tool");
    expect(programName("tool")).toBe("tool");
    expect(programName("dir/")).toBe(".");
    expect(programName("/")).toBe("/");
  });

  it("declares every clang-offload-bundler 19 option", () => {
    expect(BUNDLER_OPTIONS.map((option) => option.name).sort()).toEqual(
      [
        "###",
        "allow-missing-bundles",
        "bundle-align",
        "check-input-archive",
        "compress",
        "compression-level",
        "h",
        "hip-openmp-compatible",
        "input",
        "inputs",
        "list",
        "output",
        "outputs",
        "targets",
        "type",
        "unbundle",
        "verbose",
      ].sort(),
    );
  });
});
