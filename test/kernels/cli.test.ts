/**
 * `offload-kit kernels` and `offload-kit diff` end to end, in-process: on clang-19 builds of one source at -O1
 * and -O3, and with one kernel more; on librocrand and a copy pruned by `offload-kit prune`; the filters, the
 * --json shapes the issue states, and diff(1)'s exit statuses.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { captureIO, scratchDir } from "../cli/harness.js";
import { hasNative } from "../native.js";
import { HANG_MS } from "../limits.js";
import { TEST_KERNELS, buildHip } from "./native-notes.js";
import { kernelJson } from "../../src/cli/kit/kernels.js";
import { collectKernels } from "../../src/kernels/collect.js";
import { withCcobPrefetch } from "../../src/compress/node/decompress.js";
import { codecDecompressor } from "../../src/compress/node/packager-codecs.js";
import { withFile } from "../../src/node/file-source.js";
import { bash, ours } from "../process/helpers.js";

const LIBROCRAND = "/usr/lib/x86_64-linux-gnu/librocrand.so.1.1";

async function kit(cwd: string, ...args: string[]) {
  const { io, result } = captureIO(cwd);
  const code = await runOffloadKit("offload-kit", args, io);
  const { stdout, stderr } = result();
  return { code, stdout: stdout.toString("utf8"), stderr };
}

describe("offload-kit kernels / diff: usage", () => {
  it("refuses bad options with status 2", async () => {
    const dir = scratchDir("kernels-usage-");
    expect((await kit(dir, "kernels")).code).toBe(2);
    expect((await kit(dir, "kernels", "x", "--sort=regs")).code).toBe(2);
    expect((await kit(dir, "kernels", "x", "--top=-1")).code).toBe(2);
    expect((await kit(dir, "kernels", "x", "--gpu=gfx90a:fast+")).code).toBe(2);
    expect((await kit(dir, "diff", "a")).code).toBe(2);
    expect((await kit(dir, "diff", "a", "b", "--fail-on-growth=lots")).code).toBe(2);
  });

  it("an input that cannot be read: kernels 1, diff 2 (trouble)", async () => {
    const dir = scratchDir("kernels-missing-");
    writeFileSync(join(dir, "plain.txt"), "no device code here\n");
    const k = await kit(dir, "kernels", join(dir, "missing.o"));
    expect(k.code).toBe(1);
    expect((await kit(dir, "diff", join(dir, "missing.o"), join(dir, "plain.txt"))).code).toBe(2);
    const none = await kit(dir, "kernels", join(dir, "plain.txt"));
    expect(none.code).toBe(0);
    expect(none.stdout).toContain("no AMDGPU code objects or NVIDIA cubins found");
  });
});

describe.skipIf(!hasNative("clang-19"))("offload-kit kernels / diff on clang-19 builds", () => {
  it("lists, filters, sorts and prints JSON with each kernel's whole metadata", async () => {
    const dir = scratchDir("kernels-cli-");
    const bundle = buildHip(dir, "k", TEST_KERNELS, ["gfx90a", "gfx1100"], ["-O2"]);
    const all = await kit(dir, "kernels", bundle);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toContain("2 code objects");
    expect(all.stdout).toContain("16 kernels");
    expect(all.stdout).toContain("void fill<float, 256u>(float*, ns::Box<float, 4>, unsigned int)");
    const mangled = await kit(dir, "kernels", bundle, "--mangled", "--gpu=gfx90a");
    expect(mangled.stdout).toContain("_Z4fillIfLj256EEvPT_N2ns3BoxIS0_Li4EEEj");
    expect(mangled.stdout).not.toContain("gfx1100");

    const json = JSON.parse((await kit(dir, "kernels", bundle, "--json", "--gpu=gfx90a:xnack+", "--kernel=*pressure*", "--sort=vgprs", "--top=2")).stdout);
    expect(json.codeObjects.length).toBe(1);
    const [object] = json.codeObjects;
    expect(object.id).toBe("hipv4-amdgcn-amd-amdhsa--gfx90a");
    expect(object.kernels.map((k: { demangled: string }) => k.demangled)).toEqual([
      "void pressure<180>(float*, float const*)", "void pressure<100>(float*, float const*)",
    ]);
    const [heaviest] = object.kernels;
    expect(heaviest.vgprs).toBeGreaterThan(object.kernels[1].vgprs);
    expect(heaviest.metadata[".vgpr_count"]).toBe(heaviest.vgprs);
    expect(heaviest.metadata[".name"]).toBe(heaviest.name);
    expect(Array.isArray(heaviest.metadata[".args"])).toBe(true);
    expect(heaviest.codeSize).toBeGreaterThan(0);
    expect(heaviest.occupancy.waves).toBeLessThan(8);

    const byLds = JSON.parse((await kit(dir, "kernels", bundle, "--json", "--sort=lds", "--top=1")).stdout);
    expect(byLds.codeObjects[0].kernels[0].demangled).toBe("void fill<double, 4096u>(double*, ns::Box<double, 4>, unsigned int)");
    expect(byLds.codeObjects[0].kernels[0].lds).toBe(32768);

    // A folder (files without device code skipped) and a tar package (members named file!member).
    const folder = join(dir, "tree");
    mkdirSync(join(folder, "sub"), { recursive: true });
    copyFileSync(bundle, join(folder, "sub", "k.o"));
    writeFileSync(join(folder, "readme.txt"), "text\n");
    const walked = await kit(dir, "kernels", folder, "--json");
    expect(walked.code, walked.stderr).toBe(0);
    const walkedJson = JSON.parse(walked.stdout);
    expect(walkedJson.codeObjects.map((c: { file: string }) => c.file)).toEqual([join(folder, "sub", "k.o"), join(folder, "sub", "k.o")]);
    expect(walkedJson.skipped).toEqual([join(folder, "readme.txt")]);
    const tar = spawnSync("tar", ["-cf", join(dir, "pkg.tar"), "-C", folder, "sub/k.o", "readme.txt"]);
    expect(tar.status).toBe(0);
    const packaged = JSON.parse((await kit(dir, "kernels", join(dir, "pkg.tar"), "--json", "--gpu=gfx1100")).stdout);
    expect(packaged.codeObjects.map((c: { file: string; kernels: unknown[] }) => [c.file, c.kernels.length])).toEqual([[`${join(dir, "pkg.tar")}!sub/k.o`, 8]]);
  }, HANG_MS);

  it("diff: -O1 against -O3, one kernel added, the same build twice", async () => {
    const dir = scratchDir("kernels-diff-");
    const o1 = buildHip(dir, "o1", TEST_KERNELS, ["gfx90a", "gfx1100"], ["-O1"]);
    const o3 = buildHip(dir, "o3", TEST_KERNELS, ["gfx90a", "gfx1100"], ["-O3"]);
    const plus = buildHip(dir, "plus", `${TEST_KERNELS}\n__global__ void extra(int *x) { x[1] = 2; }\n`, ["gfx90a", "gfx1100"], ["-O3"]);

    const same = await kit(dir, "diff", o3, o3);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain("0 changed, 0 added, 0 removed, 2 unchanged");

    const opt = JSON.parse((await kit(dir, "diff", o1, o3, "--json")).stdout);
    expect(opt.different).toBe(true);
    expect(opt.targets.map((t: { id: string; status: string }) => [t.id, t.status])).toEqual([
      ["hipv4-amdgcn-amd-amdhsa--gfx1100", "changed"], ["hipv4-amdgcn-amd-amdhsa--gfx90a", "changed"],
    ]);
    const changed = opt.targets.flatMap((t: { kernels: { changed: { name: string }[] } }) => t.kernels.changed);
    expect(changed.length).toBeGreaterThan(0);
    for (const k of changed) {
      const keys = Object.keys(k).filter((key) => key !== "name");
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) expect(k[key as keyof typeof k]).toHaveProperty("before");
    }
    expect((await kit(dir, "diff", o1, o3)).code).toBe(1);

    const added = await kit(dir, "diff", o3, plus, "--json");
    expect(added.code).toBe(1);
    const shape = JSON.parse(added.stdout);
    for (const t of shape.targets) {
      expect(t.kernels.added).toEqual(["_Z5extraPi"]);
      expect(t.kernels.removed).toEqual([]);
      expect(t.after).toBeGreaterThan(t.before);
    }
    expect(shape.totals.kernels).toEqual({ added: 2, removed: 0, changed: 0 });
    const text = await kit(dir, "diff", o3, plus);
    expect(text.stdout).toContain("+ extra(int*)");
    // The growth gate: 1 only past the limit.
    const growth = shape.totals.growthPercent as number;
    expect((await kit(dir, "diff", o3, plus, `--fail-on-growth=${Math.ceil(growth) + 1}`)).code).toBe(0);
    expect((await kit(dir, "diff", o3, plus, `--fail-on-growth=${Math.floor(growth) - 1}`)).code).toBe(1);
    // Reversed: the kernel is removed.
    const removed = JSON.parse((await kit(dir, "diff", plus, o3, "--json")).stdout);
    expect(removed.targets[0].kernels.removed).toEqual(["_Z5extraPi"]);
  }, HANG_MS);
});

describe.skipIf(!["clang-19", "clang-offload-packager-19", "clang-offload-bundler-19"].every(hasNative))("offload-kit kernels: every container", () => {
  it("a standalone code object, a compressed bundle (CCOB) and an offload binary give the same kernels", async () => {
    const dir = scratchDir("kernels-containers-");
    const hsaco = buildHip(dir, "one", TEST_KERNELS, ["gfx90a"], ["-O2", "--no-gpu-bundle-output"]);
    const ccob = join(dir, "k.ccob");
    const packed = join(dir, "k.out");
    writeFileSync(join(dir, "empty"), "");
    const bundler = spawnSync("clang-offload-bundler-19", ["-type=o", "-targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx90a",
      `-input=${join(dir, "empty")}`, `-input=${hsaco}`, `-output=${ccob}`, "-compress"], { encoding: "utf8" });
    expect(bundler.status, bundler.stderr).toBe(0);
    const packager = spawnSync("clang-offload-packager-19", ["-o", packed, `--image=file=${hsaco},triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip`], { encoding: "utf8" });
    expect(packager.status, packager.stderr).toBe(0);
    const lists = [];
    for (const file of [hsaco, ccob, packed]) {
      const json = JSON.parse((await kit(dir, "kernels", file, "--json")).stdout);
      expect(json.codeObjects.length, file).toBe(1);
      lists.push(json.codeObjects[0].kernels.map((k: { name: string; vgprs: number; codeSize: number }) => [k.name, k.vgprs, k.codeSize]));
    }
    expect(lists[0]!.length).toBe(8);
    expect(lists[1]).toEqual(lists[0]);
    expect(lists[2]).toEqual(lists[0]);
    const ccobJson = JSON.parse((await kit(dir, "kernels", ccob, "--json")).stdout);
    expect(ccobJson.codeObjects[0].compressedAt).toBe(0);
    const packedJson = JSON.parse((await kit(dir, "kernels", packed, "--json")).stdout);
    expect(packedJson.codeObjects[0]).toMatchObject({ id: "hip-amdgcn-amd-amdhsa--gfx90a", image: 0 });
  }, HANG_MS);
});

describe.skipIf(!existsSync(LIBROCRAND))("offload-kit kernels / diff on librocrand", () => {
  it("kernels of the library; diff against a copy pruned to gfx90a", async () => {
    const dir = scratchDir("kernels-rocrand-cli-");
    const listed = JSON.parse((await kit(dir, "kernels", LIBROCRAND, "--json")).stdout);
    expect(listed.codeObjects.length).toBe(7);
    expect(listed.codeObjects.reduce((n: number, c: { kernels: unknown[] }) => n + c.kernels.length, 0)).toBe(560);
    const copy = join(dir, "librocrand.so.1.1");
    copyFileSync(LIBROCRAND, copy);
    const pruned = join(dir, "pruned.so");
    const prune = await kit(dir, "prune", copy, "--keep=gfx90a", "-o", pruned);
    expect(prune.code, prune.stderr).toBe(0);
    const diff = JSON.parse((await kit(dir, "diff", LIBROCRAND, pruned, "--json")).stdout);
    const status = Object.fromEntries(diff.targets.map((t: { id: string; status: string }) => [t.id.split("--")[1], t.status]));
    expect(status).toEqual({
      gfx1030: "removed", gfx803: "removed", "gfx900:xnack-": "removed", "gfx906:xnack-": "removed", "gfx908:xnack-": "removed",
      "gfx90a:xnack+": "unchanged", "gfx90a:xnack-": "unchanged",
    });
    expect(diff.totals.kernels.removed).toBe(400);
    expect((await kit(dir, "diff", LIBROCRAND, pruned)).code).toBe(1);
  }, HANG_MS);
});

describe.skipIf(!existsSync(LIBROCRAND))("kernels --json streamed", () => {
  it("writes each code object as it is read, with the content the object route gives (metadata maps transcoded)", async () => {
    const dir = scratchDir("kernels-stream-");
    const { io, result } = captureIO(dir);
    let writes = 0;
    const counted = { ...io, stdout: (text: string | Uint8Array) => (writes++, io.stdout(text)) };
    expect(await runOffloadKit("offload-kit", ["kernels", "--json", LIBROCRAND], counted)).toBe(0);
    const streamed = JSON.parse(result().stdout.toString("utf8"));
    // Written a code object at a time (and more often inside a large one), not in one piece at the end.
    expect(writes).toBeGreaterThanOrEqual(8);
    const found = withFile(LIBROCRAND, (s) => withCcobPrefetch({}, (hooks) => collectKernels(s, { ...hooks, decompressOffload: codecDecompressor() })));
    expect(streamed.codeObjects.length).toBe(found.codeObjects.length);
    found.codeObjects.forEach((c, i) => {
      const ours = streamed.codeObjects[i];
      expect(ours.id).toBe(c.id);
      expect(ours.kernels.length).toBe(c.kernels.length);
      c.kernels.forEach((k, j) => expect(ours.kernels[j], `${c.id} ${k.name}`).toEqual(JSON.parse(JSON.stringify(kernelJson(k)))));
    });
  }, HANG_MS);

  it("--sort and --top keep their rows across code objects; a closed pipe ends the run quietly", async () => {
    const dir = scratchDir("kernels-top-");
    const all = JSON.parse((await kit(dir, "kernels", "--json", LIBROCRAND)).stdout);
    const rows = all.codeObjects.flatMap((c: { id: string; kernels: { name: string; vgprs: number }[] }) => c.kernels.map((k) => ({ id: c.id, name: k.name, vgprs: k.vgprs })));
    const sorted = [...rows].sort((a, b) => b.vgprs - a.vgprs).slice(0, 25);
    const top = JSON.parse((await kit(dir, "kernels", "--json", "--sort=vgprs", "--top=25", LIBROCRAND)).stdout);
    const listed = top.codeObjects.flatMap((c: { id: string; kernels: { name: string; vgprs: number }[] }) => c.kernels.map((k) => ({ id: c.id, name: k.name, vgprs: k.vgprs })));
    expect(listed.map((r: { vgprs: number }) => r.vgprs).sort((a: number, b: number) => b - a)).toEqual(sorted.map((r) => r.vgprs));
    expect(new Set(listed.map((r: { id: string; name: string }) => `${r.id} ${r.name}`))).toEqual(new Set(sorted.map((r) => `${r.id} ${r.name}`)));
    const run = bash(`{ ${ours("offload-kit")} kernels --json ${LIBROCRAND} 2> err.txt; } | head -c 100 > /dev/null; echo "status=\${PIPESTATUS[0]}"; cat err.txt`, dir);
    expect(run.stdout.toString("utf8")).toBe("status=141\n");
  }, HANG_MS);
});

describe("diff of kpack'd trees", () => {
  it("two folders: an archive gone is a removed target ID with its kernels; the same tree is unchanged", async () => {
    const dir = scratchDir("kernels-kpack-diff-");
    const stage = join(import.meta.dirname, "../fixtures/kpack/tree/stage");
    const a = join(dir, "a");
    const b = join(dir, "b");
    expect(spawnSync("cp", ["-a", stage, a]).status).toBe(0);
    expect(spawnSync("cp", ["-a", stage, b]).status).toBe(0);
    expect((await kit(dir, "diff", a, b)).code).toBe(0);
    rmSync(join(b, ".kpack", "test_lib_gfx1100.kpack"));
    const run = await kit(dir, "diff", a, b, "--json");
    expect(run.code).toBe(1);
    const diff = JSON.parse(run.stdout);
    const status = Object.fromEntries(diff.targets.map((t: { id: string; status: string }) => [t.id.split("--")[1], t.status]));
    expect(status).toEqual({ gfx1100: "removed", gfx906: "unchanged", gfx90a: "unchanged", "gfx90a:xnack-": "unchanged" });
    const removed = diff.targets.find((t: { id: string }) => t.id.endsWith("gfx1100"));
    expect(removed.kernels.removed.length).toBe(1);
  }, HANG_MS);
});

