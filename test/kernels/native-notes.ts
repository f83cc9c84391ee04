/**
 * What the native tools say about code objects, for the kernels tests: `llvm-readelf --notes` read back into
 * values (the YAML LLVM's msgpack::Document prints), and code objects built by clang from small sources
 * (HIP through test/fixtures/hip-standin's header, OpenCL for the v2/v3 notes clang-19 no longer writes).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runNative } from "../native.js";

export const HIP_STANDIN = join(import.meta.dirname, "../fixtures/hip-standin");

/** A YAML value as llvm-readelf prints it: scalars stay text. */
export type YamlValue = string | YamlValue[] | { [key: string]: YamlValue };

function scalar(text: string): string {
  const t = text.trim();
  if (t.startsWith("'") && t.endsWith("'") && t.length >= 2) return t.slice(1, -1).replace(/''/g, "'");
  if (t.startsWith('"') && t.endsWith('"') && t.length >= 2) return JSON.parse(t) as string;
  return t;
}

/** The block-style YAML subset `yaml::Output` writes: mappings, `- ` sequences, `[ a, b ]` flow sequences, quoted scalars. */
export function parseYamlSubset(input: readonly string[]): YamlValue {
  const lines = [...input];
  let at = 0;
  const indentOf = (line: string): number => line.length - line.trimStart().length;
  const splitKey = (text: string): [string, string] => {
    const colon = text.search(/:( |$)/);
    if (colon < 0) throw new Error(`not a key: ${text}`);
    return [scalar(text.slice(0, colon)), text.slice(colon + 1).trim()];
  };
  const inline = (text: string): YamlValue => {
    if (text.startsWith("[")) {
      const body = text.slice(1, text.lastIndexOf("]")).trim();
      return body === "" ? [] : body.split(",").map(scalar);
    }
    return scalar(text);
  };
  const node = (indent: number): YamlValue => {
    const first = lines[at]!;
    if (first.trimStart().startsWith("- ") || first.trim() === "-") {
      const items: YamlValue[] = [];
      while (at < lines.length && indentOf(lines[at]!) === indent && lines[at]!.trimStart().startsWith("-")) {
        const rest = lines[at]!.trimStart().slice(2);
        if (/^[^'"[].*?:( |$)/.test(rest)) {
          // A mapping whose first key sits on the dash's line: read as if the dash were spaces.
          lines[at] = " ".repeat(indent + 2) + rest;
          items.push(node(indent + 2));
        } else {
          items.push(inline(rest));
          at++;
        }
      }
      return items;
    }
    const map: { [key: string]: YamlValue } = {};
    while (at < lines.length && indentOf(lines[at]!) === indent && !lines[at]!.trimStart().startsWith("- ")) {
      const [key, value] = splitKey(lines[at]!.trim());
      at++;
      if (value !== "") map[key] = inline(value);
      else if (at < lines.length && (indentOf(lines[at]!) > indent || (indentOf(lines[at]!) === indent && lines[at]!.trimStart().startsWith("- ")))) {
        map[key] = node(indentOf(lines[at]!));
      } else map[key] = "";
    }
    return map;
  };
  return node(indentOf(lines[0]!));
}

/**
 * Each AMDGPU metadata document `llvm-readelf --notes` prints for `file`, in note order; `header` picks code
 * object v2's ("AMD HSA Metadata:", the note's YAML printed as is).
 */
export function readelfMetadata(tool: string, file: string, header = "AMDGPU Metadata:"): YamlValue[] {
  const run = runNative(tool, ["--notes", file]);
  if (run.status !== 0) throw new Error(`${tool} --notes ${file}: ${run.stderr}`);
  const lines = run.stdout.toString("utf8").split("\n");
  const documents: YamlValue[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== header) continue;
    let start = i + 1;
    if (lines[start]!.trim() === "---") start++;
    let end = start;
    while (end < lines.length && lines[end]!.trim() !== "...") end++;
    documents.push(parseYamlSubset(lines.slice(start, end).filter((l) => l.trim() !== "")));
    i = end;
  }
  return documents;
}

/** A decoded value with its scalars as llvm-readelf prints them, for comparison with `YamlValue`. */
export function asYamlText(value: unknown): YamlValue {
  if (Array.isArray(value)) return value.map(asYamlText);
  if (value !== null && typeof value === "object") {
    const out: { [key: string]: YamlValue } = {};
    for (const [k, v] of Object.entries(value)) out[k] = asYamlText(v);
    return out;
  }
  return String(value);
}

/** Compiles HIP `source` for `arches` into a code object bundle (or one code object with `--no-gpu-bundle-output`). */
export function buildHip(dir: string, name: string, source: string, arches: readonly string[], flags: readonly string[] = [], clang = "clang-19"): string {
  const src = join(dir, `${name}.hip`);
  writeFileSync(src, `#include "hip_runtime.h"\n#define __shared__ __attribute__((shared))\n${source}`);
  const out = join(dir, `${name}.o`);
  const run = runNative(clang, [
    "-x", "hip", ...arches.map((a) => `--offload-arch=${a}`), "-nogpulib", "-nogpuinc", `-I${HIP_STANDIN}`, "--cuda-device-only", "-c", "-o", out, src, ...flags,
  ]);
  if (run.status !== 0) throw new Error(`${clang} failed: ${run.stderr}`);
  return out;
}

/** Kernels for the tests: templates in a namespace, LDS, register pressure and a launch bound. */
export const TEST_KERNELS = `
namespace ns { template <typename T, int N> struct Box { T v[N]; }; }
template <typename T, unsigned N> __global__ void fill(T *x, ns::Box<T, 4> b, unsigned i) { __shared__ T tile[N]; tile[i % N] = b.v[1]; x[0] = tile[(i + 1) % N]; }
template __global__ void fill<float, 256>(float *, ns::Box<float, 4>, unsigned);
template __global__ void fill<double, 4096>(double *, ns::Box<double, 4>, unsigned);
template <int N> __global__ void pressure(float *x, const float *y) {
  float acc[N];
#pragma unroll
  for (int i = 0; i < N; i++) acc[i] = y[i * 7];
#pragma unroll
  for (int k = 0; k < 3; k++)
#pragma unroll
    for (int i = 0; i < N; i++) acc[i] = acc[i] * acc[(i + k + 1) % N] + y[i + k];
  float s = 0;
#pragma unroll
  for (int i = 0; i < N; i++) s += acc[i] * (float)i;
  x[0] = s;
}
template __global__ void pressure<8>(float *, const float *);
template __global__ void pressure<48>(float *, const float *);
template __global__ void pressure<100>(float *, const float *);
template __global__ void pressure<180>(float *, const float *);
__global__ __attribute__((amdgpu_flat_work_group_size(64, 256))) void bounded(float *x, unsigned i) { __shared__ float t[5000]; t[i % 5000] = x[1]; x[0] = t[(i * 3) % 5000]; }
__global__ void scale(float *x, float s) { x[0] *= s; }
`;
