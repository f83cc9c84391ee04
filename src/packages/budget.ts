/**
 * The decompression budget of one package: every byte any decoder produces while a package is walked
 * (each level of nesting counted again, so a tar.gz inside a tar.gz pays twice) is counted against one
 * total, and the walk stops where the total runs out. Per-member checks (zip's ratio test in walk.ts)
 * cannot see a package of many members each within ratio, or containers nested to multiply one another;
 * this can.
 *
 * The rule: **at most `max(2 GiB, 100 x the package's size)` decoded bytes**. Real packages sit far
 * below it (librocsparse0's .deb: 94 MB to 1.31 GB, 14x; wheels 2-4x; a tarball of tarballs adds the
 * ratios of its levels), and the 2 GiB floor lets a small package of sparse files through, while a
 * 42.zip-style bomb of a few kB stops after 2 GiB of work instead of petabytes. `OFFLOAD_KIT_MAX_DECOMPRESSED`
 * (bytes, with an optional K/M/G/T suffix, powers of 1024, or `unlimited`) or the walker's
 * `maxDecompressed` option replaces the rule with a fixed total.
 */
import { OffloadKitError } from "../engine/errors.js";

export const DECOMPRESSION_FLOOR = 2 * 1024 ** 3;
export const DECOMPRESSION_RATIO = 100;

/** The default budget for a package of `packageSize` bytes. */
export function defaultDecompressionLimit(packageSize: number): number {
  return Math.max(DECOMPRESSION_FLOOR, DECOMPRESSION_RATIO * packageSize);
}

/** `OFFLOAD_KIT_MAX_DECOMPRESSED`'s value as a byte count (Infinity for `unlimited`), or undefined when unset. */
export function parseDecompressionLimit(text: string | undefined, variable = "OFFLOAD_KIT_MAX_DECOMPRESSED"): number | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  if (text.trim().toLowerCase() === "unlimited") return Infinity;
  const m = /^\s*(\d+)\s*([kmgt]i?b?)?\s*$/i.exec(text);
  if (m === null) throw new OffloadKitError("BAD_OPTION", `${variable}='${text}' is not a size (bytes, K, M, G, T, or 'unlimited')`);
  const unit = (m[2] ?? "").charAt(0).toLowerCase();
  return Number(m[1]) * (unit === "" ? 1 : 1024 ** ("kmgt".indexOf(unit) + 1));
}

/**
 * Thrown where the budget runs out. An OffloadKitError (decoders and spoolers pass ours through unchanged),
 * but the walker stops at it instead of going on with the next member: every later member would decode
 * under the same spent budget.
 */
export class DecompressionBudgetError extends OffloadKitError {
  constructor(readonly limit: number, readonly where: readonly string[], offset: number, rule: string) {
    super(
      "PACKAGE_DECOMPRESSION_LIMIT",
      `decompression budget of ${limit} bytes (${rule}) ran out in '${where.join("!")}' at offset ${offset} of its decoded stream; the rest of the package is not read`,
      { offset, field: "decompressed size" },
    );
  }
}

export class DecompressionBudget {
  used = 0;
  failure: DecompressionBudgetError | undefined;

  constructor(readonly limit: number, private readonly rule: string) {}

  /** `stream`'s chunks, counted; `where` names what is being read when it runs out. */
  async *count(stream: AsyncIterable<Uint8Array>, where: () => readonly string[]): AsyncGenerator<Uint8Array> {
    let decoded = 0;
    for await (const chunk of stream) {
      if (this.failure !== undefined) throw this.failure;
      if (this.used + chunk.length > this.limit) {
        const within = this.limit - this.used;
        this.used = this.limit;
        this.failure = new DecompressionBudgetError(this.limit, where(), decoded + within, this.rule);
        throw this.failure;
      }
      this.used += chunk.length;
      decoded += chunk.length;
      yield chunk;
    }
  }
}
