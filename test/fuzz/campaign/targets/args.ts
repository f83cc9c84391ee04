/**
 * LLVM option parsing (src/cli/args.ts) for offload-bundler and offload-packager: argument vectors with
 * response files (nested, recursive, unreadable, BOMs, UTF-16), and the GNU tokenizer. Input layout:
 * arguments separated by NUL, then 0x01 and the contents of response file `a`, 0x01 and file `b`.
 * Round trip: quoting any token list and tokenizing it again gives the same tokens.
 */
import { parseCommandLine, tokenizeGnuCommandLine } from "../../../../src/cli/args.js";
import type { ResponseFileReader } from "../../../../src/cli/args.js";
import { bundlerToolSpec } from "../../../../src/cli/offload-bundler-options.js";
import { packagerToolSpec } from "../../../../src/cli/offload-packager-options.js";
import type { Rand } from "../rand.js";
import { concat } from "../sample.js";
import type { Sample } from "../sample.js";
import type { FuzzTarget } from "../target.js";

const OPTIONS = ["-type=", "-targets=", "-input=", "-output=", "-inputs=", "-outputs=", "-unbundle", "-list", "-allow-missing-bundles",
  "-bundle-align=", "-check-input-archive", "-hip-openmp-compatible", "-compress", "-compression-level=", "-verbose", "-###", "--help",
  "-help-hidden", "--help-list", "--version", "--", "-", "-o", "--image=", "file=", "kind=", "triple=", "arch=", "@a", "@b", "@d", "@/w/a",
  "@missing", "--archive", "-type", "bc", "hip-amdgcn-amd-amdhsa--gfx906", "host-x86_64-unknown-linux-gnu", ",", "=", "0", "-1",
  "4294967296", "0x10", "--compress=false", "-targets", "-inputs", "--", "\\", "\"", "'", " ", "\ufeff", "\n"];

const BUNDLER = bundlerToolSpec("19.1.7");
const BUNDLER_22 = bundlerToolSpec("22.1.8", 22);
const PACKAGER = packagerToolSpec("19.1.7");

function split(input: Uint8Array): { args: string[]; files: Uint8Array[] } {
  const parts: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i <= input.length; i++) {
    if (i === input.length || (input[i] === 1 && parts.length < 2)) {
      parts.push(input.subarray(start, i));
      start = i + 1;
    }
  }
  const text = new TextDecoder("latin1").decode(parts[0]);
  return { args: text === "" ? [] : text.split("\0"), files: parts.slice(1) };
}

function reader(files: Uint8Array[]): ResponseFileReader {
  return {
    cwd: "/w",
    readFile(path) {
      if (path === "/w/a") return files[0];
      if (path === "/w/b") return files[1];
      if (path === "/w/d") return { error: "Is a directory" };
      return undefined;
    },
  };
}

function argsSample(r: Rand): Sample {
  const arg = () => {
    const option = r.pick(OPTIONS);
    return option.endsWith("=") ? option + r.pick(["bc", "o", "a", "hip-amdgcn-amd-amdhsa--gfx906,host-x86_64-unknown-linux-gnu", "x", "", "8", "@a"]) : option;
  };
  const latin1 = (text: string) => new TextEncoder().encode(text);
  const args = Array.from({ length: r.int(8) }, arg).join("\0");
  const file = () => latin1(Array.from({ length: r.int(5) }, arg).map((a) => (r.bool(0.3) ? `"${a}"` : a)).join(r.pick([" ", "\n", "\t"])));
  return { bytes: concat(latin1(args), Uint8Array.of(1), file(), Uint8Array.of(1), file()), fields: [] };
}

/** Quotes a token for the GNU tokenizer: double quotes, backslash before '\' and '"'. */
function quote(token: string): string {
  return `"${token.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

export const argsTarget: FuzzTarget = {
  name: "args",
  about: "LLVM cl:: option parsing (offload-bundler 19/22, offload-packager) with response files, GNU tokenizer",
  engines: false,
  sources: false,
  dictionary: OPTIONS,
  generate: argsSample,
  run(input) {
    const { args, files } = split(input);
    const read = reader(files);
    return {
      bundler: parseCommandLine(BUNDLER, "offload-bundler", args, read),
      bundler22: parseCommandLine(BUNDLER_22, "offload-bundler", args, read),
      packager: parseCommandLine(PACKAGER, "offload-packager", args, read),
      tokens: tokenizeGnuCommandLine(new TextDecoder("latin1").decode(files[0] ?? new Uint8Array(0))),
    };
  },
  roundTrip(input) {
    const { files } = split(input);
    const tokens = tokenizeGnuCommandLine(new TextDecoder("latin1").decode(files[0] ?? new Uint8Array(0)));
    const again = tokenizeGnuCommandLine(tokens.map(quote).join(" "));
    return JSON.stringify(again) === JSON.stringify(tokens) ? undefined : `tokens ${JSON.stringify(tokens)} re-tokenize as ${JSON.stringify(again)}`;
  },
};
