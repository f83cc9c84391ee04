/**
 * The stream decoders' wrappers (src/packages/node/io.ts, src/browser/packages.ts): node:zlib gzip and raw
 * deflate, xz through the `xz` program and through xz-decompress (WebAssembly), zstd and bzip2 through
 * their programs (node:zlib's zstd on Node >= 22.15), and the browser path's DecompressionStream (which
 * Node has too), and the TypeScript bzip2 decoder (src/packages/bzip2.ts) checked against `bzip2 -dc`. The
 * input's first byte picks the decoder; the rest is a stream made by the real encoder,
 * then mutated (cut short, garbage appended, bytes flipped). The stream is fed whole, or in 1-7 byte
 * pieces (chunked), and both must agree. Where node:zlib has a one-shot decoder it is the reference: the
 * Node path must succeed exactly when it does, with the same bytes; the browser path, when it succeeds,
 * must give the same bytes (DecompressionStream refuses trailing garbage, zlib skips it). Output is read up
 * to 8 MiB and the stream then abandoned, which must also settle (a program is killed).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { deflateRawSync, gunzipSync, gzipSync, inflateRawSync } from "node:zlib";
import { OffloadKitError } from "../../../../src/engine/errors.js";
import { browserDecoders } from "../../../../src/browser/packages.js";
import { nodeDecoders } from "../../../../src/packages/node/io.js";
import type { Compression, Decoders } from "../../../../src/packages/decoders.js";
import { unwatched } from "../alloc.js";
import type { Rand } from "../rand.js";
import type { Field, Sample } from "../sample.js";
import type { FuzzTarget } from "../target.js";
import { pieces } from "./package-bytes.js";

/** Output read before a case abandons the stream. */
const READ_LIMIT = 8 * 1024 * 1024;

type Way = { readonly label: string; readonly platform: "node" | "browser" | "node-wasm" | "node-js"; readonly method: Compression | "deflate" };

const WAYS: readonly Way[] = [
  { label: "gzip (node:zlib)", platform: "node", method: "gzip" },
  { label: "deflate (node:zlib)", platform: "node", method: "deflate" },
  { label: "xz (xz-decompress)", platform: "node-wasm", method: "xz" },
  { label: "gzip (DecompressionStream)", platform: "browser", method: "gzip" },
  { label: "deflate (DecompressionStream)", platform: "browser", method: "deflate" },
  { label: "xz (browser xz-decompress)", platform: "browser", method: "xz" },
  { label: "bzip2 (TypeScript, Node)", platform: "node-js", method: "bzip2" },
  { label: "bzip2 (TypeScript, browser)", platform: "browser", method: "bzip2" },
  { label: "xz (program)", platform: "node", method: "xz" },
  { label: "zstd (program or node:zlib)", platform: "node", method: "zstd" },
  { label: "bzip2 (program)", platform: "node", method: "bzip2" },
];
/** Ways that start a process per case are drawn one time in six (they are 20-50x slower). */
const PROGRAM_WAYS = 3;

const seeds = new Map<string, Uint8Array[]>();

function plainText(r: Rand): Uint8Array {
  const words = ["gfx90a", "gfx942:xnack+", "hip", "amdgcn-amd-amdhsa", "\0\0\0\0", "__CLANG_OFFLOAD_BUNDLE__", "\n"];
  let text = "";
  for (let i = r.size(400); i > 0; i--) text += r.pick(words);
  const out = new TextEncoder().encode(text);
  return r.bool(0.2) ? new Uint8Array(r.range(1000, 200000)) : out;
}

/** Streams made by the programs once per worker: xz, zstd and bzip2 encoders have no one-shot JS twin here. */
function makeSeeds(): void {
  const texts = Array.from({ length: 12 }, (_, i) => {
    const n = i % 6 === 5 ? 150000 : i * 97;
    return new TextEncoder().encode(Array.from({ length: n }, (_, k) => String.fromCharCode(97 + ((k * 7 + i) % 26) * (k % 3 === 0 ? 1 : 0))).join(""));
  });
  for (const [method, args] of [["xz", ["-c", "-1"]], ["zstd", ["-c", "-q", "-1"]], ["bzip2", ["-c", "-1"]]] as const) {
    const out: Uint8Array[] = [];
    for (const text of texts) {
      const run = spawnSync(method, args, { input: text, maxBuffer: 1 << 26 });
      if (run.status === 0) out.push(new Uint8Array(run.stdout));
    }
    // Two streams back to back: every format allows concatenation.
    if (out.length > 1) out.push(Uint8Array.from([...out[0]!, ...out[1]!]));
    seeds.set(method, out);
  }
}

function encode(r: Rand, way: Way): Sample {
  const fields: Field[] = [{ at: 0, size: 1, kind: "kind" }];
  let stream: Uint8Array;
  if (way.method === "gzip") {
    stream = gzipSync(plainText(r), { level: r.pick([1, 6, 9]) });
    if (r.bool(0.2)) stream = Uint8Array.from([...stream, ...gzipSync(plainText(r))]);
    fields.push({ at: 1 + 3, size: 1, kind: "kind" }, { at: stream.length - 7, size: 4, kind: "size" }, { at: stream.length - 3, size: 4, kind: "size" });
  } else if (way.method === "deflate") {
    stream = deflateRawSync(plainText(r), { level: r.pick([0, 1, 9]) });
  } else {
    const pool = seeds.get(way.method) ?? [];
    stream = pool.length > 0 ? r.pick(pool) : new Uint8Array(0);
    if (stream.length > 12) fields.push({ at: 1 + 6, size: 2, kind: "kind" }, { at: stream.length + 1 - 8, size: 4, kind: "size" }, { at: stream.length + 1 - 12, size: 4, kind: "size" });
  }
  return { bytes: Uint8Array.from([WAYS.indexOf(way), ...stream]), fields };
}

function generate(r: Rand): Sample {
  const way = r.bool(1 / 6) ? WAYS[WAYS.length - PROGRAM_WAYS + r.int(PROGRAM_WAYS)]! : WAYS[r.int(WAYS.length - PROGRAM_WAYS)]!;
  return encode(r, way);
}

let node: Decoders | undefined;
let nodeWasm: Decoders | undefined;
let browser: Decoders | undefined;
let nodeJs: Decoders | undefined;

function decodersFor(way: Way): Decoders {
  if (way.platform === "browser") return (browser ??= browserDecoders());
  if (way.platform === "node-wasm") return (nodeWasm ??= nodeDecoders({ ...process.env, OFFLOAD_KIT_XZ: "wasm" }));
  if (way.platform === "node-js") return (nodeJs ??= nodeDecoders({ ...process.env, OFFLOAD_KIT_BZIP2: "js" }));
  return (node ??= nodeDecoders());
}

/** One-shot node:zlib result, when zlib decodes this method. */
function reference(way: Way, stream: Uint8Array): { ok: Uint8Array } | { error: string } | undefined {
  return unwatched(() => {
    if (way.method === "bzip2" && way.platform !== "node") {
      // The TypeScript decoder against libbzip2 itself.
      const run = spawnSync("bzip2", ["-dcq"], { input: stream, maxBuffer: READ_LIMIT });
      if (run.error !== undefined) return undefined;
      return run.status === 0 ? { ok: new Uint8Array(run.stdout) } : { error: run.stderr.toString().trim() };
    }
    try {
      if (way.method === "gzip") return { ok: gunzipSync(stream, { maxOutputLength: READ_LIMIT }) };
      if (way.method === "deflate") return { ok: inflateRawSync(stream, { maxOutputLength: READ_LIMIT }) };
    } catch (e) {
      // Past the read limit there is nothing to compare (the case abandons its stream there too).
      if ((e as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") return undefined;
      return { error: (e as Error).message };
    }
    return undefined;
  });
}

async function decode(input: Uint8Array, chunked: boolean) {
  const way = WAYS[(input[0] ?? 0) % WAYS.length]!;
  const stream = input.subarray(1);
  const decoders = decodersFor(way);
  const feed = chunked ? pieces(stream) : (async function* () {
    if (stream.length > 0) yield stream;
  })();
  const hash = createHash("sha1");
  let length = 0;
  let abandoned = false;
  let failure: OffloadKitError | undefined;
  const out = way.method === "deflate" ? decoders.inflateRaw(feed) : decoders.decode(way.method, feed);
  try {
    for await (const chunk of out) {
      hash.update(chunk);
      length += chunk.length;
      if (length >= READ_LIMIT) {
        abandoned = true;
        break;
      }
    }
  } catch (e) {
    if (!(e instanceof OffloadKitError)) throw e;
    failure = e;
  }
  const ref = reference(way, stream);
  // node:zlib (behind both paths) ignores bytes after a gzip member that arrive in the same write as its
  // end and are not another member's magic, but reads them as a new member's header ("incorrect header
  // check") when they come in a later write: which one depends on the feeding, not on the data. Once all
  // of the reference's bytes are out, that refusal counts as the reference's silence.
  if (failure !== undefined && ref !== undefined && "ok" in ref && way.method === "gzip" && /incorrect header check/.test(failure.message)
    && length === ref.ok.length && hash.copy().digest("hex") === createHash("sha1").update(ref.ok).digest("hex")) {
    failure = undefined;
  }
  if (ref !== undefined && !abandoned) {
    const same = "ok" in ref && failure === undefined && length === ref.ok.length && hash.copy().digest("hex") === createHash("sha1").update(ref.ok).digest("hex");
    if ((way.platform === "node" || way.method === "bzip2") && (failure === undefined) !== ("ok" in ref)) {
      throw new Error(`${way.label}: ${failure ? `failed (${failure.message})` : "succeeded"} where the reference (node:zlib, bzip2 -dc) ${"ok" in ref ? "succeeds" : `fails (${ref.error})`}`);
    }
    if (failure === undefined && !same) throw new Error(`${way.label}: ${length} bytes decoded, not the reference's ${"ok" in ref ? ref.ok.length : "failure"}`);
  }
  if (failure !== undefined) throw failure;
  return { way: way.label, length, abandoned, sha1: hash.digest("hex") };
}

export const decodersTarget: FuzzTarget = {
  name: "decoders",
  about: "stream decoders' wrappers: node:zlib gzip/deflate, xz (program and xz-decompress), zstd and bzip2 (programs), the browser's DecompressionStream; cut, garbage-tailed and damaged streams, fed whole and in pieces",
  engines: false,
  sources: true,
  generate(r) {
    // Made here rather than in setup(): the main thread regenerates a hung case without running setup.
    if (seeds.size === 0) makeSeeds();
    return generate(r);
  },
  run: (input, ctx) => decode(input, ctx.chunked),
  // Decoders hand out 64 KiB chunks; xz-decompress and DecompressionStream keep their own window (<= 1 MiB at -1).
  // bzip2's BWT buffer is 4 bytes x 100 kB x level (3.6 MB at -9), whatever the input.
  allocBudget: (length) => 4 * length + 4 * 1024 * 1024,
};
