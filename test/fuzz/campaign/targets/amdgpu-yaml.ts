/**
 * Code object v2's metadata YAML (src/formats/amdgpu-yaml.ts): documents shaped as LLVM 14's YAML I/O writes
 * NT_AMD_HSA_METADATA (`Version`, `Kernels` with `Args` and `CodeProps`), with quoted, plain and flow scalars.
 * Round trip: the decoded document written again as YAML (every string quoted, containers as blocks) decodes
 * to itself.
 */
import { decodeAmdgpuYaml } from "../../../../src/formats/amdgpu-yaml.js";
import type { MsgpackValue } from "../../../../src/formats/msgpack.js";
import { attempt, plain } from "../plain.js";
import type { Rand } from "../rand.js";
import type { Sample } from "../sample.js";
import type { FuzzTarget } from "../target.js";

const NAMES = ["add", "_Z5scalePff", "'quoted''name'", "\"dq\\tname\"", "naïve", "a: b", "x#y"];
const TOKENS = ["---", "...", "- ", ": ", "'", "''", "\"", "\\x41", "[ ", " ]", "{}", "[]", "\n", "  ", "    ", "\t", "#", "&a", "*a", "!!str", "|",
  "Kernels:", "CodeProps:", "Args:", "Name:", "SymbolName:", "NumVGPRs:", "0x10", "-1", "true", "99999999999999999999"];

function scalar(r: Rand): string {
  return r.pick([String(r.int(70000)), "true", "false", `'${r.pick(NAMES).replace(/'/g, "''")}'`, "GlobalBuffer", "OpenCL C", "[ 2, 0 ]", "[]", "0x40", `"${"a\\tb"}"`]);
}

function yamlDocument(r: Rand): string {
  const lines = ["---", `Version:         [ 1, ${r.int(2)} ]`];
  if (r.bool(0.9)) lines.push("Kernels:");
  for (let k = r.int(4); k > 0; k--) {
    const name = r.pick(NAMES);
    lines.push(`  - Name:            ${/^[a-z_]+$/i.test(name) ? name : `'${name.replace(/'/g, "''")}'`}`, `    SymbolName:      '${name.replace(/'/g, "''")}@kd'`);
    if (r.bool()) lines.push("    Language:        OpenCL C", "    LanguageVersion: [ 2, 0 ]");
    if (r.bool(0.7)) {
      lines.push("    Args:");
      for (let a = r.int(3) + 1; a > 0; a--) lines.push(`      - TypeName:        ${scalar(r)}`, `        Size:            ${r.int(16)}`, `        ValueKind:       ${r.pick(["GlobalBuffer", "ByValue", "HiddenNone"])}`);
    }
    lines.push("    CodeProps:");
    for (const key of ["KernargSegmentSize", "GroupSegmentFixedSize", "PrivateSegmentFixedSize", "WavefrontSize", "NumSGPRs", "NumVGPRs", "MaxFlatWorkGroupSize"]) {
      if (r.bool(0.9)) lines.push(`      ${key}: ${r.pick([String(r.int(70000)), "64", scalar(r)])}`);
    }
    if (r.bool(0.3)) lines.push(`      IsDynamicCallStack: ${r.pick(["true", "false"])}`);
  }
  if (r.bool(0.7)) lines.push("...");
  return `${lines.join("\n")}\n${r.bool(0.5) ? "\0" : ""}`;
}

function yamlSample(r: Rand): Sample {
  return { bytes: new TextEncoder().encode(yamlDocument(r)), fields: [] };
}

/** A string as a YAML scalar that decodes back to it: single quotes, or double quotes with escapes for control characters. */
function quote(text: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/[\x00-\x1f"\\]/.test(text) && !text.includes("\n")) return `'${text.replace(/'/g, "''")}'`;
  // eslint-disable-next-line no-control-regex
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[\x00-\x1f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`)}"`;
}

/** `value` as block YAML at `indent` (the writer the round trip needs; the decoder reads LLVM's, a superset). */
function writeYaml(value: MsgpackValue, indent: number, out: string[]): void {
  const pad = " ".repeat(indent);
  const inline = (v: MsgpackValue): string | undefined => {
    if (v === null) return "";
    if (typeof v === "string") return quote(v);
    if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") return String(v);
    if (Array.isArray(v) && v.length === 0) return "[]";
    if (v instanceof Map && v.size === 0) return "{}";
    return undefined;
  };
  if (value instanceof Map) {
    for (const [k, v] of value) {
      const text = inline(v);
      out.push(`${pad}${quote(String(k))}:${text === undefined || text === "" ? "" : ` ${text}`}`);
      if (text === undefined) writeYaml(v, indent + 2, out);
    }
  } else if (Array.isArray(value)) {
    for (const v of value) {
      const text = inline(v);
      out.push(`${pad}-${text === undefined || text === "" ? "" : ` ${text}`}`);
      if (text === undefined) writeYaml(v, indent + 2, out);
    }
  }
}

export const amdgpuYamlTarget: FuzzTarget = {
  name: "amdgpu-yaml",
  about: "code object v2 metadata: NT_AMD_HSA_METADATA YAML (block maps and sequences, flow sequences, quoted scalars)",
  engines: false,
  sources: false,
  dictionary: TOKENS,
  generate: yamlSample,
  run: (input) => ({ document: attempt(() => decodeAmdgpuYaml(input, { baseOffset: 100 })) }),
  roundTrip(input) {
    let document;
    try {
      document = decodeAmdgpuYaml(input);
    } catch {
      return undefined;
    }
    const lines: string[] = [];
    writeYaml(document, 0, lines);
    let again;
    try {
      again = decodeAmdgpuYaml(new TextEncoder().encode(lines.join("\n")));
    } catch (e) {
      return `the document written again does not decode: ${(e as Error).message}`;
    }
    return JSON.stringify(plain(document)) === JSON.stringify(plain(again)) ? undefined : "the document written again decodes differently";
  },
};
