/**
 * The kernels of one NVIDIA cubin (a fatbin's SASS entry, decoded, or a standalone `.cubin`) as KernelInfo rows:
 * the resources `cuobjdump -res-usage` prints (src/formats/nv-cubin-info.ts says where each one lives) under `nv`,
 * the demangled name, the code size from the symbol table. The AMDGPU fields (VGPRs, LDS, occupancy) stay
 * undefined: a cubin states none of them. `metadata` holds cuobjdump's fields by name and the raw `.nv.info`
 * records (`--json`; `offload-kit diff` compares these maps).
 *
 * Like listCodeObjectKernels, never throws our errors: a cubin that cannot be read keeps its ID and carries the error.
 */
import { isOffloadKitError } from "../engine/errors.js";
import type { ByteSource } from "../engine/source.js";
import { readNvCubinResources } from "../formats/nv-cubin-info.js";
import type { NvInfoAttribute, NvKernelResources } from "../formats/nv-cubin-info.js";
import type { MsgpackMap, MsgpackValue } from "../formats/msgpack.js";
import { demangle } from "./demangle.js";
import type { CodeObjectKernels, KernelInfo } from "./kernels.js";

/** What a cubin says of one kernel, in cuobjdump's terms. */
export interface NvKernelUsage {
  readonly registers?: number;
  /** STACK: bytes per thread. */
  readonly stack?: number;
  readonly frameSize?: number;
  /** SHARED: static shared memory per block, bytes. */
  readonly shared: number;
  readonly local: number;
  /** CONSTANT[n]: bytes per bank, keyed by bank number. */
  readonly constants: Readonly<Record<string, number>>;
}

/** The cubin-wide line of cuobjdump -res-usage ("Common:"). */
export interface NvCommonUsage {
  readonly global: number;
  readonly constants: Readonly<Record<string, number>>;
}

const EMPTY_MAP: MsgpackMap = new Map();

/** A record without its offset: `offload-kit diff` compares these maps, and offsets move between builds. */
function attributeMap(a: NvInfoAttribute): MsgpackMap {
  const entries: [MsgpackValue, MsgpackValue][] = [["name", a.name], ["attribute", a.attribute], ["format", a.format]];
  if (a.value !== undefined) entries.push(["value", a.value]);
  if (a.payload !== undefined) entries.push(["payload", a.payload.slice()]);
  return new Map(entries);
}

/** cuobjdump's fields by its names (what `diff` reports as changed), then the raw records. */
function nvMetadata(k: NvKernelResources): MsgpackMap {
  const map: MsgpackMap = new Map<MsgpackValue, MsgpackValue>();
  if (k.registers !== undefined) map.set("REG", k.registers);
  if (k.stack !== undefined) map.set("STACK", k.stack);
  map.set("SHARED", k.shared);
  map.set("LOCAL", k.local);
  for (const [bank, size] of k.constants) map.set(`CONSTANT[${bank}]`, size);
  map.set(".nv.info", k.attributes.map(attributeMap));
  return map;
}

export function nvKernelInfo(k: NvKernelResources, keepMetadata: boolean): KernelInfo & { readonly nv: NvKernelUsage } {
  return {
    name: k.name,
    demangled: demangle(k.name) ?? k.name,
    symbol: k.name,
    codeSize: k.codeSize,
    nv: {
      ...(k.registers !== undefined ? { registers: k.registers } : {}),
      ...(k.stack !== undefined ? { stack: k.stack } : {}),
      ...(k.frameSize !== undefined ? { frameSize: k.frameSize } : {}),
      shared: k.shared,
      local: k.local,
      constants: Object.fromEntries(k.constants),
    },
    metadata: keepMetadata ? nvMetadata(k) : EMPTY_MAP,
  };
}

/** The kernels of the cubin in `source`, listed under `id` (`sm_90`). */
export function listNvCubinKernels(source: ByteSource, id: string, options: { keepMetadata?: boolean } = {}): CodeObjectKernels & { readonly nvCommon?: NvCommonUsage } {
  const size = source.size;
  const processor = id;
  try {
    const resources = readNvCubinResources(source);
    return {
      id, processor, size,
      kernels: resources.kernels.map((k) => nvKernelInfo(k, options.keepMetadata ?? true)),
      nvCommon: { global: resources.global, constants: Object.fromEntries(resources.constants) },
    };
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    return { id, processor, size, kernels: [], problem: { code: e.code, message: e.message, ...(e.offset !== undefined ? { offset: e.offset } : {}) } };
  }
}
