/**
 * `prune` of a rocm-kpack `.kpack` archive (src/formats/kpack.ts): the code objects of dropped GPUs leave it, the
 * rest are written again as rocm-kpack lays an archive out (kept order; zstd frames kept as they are, not
 * re-encoded), and `gfx_arches` keeps only the architectures still wanted, so the runtime no longer picks the
 * archive for a dropped GPU. An archive left with nothing for any wanted GPU is written empty (no TOC keys, no
 * `gfx_arches`), which the runtime skips; the per-bundle "keeps nothing" rule of fat binaries does not apply:
 * in a kpack'd tree each archive serves some GPUs only, by design.
 */
import { bytesSource } from "../engine/source.js";
import { readKpackArchive, readKpackEntry, writeKpackArchive } from "../formats/kpack.js";
import type { KpackEntry, KpackWriteEntry } from "../formats/kpack.js";
import { decideEntry } from "../prune/select.js";
import type { PruneContext } from "../prune/outcome.js";

/** The entry ID a code object is judged by: the bundle entry ID rocm-kpack recorded, else one made from its arch. */
export function kpackEntryId(entry: Pick<KpackEntry, "target" | "arch">): string {
  return entry.target ?? `hipv4-amdgcn-amd-amdhsa--${entry.arch}`;
}

export function pruneKpackArchive(bytes: Uint8Array, ctx: PruneContext, where = ""): Uint8Array {
  const source = bytesSource(bytes);
  const archive = readKpackArchive(source);
  const kept: KpackWriteEntry[] = [];
  for (const entry of archive.entries) {
    const id = kpackEntryId(entry);
    const decision = decideEntry(ctx.selection, id);
    const size = entry.originalSize ?? entry.size;
    ctx.outcomes.push({ where: where === "" ? entry.key : `${where} ${entry.key}`, id, size, kept: decision.keep, host: decision.host, matched: decision.matched });
    if (!decision.keep) continue;
    const metadata = { ...(entry.target !== undefined ? { target: entry.target } : {}), ...(entry.sourcePrefix !== undefined ? { source_prefix: entry.sourcePrefix } : {}) };
    const stored = bytes.subarray(entry.offset, entry.offset + entry.size);
    kept.push({
      key: entry.key, arch: entry.arch,
      ...(archive.compression === "none"
        ? { data: readKpackEntry(source, "none", entry) }
        : { data: new Uint8Array(0), frame: stored, originalSize: size }),
      ...(entry.target !== undefined || entry.sourcePrefix !== undefined ? { metadata } : {}),
    });
  }
  if (kept.length === archive.entries.length) return bytes;
  const gfxArches = archive.gfxArches.filter((arch) => decideEntry(ctx.selection, `hipv4-amdgcn-amd-amdhsa--${arch}`).keep && kept.some((e) => e.arch === arch));
  return writeKpackArchive(kept, {
    groupName: archive.groupName ?? "",
    gfxArchFamily: archive.gfxArchFamily ?? "",
    gfxArches,
    compression: archive.compression,
  });
}
