/**
 * The kernels of one AMDGPU code object: each kernel's entry in the metadata note (src/formats/amdgpu-metadata.ts)
 * with the resources people ask about given friendly names, the code size from the symbol table
 * (src/kernels/symbols.ts), the demangled name (src/kernels/demangle.ts) and an occupancy estimate
 * (src/kernels/occupancy.ts). The metadata keys are those of llvm/docs/AMDGPUUsage.rst "Code Object V3 to V6
 * Metadata"; a key the note lacks is left undefined rather than guessed.
 *
 * A code object whose note cannot be read keeps its ID and size and carries the typed error as `problem`,
 * so one damaged entry does not hide the rest of a library.
 */
import { isOffloadKitError } from "../engine/errors.js";
import type { ByteSource } from "../engine/source.js";
import { parseAmdgpuCodeObject } from "../formats/amdgpu-code-object.js";
import { readExact } from "../engine/source.js";
import { METADATA_MAX_DEPTH, metadataKernels, metadataVersion, readAmdgpuMetadata } from "../formats/amdgpu-metadata.js";
import { decodeMsgpack } from "../formats/msgpack.js";
import type { MsgpackMap, MsgpackValue } from "../formats/msgpack.js";
import { demangle } from "./demangle.js";
import { estimateOccupancy, processorLimits } from "./occupancy.js";
import type { Occupancy, ProcessorLimits } from "./occupancy.js";
import { functionSizes } from "./symbols.js";
import type { NvCommonUsage, NvKernelUsage } from "./nv-kernels.js";

export interface KernelInfo {
  /** `.name`: the source-level (mangled) name. */
  readonly name: string;
  /** The demangled name; the mangled one when it cannot be demangled. */
  readonly demangled: string;
  /** `.symbol`: the kernel descriptor's symbol (`<name>.kd`). */
  readonly symbol: string;
  readonly vgprs?: number;
  readonly agprs?: number;
  readonly sgprs?: number;
  readonly vgprSpills?: number;
  readonly sgprSpills?: number;
  /** `.group_segment_fixed_size`: LDS bytes. */
  readonly lds?: number;
  /** `.private_segment_fixed_size`: scratch bytes per work-item. */
  readonly scratch?: number;
  readonly dynamicStack?: boolean;
  readonly wavefrontSize?: number;
  readonly kernargSize?: number;
  readonly maxFlatWorkgroupSize?: number;
  /** `st_size` of the kernel's function symbol. */
  readonly codeSize?: number;
  /** Waves per SIMD the resources allow (src/kernels/occupancy.ts); undefined for an unknown processor or missing counts. */
  readonly occupancy?: Occupancy;
  /** The kernel's whole map as decoded (for a cubin: its raw `.nv.info` records under `.nv.info`). */
  readonly metadata: MsgpackMap;
  /** NVIDIA cubins only: the resources cuobjdump -res-usage prints (src/kernels/nv-kernels.ts). */
  readonly nv?: NvKernelUsage;
}

export interface CodeObjectKernels {
  /** The entry ID (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`) or offload image ID it was found under. */
  readonly id: string;
  readonly processor?: string;
  readonly codeObjectVersion?: number;
  /** `amdhsa.version`. */
  readonly metadataVersion?: readonly [number, number];
  /** Bytes of the code object. */
  readonly size: number;
  readonly kernels: readonly KernelInfo[];
  /** Why there are no kernels: no metadata note, or a typed error reading it. */
  readonly problem?: { readonly code: string; readonly message: string; readonly offset?: number };
  /** NVIDIA cubins only: the cubin-wide GLOBAL and CONSTANT[n] of cuobjdump -res-usage. */
  readonly nvCommon?: NvCommonUsage;
}

function numberField(map: MsgpackMap, key: string): number | undefined {
  const v = map.get(key);
  return typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : undefined;
}

function stringField(map: MsgpackMap, key: string): string | undefined {
  const v: MsgpackValue | undefined = map.get(key);
  return typeof v === "string" ? v : undefined;
}

/** Demangled names already made: a library repeats each kernel in every code object (one per target ID). */
const demangled = new Map<string, string>();
const DEMANGLED_CACHE_SIZE = 65536;

function demangleCached(name: string): string {
  let text = demangled.get(name);
  if (text === undefined) {
    if (demangled.size >= DEMANGLED_CACHE_SIZE) demangled.clear();
    text = demangle(name) ?? name;
    demangled.set(name, text);
  }
  return text;
}

const EMPTY_MAP: MsgpackMap = new Map();
/** Keys no friendly field reads: not built when the whole maps are not kept. */
const UNSHOWN_KEYS: ReadonlySet<string> = new Set([".args", "amdhsa.printf"]);

/** Where a kernel's whole map is, when it was not built: its bytes in the note's descriptor. */
export interface KernelMetadataBytes {
  readonly bytes: Uint8Array;
  readonly start: number;
  readonly end: number;
  /** The descriptor's offset in the code object (error offsets). */
  readonly baseOffset: number;
}

/** The bytes of kernels whose `metadata` is decoded when first read (see listCodeObjectKernels). */
const metadataBytes = new WeakMap<KernelInfo, KernelMetadataBytes>();

/**
 * Where `kernel`'s metadata map lies in its note, for a writer that transcodes it straight to text
 * (src/formats/msgpack-json.ts) without decoding it; undefined when the map was built from the start.
 */
export function kernelMetadataBytes(kernel: KernelInfo): KernelMetadataBytes | undefined {
  return metadataBytes.get(kernel);
}

/**
 * `info` with a `metadata` decoded from `raw` on first read and kept: the note was checked whole already (so
 * this decode cannot fail), and a lister that only writes the map out never builds it.
 */
function withLazyMetadata(info: Omit<KernelInfo, "metadata">, raw: KernelMetadataBytes): KernelInfo {
  let decoded: MsgpackMap | undefined;
  const kernel = Object.defineProperty(info, "metadata", {
    enumerable: true,
    get: (): MsgpackMap => {
      if (decoded === undefined) {
        const value = decodeMsgpack(raw.bytes, raw.start, { maxDepth: METADATA_MAX_DEPTH, baseOffset: raw.baseOffset }).value;
        decoded = value instanceof Map ? value : new Map();
      }
      return decoded;
    },
  }) as KernelInfo;
  metadataBytes.set(kernel, raw);
  return kernel;
}

export interface KernelListOptions {
  /**
   * Keep each kernel's whole map in `metadata` (true); without it `metadata` is empty, and a library's
   * hundred thousand maps are not held (a table needs only the friendly fields).
   */
  readonly keepMetadata?: boolean;
}

/** One kernel map as KernelInfo; `sizes` from the symbol table, `processor` for the occupancy estimate. */
export function kernelInfo(map: MsgpackMap, sizes: ReadonlyMap<string, number>, processor: string | ProcessorLimits | undefined, keepMetadata = true, raw?: KernelMetadataBytes, asInNote: MsgpackMap = map): KernelInfo {
  const name = stringField(map, ".name") ?? "";
  const symbol = stringField(map, ".symbol") ?? "";
  const dynamic = map.get(".uses_dynamic_stack");
  const info = {
    name,
    demangled: demangleCached(name),
    symbol,
    vgprs: numberField(map, ".vgpr_count"),
    agprs: numberField(map, ".agpr_count"),
    sgprs: numberField(map, ".sgpr_count"),
    vgprSpills: numberField(map, ".vgpr_spill_count"),
    sgprSpills: numberField(map, ".sgpr_spill_count"),
    lds: numberField(map, ".group_segment_fixed_size"),
    scratch: numberField(map, ".private_segment_fixed_size"),
    dynamicStack: typeof dynamic === "boolean" ? dynamic : undefined,
    wavefrontSize: numberField(map, ".wavefront_size"),
    kernargSize: numberField(map, ".kernarg_segment_size"),
    maxFlatWorkgroupSize: numberField(map, ".max_flat_workgroup_size"),
    // v3+ descriptors are `<name>.kd`, v2's `<name>@kd`.
    codeSize: sizes.get(symbol.endsWith(".kd") || symbol.endsWith("@kd") ? symbol.slice(0, -3) : name),
  };
  const limits = typeof processor === "string" ? processorLimits(processor) : processor;
  const occupancy = limits !== undefined && info.vgprs !== undefined && info.sgprs !== undefined
    ? estimateOccupancy(limits, {
      vgprs: info.vgprs, sgprs: info.sgprs, ldsBytes: info.lds ?? 0, wavefrontSize: info.wavefrontSize ?? 64,
      maxFlatWorkgroupSize: info.maxFlatWorkgroupSize ?? 1024,
    })
    : undefined;
  if (keepMetadata && raw !== undefined) return withLazyMetadata({ ...info, occupancy }, raw);
  return { ...info, occupancy, metadata: keepMetadata ? asInNote : EMPTY_MAP };
}

/** Function sizes from the symbol table; none when it cannot be read (the kernels are still listed). */
function readSizes(source: ByteSource): ReadonlyMap<string, number> {
  try {
    return functionSizes(source);
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    return new Map();
  }
}

/**
 * Code object v2's keys (llvm/include/llvm/Support/AMDGPUMetadata.h, `Kernel::Key` and `CodeProps::Key`) under
 * the v3+ names the friendly fields read: `Name` is `.name`, `SymbolName` (`add@kd`) `.symbol`, and the
 * `CodeProps` map's NumVGPRs, NumSGPRs, NumSpilledVGPRs, NumSpilledSGPRs, GroupSegmentFixedSize,
 * PrivateSegmentFixedSize, IsDynamicCallStack, WavefrontSize, KernargSegmentSize and MaxFlatWorkGroupSize the
 * v3+ keys of the same meaning. The map as in the note is what `metadata` keeps.
 */
function v2Fields(kernel: MsgpackMap): MsgpackMap {
  const props = kernel.get("CodeProps");
  const fields: MsgpackMap = new Map();
  const copy = (from: MsgpackMap, key: string, to: string): void => {
    const v = from.get(key);
    if (v !== undefined) fields.set(to, v);
  };
  copy(kernel, "Name", ".name");
  copy(kernel, "SymbolName", ".symbol");
  if (props instanceof Map) {
    for (const [key, to] of V2_CODE_PROPS) copy(props, key, to);
  }
  return fields;
}

const V2_CODE_PROPS: readonly (readonly [string, string])[] = [
  ["NumVGPRs", ".vgpr_count"], ["NumSGPRs", ".sgpr_count"], ["NumSpilledVGPRs", ".vgpr_spill_count"],
  ["NumSpilledSGPRs", ".sgpr_spill_count"], ["GroupSegmentFixedSize", ".group_segment_fixed_size"],
  ["PrivateSegmentFixedSize", ".private_segment_fixed_size"], ["IsDynamicCallStack", ".uses_dynamic_stack"],
  ["WavefrontSize", ".wavefront_size"], ["KernargSegmentSize", ".kernarg_segment_size"],
  ["MaxFlatWorkGroupSize", ".max_flat_workgroup_size"],
];

/** The kernels of the code object in `source` (its whole bytes), listed under `id`. Never throws our errors. */
export function listCodeObjectKernels(source: ByteSource, id: string, options: KernelListOptions = {}): CodeObjectKernels {
  const size = source.size;
  let processor: string | undefined;
  let codeObjectVersion: number | undefined;
  try {
    const header = parseAmdgpuCodeObject(readExact(source, 0, Math.min(size, 64)));
    processor = header.processor;
    codeObjectVersion = header.codeObjectVersion;
    const base = { id, ...(processor !== undefined ? { processor } : {}), ...(codeObjectVersion !== undefined ? { codeObjectVersion } : {}), size };
    const keep = options.keepMetadata ?? true;
    // The kernel maps are built without `.args` either way; kept maps are found again by their bytes and
    // decoded whole only when read (a --json writer transcodes them instead: measured in docs/benchmarks.md).
    const kernelMaps = new Map<MsgpackMap, number[]>();
    const onMap = keep ? (map: MsgpackMap, start: number, end: number, depth: number): void => void (depth === 2 && kernelMaps.set(map, [start, end])) : undefined;
    const metadata = readAmdgpuMetadata(source, { skipKeys: UNSHOWN_KEYS, ...(onMap !== undefined ? { onMap } : {}) });
    if (metadata === undefined) return { ...base, kernels: [], problem: { code: "NO_AMDGPU_METADATA", message: "no AMDGPU metadata note" } };
    if (metadata.format === "yaml") {
      const version = metadataVersion(metadata.document, "yaml");
      const limits = processor === undefined ? undefined : processorLimits(processor);
      const kernels = metadataKernels(metadata.document, "yaml").map((k) => kernelInfo(v2Fields(k), readSizes(source), limits, keep, undefined, k));
      return { ...base, ...(version !== undefined ? { metadataVersion: version } : {}), kernels };
    }
    const sizes = readSizes(source);
    const version = metadataVersion(metadata.document);
    const limits = processor === undefined ? undefined : processorLimits(processor);
    const kernels = metadataKernels(metadata.document).map((k) => {
      const range = kernelMaps.get(k);
      const raw = range === undefined ? undefined : { bytes: metadata.bytes, start: range[0]!, end: range[1]!, baseOffset: metadata.noteOffset };
      return kernelInfo(k, sizes, limits, keep, raw);
    });
    return { ...base, ...(version !== undefined ? { metadataVersion: version } : {}), kernels };
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    return {
      id, ...(processor !== undefined ? { processor } : {}), ...(codeObjectVersion !== undefined ? { codeObjectVersion } : {}), size, kernels: [],
      problem: { code: e.code, message: e.message, ...(e.offset !== undefined ? { offset: e.offset } : {}) },
    };
  }
}
