// Golden files written by the native bundlers (test/fixtures/README.md): our writer must reproduce the
// 19 files byte for byte, and our reader must read what 14, 19 and 22 wrote.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseBinaryBundle, writeBinaryBundle } from "../../src/formats/bundle.js";
import { latin1Decode } from "../../src/formats/bytes.js";
import { readTextBundle, writeTextBundle } from "../../src/formats/text-bundle.js";
import { ENGINE_KINDS, makeEngine } from "../engines.js";

const dir = new URL("../fixtures/bundler/", import.meta.url);
const file = (name: string) => new Uint8Array(readFileSync(new URL(name, dir)));
const text = (name: string) => latin1Decode(file(name));

const HOST = file("in-host.txt");
const DEV = file("in-dev.txt");
const GFX90A = file("in-gfx90a.txt");

describe("native golden files: writing", () => {
  it("binary bundles are byte-identical to clang-offload-bundler 19", () => {
    expect(writeBinaryBundle([
      { id: "host-x86_64-unknown-linux-gnu-", data: HOST },
      { id: "hip-amdgcn-amd-amdhsa--gfx906", data: DEV },
    ])).toEqual(file("host-gfx906.19.bc"));
    expect(writeBinaryBundle([
      { id: "host-x86_64-unknown-linux-gnu-", data: HOST },
      { id: "hip-amdgcn-amd-amdhsa--gfx906", data: DEV },
      { id: "hip-amdgcn-amd-amdhsa--gfx90a:xnack-", data: GFX90A },
    ], 16)).toEqual(file("align16.19.bc"));
    expect(writeBinaryBundle([
      { id: "hip-amdgcn-amd-amdhsa--gfx906", data: DEV },
      { id: "hip-amdgcn-amd-amdhsa--gfx90a:xnack-", data: GFX90A },
    ], 4096)).toEqual(file("hip-only-align4096.19.bc"));
  });

  it("text bundles are byte-identical for every comment style", () => {
    const entries = [
      { id: "host-x86_64-unknown-linux-gnu-", data: file("in-host-i.txt") },
      { id: "hip-amdgcn-amd-amdhsa--gfx906", data: file("in-dev-i.txt") },
    ];
    expect(writeTextBundle("//", entries)).toEqual(file("text.19.i"));
    expect(writeTextBundle(";", entries)).toEqual(file("text.19.ll"));
    expect(writeTextBundle("#", entries)).toEqual(file("text.19.s"));
  });
});

describe.each(ENGINE_KINDS)("native golden files: reading (%s)", (kind) => {
  const engine = makeEngine(kind);

  it.each(["14", "19", "22"])("binary bundles written by LLVM %s", (version) => {
    const name = version === "14" ? "host-gfx906.14.bc" : `host-gfx906.${version}.bc`;
    const entries = parseBinaryBundle(file(name), { engine });
    const ids = version === "14"
      ? ["host-x86_64-unknown-linux-gnu", "hip-amdgcn-amd-amdhsa-gfx906"]
      : ["host-x86_64-unknown-linux-gnu-", "hip-amdgcn-amd-amdhsa--gfx906"];
    expect(entries.map((e) => e.id)).toEqual(ids);
    expect(entries.map((e) => latin1Decode(e.data))).toEqual(["HOST", "DEV"]);
  });

  it("aligned bundles keep their padding out of the payloads", () => {
    for (const name of ["align16.19.bc", "align16.22.bc", "align8.14.bc", "hip-only-align4096.19.bc"]) {
      const entries = parseBinaryBundle(file(name), { engine });
      const align = Number(/align(\d+)/.exec(name)![1]);
      for (const e of entries) expect(e.offset % align, name).toBe(0);
      expect(latin1Decode(entries.at(-1)!.data)).toBe(latin1Decode(GFX90A));
    }
  });

  it.each(["14", "19", "22"])("text bundles written by LLVM %s round-trip their payloads", (version) => {
    const read = readTextBundle(file(`text.${version}.i`), "//", { engine });
    expect(read.entries.map((e) => text(`text.${version}.i`).slice(e.offset, e.offset + e.size))).toEqual(["int host;\n", "int dev;"]);
    expect(read.entries[1].id).toBe(version === "14" ? "hip-amdgcn-amd-amdhsa-gfx906" : "hip-amdgcn-amd-amdhsa--gfx906");
  });
});
