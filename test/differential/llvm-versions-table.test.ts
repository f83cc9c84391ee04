// The table "What each LLVM writes, and what offload-kit reads and writes" in docs/formats.md, measured again:
// each cell of the LLVM 14, 19 and 22 columns is derived here from the installed Debian tools and compared with
// the text in the page, so the page cannot drift from what the tools do. A column whose tools are absent is
// skipped (a failure under OFFLOAD_KIT_REQUIRE_NATIVE=1, see test/native.ts). LLVM 23 is not installable here;
// its offload binary column is pinned by test/cli/offload-binary-v2.test.ts.
import { spawnSync } from "node:child_process";
import { accessSync, constants, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";
import { hasNative, nativeTool, runNative } from "../native.js";
import { scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";

const page = readFileSync(new URL("../../docs/formats.md", import.meta.url), "utf8");
const ccobFixtures = new URL("../fixtures/ccob/", import.meta.url).pathname;
const goldenV2 = new URL("../fixtures/offload-binary/multi.23.hex", import.meta.url).pathname;

/** The cells of the table row whose first cell is `label`: [LLVM 14, 19, 22, 23, offload-kit]. */
function row(label: string): string[] {
  const line = page.split("\n").find((l) => l.startsWith(`| ${label} |`));
  if (line === undefined) throw new Error(`docs/formats.md has no row "${label}"`);
  return line.split(" | ").slice(1).map((cell) => cell.replace(/ \|$/, ""));
}
const COLUMN = { 14: 0, 19: 1, 22: 2 } as const;
type Version = keyof typeof COLUMN;
const cell = (label: string, v: Version) => row(label)[COLUMN[v]]!;

/** Whether a program is on PATH, without test/native.ts's insistence (absence is what some cells claim). */
function onPath(name: string): boolean {
  return (process.env.PATH ?? "").split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function goldenV2Bytes(): Uint8Array {
  const bytes: number[] = [];
  for (const line of readFileSync(goldenV2, "utf8").split("\n")) {
    const text = line.replace(/#.*/, "").trim();
    if (text !== "") for (const h of text.split(/\s+/).slice(1)) bytes.push(Number.parseInt(h, 16));
  }
  return Uint8Array.from(bytes);
}

function workdir(): string {
  const dir = scratchDir("llvm-table-");
  writeFileSync(join(dir, "h.o"), "HOSTCODE");
  writeFileSync(join(dir, "d.o"), "DEVCODE0".repeat(8));
  writeFileSync(join(dir, "v2.bin"), goldenV2Bytes());
  return dir;
}

const TARGETS = "-targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx90a";
/** 14 knows only -inputs/-outputs; 19 and 22 still take them (with a deprecation warning). */
const bundle = (v: Version, dir: string, type: string, out: string, ...more: string[]) =>
  runNative(`clang-offload-bundler-${v}`, [`-type=${type}`, TARGETS, "-inputs=h.o,d.o", `-outputs=${out}`, ...more], { cwd: dir });

describe.each([14, 19, 22] as const)("LLVM %i's bundler column", (v) => {
  const tool = `clang-offload-bundler-${v}`;
  it.skipIf(!hasNative(tool))("bundles written, CCOB written and read", () => {
    const dir = workdir();
    const kinds: string[] = [];
    if (bundle(v, dir, "o", "b.o").status === 0 && readFileSync(join(dir, "b.o")).subarray(0, 24).toString() === "__CLANG_OFFLOAD_BUNDLE__") kinds.push("binary");
    if (bundle(v, dir, "s", "b.s").status === 0 && readFileSync(join(dir, "b.s"), "latin1").includes("__CLANG_OFFLOAD_BUNDLE____START__")) kinds.push("text");
    expect(cell("bundles the bundler writes", v)).toBe(kinds.join(", "));

    const compressed = bundle(v, dir, "o", "c.o", "-compress");
    let written: string;
    if (compressed.status !== 0) {
      expect(compressed.stderr).toContain("Unknown command line argument '-compress'");
      written = "none (no `-compress`)";
    } else {
      const version = (file: string) => readFileSync(join(dir, file)).readUInt16LE(4);
      written = `v${version("c.o")}`;
      const env = { ...process.env, COMPRESSED_BUNDLE_FORMAT_VERSION: "2" };
      expect(runNative(tool, ["-type=o", TARGETS, "-inputs=h.o,d.o", "-outputs=c2.o", "-compress"], { cwd: dir, env }).status).toBe(0);
      if (version("c2.o") !== version("c.o")) written += ` (v${version("c2.o")} with \`COMPRESSED_BUNDLE_FORMAT_VERSION=2\`)`;
    }
    expect(cell("CCOB `-compress` writes", v)).toBe(written);

    // Read: -list lists the entries of a CCOB of each version (14 lists nothing: it does not know CCOB).
    const files: [string, string][] = [["v1", "v1-zstd.ccob"], ["v2", "host-gfx906.19.ccob"], ["v3", "host-gfx906.22.ccob"]];
    const read = files.filter(([, file]) => {
      const args = v === 14 ? ["-list", "-type=bc", `-inputs=${join(ccobFixtures, file)}`] : ["-list", "-type=bc", `-input=${join(ccobFixtures, file)}`];
      const run = runNative(tool, args, { cwd: dir });
      return run.status === 0 && run.stdout.toString().includes("gfx906");
    }).map(([version]) => version);
    expect(cell("CCOB the bundler reads", v)).toBe(read.length === 0 ? "none" : read.join(", "));
  });
});

describe.each([14, 19, 22] as const)("LLVM %i's offload binary column", (v) => {
  // The tool each release ships under Debian's versioned names.
  const packager = `clang-offload-packager-${v}`;
  const binary = `llvm-offload-binary-${v}`;
  const objdump = `llvm-objdump-${v}`;
  it.skipIf(!hasNative(objdump))("the tool, what it writes and reads, kind numbers, .spv", () => {
    const dir = workdir();
    const tool = onPath(binary) ? binary : onPath(packager) ? packager : undefined;
    if (tool === undefined) {
      expect(cell("offload binary tool", v)).toBe("none");
      expect(cell("offload binary written", v)).toBe("none");
      expect(cell("kind numbers written (openmp/cuda/hip/sycl)", v)).toBe("none");
      expect(cell("image kind of a `.spv` file", v)).toBe("none");
    } else {
      let name = tool === binary ? "llvm-offload-binary" : "clang-offload-packager";
      if (tool === binary && onPath(packager)) {
        // The warning hangs on the name it is called by (argv[0]'s stem ends with "clang-offload-packager"), which
        // Debian's clang-offload-packager-22 does not: call it by its upstream name through a link.
        symlinkSync(nativeTool(packager)!, join(dir, "clang-offload-packager"));
        const old = spawnSync(join(dir, "clang-offload-packager"), ["-o", "x.bin", "--image=file=d.o,triple=t"], { cwd: dir, encoding: "latin1", timeout: HANG_MS });
        if (old.stderr.includes("'clang-offload-packager' is deprecated")) name += " (clang-offload-packager warns it is deprecated)";
      }
      expect(cell("offload binary tool", v)).toBe(name);

      expect(runNative(tool, ["-o", "two.bin", "--image=file=d.o,triple=t,arch=a", "--image=file=h.o,triple=t,arch=b"], { cwd: dir }).status).toBe(0);
      const two = readFileSync(join(dir, "two.bin"));
      const versions: number[] = [];
      for (let at = 0; at < two.length; at += Number(two.readBigUInt64LE(at + 8))) versions.push(two.readUInt32LE(at + 4));
      expect(versions.length).toBe(2);
      expect(new Set(versions).size).toBe(1);
      expect(cell("offload binary written", v)).toBe(`v${versions[0]}, one binary per image`);

      const kinds = ["openmp", "cuda", "hip", "sycl"].map((kind) => {
        expect(runNative(tool, ["-o", `${kind}.bin`, `--image=file=d.o,triple=t,kind=${kind}`], { cwd: dir }).status).toBe(0);
        const k = readFileSync(join(dir, `${kind}.bin`)).readUInt16LE(34);
        return k === 0 ? "none" : String(k);
      });
      expect(cell("kind numbers written (openmp/cuda/hip/sycl)", v)).toBe(kinds.join("/"));

      writeFileSync(join(dir, "k.spv"), "SPIRV");
      expect(runNative(tool, ["-o", "spv.bin", "--image=file=k.spv,triple=spirv64"], { cwd: dir }).status).toBe(0);
      const spv = readFileSync(join(dir, "spv.bin")).readUInt16LE(32);
      expect(cell("image kind of a `.spv` file", v)).toBe(spv === 0 ? "0 (none)" : String(spv));
    }

    // Read, as llvm-objdump --offloading reads: its own release's v1 output, and the LLVM 23 golden v2 file.
    const v2 = runNative(objdump, ["--offloading", "v2.bin"], { cwd: dir });
    if (v2.stderr.includes("unknown argument '--offloading'")) {
      expect(cell("offload binary read", v)).toBe("none (llvm-objdump has no `--offloading`)");
      return;
    }
    const read: string[] = [];
    if (runNative(objdump, ["--offloading", "two.bin"], { cwd: dir }).stdout.toString().includes("OFFLOADING IMAGE [1]")) read.push("v1");
    if (v2.status === 0 && v2.stdout.toString().includes("OFFLOADING IMAGE [1]")) read.push("v2");
    expect(cell("offload binary read", v)).toBe(read.join(", "));
  });
});
