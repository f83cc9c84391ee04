/**
 * ELF fat objects: a host object with one `__CLANG_OFFLOAD_BUNDLE__<id>` section per entry (what
 * `clang-offload-bundler -type=o` writes; src/bundler/object-bundle.ts). Pruned, the object is what that
 * bundler writes when given the host object (the fat object without its bundle sections, as `-unbundle`
 * hands it out) and the kept entries in their original order: the bundle sections are taken off and the
 * kept ones added back, by the same in-process llvm-objcopy (src/objcopy/).
 *
 * An object whose bundle sections include no host entry (one 0x00 byte) was not written by the bundler,
 * which always has one; there the dropped sections are just removed (`llvm-objcopy --remove-section`).
 *
 * `replace` is the same bundling with the new code object in its entry's place; replacing the host entry
 * makes the new file the host object (as `-type=o` takes the host input as it is and adds the sections to it).
 * In an object without a host entry every bundle section is taken off and added back in its order.
 * The whole object is one bundle for `--bundle`.
 */
import { OffloadKitError } from "../engine/errors.js";
import { bytesSource } from "../engine/source.js";
import { bundleObject, hostObject, isObjectHostEntry, objectBundleEntries } from "../bundler/object-bundle.js";
import { ELF_BUNDLE_SECTION_PREFIX } from "../formats/elf.js";
import { removeSections } from "../objcopy/index.js";
import { placeText, selectEntries } from "./outcome.js";
import type { PruneContext } from "./outcome.js";
import { isReplaced, payloadBytes, pickBundle } from "./swap.js";
import type { ReplaceContext } from "./swap.js";

/** Does this ELF file hold bundle sections? */
export function isFatObject(bytes: Uint8Array): boolean {
  try {
    const entries = objectBundleEntries(bytesSource(bytes));
    return entries !== undefined && entries.length > 0;
  } catch {
    return false;
  }
}

export function pruneFatObject(bytes: Uint8Array, ctx: PruneContext, where = ""): Uint8Array {
  const source = bytesSource(bytes);
  const entries = objectBundleEntries(source) ?? [];
  const kept = selectEntries(entries, ctx, where);
  if (kept.length === entries.length) return bytes;
  const hostIndex = kept.findIndex((entry) => isObjectHostEntry(source, entry));
  if (hostIndex < 0) {
    const dropped = new Set(entries.filter((e) => !kept.includes(e)).map((e) => ELF_BUNDLE_SECTION_PREFIX + e.id));
    return removeSections(bytes, (name) => dropped.has(name));
  }
  return bundleObject(hostObject(bytes), kept.map((e) => e.id), hostIndex, (i) => bytes.subarray(kept[i].offset, kept[i].offset + kept[i].size));
}

export function replaceInFatObject(bytes: Uint8Array, ctx: ReplaceContext, where = ""): Uint8Array {
  if (!pickBundle(ctx, where)) return bytes;
  const source = bytesSource(bytes);
  const entries = objectBundleEntries(source) ?? [];
  const swapped = entries.map((entry) => isReplaced(ctx, entry.id, where));
  if (!swapped.includes(true)) return bytes;
  const hostIndex = entries.findIndex((entry) => isObjectHostEntry(source, entry));
  const replacement = payloadBytes(ctx);
  const newHost = swapped[hostIndex] === true;
  const host = newHost ? replacement : hostObject(bytes);
  const payload = (i: number) => (swapped[i] ? replacement : bytes.subarray(entries[i].offset, entries[i].offset + entries[i].size));
  try {
    return bundleObject(host, entries.map((e) => e.id), hostIndex, payload);
  } catch (e) {
    // The object being written is the replacement: say so, not that the input is no ELF file.
    if (!newHost || !(e instanceof OffloadKitError)) throw e;
    throw new OffloadKitError(e.code, `${placeText(ctx.name, where)}: the replacement for the host entry must be the new host object (an ELF object): ${e.message}`,
      { field: "--with", cause: e });
  }
}
