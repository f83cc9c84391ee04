/**
 * Where the bytes go: per target ID, per processor and per bundle, how many entries a file holds and how
 * many bytes they take, across every bundle and offload binary the locator found (src/inspect/locate.ts).
 * `offload-kit sizes` prints it; the ROCm counterpart of PyTorch's cubinsizes.py. Browser-safe.
 *
 * `bytes` are entry payload bytes (decompressed, for entries of compressed bundles and compressed offload
 * images). Where compressed bundles are involved, `storedBytes` says what the entries take in the file: a
 * plain entry its size, an entry of a compressed bundle its share of the compressed bundle's size, in
 * proportion to its payload (zstd compresses the bundle as a whole, so a per-entry compressed size does not
 * exist; the shares of one compressed bundle add up to its size). Bundle headers and alignment padding are
 * counted only in the per-bundle view. NVIDIA fatbin entries are compressed one by one: `bytes` is what each
 * decodes to (a plain cubin with its padding), `storedBytes` its stored payload.
 */
import { hasHostKind, parseTarget } from "../bundler/targets.js";
import { isKnownOffloadArch, parseOffloadTarget } from "../target-id/index.js";
import { isNvArchId } from "./check.js";
import { imageTargetId } from "./locate.js";
import type { Location } from "./locate.js";

/** One group: a target ID, a processor, or everything. */
export interface SizeRow {
  readonly id: string;
  readonly entries: number;
  readonly bytes: number;
  /** Bytes in the file; present where compressed bundles are involved. */
  readonly storedBytes?: number;
}

export interface BundleSizeRow {
  readonly index: number;
  readonly format: "binary" | "text" | "object" | "code-object" | "nv-fatbin" | "cubin" | "kpack";
  readonly offset: number;
  readonly section?: string;
  readonly member?: string;
  readonly entries: number;
  /** Payload bytes of its entries. */
  readonly bytes: number;
  /** Bytes the bundle spans (header, padding and payloads), decompressed. */
  readonly size: number;
  /** For a bundle that came out of a compressed bundle: where that is, and its size in the file. */
  readonly compressed?: { readonly offset: number; readonly size: number; readonly method: string };
}

export interface FileSizes {
  readonly path: string;
  readonly size: number;
  readonly entries: number;
  readonly bytes: number;
  readonly storedBytes?: number;
  /** Sorted by bytes, largest first, then by ID. */
  readonly targets: readonly SizeRow[];
  readonly processors: readonly SizeRow[];
  /** In file order. */
  readonly bundles: readonly BundleSizeRow[];
  /** Offload images (0x10FF10AD), counted in targets and processors under `<kind>-<triple>-<arch>`. */
  readonly images: number;
}

export interface SizesTotal {
  readonly files: number;
  readonly entries: number;
  readonly bytes: number;
  readonly storedBytes?: number;
  readonly targets: readonly SizeRow[];
  readonly processors: readonly SizeRow[];
}

/**
 * The processor an entry is built for: `gfx90a` for `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`, `host` for
 * host entries, else the triple's architecture (`amdgcn` for an entry without a processor).
 */
export function processorOf(id: string): string {
  // NVIDIA entries are named by their arch already (`sm_90a`, `compute_90`).
  if (isNvArchId(id)) return id;
  const info = parseTarget(id);
  if (hasHostKind(info)) return "host";
  // 22's parser knows the newest processors and six-field IDs; 19's, the IDs 14 wrote (three-field
  // triples). 19's makes the whole ID the target ID when it ends in '-' (the empty name is an arch there).
  for (const parsed of [parseOffloadTarget(id, 22), info]) {
    const processor = parsed.targetId.split(":")[0]!;
    if (processor !== "" && isKnownOffloadArch(processor, 22)) return processor;
  }
  return info.triple.getArchName() || id;
}

interface Item {
  readonly id: string;
  readonly bytes: number;
  readonly stored: number;
}

class Groups {
  private readonly rows = new Map<string, { entries: number; bytes: number; stored: number }>();

  add(key: string, entries: number, bytes: number, stored: number): void {
    const row = this.rows.get(key) ?? { entries: 0, bytes: 0, stored: 0 };
    row.entries += entries;
    row.bytes += bytes;
    row.stored += stored;
    this.rows.set(key, row);
  }

  sorted(withStored: boolean): SizeRow[] {
    return [...this.rows.entries()]
      .map(([id, r]) => ({ id, entries: r.entries, bytes: r.bytes, ...(withStored ? { storedBytes: Math.round(r.stored) } : {}) }))
      .sort((a, b) => b.bytes - a.bytes || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
}

/** The sizes of one located file. */
export function fileSizes(path: string, location: Location): FileSizes {
  const items: Item[] = [];
  let compressedInvolved = false;
  for (const bundle of location.bundles) {
    const payload = bundle.entries.reduce((n, e) => n + e.size, 0);
    const c = bundle.compressed;
    if (c !== undefined) compressedInvolved = true;
    const nv = bundle.nvFatbin;
    if (nv !== undefined) {
      // NVIDIA entries are compressed one by one: each states what it decodes to and takes what it stores.
      bundle.entries.forEach((e, i) => {
        const entry = nv.entries[i]!;
        if (entry.compression !== "none") compressedInvolved = true;
        items.push({ id: e.id, bytes: entry.decodedSize, stored: e.size });
      });
      continue;
    }
    for (const e of bundle.entries) {
      // A zstd-per-kernel kpack code object has a frame of its own: what it takes in its archive is known exactly.
      if (e.kpack?.compression === "zstd-per-kernel") {
        compressedInvolved = true;
        items.push({ id: e.id, bytes: e.size, stored: e.kpack.storedSize });
        continue;
      }
      // An entry's share of its compressed bundle: by payload, or evenly when every payload is empty.
      const share = c === undefined ? e.size : payload > 0 ? (c.size * e.size) / payload : c.size / bundle.entries.length;
      items.push({ id: e.id, bytes: e.size, stored: share });
    }
  }
  let images = 0;
  for (const run of location.offloadBinaries) {
    for (const image of run.images) {
      images++;
      items.push({ id: imageTargetId(image), bytes: image.size, stored: image.size });
    }
  }
  const targets = new Groups();
  const processors = new Groups();
  // A library repeats a few IDs in every bundle; parsing each once measured 30 ms less on librocsparse0.
  const processorById = new Map<string, string>();
  for (const item of items) {
    targets.add(item.id, 1, item.bytes, item.stored);
    let processor = processorById.get(item.id);
    if (processor === undefined) processorById.set(item.id, (processor = processorOf(item.id)));
    processors.add(processor, 1, item.bytes, item.stored);
  }
  const bytes = items.reduce((n, i) => n + i.bytes, 0);
  return {
    path,
    size: location.size,
    entries: items.length,
    bytes,
    ...(compressedInvolved ? { storedBytes: Math.round(items.reduce((n, i) => n + i.stored, 0)) } : {}),
    targets: targets.sorted(compressedInvolved),
    processors: processors.sorted(compressedInvolved),
    bundles: location.bundles.map((b) => ({
      index: b.index,
      format: b.format,
      offset: b.offset,
      ...(b.section !== undefined ? { section: b.section } : {}),
      ...(b.member !== undefined ? { member: b.member } : {}),
      entries: b.entries.length,
      bytes: b.nvFatbin !== undefined ? b.nvFatbin.entries.reduce((n, e) => n + e.decodedSize, 0) : b.entries.reduce((n, e) => n + e.size, 0),
      size: b.size,
      ...(b.compressed !== undefined ? { compressed: { offset: b.compressed.offset, size: b.compressed.size, method: b.compressed.method } } : {}),
    })),
    images,
  };
}

/** The sizes of several files together. */
export function totalSizes(files: readonly FileSizes[]): SizesTotal {
  const targets = new Groups();
  const processors = new Groups();
  const withStored = files.some((f) => f.storedBytes !== undefined);
  for (const file of files) {
    for (const row of file.targets) targets.add(row.id, row.entries, row.bytes, row.storedBytes ?? row.bytes);
    for (const row of file.processors) processors.add(row.id, row.entries, row.bytes, row.storedBytes ?? row.bytes);
  }
  return {
    files: files.length,
    entries: files.reduce((n, f) => n + f.entries, 0),
    bytes: files.reduce((n, f) => n + f.bytes, 0),
    ...(withStored ? { storedBytes: files.reduce((n, f) => n + (f.storedBytes ?? f.bytes), 0) } : {}),
    targets: targets.sorted(withStored),
    processors: processors.sorted(withStored),
  };
}
