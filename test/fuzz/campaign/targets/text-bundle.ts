/** Text bundles (comment-line markers): src/formats/text-bundle.ts over both engines' scan kernel. */
import { bytesSource } from "../../../../src/engine/source.js";
import { TEXT_COMMENTS, readTextBundle, writeTextBundle } from "../../../../src/formats/text-bundle.js";
import { plain } from "../plain.js";
import { latin1 } from "../sample.js";
import type { Field, Sample } from "../sample.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";
import type { Rand } from "../rand.js";
import { randomId } from "./bundle.js";

const PIECES = ["\n", "// ", "# ", "; ", "__CLANG_OFFLOAD_BUNDLE__", "__START__ ", "__END__ ", "\n// __CLANG_OFFLOAD_BUNDLE____START__ ",
  "\n// __CLANG_OFFLOAD_BUNDLE____END__ ", "\n# __CLANG_OFFLOAD_BUNDLE____END__ ", "\n; __CLANG_OFFLOAD_BUNDLE____START__ ", "x", " "];

function payload(r: Rand): Uint8Array {
  let text = "";
  for (let k = r.int(6); k > 0; k--) text += r.bool(0.3) ? r.pick(PIECES) : r.text(r.size(30), "abc \n/#;_=");
  return latin1(text);
}

function textSample(r: Rand): Sample {
  const comment = r.pick(TEXT_COMMENTS);
  const entries = Array.from({ length: r.int(4) }, () => ({ id: randomId(r).replace(/\n/g, ""), data: payload(r) }));
  const bytes = writeTextBundle(comment, entries);
  const fields: Field[] = [];
  let at = 0;
  for (const e of entries) {
    const start = `\n${comment} __CLANG_OFFLOAD_BUNDLE____START__ `.length;
    fields.push({ at: at + start, size: e.id.length + 1, kind: "text" });
    at += start + e.id.length + 1 + e.data.length;
    fields.push({ at, size: 1, kind: "text" });
    at += `\n${comment} __CLANG_OFFLOAD_BUNDLE____END__ `.length + e.id.length + 1;
  }
  return { bytes, fields };
}

function read(input: Uint8Array, ctx: RunContext) {
  return TEXT_COMMENTS.map((comment) => readTextBundle(ctx.chunked ? chunkedSource(input) : bytesSource(input), comment, { engine: ctx.engine }));
}

export const textBundleTarget: FuzzTarget = {
  name: "text-bundle",
  about: "text bundle markers (readTextBundle for //, # and ;, both engines)",
  engines: true,
  sources: true,
  dictionary: PIECES,
  generate: textSample,
  run: read,
  roundTrip(input, ctx) {
    for (const bundle of read(input, ctx)) {
      const entries = bundle.entries.map((e) => ({ id: e.id, data: input.subarray(e.offset, e.offset + e.size) }));
      const written = writeTextBundle(bundle.comment, entries);
      const again = readTextBundle(written, bundle.comment, { engine: ctx.engine });
      const back = again.entries.map((e) => ({ id: e.id, data: written.subarray(e.offset, e.offset + e.size) }));
      if (JSON.stringify(plain(back)) !== JSON.stringify(plain(entries))) return `'${bundle.comment}' entries differ after writeTextBundle`;
    }
    return undefined;
  },
};
