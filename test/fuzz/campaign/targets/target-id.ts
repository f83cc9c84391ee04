/**
 * Target-ID and entry-ID strings (src/target-id/, src/llvm/triple.ts, `check --gpu`): bundle entry IDs
 * as LLVM 14, 19 and 22 parse and store them, target IDs against AMDGPU, NVPTX and host triples,
 * compatibility and conflicts, GPU descriptions. Round trip: normalising a stored ID again changes nothing,
 * and a canonical target ID parses to itself.
 */
import { parseGpu, checkEntry } from "../../../../src/inspect/check.js";
import { Triple } from "../../../../src/llvm/triple.js";
import { bundleIdString, formatInvalidTargetMessage, parseOffloadTarget } from "../../../../src/target-id/entry-id.js";
import { explainTargetIdCompatibility, getConflictTargetIdCombination } from "../../../../src/target-id/compat.js";
import { parseTargetId, parseTargetIdFormat } from "../../../../src/target-id/parse.js";
import { attempt } from "../plain.js";
import type { Rand } from "../rand.js";
import { latin1 } from "../sample.js";
import type { Sample } from "../sample.js";
import type { FuzzTarget } from "../target.js";

const KINDS = ["hip", "openmp", "host", "hipv4", "cuda", "sycl", ""];
const TRIPLES = ["amdgcn-amd-amdhsa", "amdgcn-amd-amdhsa-", "x86_64-unknown-linux-gnu", "nvptx64-nvidia-cuda", "spirv64-amd-amdhsa",
  "r600--", "amdgcn--", "aarch64-linux-gnu", "x86_64-pc-windows-msvc", "armv7-none-eabi", "amdgcn-amd-amdpal", "riscv64", "unknown", "-"];
const PROCESSORS = ["gfx906", "gfx90a", "gfx908", "gfx942", "gfx1030", "gfx1100", "gfx9-generic", "gfx10-3-generic", "gfx803", "gfx801",
  "fiji", "carrizo", "sm_70", "sm_90a", "amdgcnspirv", "cypress", "", "gfx"];
const FEATURES = ["xnack", "sramecc", "wavefrontsize64", "cumode", ""];
const TOKENS = [...KINDS, ...TRIPLES, ...PROCESSORS, ...FEATURES, "-", "--", ":", "+", "-", "::", ":xnack+", ":sramecc-", "/", "\0", "\u00e9"];

function targetIdText(r: Rand): string {
  let text = r.pick(PROCESSORS);
  for (let k = r.int(3); k > 0; k--) text += `:${r.pick(FEATURES)}${r.pick(["+", "-", "", "+-"])}`;
  return text;
}

function targetSample(r: Rand): Sample {
  const shape = r.int(3);
  let text: string;
  if (shape === 0) text = targetIdText(r);
  else text = `${r.pick(KINDS)}-${r.pick(TRIPLES)}${r.bool(0.8) ? `-${r.bool(0.3) ? "" : "-"}${targetIdText(r)}` : ""}`;
  return { bytes: latin1(text), fields: [] };
}

const decoder = new TextDecoder("latin1");

function normalised(text: string, version: 14 | 19 | 22) {
  const info = parseOffloadTarget(text, version);
  return { id: bundleIdString(info), invalid: formatInvalidTargetMessage(text, info) ?? null, targetId: info.targetId };
}

export const targetIdTarget: FuzzTarget = {
  name: "target-id",
  about: "entry IDs (14/19/22), target IDs on AMDGPU/NVPTX/host triples, triples, compatibility, conflicts, --gpu",
  engines: false,
  sources: false,
  dictionary: TOKENS,
  generate: targetSample,
  run(input) {
    const text = decoder.decode(input);
    const colon = text.indexOf(":");
    const tid = text.substring(text.lastIndexOf("-") + 1);
    return {
      ids: ([14, 19, 22] as const).map((v) => normalised(text, v)),
      format: parseTargetIdFormat(text),
      amdgcn: parseTargetId("amdgcn-amd-amdhsa", tid),
      nvptx: parseTargetId("nvptx64-nvidia-cuda", tid, 22),
      host: parseTargetId("x86_64-unknown-linux-gnu", tid),
      triple: (() => {
        const t = new Triple(text.substring(0, colon < 0 ? text.length : colon));
        return [t.str(), t.arch, t.os, t.getArchName(), t.getEnvironmentName()];
      })(),
      compatible: explainTargetIdCompatibility(tid, "gfx90a:xnack+"),
      conflict: getConflictTargetIdCombination([tid, "gfx90a:xnack-", "gfx906"]) ?? null,
      gpu: attempt(() => {
        const gpu = parseGpu(tid);
        return { gpu, entry: checkEntry(text, gpu) };
      }),
    };
  },
  roundTrip(input) {
    const text = decoder.decode(input);
    // A stored ID is read back as the same kind, triple and target ID. Only for targets the bundler
    // accepts and whose target ID names a GPU: LLVM reads "" as a known arch (OffloadArch::UNUSED), so
    // an ID without one re-reads with the whole text as its target ID, in LLVM too.
    // 22 only from 19's check on: its triple normalisation (Triple::normalize) is not idempotent for
    // malformed triples ("amdgcn-a-amd-amdhsa"), in LLVM as here.
    for (const version of [19] as const) {
      const info = parseOffloadTarget(text, version);
      if (formatInvalidTargetMessage(text, info) !== undefined || info.targetId === "" || info.targetId === text) continue;
      // 19 takes the target ID from the first place its GPU name appears: a name written twice re-reads longer.
      const base = text.split(":")[0]!;
      const gpu = base.substring(base.lastIndexOf("-") + 1);
      if (text.indexOf(gpu) !== base.lastIndexOf("-") + 1) continue;
      const stored = bundleIdString(info);
      const again = normalised(stored, version).id;
      if (again !== stored) return `LLVM ${version}: '${text}' is stored as '${stored}', which is stored again as '${again}'`;
    }
    const tid = text.substring(text.lastIndexOf("-") + 1);
    const parsed = parseTargetId("amdgcn-amd-amdhsa", tid);
    if (parsed.ok) {
      const again = parseTargetId("amdgcn-amd-amdhsa", parsed.value.canonical);
      if (!again.ok || again.value.canonical !== parsed.value.canonical) return `canonical target ID '${parsed.value.canonical}' does not parse to itself`;
    }
    return undefined;
  },
};
