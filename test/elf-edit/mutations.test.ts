// Mutated executables (bytes of the ELF header, program and section headers, wrappers and bundle headers
// flipped at random, seeded): the rewrite either succeeds with an output that opens again, or throws an
// OffloadKitError; nothing else (no RangeError from a view, no hang).
import { describe, expect, it } from "vitest";
import { isOffloadKitError } from "../../src/engine/errors.js";
import { bytesSource } from "../../src/engine/source.js";
import { keepBundleEntries } from "../../src/elf-edit/compose.js";
import { openLinkedElf } from "../../src/elf-edit/elf64.js";
import { rewriteHipFatbin } from "../../src/elf-edit/rewrite.js";
import { syntheticExecutable } from "./synthetic.js";
import { HANG_MS } from "../limits.js";

function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

describe("mutated inputs", () => {
  const input = syntheticExecutable([[9000, 9000, 9000], [3000, 5000, 7000]]);
  const shoff = Number(new DataView(input.bytes.buffer).getBigUint64(40, true));
  // The structural bytes: ELF and program headers, the first bundle's header, the wrappers, the section table.
  const regions: [number, number][] = [
    [0, 64 + 2 * 56],
    [input.fatbinOffset, input.fatbinOffset + 200],
    [input.wrapperOffset, input.wrapperOffset + 48],
    [shoff, input.bytes.length],
  ];

  it("only ever throws OffloadKitError", () => {
    const next = random(Number(process.env.SEED ?? 17));
    let refused = 0;
    for (let round = 0; round < Number(process.env.ROUNDS ?? 600); round++) {
      const bytes = input.bytes.slice();
      const flips = 1 + Math.floor(next() * 4);
      for (let f = 0; f < flips; f++) {
        const [from, to] = regions[Math.floor(next() * regions.length)];
        const at = from + Math.floor(next() * (to - from));
        bytes[at] = next() < 0.5 ? bytes[at] ^ (1 << Math.floor(next() * 8)) : Math.floor(next() * 256);
      }
      const parts: Uint8Array[] = [];
      try {
        rewriteHipFatbin(bytesSource(bytes), { write: (b) => parts.push(b.slice()) }, {
          bundles: (b) => (b.format === "bundle" ? keepBundleEntries(b.source, (id) => !id.endsWith("gfx906")) : undefined),
        });
      } catch (e) {
        if (!isOffloadKitError(e)) throw new Error(`round ${round}: ${String(e)}`, { cause: e });
        refused++;
        continue;
      }
      openLinkedElf(bytesSource(Buffer.concat(parts)));
    }
    expect(refused).toBeGreaterThan(0);
  }, HANG_MS);
});
