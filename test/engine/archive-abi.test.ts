// The archive kernel's constants (kinds, walk flags, name kinds) are written twice: in assembly/ar.ts
// and in src/engine/layout.ts. This keeps them equal.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as layout from "../../src/engine/layout.js";

describe("archive kernel constants", () => {
  it("assembly/ar.ts and src/engine/layout.ts agree", () => {
    const text = readFileSync(new URL("../../assembly/ar.ts", import.meta.url), "utf8");
    const found = [...text.matchAll(/export const (AR_(?:KIND|WALK|NAME)_\w+): \w+ = (\d+);/g)];
    expect(found.length).toBe(12);
    for (const [, name, value] of found) expect((layout as Record<string, unknown>)[name], name).toBe(Number(value));
  });
});
