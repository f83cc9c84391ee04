/**
 * A kpack'd host binary's device code as the locator's findings (src/inspect/locate.ts), so `ls`, `sizes`,
 * `check` and `extract` report it as they report bundles: one `kpack` bundle per HIPK wrapper (a fat binary the
 * host registers), its entries the code objects the archives hold for the wrapper's TOC key, each naming the
 * `.kpack` file it came from (src/kpack/resolve.ts finds them). A wrapper nothing serves is a problem,
 * so `check` fails the file. Offsets of these entries are positions in their archives, not in the host.
 *
 * Browser-safe: the archives are looked for in a `KpackFiles` (the disk: src/kpack/node/location.ts; a dropped
 * folder: the inspector page's worker, src/browser/kpack-tree.ts), their paths printed as `shown` prints them.
 */
import { isOffloadKitError } from "../engine/errors.js";
import type { ByteSource } from "../engine/source.js";
import type { LocatedBundle, Location } from "../inspect/locate.js";
import type { FoundEntry, ScanProblem } from "../inspect/scan.js";
import { readKpackHost } from "./host.js";
import type { KpackHost } from "./host.js";
import { listInstalledKpack, loadKpack } from "./resolve.js";
import type { KpackEnv, KpackFiles, KpackFound, KpackMiss, KpackResolution } from "./resolve.js";

export interface KpackLocateOptions {
  /** Find what the runtime loads on these GPUs (ISA names, `gfx90a:xnack-`); without them, every installed archive. */
  readonly gpus?: readonly string[];
  readonly env?: KpackEnv;
}

/** Where the archives are, and how their paths are printed. */
export interface KpackPlace {
  readonly files: KpackFiles;
  /** The environment the runtime would read (`ROCM_KPACK_PATH`...). */
  readonly env: KpackEnv;
  /** An archive's path as reports print it. */
  readonly shown: (path: string) => string;
}

const MISS_TEXT: Record<KpackMiss, string> = {
  "disabled": "ROCM_KPACK_DISABLE is set",
  "archive-not-found": "no archive found",
  "arch-not-found": "no archive serves this GPU",
  "kernel-not-found": "the archive serving this GPU has no such key",
};

function largestPowerOfTwo(offset: number): number {
  let align = 1;
  while (align < 4096 && offset % (align * 2) === 0) align *= 2;
  return align;
}

function entryOf(found: KpackFound, shown: (path: string) => string): FoundEntry {
  const e = found.entry;
  return {
    id: e.target ?? `hipv4-amdgcn-amd-amdhsa--${e.arch}`,
    offset: e.offset,
    size: e.originalSize ?? e.size,
    align: largestPowerOfTwo(e.offset),
    kpack: { archive: shown(found.archivePath), key: e.key, arch: e.arch, compression: found.archive.compression, storedOffset: e.offset, storedSize: e.size },
  };
}

/** The host and what serves it, or undefined when `source` is not a kpack'd host binary (a problem when it is one we cannot read). */
export function resolveKpackHost(place: KpackPlace, path: string, source: ByteSource, options: KpackLocateOptions = {}): { host: KpackHost; resolution: KpackResolution } | { problem: ScanProblem } | undefined {
  let host;
  try {
    host = readKpackHost(source);
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    return { problem: { offset: e.offset ?? 0, code: e.code, message: e.message } };
  }
  if (host === undefined) return undefined;
  const env = options.env ?? place.env;
  const resolution = options.gpus !== undefined && options.gpus.length > 0 ? loadKpack(place.files, path, host, options.gpus, env) : listInstalledKpack(place.files, path, host, env);
  return { host, resolution };
}

/**
 * `location` with the kpack'd host's wrappers added as `kpack` bundles (and its misses as problems); the
 * location as it is for any other file. Only ELF files are looked at.
 */
export function withKpackHost(place: KpackPlace, path: string, source: ByteSource, location: Location, options: KpackLocateOptions = {}): Location {
  if (location.container !== "elf") return location;
  const resolved = resolveKpackHost(place, path, source, options);
  if (resolved === undefined) return location;
  if ("problem" in resolved) return { ...location, problems: [...location.problems, resolved.problem] };
  // With every wrapper HIPK, what is left in .hip_fatbin is registered by nothing: stale bytes of partial pages
  // (rocm-kpack), or the header-only bundles holding our own split's markers (src/kpack/node/split.ts).
  const stale = (b: { readonly section?: string }) => resolved.host.hipfWrappers === 0 && b.section !== undefined && b.section.startsWith(".hip_fatbin");
  const bundles: LocatedBundle[] = location.bundles.filter((b) => !stale(b)).map((b, index) => ({ ...b, index }));
  const problems: ScanProblem[] = [...location.problems];
  for (const opened of resolved.resolution.archives) {
    if (opened.error !== undefined) problems.push({ offset: 0, code: opened.error.code, message: `${place.shown(opened.path)}: ${opened.error.message}` });
  }
  for (const wrapper of resolved.host.wrappers) {
    const lookups = resolved.resolution.lookups.filter((l) => l.wrapper === wrapper);
    const seen = new Set<string>();
    const entries: FoundEntry[] = [];
    for (const lookup of lookups) {
      for (const found of lookup.found) {
        const id = `${found.archivePath}\0${found.entry.arch}`;
        if (seen.has(id)) continue;
        seen.add(id);
        entries.push(entryOf(found, place.shown));
      }
    }
    const key = lookups[0]?.key ?? `${wrapper.marker.kernelName}#${wrapper.coIndex}`;
    for (const lookup of lookups) {
      if (lookup.miss === undefined) continue;
      const paths = wrapper.marker.searchPaths.join(", ");
      problems.push({
        offset: wrapper.offset,
        code: "KPACK_NOT_FOUND",
        message: `HIPK wrapper ${wrapper.index}: ${MISS_TEXT[lookup.miss]} for key '${key}' (search paths: ${paths})`,
      });
    }
    bundles.push({
      index: bundles.length,
      format: "kpack",
      offset: wrapper.offset,
      size: 24,
      section: ".hipFatBinSegment",
      entries,
      kpack: { key, wrapper: { index: wrapper.index, coIndex: wrapper.coIndex, markerOffset: wrapper.markerOffset, searchPaths: wrapper.marker.searchPaths } },
    });
  }
  // A host binary whose problems are all "not found" stays an offload file: its wrappers say so.
  return { ...location, bundles, problems };
}

