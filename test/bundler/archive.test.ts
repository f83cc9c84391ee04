// UnbundleArchive's pure rules: output member names, which targets get which entries, the order of
// the missing-target errors and -check-input-archive's conflict message.
import { describe, expect, it } from "vitest";
import { checkArchiveMemberConflicts, deviceMemberName, planArchiveUnbundle } from "../../src/bundler/archive.js";
import { OffloadKitError } from "../../src/engine/errors.js";

const G = (id: string) => `hip-amdgcn-amd-amdhsa--${id}`;
const entry = (id: string, offset = 0) => ({ id, offset, size: 1 });

describe("device member names", () => {
  it.each([
    ["one.o", G("gfx906"), "gfx906", "one-hip-amdgcn-amd-amdhsa--gfx906one.bc"],
    ["lib/one.o", G("gfx908:xnack+"), "gfx908:xnack+", "one-hip-amdgcn-amd-amdhsa--gfx908_xnack+one.bc"],
    ["k.cu.o", "openmp-nvptx64-nvidia-cuda--sm_70", "sm_70", "k.cu-openmp-nvptx64-nvidia-cuda--sm_70k.cu.cubin"],
    ["cpu.o", "openmp-x86_64-unknown-linux-gnu-", "", "cpu-openmp-x86_64-unknown-linux-gnu-cpu.o"],
    ["../x.bc", G("gfx906"), "gfx906", "x-hip-amdgcn-amd-amdhsa--gfx906x.bc"],
    ["/etc/passwd", G("gfx906"), "gfx906", "passwd-hip-amdgcn-amd-amdhsa--gfx906passwd.bc"],
    ["dir/", G("gfx906"), "gfx906", ".-hip-amdgcn-amd-amdhsa--gfx906..bc"],
    ["noext", "host-x86_64-unknown-linux-gnu-", "", "noext-host-x86_64-unknown-linux-gnu-noext"],
  ])("%s + %s", (member, id, targetId, expected) => {
    expect(deviceMemberName(member, id, targetId)).toBe(expected);
  });
});

describe("planning", () => {
  const members = [
    { name: "a.o", entries: [entry(G("gfx906"), 10), entry(G("gfx906:xnack+"), 20), entry(`host-x86_64-unknown-linux-gnu-`, 30)] },
    { name: "b.o", entries: [entry(G("gfx908"), 40), entry("", 50), entry(G("gfx906"), 60)] },
  ];

  it("gives every compatible target its own copy, in member and entry order", () => {
    const plan = planArchiveUnbundle(members, { targets: [G("gfx906:xnack+"), G("gfx906:xnack-"), G("gfx908")], inputPath: "lib.a" });
    expect(plan.outputs.map((list) => list.map((m) => `${m.member}@${m.entry.offset}`))).toEqual([
      ["0@10", "0@20"],
      ["0@10"],
      ["1@40"],
    ]);
  });

  it("an empty entry ID ends its member (LLVM loops while the ID is non-empty)", () => {
    const plan = planArchiveUnbundle(members, { targets: [G("gfx906")], inputPath: "lib.a" });
    expect(plan.outputs[0].map((m) => m.entry.offset)).toEqual([10]);
  });

  it("reports the first target without code objects, after the targets before it", () => {
    const seen: number[] = [];
    const run = () => planArchiveUnbundle(members, { targets: [G("gfx906"), G("gfx1030"), G("gfx1100")], inputPath: "lib.a" }, (t) => seen.push(t));
    expect(run).toThrow(new OffloadKitError("NO_COMPATIBLE_CODE_OBJECT",
      `no compatible code object found for the target '${G("gfx1030")}' in heterogeneous archive library: lib.a`));
    expect(seen).toEqual([0]);
    const allowed = planArchiveUnbundle(members, { targets: [G("gfx1030")], inputPath: "lib.a", allowMissingBundles: true });
    expect(allowed.outputs).toEqual([[]]);
  });

  it("-hip-openmp-compatible lets openmp targets take hip entries", () => {
    const request = { targets: ["openmp-amdgcn-amd-amdhsa--gfx908"], inputPath: "l.a" };
    expect(() => planArchiveUnbundle(members, request)).toThrow(/no compatible code object/);
    expect(planArchiveUnbundle(members, { ...request, hipOpenmpCompatible: true }).outputs[0]).toHaveLength(1);
  });
});

describe("-check-input-archive", () => {
  it("keys whole bundle IDs by the text before ':'", () => {
    expect(checkArchiveMemberConflicts("m.o", [G("gfx906"), G("gfx906:xnack+")], "lib.a"))
      .toBe(`conflicting TargetIDs [${G("gfx906")}, ${G("gfx906:xnack+")}] found in m.o of lib.a`);
    expect(checkArchiveMemberConflicts("m.o", [G("gfx906:xnack-"), G("gfx906:xnack+")], "lib.a")).toBeUndefined();
    expect(checkArchiveMemberConflicts("m.o", [G("gfx906"), G("gfx908:xnack+")], "lib.a")).toBeUndefined();
  });
});
