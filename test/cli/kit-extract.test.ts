// offload-kit extract on bundles wherever they are held: the clang-19 host fixtures against what the native
// tools extracted from them (test/fixtures/hosts/expected.tsv), a differential run against
// clang-offload-bundler-19 on bundles it writes at test time, names, filters and failures.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { extractFile } from "../../src/inspect/node/extract.js";
import { ENGINE_KINDS, makeEngine, randomBytes, rng } from "../engines.js";
import { buildElf64, fatbin } from "../inspect/elf-builder.js";
import { hasNative, runNative } from "../native.js";
import { runInDir, scratchDir } from "./harness.js";

const HOSTS = new URL("../fixtures/hosts/", import.meta.url).pathname;
const enc = (s: string) => new TextEncoder().encode(s);
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const G906 = "hip-amdgcn-amd-amdhsa--gfx906";
const G90A = "hip-amdgcn-amd-amdhsa--gfx90a";
/** As given to the native bundler: with a trailing '-', 19 would store the ID twice over. */
const HOST = "host-x86_64-unknown-linux-gnu";
const HOST_ID = "host-x86_64-unknown-linux-gnu-";

function workdir(): string {
  return scratchDir("offload-kit-extract-");
}

const kit = (dir: string, ...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));

/** A binary bundle written field by field, repeated IDs allowed (our writer refuses them). */
function rawBundle(entries: readonly { id: string; data: Uint8Array }[]): Uint8Array {
  const head = 32 + entries.reduce((n, e) => n + 24 + e.id.length, 0);
  const out = new Uint8Array(head + entries.reduce((n, e) => n + e.data.length, 0));
  const view = new DataView(out.buffer);
  out.set(enc("__CLANG_OFFLOAD_BUNDLE__"), 0);
  view.setBigUint64(24, BigInt(entries.length), true);
  let at = 32;
  let payload = head;
  for (const e of entries) {
    view.setBigUint64(at, BigInt(payload), true);
    view.setBigUint64(at + 8, BigInt(e.data.length), true);
    view.setBigUint64(at + 16, BigInt(e.id.length), true);
    out.set(enc(e.id), at + 24);
    out.set(e.data, payload);
    at += 24 + e.id.length;
    payload += e.data.length;
  }
  return out;
}

interface JsonOutput {
  path: string;
  id: string;
  offset: number | null;
  size: number;
  sha256: string;
  bundle: number | null;
  image?: number;
  file: string;
  section?: string;
  member?: string;
  compressed?: { offset: number; size: number };
}

/** expected.tsv: `<file> <bundle index | image> <entry ID | packager file name> <size> <sha256>`. */
function expected(): string[][] {
  return readFileSync(join(HOSTS, "expected.tsv"), "utf8").trim().split("\n").map((line) => line.split("\t"));
}

describe("offload-kit extract, on what clang 19 builds", () => {
  describe.each(ENGINE_KINDS)("%s engine", (kind) => {
    it("writes every entry byte-identical to what the native tools extract", () => {
      const dir = workdir();
      const engine = makeEngine(kind);
      const outputs = ["app", "fat.o", "omp.o", "libboth.a"].flatMap((file) => [
        ...extractFile(join(HOSTS, file), { outDir: dir, engine, hash: true }).outputs,
      ]);
      const key = (file: string, where: string, id: string) => `${file} ${where} ${id}`;
      const ours = new Map(outputs.map((o) => [
        key(o.file.substring(HOSTS.length), o.bundle === null ? "image" : String(o.bundle), o.bundle === null ? o.path.substring(dir.length + 1) : o.id),
        o,
      ]));
      for (const [file, where, id, size, hash] of expected()) {
        const out = ours.get(key(file!, where!, id!));
        expect(out, `${file} ${where} ${id}`).toBeDefined();
        expect([out!.size, out!.sha256]).toEqual([Number(size), hash]);
        expect(sha256(readFileSync(out!.path))).toBe(hash);
      }
      // Beyond the native extraction: host entries (empty in app; the fat object's stored byte).
      expect(outputs.filter((o) => o.id.startsWith("host-")).map((o) => [o.file.substring(HOSTS.length), o.size])).toEqual([
        ["app", 0], ["app", 0], ["app", 0], ["fat.o", 1], ["libboth.a", 1],
      ]);
      expect(outputs).toHaveLength(expected().length + 2);
    });
  });

  it("reports JSON with absolute payload offsets, and where each entry was", async () => {
    const dir = workdir();
    const run = await kit(dir, "extract", "--json", join(HOSTS, "app"), join(HOSTS, "libboth.a"), "--out-dir=out");
    expect(run.code).toBe(0);
    const { outputs, problems, errors } = JSON.parse(run.stdout.toString()) as { outputs: JsonOutput[]; problems: unknown[]; errors: unknown[] };
    expect([problems, errors]).toEqual([[], []]);
    const app = readFileSync(join(HOSTS, "app"));
    for (const o of outputs.filter((x) => x.file.endsWith("app") && x.offset !== null)) {
      expect(sha256(app.subarray(o.offset!, o.offset! + o.size))).toBe(o.sha256);
    }
    expect(outputs.slice(0, 2)).toMatchObject([
      { path: "out/app-0-host-x86_64-unknown-linux--", bundle: 0, section: ".hip_fatbin", offset: 0x2000, size: 0 },
      { path: "out/app-0-hipv4-amdgcn-amd-amdhsa--gfx906", bundle: 0, section: ".hip_fatbin", offset: 0x2000, size: 3008 },
    ]);
    const packed = outputs.filter((o) => o.compressed !== undefined);
    expect(packed.map((o) => [o.bundle, o.offset])).toEqual([[2, null], [2, null], [2, null]]);
    expect(outputs.filter((o) => o.file.endsWith("libboth.a")).map((o) => [o.member, o.section ?? null, o.path])).toEqual([
      ["fat.o", null, "out/libboth.a-0-hip-amdgcn-amd-amdhsa--gfx906"],
      ["fat.o", null, "out/libboth.a-0-hip-amdgcn-amd-amdhsa--gfx90a"],
      ["fat.o", null, "out/libboth.a-0-host-x86_64-pc-linux-gnu-"],
      ["omp.o", ".llvm.offloading", "out/libboth-amdgcn-amd-amdhsa-gfx906.0.bc"],
    ]);
    const plain = await kit(dir, "extract", join(HOSTS, "app"), "--out-dir=again");
    expect(plain.stdout.toString()).toMatch(new RegExp(`^${join(HOSTS, "app")}: 9 outputs, 21,256 bytes\nextracted 9 outputs \\(21256 bytes\\) from 1 of 1 file into again in \\d+\\.\\d\\d s\n$`));
  });

  it("keeps the entries --targets selects, by the bundler's compatibility rules", async () => {
    const dir = workdir();
    // gfx90a:xnack- takes the entries built for gfx90a without an xnack setting; hip takes hipv4.
    const run = await kit(dir, "extract", "--json", join(HOSTS, "app"), join(HOSTS, "omp.o"), "--targets=hip-amdgcn-amd-amdhsa--gfx90a:xnack-,openmp-amdgcn-amd-amdhsa--gfx906", "--out-dir=o");
    expect(run.code).toBe(0);
    const outputs = (JSON.parse(run.stdout.toString()) as { outputs: JsonOutput[] }).outputs;
    expect(outputs.map((o) => `${o.bundle ?? `image ${o.image}`} ${o.id}`)).toEqual([
      "0 hipv4-amdgcn-amd-amdhsa--gfx90a", "1 hipv4-amdgcn-amd-amdhsa--gfx90a", "2 hipv4-amdgcn-amd-amdhsa--gfx90a",
      "image 0 openmp-amdgcn-amd-amdhsa--gfx906",
    ]);
    const none = await kit(dir, "extract", join(HOSTS, "app"), "--targets=hip-amdgcn-amd-amdhsa--gfx1100", "--out-dir=n");
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`${join(HOSTS, "app")}: none of the entries of its 3 bundles and 0 offload images is selected by --targets=hip-amdgcn-amd-amdhsa--gfx1100 (it holds hipv4-amdgcn-amd-amdhsa--gfx906, hipv4-amdgcn-amd-amdhsa--gfx90a, host-x86_64-unknown-linux--)`);
    const bad = await kit(dir, "extract", join(HOSTS, "app"), "--targets=cuda-nvptx64-nvidia-cuda--sm_70", "--out-dir=b");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^offload-kit extract: error: invalid target 'cuda-nvptx64-nvidia-cuda--sm_70'/);
    expect(existsSync(join(dir, "b"))).toBe(false);
  });

  it("says why an input gives nothing, and goes on with the others", async () => {
    const dir = workdir();
    const plain = buildElf64([{ name: ".text", data: enc("no device code here") }]);
    writeFileSync(join(dir, "plain.so"), plain);
    const bundle = writeBinaryBundle([{ id: G906, data: enc("x") }]);
    writeFileSync(join(dir, "cut.bc"), bundle.subarray(0, bundle.length - 1));
    writeFileSync(join(dir, "good.bc"), bundle);
    const run = await kit(dir, "extract", "plain.so", "cut.bc", "good.bc", "missing.bc", "--out-dir=out");
    expect(run.code).toBe(1);
    expect(run.stderr).toBe([
      `offload-kit extract: error: plain.so: no offload bundles or offload binaries found (${plain.length} bytes)`,
      `offload-kit extract: error: cut.bc: at 0x0: malformed bundle header: the payload of bundle entry 0 (offset ${bundle.length - 1}, size 1) runs past the end of the ${bundle.length - 1}-byte input`,
      "offload-kit extract: error: 'missing.bc': No such file or directory",
      "",
    ].join("\n"));
    expect(readdirSync(join(dir, "out"))).toEqual([`good.bc-0-${G906}`]);
  });

  it("names outputs inside the folder, never twice, whatever the IDs", async () => {
    const dir = workdir();
    const hostile = rawBundle([
      { id: "hip-amdgcn-amd-amdhsa--gfx90a:xnack+", data: enc("a") },
      { id: "../../etc/passwd", data: enc("b") },
      { id: "hip-amdgcn-amd-amdhsa--gfx90a_xnack+", data: enc("c") },
      { id: "HIP-amdgcn-amd-amdhsa--gfx90a:xnack+", data: enc("d") },
      { id: "hip-amdgcn-amd-amdhsa--gfx90a:xnack+", data: enc("e") },
    ]);
    writeFileSync(join(dir, "h.bc"), hostile);
    const run = await kit(dir, "extract", "--json", "h.bc", "--out-dir=out");
    expect(run.code).toBe(0);
    const outputs = (JSON.parse(run.stdout.toString()) as { outputs: JsonOutput[] }).outputs;
    expect(outputs.map((o) => [o.path, readFileSync(join(dir, o.path), "utf8")])).toEqual([
      ["out/h.bc-0-hip-amdgcn-amd-amdhsa--gfx90a_xnack+", "a"],
      ["out/h.bc-0-.._.._etc_passwd", "b"],
      ["out/h.bc-0-hip-amdgcn-amd-amdhsa--gfx90a_xnack+.1", "c"],
      ["out/h.bc-0-HIP-amdgcn-amd-amdhsa--gfx90a_xnack+.2", "d"],
      ["out/h.bc-0-hip-amdgcn-amd-amdhsa--gfx90a_xnack+.3", "e"],
    ]);
    mkdirSync(join(dir, "a"));
    mkdirSync(join(dir, "b"));
    writeFileSync(join(dir, "a", "x.bc"), hostile);
    writeFileSync(join(dir, "b", "x.bc"), hostile);
    const twice = await kit(dir, "extract", "a/x.bc", "b/x.bc", "--out-dir=two");
    expect(twice.code).toBe(1);
    expect(twice.stderr).toBe("offload-kit extract: error: inputs 'a/x.bc' and 'b/x.bc' have the same file name; their outputs would overwrite each other\n");
    expect(existsSync(join(dir, "two"))).toBe(false);
  });

  it("leaves no output of an input that fails while writing", async () => {
    const dir = workdir();
    writeFileSync(join(dir, "f.bc"), writeBinaryBundle([{ id: G906, data: enc("one") }, { id: G90A, data: enc("two") }]));
    // A directory where the second output goes: its rename fails, and the first output must not stay.
    mkdirSync(join(dir, "out", `f.bc-0-${G90A.replace(/:/g, "_")}`), { recursive: true });
    const run = await kit(dir, "extract", "f.bc", "--out-dir=out");
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^offload-kit extract: error: f\.bc: /);
    expect(readdirSync(join(dir, "out"))).toEqual([`f.bc-0-${G90A}`]);
  });

  it.skipIf(!hasNative("clang-offload-bundler-19"))("matches clang-offload-bundler-19 on bundles it writes, back to back in a section", () => {
    const dir = workdir();
    const next = rng(19);
    const inputs = [HOST, G906, G90A].map((id, i) => {
      const path = join(dir, `in${i}`);
      writeFileSync(path, randomBytes(next, 3000 + 1000 * i));
      return path;
    });
    const targets = `-targets=${HOST},${G906},${G90A}`;
    const made = [["-bundle-align=4096"], [], ["-compress"], ["-bundle-align=64"]].map((extra, i) => {
      const path = join(dir, `b${i}.bc`);
      const r = runNative("clang-offload-bundler-19", ["-type=bc", targets, ...inputs.map((p) => `-input=${p}`), `-output=${path}`, ...extra]);
      expect(r.status, r.stderr).toBe(0);
      return new Uint8Array(readFileSync(path));
    });
    const section = fatbin(made);
    writeFileSync(join(dir, "lib.so"), buildElf64([{ name: ".text", data: randomBytes(next, 5000) }, { name: ".hip_fatbin", data: section.bytes, align: 4096 }]));
    const ours = extractFile(join(dir, "lib.so"), { outDir: join(dir, "ours"), hash: true }).outputs;
    expect(ours).toHaveLength(12);
    made.forEach((_, b) => {
      const outs = [HOST, G906, G90A].map((id) => join(dir, `native-${b}-${id.replace(/:/g, "_")}`));
      const r = runNative("clang-offload-bundler-19", ["-type=bc", "-unbundle", targets, `-input=${join(dir, `b${b}.bc`)}`, ...outs.map((o) => `-output=${o}`)]);
      expect(r.status, r.stderr).toBe(0);
      [HOST_ID, G906, G90A].forEach((id, k) => {
        const mine = ours.find((o) => o.bundle === b && o.id === id);
        expect(mine?.sha256, `${b} ${id}`).toBe(sha256(readFileSync(outs[k]!)));
      });
    });
  });
});

describe("extractFile (library): the output folder", () => {
  it("is made (with its parents) only when an output is named, and removed again when the input fails", () => {
    const dir = scratchDir("offload-kit-extract-lib-");
    const bundle = writeBinaryBundle([{ id: G906, data: enc("x") }]);
    writeFileSync(join(dir, "good.bc"), bundle);
    writeFileSync(join(dir, "cut.bc"), bundle.subarray(0, bundle.length - 1));
    writeFileSync(join(dir, "plain"), "no device code");
    for (const input of ["missing.bc", "plain", "cut.bc"]) {
      expect(() => extractFile(join(dir, input), { outDir: join(dir, "a", "b") })).toThrow();
      expect(existsSync(join(dir, "a")), input).toBe(false);
    }
    // A folder in the way: mkdir -p's words, naming it.
    writeFileSync(join(dir, "f"), "");
    expect(() => extractFile(join(dir, "good.bc"), { outDir: join(dir, "f", "out") })).toThrow(`cannot create directory '${join(dir, "f")}': Not a directory`);
    expect(extractFile(join(dir, "good.bc"), { outDir: join(dir, "a", "b") }).outputs).toHaveLength(1);
    expect(readdirSync(join(dir, "a", "b"))).toEqual([`good.bc-0-${G906}`]);
  });
});
