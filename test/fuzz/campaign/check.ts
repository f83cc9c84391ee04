/**
 * One fuzz case, start to finish, and the properties every parser must keep:
 * - only OffloadKitError escapes (anything else is a crash);
 * - the Wasm engine and the TS twin agree on result, error code, offset and message (parsers that use
 *   the engines), and a chunked source agrees with in-memory bytes (parsers that read through sources);
 * - an accepted input round-trips: parse(write(parse(x))) gives parse(x) again;
 * - no single allocation exceeds the parser's budget for an input of that size, and the engine window
 *   never grows past what the input could need;
 * - the parser still gives the same answer for a valid input afterwards.
 * Used by the campaign's workers and by the corpus replay in `npm test`.
 */
import type { Engine, EngineKind } from "../../../src/engine/engine.js";
import { createEngine } from "../../../src/engine/select.js";
import { beginWatch, endWatch } from "./alloc.js";
import { Disagreement, Escaped, outcomeOf, same } from "./plain.js";
import type { Outcome } from "./plain.js";
import { Rand } from "./rand.js";
import { mutate } from "./sample.js";
import type { FuzzTarget, RunContext } from "./target.js";

export type FailureKind = "crash" | "hang" | "disagreement" | "round-trip" | "allocation" | "afterwards";

export interface Failure {
  readonly kind: FailureKind;
  readonly detail: string;
}

/** Window sizes cases run with: small ones force the resumable walks to reload. */
export const WINDOWS = [96, 160, 256, 4096, 65536] as const;

const engines = new Map<string, Engine>();

function engineFor(kind: EngineKind, capacity: number): Engine {
  const key = `${kind}:${capacity}`;
  let engine = engines.get(key);
  if (engine === undefined || engine.windowCapacity !== capacity) {
    engine = createEngine(kind, capacity);
    engines.set(key, engine);
  }
  return engine;
}

/** Default allocation budget: four times the input plus 64 KiB of fixed-size scratch (windows, probes). */
export function defaultBudget(length: number): number {
  return 4 * length + 64 * 1024;
}

/** Windows may grow over spread-out metadata, but never past what the input could hold. */
function windowBound(capacity: number, length: number): number {
  return Math.max(capacity, 2 * length + 4096);
}

export interface CaseStats {
  accepted: boolean;
  largest: number;
}

function describeOutcome(o: Outcome): string {
  const text = JSON.stringify(o);
  return text.length > 600 ? `${text.slice(0, 600)}...` : text;
}

/**
 * Runs `input` through every check that does not need a valid reference; returns the first failure.
 * `capacity` picks the engines' window size.
 */
export async function checkInput(target: FuzzTarget, input: Uint8Array, capacity: number, chunked: boolean, stats?: CaseStats): Promise<Failure | undefined> {
  const wasm = engineFor("wasm", capacity);
  const ts = engineFor("ts", capacity);
  const budget = (target.allocBudget ?? defaultBudget)(input.length);
  const primary: RunContext = { engine: wasm, chunked: false };
  let a: Outcome;
  try {
    beginWatch();
    a = await outcomeOf(() => target.run(input, primary));
    const largest = endWatch();
    if (stats) stats.largest = Math.max(stats.largest, largest);
    if (largest > budget) return { kind: "allocation", detail: `a ${largest}-byte allocation for a ${input.length}-byte input (budget ${budget})` };
    const others: [string, RunContext][] = [];
    if (target.engines) others.push(["ts engine", { engine: ts, chunked: false }]);
    if (target.sources && chunked) others.push(["chunked source", { engine: target.engines ? ts : wasm, chunked: true }]);
    for (const [label, ctx] of others) {
      beginWatch();
      const b = await outcomeOf(() => target.run(input, ctx));
      const largestB = endWatch();
      if (largestB > budget) return { kind: "allocation", detail: `${label}: a ${largestB}-byte allocation for a ${input.length}-byte input (budget ${budget})` };
      if (!same(a, b)) return { kind: "disagreement", detail: `wasm engine: ${describeOutcome(a)}\n${label}: ${describeOutcome(b)}` };
    }
  } catch (e) {
    endWatch();
    if (e instanceof Escaped) {
      if (e.original instanceof Disagreement) return { kind: "disagreement", detail: e.original.message };
      return { kind: "crash", detail: crashText(e.original) };
    }
    throw e;
  }
  for (const engine of [wasm, ts]) {
    if (engine.windowCapacity > windowBound(capacity, input.length)) {
      const grown = engine.windowCapacity;
      engines.delete(`${engine.kind}:${capacity}`);
      return { kind: "allocation", detail: `the ${engine.kind} engine's window grew to ${grown} bytes for a ${input.length}-byte input` };
    }
  }
  if ("ok" in a) {
    if (stats) stats.accepted = true;
    if (target.roundTrip) {
      try {
        const complaint = await target.roundTrip(input, primary);
        if (complaint !== undefined) return { kind: "round-trip", detail: complaint };
      } catch (e) {
        return { kind: "round-trip", detail: `round trip threw: ${crashText(e)}` };
      }
    }
  }
  return undefined;
}

export function crashText(e: unknown): string {
  if (!(e instanceof Error)) return `non-error thrown: ${String(e)}`;
  const frames = (e.stack ?? "").split("\n").slice(1, 4).map((l) => l.trim()).join(" | ");
  return `${e.name}: ${e.message}${frames ? ` (${frames})` : ""}`;
}

export interface GeneratedCase {
  readonly input: Uint8Array;
  readonly valid: Uint8Array;
  readonly capacity: number;
  readonly chunked: boolean;
}

/** The case `index` of `target` under `seed`, regenerated from scratch (same bytes in any process). */
export function generateCase(target: FuzzTarget, seed: string, index: number): GeneratedCase {
  const r = new Rand(`${seed}/${target.name}/${index}`);
  const capacity = r.pick(WINDOWS);
  const chunked = r.bool(0.25);
  const sample = target.generate(r);
  const input = r.bool(0.08) ? sample.bytes : mutate(r, sample, { other: () => target.generate(r), dictionary: target.dictionary, magic: target.magic });
  return { input, valid: sample.bytes, capacity, chunked };
}

/** Runs case `index`: the valid input first (its outcome is the reference), the mutated one, the valid one again. */
export async function runCase(target: FuzzTarget, seed: string, index: number, stats?: CaseStats): Promise<{ failure?: Failure; input: Uint8Array; capacity: number; chunked: boolean }> {
  const c = generateCase(target, seed, index);
  const wasm = engineFor("wasm", c.capacity);
  let before: Outcome;
  try {
    before = await outcomeOf(() => target.run(c.valid, { engine: wasm, chunked: false }));
  } catch (e) {
    // A generator bug or a parser bug on a valid input: report it against the valid input.
    return { failure: { kind: "crash", detail: `on the generated valid input: ${crashText(e instanceof Escaped ? e.original : e)}` }, input: c.valid, capacity: c.capacity, chunked: false };
  }
  const failure = await checkInput(target, c.input, c.capacity, c.chunked, stats);
  if (failure) return { failure, ...c };
  const after = await outcomeOf(() => target.run(c.valid, { engine: engineFor("wasm", c.capacity), chunked: false })).catch((e) => e as Error);
  if (after instanceof Error || !same(before, after)) {
    return { failure: { kind: "afterwards", detail: `a valid input read differently after this one: ${after instanceof Error ? crashText(after) : describeOutcome(after)}` }, ...c };
  }
  return c;
}

/**
 * Shrinks a failing input while it still fails the same way (chunk deletion, then byte zeroing), within
 * `budget` re-runs. Hangs are not minimised here: re-running them needs the watchdog.
 */
export async function minimise(target: FuzzTarget, input: Uint8Array, capacity: number, chunked: boolean, kind: FailureKind, budget = 3000): Promise<Uint8Array> {
  let best = input;
  let runs = 0;
  const stillFails = async (candidate: Uint8Array) => {
    runs++;
    const f = await checkInput(target, candidate, capacity, chunked);
    return f !== undefined && f.kind === kind;
  };
  for (let chunk = Math.max(1, best.length >> 1); chunk >= 1 && runs < budget; chunk >>= 1) {
    let progress = true;
    while (progress && runs < budget) {
      progress = false;
      for (let at = 0; at < best.length && runs < budget; at += chunk) {
        const candidate = new Uint8Array(best.length - Math.min(chunk, best.length - at));
        candidate.set(best.subarray(0, at));
        candidate.set(best.subarray(at + chunk), at);
        if (await stillFails(candidate)) {
          best = candidate;
          progress = true;
        }
      }
    }
  }
  for (let at = 0; at < best.length && runs < budget; at++) {
    if (best[at] === 0) continue;
    const candidate = best.slice();
    candidate[at] = 0;
    if (await stillFails(candidate)) best = candidate;
  }
  return best;
}
