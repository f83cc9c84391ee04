// Issue 19, item 4: a closed standard output (`| head`) ends the run quietly, by SIGPIPE, as it ends `ls` and
// clang-offload-bundler: no message, and the status bash records in PIPESTATUS is the one `ls` gets there
// (141, 128 + SIGPIPE). Before, `offload-kit ls LIB | head -3` printed `error: '-': EPIPE` and exited 1.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { latin1Encode } from "../../src/formats/bytes.js";
import { scratchDir } from "../cli/harness.js";
import { bash, native, ours } from "./helpers.js";

let dir: string;
beforeAll(() => {
  dir = scratchDir("offload-kit-epipe-");
  // 20,000 entries: listings of several hundred KiB, far more than a pipe holds, so the reader's exit is seen.
  const entries = Array.from({ length: 20_000 }, (_, i) => ({ id: `hip-amdgcn-amd-amdhsa--gfx${900 + (i % 100)}-entry-${i}`, data: latin1Encode("x") }));
  writeFileSync(join(dir, "many.bc"), writeBinaryBundle(entries));
});

/** `command | head -n 1`: what head printed, the command's PIPESTATUS and its stderr. */
function intoHead(command: string, env: Record<string, string> = {}): { firstLine: string; status: string; stderr: string } {
  const run = bash(`{ ${command} 2> err.txt; } | head -n 1; echo "status=\${PIPESTATUS[0]}"; cat err.txt`, dir, env);
  const [firstLine = "", status = "", ...rest] = run.stdout.toString("utf8").split("\n");
  return { firstLine, status, stderr: rest.join("\n") };
}

describe("a closed standard output", () => {
  it("coreutils ls, the reference: killed by SIGPIPE, 141", () => {
    expect(intoHead("ls -laR /usr").status).toBe("status=141");
  });

  it.each([
    // -v: the summary of one file is one line, too little to meet the closed pipe; the entry rows are many.
    ["offload-kit ls -v", `${ours("offload-kit")} ls -v many.bc`],
    ["offload-kit ls --json", `${ours("offload-kit")} ls --json many.bc`],
    ["offload-kit sizes --json", `${ours("offload-kit")} sizes --json many.bc`],
    ["offload-kit check -v", `${ours("offload-kit")} check -v --gpu=gfx906 many.bc`],
    ["offload-bundler -list", `${ours("offload-bundler")} -list -type=bc -input=many.bc`],
  ])("%s: no message, status 141 as ls (inline and supervised)", (_, command) => {
    // A small input runs on the main thread (src/process/launch.ts); OFFLOAD_KIT_INLINE_BYTES=0 forces the worker.
    for (const env of [{}, { OFFLOAD_KIT_INLINE_BYTES: "0" }] as Record<string, string>[]) {
      const result = intoHead(command, env);
      expect(result.firstLine).not.toBe("");
      expect(result.stderr).toBe("");
      expect(result.status).toBe("status=141");
    }
  });

  it("clang-offload-bundler-19 -list, when installed: the same status and silence", () => {
    const tool = native("clang-offload-bundler-19");
    if (tool === undefined) return;
    const theirs = intoHead(`${tool} -list -type=bc -input=many.bc`);
    const mine = intoHead(`${ours("offload-bundler")} -list -type=bc -input=many.bc`);
    expect({ status: mine.status, stderr: mine.stderr }).toEqual({ status: theirs.status, stderr: theirs.stderr });
  });

  // Node 22.1+ keeps its compile cache (module.enableCompileCache in the bins) in TMPDIR: Node's, not a spool.
  it("a spooled standard input is removed when the pipe closes", () => {
    const tmp = scratchDir("offload-kit-epipe-tmp-");
    const run = bash(`cat many.bc | ${ours("offload-bundler")} -list -type=bc -input=- | head -n 1 > /dev/null; echo "\${PIPESTATUS[1]}"; ls -A ${tmp} | grep -vx node-compile-cache`, dir, { TMPDIR: tmp });
    expect(run.stdout.toString()).toBe("141\n");
  });
});
