/**
 * Resource usage of the kernels in a cubin (a CUDA ELF file, `e_machine` EM_CUDA): what `cuobjdump -res-usage`
 * prints per function (REG, STACK, SHARED, LOCAL, CONSTANT[n]) and for the whole cubin (GLOBAL, CONSTANT[n]).
 *
 * Where each number lives (learnt by laying cuobjdump 12.4's `-elf` and `-res-usage` output beside the bytes
 * of cubins nvcc 13.0 made for sm_75, sm_86, sm_90 and sm_100: test/fixtures/nv-res/; facts only):
 * | cuobjdump | source |
 * |---|---|
 * | Function NAME | each `.text.NAME` section whose symbol (`sh_info`, low 24 bits) is an STT_FUNC entry (`st_other` 0x10) |
 * | REG | EIATTR_REGCOUNT for the function's symbol in `.nv.info`; else `sh_info >> 24` of `.text.NAME` (sm_86 and older set both) |
 * | STACK | EIATTR_MIN_STACK_SIZE for the symbol (EIATTR_FRAME_SIZE held the same value in every cubin we checked) |
 * | SHARED | `sh_size` of `.nv.shared.NAME` (NOBITS; sm_90+ cubins already include the 1 KiB reserved per block) |
 * | LOCAL | `sh_size` of `.nv.local.NAME`, an assumption not confirmed: module-scoped `.local` needs code without the ABI, which ptxas 13 refuses, and local arrays now live in the stack frame (STACK); 0 on every cubin checked, as cuobjdump says |
 * | CONSTANT[n] | `sh_size` of `.nv.constantN.NAME` (bank 0: the parameters and driver constants) |
 * | Common GLOBAL | `.nv.global` + `.nv.global.init` sizes |
 * | Common CONSTANT[n] | `sh_size` of `.nv.constantN` (no kernel suffix: `__constant__` data is bank 3) |
 * | TEXTURE / SURFACE / SAMPLER | not read: nvcc 13 has no texture references, cuobjdump prints 0 for bindless objects |
 *
 * `.nv.info` and `.nv.info.NAME` (section type SHT_CUDA_INFO 0x70000000) are records back to back, 4-byte aligned:
 * | at | size | field |
 * |---|---|---|
 * | 0 | 1 | format: 1 EIFMT_NVAL (no value), 2 EIFMT_BVAL, 3 EIFMT_HVAL (value in the size field), 4 EIFMT_SVAL (payload) |
 * | 1 | 1 | attribute (EIATTR_*, table below) |
 * | 2 | 2 | EIFMT_SVAL: payload size; EIFMT_BVAL/HVAL: the value itself |
 * | 4 | size | EIFMT_SVAL payload; per-function attributes in `.nv.info` start with the u32 symbol index, then a u32 value |
 *
 * Attribute codes here are only those cuobjdump named on our fixtures (names from its `-elf` listing); others keep
 * their number. Parsing is bounded by the section; a record that runs past its section is a typed error
 * (NV_INFO_TRUNCATED), as is an unknown format byte (NV_INFO_FORMAT).
 */
import { OffloadKitError } from "../engine/errors.js";
import { readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { latin1Decode } from "./bytes.js";
import { openElf, sectionNames, sectionRange } from "./elf.js";
import type { ElfFile, ElfSection } from "./elf.js";

export const EIFMT_NVAL = 1;
export const EIFMT_BVAL = 2;
export const EIFMT_HVAL = 3;
export const EIFMT_SVAL = 4;

/** The attribute codes cuobjdump 12.4 named on our fixtures (`cuobjdump -elf`). */
export const EIATTR_NAMES: ReadonlyMap<number, string> = new Map([
  [0x0a, "EIATTR_PARAM_CBANK"],
  [0x0f, "EIATTR_EXTERNS"],
  [0x11, "EIATTR_FRAME_SIZE"],
  [0x12, "EIATTR_MIN_STACK_SIZE"],
  [0x17, "EIATTR_KPARAM_INFO"],
  [0x19, "EIATTR_CBANK_PARAM_SIZE"],
  [0x1b, "EIATTR_MAXREG_COUNT"],
  [0x1c, "EIATTR_EXIT_INSTR_OFFSETS"],
  [0x1e, "EIATTR_CRS_STACK_SIZE"],
  [0x2f, "EIATTR_REGCOUNT"],
  [0x31, "EIATTR_INT_WARP_WIDE_INSTR_OFFSETS"],
  [0x35, "EIATTR_SW2861232_WAR"],
  [0x36, "EIATTR_SW_WAR"],
  [0x37, "EIATTR_CUDA_API_VERSION"],
  [0x46, "EIATTR_SYSCALL_OFFSETS"],
  [0x4a, "EIATTR_VRC_CTA_INIT_COUNT"],
  [0x4c, "EIATTR_NUM_BARRIERS"],
  [0x50, "EIATTR_SPARSE_MMA_MASK"],
]);
export const EIATTR_FRAME_SIZE = 0x11;
export const EIATTR_MIN_STACK_SIZE = 0x12;
export const EIATTR_REGCOUNT = 0x2f;

const SHT_CUDA_INFO = 0x70000000;
const SHT_SYMTAB = 2;
const STT_FUNC = 2;
/** `st_other` bit of CUDA kernel entry points (`.entry`; device functions lack it). */
const STO_CUDA_ENTRY = 0x10;
const SYMBOL_SIZE = 24;
const RECORD_HEADER = 4;

/** One `.nv.info` record. */
export interface NvInfoAttribute {
  /** Offset of the record in the bytes given to the parser. */
  readonly offset: number;
  readonly format: number;
  readonly attribute: number;
  /** `EIATTR_…` when cuobjdump named the code on our fixtures; `EIATTR_0xNN` otherwise. */
  readonly name: string;
  /** EIFMT_BVAL / EIFMT_HVAL: the 16-bit value (EIFMT_NVAL: the raw field, 0 in every cubin seen). */
  readonly value?: number;
  /** EIFMT_SVAL: the payload (a view of the input). */
  readonly payload?: Uint8Array;
}

export function eiattrName(attribute: number): string {
  return EIATTR_NAMES.get(attribute) ?? `EIATTR_0x${attribute.toString(16).padStart(2, "0")}`;
}

/** The records of one `.nv.info*` section's bytes, in order. Throws NV_INFO_TRUNCATED / NV_INFO_FORMAT. */
export function parseNvInfo(bytes: Uint8Array, base = 0): NvInfoAttribute[] {
  const records: NvInfoAttribute[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + RECORD_HEADER > bytes.length) {
      throw new OffloadKitError("NV_INFO_TRUNCATED", `truncated .nv.info record at offset 0x${(base + at).toString(16)}: ${bytes.length - at} bytes left, a record header is 4`, { offset: base + at, field: "record" });
    }
    const format = bytes[at]!;
    const attribute = bytes[at + 1]!;
    const half = bytes[at + 2]! | (bytes[at + 3]! << 8);
    const name = eiattrName(attribute);
    if (format === EIFMT_SVAL) {
      if (at + RECORD_HEADER + half > bytes.length) {
        throw new OffloadKitError("NV_INFO_TRUNCATED", `.nv.info record ${name} at offset 0x${(base + at).toString(16)} has a payload of ${half} bytes, past the end of the section`, { offset: base + at + 2, field: "size" });
      }
      records.push({ offset: base + at, format, attribute, name, payload: bytes.subarray(at + RECORD_HEADER, at + RECORD_HEADER + half) });
      at += RECORD_HEADER + half;
    } else if (format === EIFMT_NVAL || format === EIFMT_BVAL || format === EIFMT_HVAL) {
      records.push({ offset: base + at, format, attribute, name, value: half });
      at += RECORD_HEADER;
    } else {
      throw new OffloadKitError("NV_INFO_FORMAT", `unknown .nv.info record format ${format} at offset 0x${(base + at).toString(16)}`, { offset: base + at, field: "format" });
    }
  }
  return records;
}

function u32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

/** A per-function `.nv.info` record (`{u32 symbol, u32 value}`): the symbol index and value, or undefined. */
export function functionValue(record: NvInfoAttribute): { symbol: number; value: number } | undefined {
  const p = record.payload;
  return p !== undefined && p.length >= 8 ? { symbol: u32(p, 0), value: u32(p, 4) } : undefined;
}

/** One kernel's resources, as cuobjdump -res-usage names them. */
export interface NvKernelResources {
  readonly name: string;
  /** Index of the kernel's symbol in `.symtab`. */
  readonly symbol: number;
  /** `st_size` of the kernel's symbol: bytes of SASS. */
  readonly codeSize: number;
  readonly registers?: number;
  readonly stack?: number;
  /** EIATTR_FRAME_SIZE, kept apart from the stack: the two have been equal on every kernel seen. */
  readonly frameSize?: number;
  readonly shared: number;
  readonly local: number;
  /** Bytes per constant bank (`.nv.constantN.NAME`), by bank number. */
  readonly constants: ReadonlyMap<number, number>;
  /** The kernel's `.nv.info.NAME` records and its per-function records in `.nv.info`. */
  readonly attributes: readonly NvInfoAttribute[];
}

export interface NvCubinResources {
  /** `.nv.global` + `.nv.global.init`. */
  readonly global: number;
  /** `.nv.constantN` sections without a kernel suffix. */
  readonly constants: ReadonlyMap<number, number>;
  readonly kernels: readonly NvKernelResources[];
}

const CONSTANT_SECTION = /^\.nv\.constant(\d+)(?:\.(.*))?$/s;

/** The resources of every kernel in the cubin `source` (its whole bytes). Throws OffloadKitError only. */
export function readNvCubinResources(source: ByteSource): NvCubinResources {
  const elf = openElf(source);
  const names = sectionNames(elf);
  const bytesOf = (s: ElfSection): Uint8Array => {
    const range = sectionRange(elf, s);
    return readExact(source, range.offset, range.size);
  };
  const symbols = readSymbols(elf, bytesOf);
  const byName = new Map<string, ElfSection>();
  let global = 0;
  const common = new Map<number, number>();
  const perFunction = new Map<number, NvInfoAttribute[]>();
  const kernelBanks = new Map<string, Map<number, number>>();
  for (const s of elf.sections) {
    const name = names[s.index]!;
    byName.set(name, s);
    if (name === ".nv.global" || name === ".nv.global.init") global += s.size;
    const constant = CONSTANT_SECTION.exec(name);
    if (constant !== null && constant[2] === undefined) common.set(Number(constant[1]), s.size);
    else if (constant !== null) {
      // Banks by kernel, gathered once: a library's cubin can hold thousands of kernels.
      const banks = kernelBanks.get(constant[2]!) ?? new Map<number, number>();
      banks.set(Number(constant[1]), s.size);
      kernelBanks.set(constant[2]!, banks);
    }
    if (name === ".nv.info" && s.type === SHT_CUDA_INFO) {
      for (const record of parseNvInfo(bytesOf(s), s.offset)) {
        const fv = functionValue(record);
        if (fv === undefined) continue;
        const list = perFunction.get(fv.symbol);
        if (list === undefined) perFunction.set(fv.symbol, [record]);
        else list.push(record);
      }
    }
  }
  const kernels: NvKernelResources[] = [];
  for (const s of elf.sections) {
    const section = names[s.index]!;
    if (!section.startsWith(".text.")) continue;
    const symbolIndex = s.info & 0xffffff;
    const symbol = symbols[symbolIndex];
    if (symbol === undefined || symbol.type !== STT_FUNC || (symbol.other & STO_CUDA_ENTRY) === 0) continue;
    const name = section.slice(".text.".length);
    const own = perFunction.get(symbolIndex) ?? [];
    const info = byName.get(`.nv.info.${name}`);
    const attributes = [...own, ...(info !== undefined && info.type === SHT_CUDA_INFO ? parseNvInfo(bytesOf(info), info.offset) : [])];
    const valueOf = (attribute: number): number | undefined => {
      const r = own.find((a) => a.attribute === attribute);
      return r === undefined ? undefined : functionValue(r)!.value;
    };
    const flagRegisters = s.info >>> 24;
    const registers = valueOf(EIATTR_REGCOUNT) ?? (flagRegisters !== 0 ? flagRegisters : undefined);
    const frameSize = valueOf(EIATTR_FRAME_SIZE);
    const stack = valueOf(EIATTR_MIN_STACK_SIZE) ?? frameSize;
    const constants = kernelBanks.get(name) ?? new Map<number, number>();
    kernels.push({
      name, symbol: symbolIndex, codeSize: symbol.size,
      ...(registers !== undefined ? { registers } : {}), ...(stack !== undefined ? { stack } : {}), ...(frameSize !== undefined ? { frameSize } : {}),
      shared: byName.get(`.nv.shared.${name}`)?.size ?? 0,
      local: byName.get(`.nv.local.${name}`)?.size ?? 0,
      constants: new Map([...constants].sort((a, b) => a[0] - b[0])),
      attributes,
    });
  }
  return { global, constants: new Map([...common].sort((a, b) => a[0] - b[0])), kernels };
}

interface CubinSymbol {
  readonly type: number;
  readonly other: number;
  readonly size: number;
  readonly name: string;
}

function readSymbols(elf: ElfFile, bytesOf: (s: ElfSection) => Uint8Array): CubinSymbol[] {
  const table = elf.sections.find((s) => s.type === SHT_SYMTAB);
  if (table === undefined || !elf.header.is64 || !elf.header.littleEndian) return [];
  if (table.link >= elf.sections.length) {
    throw new OffloadKitError("ELF_MALFORMED", `.symtab links to section ${table.link}, past the section table`, { field: "sh_link" });
  }
  const bytes = bytesOf(table);
  const strings = bytesOf(elf.sections[table.link]!);
  const symbols: CubinSymbol[] = [];
  for (let at = 0; at + SYMBOL_SIZE <= bytes.length; at += SYMBOL_SIZE) {
    const nameAt = u32(bytes, at);
    const end = nameAt < strings.length ? strings.indexOf(0, nameAt) : -1;
    const name = nameAt < strings.length ? latin1Decode(strings.subarray(nameAt, end < 0 ? strings.length : end)) : "";
    symbols.push({ type: bytes[at + 4]! & 0xf, other: bytes[at + 5]!, size: u32(bytes, at + 16) + u32(bytes, at + 20) * 4294967296, name });
  }
  return symbols;
}
