/**
 * Standalone AMDGPU code object headers (src/formats/amdgpu-code-object.ts): the ELF32/ELF64 header of a `.hsaco`
 * or Tensile `.co`, its `e_flags` (mach, xnack/sramecc in the v2/v3 and v4+ encodings, v6's generic version),
 * OS ABI and ABI version turned into a target ID, and the locator's one `code-object` entry for the whole file
 * (src/inspect/locate.ts). Inputs are headers of every mach in the table and a few outside it, every code object
 * version, both classes, followed by a little body; mutations hit e_flags, EI_OSABI, EI_ABIVERSION, EI_CLASS,
 * e_machine. Round trip: an accepted v4+ header's target ID, written back into e_flags as LLVM encodes it
 * (mach | xnack << 8 | sramecc << 10), parses to the same target ID and entry ID.
 */
import { bytesSource } from "../../../../src/engine/source.js";
import { codeObjectEntryId, parseAmdgpuCodeObject } from "../../../../src/formats/amdgpu-code-object.js";
import type { FeatureSetting } from "../../../../src/formats/amdgpu-code-object.js";
import { locate } from "../../../../src/inspect/locate.js";
import { AMDGPU_MACH_PROCESSORS } from "../../../../src/target-id/amdgpu.js";
import { attempt, plain } from "../plain.js";
import type { Rand } from "../rand.js";
import { u16, u32 } from "../sample.js";
import type { Sample } from "../sample.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";

const MACHS = [...AMDGPU_MACH_PROCESSORS.keys()];

function headerSample(r: Rand): Sample {
  const is64 = r.bool(0.9);
  const size = (is64 ? 64 : 52) + r.int(200);
  const bytes = new Uint8Array(size);
  const v = new DataView(bytes.buffer);
  bytes.set([0x7f, 0x45, 0x4c, 0x46, is64 ? 2 : 1, 1, 1]);
  bytes[7] = r.bool(0.85) ? 64 : r.pick([65, 66, 0, 3]);
  bytes[8] = r.pick([0, 1, 2, 3, 4, 5, 200]);
  v.setUint16(16, r.pick([3, 1, 2]), true);
  v.setUint16(18, 224, true);
  v.setUint32(20, 1, true);
  const mach = r.bool(0.95) ? r.pick(MACHS) : r.int(256);
  const features = r.int(16) << 8;
  const generic = r.bool(0.2) ? r.int(256) << 24 : 0;
  const flagsAt = is64 ? 48 : 36;
  v.setUint32(flagsAt, mach | features | generic, true);
  for (let i = is64 ? 64 : 52; i < size; i++) bytes[i] = r.int(256);
  return { bytes, fields: [u32(flagsAt, "kind"), { at: 7, size: 1, kind: "kind" }, { at: 8, size: 1, kind: "kind" }, { at: 4, size: 1, kind: "kind" }, u16(18, "kind"), u16(16, "kind")] };
}

function describe(input: Uint8Array, ctx: RunContext): unknown {
  const source = ctx.chunked ? chunkedSource(input) : bytesSource(input);
  const header = attempt(() => {
    const object = parseAmdgpuCodeObject(input.subarray(0, 64));
    return { ...object, entryId: codeObjectEntryId(object) };
  });
  const location = locate(source, {});
  return plain({
    header,
    bundles: location.bundles.map((b) => ({ format: b.format, offset: b.offset, size: b.size, entries: b.entries.map((e) => [e.id, e.offset, e.size]) })),
    problems: location.problems.map((p) => [p.code, p.offset]),
  });
}

const V4_BITS: Record<FeatureSetting, number> = { unsupported: 0, any: 1, off: 2, on: 3 };

export const codeObjectTarget: FuzzTarget = {
  name: "code-object",
  about: "standalone AMDGPU code object headers: e_flags to target ID (v2-v6 encodings), the locator's code-object entry",
  engines: false,
  sources: true,
  magic: Uint8Array.of(0x7f, 0x45, 0x4c, 0x46),
  generate: headerSample,
  run: describe,
  roundTrip(input) {
    let object;
    try {
      object = parseAmdgpuCodeObject(input.subarray(0, 64));
    } catch {
      return undefined;
    }
    if (object.targetId === undefined || object.codeObjectVersion === undefined || object.codeObjectVersion < 4) return undefined;
    const again = input.slice(0, 64);
    const flagsAt = object.elfClass === 64 ? 48 : 36;
    const flags = (object.mach | (V4_BITS[object.xnack] << 8) | (V4_BITS[object.sramecc] << 10) | (object.genericVersion << 24)) >>> 0;
    new DataView(again.buffer).setUint32(flagsAt, flags, true);
    const reparsed = parseAmdgpuCodeObject(again);
    if (reparsed.targetId !== object.targetId) return `e_flags 0x${flags.toString(16)} written from '${object.targetId}' reads back as '${reparsed.targetId}'`;
    if (codeObjectEntryId(reparsed) !== codeObjectEntryId(object)) return "the entry ID changed when e_flags was written again";
    return undefined;
  },
};
