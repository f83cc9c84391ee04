/**
 * The locator's findings (src/inspect/locate.ts) as plain JSON: what `offload-kit ls --json` prints for
 * each file, and what the browser Worker (src/browser/worker.ts) hands the inspector page, so the page
 * shows exactly what the CLI lists. Byte strings (IDs, section and member names, image strings) become
 * Unicode text here (UTF-8 decoded where valid, one char per byte otherwise; src/formats/bytes.ts).
 */
import type { AmdgpuCodeObject } from "../formats/amdgpu-code-object.js";
import { byteStringToUnicode } from "../formats/bytes.js";
import type { NvCubin } from "../formats/nv-fatbin.js";
import { objdumpImageKindName, offloadKindText } from "../formats/offload-binary.js";
import type { Location, SearchedRegion } from "./locate.js";
import type { CompressedBundleInfo, FoundOffloadImage, KpackBundleInfo, KpackEntryInfo, NvFatbinInfo, ScanProblem } from "./scan.js";

export interface EntryJson {
  readonly id: string;
  /** Absolute in the file; in the decompressed bytes for entries of a compressed bundle. */
  readonly offset: number;
  readonly size: number;
  readonly align: number;
  /** A kpack code object: its archive (for a kpack'd host's), key, architecture and stored bytes. */
  readonly kpack?: KpackEntryInfo;
}

export interface BundleJson {
  readonly index: number;
  readonly format: "binary" | "text" | "object" | "code-object" | "nv-fatbin" | "cubin" | "kpack";
  readonly offset: number;
  readonly size: number;
  readonly comment?: string;
  readonly align?: number;
  readonly compressed?: CompressedBundleInfo;
  readonly section?: string;
  readonly member?: string;
  /** `code-object`: what its ELF header says. */
  readonly codeObject?: AmdgpuCodeObject;
  /** `nv-fatbin`: the container's headers; `cubin`: its ELF header. */
  readonly nvFatbin?: NvFatbinInfo;
  readonly cubin?: NvCubin;
  /** `kpack`: the TOC key, and for a kpack'd host the HIPK wrapper. */
  readonly kpack?: KpackBundleInfo;
  readonly entries: readonly EntryJson[];
}

export interface ImageJson extends Omit<FoundOffloadImage, "strings"> {
  readonly imageKindName: string;
  readonly offloadKindName: string;
  readonly strings: Readonly<Record<string, string>>;
}

export interface OffloadRunJson {
  readonly offset: number;
  readonly size: number;
  readonly binaries: number;
  readonly section?: string;
  readonly member?: string;
  readonly images: readonly ImageJson[];
}

export interface LocationJson {
  readonly path: string;
  readonly size: number;
  readonly container: Location["container"];
  readonly searched: readonly SearchedRegion[];
  readonly bundles: readonly BundleJson[];
  readonly offloadBinaries: readonly OffloadRunJson[];
  readonly problems: readonly ScanProblem[];
}

function where(found: { readonly section?: string; readonly member?: string }) {
  return {
    ...(found.section !== undefined ? { section: byteStringToUnicode(found.section) } : {}),
    ...(found.member !== undefined ? { member: byteStringToUnicode(found.member) } : {}),
  };
}

/** One file's findings as `offload-kit ls --json` prints them. */
export function locationJson(path: string, report: Location): LocationJson {
  return {
    path,
    size: report.size,
    container: report.container,
    searched: report.searched.map((r) => ({ ...r, ...where(r) })),
    bundles: report.bundles.map((b) => ({
      index: b.index,
      format: b.format,
      offset: b.offset,
      size: b.size,
      ...(b.comment !== undefined ? { comment: b.comment } : {}),
      ...(b.align !== undefined ? { align: b.align } : {}),
      ...(b.compressed !== undefined ? { compressed: b.compressed } : {}),
      ...(b.codeObject !== undefined ? { codeObject: b.codeObject } : {}),
      ...(b.nvFatbin !== undefined ? { nvFatbin: b.nvFatbin } : {}),
      ...(b.cubin !== undefined ? { cubin: b.cubin } : {}),
      ...(b.kpack !== undefined ? { kpack: b.kpack } : {}),
      ...where(b),
      entries: b.entries.map((e) => ({ id: byteStringToUnicode(e.id), offset: e.offset, size: e.size, align: e.align, ...(e.kpack !== undefined ? { kpack: e.kpack } : {}) })),
    })),
    offloadBinaries: report.offloadBinaries.map((run) => ({
      ...run,
      ...where(run),
      images: run.images.map((image) => ({
        ...image,
        imageKindName: objdumpImageKindName(image.imageKind),
        offloadKindName: offloadKindText(image.offloadKind, image.version),
        triple: byteStringToUnicode(image.triple),
        arch: byteStringToUnicode(image.arch),
        strings: Object.fromEntries(image.strings.map(([k, v]) => [byteStringToUnicode(k), byteStringToUnicode(v)])),
      })),
    })),
    problems: report.problems.map((p) => (p.entries === undefined ? p : { ...p, entries: p.entries.map((e) => ({ ...e, id: byteStringToUnicode(e.id) })) })),
  };
}
