// prune of rocm-kpack archives (test/fixtures/kpack): dropped GPUs' code objects leave, the rest stay byte for
// byte (zstd frames not re-encoded), gfx_arches follows, and the host then fails check for the dropped GPU only.
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { nodeCodecs } from "../../src/compress/node/codecs.js";
import { bytesSource } from "../../src/engine/source.js";
import { readKpackArchive } from "../../src/formats/kpack.js";
import { pruneWith } from "../../src/prune/index.js";
import { runInDir, scratchDir } from "../cli/harness.js";

const FIXTURES = join(import.meta.dirname, "../fixtures");
const read = (path: string) => new Uint8Array(readFileSync(path));

describe("prune of .kpack archives", () => {
  const dir = scratchDir("offload-kit-kpack-prune-");
  const kit = (...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));

  beforeAll(() => {
    cpSync(join(FIXTURES, "kpack/tree"), join(dir, "tree"), { recursive: true });
  });

  it("keeps the wanted arches' code objects as they were, in both compression schemes", () => {
    for (const path of ["kpack/runtime/test_noop.kpack", "kpack/runtime/test_zstd.kpack"]) {
      const bytes = read(join(FIXTURES, path));
      const before = readKpackArchive(bytesSource(bytes));
      const dropped = before.gfxArches[1]!;
      const result = pruneWith(bytes, { drop: [dropped], codecs: nodeCodecs, name: path });
      expect(result.container).toBe("kpack archive");
      const after = readKpackArchive(bytesSource(result.output));
      expect(after.gfxArches).toEqual([before.gfxArches[0]]);
      expect(after.compression).toBe(before.compression);
      const stored = (b: Uint8Array, a: typeof before) => a.entries.map((e) => `${e.key}@${e.arch}:${e.originalSize}:${Buffer.from(b.subarray(e.offset, e.offset + e.size)).toString("hex")}`);
      expect(stored(result.output, after)).toEqual(stored(bytes, before).filter((s) => !s.includes(`@${dropped}:`)));
      expect(result.entries.filter((e) => !e.kept).map((e) => e.id)).toEqual(before.entries.filter((e) => e.arch === dropped).map(() => `hipv4-amdgcn-amd-amdhsa--${dropped}`));
    }
  });

  it("an archive for a dropped GPU is left empty, and the host then loads nothing there", async () => {
    const run = await kit("prune", "--drop=gfx906", "--in-place", "tree/stage/.kpack/test_lib_gfx906.kpack", "tree/stage/.kpack/test_lib_gfx90a.kpack");
    expect(run.code, run.stderr).toBe(0);
    expect(readKpackArchive(bytesSource(read(join(dir, "tree/stage/.kpack/test_lib_gfx906.kpack"))))).toMatchObject({ gfxArches: [], entries: [] });
    expect(readFileSync(join(dir, "tree/stage/.kpack/test_lib_gfx90a.kpack")).equals(readFileSync(join(FIXTURES, "kpack/tree/stage/.kpack/test_lib_gfx90a.kpack")))).toBe(true);
    expect((await kit("check", "--gpu=gfx906", "tree/stage/bin/app")).code).toBe(1);
    expect((await kit("check", "--gpu=gfx90a:sramecc+", "tree/stage/bin/app")).code).toBe(0);
  });
});
