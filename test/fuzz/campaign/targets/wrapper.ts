/**
 * The offload wrapper's inputs (src/wrapper/, the bitcode writer in src/llvm/bitcode/): any image bytes,
 * target IDs, triples, kinds and flavours. The module must come out (or be refused with our error), as
 * bitcode our reader walks (one module) and as text. Images are encoded as abbreviated arrays (char6,
 * 7-bit, VBR6), so their bytes are not searched for in the output.
 */
import { readBitcodeContents } from "../../../../src/formats/bitcode.js";
import { wrapImages, wrapImagesText } from "../../../../src/wrapper/index.js";
import type { WrapImagesOptions, WrapperImage } from "../../../../src/wrapper/index.js";
import type { Rand } from "../rand.js";
import { concat, latin1 } from "../sample.js";
import type { Sample } from "../sample.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";

const TRIPLES = ["x86_64-unknown-linux-gnu", "x86_64-pc-linux-gnu", "nvptx64-nvidia-cuda", "amdgcn-amd-amdhsa", "aarch64-linux-gnu", "bogus", ""];
const ARCHS = ["gfx906", "gfx90a:xnack+", "sm_70", "", "gfx908:sramecc+:xnack-", "\"quoted\"", "a\\b", "\n"];
const SEPARATOR = 1;

/** Layout: a flags byte (flavour, kind, arch use), the triple, then per image its arch and its bytes, 0x01 between. */
function wrapperSample(r: Rand): Sample {
  const flags = Uint8Array.of(r.int(256));
  const parts: Uint8Array[] = [flags, latin1(r.pick(TRIPLES))];
  for (let n = r.int(4); n > 0; n--) {
    parts.push(Uint8Array.of(SEPARATOR), latin1(r.pick(ARCHS)), Uint8Array.of(SEPARATOR));
    parts.push(r.bytes(r.size(200)).map((b) => (b === SEPARATOR ? 0 : b)));
  }
  return { bytes: concat(...parts), fields: [{ at: 0, size: 1, kind: "kind" }] };
}

function optionsOf(input: Uint8Array, ctx: RunContext): { options: WrapImagesOptions } {
  const flags = input[0] ?? 0;
  const pieces: Uint8Array[] = [];
  let start = 1;
  for (let i = 1; i <= input.length; i++) {
    if (i === input.length || input[i] === SEPARATOR) {
      pieces.push(input.subarray(start, i));
      start = i + 1;
    }
  }
  const text = (b: Uint8Array | undefined) => String.fromCharCode(...(b ?? []));
  const wrapperImages: WrapperImage[] = [];
  for (let i = 1; i + 1 < pieces.length; i += 2) {
    const bytes = pieces[i + 1]!;
    wrapperImages.push({ bytes: ctx.chunked ? chunkedSource(bytes) : bytes, arch: flags & 8 ? text(pieces[i]) : undefined, name: `image${i}` });
  }
  const flavour = flags & 1 ? "llvm-offload-wrapper-22" : "clang-offload-wrapper-14";
  const kind = (["openmp", "cuda", "hip", "sycl"] as const)[(flags >> 1) & 3] as WrapImagesOptions["kind"];
  return { options: { flavour, kind, triple: flags & 16 ? undefined : text(pieces[0]), images: wrapperImages } };
}

export const wrapperTarget: FuzzTarget = {
  name: "wrapper",
  about: "offload wrapper inputs: images, target IDs, triples, kinds, both flavours (wrapImages, wrapImagesText)",
  engines: false,
  sources: true,
  dictionary: [...TRIPLES, ...ARCHS],
  // The bitcode writer's output buffer is a fixed 1 MiB, whatever the input.
  allocBudget: (length) => 2 * 1024 * 1024 + 8 * length,
  generate: wrapperSample,
  run(input, ctx) {
    const { options } = optionsOf(input, ctx);
    const bitcode = wrapImages(options);
    const contents = readBitcodeContents(bitcode);
    if (contents.modules !== 1) throw new Error(`the wrapper module reads as ${contents.modules} modules`);
    const text = wrapImagesText(optionsOf(input, ctx).options);
    return { bitcode, text: text.length };
  },
};
