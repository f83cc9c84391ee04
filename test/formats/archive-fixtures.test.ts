// Golden files made by clang-offload-bundler-19 and llvm-ar-19 (test/fixtures/make-archive-fixtures.sh):
// a heterogeneous device archive holding real device bitcode, an AMDGPU ELF object, a fat object, a
// compressed bundle and a non-bundle member, and the per-target archives the native tool made of it.
// Both engines must reproduce them byte for byte, symbol tables included, without the native tools.
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runBundler } from "../../src/cli/offload-bundler.js";
import { validateBundlerOptions } from "../../src/bundler/options.js";
import { readArchive } from "../../src/formats/archive.js";
import { latin1Decode } from "../../src/formats/bytes.js";
import { unbundleArchive } from "../../src/bundler/node/archive.js";
import { runInDir } from "../cli/harness.js";
import { ENGINE_KINDS, makeEngine } from "../engines.js";

const FIXTURES = new URL("../fixtures/archive/", import.meta.url).pathname;
const G = (id: string) => `hip-amdgcn-amd-amdhsa--${id}`;
const work = mkdtempSync(join(tmpdir(), "offload-kit-archive-fixtures-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let runs = 0;

function fixture(name: string): Buffer {
  return readFileSync(join(FIXTURES, name));
}

/** Symbol names of a GNU archive's `/` table (u32 BE count, offsets, names). */
function symbolNames(archive: Buffer): string[] {
  const index = readArchive(archive);
  if (index.symbolTable === undefined) return [];
  const table = archive.subarray(index.symbolTable.offset, index.symbolTable.offset + index.symbolTable.size);
  const count = table.readUInt32BE(0);
  return latin1Decode(table.subarray(4 + 4 * count)).split("\0").slice(0, count);
}

describe.each(ENGINE_KINDS)("archive fixtures (%s engine)", (kind) => {
  const engine = makeEngine(kind, 1 << 16);

  it("reads the members of the llvm-ar archive", () => {
    const index = readArchive(fixture("hda.a"), { engine });
    expect(index.kind).toBe("gnu");
    expect(index.members.map((m) => m.name)).toEqual(["bitcode.bc", "elf.bc", "fat.o", "a-long-member-name-text.bc", "compressed.bc", "plain.txt"]);
  });

  it.each([
    [[G("gfx906")], ["hda-gfx906.19.a"], false],
    [[G("gfx908:xnack+"), G("gfx906:xnack-")], ["hda-gfx908_xnack+.19.a", "hda-gfx906_xnack-.19.a"], false],
    [[G("gfx1030")], ["hda-gfx1030.19.a"], true],
  ])("unbundles %j as clang-offload-bundler 19 did", (targets, expected, allowMissing) => {
    const dir = join(work, `run${++runs}`);
    cpSync(FIXTURES, dir, { recursive: true });
    const outputs = expected.map((_, i) => join(dir, `out${i}.a`));
    const { job } = validateBundlerOptions({
      type: "a", unbundle: true, targets, input: [join(dir, "hda.a")], output: outputs, allowMissingBundles: allowMissing,
    });
    unbundleArchive(job!, engine, {}, { env: {} });
    expected.forEach((name, i) => expect(readFileSync(outputs[i]).equals(fixture(name)), name).toBe(true));
  });
});

describe("archive fixtures: messages and symbol tables", () => {
  it("fails for a target without code objects with the native message", async () => {
    const dir = join(work, "err");
    cpSync(FIXTURES, dir, { recursive: true });
    const r = await runInDir(dir, (io) => runBundler("clang-offload-bundler-19", ["-type=a", "-unbundle", `-targets=${G("gfx1030")}`, "-input=hda.a", "-output=x.a"], io));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(fixture("hda-gfx1030.19.stderr").toString());
  });

  it("the native symbol tables list each bitcode and ELF member's global definitions", () => {
    expect(symbolNames(fixture("hda-gfx906.19.a"))).toEqual([
      "device_fn", "calls_ext", "gvar", "__oclc_ABI_version",
      "device_fn", "gvar", "calls_ext", "__oclc_ABI_version",
      "device_fn", "calls_ext", "gvar", "__oclc_ABI_version",
    ]);
    expect(readArchive(fixture("hda-gfx906.19.a")).members.map((m) => m.name)).toEqual([
      "bitcode-hip-amdgcn-amd-amdhsa--gfx906bitcode.bc",
      "elf-hip-amdgcn-amd-amdhsa--gfx906elf.bc",
      "fat-hip-amdgcn-amd-amdhsa--gfx906fat.bc",
      "a-long-member-name-text-hip-amdgcn-amd-amdhsa--gfx906a-long-member-name-text.bc",
      "compressed-hip-amdgcn-amd-amdhsa--gfx906compressed.bc",
    ]);
  });
});
