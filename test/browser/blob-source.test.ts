// BlobSource in Node: synchronous reads through a FileReaderSync stand-in (Node has none; a browser
// Worker does, and test/browser/page.test.ts runs the real one), checked against the bytes themselves
// for reads of every shape (the block cache included), and the browser readers over a BlobSource
// giving exactly what they give over the bytes in memory, for every committed fixture.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { BlobSource } from "../../src/browser/blob-source.js";
import { inspectSource, readEntry } from "../../src/browser/inspect.js";
import { loadBrowserCodecs } from "../../src/compress/browser.js";
import type { Codecs } from "../../src/compress/codecs.js";

/** A Blob whose slices FileReaderSync (below) reads synchronously, as a Worker's FileReaderSync does. */
class MemoryBlob {
  constructor(readonly bytes: Uint8Array) {}
  get size() {
    return this.bytes.length;
  }
  slice(start: number, end: number): MemoryBlob {
    return new MemoryBlob(this.bytes.subarray(start, end));
  }
}

class FileReaderSyncStandIn {
  readAsArrayBuffer(blob: MemoryBlob): ArrayBuffer {
    return blob.bytes.slice().buffer;
  }
}

function blobSource(bytes: Uint8Array): BlobSource {
  return new BlobSource(new MemoryBlob(bytes) as unknown as Blob);
}

const ROOT = new URL("../..", import.meta.url).pathname;

function fixtures(dir: string): string[] {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return fixtures(path);
    return /\.(txt|md|sh|stderr|json|tsv|c|cpp|hip|cu|ll)$/.test(name) ? [] : [path];
  });
}

describe("BlobSource", () => {
  afterEach(() => {
    delete (globalThis as { FileReaderSync?: unknown }).FileReaderSync;
  });

  it("refuses synchronous reads where there is no FileReaderSync, and reads asynchronously anywhere", async () => {
    const bytes = Uint8Array.from({ length: 1000 }, (_, i) => i & 0xff);
    const source = new BlobSource(new Blob([bytes]));
    expect(source.canReadSync).toBe(false);
    expect(() => source.read(new Uint8Array(4), 0)).toThrow(expect.objectContaining({ code: "SYNC_READ_UNAVAILABLE" }));
    const dest = new Uint8Array(10);
    expect(await source.readAsync(dest, 995)).toBe(5);
    expect([...dest.subarray(0, 5)]).toEqual([...bytes.subarray(995)]);
    expect(await source.readAsync(dest, 1000)).toBe(0);
    await expect(source.readAsync(dest, -1)).rejects.toMatchObject({ code: "OUT_OF_BOUNDS" });
  });

  it("reads any range exactly, small reads through its block cache, large ones straight", () => {
    (globalThis as { FileReaderSync?: unknown }).FileReaderSync = FileReaderSyncStandIn;
    const size = 300_000;
    const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 2654435761) >>> 24);
    const source = blobSource(bytes);
    expect(source.canReadSync).toBe(true);
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) % n);
    for (let i = 0; i < 2000; i++) {
      const length = [1, 4, 24, 4096, 16384, 16385, 65536, 70000][random(8)]!;
      const position = random(size + 10);
      const dest = new Uint8Array(length);
      const got = source.read(dest, position);
      const want = bytes.subarray(position, position + length);
      expect(got).toBe(want.length);
      expect(Buffer.compare(dest.subarray(0, got), want)).toBe(0);
    }
    // A region walked window by window (each window overlapping the last by a magic's length) is read ahead.
    const big = Uint8Array.from({ length: 20_000_000 }, (_, i) => (i * 40503) >>> 8);
    const walked = blobSource(big);
    for (let at = 0; at < big.length; at += 1_048_576 - 31) {
      const dest = new Uint8Array(1_048_576);
      const got = walked.read(dest, at);
      expect(Buffer.compare(dest.subarray(0, got), big.subarray(at, at + 1_048_576)), `at ${at}`).toBe(0);
    }
    expect(walked.reads).toBeLessThanOrEqual(4);
    // Overlapping small reads are served from one read of the file.
    const fresh = blobSource(bytes);
    fresh.read(new Uint8Array(4096), 20_000);
    fresh.read(new Uint8Array(4096), 24_000);
    fresh.read(new Uint8Array(64), 16_384);
    expect(fresh.reads).toBe(1);
  });

  describe("the browser readers over a BlobSource", () => {
    let codecs: Codecs;
    beforeAll(async () => {
      codecs = await loadBrowserCodecs();
    });

    it("report every fixture as over the bytes in memory, reading no more than the file", () => {
      (globalThis as { FileReaderSync?: unknown }).FileReaderSync = FileReaderSyncStandIn;
      let checked = 0;
      for (const path of fixtures(join(ROOT, "test/fixtures"))) {
        const bytes = new Uint8Array(readFileSync(path));
        const source = blobSource(bytes);
        const viaBlob = inspectSource(source, path, { codecs });
        expect(viaBlob, path).toEqual(inspectSource(bytes, path, { codecs }));
        // Whole blocks are read, so a small file's count can round up to a block, never beyond.
        expect(source.bytesRead, path).toBeLessThanOrEqual(Math.max(bytes.length, 16 * 1024) * 2);
        for (const bundle of viaBlob.report.bundles) {
          bundle.entries.forEach((entry, i) => {
            const viaBlobEntry = readEntry(blobSource(bytes), { bundle: bundle.index, entry: i }, { codecs });
            const nv = (bundle as { nvFatbin?: { entries: readonly { kind: number; decodedSize: number }[] } }).nvFatbin?.entries[i];
            if (nv !== undefined) {
              // An NVIDIA entry is read decoded, as cuobjdump writes it: a cubin whole, PTX (kind 1) as text without the
              // NULs that end it.
              if (nv.kind !== 1) expect(viaBlobEntry.length, `${path} ${bundle.index}/${i}`).toBe(nv.decodedSize);
              else {
                expect(viaBlobEntry.length, `${path} ${bundle.index}/${i}`).toBeLessThanOrEqual(nv.decodedSize);
                expect(viaBlobEntry.includes(0), `${path} ${bundle.index}/${i}`).toBe(false);
              }
              return;
            }
            expect(viaBlobEntry.length, `${path} ${bundle.index}/${i}`).toBe(entry.size);
            // Stored as they are unless the bundle is compressed (CCOB) or the entry is a zstd frame of its own (a
            // zstd-per-kernel kpack archive, whose entry offsets are in the decoded code objects).
            const ownFrame = (entry as { kpack?: { compression?: string } }).kpack?.compression === "zstd-per-kernel";
            if (bundle.compressed === undefined && !ownFrame) expect(Buffer.compare(viaBlobEntry, bytes.subarray(entry.offset, entry.offset + entry.size)), `${path} ${bundle.format} ${bundle.index}/${i}`).toBe(0);
          });
        }
        checked++;
      }
      expect(checked).toBeGreaterThan(80);
    });
  });
});
