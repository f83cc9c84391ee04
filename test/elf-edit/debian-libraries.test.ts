// Debian's ROCm libraries (librocrand1, librocsparse0: 1.3 GB, 111 fat binaries) rewritten keeping only
// gfx90a's entries: the stand-in HIP runtime sees the same fat binaries with exactly those entries,
// byte-identical, `nm -D` is unchanged and nearly all of the dropped bytes leave the file. Skips where
// a library is not installed, except under OFFLOAD_KIT_REQUIRE_NATIVE=1 (.ci/run installs them).
import { existsSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keepBundleEntries } from "../../src/elf-edit/compose.js";
import { rewriteHipFatbinFile } from "../../src/elf-edit/node.js";
import { readBinaryBundle } from "../../src/formats/bundle.js";
import { Workshop, keepEntries, run, standinTools } from "./standin.js";
import { HANG_MS } from "../limits.js";

const LIBRARIES = ["/usr/lib/x86_64-linux-gnu/librocrand.so.1.1", "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1"];
const required = process.env.OFFLOAD_KIT_REQUIRE_NATIVE === "1";
const tools = standinTools();
const keep = (id: string): boolean => id.startsWith("host-") || /--gfx90a(:|$)/.test(id);

describe.skipIf(!tools)("Debian ROCm libraries, pruned to gfx90a, register the same device code", () => {
  let shop: Workshop;
  beforeAll(() => {
    shop = new Workshop();
  }, HANG_MS);
  afterAll(() => shop?.remove());

  it.each(LIBRARIES)("%s", (library) => {
    if (!existsSync(library)) {
      if (required) throw new Error(`${library} is required (OFFLOAD_KIT_REQUIRE_NATIVE=1)`);
      return;
    }
    const output = join(existsSync("/dev/shm") ? "/dev/shm" : shop.dir, `offload-kit-${process.pid}-pruned.so`);
    try {
      let dropped = 0;
      const plan = rewriteHipFatbinFile(library, output, {
        bundles: (b) => {
          const read = readBinaryBundle(b.source);
          if (read.kind === "bundle") for (const e of read.bundle.entries) if (!keep(e.id)) dropped += e.size;
          return b.format === "bundle" ? keepBundleEntries(b.source, keep) : undefined;
        },
      });
      expect(statSync(output).size).toBe(plan.outputSize);
      // Page rounding, the 4096-byte payload alignment and the grown program header table's page cost a
      // little; at least 95% must go.
      expect(plan.inputSize - plan.outputSize).toBeGreaterThanOrEqual(0.95 * dropped);
      const before = shop.registrations(library, false);
      const after = shop.registrations(output, false);
      expect(after.match(/^fatbin /gm)?.length).toBe(before.match(/^fatbin /gm)?.length);
      expect(after).toBe(keepEntries(before, keep));
      expect(run("nm", ["-D", output]).stdout).toBe(run("nm", ["-D", library]).stdout);
    } finally {
      rmSync(output, { force: true });
    }
  }, HANG_MS);
});
