/**
 * src/target-id/entry-id.ts against every example of spec/bundler.md §1.1 and §3.1 (all observed with the native
 * tools) and the measured extras of test/differential/target-id-native.test.ts.
 */

import { describe, expect, it } from "vitest";
import {
  TARGET_FORMAT_MESSAGE,
  bundleIdString,
  checkOffloadBundleId,
  formatInvalidTargetMessage,
  getDeviceFileExtension,
  hasHostKind,
  isOffloadKindValid,
  isTripleValid,
  normaliseBundleId,
  parseOffloadTarget,
} from "../../src/target-id/index.js";

/** target, stored ID in 14, 19, 22 (undefined: 22 rejects the target before storing it). */
const STORED_IDS: readonly [string, string, string, string | undefined][] = [
  ["host-x86_64-unknown-linux-gnu", "host-x86_64-unknown-linux-gnu", "host-x86_64-unknown-linux-gnu-", "host-x86_64-unknown-linux-gnu-"],
  ["host-x86_64-unknown-linux", "host-x86_64-unknown-linux", "host-x86_64-unknown-linux--", undefined],
  ["host-x86_64-pc-linux-gnu-", "host-x86_64-pc-linux-gnu-", "host-x86_64-pc-linux-gnu-host-x86_64-pc-linux-gnu-", "host-x86_64-pc-linux-gnu-"],
  ["hip-amdgcn-amd-amdhsa-gfx906", "hip-amdgcn-amd-amdhsa-gfx906", "hip-amdgcn-amd-amdhsa--gfx906", "hip-amdgcn-amd-amdhsa--"],
  ["hip-amdgcn-amd-amdhsa-gfx906:xnack+", "hip-amdgcn-amd-amdhsa-gfx906:xnack+", "hip-amdgcn-amd-amdhsa--gfx906:xnack+", "hip-amdgcn-amd-amdhsa--"],
  ["hip-amdgcn-amd-amdhsa--gfx906:xnack+", "hip-amdgcn-amd-amdhsa--gfx906:xnack+", "hip-amdgcn-amd-amdhsa--gfx906:xnack+", "hip-amdgcn-amd-amdhsa--gfx906:xnack+"],
  ["hip-amdgcn-amd-amdhsa-unknown-gfx906", "hip-amdgcn-amd-amdhsa-unknown-gfx906", "hip-amdgcn-amd-amdhsa-unknown-gfx906", "hip-amdgcn-amd-amdhsa--gfx906"],
  ["hip-amdgcn-amd-amdhsa--foo", "hip-amdgcn-amd-amdhsa--foo", "hip-amdgcn-amd-amdhsa--foo-", "hip-amdgcn-amd-amdhsa--"],
  ["hip-amdgcn-amd-amdhsa-foo", "hip-amdgcn-amd-amdhsa-foo", "hip-amdgcn-amd-amdhsa-foo-", "hip-amdgcn-amd-amdhsa--"],
  ["hip-spirv64-amd-amdhsa--amdgcnspirv", "hip-spirv64-amd-amdhsa--amdgcnspirv", "hip-spirv64-amd-amdhsa--amdgcnspirv", "hip-spirv64-amd-amdhsa--amdgcnspirv"],
  ["hip-amdgcn-amd-amdhsa--gfx906:sramecc-:xnack+", "hip-amdgcn-amd-amdhsa--gfx906:sramecc-:xnack+", "hip-amdgcn-amd-amdhsa--gfx906:sramecc-:xnack+", "hip-amdgcn-amd-amdhsa--gfx906:sramecc-:xnack+"],
  // Feature names and signs are not checked by the bundler.
  ["hip-amdgcn-amd-amdhsa--gfx906:xnack", "hip-amdgcn-amd-amdhsa--gfx906:xnack", "hip-amdgcn-amd-amdhsa--gfx906:xnack", "hip-amdgcn-amd-amdhsa--gfx906:xnack"],
  ["hip-amdgcn-amd-amdhsa--gfx1030:xnack+", "hip-amdgcn-amd-amdhsa--gfx1030:xnack+", "hip-amdgcn-amd-amdhsa--gfx1030:xnack+", "hip-amdgcn-amd-amdhsa--gfx1030:xnack+"],
  // Aliases are not offload archs; neither are gfx940 (22), gfx950 or sm_100 (19).
  ["hip-amdgcn-amd-amdhsa--fiji", "hip-amdgcn-amd-amdhsa--fiji", "hip-amdgcn-amd-amdhsa--fiji-", "hip-amdgcn-amd-amdhsa--"],
  ["hip-amdgcn-amd-amdhsa--gfx940", "hip-amdgcn-amd-amdhsa--gfx940", "hip-amdgcn-amd-amdhsa--gfx940", "hip-amdgcn-amd-amdhsa--"],
  ["hip-amdgcn-amd-amdhsa--gfx950", "hip-amdgcn-amd-amdhsa--gfx950", "hip-amdgcn-amd-amdhsa--gfx950-", "hip-amdgcn-amd-amdhsa--gfx950"],
  ["openmp-nvptx64-nvidia-cuda--sm_100", "openmp-nvptx64-nvidia-cuda--sm_100", "openmp-nvptx64-nvidia-cuda--sm_100-", "openmp-nvptx64-nvidia-cuda-unknown-sm_100"],
  ["openmp-nvptx64-nvidia-cuda--sm_70", "openmp-nvptx64-nvidia-cuda--sm_70", "openmp-nvptx64-nvidia-cuda--sm_70", "openmp-nvptx64-nvidia-cuda-unknown-sm_70"],
  // 19 takes the target ID from the first occurrence of the name (this target is then rejected for its arch,
  // but str() is what the tool would use), and sees "generic" after the last '-'.
  ["hip-gfx906-amd-amdhsa--gfx906", "hip-gfx906-amd-amdhsa--gfx906", "hip-gfx906-amd-amdhsa--gfx906-amd-amdhsa--gfx906", "hip-gfx906-amd-amdhsa--gfx906"],
  ["hip-amdgcn-amd-amdhsa--gfx9-generic", "hip-amdgcn-amd-amdhsa--gfx9-generic", "hip-amdgcn-amd-amdhsa--gfx9-generic", "hip-amdgcn-amd-amdhsa--gfx9-generic"],
  ["hip-amdgcn-amd-amdhsa--gfx12-5-generic", "hip-amdgcn-amd-amdhsa--gfx12-5-generic", "hip-amdgcn-amd-amdhsa--gfx12-5-generic", "hip-amdgcn-amd-amdhsa--"],
  ["hip-amdgcn-amd-amdhsa--gfx906-gfx908", "hip-amdgcn-amd-amdhsa--gfx906-gfx908", "hip-amdgcn-amd-amdhsa--gfx906-gfx908", "hip-amdgcn-amd-amdhsa--"],
  // 22 normalises the triple: amdhsa keeps three fields and a '-', everything else four.
  ["openmp-x86_64-linux-gnu-unknown-", "openmp-x86_64-linux-gnu-unknown-", "openmp-x86_64-linux-gnu-unknown-openmp-x86_64-linux-gnu-unknown-", "openmp-x86_64-unknown-linux-gnu-"],
  ["hip-amdgcn-amd-amdpal-gnu-gfx1150", "hip-amdgcn-amd-amdpal-gnu-gfx1150", "hip-amdgcn-amd-amdpal-gnu-gfx1150", "hip-amdgcn-amd-amdpal-gnu-gfx1150"],
];

describe("stored bundle entry IDs", () => {
  it.each(STORED_IDS)("%s → 14 %s, 19 %s, 22 %s", (target, v14, v19, v22) => {
    expect(normaliseBundleId(target, 14)).toBe(v14);
    expect(normaliseBundleId(target, 19)).toBe(v19);
    expect(checkOffloadBundleId(target)).toBe(v22 !== undefined);
    if (v22 !== undefined) expect(normaliseBundleId(target, 22)).toBe(v22);
  });

  it("defaults to 19 and to the version the info was parsed with", () => {
    const info = parseOffloadTarget("hip-amdgcn-amd-amdhsa-unknown-gfx906", 22);
    expect(bundleIdString(info)).toBe("hip-amdgcn-amd-amdhsa--gfx906");
    expect(bundleIdString(info, 19)).toBe("hip-amdgcn-amd-amdhsa-unknown-gfx906");
    expect(normaliseBundleId("hip-amdgcn-amd-amdhsa-gfx906")).toBe("hip-amdgcn-amd-amdhsa--gfx906");
  });

  it("reparsing a 19 ID with an empty target ID makes the whole ID the target ID", () => {
    const stored = normaliseBundleId("host-x86_64-unknown-linux-gnu", 19);
    const reparsed = parseOffloadTarget(stored, 19);
    expect(reparsed.targetId).toBe("host-x86_64-unknown-linux-gnu-");
    expect(reparsed.triple.str()).toBe("x86_64-unknown-linux-gnu");
  });
});

describe("OffloadTargetInfo fields", () => {
  it("19 rebuilds the triple from four fields", () => {
    const info = parseOffloadTarget("hip-amdgcn-amd-amdhsa--foo", 19);
    expect([info.offloadKind, info.triple.str(), info.triple.getEnvironmentName(), info.targetId])
      .toEqual(["hip", "amdgcn-amd-amdhsa--foo", "-foo", ""]);
  });

  it("14 keeps the triple text as written", () => {
    const info = parseOffloadTarget("hip-amdgcn-amd-amdhsa-gfx906:xnack+", 14);
    expect([info.triple.str(), info.targetId]).toEqual(["amdgcn-amd-amdhsa", "gfx906:xnack+"]);
  });

  it("22 reads at most six fields", () => {
    const info = parseOffloadTarget("openmp-nvptx64-nvidia-cuda--sm_70:x+-y", 22);
    expect([info.triple.str(), info.targetId]).toEqual(["nvptx64-nvidia-cuda-", "sm_70:x+-y"]);
  });

  it("kinds and hosts", () => {
    for (const kind of ["host", "openmp", "hip", "hipv4"]) expect(isOffloadKindValid(parseOffloadTarget(`${kind}-x86_64-pc-linux-gnu`))).toBe(true);
    for (const kind of ["HIP", "cuda", "sycl", ""]) expect(isOffloadKindValid(parseOffloadTarget(`${kind}-x86_64-pc-linux-gnu`))).toBe(false);
    expect(hasHostKind(parseOffloadTarget("host-x86_64-pc-linux-gnu"))).toBe(true);
    expect(hasHostKind(parseOffloadTarget("hostx-x86_64-pc-linux-gnu"))).toBe(false);
    expect(isTripleValid(parseOffloadTarget("hip-le32-unknown-linux-gnu-", 19))).toBe(true);
    expect(isTripleValid(parseOffloadTarget("hip-le32-unknown-linux-gnu-", 22))).toBe(false);
    expect(isTripleValid(parseOffloadTarget("hip", 14))).toBe(false);
  });
});

describe("invalid target messages", () => {
  it.each([
    ["hip-foo-amd-amdhsa--gfx906", 14, "invalid target 'hip-foo-amd-amdhsa--gfx906', unknown target triple 'foo-amd-amdhsa-'"],
    ["hip-foo-amd-amdhsa--gfx906", 19, "invalid target 'hip-foo-amd-amdhsa--gfx906', unknown target triple 'foo-amd-amdhsa-'"],
    ["hip-foo-amd-amdhsa--gfx906", 22, "invalid target 'hip-foo-amd-amdhsa--gfx906', unknown target triple 'foo-amd-amdhsa-'"],
    ["foo", 14, "invalid target 'foo', unknown offloading kind 'foo', unknown target triple ''"],
    ["foo", 19, "invalid target 'foo', unknown offloading kind 'foo', unknown target triple '---'"],
    ["hip", 19, "invalid target 'hip', unknown target triple '---'"],
    ["hip-gfx906-amd-amdhsa--gfx906", 19, "invalid target 'hip-gfx906-amd-amdhsa--gfx906', unknown target triple 'gfx906-amd-amdhsa-'"],
    ["sycl-foo-amd-amdhsa--gfx906", 19, "invalid target 'sycl-foo-amd-amdhsa--gfx906', unknown offloading kind 'sycl', unknown target triple 'foo-amd-amdhsa-'"],
    ["cuda-nvptx64-nvidia-cuda--sm_70", 22, "invalid target 'cuda-nvptx64-nvidia-cuda--sm_70', unknown offloading kind 'cuda'"],
  ] as const)("%s in %i", (target, version, message) => {
    expect(formatInvalidTargetMessage(target, parseOffloadTarget(target, version))).toBe(message);
  });

  it("is undefined for a valid target", () => {
    expect(formatInvalidTargetMessage("hip-amdgcn-amd-amdhsa--gfx906", parseOffloadTarget("hip-amdgcn-amd-amdhsa--gfx906"))).toBeUndefined();
  });

  it("22 wants five or six '-' fields", () => {
    expect(["host-x86_64-unknown-linux", "openmp-nvptx64-nvidia-cuda", "foo"].map(checkOffloadBundleId)).toEqual([false, false, false]);
    expect(["host-x86_64-unknown-linux-gnu", "host-x86_64-pc-linux-gnu-", "a-b-c-d-e-f-g-h"].map(checkOffloadBundleId)).toEqual([true, true, true]);
    expect(TARGET_FORMAT_MESSAGE).toBe("Targets need to follow the format '<offload kind>-<target triple>', where " +
      "'<target triple>' follows the format '<kind>-<arch>-<vendor>-<os>-<env>[-<target id>[:target features]]'.");
  });
});

describe("archive member extensions", () => {
  it.each([["gfx906:xnack+", ".o", ".bc"], ["sm_70", ".o", ".cubin"], ["", ".o", ".o"], ["generic", ".a", ".a"]])(
    "%j from %s → %s", (targetId, memberExtension, extension) => {
      expect(getDeviceFileExtension(targetId, memberExtension)).toBe(extension);
    });
});

describe("properties", () => {
  const processors = ["gfx906", "gfx90a", "sm_70", "gfx1030", "foo", ""];
  const triples = ["amdgcn-amd-amdhsa-", "amdgcn-amd-amdhsa-unknown", "nvptx64-nvidia-cuda-", "x86_64-unknown-linux-gnu"];

  it("22 IDs are fixed points of normalisation, and 19 ones are for six-field targets with a known arch", () => {
    for (const kind of ["hip", "openmp", "host"])
      for (const triple of triples)
        for (const processor of processors) {
          const target = `${kind}-${triple}-${processor}`;
          const id22 = normaliseBundleId(target, 22);
          expect(normaliseBundleId(id22, 22), target).toBe(id22);
          if (processor !== "" && triple.split("-").length === 4) {
            const id19 = normaliseBundleId(target, 19);
            if (parseOffloadTarget(target, 19).targetId !== "") expect(normaliseBundleId(id19, 19), target).toBe(id19);
          }
        }
  });
});
