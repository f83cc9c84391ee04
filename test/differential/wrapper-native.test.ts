// offload-wrapper against clang-offload-wrapper-14 and llvm-offload-wrapper-22: random image sets (0 B to 400 KB;
// random bytes, text, C strings, char6 strings, zeros, ELF-looking, OffloadBinary; duplicates), several triples,
// every -o spelling, run through the native tool and through our CLI in twin directories: exit code, stdout,
// stderr (argv[0] set to the native name on both sides) and the output bytes must be identical. Error cases must
// leave no output on either side. The .ll text goes back through llvm-as of the same version. A bigger campaign:
// OFFLOAD_KIT_WRAPPER_CASES=2000 npx vitest run test/differential/wrapper-native.test.ts
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runWrapper } from "../../src/cli/offload-wrapper.js";
import { wrapImages, wrapImagesText } from "../../src/wrapper/index.js";
import { runInDir } from "../cli/harness.js";
import { offloadBinary } from "../wrapper/offload-binary-fixture.js";
import { rng } from "../engines.js";
import { hasNative, nativeTool, runNative } from "../native.js";

const W14 = "clang-offload-wrapper-14";
const W22 = "llvm-offload-wrapper-22";
const CASES = Number(process.env.OFFLOAD_KIT_WRAPPER_CASES ?? "40");

const root = mkdtempSync(join(tmpdir(), "offload-kit-wrapper-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const CHAR6 = new TextEncoder().encode("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._");

function randomImage(next: () => number): Uint8Array {
  const r = next();
  const size = r < 0.1 ? 0 : next() < 0.7 ? Math.floor(next() * 200) : Math.floor(next() * 400_000);
  const pick = Math.floor(next() * 8);
  const out = new Uint8Array(size);
  switch (pick) {
    case 0: // zeros
      break;
    case 1: // text
      for (let i = 0; i < size; i++) out[i] = 32 + Math.floor(next() * 95);
      break;
    case 2: // C string, 7-bit
      for (let i = 0; i < size - 1; i++) out[i] = 1 + Math.floor(next() * 127);
      break;
    case 3: // C string, char6
      for (let i = 0; i < size - 1; i++) out[i] = CHAR6[Math.floor(next() * 64)]!;
      break;
    case 4: // C string with high bytes
      for (let i = 0; i < size - 1; i++) out[i] = 1 + Math.floor(next() * 255);
      break;
    case 5: // ELF-looking
      for (let i = 0; i < size; i++) out[i] = Math.floor(next() * 256);
      out.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1].slice(0, size));
      break;
    case 6:
      return offloadBinary([randomImageSmall(next), ...(next() < 0.3 ? [randomImageSmall(next)] : [])]);
    default:
      for (let i = 0; i < size; i++) out[i] = Math.floor(next() * 256);
  }
  return out;
}

function randomImageSmall(next: () => number): Uint8Array {
  const out = new Uint8Array(Math.floor(next() * 300));
  for (let i = 0; i < out.length; i++) out[i] = Math.floor(next() * 256);
  return out;
}

/** `count` input names, some naming the same file (equal images share one constant). */
function randomImageSet(next: () => number, count: number): { files: Record<string, Uint8Array>; names: string[] } {
  const files: Record<string, Uint8Array> = {};
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const reuse = i > 0 && next() < 0.15;
    const name = reuse ? names[Math.floor(next() * names.length)]! : `img${i}.bin`;
    if (!reuse) files[name] = randomImage(next);
    names.push(name);
  }
  return { files, names };
}

const TRIPLES = [
  "x86_64-pc-linux-gnu", "aarch64-unknown-linux-gnu", "powerpc64le-unknown-linux-gnu", "x86_64-unknown-linux",
  "i686-pc-linux-gnu", "nvptx64-nvidia-cuda", "amdgcn-amd-amdhsa", "x86_64-apple-darwin", "x86_64-pc-windows-msvc", "arm64-apple-macosx",
];

let counter = 0;

interface Twin {
  native: ReturnType<typeof runNative>;
  ours: Awaited<ReturnType<typeof runInDir>>;
  nativeDir: string;
  ourDir: string;
}

/** Runs one argument vector in two fresh directories holding the same files; "OUT" names the output. */
async function twin(tool: string, files: Record<string, Uint8Array>, args: string[]): Promise<Twin> {
  const id = counter++;
  const nativeDir = join(root, `n${id}`);
  const ourDir = join(root, `o${id}`);
  for (const dir of [nativeDir, ourDir]) {
    mkdirSync(dir);
    for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), bytes);
  }
  const native = runNative(tool, args, { cwd: nativeDir });
  const ours = await runInDir(ourDir, (io) => runWrapper(nativeTool(tool)!, args, io));
  return { native, ours, nativeDir, ourDir };
}

function expectSame(t: Twin, label: string): void {
  expect({ label, code: t.ours.code, stderr: t.ours.stderr }).toEqual({ label, code: t.native.status, stderr: t.native.stderr });
  expect(t.ours.stdout.equals(t.native.stdout), `${label}: stdout`).toBe(true);
  const nativeFiles = readdirSync(t.nativeDir).sort();
  const ourFiles = readdirSync(t.ourDir).sort();
  expect(ourFiles, `${label}: files`).toEqual(nativeFiles);
  for (const name of nativeFiles) {
    const a = readFileSync(join(t.nativeDir, name));
    const b = readFileSync(join(t.ourDir, name));
    expect(b.equals(a), `${label}: ${name} differs`).toBe(true);
  }
}

const OUTPUT_SPELLINGS = [["-o", "out.bc"], ["-o=out.bc"], ["--o=out.bc"], ["--o", "out.bc"]];

describe.runIf(hasNative(W14))("offload-wrapper vs clang-offload-wrapper-14", () => {
  it(`${CASES} random image sets are byte-identical`, async () => {
    const next = rng(14);
    for (let c = 0; c < CASES; c++) {
      const { files, names } = randomImageSet(next, 1 + Math.floor(next() * 5));
      const triple = TRIPLES[Math.floor(next() * TRIPLES.length)]!;
      const output = OUTPUT_SPELLINGS[Math.floor(next() * OUTPUT_SPELLINGS.length)]!;
      const tripleArgs = next() < 0.5 ? [`--target=${triple}`] : ["-target", triple];
      const args = next() < 0.5 ? [...tripleArgs, ...output, ...names] : [...names, ...output, ...tripleArgs];
      expectSame(await twin(W14, files, args), `case ${c}: ${args.join(" ")}`);
    }
  });

  it("fails where clang-offload-wrapper-14 fails, with its words, writing nothing", async () => {
    const files = { "a.bin": new TextEncoder().encode("DEVIMG"), "b.bin": new Uint8Array([1, 2, 3]) };
    const vectors: string[][] = [
      ["--target=x86_64-pc-linux-gnu", "a.bin"],
      ["-o", "out.bc", "a.bin"],
      ["a.bin"],
      [],
      ["--target=x86_64-pc-linux-gnu", "-o", "out.bc"],
      ["--target=foo-bar-baz", "-o", "out.bc", "a.bin"],
      ["--target=", "-o", "out.bc", "a.bin"],
      ["--target=x86_64-pc-linux-gnu", "-o", "out.bc", "missing.bin"],
      ["--target=x86_64-pc-linux-gnu", "-o", "out.bc", "a.bin", "missing.bin"],
      ["--target=x86_64-pc-linux-gnu", "-o", "no/such/dir/out.bc", "a.bin"],
      ["--target=x86_64-pc-linux-gnu", "--target=x86_64-pc-linux-gnu", "-o", "out.bc", "a.bin"],
      ["--targte=x86_64-pc-linux-gnu", "-o", "out.bc", "a.bin"],
      ["--target", "-o", "out.bc", "a.bin"],
      ["--bogus", "--target=x86_64-pc-linux-gnu", "-o", "out.bc", "a.bin"],
      ["--version"],
      ["--target=x86_64-pc-linux-gnu", "-o", "out.bc", "a.bin", "--help-list", "b.bin"],
      ["-h", "--target=x86_64-pc-linux-gnu", "-o", "out.bc", "a.bin"],
      ["--save-temps", "--target=x86_64-pc-linux-gnu", "-o", "out.bc", "a.bin", "b.bin"],
      ["--target=x86_64-pc-linux-gnu", "-o", "out.bc", "--", "a.bin", "-b.bin"],
    ];
    for (const args of vectors) {
      const t = await twin(W14, files, args);
      if (args[0] === "--version") {
        expect(t.ours.code).toBe(0);
        expect(t.ours.stdout.toString()).toMatch(/^offload-kit offload-wrapper version 14\.0\.6/);
        continue;
      }
      if (args.includes("--help-list") || args.includes("-h")) {
        // Our help has the --offload-arch line (seed 004); the native lines are all there, in order.
        const ours = t.ours.stdout.toString().split("\n").filter((l) => !l.includes("--offload-arch")).map((l) => l.replace(/ +- /, " - "));
        const native = t.native.stdout.toString().split("\n").map((l) => l.replace(/ +- /, " - "));
        expect(ours).toEqual(native);
        expect(t.ours.code).toBe(t.native.status);
        continue;
      }
      expectSame(t, args.join(" "));
    }
  });
});

describe.runIf(hasNative(W22))("offload-wrapper vs llvm-offload-wrapper-22", () => {
  it(`${CASES} random OpenMP image sets and ${Math.ceil(CASES / 2)} CUDA/HIP images are byte-identical`, async () => {
    const next = rng(22);
    for (let c = 0; c < CASES + Math.ceil(CASES / 2); c++) {
      const kind = c < CASES ? "openmp" : next() < 0.5 ? "cuda" : "hip";
      const { files, names } = randomImageSet(next, kind === "openmp" ? 1 + Math.floor(next() * 5) : 1);
      const args = [`--kind=${kind}`, ...OUTPUT_SPELLINGS[Math.floor(next() * OUTPUT_SPELLINGS.length)]!];
      if (next() < 0.7) args.push(next() < 0.5 ? `--triple=${TRIPLES[Math.floor(next() * TRIPLES.length)]}` : "--triple", ...(args.at(-1) === "--triple" ? [TRIPLES[0]!] : []));
      args.push(...names);
      expectSame(await twin(W22, files, args), `case ${c}: ${args.join(" ")}`);
    }
  });

  it("fails where llvm-offload-wrapper-22 fails, with its words, writing nothing", async () => {
    const files = { "a.bin": new TextEncoder().encode("DEVIMG"), "b.bin": new Uint8Array([1, 2, 3]) };
    const vectors: string[][] = [
      ["--kind=cuda", "-o", "out.bc", "a.bin", "b.bin"],
      ["--kind=hip", "-o", "out.bc", "a.bin", "a.bin"],
      ["--kind=foo", "-o", "out.bc", "a.bin"],
      ["--kind=openmp", "a.bin"],
      ["--triple=x86_64-pc-linux-gnu", "-o", "out.bc", "a.bin"],
      ["--kind=openmp", "-o", "out.bc"],
      ["--kind=openmp", "-o", "out.bc", "missing.bin", "a.bin"],
      ["--kind=cuda", "-o", "out.bc", "a.bin", "missing.bin"],
      ["--kind=openmp", "-o", "no/such/dir/out.bc", "a.bin"],
      ["--kind=openmp", "--kind=cuda", "-o", "out.bc", "a.bin"],
      ["--kind=openmp", "--tripel=x86_64-pc-linux-gnu", "-o", "out.bc", "a.bin"],
      ["--kind=openmp", "--kindd=cuda", "-o", "out.bc", "a.bin"],
      ["--kind=openmp", "--help"],
      ["--kind=openmp", "--help-list"],
      ["--kind=openmp", "--help-list-hidden"],
      ["--kind=openmp", "--help-hidden"],
      ["--kind=openmp", "-h", "-o", "out.bc", "a.bin"],
    ];
    for (const args of vectors) expectSame(await twin(W22, files, args), args.join(" "));
  });
});

describe.runIf(hasNative("llvm-as-14") && hasNative("llvm-as-22") && hasNative("llvm-dis-22"))("-S text", () => {
  const images = [{ bytes: new TextEncoder().encode("DEVIMG\"\\\n") }, { bytes: offloadBinary([new Uint8Array([0, 1, 2, 255])]) }, { bytes: new Uint8Array(0) }];
  const asm = (tool: string, text: string) => {
    const dir = mkdtempSync(join(root, "ll-"));
    writeFileSync(join(dir, "in.ll"), Buffer.from(text, "latin1"));
    const run = runNative(tool, ["--preserve-bc-uselistorder=false", "in.ll", "-o", "out.bc"], { cwd: dir });
    expect(run.stderr).toBe("");
    return readFileSync(join(dir, "out.bc"));
  };
  const dis = (bitcode: Uint8Array) => {
    const run = runNative("llvm-dis-22", ["-", "-o", "-"], { input: bitcode });
    return run.stdout.toString("latin1").replace(/^; ModuleID = .*\n/, "");
  };

  it("llvm-as-14 turns the 14 text (and the image-info variant) back into the same bitcode", () => {
    for (const arch of [undefined, "gfx906"]) {
      const options = { triple: "x86_64-pc-linux-gnu", images: images.map((image, i) => ({ ...image, arch: arch === undefined ? undefined : `${arch}:${i}` })) };
      expect(asm("llvm-as-14", wrapImagesText(options)).equals(Buffer.from(wrapImages(options)))).toBe(true);
    }
  });

  it("llvm-as-22 reads the 22 text of every kind as the same module", () => {
    for (const kind of ["openmp", "cuda", "hip"] as const) {
      const options = { flavour: "llvm-offload-wrapper-22" as const, kind, images: kind === "openmp" ? images : images.slice(0, 1) };
      const bitcode = wrapImages(options);
      const reassembled = asm("llvm-as-22", wrapImagesText(options));
      // The function symbol table is a StringMap: its order depends on insertion order, which the parser
      // does not share with the wrapper. Same module = same disassembly.
      expect(dis(reassembled)).toBe(dis(bitcode));
      if (kind === "openmp") expect(reassembled.equals(Buffer.from(bitcode))).toBe(true);
    }
  });
});
