// `replace` in memory, container by container (the library API), and `offload-kit replace` as a whole process:
// which bundle --bundle picks, and the errors (no such entry, ambiguous ID, --bundle out of range, an unreadable
// replacement) that leave nothing written.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import { parseBinaryBundle, writeBinaryBundle } from "../../src/formats/bundle.js";
import { memberData, readArchive, writeArchive } from "../../src/formats/archive.js";
import { readTextBundle, writeTextBundle } from "../../src/formats/text-bundle.js";
import { parseOffloadBinaries, writeOffloadBinary, writeOffloadBinaryMulti } from "../../src/formats/offload-binary.js";
import { readFileSync as readFixture } from "node:fs";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { loadZstd } from "../../src/compress/zstd-wasm.js";
import { replace, replaceWith, transformWith } from "../../src/prune/index.js";
import { scratchDir } from "../cli/harness.js";
import { HANG_MS } from "../limits.js";
import { rng, randomBytes } from "../engines.js";

const BIN = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;
const HOST = "host-x86_64-unknown-linux-gnu-";
const G90A = "hip-amdgcn-amd-amdhsa--gfx90a";
const G906 = "hip-amdgcn-amd-amdhsa--gfx906";
const G1100 = "hip-amdgcn-amd-amdhsa--gfx1100";

const next = rng(71);
const payload = (n: number) => randomBytes(next, n);
const entries = [
  { id: HOST, data: payload(3) },
  { id: G90A, data: payload(5000) },
  { id: G906, data: payload(7001) },
  { id: G1100, data: payload(33) },
];
const NEW = payload(6100);

await loadZstd();
const codecs = nodeCodecs;

function errorOf(run: () => unknown): OffloadKitError {
  try {
    run();
  } catch (e) {
    if (e instanceof OffloadKitError) return e;
    throw e;
  }
  throw new Error("expected an OffloadKitError");
}

const swapped = (list: typeof entries, id: string) => list.map((e) => (e.id === id ? { id, data: NEW } : e));

describe("replace in memory", () => {
  it.each([1, 4096])("a binary bundle keeps its order and alignment (%i)", (align) => {
    const result = replaceWith(writeBinaryBundle(entries, align), { entry: G906, payload: NEW, codecs, name: "b.bundle" });
    expect(result.output).toEqual(writeBinaryBundle(swapped(entries, G906), align));
    expect([result.container, result.replaced, result.bundles]).toEqual(["bundle", [""], 1]);
  });

  it.each([";", "#", "//"])("a text bundle keeps its comment style (%s)", (comment) => {
    const result = replaceWith(writeTextBundle(comment, entries), { entry: G1100, payload: NEW, codecs });
    expect(result.output).toEqual(writeTextBundle(comment, swapped(entries, G1100)));
    expect(readTextBundle(result.output, comment).entries.map((e) => e.id)).toEqual(entries.map((e) => e.id));
  });

  it("a CCOB file of two compressed bundles: each is a bundle for --bundle", () => {
    const one = transformWith(writeBinaryBundle(entries, 4096), { codecs }, "compress").output;
    const two = transformWith(writeBinaryBundle(entries.slice(0, 3), 4096), { codecs }, "compress").output;
    const file = new Uint8Array([...one, ...two]);
    const ambiguous = errorOf(() => replaceWith(file, { entry: G90A, payload: NEW, codecs, name: "k.ccob" }));
    expect(ambiguous.code).toBe("ENTRY_AMBIGUOUS");
    expect(ambiguous.message).toBe("k.ccob: 'hip-amdgcn-amd-amdhsa--gfx90a' is in 2 places (compressed bundle 0; compressed bundle 1); give --bundle=N to pick the bundle (0 to 1, in file order)");
    const result = replaceWith(file, { entry: G90A, bundle: 1, payload: NEW, codecs });
    expect(result.replaced).toEqual(["compressed bundle 1"]);
    const plain = transformWith(result.output, { codecs }, "decompress").output;
    expect(plain).toEqual(new Uint8Array([...writeBinaryBundle(entries, 4096), ...writeBinaryBundle(swapped(entries.slice(0, 3), G90A), 4096)]));
    // The entry only the first holds needs no --bundle.
    expect(replaceWith(file, { entry: G1100, payload: NEW, codecs }).replaced).toEqual(["compressed bundle 0"]);
  });

  it("an archive: members are bundles in order; other members stay", () => {
    const archive = writeArchive([
      { name: "a.bundle", data: writeBinaryBundle(entries, 4096), symbols: null },
      { name: "notes.txt", data: new TextEncoder().encode("hello\n"), symbols: null },
      { name: "b.bundle", data: writeBinaryBundle(entries.slice(0, 2), 4096), symbols: null },
    ]);
    const result = replaceWith(archive, { entry: G90A, bundle: 1, payload: NEW, codecs, name: "lib.a" });
    expect([result.container, result.bundles, result.replaced]).toEqual(["archive", 2, ["member b.bundle"]]);
    const read = readArchive(result.output);
    expect(read.members.map((m) => m.name)).toEqual(["a.bundle", "notes.txt", "b.bundle"]);
    expect(parseBinaryBundle(memberData(result.output, read.members[2])).find((e) => e.id === G90A)?.data).toEqual(NEW);
    expect(memberData(result.output, read.members[0])).toEqual(writeBinaryBundle(entries, 4096));
    const range = errorOf(() => replaceWith(archive, { entry: G90A, bundle: 2, payload: NEW, codecs, name: "lib.a" }));
    expect([range.code, range.message]).toEqual(["BUNDLE_OUT_OF_RANGE", "lib.a: --bundle=2 is out of range: the file holds 2 bundles (0 to 1)"]);
  });

  it("offload binaries: the binary holding the image is written again", () => {
    const image = (arch: string, data: Uint8Array) => writeOffloadBinary({ imageKind: 2, offloadKind: 3, strings: [["triple", "amdgcn-amd-amdhsa"], ["arch", arch]], image: data });
    const file = new Uint8Array([...image("gfx90a", payload(100)), ...image("gfx1100", payload(200))]);
    const result = replaceWith(file, { entry: "hip-amdgcn-amd-amdhsa--gfx1100", payload: NEW, codecs });
    expect(result.replaced).toEqual(["offload binary 1"]);
    expect(result.output).toEqual(new Uint8Array([...file.subarray(0, image("gfx90a", payload(100)).length), ...image("gfx1100", NEW)]));
    expect(parseOffloadBinaries(result.output).images.map((i) => i.arch)).toEqual(["gfx90a", "gfx1100"]);
  });

  it("a version 2 binary of several images is written again whole, with the same strings", () => {
    // Version 2 (LLVM 23) numbers kinds as 22 does: HIP is 4 (see offloadKindText).
    const images = [
      { imageKind: 2, offloadKind: 4, flags: 0, strings: [["triple", "amdgcn-amd-amdhsa"], ["arch", "gfx90a"]] as [string, string][], image: payload(64) },
      { imageKind: 2, offloadKind: 4, flags: 1, strings: [["triple", "amdgcn-amd-amdhsa"], ["arch", "gfx1100"], ["feature", "+wavefrontsize64"]] as [string, string][], image: payload(90) },
    ];
    const result = replaceWith(writeOffloadBinaryMulti(images, { version: 2 }), { entry: "hip-amdgcn-amd-amdhsa--gfx90a", payload: NEW, codecs });
    expect(result.output).toEqual(writeOffloadBinaryMulti([{ ...images[0], image: NEW }, images[1]], { version: 2 }));
  });

  it("a fat object's host entry replaced by something not an object is refused, naming the file", () => {
    const fat = new Uint8Array(readFixture(new URL("../fixtures/hosts/fat.o", import.meta.url)));
    const error = errorOf(() => replaceWith(fat, { entry: "host-x86_64-pc-linux-gnu-", payload: NEW, codecs, name: "fat.o" }));
    expect(error.message).toBe("fat.o: the replacement for the host entry must be the new host object (an ELF object): not an ELF file (no \\x7fELF magic)");
  });

  it("errors name the file, the entry and the bundle", () => {
    const bundle = writeBinaryBundle(entries, 4096);
    const missing = errorOf(() => replaceWith(bundle, { entry: "hip-amdgcn-amd-amdhsa--gfx942", payload: NEW, codecs, name: "b.bundle" }));
    expect([missing.code, missing.message]).toEqual(["ENTRY_NOT_FOUND", "b.bundle: no entry 'hip-amdgcn-amd-amdhsa--gfx942'"]);
    const range = errorOf(() => replaceWith(bundle, { entry: G90A, bundle: 1, payload: NEW, codecs, name: "b.bundle" }));
    expect([range.code, range.message]).toEqual(["BUNDLE_OUT_OF_RANGE", "b.bundle: --bundle=1 is out of range: the file holds 1 bundle (0)"]);
    expect(replaceWith(bundle, { entry: G90A, bundle: 0, payload: NEW, codecs }).replaced).toEqual([""]);
    const nothing = errorOf(() => replaceWith(new TextEncoder().encode("plain text\n"), { entry: G90A, payload: NEW, codecs, name: "t.txt" }));
    expect(nothing.code).toBe("NO_OFFLOAD_CONTENT");
    const negative = errorOf(() => replaceWith(bundle, { entry: G90A, bundle: -1, payload: NEW, codecs, name: "b.bundle" }));
    expect(negative.code).toBe("BAD_OPTIONS");
  });

  it("the async API takes a ByteSource or bytes (browser codecs by default)", async () => {
    const result = await replace(writeBinaryBundle(entries, 1), { entry: HOST, payload: NEW });
    expect(result.output).toEqual(writeBinaryBundle(swapped(entries, HOST), 1));
  });
});

function kit(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: "utf8", timeout: HANG_MS });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("offload-kit replace", () => {
  it("writes the output, and on every error writes nothing", () => {
    const dir = scratchDir("offload-kit-replace-cli-");
    writeFileSync(join(dir, "k.ll"), writeTextBundle(";", entries));
    writeFileSync(join(dir, "new.co"), NEW);
    mkdirSync(join(dir, "a-folder"));
    const ok = kit(dir, "replace", `--entry=${G906}`, "--with=new.co", "k.ll", "-o", "out.ll");
    expect([ok.code, ok.stderr]).toEqual([0, ""]);
    expect(new Uint8Array(readFileSync(join(dir, "out.ll")))).toEqual(writeTextBundle(";", swapped(entries, G906)));
    const before = readdirSync(dir).sort();
    const cases: [string[], string][] = [
      [[`--entry=${G906}`, "--with=missing.co"], "error: the replacement (--with) 'missing.co': No such file or directory"],
      [[`--entry=${G906}`, "--with=a-folder"], "error: the replacement (--with) 'a-folder': Is a directory"],
      [["--entry=hip-amdgcn-amd-amdhsa--gfx942", "--with=new.co"], "k.ll: no entry 'hip-amdgcn-amd-amdhsa--gfx942'"],
      [[`--entry=${G906}`, "--bundle=3", "--with=new.co"], "k.ll: --bundle=3 is out of range: the file holds 1 bundle (0)"],
      [[`--entry=${G906}`, "--bundle=x", "--with=new.co"], "--bundle must be a bundle index (from 0), not 'x'"],
    ];
    for (const [args, message] of cases) {
      const run = kit(dir, "replace", ...args, "k.ll", "-o", "fail.ll");
      expect(run.code, args.join(" ")).not.toBe(0);
      expect(run.stderr).toContain(message);
      expect(existsSync(join(dir, "fail.ll"))).toBe(false);
    }
    expect(readdirSync(dir).sort()).toEqual(before);
  }, HANG_MS);
});
