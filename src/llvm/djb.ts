/**
 * Bernstein's hash as LLVM computes it (llvm/include/llvm/Support/DJB.h: `H = (H << 5) + H + C` over the
 * bytes, 32-bit wrap). It exists because LLVM 14's `StringMapImpl::LookupBucketFor` hashes keys with
 * `djbHash(Name, 0)`, and the bundler lists and unbundles in StringMap bucket order
 * (spec/bundler.md §2.5). Note the seed: DJB.h defaults to 5381, but StringMap passes 0 explicitly; the
 * native `-list` order of clang-offload-bundler-14 agrees with 0 (test/differential/string-map-native.test.ts).
 */

/** LLVM's `djbHash(bytes, seed)`, as an unsigned 32-bit number. StringMap in LLVM 14 uses seed 0. */
export function djbHash(bytes: Uint8Array, seed = 0): number {
  let hash = seed >>> 0;
  for (let index = 0; index < bytes.length; index++) hash = (Math.imul(hash, 33) + bytes[index]!) | 0;
  return hash >>> 0;
}
