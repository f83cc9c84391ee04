/**
 * The `.rocm_kpack_ref` marker rocm-kpack adds to a host binary whose device code it moved into `.kpack`
 * archives (ROCm/rocm-kpack e3483286: python/rocm_kpack/elf/kpack_transform.py `add_kpack_ref_section`; read by
 * runtime/src/loader.cpp `parse_hipk_metadata`). Each HIPK wrapper's pointer leads here.
 *
 * One msgpack map: `{"kpack_search_paths": [path, ...], "kernel_name": name}`. A search path is relative to the
 * binary's directory and may hold `@GFXARCH@`; `kernel_name` is a TOC key prefix (`<name>#<co_index>` is the
 * key), not a file path. As the runtime: `kernel_name` must be a string, `kpack_search_paths` an array with at
 * least one string (non-strings in it are skipped), and the map is decoded from at most 64 KiB.
 */
import { OffloadKitError } from "../engine/errors.js";
import { decodeMsgpack, encodeMsgpack } from "./msgpack.js";

export const KPACK_MARKER_SECTION = ".rocm_kpack_ref";
/** The runtime's bound on the marker (loader.cpp MAX_METADATA_SIZE). */
export const KPACK_MARKER_MAX_SIZE = 64 * 1024;

export interface KpackMarker {
  readonly kernelName: string;
  readonly searchPaths: readonly string[];
  /** Bytes the msgpack map took. */
  readonly size: number;
}

function markerError(message: string, offset: number, field: string): OffloadKitError {
  return new OffloadKitError("KPACK_BAD_MARKER", `kpack marker: ${message}`, { offset, field });
}

/** Decodes the marker at the start of `bytes` (only the first 64 KiB are looked at); `baseOffset` is where `bytes` sit in the file. */
export function parseKpackMarker(bytes: Uint8Array, baseOffset = 0): KpackMarker {
  let decoded;
  try {
    decoded = decodeMsgpack(bytes.subarray(0, KPACK_MARKER_MAX_SIZE), 0, { baseOffset, maxDepth: 8 });
  } catch (e) {
    if (e instanceof OffloadKitError) throw markerError(e.message, e.offset ?? baseOffset, "msgpack");
    throw e;
  }
  const map = decoded.value;
  if (!(map instanceof Map)) throw markerError("not a msgpack map", baseOffset, "marker");
  const kernelName = map.get("kernel_name");
  if (typeof kernelName !== "string") throw markerError("kernel_name is missing or not a string", baseOffset, "kernel_name");
  const paths = map.get("kpack_search_paths");
  if (!Array.isArray(paths)) throw markerError("kpack_search_paths is missing or not an array", baseOffset, "kpack_search_paths");
  const searchPaths = paths.filter((p): p is string => typeof p === "string");
  if (searchPaths.length === 0) throw markerError("kpack_search_paths holds no path", baseOffset, "kpack_search_paths");
  return { kernelName, searchPaths, size: decoded.end };
}

/** The marker's bytes as rocm-kpack writes them (msgpack.packb, keys in its order). */
export function writeKpackMarker(marker: { readonly kernelName: string; readonly searchPaths: readonly string[] }): Uint8Array {
  return encodeMsgpack({ kpack_search_paths: [...marker.searchPaths], kernel_name: marker.kernelName });
}
