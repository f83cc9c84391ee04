// The page's report written in pieces (src/inspector/report-json.ts): exactly JSON.stringify(value, null, 2),
// for an `ls --json` report of a real bundle and for the cases JSON.stringify treats specially.
import { describe, expect, it } from "vitest";
import { writeBinaryBundle } from "../../src/formats/bundle.js";
import { locate } from "../../src/inspect/locate.js";
import { locationJson } from "../../src/inspect/location-json.js";
import { jsonPieces, jsonText } from "../../src/inspector/report-json.js";

const pretty = (v: unknown) => JSON.stringify(v, null, 2);
const joined = (v: unknown) => [...jsonPieces(v as object)].join("");

describe("the report in pieces", () => {
  it("writes an ls --json report of a 3,000-entry bundle as JSON.stringify does, in many pieces", () => {
    const bundle = writeBinaryBundle(Array.from({ length: 3000 }, (_, i) => ({ id: i === 0 ? "host-x86_64-unknown-linux-gnu" : `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-\u00e9"${i}`, data: new Uint8Array(4 + (i % 3)) })));
    const value = { files: [locationJson("lib \"x\".so", locate(bundle)), { path: "gone", error: { code: "NOT_FOUND", message: "no\nsuch file" } }] };
    expect(joined(value)).toBe(pretty(value));
    // Each entry is a piece of its own (or less): no piece holds the list.
    const pieces = [...jsonPieces(value)];
    expect(pieces.length).toBeGreaterThan(3000);
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(500);
  });

  it.each([
    ["empty containers", { a: [], b: {}, c: [[], {}], d: [{}] }],
    ["undefined, functions and symbols in objects are left out, in arrays null", { a: undefined, b: [undefined, () => 1, Symbol("s"), 1, { x: undefined }], c: () => 2, d: { e: [1, { f: undefined, g: [2] }] } }],
    ["an object of only left-out keys", { a: { x: undefined, y: [{ z: undefined }] } }],
    ["numbers and strings", { n: [NaN, Infinity, -0, 1e21, 0.1], s: ["\n\t\"\\\u2028\ud800", ""], nested: [[1, [2, [3, []]]]] }],
    ["toJSON", { d: new Date(0), o: { toJSON: () => ({ deep: [1, { x: 2 }] }) } }],
    ["a top-level array", [1, [2], { a: [3, { b: 4 }] }]],
    ["a primitive", 5],
  ])("%s: as JSON.stringify", (_, value) => {
    expect(joined(value)).toBe(pretty(value));
  });

  it("jsonText pauses between slices and gives the same text", async () => {
    const value = { files: [{ entries: Array.from({ length: 20_000 }, (_, i) => ({ id: `e${i}`, offset: i, size: 1 })) }] };
    let pauses = 0;
    // A budget of 0 ms: one slice every 64 pieces at most.
    const chunks = await jsonText(value, 0, async () => void pauses++);
    expect(chunks.join("")).toBe(pretty(value));
    expect(pauses).toBeGreaterThan(20);
    expect(chunks.length).toBe(pauses + 1);
  });
});
