/**
 * A small LLVM IR module model: exactly what the offload wrapper modules use, with LLVM's uniquing so that
 * equal constants are one value (two identical images share one data constant, `i32 1` is one constant
 * wherever it appears), because the bitcode writer's numbering and ordering depend on it.
 *
 * Follows llvm/include/llvm/IR (Type.h/DerivedTypes.h: integer, pointer (typed before LLVM 15, opaque
 * after), array, literal and named struct, function types; Constants.h: ConstantInt, ConstantPointerNull and
 * ConstantAggregateZero (both "null values"), ConstantDataArray, ConstantStruct/ConstantArray, GEP
 * ConstantExpr; GlobalVariable, Function, BasicBlock, Argument, Instruction). Names are byte strings.
 */
import type { PayloadSource } from "./bitstream.js";

export type Type = IntType | PtrType | ArrayType | StructType | FunctionType | SimpleType;

export interface IntType { readonly kind: "int"; readonly bits: number }
/** `pointee` is set for LLVM 14's typed pointers, absent for opaque `ptr`. */
export interface PtrType { readonly kind: "ptr"; readonly pointee: Type | undefined }
export interface ArrayType { readonly kind: "array"; readonly count: number; readonly element: Type }
export interface StructType { readonly kind: "struct"; readonly name: string | undefined; readonly elements: readonly Type[]; readonly packed: boolean }
export interface FunctionType { readonly kind: "function"; readonly result: Type; readonly params: readonly Type[]; readonly varArg: boolean }
export interface SimpleType { readonly kind: "void" | "metadata" | "label" }

/** `Type::subtypes()`: what EnumerateType visits first. */
export function subtypes(type: Type): readonly Type[] {
  switch (type.kind) {
    case "ptr": return type.pointee === undefined ? [] : [type.pointee];
    case "array": return [type.element];
    case "struct": return type.elements;
    case "function": return [type.result, ...type.params];
    default: return [];
  }
}

export type Linkage = "external" | "internal" | "appending" | "weak" | "weak_odr";
export type Visibility = "default" | "hidden";

let nextId = 1;

interface ValueBase {
  /** Identity for uniquing keys. */
  readonly id: number;
  readonly type: Type;
}

export interface GlobalVariable extends ValueBase {
  readonly kind: "global";
  readonly name: string;
  readonly valueType: Type;
  readonly constant: boolean;
  readonly linkage: Linkage;
  readonly visibility: Visibility;
  readonly unnamedAddr: boolean;
  readonly section: string | undefined;
  readonly align: number | undefined;
  readonly initializer: Constant | undefined;
}

export interface Function extends ValueBase {
  readonly kind: "function";
  readonly name: string;
  readonly functionType: FunctionType;
  readonly linkage: Linkage;
  readonly section: string | undefined;
  readonly args: Argument[];
  readonly blocks: BasicBlock[];
  /** Named locals in the order they entered the function's ValueSymbolTable (a StringMap: its order follows). */
  readonly localSymbols: (BasicBlock | Instruction)[];
}

export interface Argument extends ValueBase { readonly kind: "argument"; readonly name: string }
export interface BasicBlock extends ValueBase { readonly kind: "block"; readonly name: string; readonly instructions: Instruction[] }

export type Constant = ConstantInt | ConstantNull | ConstantData | ConstantAggregate | ConstantGep;
export interface ConstantInt extends ValueBase { readonly kind: "int"; readonly value: bigint }
/** ConstantPointerNull or ConstantAggregateZero: written as CST_CODE_NULL. */
export interface ConstantNull extends ValueBase { readonly kind: "null" }
/** A ConstantDataArray of i8 with at least one non-zero byte (LLVM makes all-zero data a ConstantAggregateZero). */
export interface ConstantData extends ValueBase { readonly kind: "data"; readonly data: ImageData }
export interface ConstantAggregate extends ValueBase { readonly kind: "aggregate"; readonly elements: readonly Value[] }
export interface ConstantGep extends ValueBase {
  readonly kind: "gep";
  readonly sourceType: Type;
  readonly inBounds: boolean;
  readonly operands: readonly Value[];
}

/** The bytes of an image constant, classified once (the writer's choice of record and abbreviation depends on it). */
export interface ImageData {
  readonly source: PayloadSource;
  /** `ConstantDataSequential::isCString`: last byte 0 and no other 0. */
  readonly cString: boolean;
  /** Every byte (the trailing NUL of a C string excluded) below 128. */
  readonly sevenBit: boolean;
  /** Every byte (the trailing NUL excluded) a char6 character. */
  readonly char6: boolean;
}

export type Opcode = "call" | "ret" | "load" | "store" | "gep" | "icmp" | "br" | "switch" | "phi" | "and" | "lshr" | "trunc";

export interface Instruction extends ValueBase {
  readonly kind: "instruction";
  readonly opcode: Opcode;
  /** LLVM's operand order (call: arguments then callee; store: value then pointer; br: cond, false, true). */
  readonly operands: Value[];
  name: string;
  /** call: the callee's function type. */
  readonly functionType?: FunctionType;
  /** gep: source element type; load: loaded type. */
  readonly elementType?: Type;
  readonly align?: number;
  readonly inBounds?: boolean;
  /** icmp: "eq" | "ne". */
  readonly predicate?: "eq" | "ne";
  /** br and switch successors; phi incoming blocks. */
  readonly blocks?: BasicBlock[];
  /** switch: case values, parallel to blocks after the default. */
  readonly cases?: ConstantInt[];
}

export type Value = GlobalVariable | Function | Argument | BasicBlock | Constant | Instruction;

export function isGlobalValue(value: Value): value is GlobalVariable | Function {
  return value.kind === "global" || value.kind === "function";
}

export function isConstant(value: Value): value is Constant | GlobalVariable | Function {
  return value.kind === "int" || value.kind === "null" || value.kind === "data" || value.kind === "aggregate" ||
    value.kind === "gep" || isGlobalValue(value);
}

/** A constant's operands (Constant::operands()). */
export function constantOperands(value: Value): readonly Value[] {
  if (value.kind === "aggregate") return value.elements;
  if (value.kind === "gep") return value.operands;
  return [];
}

/** `Constant::isNullValue`. */
export function isNullValue(value: Value): boolean {
  return value.kind === "null" || (value.kind === "int" && value.value === 0n);
}

/** An LLVMContext + Module: interns types and constants, holds globals and functions in creation order. */
export class Module {
  readonly globals: GlobalVariable[] = [];
  readonly functions: Function[] = [];
  private readonly types = new Map<string, Type>();
  private readonly constants = new Map<string, Constant>();
  private readonly typeIds = new Map<Type, number>();
  private readonly names = new Set<string>();
  private readonly structNames = new Set<string>();
  private lastUnique = 0;

  constructor(
    readonly sourceFileName: string,
    readonly triple: string,
    /** LLVM 14 (typed pointers) or 22 (opaque). */
    readonly typedPointers: boolean,
    /** `Triple::isNVPTX()` of the module's triple: clashing names then get no "." before the number. */
    private readonly nvptx = false,
  ) {}

  private typeKey(type: Type): number {
    let id = this.typeIds.get(type);
    if (id === undefined) {
      id = this.typeIds.size + 1;
      this.typeIds.set(type, id);
    }
    return id;
  }

  private intern<T extends Type>(key: string, make: () => T): T {
    let type = this.types.get(key);
    if (type === undefined) {
      type = make();
      this.types.set(key, type);
    }
    return type as T;
  }

  int(bits: number): IntType {
    return this.intern(`i${bits}`, () => ({ kind: "int", bits }));
  }

  simple(kind: SimpleType["kind"]): SimpleType {
    return this.intern(kind, () => ({ kind }));
  }

  /** `PointerType::getUnqual(T)` in 14, the opaque `ptr` in 22 (the pointee is then ignored). */
  ptr(pointee?: Type): PtrType {
    if (!this.typedPointers) return this.intern("ptr", () => ({ kind: "ptr", pointee: undefined }));
    if (pointee === undefined) throw new Error("typed pointers need a pointee");
    return this.intern(`p${this.typeKey(pointee)}`, () => ({ kind: "ptr", pointee }));
  }

  /** `i8*` in 14, `ptr` in 22. */
  bytePtr(): PtrType {
    return this.ptr(this.int(8));
  }

  array(element: Type, count: number): ArrayType {
    return this.intern(`a${count}x${this.typeKey(element)}`, () => ({ kind: "array", count, element }));
  }

  literalStruct(elements: readonly Type[]): StructType {
    return this.intern(`s{${elements.map((t) => this.typeKey(t)).join(",")}}`, () => ({ kind: "struct", name: undefined, elements, packed: false }));
  }

  /** `StructType::create`: always a new type (the wrapper modules never reuse a name). */
  namedStruct(name: string, elements: readonly Type[]): StructType {
    if (this.structNames.has(name)) throw new Error(`struct type ${name} created twice`);
    this.structNames.add(name);
    const type: StructType = { kind: "struct", name, elements, packed: false };
    this.typeKey(type);
    return type;
  }

  functionType(result: Type, params: readonly Type[], varArg = false): FunctionType {
    return this.intern(`f${this.typeKey(result)}(${params.map((t) => this.typeKey(t)).join(",")}${varArg ? ",..." : ""})`, () => ({
      kind: "function", result, params, varArg,
    }));
  }

  /**
   * `ValueSymbolTable::makeUniqueName` for globals: a clash appends "." (nothing for NVPTX triples) and the
   * table's one running counter, so `.omp_offloading.device_image` repeats as `.1`, `.2`, ...
   */
  private uniqueName(name: string): string {
    if (!this.names.has(name)) {
      this.names.add(name);
      return name;
    }
    for (;;) {
      const candidate = `${name}${this.nvptx ? "" : "."}${++this.lastUnique}`;
      if (!this.names.has(candidate)) {
        this.names.add(candidate);
        return candidate;
      }
    }
  }

  private constant<T extends Constant>(key: string, make: (id: number) => T): T {
    let value = this.constants.get(key);
    if (value === undefined) {
      value = make(nextId++);
      this.constants.set(key, value);
    }
    return value as T;
  }

  constInt(type: IntType, value: number | bigint): ConstantInt {
    const big = BigInt.asIntN(type.bits, BigInt(value));
    return this.constant(`int${this.typeKey(type)}:${big}`, (id) => ({ kind: "int", id, type, value: big }));
  }

  /** `Constant::getNullValue` for pointers and aggregates. */
  constNull(type: Type): ConstantNull {
    return this.constant(`null${this.typeKey(type)}`, (id) => ({ kind: "null", id, type }));
  }

  /** `ConstantDataArray::get(i8...)`; `identity` says which equal-content image it is (equal images share it). */
  constBytes(data: ImageData, identity: string): Constant {
    const type = this.array(this.int(8), data.source.size);
    return this.constant(`data:${identity}`, (id) => ({ kind: "data", id, type, data }));
  }

  constAggregate(type: Type, elements: readonly Value[]): ConstantAggregate {
    return this.constant(`agg${this.typeKey(type)}(${elements.map((e) => e.id).join(",")})`, (id) => ({ kind: "aggregate", id, type, elements }));
  }

  /** `ConstantExpr::getGetElementPtr(sourceType, base, indices, inBounds)`. */
  constGep(sourceType: Type, base: Value, indices: readonly ConstantInt[], inBounds: boolean): ConstantGep {
    const resultType = this.typedPointers ? this.ptr(this.indexedType(sourceType, indices.slice(1))) : this.ptr();
    const operands = [base, ...indices];
    return this.constant(`gep${this.typeKey(sourceType)}${inBounds ? "i" : ""}(${operands.map((o) => o.id).join(",")})`, (id) => ({
      kind: "gep", id, type: resultType, sourceType, inBounds, operands,
    }));
  }

  private indexedType(type: Type, indices: readonly ConstantInt[]): Type {
    let current = type;
    for (const index of indices) {
      if (current.kind === "array") current = current.element;
      else if (current.kind === "struct") current = current.elements[Number(index.value)]!;
      else throw new Error("gep index into a non-aggregate");
    }
    return current;
  }

  addGlobal(init: {
    name: string; valueType: Type; constant: boolean; linkage: Linkage; visibility?: Visibility; unnamedAddr?: boolean;
    section?: string; align?: number; initializer?: Constant;
  }): GlobalVariable {
    const global: GlobalVariable = {
      kind: "global", id: nextId++, type: this.ptr(init.valueType), name: this.uniqueName(init.name), valueType: init.valueType,
      constant: init.constant, linkage: init.linkage, visibility: init.visibility ?? "default", unnamedAddr: init.unnamedAddr ?? false,
      section: init.section, align: init.align, initializer: init.initializer,
    };
    this.globals.push(global);
    return global;
  }

  /** `Function::Create` (a definition once blocks are added) or `getOrInsertFunction` (a declaration). */
  addFunction(name: string, functionType: FunctionType, linkage: Linkage = "external", section?: string): Function {
    const fn: Function = {
      kind: "function", id: nextId++, type: this.ptr(functionType), name: this.uniqueName(name), functionType, linkage, section,
      args: functionType.params.map((type) => ({ kind: "argument" as const, id: nextId++, type, name: "" })),
      blocks: [],
      localSymbols: [],
    };
    this.functions.push(fn);
    return fn;
  }

  /** A declaration by name, created on first use (`Module::getOrInsertFunction`). */
  getOrInsertFunction(name: string, functionType: FunctionType): Function {
    return this.functions.find((f) => f.name === name) ?? this.addFunction(name, functionType);
  }
}

export function isDeclaration(value: GlobalVariable | Function): boolean {
  return value.kind === "global" ? value.initializer === undefined : value.blocks.length === 0;
}

/** An IRBuilder over one function: appends blocks and instructions with LLVM's local names. */
export class FunctionBuilder {
  private block: BasicBlock | undefined;
  private readonly localNames = new Set<string>();
  private lastUnique = 0;

  constructor(readonly module: Module, readonly fn: Function) {}

  /** `BasicBlock::Create(C, name, F)`; a clashing local name gets a number, as the ValueSymbolTable does. */
  addBlock(name: string): BasicBlock {
    const block: BasicBlock = { kind: "block", id: nextId++, type: this.module.simple("label"), name: this.localName(name), instructions: [] };
    this.fn.blocks.push(block);
    if (block.name !== "") this.fn.localSymbols.push(block);
    return block;
  }

  /** A block created now but placed later (`BasicBlock::Create(C, name)` then inserted). */
  detachedBlock(name: string): BasicBlock {
    return { kind: "block", id: nextId++, type: this.module.simple("label"), name, instructions: [] };
  }

  placeBlock(block: BasicBlock): void {
    (block as { name: string }).name = this.localName(block.name);
    this.fn.blocks.push(block);
    if (block.name !== "") this.fn.localSymbols.push(block);
  }

  setInsertPoint(block: BasicBlock): void {
    this.block = block;
  }

  /** ValueSymbolTable::makeUniqueName for locals: a clash appends the table's running counter, no dot. */
  localName(name: string): string {
    if (name === "") return "";
    if (!this.localNames.has(name)) {
      this.localNames.add(name);
      return name;
    }
    for (;;) {
      const candidate = `${name}${++this.lastUnique}`;
      if (!this.localNames.has(candidate)) {
        this.localNames.add(candidate);
        return candidate;
      }
    }
  }

  insert(init: Omit<Instruction, "kind" | "id" | "name"> & { name?: string }): Instruction {
    const instruction: Instruction = { ...init, kind: "instruction", id: nextId++, name: this.localName(init.name ?? "") };
    this.block!.instructions.push(instruction);
    if (instruction.name !== "") this.fn.localSymbols.push(instruction);
    return instruction;
  }

  call(callee: Function, args: Value[], name = ""): Instruction {
    const ft = callee.functionType;
    return this.insert({ opcode: "call", type: ft.result, operands: [...args, callee], functionType: ft, name: ft.result.kind === "void" ? "" : name });
  }

  retVoid(): Instruction {
    return this.insert({ opcode: "ret", type: this.module.simple("void"), operands: [] });
  }
}
