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
import { metadataKernels, metadataVersion, readAmdgpuMetadata } from "../formats/amdgpu-metadata.js";
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
  /** Why there are no kernels: v2 YAML metadata (not read), no metadata note, or a typed error reading it. */
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

export interface KernelListOptions {
  /**
   * Keep each kernel's whole map in `metadata` (true); without it `metadata` is empty, and a library's
   * hundred thousand maps are not held (a table needs only the friendly fields).
   */
  readonly keepMetadata?: boolean;
}

/** One kernel map as KernelInfo; `sizes` from the symbol table, `processor` for the occupancy estimate. */
export function kernelInfo(map: MsgpackMap, sizes: ReadonlyMap<string, number>, processor: string | ProcessorLimits | undefined, keepMetadata = true): KernelInfo {
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
    codeSize: sizes.get(symbol.endsWith(".kd") ? symbol.slice(0, -3) : name),
  };
  const limits = typeof processor === "string" ? processorLimits(processor) : processor;
  const occupancy = limits !== undefined && info.vgprs !== undefined && info.sgprs !== undefined
    ? estimateOccupancy(limits, {
      vgprs: info.vgprs, sgprs: info.sgprs, ldsBytes: info.lds ?? 0, wavefrontSize: info.wavefrontSize ?? 64,
      maxFlatWorkgroupSize: info.maxFlatWorkgroupSize ?? 1024,
    })
    : undefined;
  return { ...info, occupancy, metadata: keepMetadata ? map : EMPTY_MAP };
}

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
    const metadata = readAmdgpuMetadata(source, keep ? {} : { skipKeys: UNSHOWN_KEYS });
    if (metadata === undefined) return { ...base, kernels: [], problem: { code: "NO_AMDGPU_METADATA", message: "no AMDGPU metadata note" } };
    if (metadata.format === "yaml") {
      return { ...base, kernels: [], problem: { code: "V2_METADATA_NOT_READ", message: "code object v2 metadata (YAML) not read", offset: metadata.noteOffset } };
    }
    let sizes: ReadonlyMap<string, number>;
    try {
      sizes = functionSizes(source);
    } catch (e) {
      if (!isOffloadKitError(e)) throw e;
      sizes = new Map();
    }
    const version = metadataVersion(metadata.document);
    const limits = processor === undefined ? undefined : processorLimits(processor);
    const kernels = metadataKernels(metadata.document).map((k) => kernelInfo(k, sizes, limits, keep));
    return { ...base, ...(version !== undefined ? { metadataVersion: version } : {}), kernels };
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    return {
      id, ...(processor !== undefined ? { processor } : {}), ...(codeObjectVersion !== undefined ? { codeObjectVersion } : {}), size, kernels: [],
      problem: { code: e.code, message: e.message, ...(e.offset !== undefined ? { offset: e.offset } : {}) },
    };
  }
}
