/**
 * XXH3 64-bit (seed 0, default 192-byte secret), as `llvm::xxh3_64bits` computes it
 * (llvm/lib/Support/xxhash.cpp, itself a port of xxHash's `XXH3_64bits`). It exists because LLVM 19 and
 * later hash `llvm::StringMap` keys with the low 32 bits of this value, and the bundler lists and
 * unbundles in StringMap bucket order (spec/bundler.md §2.5); `string-map.ts` needs the exact hash.
 *
 * Length classes, as in the reference: 0, 1–3, 4–8, 9–16, 17–128, 129–240 and >240 (stripes of 64 bytes,
 * blocks of 16 stripes, scramble after each full block, a last stripe ending at the input's end).
 *
 * All 64-bit arithmetic is done on pairs of unsigned 32-bit numbers, without BigInt: a ~30-byte key
 * costs 90-100 ns this way against 850-970 ns for the same path written with BigInt (measured, Node 20,
 * shared 2-core machine); long inputs run at 300-400 MiB/s. The 32x32 -> 64 products take their low
 * half from Math.imul and their high half from the rounded double product, which beat splitting into
 * 16-bit limbs (~90 against ~130 ns, measured).
 * The two halves of a result travel through the typed-array register `OUT`: storing u32 values above
 * 2^31 in module-level `let` variables boxed them as heap numbers and made the hash twice as slow
 * (measured). Nothing here is re-entrant, and nothing needs to be.
 */

const TWO_32 = 4294967296;

// The default secret ("pseudorandom data taken from FARSH"), 192 bytes.
const SECRET = Uint8Array.from([
  0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
  0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
  0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
  0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
  0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
  0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
  0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
  0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
  0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
  0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
  0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
  0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
]);
const SECRET_SIZE = 192;

// The secret is read at unaligned offsets (3, 7, 11, 119, ...), so keep the little-endian u32 starting
// at every byte offset; a 64-bit secret word at `o` is then (SECRET_U32_AT[o + 4], SECRET_U32_AT[o]).
const SECRET_U32_AT = new Uint32Array(SECRET_SIZE - 3);
for (let o = 0; o < SECRET_U32_AT.length; o++) {
  SECRET_U32_AT[o] = (SECRET[o]! | (SECRET[o + 1]! << 8) | (SECRET[o + 2]! << 16) | (SECRET[o + 3]! << 24)) >>> 0;
}

const PRIME32_1 = 0x9e3779b1;
const PRIME32_2 = 0x85ebca77;
const PRIME32_3 = 0xc2b2ae3d;
const PRIME64_1_HI = 0x9e3779b1;
const PRIME64_1_LO = 0x85ebca87;
const PRIME64_2_HI = 0xc2b2ae3d;
const PRIME64_2_LO = 0x27d4eb4f;
const PRIME64_3_HI = 0x165667b1;
const PRIME64_3_LO = 0x9e3779f9;
const PRIME64_4_HI = 0x85ebca77;
const PRIME64_4_LO = 0xc2b2ae63;
const PRIME64_5_HI = 0x27d4eb2f;
const PRIME64_5_LO = 0x165667c5;
const PRIME_MX1_HI = 0x16566791;
const PRIME_MX1_LO = 0x9e3779f9;
const PRIME_MX2_HI = 0x9fb21c65;
const PRIME_MX2_LO = 0x1e98df25;

const STRIPE_LEN = 64;
const SECRET_CONSUME_RATE = 8;
const STRIPES_PER_BLOCK = (SECRET_SIZE - STRIPE_LEN) / SECRET_CONSUME_RATE;
const BLOCK_LEN = STRIPE_LEN * STRIPES_PER_BLOCK;
const MIDSIZE_MAX = 240;
const MIDSIZE_START_OFFSET = 3;
const MIDSIZE_LAST_OFFSET = 17;
const SECRET_SIZE_MIN = 136;
const SECRET_LASTACC_START = 7;
const SECRET_MERGEACCS_START = 11;

// Result register of the 64-bit helpers below: OUT[HI], OUT[LO].
const OUT = new Uint32Array(2);
const HI = 0;
const LO = 1;

function readU32(bytes: Uint8Array, offset: number): number {
  return (bytes[offset]! | (bytes[offset + 1]! << 8) | (bytes[offset + 2]! << 16) | (bytes[offset + 3]! << 24)) >>> 0;
}

function byteSwap32(value: number): number {
  return ((value >>> 24) | ((value >>> 8) & 0xff00) | ((value << 8) & 0xff0000) | (value << 24)) >>> 0;
}

/**
 * High half of the 64-bit product of two u32. The double product is off by at most 2^11, far less than
 * half of 2^32, and the low half is exact from Math.imul, so rounding recovers the high half exactly.
 */
function mulHigh32(a: number, b: number): number {
  return Math.round((a * b - (Math.imul(a, b) >>> 0)) / TWO_32);
}

/** (aHi:aLo) * (bHi:bLo) mod 2^64 into the registers. */
function mul64(aHi: number, aLo: number, bHi: number, bLo: number): void {
  OUT[LO] = Math.imul(aLo, bLo) >>> 0;
  OUT[HI] = (mulHigh32(aLo, bLo) + Math.imul(aLo, bHi) + Math.imul(aHi, bLo)) >>> 0;
}

/** The full 128-bit product of two u64, then its two halves XORed (XXH3_mul128_fold64). */
function mul128Fold64(aHi: number, aLo: number, bHi: number, bLo: number): void {
  const lo0 = Math.imul(aLo, bLo) >>> 0;
  const hi0 = mulHigh32(aLo, bLo);
  const lo1 = Math.imul(aLo, bHi) >>> 0;
  const hi1 = mulHigh32(aLo, bHi);
  const lo2 = Math.imul(aHi, bLo) >>> 0;
  const hi2 = mulHigh32(aHi, bLo);
  const lo3 = Math.imul(aHi, bHi) >>> 0;
  const hi3 = mulHigh32(aHi, bHi);
  // Column sums stay below 2^34, exact in doubles; the carries are 0..2.
  const sum1 = hi0 + lo1 + lo2;
  const word1 = sum1 >>> 0;
  const sum2 = hi1 + hi2 + lo3 + (sum1 - word1) / TWO_32;
  const word2 = sum2 >>> 0;
  const word3 = (hi3 + (sum2 - word2) / TWO_32) >>> 0;
  OUT[HI] = (word1 ^ word3) >>> 0;
  OUT[LO] = (lo0 ^ word2) >>> 0;
}

/** XXH3_avalanche: h ^= h >> 37; h *= PRIME_MX1; h ^= h >> 32. */
function avalancheXxh3(hi: number, lo: number): void {
  mul64(hi, (lo ^ (hi >>> 5)) >>> 0, PRIME_MX1_HI, PRIME_MX1_LO);
  OUT[LO] = (OUT[LO]! ^ OUT[HI]!) >>> 0;
}

/** XXH64_avalanche: h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32. */
function avalancheXxh64(hi: number, lo: number): void {
  mul64(hi, (lo ^ (hi >>> 1)) >>> 0, PRIME64_2_HI, PRIME64_2_LO);
  const shiftedLo = (OUT[LO]! ^ ((OUT[LO]! >>> 29) | (OUT[HI]! << 3))) >>> 0;
  mul64((OUT[HI]! ^ (OUT[HI]! >>> 29)) >>> 0, shiftedLo, PRIME64_3_HI, PRIME64_3_LO);
  OUT[LO] = (OUT[LO]! ^ OUT[HI]!) >>> 0;
}

function hashLen1To3(bytes: Uint8Array, length: number): void {
  const combined = ((bytes[0]! << 16) | (bytes[length >> 1]! << 24) | bytes[length - 1]! | (length << 8)) >>> 0;
  const bitflip = (SECRET_U32_AT[0]! ^ SECRET_U32_AT[4]!) >>> 0;
  avalancheXxh64(0, (combined ^ bitflip) >>> 0);
}

function hashLen4To8(bytes: Uint8Array, length: number): void {
  // The input's first 4 bytes become the high word, its last 4 the low word.
  let hi = (SECRET_U32_AT[12]! ^ SECRET_U32_AT[20]! ^ readU32(bytes, 0)) >>> 0;
  let lo = (SECRET_U32_AT[8]! ^ SECRET_U32_AT[16]! ^ readU32(bytes, length - 4)) >>> 0;
  // rrmxmx: h ^= rotl(h, 49) ^ rotl(h, 24)
  const mixedHi = hi ^ ((lo << 17) | (hi >>> 15)) ^ ((hi << 24) | (lo >>> 8));
  const mixedLo = lo ^ ((hi << 17) | (lo >>> 15)) ^ ((lo << 24) | (hi >>> 8));
  mul64(mixedHi >>> 0, mixedLo >>> 0, PRIME_MX2_HI, PRIME_MX2_LO);
  // h ^= (h >> 35) + len: the sum is below 2^29 + 8, so it stays in the low word.
  mul64(OUT[HI]!, (OUT[LO]! ^ ((OUT[HI]! >>> 3) + length)) >>> 0, PRIME_MX2_HI, PRIME_MX2_LO);
  hi = OUT[HI]!;
  lo = OUT[LO]!;
  OUT[LO] = (lo ^ ((lo >>> 28) | (hi << 4))) >>> 0;
  OUT[HI] = (hi ^ (hi >>> 28)) >>> 0;
}

function hashLen9To16(bytes: Uint8Array, length: number): void {
  const inLoHi = (SECRET_U32_AT[28]! ^ SECRET_U32_AT[36]! ^ readU32(bytes, 4)) >>> 0;
  const inLoLo = (SECRET_U32_AT[24]! ^ SECRET_U32_AT[32]! ^ readU32(bytes, 0)) >>> 0;
  const inHiHi = (SECRET_U32_AT[44]! ^ SECRET_U32_AT[52]! ^ readU32(bytes, length - 4)) >>> 0;
  const inHiLo = (SECRET_U32_AT[40]! ^ SECRET_U32_AT[48]! ^ readU32(bytes, length - 8)) >>> 0;
  mul128Fold64(inLoHi, inLoLo, inHiHi, inHiLo);
  // acc = len + bswap64(input_lo) + input_hi + fold; four addends, so the carry out of the low word is 0..3.
  const sumLo = length + byteSwap32(inLoHi) + inHiLo + OUT[LO]!;
  const accLo = sumLo >>> 0;
  const accHi = (byteSwap32(inLoLo) + inHiHi + OUT[HI]! + (sumLo - accLo) / TWO_32) >>> 0;
  avalancheXxh3(accHi, accLo);
}

// The running sum of the 17..240 paths and of the long path's merge: SUM[HI] and SUM[LO] add up the
// halves of each 64-bit addend as doubles (at most 18 addends below 2^32, so exact), and the carry from
// the low half is folded in once, when the sum is read.
const SUM = new Float64Array(2);

function startSumWithLength(length: number): void {
  mul64(0, length, PRIME64_1_HI, PRIME64_1_LO);
  SUM[HI] = OUT[HI]!;
  SUM[LO] = OUT[LO]!;
}

function addOutToSum(): void {
  SUM[HI] += OUT[HI]!;
  SUM[LO] += OUT[LO]!;
}

/** XXH3_avalanche of the running sum, reduced mod 2^64. */
function avalancheSum(): void {
  const sumLo = SUM[LO]!;
  avalancheXxh3((SUM[HI]! + Math.floor(sumLo / TWO_32)) >>> 0, sumLo >>> 0);
}

/** XXH3_mix16B with seed 0, added into the running sum. */
function addMix16(bytes: Uint8Array, offset: number, secretOffset: number): void {
  mul128Fold64(
    (SECRET_U32_AT[secretOffset + 4]! ^ readU32(bytes, offset + 4)) >>> 0,
    (SECRET_U32_AT[secretOffset]! ^ readU32(bytes, offset)) >>> 0,
    (SECRET_U32_AT[secretOffset + 12]! ^ readU32(bytes, offset + 12)) >>> 0,
    (SECRET_U32_AT[secretOffset + 8]! ^ readU32(bytes, offset + 8)) >>> 0,
  );
  addOutToSum();
}

function hashLen17To128(bytes: Uint8Array, length: number): void {
  // The reference keeps `acc` and `acc_end` apart and adds them at the end; addition is associative
  // mod 2^64, so one sum gives the same result.
  startSumWithLength(length);
  addMix16(bytes, 0, 0);
  addMix16(bytes, length - 16, 16);
  if (length > 32) {
    addMix16(bytes, 16, 32);
    addMix16(bytes, length - 32, 48);
    if (length > 64) {
      addMix16(bytes, 32, 64);
      addMix16(bytes, length - 48, 80);
      if (length > 96) {
        addMix16(bytes, 48, 96);
        addMix16(bytes, length - 64, 112);
      }
    }
  }
  avalancheSum();
}

function hashLen129To240(bytes: Uint8Array, length: number): void {
  startSumWithLength(length);
  for (let round = 0; round < 8; round++) addMix16(bytes, 16 * round, 16 * round);
  avalancheSum();
  SUM[HI] = OUT[HI]!;
  SUM[LO] = OUT[LO]!;
  const rounds = length >>> 4;
  for (let round = 8; round < rounds; round++) {
    addMix16(bytes, 16 * round, 16 * (round - 8) + MIDSIZE_START_OFFSET);
  }
  addMix16(bytes, length - 16, SECRET_SIZE_MIN - MIDSIZE_LAST_OFFSET);
  avalancheSum();
}

// The eight 64-bit lanes of the long-input accumulator: lane i is (LANES[2i], LANES[2i + 1]) = (hi, lo).
const LANES = new Uint32Array(16);
const LANES_INIT = [
  0, PRIME32_3, PRIME64_1_HI, PRIME64_1_LO, PRIME64_2_HI, PRIME64_2_LO, PRIME64_3_HI, PRIME64_3_LO,
  PRIME64_4_HI, PRIME64_4_LO, 0, PRIME32_2, PRIME64_5_HI, PRIME64_5_LO, 0, PRIME32_1,
];

/** XXH3_accumulate_512 (scalar): one 64-byte stripe against the secret at `secretOffset`. */
function accumulateStripe(bytes: Uint8Array, offset: number, secretOffset: number): void {
  for (let lane = 0; lane < 8; lane++) {
    const dataLo = readU32(bytes, offset + 8 * lane);
    const dataHi = readU32(bytes, offset + 8 * lane + 4);
    const keyLo = (dataLo ^ SECRET_U32_AT[secretOffset + 8 * lane]!) >>> 0;
    const keyHi = (dataHi ^ SECRET_U32_AT[secretOffset + 8 * lane + 4]!) >>> 0;
    // acc[lane ^ 1] += data
    const swapped = 2 * (lane ^ 1);
    const sum = LANES[swapped + 1]! + dataLo;
    LANES[swapped + 1] = sum;
    LANES[swapped] = LANES[swapped]! + dataHi + (sum >= TWO_32 ? 1 : 0);
    // acc[lane] += u32(key) * (key >> 32), a full 32x32 -> 64 product
    const productLo = Math.imul(keyLo, keyHi) >>> 0;
    const productHi = mulHigh32(keyLo, keyHi);
    const own = 2 * lane;
    const sumOwn = LANES[own + 1]! + productLo;
    LANES[own + 1] = sumOwn;
    LANES[own] = LANES[own]! + productHi + (sumOwn >= TWO_32 ? 1 : 0);
  }
}

/** XXH3_scrambleAcc (scalar), with the secret's last 64 bytes. */
function scrambleLanes(): void {
  const secretOffset = SECRET_SIZE - STRIPE_LEN;
  for (let lane = 0; lane < 8; lane++) {
    const hi = LANES[2 * lane]!;
    const lo = LANES[2 * lane + 1]!;
    // acc ^= acc >> 47; acc ^= secret; acc *= PRIME32_1
    const mixedLo = (lo ^ (hi >>> 15) ^ SECRET_U32_AT[secretOffset + 8 * lane]!) >>> 0;
    const mixedHi = (hi ^ SECRET_U32_AT[secretOffset + 8 * lane + 4]!) >>> 0;
    mul64(mixedHi, mixedLo, 0, PRIME32_1);
    LANES[2 * lane] = OUT[HI]!;
    LANES[2 * lane + 1] = OUT[LO]!;
  }
}

function hashLong(bytes: Uint8Array, length: number): void {
  LANES.set(LANES_INIT);
  const blocks = Math.floor((length - 1) / BLOCK_LEN);
  for (let block = 0; block < blocks; block++) {
    for (let stripe = 0; stripe < STRIPES_PER_BLOCK; stripe++) {
      accumulateStripe(bytes, block * BLOCK_LEN + stripe * STRIPE_LEN, stripe * SECRET_CONSUME_RATE);
    }
    scrambleLanes();
  }
  const tailStart = blocks * BLOCK_LEN;
  const tailStripes = Math.floor((length - 1 - tailStart) / STRIPE_LEN);
  for (let stripe = 0; stripe < tailStripes; stripe++) {
    accumulateStripe(bytes, tailStart + stripe * STRIPE_LEN, stripe * SECRET_CONSUME_RATE);
  }
  accumulateStripe(bytes, length - STRIPE_LEN, SECRET_SIZE - STRIPE_LEN - SECRET_LASTACC_START);

  startSumWithLength(length);
  for (let pair = 0; pair < 4; pair++) {
    const secretOffset = SECRET_MERGEACCS_START + 16 * pair;
    mul128Fold64(
      (LANES[4 * pair]! ^ SECRET_U32_AT[secretOffset + 4]!) >>> 0,
      (LANES[4 * pair + 1]! ^ SECRET_U32_AT[secretOffset]!) >>> 0,
      (LANES[4 * pair + 2]! ^ SECRET_U32_AT[secretOffset + 12]!) >>> 0,
      (LANES[4 * pair + 3]! ^ SECRET_U32_AT[secretOffset + 8]!) >>> 0,
    );
    addOutToSum();
  }
  avalancheSum();
}

// The empty input hashes a constant: XXH64_avalanche(secret[56..64) ^ secret[64..72)).
avalancheXxh64((SECRET_U32_AT[60]! ^ SECRET_U32_AT[68]!) >>> 0, (SECRET_U32_AT[56]! ^ SECRET_U32_AT[64]!) >>> 0);
const EMPTY_HI = OUT[HI]!;
const EMPTY_LO = OUT[LO]!;

/** Leaves XXH3-64(bytes) in OUT. */
function hashInto(bytes: Uint8Array): void {
  const length = bytes.length;
  if (length <= 16) {
    if (length > 8) hashLen9To16(bytes, length);
    else if (length >= 4) hashLen4To8(bytes, length);
    else if (length > 0) hashLen1To3(bytes, length);
    else {
      OUT[HI] = EMPTY_HI;
      OUT[LO] = EMPTY_LO;
    }
  } else if (length <= 128) hashLen17To128(bytes, length);
  else if (length <= MIDSIZE_MAX) hashLen129To240(bytes, length);
  else hashLong(bytes, length);
}

/** XXH3 64-bit hash of `bytes` with seed 0 and the default secret (LLVM's `xxh3_64bits`). */
export function xxh3_64(bytes: Uint8Array): bigint {
  hashInto(bytes);
  return (BigInt(OUT[HI]!) << 32n) | BigInt(OUT[LO]!);
}

/**
 * The low 32 bits of XXH3-64 as an unsigned number: what `StringMapImpl::LookupBucketFor` keeps
 * (`unsigned FullHashValue = xxh3_64bits(Name)`) in LLVM 19 and later.
 */
export function xxh3Low32(bytes: Uint8Array): number {
  hashInto(bytes);
  return OUT[LO]!;
}
