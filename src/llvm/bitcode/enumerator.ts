/**
 * The bitcode writer's numbering of types and values (llvm/lib/Bitcode/Writer/ValueEnumerator.cpp), as far
 * as the wrapper modules need it: no metadata, attributes, comdats, aliases or use-list orders
 * (WriteBitcodeToFile does not preserve use-list order by default).
 *
 * What decides the output bytes, modelled as LLVM does it:
 * - types are numbered depth first, subtypes before the type; a named struct is marked first so that it
 *   is not entered twice (EnumerateType);
 * - globals, then functions, are the first values; then the global initializers, each constant after its
 *   operands, every further sighting of a value counting one more use (EnumerateValue);
 * - OptimizeConstants stable-sorts the module constants by type number, then by use count (most used
 *   first), and stable-partitions integer constants to the front;
 * - a function's own constants are numbered after its arguments, sorted the same way, then its
 *   instructions that produce a value (incorporateFunction).
 */
import { log2Ceil } from "./bitstream.js";
import type { BasicBlock, Function, Module, Type, Value } from "./ir.js";
import { constantOperands, isConstant, isGlobalValue, subtypes } from "./ir.js";

const VISITING = -1;

export class ValueEnumerator {
  readonly types: Type[] = [];
  private readonly typeMap = new Map<Type, number>();
  /** Values with their use counts, in ID order. */
  readonly values: { value: Value; uses: number }[] = [];
  private readonly valueMap = new Map<Value, number>();
  private numModuleValues = 0;
  private firstFunctionConstant = 0;
  private firstInstruction = 0;
  private blocks: BasicBlock[] = [];

  constructor(readonly module: Module) {
    for (const global of module.globals) {
      this.enumerateValue(global);
      this.enumerateType(global.valueType);
    }
    for (const fn of module.functions) {
      this.enumerateValue(fn);
      this.enumerateType(fn.functionType);
    }
    const firstConstant = this.values.length;
    for (const global of module.globals) if (global.initializer !== undefined) this.enumerateValue(global.initializer);
    this.enumerateType(module.simple("metadata"));
    for (const fn of module.functions) {
      for (const arg of fn.args) this.enumerateType(arg.type);
      for (const block of fn.blocks) {
        for (const instruction of block.instructions) {
          for (const operand of instruction.operands) this.enumerateOperandType(operand);
          // br and switch have their successor blocks among LLVM's operands: their type is `label`.
          if (instruction.opcode === "br" || instruction.opcode === "switch") this.enumerateType(module.simple("label"));
          if (instruction.opcode === "gep") this.enumerateType(instruction.elementType!);
          this.enumerateType(instruction.type);
          if (instruction.opcode === "call") this.enumerateType(instruction.functionType!);
        }
      }
    }
    this.optimizeConstants(firstConstant, this.values.length);
  }

  typeId(type: Type): number {
    const id = this.typeMap.get(type);
    if (id === undefined || id === VISITING) throw new Error("type not enumerated");
    return id - 1;
  }

  valueId(value: Value): number {
    const id = this.valueMap.get(value);
    if (id === undefined) throw new Error(`value not enumerated: ${value.kind}`);
    return id - 1;
  }

  /** `computeBitsRequiredForTypeIndices`. */
  typeBits(): number {
    return log2Ceil(this.types.length + 1);
  }

  private enumerateType(type: Type): void {
    const seen = this.typeMap.get(type);
    if (seen !== undefined) return;
    if (type.kind === "struct" && type.name !== undefined) this.typeMap.set(type, VISITING);
    for (const sub of subtypes(type)) this.enumerateType(sub);
    const now = this.typeMap.get(type);
    if (now !== undefined && now !== VISITING) return;
    this.types.push(type);
    this.typeMap.set(type, this.types.length);
  }

  private enumerateValue(value: Value): void {
    const id = this.valueMap.get(value);
    if (id !== undefined) {
      this.values[id - 1]!.uses++;
      return;
    }
    this.enumerateType(value.type);
    if (!isGlobalValue(value)) {
      const operands = constantOperands(value);
      if (operands.length > 0) {
        for (const operand of operands) if (operand.kind !== "block") this.enumerateValue(operand);
        if (value.kind === "gep") this.enumerateType(value.sourceType);
      }
    }
    this.values.push({ value, uses: 1 });
    this.valueMap.set(value, this.values.length);
  }

  private enumerateOperandType(value: Value): void {
    this.enumerateType(value.type);
    if (!isConstant(value) || this.valueMap.has(value)) return;
    for (const operand of constantOperands(value)) if (operand.kind !== "block") this.enumerateOperandType(operand);
    if (value.kind === "gep") this.enumerateType(value.sourceType);
  }

  private optimizeConstants(start: number, end: number): void {
    if (end - start <= 1) return;
    const slice = this.values.slice(start, end);
    // Array.prototype.sort is stable, as std::stable_sort.
    slice.sort((left, right) => {
      if (left.value.type !== right.value.type) return this.typeId(left.value.type) - this.typeId(right.value.type);
      return right.uses - left.uses;
    });
    const integers = slice.filter((entry) => entry.value.type.kind === "int");
    const others = slice.filter((entry) => entry.value.type.kind !== "int");
    const ordered = [...integers, ...others];
    for (let i = 0; i < ordered.length; i++) {
      this.values[start + i] = ordered[i]!;
      this.valueMap.set(ordered[i]!.value, start + i + 1);
    }
  }

  /** The module-level constants: [first, end) of `values`. */
  moduleConstantRange(): [number, number] {
    const first = this.values.findIndex((entry) => !isGlobalValue(entry.value));
    return first === -1 ? [this.values.length, this.values.length] : [first, this.values.length];
  }

  incorporateFunction(fn: Function): void {
    this.numModuleValues = this.values.length;
    for (const arg of fn.args) this.enumerateValue(arg);
    this.firstFunctionConstant = this.values.length;
    for (const block of fn.blocks) {
      for (const instruction of block.instructions) {
        for (const operand of instruction.operands) {
          if (isConstant(operand) && !isGlobalValue(operand)) this.enumerateValue(operand);
        }
      }
      this.blocks.push(block);
      this.valueMap.set(block, this.blocks.length);
    }
    this.optimizeConstants(this.firstFunctionConstant, this.values.length);
    this.firstInstruction = this.values.length;
    for (const block of fn.blocks) {
      for (const instruction of block.instructions) if (instruction.type.kind !== "void") this.enumerateValue(instruction);
    }
  }

  functionConstantRange(): [number, number] {
    return [this.firstFunctionConstant, this.firstInstruction];
  }

  get basicBlocks(): readonly BasicBlock[] {
    return this.blocks;
  }

  purgeFunction(): void {
    for (let i = this.numModuleValues; i < this.values.length; i++) this.valueMap.delete(this.values[i]!.value);
    for (const block of this.blocks) this.valueMap.delete(block);
    this.values.length = this.numModuleValues;
    this.blocks = [];
  }
}
