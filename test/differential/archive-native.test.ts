// offload-bundler -type=a -unbundle against clang-offload-bundler 19: archives made by llvm-ar-19 from
// bundles made by the native bundler (text payloads, and real device bitcode and ELF from clang-19 so
// the output symbol tables are exercised), compared argument vector by argument vector: exit code,
// stdout, stderr (argv0 aside) and every output archive byte for byte. Known differences are asserted
// explicitly: no partial outputs after a failure, an error for a malformed member after the first (the
// native tool stops quietly there), thin archives refused.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runBundler } from "../../src/cli/offload-bundler.js";
import { writeArchive } from "../../src/formats/archive.js";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { latin1Decode, latin1Encode } from "../../src/formats/bytes.js";
import { runInDir } from "../cli/harness.js";
import { hasNative, nativeTool, runNative } from "../native.js";

const NATIVE = "clang-offload-bundler-19";
const AR = "llvm-ar-19";
const CLANG = "clang-19";
const HOST = "host-x86_64-unknown-linux-gnu";
const G = (id: string) => `hip-amdgcn-amd-amdhsa--${id}`;

const root = mkdtempSync(join(tmpdir(), "offload-kit-archive-diff-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let template: string | undefined;
let counter = 0;

function run(tool: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv): void {
  const r = runNative(tool, args, { cwd, env });
  if (r.status !== 0) throw new Error(`fixture command failed: ${tool} ${args.join(" ")}: ${r.stderr}`);
}

const DEVICE_C = `int gvar = 3;
static int hidden_fn(int x) { return x * 2; }
int device_fn(int x) { return hidden_fn(x) + gvar; }
extern int ext_fn(int);
int calls_ext(int y) { return ext_fn(y); }
`;

/** Payloads, bundles and archives, made once by the native tools; every case works on a copy. */
function prepare(dir: string): void {
  const text: Record<string, string> = {
    "h.txt": "host\n",
    "d906.txt": "gfx906 code",
    "d906x.txt": "gfx906 xnack+ code!",
    "d906n.txt": "gfx906 xnack- code",
    "d908.txt": "gfx908\n",
    "d90a.txt": "gfx90a",
    "nv.txt": "sm_70 ptx",
    "cpu.txt": "x86 offload",
    "plain.txt": "not a bundle",
  };
  for (const [name, body] of Object.entries(text)) writeFileSync(join(dir, name), body);
  const bundle = (out: string, targets: string[], inputs: string[], extra: string[] = []) =>
    run(NATIVE, ["-type=bc", `-targets=${targets.join(",")}`, ...inputs.map((i) => `-input=${i}`), `-output=${out}`, ...extra], dir);
  bundle("b1.bc", [HOST, G("gfx906"), G("gfx908")], ["h.txt", "d906.txt", "d908.txt"]);
  bundle("b2.bc", [HOST, G("gfx906:xnack+"), G("gfx906:xnack-"), G("gfx90a")], ["h.txt", "d906x.txt", "d906n.txt", "d90a.txt"]);
  bundle("kinds.bc", [HOST, "openmp-amdgcn-amd-amdhsa--gfx906", "hipv4-amdgcn-amd-amdhsa--gfx908", "openmp-nvptx64-nvidia-cuda--sm_70",
    "openmp-x86_64-unknown-linux-gnu"], ["h.txt", "d906.txt", "d908.txt", "nv.txt", "cpu.txt"]);
  bundle("a-rather-long-member-name:with-colon.bc", [HOST, G("gfx906")], ["h.txt", "d906.txt"]);
  bundle("odd.o", [HOST, G("gfx906")], ["h.txt", "d906x.txt"]);
  bundle("ccob.bc", [HOST, G("gfx906"), G("gfx908")], ["h.txt", "d906.txt", "d908.txt"], ["-compress"]);
  // The native bundler refuses to make this conflicting set; it is the -check-input-archive case.
  writeFileSync(join(dir, "conflict.bc"), writeBinaryBundle([
    { id: `${HOST}-`, data: latin1Encode("h") },
    { id: G("gfx906"), data: latin1Encode("any") },
    { id: G("gfx906:xnack+"), data: latin1Encode("on") },
  ]));

  const ar = (out: string, members: string[], flags = "rc", extra: string[] = []) => run(AR, [...extra, flags, out, ...members], dir);
  ar("plain.a", ["b1.bc", "b2.bc", "kinds.bc", "plain.txt", "a-rather-long-member-name:with-colon.bc", "odd.o"]);
  ar("bsd.a", ["b1.bc", "b2.bc", "odd.o"], "rc", ["--format=bsd"]);
  ar("darwin.a", ["b1.bc", "b2.bc"], "rc", ["--format=darwin"]);
  ar("dup.a", ["b1.bc", "b1.bc", "b2.bc"], "q");
  ar("ccob.a", ["ccob.bc", "b2.bc"]);
  ar("conflict.a", ["b1.bc", "conflict.bc"]);
  mkdirSync(join(dir, "sub"));
  cpSync(join(dir, "b1.bc"), join(dir, "sub/t1.bc"));
  cpSync(join(dir, "b2.bc"), join(dir, "sub/t2.bc"));
  ar("thin.a", ["sub/t1.bc", "sub/t2.bc", "odd.o"], "rc", ["--thin"]);
  ar("thin-missing.a", ["sub/t1.bc", "plain.txt"], "rc", ["--thin"]);
  writeFileSync(join(dir, "empty.a"), "!<arch>\n");

  // Member names that must not escape: only the last path component names the output member.
  const b1 = readFileSync(join(dir, "b1.bc"));
  writeFileSync(join(dir, "hostile.a"), writeArchive(["../x.bc", "/etc/y.bc", "dir/", "..", "a/b/c.o", "/"].map((name) => ({ name, data: b1, symbols: null }))));

  // Malformed: the first member's terminator, and a later member's size field.
  const plain = latin1Decode(readFileSync(join(dir, "plain.a")));
  const firstTerm = plain.indexOf("`\n");
  writeFileSync(join(dir, "bad-first.a"), latin1Encode(`${plain.slice(0, firstTerm)}XX${plain.slice(firstTerm + 2)}`));
  const lastTerm = plain.lastIndexOf("`\n");
  writeFileSync(join(dir, "bad-later.a"), latin1Encode(`${plain.slice(0, lastTerm - 10)}12x4      ${plain.slice(lastTerm)}`));

  if (hasNative(CLANG)) {
    const c = join(dir, "dev.c");
    writeFileSync(c, DEVICE_C);
    const cc = (args: string[]) => run(CLANG, [...args, "-nogpulib", c], dir);
    cc(["-target", "amdgcn-amd-amdhsa", "-mcpu=gfx906", "-emit-llvm", "-c", "-o", "dev906.bc"]);
    cc(["-target", "amdgcn-amd-amdhsa", "-mcpu=gfx908:xnack+", "-emit-llvm", "-c", "-o", "dev908.bc"]);
    cc(["-target", "amdgcn-amd-amdhsa", "-mcpu=gfx906", "-c", "-o", "dev906.o"]);
    cc(["-target", "nvptx64-nvidia-cuda", "-march=sm_70", "-emit-llvm", "-c", "-o", "nv70.bc"]);
    run(CLANG, ["-c", "-o", "host.o", c], dir);
    bundle("real.bc", [HOST, G("gfx906"), G("gfx908:xnack+"), "openmp-nvptx64-nvidia-cuda--sm_70"], ["host.o", "dev906.bc", "dev908.bc", "nv70.bc"]);
    bundle("real-elf.bc", [HOST, G("gfx906")], ["host.o", "dev906.o"]);
    run(NATIVE, ["-type=o", `-targets=${HOST},${G("gfx906")},${G("gfx908:xnack+")}`, "-input=host.o", "-input=dev906.bc", "-input=dev908.bc", "-output=fat.o"], dir);
    ar("real.a", ["real.bc", "real-elf.bc", "fat.o", "host.o", "plain.txt"]);
  }
}

function setup(dir: string): void {
  if (template === undefined) {
    template = join(root, "template");
    mkdirSync(template, { recursive: true });
    prepare(template);
  }
  cpSync(template, dir, { recursive: true });
}

function snapshot(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const name of readdirSync(dir).sort()) if (name.startsWith("out")) files.set(name, readFileSync(join(dir, name)));
  return files;
}

interface Side {
  status: number | null;
  stdout: string;
  stderr: string;
  files: Map<string, Buffer>;
}

async function compare(args: string[], env: Record<string, string> = {}): Promise<{ native: Side; ours: Side }> {
  const id = ++counter;
  const nativeDir = join(root, `n${id}`);
  const ourDir = join(root, `o${id}`);
  setup(nativeDir);
  setup(ourDir);
  const full = ["-type=a", "-unbundle", ...args];
  const n = runNative(NATIVE, full, { cwd: nativeDir, env: { ...process.env, ...env } });
  const o = await runInDir(ourDir, (io) => runBundler("TOOL", full, io), env);
  const tool = nativeTool(NATIVE)!;
  return {
    native: { status: n.status, stdout: n.stdout.toString("latin1"), stderr: n.stderr.split(tool).join("TOOL").split(NATIVE).join("TOOL"), files: snapshot(nativeDir) },
    ours: { status: o.code, stdout: o.stdout.toString("latin1"), stderr: o.stderr, files: snapshot(ourDir) },
  };
}

function expectSame(c: { native: Side; ours: Side }): void {
  expect(c.ours.stderr).toBe(c.native.stderr);
  expect(c.ours.stdout).toBe(c.native.stdout);
  expect(c.ours.status).toBe(c.native.status);
  if (c.native.status === 0) {
    expect([...c.ours.files.keys()]).toEqual([...c.native.files.keys()]);
    for (const [name, bytes] of c.native.files) expect(c.ours.files.get(name)?.equals(bytes), name).toBe(true);
  } else {
    expect([...c.ours.files.keys()]).toEqual([]);
  }
}

const out = (n: number) => Array.from({ length: n }, (_, i) => `-output=out${i}.a`);

const CASES: [string, string[]][] = [
  ["one target", ["-input=plain.a", `-targets=${G("gfx906")}`, ...out(1)]],
  ["two targets", ["-input=plain.a", `-targets=${G("gfx906")},${G("gfx908")}`, ...out(2)]],
  ["xnack+ gets any and on entries", ["-input=plain.a", `-targets=${G("gfx906:xnack+")}`, ...out(1)]],
  ["xnack+ and xnack- together", ["-input=plain.a", `-targets=${G("gfx906:xnack+")},${G("gfx906:xnack-")}`, ...out(2)]],
  ["sramecc and xnack", ["-input=plain.a", `-targets=${G("gfx906:sramecc+:xnack+")}`, ...out(1)]],
  ["gfx90a any", ["-input=plain.a", `-targets=${G("gfx90a:xnack-")}`, ...out(1)]],
  ["3-field target spelling", ["-input=plain.a", "-targets=hip-amdgcn-amd-amdhsa-gfx906", ...out(1)]],
  ["hipv4 target", ["-input=plain.a", "-targets=hipv4-amdgcn-amd-amdhsa--gfx906", ...out(1)]],
  ["openmp target without -hip-openmp-compatible", ["-input=plain.a", "-targets=openmp-amdgcn-amd-amdhsa--gfx908", ...out(1)]],
  ["openmp target with -hip-openmp-compatible", ["-input=plain.a", "-hip-openmp-compatible", "-targets=openmp-amdgcn-amd-amdhsa--gfx908", ...out(1)]],
  ["nvptx sm_70: .cubin", ["-input=plain.a", "-targets=openmp-nvptx64-nvidia-cuda--sm_70", ...out(1)]],
  ["cpu offload: member's extension", ["-input=plain.a", "-targets=openmp-x86_64-unknown-linux-gnu", ...out(1)]],
  ["host target", ["-input=plain.a", `-targets=${HOST}`, ...out(1)]],
  ["missing target", ["-input=plain.a", `-targets=${G("gfx906")},${G("gfx1030")},${G("gfx1100")}`, ...out(3)]],
  ["missing target allowed", ["-input=plain.a", "-allow-missing-bundles", `-targets=${G("gfx1030")},${G("gfx906")}`, ...out(2)]],
  ["empty archive", ["-input=empty.a", `-targets=${G("gfx906")}`, ...out(1)]],
  ["empty archive allowed", ["-input=empty.a", "-allow-missing-bundles", `-targets=${G("gfx906")}`, ...out(1)]],
  ["BSD archive", ["-input=bsd.a", `-targets=${G("gfx906:xnack+")},${G("gfx906:xnack-")}`, ...out(2)]],
  ["Darwin archive", ["-input=darwin.a", `-targets=${G("gfx906")}`, ...out(1)]],
  ["duplicate member names", ["-input=dup.a", `-targets=${G("gfx906:xnack+")}`, ...out(1)]],
  ["hostile member names", ["-input=hostile.a", `-targets=${G("gfx906")},${G("gfx908")}`, ...out(2)]],
  ["compressed members", ["-input=ccob.a", `-targets=${G("gfx906")},${G("gfx908")}`, ...out(2)]],
  ["check-input-archive: no conflict", ["-input=plain.a", "-check-input-archive", `-targets=${G("gfx906")}`, ...out(1)]],
  ["check-input-archive: conflict", ["-input=conflict.a", "-check-input-archive", `-targets=${G("gfx906")}`, ...out(1)]],
  ["conflict without the check", ["-input=conflict.a", `-targets=${G("gfx906:xnack+")}`, ...out(1)]],
  ["malformed first member", ["-input=bad-first.a", `-targets=${G("gfx906")}`, ...out(1)]],
  ["not an archive", ["-input=b1.bc", `-targets=${G("gfx906")}`, ...out(1)]],
  ["missing input", ["-input=nope.a", `-targets=${G("gfx906")}`, ...out(1)]],
  ["thin archive", ["-input=thin.a", `-targets=${G("gfx906")},${G("gfx906:xnack+")}`, ...out(2)]],
  ["thin archive with -check-input-archive", ["-input=thin.a", "-check-input-archive", `-targets=${G("gfx906")}`, ...out(1)]],
  ["conflicting targets", ["-input=plain.a", `-targets=${G("gfx906")},${G("gfx906:xnack+")}`, ...out(2)]],
  ["outputs mismatch", ["-input=plain.a", `-targets=${G("gfx906")},${G("gfx908")}`, ...out(1)]],
];

const REAL_CASES: [string, string[]][] = [
  ["bitcode, ELF and fat-object members: gfx906", ["-input=real.a", `-targets=${G("gfx906")}`, ...out(1)]],
  ["bitcode members: gfx908:xnack+", ["-input=real.a", `-targets=${G("gfx908:xnack+")}`, ...out(1)]],
  ["nvptx bitcode", ["-input=real.a", "-targets=openmp-nvptx64-nvidia-cuda--sm_70", ...out(1)]],
  ["all device targets", ["-input=real.a", `-targets=${G("gfx906:xnack+")},${G("gfx908:xnack+")}`, ...out(2)]],
];

describe.skipIf(!hasNative(NATIVE) || !hasNative(AR))("offload-bundler -type=a vs clang-offload-bundler 19", () => {
  it.each(CASES)("%s", async (_, args) => expectSame(await compare(args)));

  it.skipIf(!hasNative(CLANG)).each(REAL_CASES)("%s", async (_, args) => expectSame(await compare(args)));

  it("a /SYM64/ symbol table under SYM64_THRESHOLD, as LLVM's writer", async () => {
    if (!hasNative(CLANG)) return;
    expectSame(await compare(["-input=real.a", `-targets=${G("gfx906")}`, ...out(1)], { SYM64_THRESHOLD: "64" }));
  });

  it("a failure leaves no partial output, where the native tool leaves the earlier archives (documented)", async () => {
    const c = await compare(["-input=plain.a", `-targets=${G("gfx906")},${G("gfx1030")}`, ...out(2)]);
    expect(c.native.status).toBe(1);
    expect(c.native.files.has("out0.a")).toBe(true);
    expect(c.ours.status).toBe(1);
    expect(c.ours.stderr).toBe(c.native.stderr);
    expect(c.ours.files.size).toBe(0);
  });

  it("a malformed member after the first is an error, where the native tool stops there quietly (documented)", async () => {
    const c = await compare(["-input=bad-later.a", `-targets=${G("gfx906")}`, ...out(1)]);
    expect(c.native.status).toBe(0);
    expect(c.ours.status).toBe(1);
    expect(c.ours.stderr).toMatch(/^TOOL: error: truncated or malformed archive \(characters in size field in archive member header are not all decimal numbers: '12x4' for the archive member header at offset \d+\)\n$/);
  });

  it("a thin archive whose member file is gone: the same error", async () => {
    const id = ++counter;
    const dirs = [join(root, `n${id}`), join(root, `o${id}`)];
    for (const d of dirs) {
      setup(d);
      rmSync(join(d, "plain.txt"));
    }
    const args = ["-type=a", "-unbundle", "-input=thin-missing.a", `-targets=${G("gfx906")}`, "-output=out0.a"];
    const n = runNative(NATIVE, args, { cwd: dirs[0] });
    const o = await runInDir(dirs[1], (io) => runBundler("TOOL", args, io));
    expect(n.status).toBe(1);
    expect(o.code).toBe(1);
    expect(o.stderr).toBe(n.stderr.split(nativeTool(NATIVE)!).join("TOOL"));
  });

  it("hostile names stay inside the output archive", async () => {
    const c = await compare(["-input=hostile.a", `-targets=${G("gfx906")}`, ...out(1)]);
    expect(c.ours.status).toBe(0);
    const names = latin1Decode(c.ours.files.get("out0.a")!);
    expect(names).toContain("x-hip-amdgcn-amd-amdhsa--gfx906x.bc/\n");
    expect(names).toContain("y-hip-amdgcn-amd-amdhsa--gfx906y.bc/\n");
    expect(existsSync(join(root, "x.bc"))).toBe(false);
  });
});
