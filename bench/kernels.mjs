// Wasm kernels vs their TypeScript twins, in-process with benny: an empty call through the boundary,
// then scan and the bundle header walk at 64 B, 1 MiB and 64 MiB. A kernel that does not beat its
// twin by 2x on large inputs is not worth its boundary (STYLE habit 11). Results in MB/s.
// Usage: npm run build && node bench/kernels.mjs
import b from "benny";
import { fillBytes, printTable, saveResults } from "./common.mjs";

const { createEngine } = await import("../dist/engine/select.js");
const { NEEDLE, RECORDS, BUNDLE_MAX_RECORDS, SCAN_MAX_HITS } = await import("../dist/engine/layout.js");
const { layoutBinaryBundle } = await import("../dist/formats/bundle.js");

const SIZES = { "64 B": 64, "1 MiB": 1 << 20, "64 MiB": 64 << 20 };
const engines = { wasm: createEngine("wasm", 64 << 20), ts: createEngine("ts", 64 << 20) };
const magic = new TextEncoder().encode("__CLANG_OFFLOAD_BUNDLE__");
const marker = new TextEncoder().encode("\n; __CLANG_OFFLOAD_BUNDLE____START__ ");
const summary = {};

/** Binary data with a magic every 1 MiB; or LLVM-IR-like text (newlines and spaces everywhere). */
function haystack(size, text) {
  const bytes = new Uint8Array(size);
  if (text) {
    const line = new TextEncoder().encode("  %12 = getelementptr inbounds i8, ptr %__x_11, i64 %idx_\n");
    for (let i = 0; i < size; i += line.length) bytes.set(line.subarray(0, Math.min(line.length, size - i)), i);
  } else {
    fillBytes(bytes, 42);
    for (let i = 4096; i + magic.length < size; i += 1 << 20) bytes.set(magic, i);
  }
  return bytes;
}

/** A bundle header of at most `size` bytes (one entry at least), as the walk kernel sees it. */
function header(size) {
  const id = (i) => `hip-amdgcn-amd-amdhsa--gfx${String(i).padStart(7, "0")}:xnack+`;
  const count = Math.max(1, Math.floor((size - 32) / (24 + id(0).length)));
  const ids = Array.from({ length: count }, (_, i) => id(i));
  const layout = layoutBinaryBundle(ids.map((id) => ({ id, size: 1 })), 1);
  return { bytes: layout.header, total: layout.size };
}

function scanAll(engine, length, needle) {
  let start = 0;
  for (;;) {
    const hits = engine.scan(needle.length, start, length, SCAN_MAX_HITS);
    if (hits < SCAN_MAX_HITS) return;
    start = engine.views().u32[(RECORDS >>> 2) + hits - 1] + 1;
  }
}

function walkAll(engine, length, total) {
  const f64 = engine.views().f64;
  engine.bundleHead(length, total);
  const count = f64[(0x100 >>> 3) + 5];
  let position = 32;
  let index = 0;
  for (;;) {
    const status = engine.walkBundle(0, length, total, position, index, count, BUNDLE_MAX_RECORDS);
    position = f64[(0x100 >>> 3) + 2];
    index = f64[(0x100 >>> 3) + 3];
    if (status < 0) throw new Error(`walk failed with status ${status}`);
    if (status !== 1) return index;
  }
}

async function suite(name, size, prepare, run) {
  const rows = {};
  await b.suite(
    name,
    ...Object.entries(engines).map(([kind, engine]) =>
      b.add(kind, () => {
        prepare(engine);
        return () => run(engine);
      })),
    b.cycle((result) => {
      rows[result.name] = result.ops;
    }),
    b.complete(),
  );
  const mbps = Object.fromEntries(Object.entries(rows).map(([k, ops]) => [k, size === 0 ? ops : (ops * size) / 1e6]));
  summary[name] = { ...mbps, unit: size === 0 ? "calls/s" : "MB/s", wasmOverTs: mbps.wasm / mbps.ts };
}

// scan over an empty range returns at once in both engines: the cost of crossing the boundary.
await suite("empty call (boundary baseline)", 0, () => {}, (engine) => engine.scan(1, 0, 0, 0));
for (const [label, size] of Object.entries(SIZES)) {
  const binary = haystack(size, false);
  await suite(`scan magic, binary, ${label}`, size, (engine) => {
    engine.views().window.set(binary);
    engine.views().bytes.set(magic, NEEDLE);
  }, (engine) => scanAll(engine, size, magic));
  const text = haystack(size, true);
  await suite(`scan text marker, IR text, ${label}`, size, (engine) => {
    engine.views().window.set(text);
    engine.views().bytes.set(marker, NEEDLE);
  }, (engine) => scanAll(engine, size, marker));
  const head = header(size);
  await suite(`header walk, ${label}`, head.bytes.length, (engine) => engine.views().window.set(head.bytes), (engine) => walkAll(engine, head.bytes.length, head.total));
}

// Offload binaries (0x10FF10AD) back to back, each an image with triple, arch and feature strings.
const { writeOffloadBinary } = await import("../dist/formats/offload-binary.js");
const { OFFLOAD_MAX_RECORDS } = await import("../dist/engine/layout.js");
function offloadBlob(size) {
  const one = writeOffloadBinary({
    imageKind: 1, offloadKind: 1, image: new Uint8Array(8),
    strings: [["triple", "amdgcn-amd-amdhsa"], ["arch", "gfx90a:xnack+"], ["feature", "+xnack"]],
  });
  const bytes = new Uint8Array(Math.max(one.length, size - (size % one.length)));
  for (let at = 0; at + one.length <= bytes.length; at += one.length) bytes.set(one, at);
  return bytes;
}
function walkOffload(engine, length) {
  const f64 = engine.views().f64;
  let [position, entry, string] = [0, -1, -1];
  for (;;) {
    const status = engine.walkOffloadBinaries(0, length, length, position, entry, string, OFFLOAD_MAX_RECORDS, 3);
    if (status < 0) throw new Error(`offload walk failed with status ${status}`);
    if (status === 0) return;
    [position, entry, string] = [f64[(0x100 >>> 3) + 2], f64[(0x100 >>> 3) + 3], f64[(0x100 >>> 3) + 5]];
  }
}
for (const [label, size] of Object.entries(SIZES)) {
  const blob = offloadBlob(size);
  await suite(`offload binary walk, ${label === "64 B" ? "one binary" : label}`, blob.length, (engine) => engine.views().window.set(blob), (engine) => walkOffload(engine, blob.length));
}

printTable("Wasm vs TS twin (in-process, benny)", [
  ["case", "wasm", "ts", "unit", "wasm/ts"],
  ...Object.entries(summary).map(([k, v]) => [k, v.wasm.toFixed(1), v.ts.toFixed(1), v.unit, v.wasmOverTs.toFixed(2)]),
]);
console.log(`\nsaved ${saveResults("kernels", { summary })}`);
