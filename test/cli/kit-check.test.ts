// offload-kit check: verdicts per entry (the runtime's processor and On/Off/Any feature rules, generic
// and SPIR-V code objects, unstated GPU settings), per input (bundle, archive, fat object, directory),
// the exit status and the JSON shape.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runOffloadKit } from "../../src/cli/offload-kit.js";
import { writeArchive } from "../../src/formats/archive.js";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { latin1Encode } from "../../src/formats/bytes.js";
import { checkEntry, judgeEntries, parseGpu } from "../../src/inspect/check.js";
import { runInDir, scratchDir } from "./harness.js";

const HOST = "host-x86_64-unknown-linux-gnu-";
const G = (id: string) => `hip-amdgcn-amd-amdhsa--${id}`;

const dir = mkdtempSync(join(tmpdir(), "offload-kit-check-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function bundle(ids: string[]): Uint8Array {
  return writeBinaryBundle(ids.map((id) => ({ id, data: latin1Encode(`code for ${id}`) })));
}

writeFileSync(join(dir, "mixed.hipfb"), bundle([HOST, G("gfx90a"), G("gfx90a:xnack+"), G("gfx906"), "openmp-x86_64-unknown-linux-gnu"]));
writeFileSync(join(dir, "old.hipfb"), bundle([HOST, G("gfx906"), G("gfx908")]));
writeFileSync(join(dir, "lib.a"), writeArchive([
  { name: "a.o", data: bundle([HOST, G("gfx90a:xnack-")]), symbols: null },
  { name: "b.o", data: bundle([HOST, G("gfx90a:sramecc+")]), symbols: null },
]));
mkdirSync(join(dir, "tree/sub"), { recursive: true });
writeFileSync(join(dir, "tree/readme.txt"), "not offload code");
writeFileSync(join(dir, "tree/sub/k.hipfb"), bundle([HOST, G("gfx90a:xnack-")]));
writeFileSync(join(dir, "plain.txt"), "nothing here");

async function kit(args: string[]) {
  return runInDir(dir, (io) => runOffloadKit("offload-kit", ["check", ...args], io));
}

describe("check verdicts", () => {
  const gpu = parseGpu("gfx90a:xnack-");

  it.each([
    [G("gfx90a"), "loadable", "any-features"],
    [G("gfx90a:xnack-"), "loadable", "any-features"],
    [G("gfx90a:sramecc+:xnack-"), "unknown", "needs-setting"],
    [G("gfx90a:xnack+"), "not-loadable", "feature-mismatch"],
    [G("gfx906"), "not-loadable", "processor-mismatch"],
    ["hipv4-amdgcn-amd-amdhsa--gfx90a", "loadable", "any-features"],
    ["openmp-x86_64-unknown-linux-gnu", "not-loadable", "not-a-gpu-entry"],
    ["hip-amdgcn-amd-amdhsa--", "not-loadable", "no-target-id"],
    [HOST, "host", undefined],
    ["hip-spirv64-amd-amdhsa--amdgcnspirv", "loadable", "spirv"],
  ])("%s on gfx90a:xnack-: %s", (id, verdict, reason) => {
    const result = checkEntry(id, gpu);
    expect(result.verdict).toBe(verdict);
    expect(result.reason?.code).toBe(reason);
  });

  it("compares every stated feature before an unstated one makes the verdict unknown", () => {
    const xnackOff = parseGpu("gfx90a:xnack-");
    expect(checkEntry(G("gfx90a:sramecc+:xnack+"), xnackOff).reason?.code).toBe("feature-mismatch");
    const bare = checkEntry(G("gfx90a:sramecc+:xnack-"), parseGpu("gfx90a"));
    expect(bare.verdict).toBe("unknown");
    expect(bare.needs).toEqual({ sramecc: true, xnack: false });
    expect(bare.message).toBe("loads only with sramecc on (+) and xnack off (-); --gpu=gfx90a does not say how sramecc and xnack are set");
  });

  it("judges a file over every setting of the unstated features", () => {
    const bare = parseGpu("gfx90a");
    const judge = (ids: string[], gpu = bare) => judgeEntries(ids.map((id) => checkEntry(id, gpu)));
    // Both xnack variants: one loads whichever way xnack is set.
    const both = judge([HOST, G("gfx90a:xnack+"), G("gfx90a:xnack-")]);
    expect(both.ok).toBe(true);
    expect(both.unstated).toEqual(["xnack"]);
    expect(both.cases).toEqual([{ settings: { xnack: false }, loadable: 1 }, { settings: { xnack: true }, loadable: 1 }]);
    // Only xnack+: nothing loads on the usual setting (xnack off unless HSA_XNACK=1).
    expect(judge([G("gfx90a:xnack+")]).cases).toEqual([{ settings: { xnack: false }, loadable: 0 }, { settings: { xnack: true }, loadable: 1 }]);
    expect(judge([G("gfx90a:xnack+")]).ok).toBe(false);
    // A feature-free entry loads under every setting.
    expect(judge([G("gfx90a"), G("gfx90a:xnack+")]).ok).toBe(true);
    // Two unstated features: four cases, each needs a variant.
    expect(judge([G("gfx90a:sramecc+:xnack-"), G("gfx90a:sramecc-:xnack-"), G("gfx90a:xnack+")]).ok).toBe(true);
    expect(judge([G("gfx90a:sramecc+:xnack-"), G("gfx90a:xnack+")]).cases.filter((c) => c.loadable === 0))
      .toEqual([{ settings: { sramecc: false, xnack: false }, loadable: 0 }]);
    // Nothing unstated: one case.
    expect(judge([G("gfx906")]).cases).toEqual([{ settings: {}, loadable: 0 }]);
    expect(judge([G("gfx90a:xnack+")], parseGpu("gfx90a:xnack+")).ok).toBe(true);
    expect(judge([]).ok).toBe(false);
  });

  it("accepts rocminfo's spelling of a GPU (triple, empty environment, target ID)", () => {
    for (const text of ["amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "amdgcn-amd-amdhsa-gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack-"]) {
      const gpu = parseGpu(text);
      expect([gpu.processor, gpu.canonical, gpu.input]).toEqual(["gfx90a", "gfx90a:sramecc+:xnack-", text]);
    }
    expect(parseGpu("nvptx64-nvidia-cuda--sm_80").processor).toBe("sm_80");
    expect(() => parseGpu("amdgcn-amd-amdhsa--sm_80")).toThrow(/NVIDIA processor/);
    expect(() => parseGpu("nvptx64-nvidia-cuda--gfx90a")).toThrow(/not an NVIDIA processor/);
    expect(() => parseGpu("amdgcn-amd-amdhsa--gfx90a:xnack")).toThrow(/invalid GPU/);
  });

  it("generic code objects load on their family", () => {
    expect(checkEntry(G("gfx9-generic"), parseGpu("gfx906")).reason?.code).toBe("generic");
    expect(checkEntry(G("gfx9-generic"), parseGpu("gfx1030")).verdict).toBe("not-loadable");
    expect(checkEntry(G("gfx11-generic"), parseGpu("gfx1151")).verdict).toBe("loadable");
  });

  it("resolves alternative processor names and checks NVIDIA arches", () => {
    expect(parseGpu("fiji").processor).toBe("gfx803");
    expect(checkEntry(G("gfx803"), parseGpu("polaris10")).verdict).toBe("loadable");
    expect(checkEntry("openmp-nvptx64-nvidia-cuda--sm_80", parseGpu("sm_80")).verdict).toBe("loadable");
    expect(checkEntry("openmp-nvptx64-nvidia-cuda--sm_70", parseGpu("sm_80")).reason?.code).toBe("processor-mismatch");
    expect(checkEntry(G("gfx90a"), parseGpu("sm_80")).reason?.code).toBe("not-a-gpu-entry");
  });

  it("filters by offload kind", () => {
    expect(checkEntry(G("gfx90a"), gpu, { kind: "openmp" }).reason?.code).toBe("kind-mismatch");
    expect(checkEntry("hipv4-amdgcn-amd-amdhsa--gfx90a", gpu, { kind: "hip" }).verdict).toBe("loadable");
  });

  it("rejects malformed GPU descriptions with the target-ID wording", () => {
    expect(() => parseGpu("gfx90a:xnack")).toThrow(/invalid GPU 'gfx90a:xnack'/);
    expect(() => parseGpu("gfx1030:xnack+")).toThrow(/not supported/);
    expect(() => parseGpu("gfx9999")).toThrow(/unknown processor/);
  });
});

describe("offload-kit check", () => {
  it("passes when every input has a loadable entry", async () => {
    const summary = await kit(["--gpu=gfx90a:xnack-", "mixed.hipfb", "lib.a"]);
    expect(summary.stdout.toString()).toBe(
      "mixed.hipfb: bundle, 4 device entries, 1 loadable on gfx90a:xnack-; OK\n" +
      "lib.a: archive, 2 device entries, loadable on gfx90a:xnack-: 1 with sramecc off (-), 2 with sramecc on (+); OK\n" +
      "OK: every input has device code gfx90a:xnack- can load, whichever way sramecc is set\n",
    );
    const r = await kit(["--gpu=gfx90a:xnack-", "-v", "mixed.hipfb", "lib.a"]);
    expect(r.code).toBe(0);
    const text = r.stdout.toString();
    expect(text).toContain("mixed.hipfb: bundle, 4 device entries, 1 loadable on gfx90a:xnack-");
    // lib.a's b.o needs sramecc on, which --gpu leaves unsaid: counted per setting (issue 19 item 7).
    expect(text).toContain("lib.a: archive, 2 device entries, loadable on gfx90a:xnack-: 1 with sramecc off (-), 2 with sramecc on (+)");
    // Issue 19 item 9: a summary per target ID, then each entry with its bundle, member and offset.
    expect(text).toMatch(/hip-amdgcn-amd-amdhsa--gfx90a:sramecc\+\s+1\s+\d+\s+\?\s+loads only with sramecc on \(\+\); --gpu=gfx90a:xnack- does not say how sramecc is set/);
    expect(text).toMatch(/bundle 1\s+b\.o\s+0x[0-9a-f]+\s+\d+\s+\?\s+hip-amdgcn-amd-amdhsa--gfx90a:sramecc\+\n/);
    expect(text).toMatch(/needs xnack on \(\+\), the GPU has it off \(-\)/);
    expect(text).toContain("OK: every input has device code gfx90a:xnack- can load, whichever way sramecc is set");
  });

  it("fails when one input has nothing loadable, and says which", async () => {
    const r = await kit(["--gpu=gfx90a:xnack-", "mixed.hipfb", "old.hipfb", "plain.txt"]);
    expect(r.code).toBe(1);
    expect(r.stdout.toString()).toContain("old.hipfb: bundle, 2 device entries, 0 loadable");
    expect(r.stdout.toString()).toContain("plain.txt: no offload bundles");
    expect(r.stdout.toString()).toContain("FAIL: 2 of 3 inputs have no device code gfx90a:xnack- can load");
  });

  it("checks the offload files of a directory and skips the rest", async () => {
    const r = await kit(["--gpu=gfx90a:xnack-", "tree"]);
    expect(r.code).toBe(0);
    expect(r.stdout.toString()).toContain("(1 other file skipped)");
    const empty = await kit(["--gpu=gfx90a:xnack-", "tree/sub", join(dir, "tree/readme.txt")]);
    expect(empty.code).toBe(1);
    // A directory given twice (or inside another given) holds its files once, and is not empty the second time.
    const twice = await kit(["--gpu=gfx90a:xnack-", "--json", "tree", "tree/sub"]);
    expect(twice.code).toBe(0);
    expect(JSON.parse(twice.stdout.toString()).inputs.map((i: { path: string }) => i.path)).toEqual(["tree/sub/k.hipfb"]);
    expect(JSON.parse(twice.stdout.toString()).emptyDirectories).toEqual([]);
  });

  it("prints JSON for pipelines", async () => {
    const r = await kit(["--gpu=gfx90a:xnack-", "--json", "lib.a"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout.toString());
    expect(report.gpu).toEqual({ input: "gfx90a:xnack-", vendor: "amd", processor: "gfx90a", features: { xnack: false }, canonical: "gfx90a:xnack-" });
    expect(report.ok).toBe(true);
    expect(report.inputs[0].entries.map((e: { member: string; verdict: string }) => `${e.member} ${e.verdict}`))
      .toEqual(["a.o host", "a.o loadable", "b.o host", "b.o unknown"]);
    expect(report.inputs[0].entries.map((e: { bundle: number }) => e.bundle)).toEqual([0, 0, 1, 1]);
    expect(report.inputs[0].entries[3].needs).toEqual({ sramecc: true });
    expect(report.inputs[0].unstated).toEqual(["sramecc"]);
    expect(report.inputs[0].cases).toEqual([{ settings: { sramecc: false }, loadable: 1 }, { settings: { sramecc: true }, loadable: 2 }]);
    expect(report.inputs[0].targets.map((t: { id: string; entries: number; verdict: string }) => `${t.id} ${t.entries} ${t.verdict}`))
      .toEqual([`${HOST} 2 host`, `${G("gfx90a:xnack-")} 1 loadable`, `${G("gfx90a:sramecc+")} 1 unknown`]);
    expect(report.unreadable).toEqual([]);
  });

  it("usage errors and unreadable inputs", async () => {
    // Without --gpu, this machine's GPUs: none here (nothing on PATH, an empty sysfs).
    const empty = scratchDir("offload-kit-no-gpu-");
    const noGpu = await runInDir(dir, (io) => runOffloadKit("offload-kit", ["check", "lib.a"], io), { PATH: empty, OFFLOAD_KIT_SYSFS: empty });
    expect(noGpu.code).toBe(2);
    expect(noGpu.stderr).toContain("no GPU found on this machine");
    expect(noGpu.stderr).toContain("pass --gpu=<target id>");
    expect((await kit(["--gpu=gfx90a:xnack", "lib.a"])).code).toBe(2);
    const missing = await kit(["--gpu=gfx90a", "nope.a"]);
    expect(missing.code).toBe(1);
    // Issue 19 item 11: per-file errors go to stderr, naming the file once.
    expect(missing.stderr).toBe("offload-kit check: error: 'nope.a': No such file or directory\n");
    expect(missing.stdout.toString()).toBe("FAIL: 1 of 1 inputs have no device code gfx90a can load\n");
  });
});
