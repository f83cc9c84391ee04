/**
 * Deterministic test inputs for the encoders' tests: xorshift32 noise, or (compressible) a few symbols in runs,
 * as code compresses. One generator, so the xz and zstd tests mean the same thing by "code-like".
 */
export function xorshiftBytes(size: number, seed: number, compressible = false): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = compressible ? 0x30 + (x % 5) * ((i >> 6) % 3) : x & 0xff;
  }
  return out;
}
