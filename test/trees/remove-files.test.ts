// prune --remove-files on a folder laid out as rocBLAS/hipBLASLt ship theirs: standalone code objects (.hsaco,
// Tensile .co) and per-arch TensileLibrary_*.dat files for dropped GPUs are removed, each listed; the kept GPUs'
// files, files of no GPU, and a fat binary that prune edits stay. Without the flag, nothing is removed.
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { hasNative, runNative } from "../native.js";
import { runInDir, scratchDir } from "../cli/harness.js";

describe.runIf(hasNative("clang-19"))("prune --remove-files", () => {
  const dir = scratchDir("offload-kit-remove-files-");
  const kit = (...args: string[]) => runInDir(dir, (io) => runOffloadKit("offload-kit", args, io));
  const FILES = [
    "library/Kernels.so-000-gfx906.hsaco", "library/Kernels.so-000-gfx90a-xnack-.hsaco", "library/TensileLibrary_Type_SS_gfx1030.co",
    "library/TensileLibrary_lazy_gfx906.dat", "library/TensileLibrary_lazy_gfx90a.dat", "library/TensileLibrary_lazy_gfx1030.dat",
    "library/TensileManifest.txt", "README",
  ];

  beforeAll(() => {
    const hip = ["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output", "-nogpulib", "-nogpuinc", "-"];
    const source = new TextEncoder().encode("__attribute__((global)) void k(int *p) { p[0] = 1; }\n");
    mkdirSync(join(dir, "tree/library"), { recursive: true });
    for (const [arch, out] of [["gfx906", FILES[0]], ["gfx90a:xnack-", FILES[1]], ["gfx1030", FILES[2]]] as const) {
      const run = runNative("clang-19", [...hip, `--offload-arch=${arch}`, "-o", `tree/${out}`], { cwd: dir, input: source });
      expect(run.status, run.stderr).toBe(0);
    }
    for (const name of FILES.slice(3)) writeFileSync(join(dir, "tree", name), `${name}\n`);
    cpSync(join(import.meta.dirname, "../../examples/sample/app.hipfb"), join(dir, "tree/app.hipfb"));
  });

  const listing = (root: string) => readdirSync(join(dir, root), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(join(dir, root).length + 1)).sort();

  it("lists in a dry run, removes in place and leaves out of a mirror; only with the flag", async () => {
    for (const how of ["plain", "dry-run", "in-place", "out-dir"]) {
      cpSync(join(dir, "tree"), join(dir, how), { recursive: true });
      const flags = how === "plain" ? ["--in-place"] : how === "out-dir" ? ["--remove-files", "--out-dir=mirror"] : ["--remove-files", `--${how}`];
      if (how === "out-dir") mkdirSync(join(dir, "mirror"));
      const run = await kit("prune", "--keep=gfx90a", ...flags, how);
      expect(run.code, run.stderr).toBe(0);
      const out = run.stdout.toString();
      const root = how === "out-dir" ? `mirror/${how}` : how;
      if (how === "plain") {
        expect(out).not.toContain("remove");
        expect(listing(root)).toEqual(listing("tree"));
        continue;
      }
      const verb = how === "dry-run" ? "would remove" : "removed";
      expect(out).toContain(`${verb} ${how}/library/Kernels.so-000-gfx906.hsaco (standalone code object for gfx906)`);
      expect(out).toContain(`${verb} ${how}/library/TensileLibrary_Type_SS_gfx1030.co (standalone code object for gfx1030)`);
      expect(out).toContain(`${verb} ${how}/library/TensileLibrary_lazy_gfx906.dat (per-architecture library file for gfx906)`);
      expect(out).toContain(`${verb} ${how}/library/TensileLibrary_lazy_gfx1030.dat (per-architecture library file for gfx1030)`);
      expect(out.match(new RegExp(`^  ${verb} `, "gm"))).toHaveLength(4);
      expect(out).toContain(`4 files ${how === "dry-run" ? "would be removed" : "removed"} (all its code for dropped GPUs)`);
      if (how === "dry-run") {
        expect(listing(root)).toEqual(listing("tree"));
        continue;
      }
      expect(listing(root)).toEqual(["README", "app.hipfb", "library/Kernels.so-000-gfx90a-xnack-.hsaco", "library/TensileLibrary_lazy_gfx90a.dat", "library/TensileManifest.txt"]);
      // The fat binary beside them was pruned as usual.
      expect((await kit("check", "--gpu=gfx906", `${root}/app.hipfb`)).code).toBe(1);
      expect(existsSync(join(dir, root, "library/Kernels.so-000-gfx90a-xnack-.hsaco"))).toBe(true);
    }
  });
});
