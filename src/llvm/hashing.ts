/**
 * `llvm::hash_value(StringRef)`: the CityHash-derived `hash_combine_range` over the string's bytes
 * (llvm/include/llvm/ADT/Hashing.h, `hash_short` up to 64 bytes, `hash_state` beyond), with the fixed
 * execution seed 0xff51afd7ed558ccd of builds without LLVM_ENABLE_ABI_BREAKING_CHECKS (the Debian 19.1.7
 * and 22.1.8 packages: their llvm/Config/abi-breaking.h defines it to 0). Assertion-enabled builds seed
 * with a code address instead, so their orders differ from run to run and cannot be modelled.
 *
 * `DenseMapInfo<StringRef>::getHashValue` returns this value truncated to `unsigned` (the low 32 bits),
 * and that is what decides the iteration order of `DenseMap<StringRef, …>` (dense-map.ts), which in turn
 * is the order of an offload binary's string entries (spec offload-binary.md §1, "Order of string
 * entries"). Verified against libLLVM-19 and libLLVM-22 on random strings of 0 to 300 bytes
 * (test/llvm/hashing.test.ts holds the vectors).
 *
 * BigInt arithmetic: keys are few and short (a handful per image), so clarity wins over speed here.
 */

const MASK = (1n << 64n) - 1n;
const K0 = 0xc3a5c85c97cb3127n;
const K1 = 0xb492b66fbe98f273n;
const K2 = 0x9ae16a3b2f90404fn;
const K3 = 0xc949d7c7509e6557n;
const K_MUL = 0x9ddfea08eb382d69n;

/** The seed of release builds (get_execution_seed without ABI-breaking checks). */
export const LLVM_HASH_SEED = 0xff51afd7ed558ccdn;

function mul(a: bigint, b: bigint): bigint {
  return (a * b) & MASK;
}

function add(...values: bigint[]): bigint {
  let sum = 0n;
  for (const value of values) sum += value;
  return sum & MASK;
}

function rotr(value: bigint, shift: number): bigint {
  const s = BigInt(shift & 63);
  if (s === 0n) return value;
  return ((value >> s) | (value << (64n - s))) & MASK;
}

function shiftMix(value: bigint): bigint {
  return value ^ (value >> 47n);
}

function fetch64(bytes: Uint8Array, at: number): bigint {
  let value = 0n;
  for (let i = 7; i >= 0; i--) value = (value << 8n) | BigInt(bytes[at + i]!);
  return value;
}

function fetch32(bytes: Uint8Array, at: number): bigint {
  return BigInt((bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0);
}

function hash16(low: bigint, high: bigint): bigint {
  let a = mul(low ^ high, K_MUL);
  a ^= a >> 47n;
  let b = mul(high ^ a, K_MUL);
  b ^= b >> 47n;
  return mul(b, K_MUL);
}

function hash1to3(s: Uint8Array, len: number, seed: bigint): bigint {
  const a = BigInt(s[0]!);
  const b = BigInt(s[len >> 1]!);
  const c = BigInt(s[len - 1]!);
  const y = a + (b << 8n);
  const z = BigInt(len) + (c << 2n);
  return mul(shiftMix(mul(y, K2) ^ mul(z, K3) ^ seed), K2);
}

function hash4to8(s: Uint8Array, len: number, seed: bigint): bigint {
  const a = fetch32(s, 0);
  return hash16(add(BigInt(len), a << 3n), seed ^ fetch32(s, len - 4));
}

function hash9to16(s: Uint8Array, len: number, seed: bigint): bigint {
  const a = fetch64(s, 0);
  const b = fetch64(s, len - 8);
  return hash16(seed ^ a, rotr(add(b, BigInt(len)), len)) ^ b;
}

function hash17to32(s: Uint8Array, len: number, seed: bigint): bigint {
  const a = mul(fetch64(s, 0), K1);
  const b = fetch64(s, 8);
  const c = mul(fetch64(s, len - 8), K2);
  const d = mul(fetch64(s, len - 16), K0);
  return hash16(
    add(rotr((a - b) & MASK, 43), rotr(c ^ seed, 30), d),
    (add(a, rotr(b ^ K3, 20)) - c + BigInt(len) + seed) & MASK,
  );
}

function hash33to64(s: Uint8Array, len: number, seed: bigint): bigint {
  let z = fetch64(s, 24);
  let a = add(fetch64(s, 0), mul(add(BigInt(len), fetch64(s, len - 16)), K0));
  let b = rotr(add(a, z), 52);
  let c = rotr(a, 37);
  a = add(a, fetch64(s, 8));
  c = add(c, rotr(a, 7));
  a = add(a, fetch64(s, 16));
  const vf = add(a, z);
  const vs = add(b, rotr(a, 31), c);
  a = add(fetch64(s, 16), fetch64(s, len - 32));
  z = fetch64(s, len - 8);
  b = rotr(add(a, z), 52);
  c = rotr(a, 37);
  a = add(a, fetch64(s, len - 24));
  c = add(c, rotr(a, 7));
  a = add(a, fetch64(s, len - 16));
  const wf = add(a, z);
  const ws = add(b, rotr(a, 31), c);
  const r = shiftMix(add(mul(add(vf, ws), K2), mul(add(wf, vs), K0)));
  return mul(shiftMix(add(seed ^ mul(r, K0), vs)), K2);
}

function hashShort(s: Uint8Array, len: number, seed: bigint): bigint {
  if (len >= 4 && len <= 8) return hash4to8(s, len, seed);
  if (len > 8 && len <= 16) return hash9to16(s, len, seed);
  if (len > 16 && len <= 32) return hash17to32(s, len, seed);
  if (len > 32) return hash33to64(s, len, seed);
  if (len !== 0) return hash1to3(s, len, seed);
  return K2 ^ seed;
}

/** The 56-byte state `hash_state` keeps for inputs longer than 64 bytes. */
class HashState {
  h0 = 0n;
  h1: bigint;
  h2: bigint;
  h3: bigint;
  h4: bigint;
  h5: bigint;
  h6: bigint;

  constructor(s: Uint8Array, at: number, seed: bigint) {
    this.h1 = seed;
    this.h2 = hash16(seed, K1);
    this.h3 = rotr(seed ^ K1, 49);
    this.h4 = mul(seed, K1);
    this.h5 = shiftMix(seed);
    this.h6 = hash16(this.h4, this.h5);
    this.mix(s, at);
  }

  private static mix32(s: Uint8Array, at: number, a: bigint, b: bigint): [bigint, bigint] {
    a = add(a, fetch64(s, at));
    const c = fetch64(s, at + 24);
    b = rotr(add(b, a, c), 21);
    const d = a;
    a = add(a, fetch64(s, at + 8), fetch64(s, at + 16));
    b = add(b, rotr(a, 44), d);
    a = add(a, c);
    return [a, b];
  }

  mix(s: Uint8Array, at: number): void {
    this.h0 = mul(rotr(add(this.h0, this.h1, this.h3, fetch64(s, at + 8)), 37), K1);
    this.h1 = mul(rotr(add(this.h1, this.h4, fetch64(s, at + 48)), 42), K1);
    this.h0 ^= this.h6;
    this.h1 = add(this.h1, this.h3, fetch64(s, at + 40));
    this.h2 = mul(rotr(add(this.h2, this.h5), 33), K1);
    this.h3 = mul(this.h4, K1);
    this.h4 = add(this.h0, this.h5);
    [this.h3, this.h4] = HashState.mix32(s, at, this.h3, this.h4);
    this.h5 = add(this.h2, this.h6);
    this.h6 = add(this.h1, fetch64(s, at + 16));
    [this.h5, this.h6] = HashState.mix32(s, at + 32, this.h5, this.h6);
    [this.h2, this.h0] = [this.h0, this.h2];
  }

  finalize(length: number): bigint {
    return hash16(
      add(hash16(this.h3, this.h5), mul(shiftMix(this.h1), K1), this.h2),
      add(hash16(this.h4, this.h6), mul(shiftMix(BigInt(length)), K1), this.h0),
    );
  }
}

/** `llvm::hash_value(StringRef)` as a 64-bit unsigned BigInt. */
export function llvmHashValue(bytes: Uint8Array, seed: bigint = LLVM_HASH_SEED): bigint {
  const length = bytes.length;
  if (length <= 64) return hashShort(bytes, length, seed);
  // Whole 64-byte chunks, then the last 64 bytes of the input (overlapping the previous chunk) if the
  // length is not a multiple of 64: hash_combine_range_impl over contiguous bytes.
  const state = new HashState(bytes, 0, seed);
  const alignedEnd = length - (length % 64);
  for (let at = 64; at < alignedEnd; at += 64) state.mix(bytes, at);
  if (length % 64 !== 0) state.mix(bytes, length - 64);
  return state.finalize(length);
}

/** `DenseMapInfo<StringRef>::getHashValue`: the low 32 bits of hash_value, as an unsigned number. */
export function denseMapStringHash(bytes: Uint8Array): number {
  return Number(llvmHashValue(bytes) & 0xffffffffn);
}
