/**
 * `WriteBitcodeToFile` for the module model of ./ir.ts, byte for byte as LLVM 14 and 22 write it.
 *
 * Follows llvm/lib/Bitcode/Writer/BitcodeWriter.cpp: writeIdentificationBlock, ModuleBitcodeWriter::write
 * (VERSION 2, BLOCKINFO, type table, module info, module constants, metadata kinds, operand bundle tags,
 * sync scope names, function blocks, the module-level VST with function offsets), writeSymtab and
 * writeStrtab, and emitDarwinBCHeaderAndTrailer. Per-version facts are in ./versions.ts.
 *
 * The irsymtab: BitcodeWriter::writeSymtab calls irsymtab::build, which adds the producer, the triple and
 * the source file name to the string table, then fails ("input module has no datalayout": the wrapper tools
 * never set one); the symtab block is dropped but those strings stay at the end of STRTAB (read off the
 * native output: e.g. "...__tgt_unregister_lib14.0.6x86_64-pc-linux-gnuoffload.wrapper.object").
 *
 * | block            | id | abbrev width | holds                                                    |
 * |------------------|----|--------------|----------------------------------------------------------|
 * | IDENTIFICATION   | 13 | 5            | "LLVM<version>" (char6), epoch 0                        |
 * | MODULE           | 8  | 3            | everything below but STRTAB                             |
 * | BLOCKINFO        | 0  | 2            | abbreviations of VALUE_SYMTAB, CONSTANTS, FUNCTION      |
 * | TYPE             | 17 | 4            | NUMENTRY then one record per type                       |
 * | CONSTANTS        | 11 | 4            | SETTYPE when the type changes, then one record per value |
 * | METADATA_KIND    | 22 | 3            | every kind the context knows                            |
 * | OPERAND_BUNDLE_TAGS | 21 | 3         | every tag the context knows                             |
 * | SYNC_SCOPE_NAMES | 26 | 2            | "singlethread", ""                                      |
 * | FUNCTION         | 12 | 4 (14) / 5   | DECLAREBLOCKS, local CONSTANTS, instructions, local VST  |
 * | VALUE_SYMTAB     | 14 | 4            | FNENTRY [value id, word offset of the function block]   |
 * | STRTAB           | 23 | 3            | one blob: every name, then the symtab strings           |
 */
import { OffloadKitError } from "../../engine/errors.js";
import type { ByteSink, StreamLayout } from "./bitstream.js";
import { ARRAY, BitstreamWriter, BLOB, CHAR6, fixed, isChar6, lit, log2Ceil, vbr } from "./bitstream.js";
import { ValueEnumerator } from "./enumerator.js";
import type { Constant, Function, GlobalVariable, Instruction, Linkage, Module, Type, Value } from "./ir.js";
import { isDeclaration, isNullValue } from "./ir.js";
import type { FunctionAbbrevRole, VersionTable } from "./versions.js";
import { stringMapOrder } from "../string-map.js";
import { ArchType, ObjectFormatType, Triple } from "../triple.js";

const MODULE_BLOCK_ID = 8;
const CONSTANTS_BLOCK_ID = 11;
const FUNCTION_BLOCK_ID = 12;
const IDENTIFICATION_BLOCK_ID = 13;
const VALUE_SYMTAB_BLOCK_ID = 14;
const TYPE_BLOCK_ID = 17;
const OPERAND_BUNDLE_TAGS_BLOCK_ID = 21;
const METADATA_KIND_BLOCK_ID = 22;
const STRTAB_BLOCK_ID = 23;
const SYNC_SCOPE_NAMES_BLOCK_ID = 26;

const TYPE_CODE = { NUMENTRY: 1, VOID: 2, LABEL: 5, INTEGER: 7, POINTER: 8, ARRAY: 11, METADATA: 16, STRUCT_ANON: 18, STRUCT_NAME: 19, STRUCT_NAMED: 20, FUNCTION: 21, OPAQUE_POINTER: 25 };
const MODULE_CODE = { VERSION: 1, TRIPLE: 2, SECTIONNAME: 5, GLOBALVAR: 7, FUNCTION: 8, VSTOFFSET: 13, SOURCE_FILENAME: 16 };
const CST_CODE = { SETTYPE: 1, NULL: 2, INTEGER: 4, AGGREGATE: 7, STRING: 8, CSTRING: 9, CE_GEP_OLD: 12, CE_INBOUNDS_GEP: 20, CE_GEP: 32 };
const FUNC_CODE = { DECLAREBLOCKS: 1, BINOP: 2, CAST: 3, RET: 10, BR: 11, SWITCH: 12, PHI: 16, LOAD: 20, CMP2: 28, CALL: 34, GEP: 43, STORE: 44 };
const BINOP_CODE = { lshr: 8, and: 10 } as const;
const ICMP_PREDICATE = { eq: 32, ne: 33 } as const;
const CAST_TRUNC = 0;
const CALL_EXPLICIT_TYPE = 1 << 15;
const BWH_HEADER_SIZE = 20;

const LINKAGE_CODE: Record<Linkage, number> = { external: 0, appending: 2, internal: 3, weak: 16, weak_odr: 17 };

/** `getStringEncoding`: char6 when every byte is, else 7-bit when every byte is, else 8-bit. */
function stringEncoding(text: string): "char6" | "fixed7" | "fixed8" {
  let sevenBit = true;
  let char6 = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128) sevenBit = false;
    if (!isChar6(c)) char6 = false;
  }
  return char6 ? "char6" : sevenBit ? "fixed7" : "fixed8";
}

function chars(text: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) out.push(text.charCodeAt(i));
  return out;
}

/** `emitSignedInt64`: the sign in bit 0. */
function signedVbrValue(value: bigint | number): number {
  const v = BigInt(value);
  return Number(v >= 0n ? v << 1n : ((-v) << 1n) | 1n);
}

function encodedAlign(align: number | undefined): number {
  return align === undefined ? 0 : Math.log2(align) + 1;
}

/** StringTableBuilder(RAW): strings appended in the order added, a repeated string keeping its first offset. */
class RawStringTable {
  private readonly offsets = new Map<string, number>();
  private readonly parts: string[] = [];
  size = 0;

  add(text: string): number {
    const known = this.offsets.get(text);
    if (known !== undefined) return known;
    const offset = this.size;
    this.offsets.set(text, offset);
    this.parts.push(text);
    this.size += text.length;
    return offset;
  }

  bytes(): Uint8Array {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const part of this.parts) for (let i = 0; i < part.length; i++) out[at++] = part.charCodeAt(i);
    return out;
  }
}

function darwinCpuType(triple: Triple): number {
  const ABI64 = 0x01000000;
  switch (triple.arch) {
    case ArchType.x86_64: return 7 | ABI64;
    case ArchType.x86: return 7;
    case ArchType.ppc: return 18;
    case ArchType.ppc64: return 18 | ABI64;
    case ArchType.arm:
    case ArchType.thumb: return 12;
    default: return 0xffffffff;
  }
}

/** One pass of the module writer over a BitstreamWriter. */
class ModulePass {
  private readonly strtab = new RawStringTable();
  private readonly ve: ValueEnumerator;
  private readonly functionAbbrev = new Map<FunctionAbbrevRole, number>();
  private readonly sections = new Map<string, number>();
  private readonly functionStart = new Map<Function, number>();
  private startBit = 0;
  private structNameAbbrev = 0;
  private readonly scratch = new Uint8Array(1 << 20);

  constructor(private readonly module: Module, private readonly table: VersionTable, private readonly out: BitstreamWriter) {
    this.ve = new ValueEnumerator(module);
  }

  run(): void {
    const triple = new Triple(this.module.triple, this.table.version === 14 ? 14 : 22);
    const darwin = triple.isOSDarwin() || triple.objectFormat === ObjectFormatType.MachO;
    const out = this.out;
    if (darwin) this.writeDarwinHeader(triple);
    out.emitBytes(new Uint8Array([0x42, 0x43, 0xc0, 0xde]));
    this.startBit = out.bitNo;
    this.writeIdentification();
    this.writeModule();
    this.strtab.add(this.table.symtabProducer);
    this.strtab.add(this.module.triple);
    this.strtab.add(this.module.sourceFileName);
    out.enterSubblock(STRTAB_BLOCK_ID, 3);
    const blobAbbrev = out.defineAbbrev([lit(1), BLOB]);
    out.emitBlobRecord(blobAbbrev, this.strtab.bytes());
    out.exitBlock();
    if (darwin) {
      const end = out.bitNo / 8;
      if (end - BWH_HEADER_SIZE > 0xffff_ffff) {
        throw new OffloadKitError(
          "BITCODE_FIELD_OVERFLOW",
          `${end - BWH_HEADER_SIZE} bytes of bitcode do not fit the Darwin bitcode wrapper header: it holds the size in 32 bits`,
          { field: "bitcode wrapper size" },
        );
      }
      out.recordLateValue("bcsize", end - BWH_HEADER_SIZE);
      out.emitBytes(new Uint8Array((16 - (end % 16)) % 16));
    }
    out.finish();
  }

  private writeDarwinHeader(triple: Triple): void {
    const header = new DataView(new ArrayBuffer(BWH_HEADER_SIZE));
    header.setUint32(0, 0x0b17c0de, true);
    header.setUint32(4, 0, true);
    header.setUint32(8, BWH_HEADER_SIZE, true);
    header.setUint32(12, this.out.lateValue("bcsize"), true);
    header.setUint32(16, darwinCpuType(triple), true);
    this.out.emitBytes(new Uint8Array(header.buffer));
  }

  private writeStringRecord(code: number, text: string, abbrev: number): void {
    const values = chars(text);
    const usable = abbrev !== 0 && values.every(isChar6);
    this.out.emitRecord(code, values, usable ? abbrev : 0);
  }

  private writeIdentification(): void {
    const out = this.out;
    out.enterSubblock(IDENTIFICATION_BLOCK_ID, 5);
    const stringAbbrev = out.defineAbbrev([lit(1), ARRAY, CHAR6]);
    this.writeStringRecord(1, this.table.producer, stringAbbrev);
    const epochAbbrev = out.defineAbbrev([lit(2), vbr(6)]);
    out.emitRecord(2, [0], epochAbbrev);
    out.exitBlock();
  }

  private writeModule(): void {
    const out = this.out;
    out.enterSubblock(MODULE_BLOCK_ID, 3);
    out.emitRecord(MODULE_CODE.VERSION, [2]);
    this.writeBlockInfo();
    this.writeTypeTable();
    this.writeModuleInfo();
    const [first, end] = this.ve.moduleConstantRange();
    this.writeConstants(first, end, true);
    this.writeNameBlock(METADATA_KIND_BLOCK_ID, 3, this.table.metadataKinds, 6, true);
    this.writeNameBlock(OPERAND_BUNDLE_TAGS_BLOCK_ID, 3, this.table.operandBundleTags, 1, false);
    this.writeNameBlock(SYNC_SCOPE_NAMES_BLOCK_ID, 2, this.table.syncScopeNames, 1, false);
    for (const fn of this.module.functions) if (!isDeclaration(fn)) this.writeFunction(fn);
    this.writeModuleSymbolTable();
    out.exitBlock();
  }

  private writeNameBlock(blockId: number, width: number, names: readonly string[], code: number, numbered: boolean): void {
    this.out.enterSubblock(blockId, width);
    names.forEach((name, i) => this.out.emitRecord(code, numbered ? [i, ...chars(name)] : chars(name)));
    this.out.exitBlock();
  }

  private writeBlockInfo(): void {
    const out = this.out;
    out.enterBlockInfo();
    for (const { blockId, abbrev, role } of this.table.blockInfo(this.ve.typeBits())) {
      const id = out.defineBlockInfoAbbrev(blockId, abbrev);
      if (role !== undefined) this.functionAbbrev.set(role, id);
    }
    out.exitBlock();
  }

  private writeTypeTable(): void {
    const out = this.out;
    const ve = this.ve;
    const bits = ve.typeBits();
    out.enterSubblock(TYPE_BLOCK_ID, 4);
    const ptrAbbrev = this.table.typedPointerAbbrev ? out.defineAbbrev([lit(TYPE_CODE.POINTER), fixed(bits), lit(0)]) : 0;
    const opaquePtrAbbrev = out.defineAbbrev([lit(TYPE_CODE.OPAQUE_POINTER), lit(0)]);
    const functionAbbrev = out.defineAbbrev([lit(TYPE_CODE.FUNCTION), fixed(1), ARRAY, fixed(bits)]);
    const structAnonAbbrev = out.defineAbbrev([lit(TYPE_CODE.STRUCT_ANON), fixed(1), ARRAY, fixed(bits)]);
    this.structNameAbbrev = out.defineAbbrev([lit(TYPE_CODE.STRUCT_NAME), ARRAY, CHAR6]);
    const structNamedAbbrev = out.defineAbbrev([lit(TYPE_CODE.STRUCT_NAMED), fixed(1), ARRAY, fixed(bits)]);
    const arrayAbbrev = out.defineAbbrev([lit(TYPE_CODE.ARRAY), vbr(8), fixed(bits)]);
    out.emitRecord(TYPE_CODE.NUMENTRY, [ve.types.length]);
    for (const type of ve.types) {
      switch (type.kind) {
        case "void": out.emitRecord(TYPE_CODE.VOID, []); break;
        case "label": out.emitRecord(TYPE_CODE.LABEL, []); break;
        case "metadata": out.emitRecord(TYPE_CODE.METADATA, []); break;
        case "int": out.emitRecord(TYPE_CODE.INTEGER, [type.bits]); break;
        case "ptr":
          if (type.pointee === undefined) out.emitRecord(TYPE_CODE.OPAQUE_POINTER, [0], opaquePtrAbbrev);
          else out.emitRecord(TYPE_CODE.POINTER, [ve.typeId(type.pointee), 0], ptrAbbrev);
          break;
        case "function":
          out.emitRecord(TYPE_CODE.FUNCTION, [type.varArg ? 1 : 0, ve.typeId(type.result), ...type.params.map((p) => ve.typeId(p))], functionAbbrev);
          break;
        case "array": out.emitRecord(TYPE_CODE.ARRAY, [type.count, ve.typeId(type.element)], arrayAbbrev); break;
        case "struct": {
          const elements = [type.packed ? 1 : 0, ...type.elements.map((e) => ve.typeId(e))];
          if (type.name === undefined) {
            out.emitRecord(TYPE_CODE.STRUCT_ANON, elements, structAnonAbbrev);
          } else {
            this.writeStringRecord(TYPE_CODE.STRUCT_NAME, type.name, this.structNameAbbrev);
            out.emitRecord(TYPE_CODE.STRUCT_NAMED, elements, structNamedAbbrev);
          }
          break;
        }
      }
    }
    out.exitBlock();
  }

  private isDsoLocal(value: GlobalVariable | Function): boolean {
    const visibility = value.kind === "global" ? value.visibility : "default";
    return value.linkage === "internal" || visibility !== "default";
  }

  private writeModuleInfo(): void {
    const out = this.out;
    const ve = this.ve;
    const module = this.module;
    if (module.triple !== "") this.writeStringRecord(MODULE_CODE.TRIPLE, module.triple, 0);
    let maxAlign = 0;
    let maxGlobalType = 0;
    const addSection = (section: string | undefined) => {
      if (section === undefined || this.sections.has(section)) return;
      this.writeStringRecord(MODULE_CODE.SECTIONNAME, section, 0);
      this.sections.set(section, this.sections.size + 1);
    };
    for (const global of module.globals) {
      if (global.align !== undefined) maxAlign = Math.max(maxAlign, global.align);
      maxGlobalType = Math.max(maxGlobalType, ve.typeId(global.valueType));
      addSection(global.section);
    }
    for (const fn of module.functions) addSection(fn.section);
    let simpleGlobalAbbrev = 0;
    if (module.globals.length > 0) {
      simpleGlobalAbbrev = out.defineAbbrev([
        lit(MODULE_CODE.GLOBALVAR), vbr(8), vbr(8), fixed(log2Ceil(maxGlobalType + 1)), vbr(6), vbr(6), fixed(5),
        maxAlign === 0 ? lit(0) : fixed(log2Ceil(encodedAlign(maxAlign) + 1)),
        this.sections.size === 0 ? lit(0) : fixed(log2Ceil(this.sections.size + 1)),
      ]);
    }
    const encoding = stringEncoding(module.sourceFileName);
    const nameAbbrev = out.defineAbbrev([
      lit(MODULE_CODE.SOURCE_FILENAME), ARRAY, encoding === "char6" ? CHAR6 : fixed(encoding === "fixed7" ? 7 : 8),
    ]);
    out.emitRecord(MODULE_CODE.SOURCE_FILENAME, chars(module.sourceFileName), nameAbbrev);
    for (const global of module.globals) {
      const values = [
        this.strtab.add(global.name), global.name.length, ve.typeId(global.valueType), 2 | (global.constant ? 1 : 0),
        global.initializer === undefined ? 0 : ve.valueId(global.initializer) + 1, LINKAGE_CODE[global.linkage],
        encodedAlign(global.align), global.section === undefined ? 0 : this.sections.get(global.section)!,
      ];
      const dsoLocal = this.isDsoLocal(global);
      if (global.visibility !== "default" || global.unnamedAddr || dsoLocal) {
        const partition = this.strtab.add("");
        values.push(global.visibility === "hidden" ? 1 : 0, 0, global.unnamedAddr ? 1 : 0, 0, 0, 0, 0, dsoLocal ? 1 : 0, partition, 0, ...this.table.globalVarTail);
        out.emitRecord(MODULE_CODE.GLOBALVAR, values);
      } else {
        out.emitRecord(MODULE_CODE.GLOBALVAR, values, simpleGlobalAbbrev);
      }
    }
    for (const fn of module.functions) {
      const name = this.strtab.add(fn.name);
      out.emitRecord(MODULE_CODE.FUNCTION, [
        name, fn.name.length, ve.typeId(fn.functionType), 0, isDeclaration(fn) ? 1 : 0, LINKAGE_CODE[fn.linkage], 0, 0,
        fn.section === undefined ? 0 : this.sections.get(fn.section)!, 0, 0, 0, 0, 0, 0, 0, 0, this.isDsoLocal(fn) ? 1 : 0, 0,
        this.strtab.add(""), 0,
      ]);
    }
    const vstAbbrev = out.defineAbbrev([lit(MODULE_CODE.VSTOFFSET), fixed(32)]);
    out.emitRecord(MODULE_CODE.VSTOFFSET, [out.lateValue("vst")], vstAbbrev);
  }

  private writeConstants(first: number, end: number, isGlobal: boolean): void {
    if (first === end) return;
    const out = this.out;
    const ve = this.ve;
    out.enterSubblock(CONSTANTS_BLOCK_ID, 4);
    let aggregateAbbrev = 0;
    let string8Abbrev = 0;
    let cstring7Abbrev = 0;
    let cstring6Abbrev = 0;
    if (isGlobal) {
      aggregateAbbrev = out.defineAbbrev([lit(CST_CODE.AGGREGATE), ARRAY, fixed(log2Ceil(end + 1))]);
      string8Abbrev = out.defineAbbrev([lit(CST_CODE.STRING), ARRAY, fixed(8)]);
      cstring7Abbrev = out.defineAbbrev([lit(CST_CODE.CSTRING), ARRAY, fixed(7)]);
      cstring6Abbrev = out.defineAbbrev([lit(CST_CODE.CSTRING), ARRAY, CHAR6]);
    }
    const SETTYPE_ABBREV = 4;
    const INTEGER_ABBREV = 5;
    let lastType: Type | undefined;
    for (let i = first; i < end; i++) {
      const value = ve.values[i]!.value as Constant;
      if (value.type !== lastType) {
        lastType = value.type;
        out.emitRecord(CST_CODE.SETTYPE, [ve.typeId(value.type)], SETTYPE_ABBREV);
      }
      if (isNullValue(value)) {
        out.emitRecord(CST_CODE.NULL, []);
        continue;
      }
      switch (value.kind) {
        case "int":
          out.emitRecord(CST_CODE.INTEGER, [signedVbrValue(value.value)], INTEGER_ABBREV);
          break;
        case "data": {
          const data = value.data;
          if (!data.cString) {
            out.emitArrayRecordHead(string8Abbrev, CST_CODE.STRING, data.source.size);
            out.emitPayload(data.source, 0, data.source.size, "fixed8", this.scratch);
            break;
          }
          const count = data.source.size - 1;
          const abbrev = data.char6 ? cstring6Abbrev : data.sevenBit ? cstring7Abbrev : 0;
          if (abbrev === 0) {
            out.emitUnabbrevRecordHead(CST_CODE.CSTRING, count);
            out.emitPayload(data.source, 0, count, "vbr6", this.scratch);
          } else {
            out.emitArrayRecordHead(abbrev, CST_CODE.CSTRING, count);
            out.emitPayload(data.source, 0, count, data.char6 ? "char6" : "fixed7", this.scratch);
          }
          break;
        }
        case "aggregate":
          out.emitRecord(CST_CODE.AGGREGATE, value.elements.map((e) => ve.valueId(e)), aggregateAbbrev);
          break;
        case "gep": {
          const record = [ve.typeId(value.sourceType)];
          let code: number;
          if (this.table.gepFlagsRecord) {
            code = CST_CODE.CE_GEP;
            record.push(value.inBounds ? this.table.gepInBoundsFlags : 0);
          } else {
            code = value.inBounds ? CST_CODE.CE_INBOUNDS_GEP : CST_CODE.CE_GEP_OLD;
          }
          for (const operand of value.operands) record.push(ve.typeId(operand.type), ve.valueId(operand));
          out.emitRecord(code, record);
          break;
        }
        default:
          throw new Error(`unexpected constant ${value.kind}`);
      }
    }
    out.exitBlock();
  }

  private pushValueAndType(value: Value, instId: number, record: number[]): boolean {
    const id = this.ve.valueId(value);
    record.push(instId - id);
    if (id >= instId) {
      record.push(this.ve.typeId(value.type));
      return true;
    }
    return false;
  }

  private pushValue(value: Value, instId: number, record: number[]): void {
    record.push(instId - this.ve.valueId(value));
  }

  private writeInstruction(instruction: Instruction, instId: number): void {
    const out = this.out;
    const ve = this.ve;
    const abbrev = (role: FunctionAbbrevRole) => this.functionAbbrev.get(role) ?? 0;
    const record: number[] = [];
    const ops = instruction.operands;
    switch (instruction.opcode) {
      case "ret":
        out.emitRecord(FUNC_CODE.RET, [], abbrev("retVoid"));
        return;
      case "call": {
        const ft = instruction.functionType!;
        record.push(0, CALL_EXPLICIT_TYPE, ve.typeId(ft));
        this.pushValueAndType(ops[ops.length - 1]!, instId, record);
        for (let i = 0; i < ft.params.length; i++) this.pushValue(ops[i]!, instId, record);
        out.emitRecord(FUNC_CODE.CALL, record);
        return;
      }
      case "load": {
        const forward = this.pushValueAndType(ops[0]!, instId, record);
        record.push(ve.typeId(instruction.type), encodedAlign(instruction.align), 0);
        out.emitRecord(FUNC_CODE.LOAD, record, forward ? 0 : abbrev("load"));
        return;
      }
      case "store": {
        let forward = this.pushValueAndType(ops[1]!, instId, record);
        forward = this.pushValueAndType(ops[0]!, instId, record) || forward;
        record.push(encodedAlign(instruction.align), 0);
        out.emitRecord(FUNC_CODE.STORE, record, forward ? 0 : abbrev("store"));
        return;
      }
      case "gep": {
        record.push(instruction.inBounds ? this.table.gepInBoundsFlags : 0, ve.typeId(instruction.elementType!));
        for (const operand of ops) this.pushValueAndType(operand, instId, record);
        out.emitRecord(FUNC_CODE.GEP, record, abbrev("gep"));
        return;
      }
      case "icmp": {
        const forward = this.pushValueAndType(ops[0]!, instId, record);
        this.pushValue(ops[1]!, instId, record);
        record.push(ICMP_PREDICATE[instruction.predicate!]);
        out.emitRecord(FUNC_CODE.CMP2, record, forward ? 0 : abbrev("cmp"));
        return;
      }
      case "and":
      case "lshr": {
        const forward = this.pushValueAndType(ops[0]!, instId, record);
        this.pushValue(ops[1]!, instId, record);
        record.push(BINOP_CODE[instruction.opcode]);
        out.emitRecord(FUNC_CODE.BINOP, record, forward ? 0 : abbrev("binop"));
        return;
      }
      case "trunc": {
        const forward = this.pushValueAndType(ops[0]!, instId, record);
        record.push(ve.typeId(instruction.type), CAST_TRUNC);
        out.emitRecord(FUNC_CODE.CAST, record, forward ? 0 : abbrev("cast"));
        return;
      }
      case "br": {
        const blocks = instruction.blocks!;
        record.push(ve.valueId(blocks[0]!));
        if (blocks.length > 1) {
          record.push(ve.valueId(blocks[1]!));
          this.pushValue(ops[0]!, instId, record);
          out.emitRecord(FUNC_CODE.BR, record, abbrev("brCond"));
        } else {
          out.emitRecord(FUNC_CODE.BR, record, abbrev("brUncond"));
        }
        return;
      }
      case "switch": {
        const blocks = instruction.blocks!;
        record.push(ve.typeId(ops[0]!.type));
        this.pushValue(ops[0]!, instId, record);
        record.push(ve.valueId(blocks[0]!));
        instruction.cases!.forEach((value, i) => record.push(ve.valueId(value), ve.valueId(blocks[i + 1]!)));
        out.emitRecord(FUNC_CODE.SWITCH, record);
        return;
      }
      case "phi": {
        record.push(ve.typeId(instruction.type));
        instruction.blocks!.forEach((block, i) => {
          record.push(signedVbrValue(instId - ve.valueId(ops[i]!)), ve.valueId(block));
        });
        out.emitRecord(FUNC_CODE.PHI, record);
        return;
      }
    }
  }

  private writeFunction(fn: Function): void {
    const out = this.out;
    const ve = this.ve;
    this.functionStart.set(fn, out.bitNo);
    out.enterSubblock(FUNCTION_BLOCK_ID, this.table.functionBlockWidth);
    ve.incorporateFunction(fn);
    out.emitRecord(FUNC_CODE.DECLAREBLOCKS, [ve.basicBlocks.length]);
    const [first, end] = ve.functionConstantRange();
    this.writeConstants(first, end, false);
    let instId = end;
    for (const block of fn.blocks) {
      for (const instruction of block.instructions) {
        this.writeInstruction(instruction, instId);
        if (instruction.type.kind !== "void") instId++;
      }
    }
    this.writeFunctionSymbolTable(fn);
    ve.purgeFunction();
    out.exitBlock();
  }

  private writeFunctionSymbolTable(fn: Function): void {
    if (fn.localSymbols.length === 0) return;
    const out = this.out;
    out.enterSubblock(VALUE_SYMTAB_BLOCK_ID, 4);
    const [ENTRY8, ENTRY7, ENTRY6, BBENTRY6] = [4, 5, 6, 7];
    for (const symbol of this.localSymbolOrder(fn)) {
      const encoding = stringEncoding(symbol.name);
      const record = [this.ve.valueId(symbol), ...chars(symbol.name)];
      if (symbol.kind === "block") {
        out.emitRecord(2, record, encoding === "char6" ? BBENTRY6 : ENTRY8);
      } else {
        out.emitRecord(1, record, encoding === "char6" ? ENTRY6 : encoding === "fixed7" ? ENTRY7 : ENTRY8);
      }
    }
    out.exitBlock();
  }

  /** The function's ValueSymbolTable is a StringMap: it iterates in bucket order. */
  private localSymbolOrder(fn: Function): (Function["localSymbols"][number])[] {
    const byName = new Map(fn.localSymbols.map((symbol) => [symbol.name, symbol]));
    return stringMapOrder(fn.localSymbols.map((symbol) => symbol.name), this.table.version === 14 ? "djb" : "xxh3")
      .map((name) => byName.get(name)!);
  }

  private writeModuleSymbolTable(): void {
    const out = this.out;
    out.recordLateValue("vst", (out.bitNo - this.startBit) / 32 + 1);
    out.enterSubblock(VALUE_SYMTAB_BLOCK_ID, 4);
    const abbrev = out.defineAbbrev([lit(3), vbr(8), vbr(8)]);
    for (const fn of this.module.functions) {
      if (isDeclaration(fn)) continue;
      out.emitRecord(3, [this.ve.valueId(fn), (this.functionStart.get(fn)! - this.startBit) / 32 + 1], abbrev);
    }
    out.exitBlock();
  }
}

/**
 * Writes `module` as LLVM `table.version` would, to `sink` (streamed; the measure pass reads image payloads
 * only when it must count VBR-encoded bytes). Returns the number of bytes written.
 */
export function writeBitcode(module: Module, table: VersionTable, sink: ByteSink): number {
  const measure = BitstreamWriter.measure();
  new ModulePass(module, table, measure).run();
  const layout: StreamLayout = measure.layout;
  const writer = BitstreamWriter.write(sink, layout);
  new ModulePass(module, table, writer).run();
  return writer.bitNo / 8;
}

/** `writeBitcode` into one array. */
export function writeBitcodeToBytes(module: Module, table: VersionTable): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  writeBitcode(module, table, {
    write(bytes) {
      parts.push(bytes.slice());
      total += bytes.length;
    },
  });
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
