/**
 * rocm-kpack's formats: the `.kpack` archive header, msgpack TOC and zstd frame table (src/formats/kpack.ts), and
 * the `.rocm_kpack_ref` marker (src/formats/kpack-marker.ts). Inputs are archives and markers our writers make
 * (byte-identical to rocm-kpack's, test/kpack/archive.test.ts), mutated. Round trip: an accepted archive's code
 * objects written again read back as the same keys, arches and bytes; an accepted marker written again parses
 * to itself.
 */
import { bytesSource } from "../../../../src/engine/source.js";
import { readKpackArchive, readKpackEntry, writeKpackArchive } from "../../../../src/formats/kpack.js";
import type { KpackWriteEntry } from "../../../../src/formats/kpack.js";
import { parseKpackMarker, writeKpackMarker } from "../../../../src/formats/kpack-marker.js";
import type { Rand } from "../rand.js";
import { u32, u64 } from "../sample.js";
import type { Sample } from "../sample.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";

const ARCHES = ["gfx906", "gfx90a", "gfx90a:xnack-", "gfx942:sramecc+:xnack-", "gfx1100", "gfx1201"];
const TOKENS = ["KPAK", "toc", "blobs", "zstd_offset", "zstd_size", "compression_scheme", "zstd-per-kernel", "none", "gfx_arches",
  "ordinal", "original_size", "offset", "size", "kernel_name", "kpack_search_paths", "@GFXARCH@", "#0", ...ARCHES];

function bytesOf(r: Rand, max: number): Uint8Array {
  const out = new Uint8Array(r.int(max + 1));
  for (let i = 0; i < out.length; i++) out[i] = r.int(256);
  return out;
}

function archiveSample(r: Rand): Sample {
  const zstd = r.bool(0.4);
  const entries: KpackWriteEntry[] = [];
  const keys = 1 + r.int(3);
  for (let k = 0; k < keys; k++) {
    for (const arch of ARCHES.filter(() => r.bool(0.4))) {
      const data = bytesOf(r, 200);
      // The reader never decodes here: any bytes do as a frame.
      entries.push({ key: `lib/libx.so#${k}`, arch, data, ...(zstd ? { frame: bytesOf(r, 60) } : {}), ...(r.bool(0.5) ? { metadata: { target: `hipv4-amdgcn-amd-amdhsa--${arch}`, source_prefix: "stage" } } : {}) });
    }
  }
  const arches = [...new Set(entries.map((e) => e.arch))];
  const bytes = writeKpackArchive(entries, { groupName: "fuzz", gfxArchFamily: arches[0] ?? "gfx906", gfxArches: arches, compression: zstd ? "zstd-per-kernel" : "none" });
  return { bytes, fields: [{ at: 0, size: 4, kind: "magic" }, u32(4, "kind"), u64(8, "offset"), ...(zstd ? [u32(64, "count"), u32(68, "size")] : [])] };
}

function read(input: Uint8Array, ctx: RunContext) {
  const source = ctx.chunked ? chunkedSource(input) : bytesSource(input);
  const archive = readKpackArchive(source);
  // Plain code objects are read too (every blob was checked against the file).
  const objects = archive.compression === "none" ? archive.entries.map((e) => readKpackEntry(source, "none", e)) : [];
  return { archive, objects };
}

export const kpackTarget: FuzzTarget = {
  name: "kpack",
  about: "rocm-kpack .kpack archives: header, msgpack TOC, blob bounds, zstd frame table",
  engines: false,
  sources: true,
  magic: Uint8Array.of(0x4b, 0x50, 0x41, 0x4b),
  dictionary: TOKENS,
  generate: archiveSample,
  run: read,
  roundTrip(input, ctx) {
    const { archive, objects } = read(input, ctx);
    if (archive.compression !== "none") return undefined;
    const seen = new Set<string>();
    const entries: KpackWriteEntry[] = [];
    archive.entries.forEach((e, i) => {
      // A TOC may file two keys under one ordinal; written again each gets its own blob.
      if (seen.has(`${e.key}\0${e.arch}`)) return;
      seen.add(`${e.key}\0${e.arch}`);
      entries.push({ key: e.key, arch: e.arch, data: objects[i]! });
    });
    const written = bytesSource(writeKpackArchive(entries, { groupName: "g", gfxArchFamily: "f", gfxArches: archive.gfxArches }));
    const again = readKpackArchive(written);
    const before = entries.map((e) => `${e.key} ${e.arch} ${Buffer.from(e.data).toString("hex")}`);
    const after = again.entries.map((e) => `${e.key} ${e.arch} ${Buffer.from(readKpackEntry(written, "none", e)).toString("hex")}`);
    return before.join("\n") === after.join("\n") ? undefined : "archive written again reads back other code objects";
  },
};

function markerSample(r: Rand): Sample {
  const paths = Array.from({ length: 1 + r.int(3) }, () => `${"../".repeat(r.int(3))}.kpack/${r.pick(["blas", "test_lib", "x"])}_@GFXARCH@.kpack`);
  return { bytes: writeKpackMarker({ kernelName: `stage/lib/lib${r.int(100)}.so`, searchPaths: paths }), fields: [] };
}

export const kpackMarkerTarget: FuzzTarget = {
  name: "kpack-marker",
  about: "rocm-kpack .rocm_kpack_ref markers (msgpack, as the runtime accepts them)",
  engines: false,
  sources: false,
  dictionary: TOKENS,
  generate: markerSample,
  run: (input) => parseKpackMarker(input),
  roundTrip(input) {
    const marker = parseKpackMarker(input);
    const again = parseKpackMarker(writeKpackMarker(marker));
    return again.kernelName === marker.kernelName && again.searchPaths.join("\0") === marker.searchPaths.join("\0") ? undefined : "marker written again parses differently";
  },
};
