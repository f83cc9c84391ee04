/**
 * Code object v2's metadata YAML (src/formats/amdgpu-yaml.ts): the document LLVM 14 writes, the subset's
 * forms, and hostile text (each refusal a typed error at the offending line's offset). The differential test
 * against llvm-readelf-14 is in test/kernels/metadata-native.test.ts.
 */
import { describe, expect, it } from "vitest";
import { MAX_YAML_LINE, decodeAmdgpuYaml } from "../../src/formats/amdgpu-yaml.js";
import { msgpackToJson } from "../../src/formats/msgpack.js";

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const json = (s: string): unknown => msgpackToJson(decodeAmdgpuYaml(text(s)));

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (e) {
    return e;
  }
  return undefined;
}

const LLVM14 = `---
Version:         [ 1, 0 ]
Kernels:
  - Name:            add
    SymbolName:      'add@kd'
    Language:        OpenCL C
    LanguageVersion: [ 2, 0 ]
    Args:
      - TypeName:        'float*'
        Size:            8
        ValueKind:       GlobalBuffer
        IsConst:         true
      - Size:            8
        ValueKind:       HiddenNone
    CodeProps:
      KernargSegmentSize: 80
      GroupSegmentFixedSize: 1024
      NumVGPRs:        42
      IsDynamicCallStack: true
...
`;

describe("v2 metadata YAML", () => {
  it("reads the document LLVM 14 writes into the values the msgpack note decodes into", () => {
    expect(json(`${LLVM14}\0\0\0`)).toEqual({
      Version: [1, 0],
      Kernels: [{
        Name: "add", SymbolName: "add@kd", Language: "OpenCL C", LanguageVersion: [2, 0],
        Args: [{ TypeName: "float*", Size: 8, ValueKind: "GlobalBuffer", IsConst: true }, { Size: 8, ValueKind: "HiddenNone" }],
        CodeProps: { KernargSegmentSize: 80, GroupSegmentFixedSize: 1024, NumVGPRs: 42, IsDynamicCallStack: true },
      }],
    });
    expect(decodeAmdgpuYaml(text(LLVM14)).get("Kernels")).toBeInstanceOf(Array);
  });

  it("reads the subset's scalars: quotes, escapes, hex, negatives, big integers, empty collections, UTF-8", () => {
    expect(json("a: 'it''s'\nb: \"x\\ty\\x41\\\\\"\nc: 0x10\nd: -3\ne: 99999999999999999999\nf: []\ng: {}\nh: naïve\ni:\n'j k': [ 'a, b', 2 ]\n")).toEqual({
      a: "it's", b: "x\tyA\\", c: 16, d: -3, e: "99999999999999999999", f: [], g: {}, h: "naïve", i: null, "j k": ["a, b", 2],
    });
    expect(json("Kernels:\n- Name: a\n- Name: b\nVersion: [ 1, 0 ]\n")).toEqual({ Kernels: [{ Name: "a" }, { Name: "b" }], Version: [1, 0] });
    expect(json("")).toEqual({});
  });

  it("refuses what is outside the subset or damaged, with a typed error at the line's offset", () => {
    const cases: [string, number][] = [
      ["a: 1\n  b: 2\n", 5],
      ["a: 1\na: 2\n", 5],
      ["a: &x 1\n", 3],
      ["a: [ [ 1 ] ]\n", 3],
      ["a: 'open\n", 3],
      ["a: { b: 1 }\n", 3],
      ["\ta: 1\n", 0],
      ["a: 1\n...\nb: 2\n", 9],
      ["- 1\n- 2\n", 0],
      ["a: 1\0x", 5],
      ["a: \"\\q\"\n", 3],
      ["just text\n", 0],
    ];
    for (const [input, offset] of cases) {
      expect(thrown(() => decodeAmdgpuYaml(text(input), { baseOffset: 1000 })), JSON.stringify(input)).toMatchObject({ code: "AMDGPU_YAML_MALFORMED", offset: 1000 + offset, field: "yaml" });
    }
  });

  it("bounds nesting and line length", () => {
    let deep = "";
    for (let i = 0; i < 40; i++) deep += `${" ".repeat(2 * i)}k${i}:\n`;
    deep += `${" ".repeat(80)}v: 1\n`;
    expect(thrown(() => decodeAmdgpuYaml(text(deep)))).toMatchObject({ code: "AMDGPU_YAML_MALFORMED", message: expect.stringContaining("nesting deeper than 16") });
    let sequences = "";
    for (let i = 0; i < 40; i++) sequences += `${" ".repeat(2 * i)}-\n`;
    expect(thrown(() => decodeAmdgpuYaml(text(`a:\n${sequences.replace(/^/gm, "  ")}`)))).toMatchObject({ code: "AMDGPU_YAML_MALFORMED" });
    expect(thrown(() => decodeAmdgpuYaml(text(`a: '${"x".repeat(MAX_YAML_LINE)}'\n`)))).toMatchObject({ code: "AMDGPU_YAML_MALFORMED", offset: 0 });
  });

  it("never throws anything but its typed error on mangled text", () => {
    const base = text(LLVM14);
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
    const alphabet = " -:'\"[]{}\n\t#&a1\\";
    for (let i = 0; i < 3000; i++) {
      const bytes = base.slice(0, next() % base.length);
      for (let k = next() % 6; k > 0; k--) bytes[next() % Math.max(1, bytes.length)] = alphabet.charCodeAt(next() % alphabet.length);
      const e = thrown(() => decodeAmdgpuYaml(bytes));
      if (e !== undefined) expect(e).toMatchObject({ code: "AMDGPU_YAML_MALFORMED" });
    }
  });
});
