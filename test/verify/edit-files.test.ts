// editFiles (src/prune/node.ts) checks every temporary output before anything is renamed into place: a
// fault injected into the plan (a wrong e_phoff, a bundle that keeps what the plan dropped) fails the edit
// with OUTPUT_VERIFY_FAILED and the destination stays as it was; an input that is already odd in a way its
// output keeps is still edited.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { OffloadKitError } from "../../src/engine/errors.js";
import type { ByteSource } from "../../src/engine/source.js";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { planPrune, transformWith } from "../../src/prune/index.js";
import { decompressBundleFile } from "../../src/prune/bundle-file.js";
import type { PlannedPrune } from "../../src/prune/index.js";
import { editFiles } from "../../src/prune/node.js";
import type { Destination } from "../../src/prune/node.js";
import { materialize, planOf } from "../../src/prune/plan.js";
import { syntheticExecutable } from "../elf-edit/synthetic.js";
import { scratchDir } from "../cli/harness.js";
import { codes, section, setU32, setU64 } from "./elf.js";

const codecs = nodeCodecs;
const prune = (source: ByteSource, name: string): PlannedPrune => planPrune(source, { keep: ["gfx90a"], codecs, name });

/** The prune plan, its output made and then changed by `fault`. */
function faulty(fault: (output: Uint8Array, source: ByteSource) => Uint8Array) {
  return (source: ByteSource, name: string): PlannedPrune => {
    const planned = prune(source, name);
    const made = materialize(planned.plan!, source, codecs);
    return { ...planned, plan: planOf([{ bytes: fault(made, source) }]) };
  };
}

function thrown(run: () => unknown): OffloadKitError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(OffloadKitError);
    return e as OffloadKitError;
  }
  throw new Error("expected an error");
}

describe("editFiles verifies each output before it replaces anything", () => {
  const elf = syntheticExecutable([[100, 200], [300, 50]]).bytes;

  it("a clean prune passes and is written", () => {
    const dir = scratchDir("offload-kit-verify-");
    const input = join(dir, "in.elf");
    writeFileSync(input, elf);
    const edits = editFiles([input], { kind: "output", path: join(dir, "out.elf") }, codecs, prune);
    expect(edits[0].outputSize).toBeLessThan(elf.length);
    expect(codes(new Uint8Array(readFileSync(join(dir, "out.elf"))))).toEqual([]);
  });

  it.each<[string, (dir: string, input: string) => Destination]>([
    ["-o over an existing file", (dir) => ({ kind: "output", path: join(dir, "out.elf") })],
    ["--in-place", () => ({ kind: "in-place" })],
  ])("e_phoff past the end of the output (%s): refused, nothing replaced", (_name, destination) => {
    const dir = scratchDir("offload-kit-verify-");
    const input = join(dir, "in.elf");
    writeFileSync(input, elf);
    writeFileSync(join(dir, "out.elf"), "old contents\n");
    const error = thrown(() => editFiles([input], destination(dir, input), codecs, faulty((out) => {
      setU64(out, 32, out.length + 4096);
      return out;
    })));
    expect(error.code).toBe("OUTPUT_VERIFY_FAILED");
    expect(error.message).toMatch(/^.*in\.elf: internal error: the linked ELF output failed verification, so nothing was written: program headers are longer than binary of size \d+: e_phoff = 0x[0-9a-f]+/);
    expect(error.field).toBe("e_phoff");
    expect(error.offset).toBe(32);
    expect(readFileSync(join(dir, "out.elf"), "utf8")).toBe("old contents\n");
    expect(new Uint8Array(readFileSync(input))).toEqual(elf);
    expect(readdirSync(dir).sort()).toEqual(["in.elf", "out.elf"]);
  });

  it("a wrapper left pointing at a dropped bundle's old place: refused", () => {
    const dir = scratchDir("offload-kit-verify-");
    const input = join(dir, "in.elf");
    writeFileSync(input, elf);
    const error = thrown(() => editFiles([input], { kind: "output", path: join(dir, "out.elf") }, codecs, faulty((out) => {
      const field = section(out, ".hipFatBinSegment").offset + 8;
      setU64(out, field, Number(new DataView(out.buffer).getBigUint64(field, true)) + 4096);
      return out;
    })));
    expect(error.code).toBe("OUTPUT_VERIFY_FAILED");
    expect(error.message).toContain("where no offload bundle or CCOB starts");
    expect(readdirSync(dir)).toEqual(["in.elf"]);
  });

  it("a bundle file that holds other entries than the plan kept: refused", () => {
    const dir = scratchDir("offload-kit-verify-");
    const input = join(dir, "in.hipfb");
    const bundle = writeBinaryBundle([
      { id: "host-x86_64-unknown-linux-gnu-", data: new Uint8Array(0) },
      { id: "hipv4-amdgcn-amd-amdhsa--gfx906", data: new Uint8Array(64).fill(1) },
      { id: "hipv4-amdgcn-amd-amdhsa--gfx90a", data: new Uint8Array(64).fill(2) },
    ], 4096);
    writeFileSync(input, bundle);
    // The fault: the output is the input itself, gfx906 still in it.
    const error = thrown(() => editFiles([input], { kind: "output", path: join(dir, "out.hipfb") }, codecs, faulty((_out, source) => materialize(planOf([{ offset: 0, size: source.size }]), source, codecs))));
    expect(error.code).toBe("OUTPUT_VERIFY_FAILED");
    expect(error.message).toContain("the plan kept 2 (hipv4-amdgcn-amd-amdhsa--gfx90a, host-x86_64-unknown-linux-gnu-)");
    expect(readdirSync(dir)).toEqual(["in.hipfb"]);
    // Unfaulted, the same prune is written.
    editFiles([input], { kind: "output", path: join(dir, "out.hipfb") }, codecs, prune);
    expect(codes(new Uint8Array(readFileSync(join(dir, "out.hipfb"))), { expected: { all: ["host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx90a"] } })).toEqual([]);
  });

  it("an input already odd (a bad sh_link) is edited: only findings new in the output fail", () => {
    const dir = scratchDir("offload-kit-verify-");
    const input = join(dir, "in.elf");
    const odd = elf.slice();
    setU32(odd, section(odd, ".tail").at + 40, 99);
    expect(codes(odd)).toEqual(["BAD_SH_LINK"]);
    writeFileSync(input, odd);
    editFiles([input], { kind: "output", path: join(dir, "out.elf") }, codecs, prune);
    expect(codes(new Uint8Array(readFileSync(join(dir, "out.elf"))))).toEqual(["BAD_SH_LINK"]);
    // ...but a new problem on top of it still fails.
    const error = thrown(() => editFiles([input], { kind: "output", path: join(dir, "again.elf") }, codecs, faulty((out) => {
      setU64(out, 32, out.length + 4096);
      return out;
    })));
    expect(error.code).toBe("OUTPUT_VERIFY_FAILED");
    expect(readdirSync(dir).sort()).toEqual(["in.elf", "out.elf"]);
  });

  it("a library of compressed fat binaries: each CCOB is decoded and must hold the kept entries", () => {
    const dir = scratchDir("offload-kit-verify-");
    const input = join(dir, "in.elf");
    writeFileSync(input, transformWith(elf, { codecs }, "compress").output);
    editFiles([input], { kind: "output", path: join(dir, "out.elf") }, codecs, prune);
    const out = new Uint8Array(readFileSync(join(dir, "out.elf")));
    const decompress = (ccob: Uint8Array) => decompressBundleFile(ccob, codecs, "test")!;
    const kept = ["host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx90a"];
    expect(codes(out, { decompress, expected: { fatBinaries: new Map([[0, kept], [1, kept]]) } })).toEqual([]);
    expect(codes(out, { decompress, expected: { fatBinaries: new Map([[1, kept.slice(0, 1)]]) } })).toEqual(["FAT_BINARY_ENTRIES"]);
  });
});
