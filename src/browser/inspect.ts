/**
 * What the Worker does, as plain synchronous functions over a ByteSource (a BlobSource in a Worker, a
 * Uint8Array anywhere): locate every bundle and offload binary (src/inspect/locate.ts) with the browser
 * codecs decoding compressed bundles and compressed offload binaries in memory, report it as
 * `offload-kit ls --json` does, with the `offload-kit sizes` rows beside it, and read one entry's bytes.
 */
import { decodeCcobMemberBytes } from "../bundler/compressed.js";
import type { Codecs } from "../compress/codecs.js";
import { offloadDecompressor } from "../compress/offload-decompressor.js";
import type { Engine } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import { bytesSource, readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { truncatedHash } from "../formats/ccob.js";
import { readImageBytes } from "../formats/offload-binary.js";
import { locate } from "../inspect/locate.js";
import type { LocateOptions, Location } from "../inspect/locate.js";
import { locationJson } from "../inspect/location-json.js";
import type { LocationJson } from "../inspect/location-json.js";
import type { OpenCompressed } from "../inspect/scan.js";
import { fileSizes } from "../inspect/sizes.js";
import type { FileSizes, SizeRow } from "../inspect/sizes.js";
import { byteStringToUnicode } from "../formats/bytes.js";

/**
 * A compressed bundle's contents are held in memory here (Node spills large ones to a temporary file):
 * by default refuse those declaring more than this, before allocating.
 */
export const BROWSER_MAX_DECOMPRESSED = 1024 * 1024 * 1024;

export interface BrowserReadOptions {
  /** Loaded codecs (loadBrowserCodecs()); without them compressed bundles and binaries are reported as problems. */
  readonly codecs?: Codecs;
  readonly maxDecompressedSize?: number;
  readonly engine?: Engine;
}

export interface InspectProgress {
  readonly bundles: number;
  readonly images: number;
  /** How far into the file it has got (the last find, or the end of the last read in a Worker). */
  readonly offset: number;
}

export interface InspectOptions extends BrowserReadOptions {
  /** Called as bundles and offload binaries are found. */
  readonly onProgress?: (progress: InspectProgress) => void;
}

export interface Inspection {
  /** Exactly what `offload-kit ls --json` prints for the file (one element of its `files`). */
  readonly report: LocationJson;
  /** What `offload-kit sizes --json` counts for the file. */
  readonly sizes: FileSizes;
}

/** Decodes one CCOB in memory with the browser codecs, recomputing its hash as `ls` does. */
export function openCompressedInMemory(codecs: Codecs, maxDecompressedSize = BROWSER_MAX_DECOMPRESSED): OpenCompressed {
  return (input, member) => {
    const readAt = (position: number, length: number) => readExact(input, position, Math.max(0, Math.min(length, input.size - position)));
    const hasher = codecs.md5();
    let bytes: Uint8Array;
    try {
      bytes = decodeCcobMemberBytes(readAt, member, codecs, { maxDecompressedSize }, hasher);
    } catch (e) {
      // The browser codecs hand out one MD5 state, returned by digest(): give it back on failure too.
      hasher.digest();
      throw e;
    }
    return { source: bytesSource(bytes), recalculatedHash: truncatedHash(hasher.digest()), close() {} };
  };
}

function locateOptions(options: BrowserReadOptions): LocateOptions {
  const codecs = options.codecs;
  return {
    engine: options.engine,
    ...(codecs !== undefined
      ? { openCompressed: openCompressedInMemory(codecs, options.maxDecompressedSize), decompressOffload: offloadDecompressor(codecs) }
      : {}),
  };
}

/** Every bundle and offload binary in `source`, as `offload-kit ls --json` and `offload-kit sizes` report them. */
export function inspectSource(source: ByteSource | Uint8Array, name: string, options: InspectOptions = {}): Inspection {
  let bundles = 0;
  let images = 0;
  const progress = options.onProgress;
  const location: Location = locate(source, {
    ...locateOptions(options),
    onBundle: progress === undefined ? undefined : (bundle) => progress({ bundles: ++bundles, images, offset: bundle.compressed?.offset ?? bundle.offset }),
    onOffloadBinaries: progress === undefined ? undefined : (run) => progress({ bundles, images: (images += run.images.length), offset: run.offset }),
  });
  const sizes = fileSizes(name, location);
  // IDs as text, as `offload-kit sizes --json` prints them.
  const text = (rows: readonly SizeRow[]) => rows.map((r) => ({ ...r, id: byteStringToUnicode(r.id) }));
  return { report: locationJson(name, location), sizes: { ...sizes, targets: text(sizes.targets), processors: text(sizes.processors) } };
}

/** Which entry to read: a bundle entry by bundle and entry index, or an offload image by its index. */
export type EntryRef = { readonly bundle: number; readonly entry: number } | { readonly image: number };

/** Stops the walk once the wanted bytes are in hand (locate lets a callback's exception through). */
class Found {
  constructor(readonly bytes: Uint8Array) {}
}

/**
 * The bytes of one entry, found as inspectSource found it: for an entry of a compressed bundle, out of
 * its decompressed contents; for an image of a compressed offload binary, inflated. (A plain entry is
 * `file.slice(offset, offset + size)`; this serves the rest.)
 */
export function readEntry(source: ByteSource | Uint8Array, ref: EntryRef, options: BrowserReadOptions = {}): Uint8Array {
  try {
    locate(source, {
      ...locateOptions(options),
      onBundle: (bundle, contents) => {
        if (!("bundle" in ref) || bundle.index !== ref.bundle) return;
        const entry = bundle.entries[ref.entry];
        if (entry === undefined) throw new OffloadKitError("NO_SUCH_ENTRY", `bundle ${ref.bundle} has no entry ${ref.entry}`);
        throw new Found(readExact(contents, entry.offset, entry.size));
      },
      onOffloadBinaries: (run, raw) => {
        if (!("image" in ref)) return;
        const i = run.images.findIndex((image) => image.index === ref.image);
        if (i >= 0) throw new Found(readImageBytes(raw[i]!));
      },
    });
  } catch (e) {
    if (e instanceof Found) return e.bytes;
    throw e;
  }
  const what = "bundle" in ref ? `bundle ${ref.bundle}, entry ${ref.entry}` : `offload image ${ref.image}`;
  throw new OffloadKitError("NO_SUCH_ENTRY", `the file has no ${what}`);
}
