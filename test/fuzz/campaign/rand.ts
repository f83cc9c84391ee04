/**
 * The campaign's random source: xorshift128+ seeded from (seed, parser, case index) through SplitMix64, so
 * every case can be regenerated on its own (`npm run fuzz -- --parser P --seed S --case N`), in any
 * worker, in any order.
 */
export class Rand {
  private s0: bigint;
  private s1: bigint;

  constructor(seed: string) {
    let h = 0xcbf29ce484222325n;
    for (let i = 0; i < seed.length; i++) h = ((h ^ BigInt(seed.charCodeAt(i))) * 0x100000001b3n) & 0xffffffffffffffffn;
    const mix = (): bigint => {
      h = (h + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
      let z = h;
      z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
      z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
      return z ^ (z >> 31n);
    };
    this.s0 = mix();
    this.s1 = mix() | 1n;
    this.lo = Number(this.s0 & 0xffffffffn) | 1;
    this.hi = Number(this.s1 & 0xffffffffn) | 1;
  }

  // Two 32-bit xorshift states: BigInt arithmetic per draw would dominate small cases.
  private lo: number;
  private hi: number;

  /** A float in [0, 1). */
  next(): number {
    let x = this.lo;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.lo = x;
    let y = this.hi;
    y ^= y << 11;
    y ^= y >>> 19;
    y ^= y << 7;
    this.hi = y;
    return (((x ^ y) >>> 0) % 4294967296) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  bool(p = 0.5): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** Small sizes mostly, sometimes larger: most inputs stay tiny so a million cases run in minutes. */
  size(max: number): number {
    const r = this.next();
    if (r < 0.6) return this.int(Math.min(max, 16) + 1);
    if (r < 0.9) return this.int(Math.min(max, 64) + 1);
    return this.int(max + 1);
  }

  bytes(length: number, alphabet?: Uint8Array): Uint8Array {
    const out = new Uint8Array(length);
    for (let i = 0; i < length; i++) out[i] = alphabet ? alphabet[this.int(alphabet.length)]! : this.int(256);
    return out;
  }

  text(length: number, alphabet: string): string {
    let out = "";
    for (let i = 0; i < length; i++) out += alphabet[this.int(alphabet.length)];
    return out;
  }
}
