/** Offload binaries (0x10FF10AD) v1-v3, compressed v3 included: src/formats/offload-binary.ts over both engines. */
import { readOffloadBinaries, readImageBytes, writeOffloadBinary, writeOffloadBinaryMulti } from "../../../../src/formats/offload-binary.js";
import type { OffloadBinaries } from "../../../../src/formats/offload-binary.js";
import { OffloadKitError } from "../../../../src/engine/errors.js";
import { bytesSource } from "../../../../src/engine/source.js";
import { concatBytes } from "../../../../src/formats/bytes.js";
import { nodeCodecs } from "../../../../src/compress/node/codecs.js";
import { codecDecompressor } from "../../../../src/compress/node/packager-codecs.js";
import { plain } from "../plain.js";
import type { Rand } from "../rand.js";
import { u16, u32, u64 } from "../sample.js";
import type { Field, Sample } from "../sample.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";

const WORDS = ["triple", "arch", "feature", "amdgcn-amd-amdhsa", "gfx906", "sm_70", "", "kind", "a", "../x", "/etc", "a/b"];

function strings(r: Rand): [string, string][] {
  return Array.from({ length: r.int(5) }, () => {
    const pick = () => (r.bool(0.7) ? r.pick(WORDS) : "k".repeat(r.size(r.bool(0.1) ? 150 : 12)));
    return [pick(), pick()];
  });
}

const compressors = {
  zlib: (_f: string, d: Uint8Array) => nodeCodecs.zlibCompress(d, 6),
  zstd: (_f: string, d: Uint8Array) => nodeCodecs.zstdCompress(d, 1),
};

/** Header, entry and string-entry fields of every binary in a valid blob (read from its own bytes). */
function fieldsOf(blob: Uint8Array): Field[] {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const fields: Field[] = [];
  let at = 0;
  while (at + 32 <= blob.length) {
    const version = view.getUint32(at + 4, true);
    const size = Number(view.getBigUint64(at + 8, true));
    const entriesAt = Number(view.getBigUint64(at + 16, true));
    const field24 = Number(view.getBigUint64(at + 24, true));
    fields.push(u32(at + 4, "kind"), u64(at + 8, "size"), u64(at + 16, "offset"), u64(at + 24, "count"));
    const compressed = version >= 3 && at + 40 <= blob.length && view.getBigUint64(at + 32, true) !== 0n;
    if (version >= 3) fields.push(u64(at + 32, "size"));
    if (!compressed) {
      const count = version === 1 ? 1 : Math.min(field24, 8);
      for (let i = 0; i < count; i++) {
        const e = at + entriesAt + i * 40;
        if (e + 40 > blob.length) break;
        fields.push(u16(e, "kind"), u16(e + 2, "kind"), u32(e + 4, "kind"), u64(e + 8, "offset"), u64(e + 16, "count"), u64(e + 24, "offset"), u64(e + 32, "size"));
        const stringsAt = at + Number(view.getBigUint64(e + 8, true));
        const stringCount = Math.min(Number(view.getBigUint64(e + 16, true)), 6);
        const stride = version === 1 ? 16 : 24;
        for (let s = 0; s < stringCount && stringsAt + (s + 1) * stride <= blob.length; s++) {
          fields.push(u64(stringsAt + s * stride, "offset"), u64(stringsAt + s * stride + 8, "offset"));
          if (stride === 24) fields.push(u64(stringsAt + s * stride + 16, "size"));
        }
      }
    }
    if (size <= 0) break;
    at += version === 1 ? size : Math.ceil(size / 8) * 8;
  }
  return fields;
}

function offloadSample(r: Rand): Sample {
  const parts: Uint8Array[] = [];
  for (let n = r.range(1, 3); n > 0; n--) {
    const image = () => ({
      imageKind: r.int(7),
      offloadKind: r.pick([0, 1, 2, 3, 4, 8]),
      flags: r.bool(0.1) ? 1 : 0,
      strings: strings(r),
      image: r.bytes(r.size(64)),
    });
    const kind = r.next();
    if (kind < 0.55) parts.push(writeOffloadBinary(image()));
    else {
      const images = Array.from({ length: r.range(1, 3) }, image);
      const compress = kind > 0.8 ? { format: r.pick(["zlib", "zstd"] as const), compressor: compressors.zlib } : undefined;
      if (compress) compress.compressor = compressors[compress.format];
      parts.push(writeOffloadBinaryMulti(images, { version: kind < 0.65 ? 2 : 3, compress }));
    }
  }
  const bytes = concatBytes(parts);
  return { bytes, fields: fieldsOf(bytes) };
}

function read(input: Uint8Array, ctx: RunContext, stopAtError: boolean): OffloadBinaries {
  return readOffloadBinaries(ctx.chunked ? chunkedSource(input) : bytesSource(input), {
    engine: ctx.engine,
    decompress: codecDecompressor(),
    stopAtError,
  });
}

function describe(result: OffloadBinaries) {
  return { ...result, bytes: result.images.map((image) => readImageBytes(image)) };
}

export const offloadBinaryTarget: FuzzTarget = {
  name: "offload-binary",
  about: "offload binaries v1-v3 and compressed v3 (readOffloadBinaries, both engines, with and without stopAtError)",
  engines: true,
  sources: true,
  magic: Uint8Array.of(0x10, 0xff, 0x10, 0xad),
  generate: offloadSample,
  run(input, ctx) {
    const strict = (() => {
      try {
        return plain(describe(read(input, ctx, false)));
      } catch (e) {
        if (e instanceof OffloadKitError) return { error: e.code, offset: e.offset ?? null, message: e.message };
        throw e;
      }
    })();
    return { strict, lenient: describe(read(input, ctx, true)) };
  },
  // Compressed v3 images inflate: up to zlib's 1032:1 ratio, or zstd's block bound.
  allocBudget: (length) => 64 * 1024 + 32768 * length,
  roundTrip(input, ctx) {
    let first: OffloadBinaries;
    try {
      first = read(input, ctx, false);
    } catch (e) {
      if (e instanceof OffloadKitError) return undefined;
      throw e;
    }
    if (first.images.length === 0) return undefined;
    const images = first.images.map((image) => ({
      imageKind: image.imageKind, offloadKind: image.offloadKind, flags: image.flags,
      strings: [...image.strings.entries()], image: readImageBytes(image),
    }));
    const again = read(writeOffloadBinaryMulti(images, { version: 2 }), ctx, false);
    const view = (list: typeof images) => JSON.stringify(plain(list));
    const back = again.images.map((image) => ({
      imageKind: image.imageKind, offloadKind: image.offloadKind, flags: image.flags,
      strings: [...image.strings.entries()], image: readImageBytes(image),
    }));
    return view(back) === view(images) ? undefined : "images differ after writeOffloadBinaryMulti";
  },
};
