// Issue 24 item 5: an input read whole, or a stream copied to a temporary file, stops at a limit with an error
// naming the file and the limit: `replace --with=/dev/zero` used to read without end (4 GB after 12 s), and any
// input that is a never-ending pipe filled the disk. Whole processes; the limits are lowered through
// OFFLOAD_KIT_MAX_STREAM so each run stops after a few MiB (the defaults, 4 GiB for --with and 16 GiB for other
// streams, are asserted on a sparse file and as constants), and TMPDIR is a folder of the test's, empty after.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { RESPONSE_FILE_LIMIT } from "../../src/cli/io.js";
import { STREAM_LIMIT, streamLimit } from "../../src/node/spool.js";
import { REPLACEMENT_LIMIT } from "../../src/prune/replace.js";
import { scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";
import { bash, leftovers, ours } from "./helpers.js";

const FIXTURES = new URL("../fixtures/", import.meta.url).pathname;
const REPLACE = `${ours("offload-kit")} replace --entry=hip-amdgcn-amd-amdhsa--gfx906 --dry-run`;
const BUNDLE = join(FIXTURES, "bundler/align16.19.bc");

let dir: string;
let tmp: string;
beforeAll(() => {
  dir = scratchDir("offload-kit-bounded-");
  tmp = join(dir, "tmp");
  mkdirSync(tmp);
});

/** Runs `script` with TMPDIR in the test's folder and the stream limit at `limit`; no temporary file may stay. */
function run(script: string, limit?: string) {
  const r = bash(script, dir, { TMPDIR: tmp, ...(limit !== undefined ? { OFFLOAD_KIT_MAX_STREAM: limit } : {}) });
  expect(leftovers(tmp)).toEqual([]);
  return { ...r, stderr: r.stderr.replace(/^\S*offload-kit(?:\.js)? /gm, "offload-kit ") };
}

describe("replace --with is read under a limit", () => {
  it("/dev/zero and /dev/urandom: an error naming the file and the limit, exit 1", () => {
    for (const device of ["/dev/zero", "/dev/urandom"]) {
      const r = run(`${REPLACE} --with=${device} ${BUNDLE}`, "8M");
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(`offload-kit replace: error: '${device}': the replacement (--with) is a stream (pipe, FIFO, device) that gave more than ` +
        "8 MiB (8388608 bytes), the most it may be; it was not read further\n");
    }
  }, HANG_MS);

  it("a FIFO whose writer never stops: the same error, and the writer is let go", () => {
    const r = run(`rm -f fifo; mkfifo fifo; (yes > fifo 2>/dev/null; echo "writer ended $?" > writer.txt) & ${REPLACE} --with=fifo ${BUNDLE}; echo "exit $?"; wait`, "8M");
    expect(r.stdout.toString()).toBe("exit 1\n");
    expect(r.stderr).toBe("offload-kit replace: error: 'fifo': the replacement (--with) is a stream (pipe, FIFO, device) that gave more than " +
      "8 MiB (8388608 bytes), the most it may be; it was not read further\n");
    // `yes` ends by SIGPIPE (141) once the reader is gone: nothing is left reading or writing.
    expect(bash("cat writer.txt", dir).stdout.toString()).toBe("writer ended 141\n");
  }, HANG_MS);

  it("a regular file larger than 4 GiB is refused by its size, before a byte is read", () => {
    expect(REPLACEMENT_LIMIT).toBe(4 * 1024 ** 3);
    const r = run(`truncate -s ${REPLACEMENT_LIMIT + 1} sparse.bin && ${REPLACE} --with=sparse.bin ${BUNDLE}; s=$?; rm -f sparse.bin; exit $s`);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("offload-kit replace: error: 'sparse.bin': the replacement (--with) is 4294967297 bytes, more than 4 GiB (4294967296 bytes), the most it may be\n");
  }, HANG_MS);

  it("OFFLOAD_KIT_MAX_STREAM cannot raise --with's limit, and a stream within it is replaced as a file is", () => {
    expect(streamLimit(REPLACEMENT_LIMIT)).toBe(REPLACEMENT_LIMIT);
    writeFileSync(join(dir, "code.o"), "new code object");
    const piped = run(`cat code.o | ${REPLACE} --with=/dev/stdin ${BUNDLE}`, "unlimited");
    const plain = run(`${REPLACE} --with=code.o ${BUNDLE}`);
    expect([piped.status, piped.stderr]).toEqual([0, ""]);
    expect(piped.stdout.toString()).toBe(plain.stdout.toString());
  }, HANG_MS);
});

describe("every stream is spooled under a limit", () => {
  it("is 16 GiB by default; OFFLOAD_KIT_MAX_STREAM replaces it", () => {
    expect(STREAM_LIMIT).toBe(16 * 1024 ** 3);
    const saved = process.env.OFFLOAD_KIT_MAX_STREAM;
    try {
      delete process.env.OFFLOAD_KIT_MAX_STREAM;
      expect(streamLimit()).toBe(STREAM_LIMIT);
      process.env.OFFLOAD_KIT_MAX_STREAM = "32G";
      expect(streamLimit()).toBe(32 * 1024 ** 3);
      process.env.OFFLOAD_KIT_MAX_STREAM = "lots";
      expect(() => streamLimit()).toThrow("OFFLOAD_KIT_MAX_STREAM='lots' is not a size");
    } finally {
      if (saved === undefined) delete process.env.OFFLOAD_KIT_MAX_STREAM;
      else process.env.OFFLOAD_KIT_MAX_STREAM = saved;
    }
  });

  it("a never-ending pipe as an input (ls -, the bundler's -input): an error at the limit, no temporary file left", () => {
    const ls = run(`yes | ${ours("offload-kit")} ls -`, "4M");
    expect(ls.status).toBe(1);
    expect(ls.stderr).toBe("offload-kit ls: error: '-': the input is a stream (pipe, FIFO, device) that gave more than 4 MiB (4194304 bytes), " +
      "the most it may be; it was not read further (OFFLOAD_KIT_MAX_STREAM sets the limit)\n");
    const bundler = run(`${ours("offload-bundler")} -list -type=bc -input=/dev/zero`, "4M");
    expect(bundler.status).toBe(1);
    expect(bundler.stderr).toMatch(/'\/dev\/zero': the input is a stream \(pipe, FIFO, device\) that gave more than 4 MiB \(4194304 bytes\)/);
  }, HANG_MS);

  it("a response file that never ends (@/dev/zero) stops at the longest string JavaScript holds", () => {
    expect(RESPONSE_FILE_LIMIT).toBe(2 ** 29 - 24);
    const r = run(`${ours("offload-bundler")} @/dev/zero`);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`cannot not open file '/dev/zero': File too large (more than ${RESPONSE_FILE_LIMIT} bytes, the longest text a response file may hold)`);
  }, HANG_MS);
});

// The offload-kit bins exist only after `npm run build`; say so rather than fail obscurely.
beforeAll(() => {
  execFileSync(process.execPath, [join(new URL("../../dist/bin/", import.meta.url).pathname, "offload-kit.js"), "--version"]);
});
