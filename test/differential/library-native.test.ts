// End to end on a real ROCm library, when it is installed (Debian: apt-get install librocsparse0; not a CI
// requirement, so this skips where it is absent even under OFFLOAD_KIT_REQUIRE_NATIVE): `offload-kit extract`
// writes every entry of every bundle in the library's .hip_fatbin, and each must be byte-identical to what
// clang-offload-bundler-19 writes when the bundle is carved out of the library and unbundled on its own.
// Outputs are compared by SHA-256 and removed as soon as they are hashed (the library is 1.3 GB).
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { locate } from "../../src/inspect/locate.js";
import { extractFile } from "../../src/inspect/node/extract.js";
import { withFile } from "../../src/node/file-source.js";
import { hasNative, runNative } from "../native.js";
import { HANG_MS } from "../limits.js";

const LIBRARY = process.env.OFFLOAD_KIT_LIBRARY ?? "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1";
const present = existsSync(LIBRARY);
const scratch = () => mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "offload-kit-library-"));

function carve(path: string, offset: number, size: number, to: string): void {
  const bytes = new Uint8Array(size);
  const fd = openSync(path, "r");
  try {
    for (let done = 0; done < size;) done += readSync(fd, bytes, done, size - done, offset + done);
  } finally {
    closeSync(fd);
  }
  writeFileSync(to, bytes);
}

describe.skipIf(!present)(`extraction from ${LIBRARY}`, () => {
  it.skipIf(!present || !hasNative("clang-offload-bundler-19"))("is byte-identical to clang-offload-bundler-19 unbundling each carved bundle", () => {
    const dir = scratch();
    try {
      const ours = extractFile(LIBRARY, { outDir: join(dir, "ours"), hash: true });
      rmSync(join(dir, "ours"), { recursive: true, force: true });
      const location = withFile(LIBRARY, (source) => locate(source));
      expect(location.problems).toEqual([]);
      expect(ours.outputs).toHaveLength(location.bundles.reduce((n, b) => n + b.entries.length, 0));
      let compared = 0;
      for (const bundle of location.bundles) {
        const carved = join(dir, "bundle");
        carve(LIBRARY, bundle.offset, bundle.size, carved);
        const listed = runNative("clang-offload-bundler-19", ["-type=bc", "-list", `-input=${carved}`]);
        expect(listed.status, listed.stderr).toBe(0);
        // The host entry is stored as host-x86_64-unknown-linux (three fields, by an older LLVM): 19 lists it as
        // host-x86_64-unknown-linux-- and finds it under no name (every request is normalised to four fields),
        // so only the device entries are compared; the host entries are empty, checked below.
        const ids = listed.stdout.toString("latin1").trim().split("\n").filter((id) => !id.startsWith("host-"));
        const outputs = ids.map((_, i) => join(dir, `native-${i}`));
        const run = runNative("clang-offload-bundler-19", ["-type=bc", "-unbundle", `-input=${carved}`, `-targets=${ids.join(",")}`, ...outputs.map((o) => `-output=${o}`)]);
        expect(run.status, run.stderr).toBe(0);
        ids.forEach((id, i) => {
          const mine = ours.outputs.find((o) => o.bundle === bundle.index && o.id === id);
          expect(mine?.sha256, `bundle ${bundle.index} ${id}`).toBe(createHash("sha256").update(readFileSync(outputs[i]!)).digest("hex"));
          compared++;
        });
        for (const o of outputs) rmSync(o);
      }
      const hosts = ours.outputs.filter((o) => o.id.startsWith("host-"));
      expect(hosts.map((o) => o.size)).toEqual(location.bundles.map(() => 0));
      expect(compared + hosts.length).toBe(ours.outputs.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, HANG_MS);
});
