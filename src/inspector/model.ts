/**
 * The page's data model, without the DOM: each shown file's `offload-kit ls --json` report flattened into
 * rows (one per bundle entry and per offload image), what a filter keeps of them, in which order, and the
 * verdict of `offload-kit check` (src/inspect/check.ts, called, never copied) for a GPU typed as rocminfo,
 * `--gpu` or a bare processor name writes it.
 */
import type { EntryRef } from "../browser/inspect.js";
import { getImageKindName } from "../formats/offload-binary.js";
import { checkEntry, judgeEntries, parseGpu } from "../inspect/check.js";
import type { EntryVerdict, FileJudgement, GpuConfig } from "../inspect/check.js";
import { imageTargetId } from "../inspect/locate.js";
import type { ImageJson, LocationJson } from "../inspect/location-json.js";
import { processorOf } from "../inspect/sizes.js";
import { stem } from "../llvm/path.js";

export interface Row {
  readonly kind: "entry" | "image";
  /** The bundle's index (entries) or -1 (images). */
  readonly bundle: number;
  /** The entry's index in its bundle, or the image's index. */
  readonly index: number;
  readonly id: string;
  readonly offset: number;
  readonly size: number;
  readonly align?: number;
  readonly processor: string;
  /** The offload kind: the ID's first field (hip, hipv4, openmp, host) or the image's. */
  readonly offloadKind: string;
  /** The compression method of the entry's bundle or image, when compressed. */
  readonly compressed?: string;
  /** The name `offload-kit extract` gives it. */
  readonly name: string;
  /** Where its bytes are in the file, when they are stored as is (a download is then a slice of the file). */
  readonly range?: { readonly offset: number; readonly size: number };
  /**
   * A kpack'd host's code object: the `.kpack` archive (its path in the dropped tree) it is read from, and where
   * it is stored there (`range` is then unset: the host does not hold it).
   */
  readonly kpack?: { readonly archive: string; readonly compression: string; readonly offset: number; readonly size: number };
  readonly ref: EntryRef;
}

/** `<file>-<bundle index>-<ID>`, as `offload-kit extract` names a bundle entry (':', '/', '\\', NUL become '_'). */
export function entryFileName(file: string, bundle: number, id: string): string {
  return `${file}-${bundle}-${id}`.replace(/[:/\\\0]/g, "_");
}

/** `<stem>-<triple>-<arch>.<index>.<ext>`, as `offload-kit extract` names an image (clang-offload-packager's name, '/' as '_'). */
export function imageFileName(file: string, image: ImageJson): string {
  return `${stem(file)}-${image.triple}-${image.arch}.${image.index}.${getImageKindName(image.imageKind)}`.replace(/\//g, "_");
}

/**
 * Every entry and image of one report, in file order. `known` are the processors `sizes` found (its
 * `processors` rows): an ID whose last field names one of them is built for it, which saves parsing the ID
 * (processorOf costs about 30 µs; a file of 100,000 distinct IDs spent 3 s on the main thread, measured).
 */
export function* rowsOf(report: LocationJson, fileName: string, known: ReadonlySet<string> = new Set()): Generator<Row> {
  const processors = new Map<string, string>();
  const processor = (id: string) => {
    let p = processors.get(id);
    if (p !== undefined) return p;
    const colon = id.indexOf(":");
    const bare = colon < 0 ? id : id.slice(0, colon);
    const last = bare.slice(bare.lastIndexOf("-") + 1);
    p = !id.startsWith("host-") && known.has(last) ? last : processorOf(id);
    // Distinct IDs are not remembered past a few thousand (a file of 100,000 would keep them all).
    if (processors.size < 4096) processors.set(id, p);
    return p;
  };
  for (const bundle of report.bundles) {
    const c = bundle.compressed;
    for (let i = 0; i < bundle.entries.length; i++) {
      const e = bundle.entries[i]!;
      yield {
      kind: "entry",
      bundle: bundle.index,
      index: i,
      id: e.id,
      offset: e.offset,
      size: e.size,
      align: e.align,
      processor: processor(e.id),
      offloadKind: e.id.split("-")[0]!,
      // Not a slice of the file: a kpack'd host's code object (in an archive beside it), or a zstd frame of an archive, decoded.
      ...(e.kpack?.archive !== undefined
        ? { kpack: { archive: e.kpack.archive, compression: e.kpack.compression, offset: e.kpack.storedOffset, size: e.kpack.storedSize } }
        : e.kpack?.compression === "zstd-per-kernel" ? { compressed: "zstd-per-kernel" }
        : c !== undefined ? { compressed: c.method } : { range: { offset: e.offset, size: e.size } }),
      name: entryFileName(fileName, bundle.index, e.id),
      ref: { bundle: bundle.index, entry: i },
      };
    }
  }
  for (const run of report.offloadBinaries) {
    for (const image of run.images) {
      const id = imageTargetId(image);
      yield {
        kind: "image",
        bundle: -1,
        index: image.index,
        id,
        offset: image.offset,
        size: image.size,
        processor: processor(id),
        offloadKind: image.offloadKindName,
        ...(image.compressed ? { compressed: "zlib" } : { range: { offset: image.offset, size: image.size } }),
        name: imageFileName(fileName, image),
        ref: { image: image.index },
      };
    }
  }
}

/**
 * What a person pastes for their GPU, as `--gpu` takes it: rocminfo's ISA name
 * (`amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`), a full offload entry ID (`hipv4-amdgcn-amd-amdhsa--gfx90a`),
 * a target ID (`gfx90a:xnack-`), a processor (`gfx90a`, `sm_80`). Returns undefined for an empty field and
 * throws parseGpu's OffloadKitError (BAD_GPU) for anything else it cannot read.
 */
export function parseGpuText(text: string): GpuConfig | undefined {
  let t = text.trim();
  if (t === "") return undefined;
  // rocminfo and entry IDs: the target ID follows the triple's (possibly empty) environment field.
  const doubleDash = t.lastIndexOf("--");
  if (doubleDash >= 0) t = t.slice(doubleDash + 2);
  else if (/^[a-z0-9_]+-[a-z0-9_]+-[a-z0-9_]+-/i.test(t) && t.split(":")[0]!.split("-").length >= 4) t = t.slice(t.split(":")[0]!.lastIndexOf("-") + 1);
  return parseGpu(t);
}

export type SortOrder = "file" | "size-desc" | "size-asc" | "id";

export interface Filter {
  /** Case-insensitive substring of the ID. */
  readonly text: string;
  readonly processor: string;
  readonly target: string;
  readonly kind: string;
  readonly sort: SortOrder;
  readonly gpu?: GpuConfig;
  /** Keep only entries the GPU loads (host entries too, which every GPU needs beside its code object). */
  readonly loadsOnly: boolean;
}

export const NO_FILTER: Filter = { text: "", processor: "", target: "", kind: "", sort: "file", loadsOnly: false };

/** Whether the filter hides anything or reorders: the page then lists matching rows instead of bundles. */
export function isActive(filter: Filter): boolean {
  return filter.text !== "" || filter.processor !== "" || filter.target !== "" || filter.kind !== "" || filter.sort !== "file" || (filter.loadsOnly && filter.gpu !== undefined);
}

/** Verdicts per (GPU, ID): a library repeats a few IDs hundreds of times. */
export class Verdicts {
  private cache = new Map<string, EntryVerdict>();
  private gpu: GpuConfig | undefined;

  of(id: string, gpu: GpuConfig): EntryVerdict {
    if (gpu !== this.gpu) {
      this.cache = new Map();
      this.gpu = gpu;
    }
    let v = this.cache.get(id);
    if (v === undefined) this.cache.set(id, (v = checkEntry(id, gpu)));
    return v;
  }
}

export function applyFilter(rows: readonly Row[], filter: Filter, verdicts: Verdicts): Row[] {
  const text = filter.text.trim().toLowerCase();
  const kept = rows.filter((r) =>
    (text === "" || r.id.toLowerCase().includes(text)) &&
    (filter.processor === "" || r.processor === filter.processor) &&
    (filter.target === "" || r.id === filter.target) &&
    (filter.kind === "" || r.offloadKind === filter.kind) &&
    (!filter.loadsOnly || filter.gpu === undefined || verdicts.of(r.id, filter.gpu).verdict !== "not-loadable"));
  if (filter.sort === "size-desc") kept.sort((a, b) => b.size - a.size);
  else if (filter.sort === "size-asc") kept.sort((a, b) => a.size - b.size);
  else if (filter.sort === "id") kept.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return kept;
}

/** The entries that load on `gpu`, of how many device entries, and their bytes. */
export function verdictTotals(rows: readonly Row[], gpu: GpuConfig, verdicts: Verdicts): VerdictTotals {
  return totalsOfVerdicts(rows, rows.map((r) => verdicts.of(r.id, gpu)));
}

export interface VerdictTotals {
  readonly loadable: number;
  readonly device: number;
  readonly bytes: number;
}

/** verdictTotals, from the rows' verdicts found already (`found[i]` is `rows[i]`'s). */
export function totalsOfVerdicts(rows: readonly Row[], found: readonly EntryVerdict[]): VerdictTotals {
  let loadable = 0;
  let device = 0;
  let bytes = 0;
  for (let i = 0; i < rows.length; i++) {
    const v = found[i]!.verdict;
    if (v === "host") continue;
    device++;
    if (v === "loadable") (loadable++, (bytes += rows[i]!.size));
  }
  return { loadable, device, bytes };
}

/**
 * A file's verdict on `gpu`, by `offload-kit check`'s own rule (judgeEntries, called, not copied): with a
 * bare processor, the entries that need a feature setting count under that setting only, and the file
 * passes when some entry loads under every setting of the features the GPU leaves unstated.
 */
export function judgeRows(rows: readonly Row[], gpu: GpuConfig, verdicts: Verdicts): FileJudgement {
  return judgeEntries(rows.map((r) => verdicts.of(r.id, gpu)));
}
