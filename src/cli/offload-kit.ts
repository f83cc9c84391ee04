/**
 * `offload-kit`: our own front door. One module per subcommand in src/cli/kit/; each takes
 * LLVM-style options (`-opt=v`, `--opt=v`, `--opt v`) like the drop-in tools and prints a table for
 * people or `--json` for pipelines. Adding a subcommand = one file + one line in COMMANDS.
 */
import { parseCommandLine } from "./args.js";
import type { CliIO } from "./io.js";
import { printError, responseFileReader } from "./io.js";
import type { Subcommand } from "./kit/common.js";
import { EXIT_USAGE, VERSION_TEXT, detachedInputMessage, examplesHelp, usageError } from "./kit/common.js";
import { check } from "./kit/check.js";
import { completionCommand } from "./kit/completion.js";
import { compress } from "./kit/compress.js";
import { decompress } from "./kit/decompress.js";
import { replace } from "./kit/replace.js";
import { extract } from "./kit/extract.js";
import { kernels } from "./kit/kernels.js";
import { diff } from "./kit/diff.js";
import { kpack, unkpack } from "./kit/kpack.js";
import { ls } from "./kit/ls.js";
import { prune } from "./kit/prune.js";
import { recover } from "./kit/recover.js";
import { serve } from "./kit/serve.js";
import { sizes } from "./kit/sizes.js";
import { unbundle } from "./kit/unbundle.js";
import { verify } from "./kit/verify.js";

/** Exported for the tests that hold every command to its --help (options described, examples that run). */
export const COMMANDS: Record<string, Subcommand> = { ls, unbundle, check, extract, sizes, serve, prune, compress, decompress, replace, verify, recover, kernels, diff, kpack, unkpack, completion: completionCommand(() => COMMANDS) };

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length)) + 2;
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}${c.summary}`);
  return (
    "offload-kit: inspect, check, extract and prune LLVM offloading files\n\n" +
    "USAGE: offload-kit <command> [options] FILE...\n\nCOMMANDS:\n" +
    `${lines.join("\n")}\n  ${"version".padEnd(width)}Print the version.\n\n` +
    "Run 'offload-kit <command> --help' for a command's options.\n\n" +
    "EXIT STATUS:\n  0   success (check: every input has loadable device code)\n  1   an input could not be read or written, or check's verdict is FAIL\n" +
    "  2   usage error: unknown command, bad option or option value, no input files\n  70  internal error in offload-kit (please report it)\n\n" +
    // The three jobs: see what is inside, will it run here, cut it down.
    examplesHelp([
      { command: "offload-kit ls examples/sample/app.hipfb", what: "See what is inside: the bundles and entries a file holds, and their targets" },
      { command: "offload-kit sizes --by=processor /opt/rocm/lib", what: "Where the bytes go: one line per library, then the bytes per GPU over the folder" },
      { command: "offload-kit check --gpu=gfx90a:xnack- examples/sample/app.hipfb", what: "Will it run here? Exit 0 if a gfx90a with xnack off can load code in the file (no --gpu: this machine's GPUs)" },
      { command: "offload-kit prune --keep=gfx90a -o app.gfx90a.hipfb examples/sample/app.hipfb", what: "Cut it down: keep only the code a gfx90a loads, into a new file" },
      { command: "offload-kit compress --in-place lib/libfoo.so", what: "Cut it down more: compress the library's bundles as clang --offload-compress does" },
    ])
  );
}

export async function runOffloadKit(argv0: string, args: readonly string[], io: CliIO, isTTY = false): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined || command === "help" || command === "--help" || command === "-help" || command === "-h") {
    // Asked for, the usage goes to stdout; as the answer to a bare `offload-kit` it is a usage error.
    if (command === undefined) {
      io.stderr(usage());
      return EXIT_USAGE;
    }
    io.stdout(usage());
    return 0;
  }
  if (command === "version" || command === "--version" || command === "-version") {
    io.stdout(VERSION_TEXT);
    return 0;
  }
  const subcommand = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (subcommand === undefined) {
    printError(io, argv0, `unknown command '${command}' (see '${argv0} --help')`);
    return EXIT_USAGE;
  }
  const name = `${argv0} ${command}`;
  const parsed = parseCommandLine(subcommand.spec(), name, rest, responseFileReader(io.cwd));
  if (parsed.kind === "exit") {
    if (parsed.stdout) io.stdout(parsed.stdout);
    if (parsed.stderr) io.stderr(parsed.stderr);
    // cl::ParseCommandLineOptions ends a bad command line with 1, as the LLVM tools do; ours is a usage error.
    return parsed.code === 0 ? 0 : EXIT_USAGE;
  }
  if (parsed.stderr) io.stderr(parsed.stderr);
  const taken = detachedInputMessage(parsed.detached, io.cwd);
  if (taken !== undefined) return usageError(io, name, taken);
  return subcommand.run(parsed.values, { name, io, isTTY });
}
