// The decoder programs' output (src/packages/node/io.ts): read into one reused buffer, each chunk valid
// until the next is asked for. A consumer that lets the event loop run while it holds a chunk (timers,
// I/O) must still see every byte as the program wrote it, including when the program exits meanwhile.
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { nodeDecoders } from "../../src/packages/node/io.js";
import { haveTools, tool } from "./build.js";
import { HANG_MS } from "../limits.js";

function data(size: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = 12345;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    // Compressible, but not trivially: runs of a few values.
    out[i] = (x >>> 24) & 0x0f;
  }
  return out;
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

describe("decoder program output", () => {
  it.each([
    ["xz (threads, several blocks)", "xz", ["-c", "-T2", "--block-size=1MiB"]],
    ["bzip2", "bzip2", ["-c"]],
  ])("%s: a slow consumer that holds each chunk across timers gets every byte", async (_label, program, args) => {
    if (!haveTools(program)) return;
    const plain = data(6 * 1024 * 1024);
    const packed = tool(program, args, { input: plain })!;
    const hash = createHash("sha256");
    let chunks = 0;
    for await (const chunk of nodeDecoders().decode(program === "xz" ? "xz" : "bzip2", once(packed))) {
      const before = createHash("sha256").update(chunk).digest("hex");
      // The program may finish and exit while this chunk is held.
      await sleep(chunks++ % 8 === 0 ? 20 : 0);
      expect(createHash("sha256").update(chunk).digest("hex")).toBe(before);
      hash.update(chunk);
    }
    expect(hash.digest("hex")).toBe(createHash("sha256").update(plain).digest("hex"));
    expect(chunks).toBeGreaterThan(1);
  }, HANG_MS);
});
