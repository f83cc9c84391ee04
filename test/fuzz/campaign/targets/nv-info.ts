/**
 * Cubin resource usage (src/formats/nv-cubin-info.ts, src/kernels/nv-kernels.ts): the `.nv.info` record parser
 * and the kernel list built on it. Inputs are either a string of synthetic `.nv.info` records (every format,
 * per-function payloads) or one of the nvcc 13 resource fixtures' cubins (test/fixtures/nv-res/, sm_75 and sm_90)
 * with its `.nv.info*` record headers and the section headers of those sections as fields to mutate.
 * A record string is parsed directly; a cubin is read through an in-memory and a chunked source, which must
 * agree. Round trip: records parsed from a record string, written again, are the same bytes.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { bytesSource } from "../../../../src/engine/source.js";
import { EIFMT_BVAL, EIFMT_HVAL, EIFMT_NVAL, EIFMT_SVAL, parseNvInfo } from "../../../../src/formats/nv-cubin-info.js";
import type { NvInfoAttribute } from "../../../../src/formats/nv-cubin-info.js";
import { openElf, sectionNames } from "../../../../src/formats/elf.js";
import { listNvCubinKernels } from "../../../../src/kernels/nv-kernels.js";
import { Disagreement, attempt, plain } from "../plain.js";
import type { Rand } from "../rand.js";
import { u16, u32, u64 } from "../sample.js";
import type { Field, Sample } from "../sample.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";

const RES = join(import.meta.dirname, "../../../fixtures/nv-res");
/** Records start with this byte pattern's first byte in (1..4); cubins with 0x7f ("\x7fELF"). */
const CUBINS = ["res.sm_75.cubin", "res.sm_90.cubin"].map((name) => new Uint8Array(readFileSync(join(RES, name))));
const ATTRIBUTES = [0x2f, 0x11, 0x12, 0x17, 0x37, 0x0a, 0x19, 0x1b, 0x1c, 0x50, 0x5f, 0xff];

function writeRecords(records: readonly NvInfoAttribute[]): Uint8Array {
  const parts: number[] = [];
  for (const r of records) {
    const half = r.payload !== undefined ? r.payload.length : (r.value ?? 0);
    parts.push(r.format, r.attribute, half & 0xff, half >> 8);
    if (r.payload !== undefined) parts.push(...r.payload);
  }
  return Uint8Array.from(parts);
}

function recordsSample(r: Rand): Sample {
  const fields: Field[] = [];
  const parts: number[] = [];
  for (let i = r.int(8); i > 0; i--) {
    const format = r.pick([EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL, EIFMT_SVAL, EIFMT_SVAL]);
    const attribute = r.pick(ATTRIBUTES);
    fields.push({ at: parts.length, size: 1, kind: "kind" }, u16(parts.length + 2, "size"));
    if (format === EIFMT_SVAL) {
      const payload = r.bool(0.7) ? [r.int(64), 0, 0, 0, r.int(256), r.int(4), 0, 0] : Array.from(r.bytes(r.int(20)));
      parts.push(format, attribute, payload.length & 0xff, payload.length >> 8, ...payload);
    } else {
      const value = format === EIFMT_NVAL ? 0 : r.int(0x10000);
      parts.push(format, attribute, value & 0xff, value >> 8);
    }
  }
  // A leading 0 byte never starts a record: it tells run() that this input is a record string.
  return { bytes: Uint8Array.from([0, ...parts]), fields: fields.map((f) => ({ ...f, at: f.at + 1 })) };
}

/** A fixture cubin with its `.nv.info*` sections' headers and records as fields. */
function cubinSample(r: Rand): Sample {
  const bytes = r.pick(CUBINS).slice();
  const elf = openElf(bytesSource(bytes));
  const names = sectionNames(elf);
  const fields: Field[] = [u64(0x28, "offset"), u16(0x3c, "count"), u16(0x3e, "count")];
  for (const s of elf.sections) {
    const name = names[s.index]!;
    if (!name.startsWith(".nv.info") && !name.startsWith(".text.") && !name.startsWith(".nv.shared.") && name !== ".symtab") continue;
    const header = elf.header.shoff + s.index * 64;
    fields.push(u32(header + 4, "kind"), u64(header + 24, "offset"), u64(header + 32, "size"), u32(header + 40, "count"), u32(header + 44, "count"));
    if (!name.startsWith(".nv.info")) continue;
    for (let at = s.offset; at + 4 <= s.offset + s.size && fields.length < 200;) {
      fields.push({ at, size: 1, kind: "kind" }, u16(at + 2, "size"));
      at += 4 + (bytes[at] === EIFMT_SVAL ? bytes[at + 2]! | (bytes[at + 3]! << 8) : 0);
    }
  }
  return { bytes, fields };
}

function describe(input: Uint8Array, ctx: RunContext): unknown {
  if (input[0] === 0) return { records: attempt(() => parseNvInfo(input.subarray(1), 1)) };
  const listed = listNvCubinKernels(ctx.chunked ? chunkedSource(input) : bytesSource(input), "sm_90");
  const other = listNvCubinKernels(ctx.chunked ? bytesSource(input) : chunkedSource(input, 13), "sm_90");
  if (JSON.stringify(plain(listed)) !== JSON.stringify(plain(other))) throw new Disagreement("in-memory and chunked reads of the cubin differ");
  return plain(listed);
}

export const nvInfoTarget: FuzzTarget = {
  name: "nv-info",
  about: "NVIDIA cubin resources: .nv.info EIATTR records, kernels' REG/STACK/SHARED/LOCAL/CONSTANT from sections",
  engines: false,
  sources: false,
  generate: (r) => (r.bool(0.4) ? recordsSample(r) : cubinSample(r)),
  run: describe,
  roundTrip(input) {
    if (input[0] !== 0) return undefined;
    let records;
    try {
      records = parseNvInfo(input.subarray(1));
    } catch {
      return undefined;
    }
    const again = writeRecords(records);
    const body = input.subarray(1);
    return again.length === body.length && again.every((b, i) => b === body[i]) ? undefined : "the records written again are not the input";
  },
};
