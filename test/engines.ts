/** The engines every behavioural test runs over (STYLE habit 7). */
import type { Engine, EngineKind } from "../src/engine/engine.js";
import { OffloadKitError } from "../src/engine/errors.js";
import { createEngine } from "../src/engine/select.js";

export const ENGINE_KINDS: readonly EngineKind[] = ["wasm", "ts"];

export function makeEngine(kind: EngineKind, windowCapacity = 1 << 16): Engine {
  return createEngine(kind, windowCapacity);
}

/** A small deterministic PRNG (mulberry32) so property tests are reproducible from their seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomBytes(next: () => number, length: number, alphabet?: Uint8Array): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    out[i] = alphabet ? alphabet[Math.floor(next() * alphabet.length)] : Math.floor(next() * 256);
  }
  return out;
}

/**
 * What a run gives, for comparing engines: its value, or our error's code, offset, field and message.
 * Any other exception is rethrown: it would be a bug, and the property tests must see it.
 */
export function outcome(run: () => unknown): unknown {
  try {
    return { ok: run() };
  } catch (e) {
    if (!(e instanceof OffloadKitError)) throw e;
    return { error: e.code, offset: e.offset, field: e.field, message: e.message };
  }
}

/** Writes `value` as a little-endian u64 at `at`, clipped at the end of `bytes` (for mutating headers). */
export function setU64(bytes: Uint8Array, at: number, value: bigint): void {
  for (let k = 0; k < 8 && at + k < bytes.length; k++) bytes[at + k] = Number((value >> BigInt(8 * k)) & 0xffn);
}
