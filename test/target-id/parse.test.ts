/**
 * src/target-id/parse.ts against spec/target-id.md §1–2 and the clang TargetID.cpp rules it records.
 */

import { describe, expect, it } from "vitest";
import {
  compareByteOrder,
  formatCanonicalTargetId,
  formatClangInvalidTargetIdMessage,
  getAllPossibleTargetIdFeatures,
  getProcessorFromTargetId,
  parseTargetId,
  parseTargetIdFormat,
  type TargetIdErrorCode,
} from "../../src/target-id/index.js";

function formatOf(id: string) {
  const result = parseTargetIdFormat(id);
  return result.ok
    ? { processor: result.value.processor, features: Object.fromEntries(result.value.features) }
    : { error: result.error.code, part: result.error.part };
}

describe("parseTargetIdFormat", () => {
  it.each([
    ["", { processor: "", features: {} }],
    ["gfx906", { processor: "gfx906", features: {} }],
    ["gfx906:xnack+", { processor: "gfx906", features: { xnack: true } }],
    ["gfx908:sramecc+:xnack-", { processor: "gfx908", features: { sramecc: true, xnack: false } }],
    ["gfx906:+", { processor: "gfx906", features: { "": true } }],
    ["gfx906:", { processor: "gfx906", features: {} }],
    ["gfx906:xnack+:", { processor: "gfx906", features: { xnack: true } }],
    ["sm_70:foo-", { processor: "sm_70", features: { foo: false } }],
    ["anything goes:a+:b-", { processor: "anything goes", features: { a: true, b: false } }],
  ])("%j parses", (id, expected) => {
    expect(formatOf(id)).toEqual(expected);
  });

  it.each([
    [":xnack+", "empty-processor", ""],
    [":", "empty-processor", ""],
    ["gfx906:xnack", "missing-sign", "xnack"],
    ["gfx906::xnack+", "missing-sign", ""],
    ["gfx906:xnack+::", "missing-sign", ""],
    ["gfx906:xnack+:sramecc", "missing-sign", "sramecc"],
    ["gfx906:xnack+:xnack-", "repeated-feature", "xnack"],
    ["gfx906:+:-", "repeated-feature", ""],
  ] as const)("%j fails with %s naming %j", (id, code, part) => {
    expect(formatOf(id)).toEqual({ error: code, part });
  });

  it("keeps the features read before an error", () => {
    const result = parseTargetIdFormat("gfx906:xnack+:sramecc-:bad");
    expect(result.ok).toBe(false);
    if (!result.ok) expect([...result.error.featuresBeforeError]).toEqual([["xnack", true], ["sramecc", false]]);
  });
});

describe("parseTargetId", () => {
  const AMDHSA = "amdgcn-amd-amdhsa";

  it.each([
    [AMDHSA, "gfx908:xnack-:sramecc+", "gfx908:sramecc+:xnack-"],
    [AMDHSA, "fiji", "gfx803"],
    [AMDHSA, "carrizo:xnack+", "gfx801:xnack+"],
    [AMDHSA, "gfx90a:xnack+", "gfx90a:xnack+"],
    ["r600-unknown-unknown", "aruba", "cayman"],
    ["nvptx64-nvidia-cuda", "sm_70", "sm_70"],
    ["nvptx64-nvidia-cuda", "not_a_gpu", "not_a_gpu"],
    ["x86_64-unknown-linux-gnu", "gfx906", "gfx906"],
  ])("%s %s → %s", (triple, id, canonical) => {
    const result = parseTargetId(triple, id);
    expect(result.ok && result.value.canonical).toBe(canonical);
  });

  it.each([
    [AMDHSA, "gfx906:xnack", "missing-sign", "xnack"],
    [AMDHSA, "gfx1030:xnack+", "unsupported-feature", "xnack"],
    [AMDHSA, "gfx900:sramecc+", "unsupported-feature", "sramecc"],
    [AMDHSA, "gfx906:foo+", "unsupported-feature", "foo"],
    [AMDHSA, "gfx999", "unknown-processor", "gfx999"],
    [AMDHSA, "generic", "unknown-processor", "generic"],
    [AMDHSA, "", "unknown-processor", ""],
    [AMDHSA, "cayman", "unknown-processor", "cayman"],
    ["r600-unknown-unknown", "gfx906", "unknown-processor", "gfx906"],
    ["nvptx64-nvidia-cuda", "sm_70:xnack+", "unsupported-feature", "xnack"],
    ["nvptx64-nvidia-cuda", "", "empty-processor", ""],
  ] as const)("%s %j fails with %s naming %j", (triple, id, code: TargetIdErrorCode, part) => {
    const result = parseTargetId(triple, id);
    expect(result.ok ? "parsed" : { code: result.error.code, part: result.error.part }).toEqual({ code, part });
  });

  it("uses the version's processor table", () => {
    expect(parseTargetId(AMDHSA, "gfx940:xnack+", 19).ok).toBe(true);
    expect(parseTargetId(AMDHSA, "gfx940:xnack+", 22).ok).toBe(false);
    expect(parseTargetId(AMDHSA, "gfx9-4-generic:sramecc+", 22).ok).toBe(true);
    expect(parseTargetId(AMDHSA, "gfx9-generic:xnack+", 14).ok).toBe(false);
  });

  it("words errors with the offending part", () => {
    const result = parseTargetId(AMDHSA, "gfx1030:xnack+");
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.message).toBe(
      "feature 'xnack' in target ID 'gfx1030:xnack+' is not supported: processor 'gfx1030' allows no features");
  });

  it("canonical text is a fixed point and does not depend on feature order", () => {
    const features = ["sramecc", "xnack"];
    for (const processor of ["gfx906", "gfx908", "gfx90a", "gfx942"]) {
      for (const signs of [["+", "+"], ["+", "-"], ["-", "+"], ["-", "-"]]) {
        const forward = `${processor}:${features[0]}${signs[0]}:${features[1]}${signs[1]}`;
        const backward = `${processor}:${features[1]}${signs[1]}:${features[0]}${signs[0]}`;
        const canonical = parseTargetId(AMDHSA, forward);
        const reversed = parseTargetId(AMDHSA, backward);
        expect(canonical.ok && reversed.ok).toBe(true);
        if (canonical.ok && reversed.ok) {
          expect(reversed.value.canonical).toBe(canonical.value.canonical);
          expect(canonical.value.canonical).toBe(forward);
          const again = parseTargetId(AMDHSA, canonical.value.canonical);
          expect(again.ok && again.value.canonical).toBe(canonical.value.canonical);
        }
      }
    }
  });
});

describe("helpers", () => {
  it("getProcessorFromTargetId canonicalises only for AMDGPU triples", () => {
    expect(getProcessorFromTargetId("amdgcn-amd-amdhsa", "tonga:xnack+")).toBe("gfx802");
    expect(getProcessorFromTargetId("amdgcn-amd-amdhsa", "nope")).toBe("");
    expect(getProcessorFromTargetId("nvptx64-nvidia-cuda", "tonga:xnack+")).toBe("tonga");
  });

  it("getAllPossibleTargetIdFeatures lists allowed features alphabetically", () => {
    expect(getAllPossibleTargetIdFeatures("amdgcn-amd-amdhsa", "gfx906")).toEqual(["sramecc", "xnack"]);
    expect(getAllPossibleTargetIdFeatures("amdgcn-amd-amdhsa", "stoney")).toEqual(["xnack"]);
    expect(getAllPossibleTargetIdFeatures("nvptx64-nvidia-cuda", "sm_70")).toEqual([]);
  });

  it("formatCanonicalTargetId sorts by bytes", () => {
    expect(formatCanonicalTargetId("gfx908", new Map([["xnack", false], ["sramecc", true]]))).toBe("gfx908:sramecc+:xnack-");
    expect(formatCanonicalTargetId("p", new Map([["b", true], ["B", true], ["", false]]))).toBe("p:-:B+:b+");
  });

  it("compareByteOrder is code-point order", () => {
    expect(["b", "a", "B", "\u{1F600}", "\uFFFF", ""].sort(compareByteOrder)).toEqual(["", "B", "a", "b", "\uFFFF", "\u{1F600}"]);
  });

  it("formats clang's invalid target ID diagnostic", () => {
    expect(formatClangInvalidTargetIdMessage("gfx908:xnack")).toBe(
      "invalid target ID 'gfx908:xnack'; format is a processor name followed by an optional colon-delimited list of " +
      "features followed by an enable/disable sign (e.g., 'gfx908:sramecc+:xnack-')");
  });
});
