/**
 * What the Worker does, as plain synchronous functions over a ByteSource (a BlobSource in a Worker, a
 * Uint8Array anywhere): locate every bundle and offload binary (src/inspect/locate.ts) with the browser
 * codecs decoding compressed bundles and compressed offload binaries in memory, report it as
 * `offload-kit ls --json` does, with the `offload-kit sizes` rows beside it, and read one entry's bytes.
 */
import { checkDeclaredSize, decodeCcobMember } from "../bundler/compressed.js";
import type { Codecs } from "../compress/codecs.js";
import { offloadDecompressor } from "../compress/offload-decompressor.js";
import type { Engine } from "../engine/engine.js";
import { OffloadKitError } from "../engine/errors.js";
import { bytesSource, readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { truncatedHash } from "../formats/ccob.js";
import { decodeNvEntry } from "../formats/nv-fatbin.js";
import { readImageBytes } from "../formats/offload-binary.js";
import { locate } from "../inspect/locate.js";
import type { LocateOptions, Location } from "../inspect/locate.js";
import { locationJson } from "../inspect/location-json.js";
import type { LocationJson } from "../inspect/location-json.js";
import type { OpenCompressed } from "../inspect/scan.js";
import { fileSizes } from "../inspect/sizes.js";
import type { FileSizes, SizeRow } from "../inspect/sizes.js";
import { byteStringToUnicode, concatBytes } from "../formats/bytes.js";
import { withKpackHost } from "../kpack/location.js";
import type { KpackPlace } from "../kpack/location.js";

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
  /** Keep decoded compressed bundles here (under `key`) so later reads of the same file decode nothing. */
  readonly cache?: DecodedBundles;
  readonly key?: string;
  readonly onDecode?: (progress: DecodeProgress) => void;
}

export interface InspectProgress {
  readonly bundles: number;
  readonly images: number;
  /** How far into the file it has got (the last find, or the end of the last read in a Worker). */
  readonly offset: number;
  /** Set while a compressed bundle is being decoded. */
  readonly decoding?: DecodeProgress;
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

/** Where decoding a compressed bundle has got (bytes out of its declared uncompressed size). */
export interface DecodeProgress {
  /** The CCOB's offset in the file (or in the section or member that holds it). */
  readonly offset: number;
  readonly decoded: number;
  readonly total: number;
}

/** A compressed bundle decoded once: its contents and the hash `ls` recomputes. */
interface Decoded {
  readonly bytes: Uint8Array;
  readonly recalculatedHash: bigint;
}

/**
 * Decoded compressed bundles kept for later requests on the same file (a download decodes nothing again),
 * least recently used dropped first once they hold more than `maxBytes` together. Keyed by what names the
 * file (the caller's key) and the CCOB's place in it.
 */
export class DecodedBundles {
  private readonly kept = new Map<string, Decoded>();
  private held = 0;

  constructor(readonly maxBytes = 256 * 1024 * 1024) {}

  get bytes(): number {
    return this.held;
  }

  get(key: string): Decoded | undefined {
    const found = this.kept.get(key);
    if (found !== undefined) {
      this.kept.delete(key);
      this.kept.set(key, found);
    }
    return found;
  }

  set(key: string, decoded: Decoded): void {
    if (decoded.bytes.length > this.maxBytes) return;
    const old = this.kept.get(key);
    if (old !== undefined) this.held -= old.bytes.length;
    this.kept.delete(key);
    this.kept.set(key, decoded);
    this.held += decoded.bytes.length;
    for (const [k, v] of this.kept) {
      if (this.held <= this.maxBytes) break;
      this.kept.delete(k);
      this.held -= v.bytes.length;
    }
  }

  /** Forgets everything decoded from one file. */
  forget(prefix: string): void {
    for (const [k, v] of this.kept) if (k.startsWith(prefix)) (this.kept.delete(k), (this.held -= v.bytes.length));
  }
}

export interface OpenCompressedOptions {
  /** Decoded contents are kept here under `${key}@${where}` and taken from it when present. */
  readonly cache?: DecodedBundles;
  readonly key?: string;
  readonly onDecode?: (progress: DecodeProgress) => void;
}

/** Decodes one CCOB in memory with the browser codecs, recomputing its hash as `ls` does. */
export function openCompressedInMemory(codecs: Codecs, maxDecompressedSize = BROWSER_MAX_DECOMPRESSED, options: OpenCompressedOptions = {}): OpenCompressed {
  return (input, member) => {
    // The same CCOB is the same bytes at the same place of the same (unchanged) file; its size and
    // stored hash guard against a key that names another file.
    const key = options.key === undefined ? undefined : `${options.key}@${member.offset}:${member.size}:${member.header.hash}:${input.size}`;
    const kept = key === undefined ? undefined : options.cache?.get(key);
    if (kept !== undefined) return { source: bytesSource(kept.bytes), recalculatedHash: kept.recalculatedHash, close() {} };
    checkDeclaredSize(member, { maxDecompressedSize });
    // The stored bundle is read in one piece, then decoded from memory: the decoder's small reads (each
    // zstd block header, then its data) would each cost a read of the file, and a 14.7 MB bundle was read
    // as 26.5 MB that way (issue 20). Memory: the stored bytes, less than the decoded ones held anyway.
    const start = member.offset;
    const stored = readExact(input, start, Math.max(0, Math.min(member.size, input.size - start)));
    const readAt = (position: number, length: number) => {
      const want = Math.max(0, Math.min(length, input.size - position));
      if (position >= start && position + want <= start + stored.length) return stored.subarray(position - start, position - start + want);
      return readExact(input, position, want);
    };
    const hasher = codecs.md5();
    const chunks: Uint8Array[] = [];
    let decoded = 0;
    const total = member.header.uncompressedSize;
    try {
      decodeCcobMember(readAt, member, codecs, (chunk) => {
        chunks.push(chunk);
        decoded += chunk.length;
        options.onDecode?.({ offset: member.offset, decoded, total });
      }, hasher);
    } catch (e) {
      // The browser codecs hand out one MD5 state, returned by digest(): give it back on failure too.
      hasher.digest();
      throw e;
    }
    const bytes = chunks.length === 1 ? chunks[0]! : concatBytes(chunks);
    const recalculatedHash = truncatedHash(hasher.digest());
    if (key !== undefined) options.cache?.set(key, { bytes, recalculatedHash });
    return { source: bytesSource(bytes), recalculatedHash, close() {} };
  };
}

/** The locator's options for reading in the browser (the Kernels and Diff views use them too). */
export function locateOptions(options: BrowserReadOptions): LocateOptions {
  const codecs = options.codecs;
  return {
    engine: options.engine,
    ...(codecs !== undefined
      ? { openCompressed: openCompressedInMemory(codecs, options.maxDecompressedSize, options), decompressOffload: offloadDecompressor(codecs) }
      : {}),
  };
}

/**
 * Every bundle and offload binary in `source`, as `offload-kit ls --json` and `offload-kit sizes` report them.
 * With `kpack`, a kpack'd host's code objects are looked for in the archives of that place (a dropped folder:
 * src/browser/kpack-tree.ts), `path` being the host's path there, as ls looks for them beside a file on disk.
 */
export function inspectSource(source: ByteSource | Uint8Array, name: string, options: InspectOptions & { readonly kpack?: { readonly place: KpackPlace; readonly path: string } } = {}): Inspection {
  let bundles = 0;
  let images = 0;
  const progress = options.onProgress;
  let location: Location = locate(source, {
    ...locateOptions(options),
    onBundle: progress === undefined ? undefined : (bundle) => progress({ bundles: ++bundles, images, offset: bundle.compressed?.offset ?? bundle.offset }),
    onOffloadBinaries: progress === undefined ? undefined : (run) => progress({ bundles, images: (images += run.images.length), offset: run.offset }),
  });
  if (options.kpack !== undefined) location = withKpackHost(options.kpack.place, options.kpack.path, source instanceof Uint8Array ? bytesSource(source) : source, location);
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
 * its decompressed contents; for an image of a compressed offload binary, inflated; for an NVIDIA fatbin
 * entry, decoded (LZ4, or zstd through `codecs`). (A plain entry is
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
        const stored = readExact(contents, entry.offset, entry.size);
        const nv = bundle.nvFatbin?.entries[ref.entry];
        if (nv === undefined) throw new Found(stored);
        // An NVIDIA entry as `offload-kit extract` writes it: decoded, PTX without its NUL.
        const zstd = options.codecs === undefined ? undefined : (frame: Uint8Array, capacity: number) => options.codecs!.zstdDecompressFrame(frame, capacity);
        throw new Found(decodeNvEntry({ ...nv, payloadOffset: nv.headerOffset + nv.headerSize }, stored, zstd).slice());
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
