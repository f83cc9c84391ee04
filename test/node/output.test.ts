// OutputFile (src/node/output.ts) with a write buffer: the file holds exactly what was written, in
// order, whatever mix of small writes, reserved rooms, large writes and writeAt; nothing before commit.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { OutputFile, withOutputs } from "../../src/node/output.js";

const root = mkdtempSync(join(tmpdir(), "offload-kit-output-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("OutputFile with a buffer", () => {
  it("writes the same bytes as an unbuffered output for 500 random pieces", () => {
    const expected: number[] = [];
    const path = join(root, "random.bin");
    let x = 5;
    const next = () => (x = (x * 48271) % 2147483647);
    withOutputs((open) => {
      const out = open(path, { bufferSize: 1000 });
      for (let i = 0; i < 500; i++) {
        const kind = next() % 3;
        const length = kind === 0 ? next() % 2500 : next() % 200;
        const piece = Uint8Array.from({ length }, () => next() & 0xff);
        if (kind === 1) {
          const room = out.reserve(length);
          if (room === undefined) out.write(piece);
          else {
            room.set(piece);
            out.advance(length);
          }
        } else out.write(piece);
        expected.push(...piece);
        expect(out.position).toBe(expected.length);
      }
      expect(out.reserve(1001)).toBeUndefined();
      // Not on disk yet: outputs appear only when the group succeeds.
      expect(existsSync(path)).toBe(false);
    });
    // Compared as one Buffer: a mismatch reports its first differing offset, not a 250 KB diff.
    const written = readFileSync(path);
    const want = Buffer.from(expected);
    const firstDifference = written.findIndex((b, i) => b !== want[i]);
    expect({ length: written.length, firstDifference }).toEqual({ length: want.length, firstDifference: -1 });
  });

  it("writes pending bytes before a piece larger than the buffer", () => {
    const path = join(root, "large.bin");
    withOutputs((open) => {
      const out = open(path, { bufferSize: 10 });
      out.write(new Uint8Array(3).fill(1));
      out.write(new Uint8Array(20).fill(2));
      out.write(new Uint8Array(2).fill(3));
    });
    expect([...readFileSync(path)]).toEqual([1, 1, 1, ...new Array(20).fill(2), 3, 3]);
  });

  it("flushes before writeAt and before close", () => {
    const path = join(root, "patched.bin");
    withOutputs((open) => {
      const out = open(path, { bufferSize: 64 });
      out.write(new Uint8Array([1, 2, 3, 4]));
      out.writeAt(new Uint8Array([9]), 1);
      out.write(new Uint8Array([5]));
      out.close();
    });
    expect([...readFileSync(path)]).toEqual([1, 9, 3, 4, 5]);
  });

  it("discards buffered bytes with the output when the group fails", () => {
    const path = join(root, "failed.bin");
    expect(() =>
      withOutputs((open) => {
        open(path, { bufferSize: 64 }).write(new Uint8Array([1, 2, 3]));
        throw new Error("stop");
      }),
    ).toThrow("stop");
    expect(existsSync(path)).toBe(false);
  });

  it("has no buffer unless asked", () => {
    const out = new OutputFile(join(root, "plain.bin"));
    expect(out.reserve(1)).toBeUndefined();
    out.discard();
  });
});
