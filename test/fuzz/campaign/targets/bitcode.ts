/**
 * Bitcode (src/formats/bitcode.ts): the top-level block walk, the IR symbol table (irsymtab) and the
 * archive symbols taken from it, on real clang bitcode from the fixtures (raw, inside bundles and
 * archives), optionally in the 0x0B17C0DE wrapper. BitcodeError and IrSymtabUnavailable are the module's
 * documented failures (callers turn them into LLVM's warnings), so they count as clean refusals here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { bytesSource } from "../../../../src/engine/source.js";
import { readArchive } from "../../../../src/formats/archive.js";
import { BitcodeError, IrSymtabUnavailable, bitcodeArchiveSymbols, isBitcode, readBitcodeContents, readIrSymbolTable } from "../../../../src/formats/bitcode.js";
import { readBinaryBundle } from "../../../../src/formats/bundle.js";
import { archiveMemberSymbols } from "../../../../src/formats/symbols.js";
import { concatBytes } from "../../../../src/formats/bytes.js";
import { attempt } from "../plain.js";
import type { Rand } from "../rand.js";
import { u32 } from "../sample.js";
import type { Field, Sample } from "../sample.js";
import { chunkedSource } from "../target.js";
import type { FuzzTarget, RunContext } from "../target.js";

const FIXTURES = new URL(`file://${process.cwd()}/test/fixtures/`);
let seeds: Uint8Array[] = [];

function collect(bytes: Uint8Array, out: Uint8Array[]): void {
  if (isBitcode(bytes)) {
    out.push(bytes);
    return;
  }
  try {
    const read = readBinaryBundle(bytes);
    if (read.kind === "bundle") for (const e of read.bundle.entries) collect(bytes.subarray(e.offset, e.offset + e.size), out);
  } catch {
    // Not a bundle: nothing to take.
  }
  if (bytes.length > 8 && String.fromCharCode(...bytes.subarray(0, 8)) === "!<arch>\n") {
    try {
      for (const m of readArchive(bytes).members) collect(bytes.subarray(m.dataOffset, m.dataOffset + m.size), out);
    } catch {
      // A damaged fixture on purpose: skip it.
    }
  }
}

/** Real bitcode from the fixtures (small files only: the campaign mutates them a million times). */
export function loadBitcodeSeeds(): Uint8Array[] {
  if (seeds.length > 0) return seeds;
  const found: Uint8Array[] = [];
  for (const dir of ["archive", "bundler", "offload-binary", "ccob"]) {
    for (const name of readdirSync(new URL(`${dir}/`, FIXTURES))) {
      const path = join(new URL(`${dir}/`, FIXTURES).pathname, name);
      const bytes = new Uint8Array(readFileSync(path));
      if (bytes.length < 256 * 1024) collect(bytes, found);
    }
  }
  const unique = new Map(found.filter((b) => b.length <= 16 * 1024).map((b) => [Buffer.from(b).toString("base64"), b.slice()]));
  seeds = [...unique.values()];
  if (seeds.length === 0) throw new Error("no bitcode seeds found under test/fixtures");
  return seeds;
}

function bitcodeSample(r: Rand): Sample {
  let bytes = r.pick(loadBitcodeSeeds());
  const fields: Field[] = [];
  let base = 0;
  if (r.bool(0.2)) {
    const pad = r.int(3) * 4;
    const header = new Uint8Array(20 + pad);
    const view = new DataView(header.buffer);
    view.setUint32(0, 0x0b17c0de, true);
    view.setUint32(8, 20 + pad, true);
    view.setUint32(12, bytes.length, true);
    view.setUint32(16, 7, true);
    bytes = concatBytes([header, bytes]);
    fields.push(u32(8, "offset"), u32(12, "size"));
    base = 20 + pad;
  }
  if (r.bool(0.2)) bytes = concatBytes([bytes, new Uint8Array(r.int(3) * 4)]);
  try {
    const contents = readBitcodeContents(bytes);
    if (contents.symtab) {
      const at = contents.symtab.offset;
      for (let k = 0; k < 19 && at + 4 * k + 4 <= bytes.length; k++) fields.push(u32(at + 4 * k, k === 0 ? "kind" : k % 2 ? "offset" : "count"));
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const symbolsAt = at + view.getUint32(at + 28, true);
      for (let s = 0; s < 4 && symbolsAt + 24 * (s + 1) <= bytes.length; s++) {
        fields.push(u32(symbolsAt + 24 * s, "offset"), u32(symbolsAt + 24 * s + 4, "size"), u32(symbolsAt + 24 * s + 20, "kind"));
      }
    }
    // Block headers: the word counts that follow the first blocks' IDs sit at 32-bit boundaries.
    for (let k = base + 4; k < Math.min(bytes.length, base + 64); k += 4) fields.push(u32(k, "size"));
  } catch {
    // A seed the walk refuses is still a fine starting point.
  }
  return { bytes, fields };
}

/** Like plain.ts's attempt, with the module's own refusals as outcomes. */
function attemptBitcode(run: () => unknown): unknown {
  return attempt(() => {
    try {
      return run();
    } catch (e) {
      if (e instanceof BitcodeError || e instanceof IrSymtabUnavailable) return { refused: e.constructor.name, message: e.message };
      throw e;
    }
  });
}

export const bitcodeTarget: FuzzTarget = {
  name: "bitcode",
  about: "bitcode block walk and irsymtab reader (readBitcodeContents, readIrSymbolTable, archive symbols) on real clang bitcode",
  engines: false,
  sources: true,
  magic: Uint8Array.of(0x42, 0x43, 0xc0, 0xde),
  async setup() {
    loadBitcodeSeeds();
  },
  generate: bitcodeSample,
  run(input: Uint8Array, ctx: RunContext) {
    const source = () => (ctx.chunked ? chunkedSource(input) : bytesSource(input));
    return {
      contents: attemptBitcode(() => readBitcodeContents(source())),
      symtab: attemptBitcode(() => readIrSymbolTable(source())),
      archive: attemptBitcode(() => bitcodeArchiveSymbols(source())),
      member: attemptBitcode(() => archiveMemberSymbols(source())),
    };
  },
};
