// offload-kit ls, sizes, check and extract on rocm-kpack's output (test/fixtures/kpack): a kpack'd host reports the
// code objects the runtime would find, each naming its .kpack file; the stale bundle left in .hip_fatbin's partial
// page is never reported; .kpack archives are inputs of their own, in folders and packages.
import { cpSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { runInDir, scratchDir } from "../cli/harness.js";
import { hasNative, runNative } from "../native.js";

const FIXTURES = join(import.meta.dirname, "../fixtures");

describe("offload-kit on kpack'd trees", () => {
  const dir = scratchDir("offload-kit-kpack-");
  const kit = (...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
  const sha256 = (path: string) => createHash("sha256").update(readFileSync(join(dir, path))).digest("hex");
  const expected = new Map<string, string>();

  beforeAll(() => {
    cpSync(join(FIXTURES, "kpack/tree"), join(dir, "tree"), { recursive: true });
    cpSync(join(FIXTURES, "kpack/zstd"), join(dir, "zstd"), { recursive: true });
    // The same tree without its archives: what a host-only install looks like.
    cpSync(join(FIXTURES, "kpack/tree/stage/bin"), join(dir, "bare/stage/bin"), { recursive: true });
    for (const line of readFileSync(join(FIXTURES, "hosts/expected.tsv"), "utf8").trim().split("\n")) {
      const [file, index, id, , hash] = line.split("\t");
      if (file === "app") expected.set(`${index}-${id}`, hash!);
    }
  });

  it("ls: each HIPK wrapper with the code objects its key finds, each naming its archive; no stale bundle", async () => {
    const run = await kit("ls", "-v", "tree/stage/bin/app");
    expect(run.code).toBe(0);
    const text = run.stdout.toString();
    for (const i of [0, 1, 2]) {
      expect(text).toContain(`tree/stage/bin/app: HIPK wrapper ${i} (co_index ${i}), key 'stage/bin/app#${i}', code objects from 2 archives`);
    }
    expect(text).toContain("hipv4-amdgcn-amd-amdhsa--gfx906  (in tree/stage/.kpack/test_lib_gfx906.kpack as gfx906)");
    expect(text).toContain("hipv4-amdgcn-amd-amdhsa--gfx90a  (in tree/stage/.kpack/test_lib_gfx90a.kpack as gfx90a)");
    // .hip_fatbin's last partial page still holds the CCOB of c.hip; nothing of it is reported.
    const bytes = readFileSync(join(dir, "tree/stage/bin/app"));
    expect(bytes.indexOf(Buffer.from("CCOB"))).toBeGreaterThan(0);
    expect(text).not.toContain("compressed bundle");
    expect(text.match(/ entries, in section /g)?.length).toBe(3);

    const json = JSON.parse((await kit("ls", "--json", "tree/stage/lib/libk.so")).stdout.toString());
    expect(json.files[0].bundles).toEqual([expect.objectContaining({
      format: "kpack", section: ".hipFatBinSegment",
      kpack: expect.objectContaining({ key: "stage/lib/libk.so#0", wrapper: expect.objectContaining({ index: 0, coIndex: 0, searchPaths: ["../.kpack/test_lib_@GFXARCH@.kpack"] }) }),
      entries: [
        expect.objectContaining({ id: "hipv4-amdgcn-amd-amdhsa--gfx1100", kpack: expect.objectContaining({ archive: "tree/stage/.kpack/test_lib_gfx1100.kpack", arch: "gfx1100", compression: "none" }) }),
        expect.objectContaining({ id: "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", kpack: expect.objectContaining({ archive: "tree/stage/.kpack/test_lib_gfx90a:xnack-.kpack" }) }),
      ],
    })]);
  });

  it("ls of a .kpack archive: its TOC keys and code objects, zstd frames decoded", async () => {
    const run = await kit("ls", "-v", "zstd/stage/.kpack/test_lib_gfx90a.kpack");
    expect(run.code).toBe(0);
    expect(run.stdout.toString()).toContain("zstd/stage/.kpack/test_lib_gfx90a.kpack: kpack archive key 'stage/bin/app#2' (zstd-per-kernel)");
  });

  it("extract: the code objects are byte for byte what clang-offload-bundler-19 took out of the fat binary", async () => {
    for (const tree of ["tree", "zstd"]) {
      const run = await kit("extract", `--out-dir=${tree}-out`, `${tree}/stage/bin/app`);
      expect(run.code, run.stderr).toBe(0);
      const names = readdirSync(join(dir, `${tree}-out`)).sort();
      expect(names).toEqual([...expected.keys()].filter((k) => !k.includes("host")).map((k) => `app-${k}`).sort());
      for (const name of names) expect(sha256(`${tree}-out/${name}`), name).toBe(expected.get(name.substring(4)));
    }
  });

  it("sizes: what the archives hold for the host; a zstd archive's stored bytes are its frames", async () => {
    const host = JSON.parse((await kit("sizes", "--json", "tree/stage/bin/app")).stdout.toString());
    expect(host.files[0]).toMatchObject({ entries: 6, bytes: 3 * 4064 + 3008 + 3024 + 3032 });
    const zstd = JSON.parse((await kit("sizes", "--json", "zstd/stage/.kpack/test_lib_gfx906.kpack")).stdout.toString());
    const file = zstd.files[0];
    expect(file.bytes).toBe(3008 + 3024 + 3032);
    expect(file.storedBytes).toBeLessThan(file.bytes);
    expect(file.storedBytes).toBeGreaterThan(0);
  });

  it("check: PASS where an archive serves the GPU, FAIL where none does or none is installed", async () => {
    const pass = await kit("check", "--gpu=gfx906", "tree/stage/bin/app");
    expect(pass.code, pass.stdout.toString()).toBe(0);
    expect(pass.stdout.toString()).toContain("kpack'd host");
    const none = await kit("check", "--gpu=gfx1030", "tree/stage/bin/app");
    expect(none.code).toBe(1);
    expect(none.stdout.toString() + none.stderr).toContain("no archive found for key 'stage/bin/app#0'");
    // The runtime's first match for gfx90a:xnack- is libk's archive, without app's keys.
    const shadowed = await kit("check", "--gpu=gfx90a:xnack-", "tree/stage/bin/app");
    expect(shadowed.code).toBe(1);
    expect(shadowed.stdout.toString() + shadowed.stderr).toContain("the archive serving this GPU has no such key");
    expect((await kit("check", "--gpu=gfx90a:xnack-", "tree/stage/lib/libk.so")).code).toBe(0);
    const bare = await kit("check", "--gpu=gfx906", "bare/stage/bin/app");
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain("HIPK wrapper 0: no archive found for key 'stage/bin/app#0' (search paths: ../.kpack/test_lib_@GFXARCH@.kpack)");
  });

  it("folders and packages: archives and hosts are offload files", async () => {
    const run = await kit("ls", "-v", "tree");
    expect(run.stdout.toString()).toContain("in folders: 6 files looked at, 6 with offload code, 0 skipped (no offload code)");
    if (!hasNative("tar")) return;
    const tar = runNative("tar", ["cf", "tree.tar", "tree"], { cwd: dir });
    expect(tar.status, tar.stderr).toBe(0);
    const listed = (await kit("ls", "-v", "tree.tar")).stdout.toString();
    expect(listed).toContain("kpack archive key 'stage/lib/libk.so#0'");
    rmSync(join(dir, "tree.tar"));
  });
});
