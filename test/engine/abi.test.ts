// The TypeScript mirror of the Wasm ABI (layout constants and status codes) must equal the
// AssemblyScript definitions: they are written twice, so a test keeps them from drifting.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as layout from "../../src/engine/layout.js";
import { Status } from "../../src/engine/status.js";

const root = new URL("../../", import.meta.url);

function asConstants(file: string): Map<string, number> {
  const text = readFileSync(new URL(file, root), "utf8");
  const out = new Map<string, number>();
  for (const m of text.matchAll(/export const (\w+): \w+ = ([^;]+);/g)) {
    // Constant expressions in layout.ts are simple integer arithmetic.
    out.set(m[1], Function(`return (${m[2]});`)() as number);
  }
  return out;
}

describe("Wasm ABI mirror", () => {
  it("layout constants agree", () => {
    const constants = asConstants("assembly/layout.ts");
    expect(constants.size).toBeGreaterThan(10);
    for (const [name, value] of constants) {
      expect((layout as Record<string, unknown>)[name], name).toBe(value);
    }
  });

  it("status codes agree in both directions", () => {
    const text = readFileSync(new URL("assembly/status.ts", root), "utf8");
    const body = text.slice(text.indexOf("export enum Status"));
    const codes = new Map<string, number>();
    for (const m of body.matchAll(/^\s*(\w+) = (-?\d+),/gm)) codes.set(m[1], Number(m[2]));
    expect(codes.size).toBeGreaterThan(5);
    expect(Object.fromEntries(codes)).toEqual(Status);
  });

  it("bundle record size agrees", () => {
    const text = readFileSync(new URL("assembly/bundle.ts", root), "utf8");
    expect(text).toContain(`BUNDLE_RECORD_F64S: i32 = ${layout.BUNDLE_RECORD_F64S};`);
  });
});
