/**
 * The AMDGPU metadata note (src/formats/amdgpu-metadata.ts) and the kernel list built on it
 * (src/kernels/kernels.ts): a small ELF64 AMDGPU code object with a PT_NOTE segment and, half the time, a
 * section table with the SHT_NOTE section, holding an NT_AMDGPU_METADATA note whose msgpack document lists a
 * few kernels. Mutations hit the ELF header's table fields, the note header (sizes, type), the alignment and the
 * msgpack bytes. Round trip: the decoded document, encoded again (src/formats/msgpack.ts), decodes to itself.
 * Each kernel map transcoded to JSON text (src/formats/msgpack-json.ts, `kernels --json`) equals the object route.
 */
import { bytesSource } from "../../../../src/engine/source.js";
import { decodeAmdgpuMetadata, listNoteRegions, readAmdgpuMetadata, readNotes } from "../../../../src/formats/amdgpu-metadata.js";
import { encodeMsgpack, msgpackToJson } from "../../../../src/formats/msgpack.js";
import type { MsgpackInput } from "../../../../src/formats/msgpack.js";
import { kernelMetadataBytes, listCodeObjectKernels } from "../../../../src/kernels/kernels.js";
import { JsonByteWriter, transcodeMsgpackJson } from "../../../../src/formats/msgpack-json.js";
import { Disagreement, attempt, plain } from "../plain.js";
import type { Rand } from "../rand.js";
import { concat, latin1, u16, u32, u64 } from "../sample.js";
import type { Field, Sample } from "../sample.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";

const NAMES = ["_Z5scalePff", "_ZN2ns4fillIfLj256EEEvPT_", "kernel", "_Z1fILb1EEvv", ""];

function kernel(r: Rand): MsgpackInput {
  const name = r.pick(NAMES);
  return {
    ".name": name,
    ".symbol": `${name}.kd`,
    ".vgpr_count": r.int(600),
    ".agpr_count": r.int(64),
    ".sgpr_count": r.int(120),
    ".vgpr_spill_count": r.int(4),
    ".sgpr_spill_count": r.int(4),
    ".group_segment_fixed_size": r.pick([0, 1024, 65536, 70000, r.int(1 << 20)]),
    ".private_segment_fixed_size": r.int(4096),
    ".uses_dynamic_stack": r.bool(),
    ".wavefront_size": r.pick([32, 64, 16, 0]),
    ".kernarg_segment_size": r.int(512),
    ".max_flat_workgroup_size": r.pick([0, 1, 64, 256, 1024, 2048]),
    ".args": [{ ".offset": 0, ".size": 8, ".value_kind": "global_buffer" }],
  };
}

function document(r: Rand): Uint8Array {
  const kernels = Array.from({ length: r.int(4) }, () => kernel(r));
  return encodeMsgpack({ "amdhsa.version": [1, r.int(4)], "amdhsa.target": "amdgcn-amd-amdhsa--gfx90a", "amdhsa.kernels": kernels });
}

function pad(bytes: Uint8Array, align: number): Uint8Array {
  const out = new Uint8Array(Math.ceil(bytes.length / align) * align);
  out.set(bytes);
  return out;
}

/** ELF header (64) + one program header (56) + the note + optionally a null and a SHT_NOTE section header. */
function codeObjectSample(r: Rand): Sample {
  const fields: Field[] = [];
  const align = r.bool(0.8) ? 4 : 8;
  const desc = document(r);
  const name = latin1("AMDGPU\0");
  const noteHeader = new Uint8Array(12);
  const nv = new DataView(noteHeader.buffer);
  nv.setUint32(0, name.length, true);
  nv.setUint32(4, desc.length, true);
  nv.setUint32(8, r.bool(0.95) ? 32 : r.pick([10, 1, 33]), true);
  const note = concat(noteHeader, pad(name, align), pad(desc, align));
  const noteAt = 120;
  const withSections = r.bool();
  const shoff = noteAt + note.length;
  const elf = new Uint8Array(shoff + (withSections ? 128 : 0));
  const v = new DataView(elf.buffer);
  elf.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 64, 3]);
  v.setUint16(16, 3, true);
  v.setUint16(18, 224, true);
  v.setUint32(20, 1, true);
  v.setBigUint64(32, 64n, true);
  v.setBigUint64(40, withSections ? BigInt(shoff) : 0n, true);
  v.setUint32(48, r.pick([0x3f, 0x30, 0x41, 0x2f, 0x4c]), true);
  v.setUint16(52, 64, true);
  v.setUint16(54, 56, true);
  v.setUint16(56, 1, true);
  v.setUint16(58, 64, true);
  v.setUint16(60, withSections ? 2 : 0, true);
  fields.push(u64(32, "offset"), u64(40, "offset"), u16(54, "size"), u16(56, "count"), u16(58, "size"), u16(60, "count"), u32(48, "kind"));
  v.setUint32(64, 4, true);
  v.setBigUint64(64 + 8, BigInt(noteAt), true);
  v.setBigUint64(64 + 32, BigInt(note.length), true);
  v.setBigUint64(64 + 48, BigInt(align), true);
  fields.push(u32(64, "kind"), u64(72, "offset"), u64(96, "size"), u64(112, "size"));
  elf.set(note, noteAt);
  fields.push(u32(noteAt, "size"), u32(noteAt + 4, "size"), u32(noteAt + 8, "kind"));
  // The msgpack map's header and the first kernel list's: counts the decoder must bound.
  fields.push({ at: noteAt + 12 + pad(name, align).length, size: 1, kind: "count" });
  if (withSections) {
    const s = shoff + 64;
    v.setUint32(s + 4, 7, true);
    v.setBigUint64(s + 24, BigInt(noteAt), true);
    v.setBigUint64(s + 32, BigInt(note.length), true);
    v.setBigUint64(s + 48, BigInt(align), true);
    fields.push(u32(s + 4, "kind"), u64(s + 24, "offset"), u64(s + 32, "size"), u64(s + 48, "size"));
  }
  return { bytes: elf, fields };
}

function describe(input: Uint8Array, ctx: RunContext): unknown {
  const source = ctx.chunked ? chunkedSource(input) : bytesSource(input);
  const listed = listCodeObjectKernels(source, "x");
  // The table's path (`.args` skipped unbuilt) must give the same friendly fields and the same problem.
  const lean = listCodeObjectKernels(source, "x", { keepMetadata: false });
  const strip = (l: typeof listed) => JSON.stringify(plain({ ...l, kernels: l.kernels.map(({ metadata: _m, ...k }) => k) }));
  if (strip(listed) !== strip(lean)) throw new Disagreement("the kernel list without metadata maps differs from the full one");
  // --json's transcoder (src/formats/msgpack-json.ts) gives the object route's bytes, or declines.
  for (const k of listed.kernels) {
    const raw = kernelMetadataBytes(k);
    if (raw === undefined) continue;
    const chunks: Uint8Array[] = [];
    const out = new JsonByteWriter((b) => chunks.push(b.slice()), 64);
    if (transcodeMsgpackJson(raw.bytes, raw.start, 10, out) < 0) continue;
    out.flush();
    const text = Buffer.concat(chunks).toString("utf8");
    if (text !== JSON.stringify(msgpackToJson(k.metadata), null, 2).replace(/\n/g, `\n${" ".repeat(10)}`)) throw new Disagreement("the transcoded metadata differs from the object route");
  }
  return {
    regions: attempt(() => listNoteRegions(source)),
    notes: attempt(() => readNotes(source)),
    metadata: attempt(() => {
      const m = readAmdgpuMetadata(source);
      return m?.format === "msgpack" ? msgpackToJson(m.document) : m;
    }),
    kernels: plain({ ...listed, kernels: listed.kernels.map(({ metadata: _m, ...k }) => k) }),
  };
}

export const amdgpuNoteTarget: FuzzTarget = {
  name: "amdgpu-note",
  about: "AMDGPU code object notes: PT_NOTE/SHT_NOTE walk, NT_AMDGPU_METADATA msgpack, kernel list and occupancy",
  engines: false,
  sources: true,
  generate: codeObjectSample,
  run: describe,
  roundTrip(input, ctx) {
    const source = ctx.chunked ? chunkedSource(input) : bytesSource(input);
    let metadata;
    try {
      metadata = readAmdgpuMetadata(source);
    } catch {
      return undefined;
    }
    if (metadata?.format !== "msgpack") return undefined;
    const again = decodeAmdgpuMetadata(encodeMsgpack(metadata.document));
    const a = JSON.stringify(plain(metadata.document));
    const b = JSON.stringify(plain(again));
    return a === b ? undefined : "the metadata document encoded again decodes differently";
  },
};
