// The built offload-wrapper bin as a process against clang-offload-wrapper-14 and llvm-offload-wrapper-22, each
// run under the native tool's name (a symlink to our bin on PATH, so both print the same argv[0]) in twin
// folders: exit status, stdout, stderr and every file left must be identical. The cases of issue 19: options in
// an `@file` choose the flavour (the native tools expand response files first), `-o -` (14: stdout; 22: a file
// named `-`, FileOutputBuffer), `-o ""` (14 names the empty path, 22 does not). And `-S` against llvm-dis of the
// native bitcode: the same text but the ModuleID line and llvm-dis's `; preds =` comments.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hasNative, runNative } from "../native.js";
import { HANG_MS } from "../limits.js";

const W14 = "clang-offload-wrapper-14";
const W22 = "llvm-offload-wrapper-22";
const BIN = new URL("../../dist/bin/offload-wrapper.js", import.meta.url).pathname;

const root = mkdtempSync(join(tmpdir(), "offload-kit-wrapper-cli-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const shims = join(root, "bin");
mkdirSync(shims);
for (const name of [W14, W22]) symlinkSync(BIN, join(shims, name));

const enc = (text: string) => new TextEncoder().encode(text);
const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);
const FILES: Record<string, Uint8Array | string> = {
  "a.bin": enc("DEV\\IMG\\\\\"end"),
  "b.bin": ALL_BYTES,
  "c.bin": enc("C\\string\\with\\backslashes\0"),
};

let counter = 0;

function twinDirs(files: Record<string, Uint8Array | string>): [string, string] {
  const id = counter++;
  const dirs = [join(root, `n${id}`), join(root, `o${id}`)] as [string, string];
  for (const dir of dirs) {
    mkdirSync(dir);
    for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), bytes);
  }
  return dirs;
}

/** `tool` by its bare name (so argv[0] is that name): ours through the shim folder first on PATH. */
function run(tool: string, args: string[], cwd: string, shimmed: boolean) {
  const path = shimmed ? `${shims}${delimiter}${process.env.PATH ?? ""}` : process.env.PATH;
  const r = spawnSync(tool, args, { cwd, env: { ...process.env, PATH: path }, timeout: HANG_MS, killSignal: "SIGKILL" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString("latin1") };
}
const ours = (tool: string, args: string[], cwd: string) => run(tool, args, cwd, true);

function files(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).sort().map((name) => [name, readFileSync(join(dir, name)).toString("hex")]));
}

/** Both tools on the same arguments in twin folders (extra files for response files): everything identical. */
function expectSame(tool: string, args: string[], extra: Record<string, string> = {}): void {
  const [nativeDir, ourDir] = twinDirs({ ...FILES, ...extra });
  const native = run(tool, args, nativeDir, false);
  const mine = ours(tool, args, ourDir);
  const label = `${tool} ${args.join(" ")}`;
  expect({ label, status: mine.status, stderr: mine.stderr }).toEqual({ label, status: native.status, stderr: native.stderr });
  expect(mine.stdout.equals(native.stdout), `${label}: stdout`).toBe(true);
  expect(files(ourDir), `${label}: files`).toEqual(files(nativeDir));
}

describe.runIf(hasNative(W22))("offload-wrapper (built bin) vs llvm-offload-wrapper-22", () => {
  it("takes --kind and --triple from an @file, as the 22 flavour", () => {
    expectSame(W22, ["@args", "a.bin"], { args: "--kind=openmp -o out.bc" });
    expectSame(W22, ["@args"], { args: "--kind=hip\n-o out.bc\nb.bin\n" });
    expectSame(W22, ["@args", "-o", "out.bc", "a.bin", "b.bin"], { args: "--triple=aarch64-unknown-linux-gnu --kind openmp" });
    expectSame(W22, ["@outer", "c.bin"], { outer: "@inner -o out.bc", inner: "--kind=cuda" });
  });

  it("-o - writes a file named '-', and -o '' fails with the bare strerror text", () => {
    expectSame(W22, ["--kind=openmp", "-o", "-", "a.bin", "b.bin"]);
    expectSame(W22, ["--kind=cuda", "-o", "-", "c.bin"]);
    expectSame(W22, ["--kind=openmp", "-o", "", "a.bin"]);
    expectSame(W22, ["--kind=openmp", "-o=", "a.bin"]);
  });
});

describe.runIf(hasNative(W14))("offload-wrapper (built bin) vs clang-offload-wrapper-14", () => {
  it("an @file without --kind or --triple stays the 14 flavour", () => {
    expectSame(W14, ["@args", "a.bin", "b.bin"], { args: "--target=x86_64-pc-linux-gnu -o out.bc" });
  });

  it("-o - writes to stdout, and -o '' names the empty path", () => {
    expectSame(W14, ["-target=x86_64-pc-linux-gnu", "-o", "-", "a.bin", "b.bin", "c.bin"]);
    expectSame(W14, ["-target=x86_64-pc-linux-gnu", "-o", "", "a.bin"]);
    expectSame(W14, ["-target=x86_64-pc-linux-gnu", "-o=", "a.bin"]);
  });
});

/** llvm-dis's text without the ModuleID line and the `; preds =` comments (not printed by -S). */
function comparable(text: string): string {
  return text.replace(/^; ModuleID = .*\n/, "").replace(/ +; preds = .*$/gm, "");
}

const flavours: [string, string, string[]][] = [
  [W14, "llvm-dis-14", ["-target=x86_64-pc-linux-gnu", "a.bin", "b.bin", "c.bin"]],
  [W22, "llvm-dis-22", ["--kind=openmp", "a.bin", "b.bin", "c.bin"]],
  [W22, "llvm-dis-22", ["--kind=cuda", "a.bin"]],
  [W22, "llvm-dis-22", ["--kind=hip", "c.bin"]],
];

describe("-S prints what llvm-dis prints for the native bitcode", () => {
  for (const [tool, dis, args] of flavours) {
    it.runIf(hasNative(tool) && hasNative(dis))(`${tool} ${args.join(" ")}`, () => {
      const [nativeDir, ourDir] = twinDirs(FILES);
      const native = runNative(tool, [...args, "-o", "out.bc"], { cwd: nativeDir });
      expect(native.status).toBe(0);
      const disassembled = runNative(dis, ["out.bc", "-o", "-"], { cwd: nativeDir });
      expect(disassembled.stderr).toBe("");
      const mine = ours(tool, [...args, "-S", "-o", "out.ll"], ourDir);
      expect([mine.status, mine.stderr]).toEqual([0, ""]);
      const text = readFileSync(join(ourDir, "out.ll"), "latin1");
      // A backslash is `\\` (printEscapedString), never `\5C`.
      expect(text).not.toContain("\\5C");
      expect(comparable(text)).toBe(comparable(disassembled.stdout.toString("latin1")));
    });
  }
});
