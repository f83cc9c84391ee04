/**
 * How rocm-kpack's runtime turns a GPU's ISA name into the names it looks archives and TOC entries up by
 * (ROCm/rocm-kpack e3483286 runtime/src/isa_target_match.h `for_each_compatible_target`): the ISA with its
 * `amdgcn-amd-amdhsa--` prefix stripped, then every subset of its feature flags, most specific first, the
 * flags kept in their order. `gfx90a:sramecc+:xnack-` gives `gfx90a:sramecc+:xnack-`, `gfx90a:sramecc+`,
 * `gfx90a:xnack-`, `gfx90a`. A GPU named without flags gives its bare name only, so it finds none of an
 * archive filed under `gfx90a:xnack-`.
 */

const TRIPLE_PREFIX = "amdgcn-amd-amdhsa--";
/** More flags than any AMDGPU target ID has; a bound so a hostile name cannot ask for 2^n candidates. */
const MAX_FEATURES = 8;

/** The names to try for `isa`, most specific first (empty for an empty name). */
export function compatibleKpackTargets(isa: string): string[] {
  const stripped = isa.length > TRIPLE_PREFIX.length && isa.startsWith(TRIPLE_PREFIX) ? isa.substring(TRIPLE_PREFIX.length) : isa;
  const [processor = "", ...rest] = stripped.split(":");
  if (processor === "") return [];
  const features = rest.filter((f) => f !== "").slice(0, MAX_FEATURES);
  const n = features.length;
  const out: string[] = [];
  // Bit (n-1-i) stands for features[i]: counting down drops flags from the right first, as the runtime does.
  for (let mask = (1 << n) - 1; mask >= 0; mask--) {
    let candidate = processor;
    for (let i = 0; i < n; i++) if (mask & (1 << (n - 1 - i))) candidate += `:${features[i]}`;
    out.push(candidate);
  }
  return out;
}

export const GFXARCH_PLACEHOLDER = "@GFXARCH@";
