// CcobPrefetch (src/compress/node/decompress.ts) with locate's prefetchCompressed (src/inspect/locate.ts): runs of
// compressed bundles decoded ahead give exactly what decoding each in turn gives (bundles, entries,
// problems), whether the CCOBs are walked by their sizes or hopped to in a section, with damaged and zlib
// members among them; and the built CLI, whose workers are real threads, extracts the same bytes.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compressBundle } from "../../src/bundler/api.js";
import { bytesSource } from "../../src/engine/source.js";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { locate } from "../../src/inspect/locate.js";
import type { Location } from "../../src/inspect/locate.js";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { CcobPrefetch, decompressMember } from "../../src/compress/node/decompress.js";
import { fatbin } from "../inspect/elf-builder.js";

const HOST = "host-x86_64-unknown-linux-gnu";
const G906 = "hipv4-amdgcn-amd-amdhsa--gfx906";
const G90A = "hipv4-amdgcn-amd-amdhsa--gfx90a";
const root = mkdtempSync(join(tmpdir(), "offload-kit-prefetch-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Compressible payload bytes, different for each (i, target). */
function payload(i: number, salt: number, size: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = (i * 7919 + salt * 104729 + 1) >>> 0;
  for (let k = 0; k < size; k += 16) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.fill(x >>> 24, k, Math.min(size, k + 16));
  }
  return out;
}

const bundles: Uint8Array[] = [];
const ccobs: Uint8Array[] = [];
let zlibCcob: Uint8Array;
beforeAll(async () => {
  for (let i = 0; i < 20; i++) {
    bundles.push(writeBinaryBundle([
      { id: HOST, data: new Uint8Array(0) },
      { id: G906, data: payload(i, 1, 40_000 + i * 1000) },
      { id: G90A, data: payload(i, 2, 30_000) },
    ], 4096));
    ccobs.push(await compressBundle(bundles[i]!, { codecs: nodeCodecs, version: i % 2 === 0 ? 2 : 3 }));
  }
  zlibCcob = await compressBundle(bundles[0]!, { codecs: nodeCodecs, method: "zlib" });
});

function summary(location: Location): unknown {
  return {
    bundles: location.bundles.map((b) => ({ offset: b.offset, entries: b.entries, compressed: b.compressed })),
    problems: location.problems,
  };
}

/** The location found decoding each CCOB in turn, and with prefetching; and what prefetching did. */
function both(bytes: Uint8Array, recalculateHash = false) {
  const plain = locate(bytesSource(bytes), { openCompressed: (blob, member) => decompressMember(blob, member, { recalculateHash }) });
  const prefetch = new CcobPrefetch({ recalculateHash }, 0);
  try {
    const ahead = locate(bytesSource(bytes), { openCompressed: prefetch.open, prefetchCompressed: prefetch.prefetch });
    return { plain: summary(plain), ahead: summary(ahead), stats: prefetch.stats };
  } finally {
    prefetch.close();
  }
}

/** CCOBs back to back with zero padding between them (the walk by sizes). */
function padded(parts: readonly Uint8Array[]): Uint8Array {
  return fatbin(parts).bytes;
}

describe("CCOBs decoded ahead", () => {
  it("walked by their sizes: same bundles, every member after the first decoded ahead", () => {
    const { plain, ahead, stats } = both(padded(ccobs), true);
    expect(ahead).toEqual(plain);
    expect((plain as { bundles: unknown[] }).bundles).toHaveLength(20);
    expect(stats).toEqual({ handedOn: 19, openedAhead: 19 });
  });

  it("hopped to in a section after a plain bundle: same bundles", () => {
    const { plain, ahead, stats } = both(padded([bundles[5]!, ...ccobs.slice(0, 12), bundles[6]!, ...ccobs.slice(12)]));
    expect(ahead).toEqual(plain);
    expect((plain as { bundles: unknown[] }).bundles).toHaveLength(22);
    expect(stats.openedAhead).toBeGreaterThanOrEqual(17);
    expect(stats.openedAhead).toBe(stats.handedOn);
  });

  it("with a damaged member and a zlib one among them: the same problems, worded as decoding in turn words them", () => {
    const damaged = ccobs[7]!.slice();
    // Inside the zstd frame's data, past its header: the frame no longer decodes.
    for (let k = 60; k < 90; k++) damaged[k] ^= 0x5a;
    const parts = [...ccobs.slice(0, 7), damaged, zlibCcob, ...ccobs.slice(8)];
    for (const bytes of [padded(parts), padded([bundles[1]!, ...parts])]) {
      const { plain, ahead } = both(bytes);
      expect(ahead).toEqual(plain);
      expect((plain as { problems: { code: string }[] }).problems.length).toBeGreaterThan(0);
    }
  });

  it("leaves short runs to the caller's thread (minBytes)", () => {
    const prefetch = new CcobPrefetch();
    try {
      locate(bytesSource(padded(ccobs.slice(0, 3))), { openCompressed: prefetch.open, prefetchCompressed: prefetch.prefetch });
      expect(prefetch.stats).toEqual({ handedOn: 0, openedAhead: 0 });
    } finally {
      prefetch.close();
    }
  });

  it("offload-kit extract (built, worker threads) writes every entry of 24 large CCOBs in a section", async () => {
    const big: Uint8Array[] = [];
    const expected = new Map<string, Uint8Array>();
    for (let i = 0; i < 24; i++) {
      const g906 = payload(i, 3, 1 << 20);
      const bundle = writeBinaryBundle([{ id: HOST, data: new Uint8Array(0) }, { id: G906, data: g906 }], 4096);
      big.push(await compressBundle(bundle, { codecs: nodeCodecs }));
      expected.set(String(i), g906);
    }
    const input = join(root, "fatbin.bin");
    writeFileSync(input, padded([bundles[0]!, ...big]));
    const bin = new URL("../../dist/bin/offload-kit.js", import.meta.url).pathname;
    const run = spawnSync(process.execPath, [bin, "extract", `--targets=${G906}`, "--out-dir=out", "--json", "fatbin.bin"], { cwd: root, encoding: "utf8" });
    expect([run.status, run.stderr]).toEqual([0, ""]);
    const outputs = JSON.parse(run.stdout).outputs as { path: string; bundle: number }[];
    expect(outputs).toHaveLength(25);
    expect(readdirSync(join(root, "out"))).toHaveLength(25);
    // Bundle 0 is the plain one; bundle k + 1 holds big[k]'s gfx906 payload.
    expect(outputs.map((o) => o.bundle)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    outputs.slice(1).forEach((o, k) => expect(Buffer.compare(readFileSync(join(root, o.path)), expected.get(String(k))!)).toBe(0));
  });
});
