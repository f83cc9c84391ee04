/** Binary bundle header walk (`__CLANG_OFFLOAD_BUNDLE__`): src/formats/bundle.ts over both engines. */
import { distinctEntries, readBinaryBundle, writeBinaryBundle } from "../../../../src/formats/bundle.js";
import { bytesSource } from "../../../../src/engine/source.js";
import { plain } from "../plain.js";
import type { Rand } from "../rand.js";
import { latin1, u64 } from "../sample.js";
import type { Field, Sample } from "../sample.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";

export const ENTRY_IDS = [
  "host-x86_64-unknown-linux-gnu-", "hip-amdgcn-amd-amdhsa--gfx906", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+",
  "openmp-nvptx64-nvidia-cuda--sm_70", "hipv4-amdgcn-amd-amdhsa--gfx1030", "hip-spirv64-amd-amdhsa--amdgcnspirv",
  "host-x86_64-unknown-linux-gnu", "", "/", "../../etc/passwd", "/abs/path", "a\0b", "hip-amdgcn-amd-amdhsa--gfx906/../x",
];

export function randomId(r: Rand): string {
  if (r.bool(0.7)) return r.pick(ENTRY_IDS) + (r.bool(0.3) ? String(r.int(100)) : "");
  return String.fromCharCode(...r.bytes(r.size(40)));
}

export function bundleSample(r: Rand): Sample {
  const count = r.bool(0.02) ? r.range(100, 3000) : r.int(6);
  const ids = new Set<string>();
  while (ids.size < count) ids.add(count > 50 ? `e${ids.size}` : randomId(r) + (ids.size > 0 && r.bool(0.2) ? ids.size : ""));
  const entries = [...ids].map((id) => ({ id, data: r.bytes(count > 50 ? r.int(4) : r.size(48)) }));
  const align = r.pick([1, 1, 1, 2, 4, 8, 16, 4096]);
  const bytes = writeBinaryBundle(entries, align);
  const fields: Field[] = [u64(24, "count")];
  let at = 32;
  for (const e of entries) {
    fields.push(u64(at, "offset"), u64(at + 8, "size"), u64(at + 16, "size"), { at: at + 24, size: e.id.length, kind: "text" });
    at += 24 + e.id.length;
  }
  return { bytes, fields };
}

function read(input: Uint8Array, ctx: RunContext) {
  return readBinaryBundle(ctx.chunked ? chunkedSource(input) : bytesSource(input), { engine: ctx.engine });
}

export const bundleTarget: FuzzTarget = {
  name: "bundle",
  about: "binary bundle header walk (readBinaryBundle, both engines)",
  engines: true,
  sources: true,
  magic: latin1("__CLANG_OFFLOAD_BUNDLE__"),
  dictionary: ENTRY_IDS,
  generate: bundleSample,
  run: read,
  roundTrip(input, ctx) {
    const first = read(input, ctx);
    if (first.kind !== "bundle") return undefined;
    const entries = distinctEntries(first.bundle.entries).map((e) => ({ id: e.id, data: input.subarray(e.offset, e.offset + e.size) }));
    const written = writeBinaryBundle(entries);
    const again = read(written, ctx);
    if (again.kind !== "bundle") return "the rewritten bundle is not a bundle";
    const back = again.bundle.entries.map((e) => ({ id: e.id, data: written.subarray(e.offset, e.offset + e.size) }));
    return JSON.stringify(plain(back)) === JSON.stringify(plain(entries)) ? undefined : "entries differ after writeBinaryBundle";
  },
};
