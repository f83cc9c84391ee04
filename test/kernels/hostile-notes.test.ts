/**
 * Hostile code objects: truncated notes, sizes and counts the bytes cannot hold, deep nesting, bad alignment,
 * tables outside the file. Each gives our typed error with the offset of what is wrong (the note reader), or a
 * code object with that error as its `problem` and no kernels (the kernel list), never another exception and
 * never an allocation sized by what the file claims.
 */
import { describe, expect, it } from "vitest";
import { OffloadKitError } from "../../src/engine/errors.js";
import { bytesSource } from "../../src/engine/source.js";
import { MAX_NOTE_REGION, decodeAmdgpuMetadata, readAmdgpuMetadata, walkNotes } from "../../src/formats/amdgpu-metadata.js";
import { encodeMsgpack } from "../../src/formats/msgpack.js";
import type { MsgpackInput } from "../../src/formats/msgpack.js";
import { listCodeObjectKernels } from "../../src/kernels/kernels.js";

function note(desc: Uint8Array, type = 32, name = "AMDGPU\0", align = 4): Uint8Array {
  const n = new TextEncoder().encode(name);
  const padded = (k: number) => Math.ceil(k / align) * align;
  const out = new Uint8Array(12 + padded(n.length) + padded(desc.length));
  const v = new DataView(out.buffer);
  v.setUint32(0, n.length, true);
  v.setUint32(4, desc.length, true);
  v.setUint32(8, type, true);
  out.set(n, 12);
  out.set(desc, 12 + padded(n.length));
  return out;
}

/** An ELF64 AMDGPU code object (gfx90a, v5) whose one PT_NOTE segment holds `notes`. */
function codeObject(notes: Uint8Array, options: { align?: number; filesz?: number; phnum?: number } = {}): Uint8Array {
  const out = new Uint8Array(120 + notes.length);
  const v = new DataView(out.buffer);
  out.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 64, 3]);
  v.setUint16(16, 3, true);
  v.setUint16(18, 224, true);
  v.setBigUint64(32, 64n, true);
  v.setUint32(48, 0x3f, true);
  v.setUint16(54, 56, true);
  v.setUint16(56, options.phnum ?? 1, true);
  v.setUint32(64, 4, true);
  v.setBigUint64(72, 120n, true);
  v.setBigUint64(96, BigInt(options.filesz ?? notes.length), true);
  v.setBigUint64(112, BigInt(options.align ?? 4), true);
  out.set(notes, 120);
  return out;
}

const DOCUMENT: MsgpackInput = {
  "amdhsa.version": [1, 2],
  "amdhsa.kernels": [{ ".name": "_Z5scalePff", ".symbol": "_Z5scalePff.kd", ".vgpr_count": 79, ".sgpr_count": 20, ".wavefront_size": 64, ".max_flat_workgroup_size": 256 }],
};

function thrown(run: () => unknown): OffloadKitError {
  try {
    run();
  } catch (e) {
    if (e instanceof OffloadKitError) return e;
    throw e;
  }
  throw new Error("expected an OffloadKitError");
}

describe("hostile AMDGPU notes", () => {
  it("reads the well-formed object the others are cut from", () => {
    const listed = listCodeObjectKernels(bytesSource(codeObject(note(encodeMsgpack(DOCUMENT)))), "x");
    expect(listed.problem).toBeUndefined();
    expect(listed.kernels.map((k) => [k.name, k.demangled, k.vgprs, k.occupancy?.waves])).toEqual([["_Z5scalePff", "scale(float*, float)", 79, 6]]);
  });

  it("a note header cut short, a name or descriptor larger than what is left", () => {
    const good = note(encodeMsgpack(DOCUMENT));
    expect(thrown(() => walkNotes(good.subarray(0, 8), 4, 100))).toMatchObject({ code: "AMDGPU_NOTE_MALFORMED", offset: 100, field: "n_namesz" });
    const longName = good.slice();
    new DataView(longName.buffer).setUint32(0, 0xfffffff0, true);
    expect(thrown(() => walkNotes(longName, 4))).toMatchObject({ code: "AMDGPU_NOTE_MALFORMED", field: "n_namesz" });
    const longDesc = good.slice();
    new DataView(longDesc.buffer).setUint32(4, 0xffffffff, true);
    expect(thrown(() => walkNotes(longDesc, 4))).toMatchObject({ code: "AMDGPU_NOTE_MALFORMED", field: "n_descsz" });
    // Through the whole reader: the offset is the note's place in the code object.
    expect(thrown(() => readAmdgpuMetadata(bytesSource(codeObject(longDesc))))).toMatchObject({ code: "AMDGPU_NOTE_MALFORMED", offset: 120 });
  });

  it("a segment outside the file, too large, badly aligned, or a program header table past the end", () => {
    const good = note(encodeMsgpack(DOCUMENT));
    expect(thrown(() => readAmdgpuMetadata(bytesSource(codeObject(good, { filesz: good.length + 1 }))))).toMatchObject({ code: "AMDGPU_NOTE_MALFORMED", offset: 64, field: "p_offset" });
    expect(thrown(() => readAmdgpuMetadata(bytesSource(codeObject(good, { filesz: MAX_NOTE_REGION + 1 }))))).toMatchObject({ code: "AMDGPU_NOTE_MALFORMED", field: "p_offset" });
    expect(thrown(() => readAmdgpuMetadata(bytesSource(codeObject(good, { align: 16 }))))).toMatchObject({ code: "AMDGPU_NOTE_MALFORMED", offset: 112, field: "p_align" });
    expect(thrown(() => readAmdgpuMetadata(bytesSource(codeObject(good, { phnum: 60000 }))))).toMatchObject({ code: "AMDGPU_NOTE_MALFORMED", field: "e_phoff" });
    expect(thrown(() => readAmdgpuMetadata(bytesSource(codeObject(good).subarray(0, 40))))).toMatchObject({ code: "AMDGPU_NOTE_MALFORMED", field: "e_ident" });
  });

  it("msgpack: truncated, huge counts and lengths, deep nesting, trailing bytes, not a map", () => {
    const desc = encodeMsgpack(DOCUMENT);
    expect(thrown(() => decodeAmdgpuMetadata(desc.subarray(0, desc.length - 3), 500))).toMatchObject({ code: "malformed-msgpack" });
    // map32 claiming four billion entries in 5 bytes: refused before anything is allocated.
    expect(thrown(() => decodeAmdgpuMetadata(Uint8Array.of(0xdf, 0xff, 0xff, 0xff, 0xff), 500))).toMatchObject({ code: "malformed-msgpack", offset: 500 });
    expect(thrown(() => decodeAmdgpuMetadata(Uint8Array.of(0x81, 0xa1, 0x61, 0xdd, 0xff, 0xff, 0xff, 0xff)))).toMatchObject({ code: "malformed-msgpack", offset: 3 });
    expect(thrown(() => decodeAmdgpuMetadata(Uint8Array.of(0x81, 0xa1, 0x61, 0xdb, 0xff, 0xff, 0xff, 0xf0)))).toMatchObject({ code: "malformed-msgpack" });
    const deep = new Uint8Array(100_000).fill(0x91);
    expect(thrown(() => decodeAmdgpuMetadata(deep))).toMatchObject({ code: "malformed-msgpack", offset: 16 });
    expect(thrown(() => decodeAmdgpuMetadata(Uint8Array.of(0x80, 0x00)))).toMatchObject({ code: "malformed-msgpack", offset: 1 });
    expect(thrown(() => decodeAmdgpuMetadata(Uint8Array.of(0x93, 1, 2, 3)))).toMatchObject({ code: "AMDGPU_METADATA_MALFORMED" });
    expect(thrown(() => decodeAmdgpuMetadata(Uint8Array.of(0xc1)))).toMatchObject({ code: "malformed-msgpack" });
  });

  it("the kernel list keeps the code object, with the typed error as its problem", () => {
    const huge = note(Uint8Array.of(0xdf, 0xff, 0xff, 0xff, 0xff));
    const listed = listCodeObjectKernels(bytesSource(codeObject(huge)), "hipv4-amdgcn-amd-amdhsa--gfx90a");
    expect(listed).toMatchObject({ id: "hipv4-amdgcn-amd-amdhsa--gfx90a", processor: "gfx90a", codeObjectVersion: 5, kernels: [] });
    expect(listed.problem?.code).toBe("malformed-msgpack");
    expect(listed.problem?.offset).toBe(120 + 12 + 8);
    // No metadata note at all (another note type) is a report, not damage.
    const other = listCodeObjectKernels(bytesSource(codeObject(note(encodeMsgpack(DOCUMENT), 33))), "x");
    expect(other.problem?.code).toBe("NO_AMDGPU_METADATA");
    // Kernel maps with wrong value types are read as far as they go.
    const odd = encodeMsgpack({ "amdhsa.kernels": [{ ".name": 5, ".vgpr_count": "many" }, 7, { ".name": "k" }] });
    const oddListed = listCodeObjectKernels(bytesSource(codeObject(note(odd))), "x");
    expect(oddListed.kernels.map((k) => [k.name, k.vgprs, k.occupancy])).toEqual([["", undefined, undefined], ["k", undefined, undefined]]);
  });

  it("8-byte aligned notes, several notes, an empty descriptor", () => {
    const desc = encodeMsgpack(DOCUMENT);
    const two = new Uint8Array([...note(new Uint8Array(0), 1, "GNU\0", 8), ...note(desc, 32, "AMDGPU\0", 8)]);
    const notes = walkNotes(two, 8);
    expect(notes.map((n) => [n.name, n.type, n.descSize])).toEqual([["GNU", 1, 0], ["AMDGPU", 32, desc.length]]);
    const listed = listCodeObjectKernels(bytesSource(codeObject(two, { align: 8 })), "x");
    expect(listed.kernels.length).toBe(1);
  });
});
