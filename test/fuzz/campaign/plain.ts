/** Outcomes as plain JSON-comparable values: bytes as hex (hashed when long), maps as entries, sources dropped. */
import { createHash } from "node:crypto";
import { OffloadKitError } from "../../../src/engine/errors.js";

export function plain(value: unknown, depth = 0): unknown {
  if (depth > 12) return "<deep>";
  if (value === null || value === undefined) return value ?? null;
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "number") return Number.isNaN(value) ? "NaN" : value;
  if (typeof value !== "object") return typeof value === "function" ? undefined : value;
  if (value instanceof Uint8Array) {
    return value.length <= 64 ? Buffer.from(value).toString("hex") : `sha1:${createHash("sha1").update(value).digest("hex")}:${value.length}`;
  }
  if (value instanceof Map) return [...value.entries()].map(([k, v]) => [plain(k, depth + 1), plain(v, depth + 1)]);
  if (value instanceof Set) return [...value].map((v) => plain(v, depth + 1));
  if (Array.isArray(value)) return value.map((v) => plain(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // Byte sources are how results point at bytes; what they hold is compared through the fields that use them.
    if (k === "source" || k === "engine" || typeof v === "function") continue;
    out[k] = plain(v, depth + 1);
  }
  return out;
}

export type Outcome = { readonly ok: unknown } | { readonly error: string; readonly offset: unknown; readonly field: unknown; readonly message: string };

/** Thrown for anything but OffloadKitError, carrying the original. */
export class Escaped extends Error {
  constructor(readonly original: unknown) {
    super(original instanceof Error ? `${original.name}: ${original.message}` : `non-error thrown: ${String(original)}`);
  }
}

export function errorOutcome(e: unknown): Outcome {
  if (!(e instanceof OffloadKitError)) throw new Escaped(e);
  return { error: e.code, offset: e.offset ?? null, field: e.field ?? null, message: e.message };
}

export async function outcomeOf(run: () => unknown): Promise<Outcome> {
  try {
    let value = run();
    if (value instanceof Promise) value = await value;
    return { ok: plain(value) };
  } catch (e) {
    return errorOutcome(e);
  }
}

export function same(a: Outcome, b: Outcome): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Thrown by a target when two paths that must agree inside one run do not (reported as a disagreement). */
export class Disagreement extends Error {
  override readonly name = "Disagreement";
}

/** One part of a result that may fail on its own: its value, or our error (anything else escapes). */
export function attempt(run: () => unknown): unknown {
  try {
    return { ok: plain(run()) };
  } catch (e) {
    return errorOutcome(e);
  }
}
