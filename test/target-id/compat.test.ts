/**
 * src/target-id/compat.ts against spec/bundler.md §3.2–3.4 and spec/target-id.md §4–5, plus the conflict verdicts
 * measured with clang-offload-bundler-19/-22 for malformed IDs (see test/differential/target-id-native.test.ts).
 */

import { describe, expect, it } from "vitest";
import {
  describeIncompatibility,
  explainCodeObjectCompatibility,
  explainTargetIdCompatibility,
  findConflictingTargets,
  formatConflictMessage,
  getConflictTargetIdCombination,
  isCodeObjectCompatible,
  isCompatibleTargetId,
  isOffloadKindCompatible,
  normaliseBundleId,
  parseOffloadTarget,
  type IncompatibilityReason,
  type LlvmVersion,
} from "../../src/target-id/index.js";

describe("offload kinds", () => {
  it.each([
    ["hip", "hip", false, true], ["hip", "hipv4", false, true], ["hipv4", "hip", false, true],
    ["hip", "openmp", false, false], ["hip", "openmp", true, true], ["openmp", "hipv4", true, true],
    ["HIPfoo", "openmp", true, true], ["openmp", "host", true, false], ["host", "hip", true, false],
  ] as const)("%s → %s (hip-openmp-compatible %s): %s", (codeObject, target, flag, expected) => {
    expect(isOffloadKindCompatible(codeObject, target, flag)).toBe(expected);
  });

  it("14 only accepts equal kinds", () => {
    expect(isOffloadKindCompatible("hip", "hipv4", false, 14)).toBe(false);
    expect(isOffloadKindCompatible("hip", "hip", false, 14)).toBe(true);
  });
});

/** The code object is the stored entry, the target the normalised request, as the tool compares them. */
function compatible(entry: string, request: string, version: LlvmVersion = 19, hipOpenmpCompatible = false): boolean {
  return isCodeObjectCompatible(parseOffloadTarget(normaliseBundleId(entry, version), version),
    parseOffloadTarget(normaliseBundleId(request, version), version), { hipOpenmpCompatible });
}

const A = "hip-amdgcn-amd-amdhsa--";

describe("code-object compatibility (19/22)", () => {
  it.each([
    // spec/bundler.md §3.3
    [`${A}gfx908`, `${A}gfx908:xnack+`, true],
    [`${A}gfx908:xnack+`, `${A}gfx908`, false],
    [`${A}gfx908:xnack+`, `${A}gfx908:xnack-`, false],
    [`${A}gfx908:xnack+`, `${A}gfx908:sramecc+:xnack+`, true],
    [`${A}gfx908:sramecc+:xnack+`, `${A}gfx908:xnack+`, false],
    [`${A}gfx906`, `${A}gfx908`, false],
    [`${A}gfx908`, "hipv4-amdgcn-amd-amdhsa--gfx908", true],
    [`${A}gfx908`, "openmp-amdgcn-amd-amdhsa--gfx908", false],
    // Exact matches skip the target-ID parse, so an unsupported feature still matches itself but not across kinds.
    [`${A}gfx1030:xnack+`, `${A}gfx1030:xnack+`, true],
    [`${A}gfx1030:xnack+`, "hipv4-amdgcn-amd-amdhsa--gfx1030:xnack+", false],
    [`${A}gfx906:xnack`, "hipv4-amdgcn-amd-amdhsa--gfx906:xnack", false],
    // NVPTX compares processor text exactly and allows no features.
    ["hip-nvptx64-nvidia-cuda--sm_70", "hip-nvptx64-nvidia-cuda--sm_80", false],
    ["hip-nvptx64-nvidia-cuda--sm_70", "hipv4-nvptx64-nvidia-cuda--sm_70", true],
    ["hip-nvptx64-nvidia-cuda--sm_70:xnack+", "hipv4-nvptx64-nvidia-cuda--sm_70:xnack+", false],
    // An empty and an "unknown" environment parse alike.
    [`${A}gfx906:xnack+`, "hip-amdgcn-amd-amdhsa-unknown-gfx906:xnack+", true],
    // An empty target ID never parses, so only exact matches work without one.
    ["hip-x86_64-unknown-linux-gnu-", "hip-x86_64-unknown-linux-gnu-", true],
  ] as const)("%s serves %s: %s", (entry, request, expected) => {
    expect(compatible(entry, request, 19)).toBe(expected);
    expect(compatible(entry, request, 22)).toBe(expected);
  });

  it("honours -hip-openmp-compatible", () => {
    expect(compatible(`${A}gfx908`, "openmp-amdgcn-amd-amdhsa--gfx908", 19, true)).toBe(true);
    expect(compatible("openmp-amdgcn-amd-amdhsa--gfx908", "hipv4-amdgcn-amd-amdhsa--gfx908", 22, true)).toBe(true);
  });

  it("differs where the versions differ", () => {
    // 19 keeps "gfx906" in 5-field targets, 22 drops it.
    expect(compatible(`${A}gfx906`, "hip-amdgcn-amd-amdhsa-gfx906", 19)).toBe(true);
    expect(compatible(`${A}gfx906`, "hip-amdgcn-amd-amdhsa-gfx906", 22)).toBe(false);
    // 19 makes the whole ID the "target ID" of an ID with an empty one.
    expect(compatible("hip-x86_64-unknown-linux-gnu-", "hipv4-x86_64-unknown-linux-gnu-", 19)).toBe(false);
  });
});

describe("code-object compatibility (14, archives)", () => {
  it.each([
    [`${A}gfx908`, `${A}gfx908`, true],
    [`${A}gfx908`, `${A}gfx908:xnack+`, false],
    [`${A}gfx908`, "hip-amdgcn-amd-amdhsa-gfx908", true],
    [`${A}gfx908`, "hipv4-amdgcn-amd-amdhsa--gfx908", false],
    [`${A}gfx906:xnack+`, "hip-amdgcn-amd-amdhsa-unknown-gfx906:xnack+", true],
    [`${A}gfx906:xnack+`, `${A}gfx906`, false],
  ] as const)("%s serves %s: %s", (entry, request, expected) => {
    expect(isCodeObjectCompatible(parseOffloadTarget(entry, 14), parseOffloadTarget(request, 14))).toBe(expected);
  });
});

describe("why not", () => {
  function reason(entry: string, request: string): IncompatibilityReason | "compatible" {
    const verdict = explainCodeObjectCompatibility(parseOffloadTarget(normaliseBundleId(entry)), parseOffloadTarget(normaliseBundleId(request)));
    return verdict.compatible ? "compatible" : verdict.reason;
  }

  it("names the first failing rule", () => {
    expect(reason(`${A}gfx908`, "openmp-amdgcn-amd-amdhsa--gfx908")).toEqual({ code: "kind-mismatch", codeObjectKind: "hip", targetKind: "openmp" });
    expect(reason(`${A}gfx908`, "hip-nvptx64-nvidia-cuda--gfx908")).toMatchObject({ code: "triple-mismatch" });
    expect(reason(`${A}gfx906`, `${A}gfx908`)).toEqual({ code: "processor-mismatch", codeObjectProcessor: "gfx906", targetProcessor: "gfx908" });
    expect(reason(`${A}gfx908:sramecc+:xnack+`, `${A}gfx908:xnack+`)).toEqual({ code: "too-many-features", codeObjectFeatures: 2, targetFeatures: 1 });
    expect(reason(`${A}gfx908:xnack+`, `${A}gfx908:sramecc+`)).toEqual({ code: "feature-unspecified", feature: "xnack", codeObjectSetting: true });
    expect(reason(`${A}gfx908:xnack+`, `${A}gfx908:xnack-`)).toEqual({ code: "feature-mismatch", feature: "xnack", codeObjectSetting: true, targetSetting: false });
    expect(reason(`${A}gfx1030:xnack+`, "hipv4-amdgcn-amd-amdhsa--gfx1030:xnack+")).toMatchObject({ code: "invalid-target-id", side: "code-object" });
    expect(reason(`${A}gfx1030`, "hipv4-amdgcn-amd-amdhsa--gfx1030:xnack+")).toMatchObject({ code: "invalid-target-id", side: "target" });
  });

  it("says which kind of match it found", () => {
    const entry = parseOffloadTarget(normaliseBundleId(`${A}gfx908`));
    expect(explainCodeObjectCompatibility(entry, entry)).toEqual({ compatible: true, match: "exact" });
    expect(explainCodeObjectCompatibility(entry, parseOffloadTarget(normaliseBundleId(`${A}gfx908:xnack-`))))
      .toEqual({ compatible: true, match: "target-id" });
  });

  it("describes every reason in one sentence", () => {
    const reasons: IncompatibilityReason[] = [
      { code: "kind-mismatch", codeObjectKind: "hip", targetKind: "openmp" },
      { code: "triple-mismatch", codeObjectTriple: "a", targetTriple: "b" },
      { code: "processor-mismatch", codeObjectProcessor: "gfx906", targetProcessor: "gfx908" },
      { code: "too-many-features", codeObjectFeatures: 2, targetFeatures: 1 },
      { code: "feature-unspecified", feature: "xnack", codeObjectSetting: true },
      { code: "feature-mismatch", feature: "xnack", codeObjectSetting: false, targetSetting: true },
      { code: "gpu-arch-mismatch", codeObjectGpuArch: "gfx908", targetGpuArch: "gfx908:xnack+" },
    ];
    expect(reasons.map(describeIncompatibility)).toEqual([
      "offload kind 'hip' cannot serve offload kind 'openmp'",
      "triple 'a' is not compatible with 'b'",
      "processor 'gfx906' is not 'gfx908'",
      "the code object sets 2 feature(s) but the target only 1",
      "the code object needs xnack on (+) but the target leaves it unspecified",
      "the code object needs xnack off (-) but the target has it on (+)",
      "GPU 'gfx908' is not 'gfx908:xnack+' (LLVM 14 compares the text)",
    ]);
  });
});

describe("isCompatibleTargetId (spec/target-id.md §5)", () => {
  it.each([
    ["gfx908", "gfx908:xnack+", true],
    ["gfx908:xnack+", "gfx908", false],
    ["gfx908:xnack+", "gfx908:sramecc-:xnack+", true],
    ["gfx908:xnack-", "gfx908:xnack+", false],
    ["gfx908", "gfx906", false],
    ["fiji", "gfx803", false],
    ["sm_70", "sm_80", false],
    ["", "", true],
  ] as const)("%j provided for %j: %s", (provided, requested, expected) => {
    expect(isCompatibleTargetId(provided, requested)).toBe(expected);
  });

  it("reports malformed IDs instead of guessing", () => {
    expect(explainTargetIdCompatibility("gfx908:xnack", "gfx908")).toMatchObject({ compatible: false, reason: { code: "invalid-target-id", side: "code-object" } });
  });

  it("is reflexive and monotone: adding features to the request never breaks a match", () => {
    const ids = ["gfx906", "gfx906:xnack+", "gfx906:xnack-", "gfx906:sramecc+", "gfx906:sramecc-:xnack+", "gfx906:sramecc+:xnack-"];
    for (const provided of ids) {
      expect(isCompatibleTargetId(provided, provided)).toBe(true);
      for (const requested of ids)
        if (isCompatibleTargetId(provided, requested))
          for (const extra of [":foo+", ":foo-"]) expect(isCompatibleTargetId(provided, requested + extra)).toBe(true);
    }
  });
});

/** [ids, 19 verdict, 22 verdict]: observed with the bundlers (hip-amdgcn-amd-amdhsa group). */
const CONFLICTS: readonly [readonly string[], [string, string] | undefined, [string, string] | undefined][] = [
  // spec/target-id.md §4
  [["gfx906", "gfx906:xnack+"], ["gfx906", "gfx906:xnack+"], ["gfx906", "gfx906:xnack+"]],
  [["gfx906:sramecc+", "gfx906:xnack+"], ["gfx906:sramecc+", "gfx906:xnack+"], ["gfx906:sramecc+", "gfx906:xnack+"]],
  [["gfx906:xnack+", "gfx906:xnack-"], undefined, undefined],
  [["gfx906:sramecc+:xnack+", "gfx906:xnack+"], undefined, undefined],
  [["gfx906:xnack+", "gfx906:sramecc+:xnack+"], undefined, undefined],
  [["gfx906:xnack+", "gfx906:sramecc+:xnack-"], undefined, undefined],
  [["gfx906:xnack-", "gfx906:sramecc+:xnack+"], undefined, undefined],
  // Raw processor text: aliases and canonical names are different keys.
  [["fiji", "gfx803:xnack+"], undefined, undefined],
  // Malformed IDs: the stale-slot behaviour differs between the builds.
  [["gfx906:xnack", "gfx906:xnack+"], undefined, undefined],
  [["gfx906:xnack+:sramecc", "gfx906:sramecc+"], undefined, ["gfx906:sramecc+", "gfx906:xnack+:sramecc"]],
  [["gfx906:xnack+:bad", "gfx908:sramecc+:bad"], undefined, ["gfx906:xnack+:bad", "gfx908:sramecc+:bad"]],
  [["gfx900", "gfx906:xnack+:bad"], ["gfx900", "gfx906:xnack+:bad"], ["gfx900", "gfx906:xnack+:bad"]],
  [["gfx900:sramecc+", "gfx906:xnack+:bad"], undefined, ["gfx900:sramecc+", "gfx906:xnack+:bad"]],
  [["gfx900:", "gfx906:xnack+:bad"], undefined, ["gfx900:", "gfx906:xnack+:bad"]],
  [["gfx900", "gfx906:bad", "gfx906:xnack+:bad"], ["gfx900", "gfx906:xnack+:bad"], ["gfx900", "gfx906:xnack+:bad"]],
  [["gfx900", "gfx902::", "gfx906:xnack+:bad"], ["gfx900", "gfx906:xnack+:bad"], ["gfx900", "gfx906:xnack+:bad"]],
  [["gfx900", "gfx902", "gfx906:xnack+:bad"], ["gfx902", "gfx906:xnack+:bad"], ["gfx902", "gfx906:xnack+:bad"]],
  [["gfx900", "gfx906:sramecc+", "gfx906:xnack+:bad"], undefined, ["gfx906:sramecc+", "gfx906:xnack+:bad"]],
  [["", "gfx906:xnack+:bad"], ["", "gfx906:xnack+:bad"], ["", "gfx906:xnack+:bad"]],
];

describe("getConflictTargetIdCombination", () => {
  it.each(CONFLICTS)("%j → 19 %j, 22 %j", (ids, v19, v22) => {
    expect(getConflictTargetIdCombination(ids)).toEqual(v19);
    expect(getConflictTargetIdCombination(ids, { llvmVersion: 22 })).toEqual(v22);
  });

  it("does not depend on input order or repeats, only on the set", () => {
    const ids = ["gfx90a:xnack-", "gfx90a", "gfx908:sramecc+", "gfx90a:xnack+", "gfx908"];
    const expected = getConflictTargetIdCombination(ids);
    expect(expected).toEqual(["gfx908", "gfx908:sramecc+"]);
    for (let shift = 1; shift < ids.length; shift++) {
      const rotated = [...ids.slice(shift), ...ids.slice(0, shift), ids[shift]!];
      expect(getConflictTargetIdCombination(rotated)).toEqual(expected);
    }
  });

  it("never reports well-formed sets where every ID of a processor names the same features", () => {
    const processors = ["gfx906", "gfx908", "gfx90a"];
    const featureSets = [[], ["xnack"], ["sramecc"], ["sramecc", "xnack"]];
    for (const features of featureSets) {
      const ids = processors.flatMap((processor) => [true, false].map((on) =>
        processor + features.map((feature) => `:${feature}${on ? "+" : "-"}`).join("")));
      expect(getConflictTargetIdCombination(ids), ids.join(" ")).toBeUndefined();
    }
  });
});

describe("findConflictingTargets", () => {
  it("groups by kind and rebuilt triple and words the tool's message", () => {
    const targets = ["hip-amdgcn-amd-amdhsa--gfx906", "hipv4-amdgcn-amd-amdhsa--gfx906:xnack+", "hip-amdgcn-amd-amdhsa--gfx906:xnack+"];
    const conflict = findConflictingTargets(targets.map((target) => parseOffloadTarget(target)));
    expect(conflict).toEqual({ group: "hip-amdgcn-amd-amdhsa-", first: "gfx906", second: "gfx906:xnack+" });
    expect(formatConflictMessage(conflict!)).toBe(
      "Cannot bundle inputs with conflicting targets: 'hip-amdgcn-amd-amdhsa--gfx906' and 'hip-amdgcn-amd-amdhsa--gfx906:xnack+'");
  });

  it("keys groups by the rebuilt triple text, not 22's normalised one", () => {
    const targets = ["hip-amdgcn-amd-amdhsa--gfx906", "hip-amdgcn-amd-amdhsa-unknown-gfx906:xnack+"];
    expect(findConflictingTargets(targets.map((target) => parseOffloadTarget(target, 19)))).toBeUndefined();
    expect(findConflictingTargets(targets.map((target) => parseOffloadTarget(target, 22)))).toBeUndefined();
  });

  it("has nothing to check in 14", () => {
    expect(findConflictingTargets(["hip-amdgcn-amd-amdhsa--gfx906", "hip-amdgcn-amd-amdhsa--gfx906:xnack+"]
      .map((target) => parseOffloadTarget(target, 14)))).toBeUndefined();
  });
});
