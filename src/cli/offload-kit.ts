/**
 * `offload-kit`: our own front door. One module per subcommand in src/cli/kit/; each takes
 * LLVM-style options (`-opt=v`, `--opt=v`, `--opt v`) like the drop-in tools and prints a table for
 * people or `--json` for pipelines. Adding a subcommand = one file + one line in COMMANDS.
 */
import { parseCommandLine } from "./args.js";
import type { CliIO } from "./io.js";
import { printError, responseFileReader } from "./io.js";
import type { Subcommand } from "./kit/common.js";
import { VERSION_TEXT } from "./kit/common.js";
import { check } from "./kit/check.js";
import { compress } from "./kit/compress.js";
import { decompress } from "./kit/decompress.js";
import { extract } from "./kit/extract.js";
import { ls } from "./kit/ls.js";
import { prune } from "./kit/prune.js";
import { serve } from "./kit/serve.js";
import { sizes } from "./kit/sizes.js";
import { unbundle } from "./kit/unbundle.js";

const COMMANDS: Record<string, Subcommand> = { ls, unbundle, check, extract, sizes, serve, prune, compress, decompress };

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length)) + 2;
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}${c.summary}`);
  return (
    "offload-kit: inspect, check, extract and prune LLVM offloading files\n\n" +
    "USAGE: offload-kit <command> [options] FILE...\n\nCOMMANDS:\n" +
    `${lines.join("\n")}\n  ${"version".padEnd(width)}Print the version.\n\n` +
    "Run 'offload-kit <command> --help' for a command's options.\n"
  );
}

export async function runOffloadKit(argv0: string, args: readonly string[], io: CliIO, isTTY = false): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined || command === "help" || command === "--help" || command === "-help" || command === "-h") {
    io.stdout(usage());
    return command === undefined ? 1 : 0;
  }
  if (command === "version" || command === "--version" || command === "-version") {
    io.stdout(VERSION_TEXT);
    return 0;
  }
  const subcommand = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (subcommand === undefined) {
    printError(io, argv0, `unknown command '${command}' (see '${argv0} --help')`);
    return 1;
  }
  const name = `${argv0} ${command}`;
  const parsed = parseCommandLine(subcommand.spec(), name, rest, responseFileReader(io.cwd));
  if (parsed.kind === "exit") {
    if (parsed.stdout) io.stdout(parsed.stdout);
    if (parsed.stderr) io.stderr(parsed.stderr);
    return parsed.code;
  }
  if (parsed.stderr) io.stderr(parsed.stderr);
  return subcommand.run(parsed.values, { name, io, isTTY });
}
