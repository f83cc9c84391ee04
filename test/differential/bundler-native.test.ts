// offload-bundler against clang-offload-bundler 19, argument vector by argument vector: exit code,
// stdout, stderr (argv0 aside) and every file written must match. Known, documented differences are
// asserted explicitly (not skipped): -list order for binary bundles, and outputs after a failure
// (the native tool leaves partial files, we leave none).
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runBundler } from "../../src/cli/offload-bundler.js";
import { runInDir } from "../cli/harness.js";
import { hasNative, nativeTool, runNative } from "../native.js";

const NATIVE = "clang-offload-bundler-19";
const HOST = "host-x86_64-unknown-linux-gnu";
const G906 = "hip-amdgcn-amd-amdhsa--gfx906";
const G908 = "hip-amdgcn-amd-amdhsa--gfx908";
const G90A = "hip-amdgcn-amd-amdhsa--gfx90a:xnack-";

const INPUTS: Record<string, string> = {
  "host.txt": "int host;\n",
  "d906.txt": "int gfx906;",
  "d908.txt": "gfx908 code\n\n",
  "d90a.txt": "gfx90a\0binary",
  "plain.txt": "not a bundle, just bytes",
  "empty.txt": "",
  // A text bundle whose last entry lost its END line.
  "damaged.i": `\n// __CLANG_OFFLOAD_BUNDLE____START__ ${HOST}-\nint host;\n\n// __CLANG_OFFLOAD_BUNDLE____END__ ${HOST}-\n` +
    `\n// __CLANG_OFFLOAD_BUNDLE____START__ ${G906}\nint dev;\n`,
};

const root = mkdtempSync(join(tmpdir(), "offload-kit-diff-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

/** Native-made bundles both sides unbundle. */
function prepareBundles(dir: string): void {
  const make = (args: string[]) => {
    const r = runNative(NATIVE, args, { cwd: dir });
    if (r.status !== 0) throw new Error(`fixture command failed: ${args.join(" ")}: ${r.stderr}`);
  };
  make(["-type=bc", `-targets=${HOST},${G906},${G908}`, "-input=host.txt", "-input=d906.txt", "-input=d908.txt", "-output=b3.bc"]);
  make(["-type=bc", `-targets=${G906},${G90A}`, "-input=d906.txt", "-input=d90a.txt", "-bundle-align=64", "-output=hiponly.bc"]);
  make(["-type=ll", `-targets=${HOST},${G906},${G908}`, "-input=host.txt", "-input=d906.txt", "-input=d908.txt", "-output=t3.ll"]);
  make(["-type=i", `-targets=${HOST},hip-amdgcn-amd-amdhsa--gfx908:xnack+`, "-input=host.txt", "-input=d908.txt", "-output=xn.i"]);
  make(["-type=bc", `-targets=${HOST},openmp-amdgcn-amd-amdhsa--gfx906,hipv4-amdgcn-amd-amdhsa--gfx908`, "-input=host.txt", "-input=d906.txt", "-input=d908.txt", "-output=kinds.bc"]);
}

let template: string | undefined;

/** Every case starts from a copy of one prepared directory (inputs + native-made bundles). */
function setup(dir: string): void {
  if (template === undefined) {
    template = join(root, "template");
    mkdirSync(template, { recursive: true });
    for (const [name, text] of Object.entries(INPUTS)) writeFileSync(join(template, name), text, "latin1");
    prepareBundles(template);
  }
  cpSync(template, dir, { recursive: true });
}

function snapshot(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const name of readdirSync(dir).sort()) files.set(name, readFileSync(join(dir, name)));
  return files;
}

interface Compared {
  native: { status: number | null; stdout: string; stderr: string; files: Map<string, Buffer> };
  ours: { status: number; stdout: string; stderr: string; files: Map<string, Buffer> };
}

async function compare(args: string[]): Promise<Compared> {
  const id = ++counter;
  const nativeDir = join(root, `n${id}`);
  const ourDir = join(root, `o${id}`);
  setup(nativeDir);
  setup(ourDir);
  const n = runNative(NATIVE, args, { cwd: nativeDir });
  const o = await runInDir(ourDir, (io) => runBundler("TOOL", args, io));
  return {
    native: { status: n.status, stdout: n.stdout.toString("latin1"), stderr: n.stderr.split(nativeTool(NATIVE)!).join("TOOL").split(NATIVE).join("TOOL"), files: snapshot(nativeDir) },
    ours: { status: o.code, stdout: o.stdout.toString("latin1"), stderr: o.stderr, files: snapshot(ourDir) },
  };
}

function expectSame(c: Compared): void {
  expect(c.ours.stderr).toBe(c.native.stderr);
  expect(c.ours.stdout).toBe(c.native.stdout);
  expect(c.ours.status).toBe(c.native.status);
  if (c.native.status === 0) {
    expect([...c.ours.files.keys()]).toEqual([...c.native.files.keys()]);
    for (const [name, bytes] of c.native.files) expect(c.ours.files.get(name)?.equals(bytes), name).toBe(true);
  } else {
    // A failure leaves no output of ours behind; the input files are all there is.
    const inputs = new Set([...Object.keys(INPUTS), "b3.bc", "hiponly.bc", "t3.ll", "xn.i", "kinds.bc"]);
    expect([...c.ours.files.keys()].filter((name) => !inputs.has(name))).toEqual([]);
  }
}

const BUNDLE_CASES: [string, string[]][] = [
  ["bc host + device", ["-type=bc", `-targets=${HOST},${G906}`, "-input=host.txt", "-input=d906.txt", "-output=out.bc"]],
  ["--opt value spelling", ["--type", "bc", "--targets", `${HOST},${G906}`, "--input", "host.txt", "--input", "d906.txt", "--output", "out.bc"]],
  ["repeated -targets", ["-type=bc", `-targets=${HOST}`, `-targets=${G906}`, "-input=host.txt", "-input=d906.txt", "-output=out.bc"]],
  ["align 16", ["-type=bc", `-targets=${HOST},${G906},${G90A}`, "-input=host.txt", "-input=d906.txt", "-input=d90a.txt", "-bundle-align=16", "-output=out.bc"]],
  ["align 3", ["-type=bc", `-targets=${HOST},${G906},${G90A}`, "-input=host.txt", "-input=d906.txt", "-input=d90a.txt", "-bundle-align=3", "-output=out.bc"]],
  ["align 4096 hip only", ["-type=bc", `-targets=${G906},${G908}`, "-input=d906.txt", "-input=d908.txt", "-bundle-align=4096", "-output=out.bc"]],
  ["gch", ["-type=gch", `-targets=${HOST},${G906}`, "-input=host.txt", "-input=d906.txt", "-output=out.gch"]],
  ["ast", ["-type=ast", `-targets=${HOST},${G906}`, "-input=host.txt", "-input=d906.txt", "-output=out.ast"]],
  ["o, non-object host", ["-type=o", `-targets=${HOST},${G906}`, "-input=host.txt", "-input=d906.txt", "-output=out.o"]],
  ["empty inputs", ["-type=bc", `-targets=${HOST},${G906}`, "-input=empty.txt", "-input=empty.txt", "-output=out.bc"]],
  ...(["i", "ii", "cui", "hipi", "d", "ll", "s"].map((t): [string, string[]] =>
    [`text ${t}`, [`-type=${t}`, `-targets=${HOST},${G906},${G908}`, "-input=host.txt", "-input=d906.txt", "-input=d908.txt", `-output=out.${t}`]])),
  ["3-field and odd triples", ["-type=bc", "-targets=host-x86_64-unknown-linux,hip-amdgcn-amd-amdhsa-gfx906,hip-amdgcn-amd-amdhsa--foo", "-input=host.txt", "-input=d906.txt", "-input=d908.txt", "-output=out.bc"]],
  ["trailing dash host", ["-type=bc", "-targets=host-x86_64-pc-linux-gnu-,hip-amdgcn-amd-amdhsa-unknown-gfx906", "-input=host.txt", "-input=d906.txt", "-output=out.bc"]],
  ["openmp nvptx", ["-type=bc", `-targets=${HOST},openmp-nvptx64-nvidia-cuda--sm_70,openmp-nvptx64-nvidia-cuda-sm_90a`, "-input=host.txt", "-input=d906.txt", "-input=d908.txt", "-output=out.bc"]],
  ["deprecated -inputs/-outputs", ["-type=bc", `-targets=${HOST},${G906}`, "-inputs=host.txt,d906.txt", "-outputs=out.bc"]],
  ["-inputs with -input", ["-type=bc", `-targets=${HOST},${G906}`, "-inputs=host.txt", "-input=d906.txt", "-output=out.bc"]],
  ["-outputs with -output", ["-type=bc", `-targets=${HOST},${G906}`, "-input=host.txt", "-input=d906.txt", "-outputs=a", "-output=out.bc"]],
  ["no output", ["-type=bc", `-targets=${HOST}`, "-input=host.txt"]],
  ["no targets", ["-type=bc", "-input=host.txt", "-output=out.bc"]],
  ["no type", [`-targets=${HOST}`, "-input=host.txt", "-output=out.bc"]],
  ["two outputs", ["-type=bc", `-targets=${HOST}`, "-input=host.txt", "-output=a", "-output=b"]],
  ["count mismatch", ["-type=bc", `-targets=${HOST},${G906}`, "-input=host.txt", "-output=out.bc"]],
  ["archive bundling", ["-type=a", `-targets=${HOST}`, "-input=host.txt", "-output=out.a"]],
  ["duplicate targets", ["-type=bc", `-targets=${HOST},${HOST}`, "-input=host.txt", "-input=host.txt", "-output=out.bc"]],
  ["unknown kind", ["-type=bc", `-targets=${HOST},cuda-nvptx64-nvidia-cuda--sm_70`, "-input=host.txt", "-input=d906.txt", "-output=out.bc"]],
  ["unknown triple", ["-type=bc", `-targets=${HOST},hip-foo-amd-amdhsa--gfx906`, "-input=host.txt", "-input=d906.txt", "-output=out.bc"]],
  ["unknown kind and triple", ["-type=bc", `-targets=${HOST},xyz-foo-amd-amdhsa--gfx906`, "-input=host.txt", "-input=d906.txt", "-output=out.bc"]],
  ["conflicting targets", ["-type=bc", `-targets=${HOST},${G906},${G906}:xnack+`, "-input=host.txt", "-input=d906.txt", "-input=d908.txt", "-output=out.bc"]],
  ["asymmetric conflict accepted", ["-type=bc", `-targets=${HOST},${G906}:sramecc+:xnack+,${G906}:xnack+`, "-input=host.txt", "-input=d906.txt", "-input=d908.txt", "-output=out.bc"]],
  ["no host, not hip-only", ["-type=bc", "-targets=openmp-amdgcn-amd-amdhsa--gfx906", "-input=d906.txt", "-output=out.bc"]],
  ["two hosts", ["-type=bc", `-targets=${HOST},host-x86_64-pc-linux-gnu`, "-input=host.txt", "-input=d906.txt", "-output=out.bc"]],
  ["missing input file", ["-type=bc", `-targets=${HOST},${G906}`, "-input=host.txt", "-input=nope.txt", "-output=out.bc"]],
  ["invalid type", ["-type=xyz", `-targets=${HOST}`, "-input=host.txt", "-output=out.bc"]],
  ["output dir missing", ["-type=bc", `-targets=${HOST}`, "-input=host.txt", "-output=missing/out.bc"]],
  ["check-input-archive while bundling", ["-type=a", "-check-input-archive", `-targets=${HOST}`, "-input=host.txt", "-output=out.a"]],
  ["unknown option", ["-type=bc", "-frobnicate", `-targets=${HOST}`, "-input=host.txt", "-output=out.bc"]],
  ["bad uint", ["-type=bc", "-bundle-align=x", `-targets=${HOST}`, "-input=host.txt", "-output=out.bc"]],
];

const UNBUNDLE_CASES: [string, string[]][] = [
  ["one device", ["-unbundle", "-type=bc", `-targets=${G906}`, "-input=b3.bc", "-output=o1"]],
  ["host and devices", ["-unbundle", "-type=bc", `-targets=${HOST},${G906},${G908}`, "-input=b3.bc", "-output=o1", "-output=o2", "-output=o3"]],
  ["3-field spelling of the request", ["-unbundle", "-type=bc", "-targets=hip-amdgcn-amd-amdhsa-gfx906", "-input=b3.bc", "-output=o1"]],
  ["any-feature entry serves xnack+ request", ["-unbundle", "-type=bc", `-targets=${G906}:xnack+`, "-input=b3.bc", "-output=o1"]],
  ["xnack+ entry does not serve plain request", ["-unbundle", "-type=i", `-targets=${G908}`, "-input=xn.i", "-output=o1"]],
  ["one entry, two compatible requests", ["-unbundle", "-type=bc", `-targets=${G908}:xnack+,${G908}:xnack-`, "-input=b3.bc", "-output=o1", "-output=o2"]],
  ["hipv4 request, hip entry", ["-unbundle", "-type=bc", "-targets=hipv4-amdgcn-amd-amdhsa--gfx906", "-input=b3.bc", "-output=o1"]],
  ["openmp request without -hip-openmp-compatible", ["-unbundle", "-type=bc", "-targets=openmp-amdgcn-amd-amdhsa--gfx908", "-input=kinds.bc", "-output=o1"]],
  ["openmp request with -hip-openmp-compatible", ["-unbundle", "-type=bc", "-hip-openmp-compatible", "-targets=openmp-amdgcn-amd-amdhsa--gfx908", "-input=kinds.bc", "-output=o1"]],
  ["missing bundles", ["-unbundle", "-type=bc", `-targets=${G90A},hip-amdgcn-amd-amdhsa--gfx1030,hip-amdgcn-amd-amdhsa--gfx1100`, "-input=b3.bc", "-output=o1", "-output=o2", "-output=o3"]],
  ["missing two bundles", ["-unbundle", "-type=bc", `-targets=${G90A},hip-amdgcn-amd-amdhsa--gfx1030`, "-input=b3.bc", "-output=o1", "-output=o2"]],
  ["missing bundles allowed", ["-unbundle", "-type=bc", "-allow-missing-bundles", `-targets=${G906},${G90A}`, "-input=b3.bc", "-output=o1", "-output=o2"]],
  ["host missing", ["-unbundle", "-type=bc", `-targets=${HOST},${G906}`, "-input=hiponly.bc", "-output=o1", "-output=o2"]],
  ["host missing allowed", ["-unbundle", "-type=bc", "-allow-missing-bundles", `-targets=${HOST},${G906}`, "-input=hiponly.bc", "-output=o1", "-output=o2"]],
  ["non-bundle input", ["-unbundle", "-type=bc", `-targets=${HOST},${G906}`, "-input=plain.txt", "-output=o1", "-output=o2"]],
  ["non-bundle input allowed", ["-unbundle", "-type=bc", "-allow-missing-bundles", `-targets=${HOST},${G906}`, "-input=plain.txt", "-output=o1", "-output=o2"]],
  ["text ll", ["-unbundle", "-type=ll", `-targets=${HOST},${G908}`, "-input=t3.ll", "-output=o1", "-output=o2"]],
  ["text read as binary", ["-unbundle", "-type=bc", "-allow-missing-bundles", `-targets=${HOST},${G906}`, "-input=t3.ll", "-output=o1", "-output=o2"]],
  ["binary read as text", ["-unbundle", "-type=i", "-allow-missing-bundles", `-targets=${HOST},${G906}`, "-input=b3.bc", "-output=o1", "-output=o2"]],
  ["two inputs", ["-unbundle", "-type=bc", `-targets=${G906}`, "-input=b3.bc", "-input=b3.bc", "-output=o1"]],
  ["outputs mismatch", ["-unbundle", "-type=bc", `-targets=${G906},${G908}`, "-input=b3.bc", "-output=o1"]],
  ["two hosts requested", ["-unbundle", "-type=bc", `-targets=${HOST},host-x86_64-pc-linux-gnu`, "-input=b3.bc", "-output=o1", "-output=o2"]],
  ["conflict while unbundling", ["-unbundle", "-type=bc", `-targets=${G906},${G906}:xnack+`, "-input=b3.bc", "-output=o1", "-output=o2"]],
  ["missing input", ["-unbundle", "-type=bc", `-targets=${G906}`, "-input=nope.bc", "-output=o1"]],
  ["check-input-archive with bc", ["-unbundle", "-type=bc", "-check-input-archive", `-targets=${G906}`, "-input=b3.bc", "-output=o1"]],
];

const LIST_CASES: [string, string[]][] = [
  ["text list", ["-list", "-type=ll", "-input=t3.ll"]],
  ["non-bundle list", ["-list", "-type=bc", "-input=plain.txt"]],
  ["list with -unbundle", ["-list", "-unbundle", "-type=bc", "-input=b3.bc"]],
  ["list two inputs", ["-list", "-type=bc", "-input=b3.bc", "-input=b3.bc"]],
  ["list with output", ["-list", "-type=bc", "-input=b3.bc", "-output=x"]],
  ["list with targets", ["-list", "-type=bc", "-input=b3.bc", `-targets=${HOST}`]],
  ["list missing file", ["-list", "-type=bc", "-input=nope.bc"]],
  ["list invalid type", ["-list", "-type=q", "-input=b3.bc"]],
];

describe.skipIf(!hasNative(NATIVE))("offload-bundler vs clang-offload-bundler 19", () => {
  it.each(BUNDLE_CASES)("bundling: %s", async (_, args) => expectSame(await compare(args)));
  it.each(UNBUNDLE_CASES)("unbundling: %s", async (_, args) => expectSame(await compare(args)));
  it.each(LIST_CASES)("listing: %s", async (_, args) => expectSame(await compare(args)));

  it("lists binary bundles in file order, where the native tool uses hash order (documented)", async () => {
    const c = await compare(["-list", "-type=bc", "-input=b3.bc"]);
    expect(c.ours.status).toBe(0);
    expect(c.ours.stdout).toBe(`${HOST}-\n${G906}\n${G908}\n`);
    expect(c.ours.stdout.split("\n").sort()).toEqual(c.native.stdout.split("\n").sort());
  });

  it("a failed unbundling leaves no partial output, where the native tool leaves some (documented)", async () => {
    const c = await compare(["-unbundle", "-type=bc", `-targets=${G906},${G90A}`, "-input=b3.bc", "-output=o1", "-output=o2"]);
    expect(c.native.status).toBe(1);
    expect(c.native.files.has("o1")).toBe(true);
    expect(c.ours.status).toBe(1);
    expect(c.ours.files.has("o1")).toBe(false);
    expect(c.ours.stderr).toBe(c.native.stderr);
  });

  it("a text bundle whose unrequested last entry lacks its END marker still gives the host, as 19 does", async () => {
    expectSame(await compare(["-unbundle", "-type=i", `-targets=${HOST}`, "-input=damaged.i", "-output=o1"]));
  });

  it("a request that reaches the damaged entry fails (19 dies reading past its buffer; documented)", async () => {
    for (const targets of [G906, `${HOST},${G906}`, `${HOST},${G908}`]) {
      const outputs = targets.split(",").map((_, i) => `-output=o${i}`);
      const c = await compare(["-unbundle", "-type=i", `-targets=${targets}`, "-input=damaged.i", ...outputs]);
      expect(c.native.status).not.toBe(0);
      expect(c.ours.status).toBe(1);
      expect(c.ours.stderr).toBe(`TOOL: error: text bundle entry '${G906}' at offset 146 has no END marker\n`);
      expect([...c.ours.files.keys()].filter((name) => name.startsWith("o"))).toEqual([]);
    }
    // -list is not run natively: 19 prints the damaged entry's ID forever (it filled a disk once).
    const listed = await runInDir(mkdtempSync(join(root, "list-")), (io) => runBundler("TOOL", ["-list", "-type=i", `-input=${join(template!, "damaged.i")}`], io));
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain("has no END marker");
  });

  it("-bundle-align=0: an error where the native tool dies of SIGFPE", async () => {
    const c = await compare(["-type=bc", `-targets=${HOST}`, "-input=host.txt", "-bundle-align=0", "-output=out.bc"]);
    expect(c.native.status).not.toBe(0);
    expect(c.ours.status).toBe(1);
    expect(c.ours.stderr).toMatch(/^TOOL: error: -bundle-align must be at least 1/);
  });

  it("two targets normalising to one ID: an error where the native tool writes a corrupt bundle", async () => {
    const c = await compare(["-type=bc", `-targets=${HOST},hip-amdgcn-amd-amdhsa-gfx906,${G906}`, "-input=host.txt", "-input=d906.txt", "-input=d908.txt", "-output=out.bc"]);
    expect(c.native.status).toBe(0);
    expect(c.ours.status).toBe(1);
    expect(c.ours.stderr).toContain(`both normalise to the bundle entry ID '${G906}'`);
  });
});
