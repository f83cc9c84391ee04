// prune of rocm-kpack archives (test/fixtures/kpack): dropped GPUs' code objects leave, the rest stay byte for
// byte (zstd frames not re-encoded), gfx_arches follows, and the host then fails check for the dropped GPU only.
import { cpSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
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

  it("a folder: archives left with nothing go whole, the rest lose the dropped GPUs' entries, the hosts stay valid", async () => {
    for (const how of ["in-place", "out-dir", "dry-run"]) {
      cpSync(join(FIXTURES, "kpack/tree"), join(dir, how), { recursive: true });
      const flag = how === "out-dir" ? "--out-dir=mirror" : `--${how}`;
      if (how === "out-dir") mkdirSync(join(dir, "mirror"));
      const run = await kit("prune", "--keep=gfx90a", "--keep=gfx1100", flag, `${how}/stage`);
      expect(run.code, run.stderr).toBe(0);
      const out = run.stdout.toString();
      const stage = how === "out-dir" ? "mirror/stage" : `${how}/stage`;
      const listing = readdirSync(join(dir, stage, ".kpack")).sort();
      if (how === "dry-run") {
        expect(out).toContain(`would remove ${how}/stage/.kpack/test_lib_gfx906.kpack (no code object left)`);
        expect(listing).toHaveLength(4);
        continue;
      }
      expect(out).toContain(`removed ${how}/stage/.kpack/test_lib_gfx906.kpack (no code object left)`);
      expect(out).toContain("1 file removed (all its code for dropped GPUs)");
      expect(listing).toEqual(["test_lib_gfx1100.kpack", "test_lib_gfx90a.kpack", "test_lib_gfx90a:xnack-.kpack"]);
      for (const name of listing) expect(readFileSync(join(dir, stage, ".kpack", name)).equals(readFileSync(join(FIXTURES, "kpack/tree/stage/.kpack", name))), name).toBe(true);
      // The hosts are as they were; the kept GPUs still find their code objects, the dropped one none.
      expect(readFileSync(join(dir, stage, "bin/app")).equals(readFileSync(join(FIXTURES, "kpack/tree/stage/bin/app")))).toBe(true);
      expect((await kit("check", "--gpu=gfx90a:sramecc+", `${stage}/bin/app`)).code).toBe(0);
      expect((await kit("check", "--gpu=gfx1100", `${stage}/lib/libk.so`)).code).toBe(0);
      expect((await kit("check", "--gpu=gfx906", `${stage}/bin/app`)).code).toBe(1);
    }
  });
  it("a folder of zstd-per-kernel archives: seen through the codecs, the dropped GPU's archive goes, the host stays valid", async () => {
    cpSync(join(FIXTURES, "kpack/zstd"), join(dir, "zstd"), { recursive: true });
    const run = await kit("prune", "--keep=gfx90a", "--in-place", "zstd/stage");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.toString()).toContain("removed zstd/stage/.kpack/test_lib_gfx906.kpack (no code object left)");
    expect(readdirSync(join(dir, "zstd/stage/.kpack"))).toEqual(["test_lib_gfx90a.kpack"]);
    const kept = readKpackArchive(bytesSource(read(join(dir, "zstd/stage/.kpack/test_lib_gfx90a.kpack"))));
    expect(kept.compression).toBe(readKpackArchive(bytesSource(read(join(FIXTURES, "kpack/zstd/stage/.kpack/test_lib_gfx90a.kpack")))).compression);
    expect((await kit("check", "--gpu=gfx90a", "zstd/stage/bin/app")).code).toBe(0);
    expect((await kit("check", "--gpu=gfx906", "zstd/stage/bin/app")).code).toBe(1);
  });
});
