/**
 * Replacement fat binaries built without copying payloads: a source made of other sources end to end,
 * and a plain bundle that keeps some of another bundle's entries (its header laid out as
 * clang-offload-bundler writes it, the payloads read from the original when the output is written).
 */
import { OffloadKitError } from "../engine/errors.js";
import { bytesSource, sliceSource } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { layoutBinaryBundle, readBinaryBundle } from "../formats/bundle.js";

/** The sources one after another, as one source. */
export function concatSources(parts: readonly ByteSource[]): ByteSource {
  const starts: number[] = [];
  let size = 0;
  for (const part of parts) {
    starts.push(size);
    size += part.size;
  }
  return {
    size,
    read(dest, position) {
      let done = 0;
      while (done < dest.length && position + done < size) {
        const at = position + done;
        let i = starts.length - 1;
        while (starts[i] > at || parts[i].size === 0) i--;
        const n = parts[i].read(dest.subarray(done, done + Math.min(dest.length - done, parts[i].size - (at - starts[i]))), at - starts[i]);
        if (n <= 0) break;
        done += n;
      }
      return done;
    },
  };
}

/**
 * A plain bundle holding the entries of `bundle` that `keep` accepts, in their order, each payload at
 * a multiple of `align` (4096: what the HIP driver asks clang-offload-bundler for). Undefined when
 * every entry is kept (nothing to change).
 */
export function keepBundleEntries(bundle: ByteSource, keep: (id: string) => boolean, align = 4096): ByteSource | undefined {
  const entries = bundleEntries(bundle);
  return entries.every((e) => keep(e.id)) ? undefined : rebundleEntries(bundle, keep, align);
}

function bundleEntries(bundle: ByteSource) {
  const read = readBinaryBundle(bundle);
  if (read.kind === "none") {
    throw new OffloadKitError("NOT_A_BUNDLE", read.problem?.message ?? "not a binary offload bundle", { offset: read.problem?.offset });
  }
  return read.bundle.entries;
}

/** Like keepBundleEntries, but always builds the new bundle (also when every entry is kept, e.g. to change `align`). */
export function rebundleEntries(bundle: ByteSource, keep: (id: string) => boolean, align = 4096): ByteSource {
  const kept = bundleEntries(bundle).filter((e) => keep(e.id));
  const layout = layoutBinaryBundle(kept, align);
  const parts: ByteSource[] = [bytesSource(layout.header)];
  let at = layout.header.length;
  kept.forEach((entry, i) => {
    if (layout.offsets[i] > at) parts.push(bytesSource(new Uint8Array(layout.offsets[i] - at)));
    parts.push(sliceSource(bundle, entry.offset, entry.size));
    at = layout.offsets[i] + entry.size;
  });
  return concatSources(parts);
}
