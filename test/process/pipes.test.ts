// Issue 19, item 1: inputs that are not regular files (a pipe as /dev/stdin, a FIFO, bash's `<(...)`) are read
// as streams, to their end, by every tool: the same listing and the same output bytes as the native tools give
// for the same command, and as ours give for the regular file. Before, their size came from fstat (0): -list
// printed nothing, the wrapper wrapped `[0 x i8]`, the packager wrote 144 bytes.
import { copyFileSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { scratchDir } from "../cli/harness.js";
import { bash, native, ours, quote } from "./helpers.js";

const FIXTURES = new URL("../fixtures/", import.meta.url).pathname;
const GFX906 = "hip-amdgcn-amd-amdhsa--gfx906";
const HOST = "host-x86_64-unknown-linux-gnu";

/** How a file reaches the tool: a shell prefix to run first, and the path the tool is given. */
const FORMS: Record<string, (file: string) => { prefix: string; path: string }> = {
  "process substitution": (file) => ({ prefix: "", path: `<(cat ${file})` }),
  "a pipe as /dev/stdin": (file) => ({ prefix: `cat ${file} | `, path: "/dev/stdin" }),
  "a FIFO": (file) => ({ prefix: `rm -f fifo; mkfifo fifo; (cat ${file} > fifo &); `, path: "fifo" }),
};

let dir: string;
beforeAll(() => {
  dir = scratchDir("offload-kit-pipes-");
  copyFileSync(join(FIXTURES, "bundler/align16.19.bc"), join(dir, "a.bc"));
  copyFileSync(join(FIXTURES, "bundler/in-host.txt"), join(dir, "host.txt"));
  copyFileSync(join(FIXTURES, "bundler/in-dev.txt"), join(dir, "dev.txt"));
  const image = new Uint8Array(1234);
  for (let i = 0; i < image.length; i++) image[i] = (i * 131 + 7) & 0xff;
  writeFileSync(join(dir, "x.bin"), image);
});

/** Runs `command(path)` with `file` streamed in `form`; returns stdout and the file `output` (when given). */
function streamed(form: string, file: string, command: (path: string) => string, output?: string): { stdout: string; bytes?: Buffer } {
  const { prefix, path } = FORMS[form]!(file);
  if (output !== undefined) bash(`rm -rf ${quote(output)}`, dir);
  const run = bash(`${prefix}(${command(path)})`, dir);
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  return { stdout: run.stdout.toString("latin1"), ...(output !== undefined ? { bytes: readFileSync(join(dir, output)) } : {}) };
}

/** The file `ref.o` a command makes from the regular file. */
function regular(command: string): Buffer {
  const run = bash(`rm -f ref.o && ${command}`, dir);
  expect(run.status, run.stderr).toBe(0);
  return readFileSync(join(dir, "ref.o"));
}

describe.each(Object.keys(FORMS))("%s", (form) => {
  it("offload-bundler -list and -unbundle: what clang-offload-bundler-19 gives", () => {
    const list = (tool: string) => (path: string) => `${tool} -list -type=bc -input=${path}`;
    const unbundle = (tool: string, out: string) => (path: string) => `${tool} -unbundle -type=bc -input=${path} -targets=${GFX906} -output=${out}`;
    const mine = streamed(form, "a.bc", list(ours("offload-bundler")));
    expect(mine.stdout.split("\n").filter(Boolean).sort()).toEqual(["hip-amdgcn-amd-amdhsa--gfx90a:xnack-", GFX906, `${HOST}-`].sort());
    const unbundled = streamed(form, "a.bc", unbundle(ours("offload-bundler"), "ours.o"), "ours.o").bytes!;
    expect(unbundled.equals(regular(`${ours("offload-bundler")} -unbundle -type=bc -input=a.bc -targets=${GFX906} -output=ref.o`))).toBe(true);
    const nativeBundler = native("clang-offload-bundler-19");
    if (nativeBundler === undefined) return;
    // Ours lists in file order, native in StringMap order (README: a documented difference).
    const sorted = (text: string) => text.split("\n").sort();
    expect(sorted(mine.stdout)).toEqual(sorted(streamed(form, "a.bc", list(nativeBundler)).stdout));
    expect(unbundled.equals(streamed(form, "a.bc", unbundle(nativeBundler, "native.o"), "native.o").bytes!)).toBe(true);
  });

  it("offload-bundler bundling a streamed host input: the native bytes", () => {
    const bundle = (tool: string, out: string) => (path: string) => `${tool} -type=bc -targets=${HOST}-,${GFX906} -input=${path} -input=dev.txt -output=${out}`;
    const mine = streamed(form, "host.txt", bundle(ours("offload-bundler"), "ours.bc"), "ours.bc").bytes!;
    expect(mine.length).toBeGreaterThan(readFileSync(join(dir, "host.txt")).length);
    const nativeBundler = native("clang-offload-bundler-19");
    if (nativeBundler === undefined) return;
    expect(mine.equals(streamed(form, "host.txt", bundle(nativeBundler, "native.bc"), "native.bc").bytes!)).toBe(true);
  });

  it("offload-packager: the native bytes", () => {
    const pack = (tool: string, out: string) => (path: string) => `${tool} -o ${out} --image=file=${path},triple=amdgcn-amd-amdhsa,arch=gfx906,kind=hip`;
    const mine = streamed(form, "x.bin", pack(ours("offload-packager"), "ours.bin"), "ours.bin").bytes!;
    expect(mine.length).toBeGreaterThan(1234);
    const nativePackager = native("clang-offload-packager-19");
    if (nativePackager === undefined) return;
    expect(mine.equals(streamed(form, "x.bin", pack(nativePackager, "native.bin"), "native.bin").bytes!)).toBe(true);
  });

  it("offload-wrapper, both flavours: the native bytes", () => {
    const flavours = [
      { flags: "--kind=openmp", tool: native("llvm-offload-wrapper-22") },
      { flags: "-target=x86_64-pc-linux-gnu", tool: native("clang-offload-wrapper-14") },
    ];
    for (const { flags, tool } of flavours) {
      const wrap = (bin: string, out: string) => (path: string) => `${bin} ${flags} -o ${out} ${path}`;
      const mine = streamed(form, "x.bin", wrap(ours("offload-wrapper"), "ours.bc"), "ours.bc").bytes!;
      expect(mine.equals(regular(`${ours("offload-wrapper")} ${flags} -o ref.o x.bin`))).toBe(true);
      if (tool !== undefined) expect(mine.equals(streamed(form, "x.bin", wrap(tool, "native.bc"), "native.bc").bytes!)).toBe(true);
    }
  });

  it("offload-kit ls and extract: what they give for the regular file", () => {
    const listed = streamed(form, "a.bc", (path) => `${ours("offload-kit")} ls ${path}`).stdout;
    const regular = bash(`${ours("offload-kit")} ls a.bc`, dir).stdout.toString("latin1");
    // The first line names the file; the rest (offsets, sizes, IDs) must be the same.
    expect(listed.split("\n").slice(1)).toEqual(regular.split("\n").slice(1));
    expect(listed).toContain("3 entries");
    streamed(form, "a.bc", (path) => `rm -rf out && ${ours("offload-kit")} extract --out-dir=out ${path}`);
    bash(`rm -rf ref && ${ours("offload-kit")} extract --out-dir=ref a.bc`, dir);
    const contents = (folder: string) => readdirSync(join(dir, folder)).map((name) => readFileSync(join(dir, folder, name)).toString("latin1")).sort();
    expect(readdirSync(join(dir, "out"))).toHaveLength(3);
    expect(contents("out")).toEqual(contents("ref"));
  });
});

describe("a thin archive whose member is a FIFO", () => {
  it("is unbundled as with a regular member (the member is read once, as a stream)", () => {
    const unbundle = (out: string) => `${ours("offload-bundler")} -type=a -unbundle -input=thin.a -targets=${GFX906} -output=${out} -allow-missing-bundles`;
    const made = bash("rm -f thin.a member.bc && cp a.bc member.bc && llvm-ar-19 rcT thin.a member.bc", dir);
    if (made.status !== 0) return; // llvm-ar-19 is not installed
    const regular = bash(`rm -f regular.a && ${unbundle("regular.a")}`, dir);
    expect(regular.status, regular.stderr).toBe(0);
    const fifo = bash(`rm -f member.bc fifo.a && mkfifo member.bc && (cat a.bc > member.bc &) && ${unbundle("fifo.a")}`, dir);
    expect(fifo.status, fifo.stderr).toBe(0);
    expect(readFileSync(join(dir, "fifo.a")).equals(readFileSync(join(dir, "regular.a")))).toBe(true);
    // The gfx906 entry of a.bc ("DEV") is in it: the member was read, not taken as empty.
    expect(readFileSync(join(dir, "fifo.a")).toString("latin1")).toMatch(/`\nDEV/);
  });
});
