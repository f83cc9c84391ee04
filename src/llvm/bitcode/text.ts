/**
 * The module model of ./ir.ts as LLVM assembly (.ll), in the syntax of LLVM 14 (typed pointers) or 22
 * (opaque `ptr`), laid out as llvm-dis prints it (llvm/lib/IR/AsmWriter.cpp: the module header, named
 * struct types in TypeFinder order, globals, then each function after a blank line) minus llvm-dis's
 * `; preds =` comments. `llvm-as-14`/`-22 --preserve-bc-uselistorder=false` turns it back into the very
 * bitcode the writer produces (test/differential/wrapper-native.test.ts checks that).
 *
 * Image bytes are escaped as LLVM does (`printEscapedString`, 14 and 22 alike: `\\` for a backslash, printable
 * ASCII but `"` as is, the rest `\XX` in upper-case hex, so `c"..."` reads as llvm-dis prints it) and
 * streamed to the sink in chunks, so the text of a 1 GiB image is never held whole either.
 */
import type { ByteSink } from "./bitstream.js";
import type { Constant, Function, GlobalVariable, Instruction, Module, Type, Value } from "./ir.js";
import { isDeclaration, isGlobalValue, subtypes } from "./ir.js";

const CHUNK = 1 << 16;
const HEX = "0123456789ABCDEF";
const HEX_CODES = Uint8Array.from(HEX, (c) => c.charCodeAt(0));

class TextSink {
  private readonly buffer = new Uint8Array(CHUNK);
  private used = 0;
  constructor(private readonly sink: ByteSink) {}

  text(value: string): void {
    for (let i = 0; i < value.length; i++) this.byte(value.charCodeAt(i));
  }

  byte(value: number): void {
    if (this.used === CHUNK) this.flush();
    this.buffer[this.used++] = value;
  }

  bytes(value: Uint8Array): void {
    this.flush();
    this.sink.write(value);
  }

  flush(): void {
    if (this.used > 0) this.sink.write(this.buffer.subarray(0, this.used));
    this.used = 0;
  }
}

function isPrintable(c: number): boolean {
  return c >= 0x20 && c <= 0x7e;
}

/** `printEscapedString`. */
function escaped(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) out += "\\\\";
    else out += isPrintable(c) && c !== 0x22 ? text[i] : `\\${HEX[c >> 4]}${HEX[c & 15]}`;
  }
  return out;
}

/** `printLLVMNameWithoutPrefix`: bare when every byte is [-a-zA-Z$._0-9] and the first is not a digit. */
function llvmName(prefix: string, name: string): string {
  let bare = name.length > 0 && !(name.charCodeAt(0) >= 0x30 && name.charCodeAt(0) <= 0x39);
  for (let i = 0; bare && i < name.length; i++) bare = /[-a-zA-Z$._0-9]/.test(name[i]!);
  return bare ? `${prefix}${name}` : `${prefix}"${escaped(name)}"`;
}

class Printer {
  private readonly out: TextSink;
  private slots = new Map<Value, number>();

  constructor(private readonly module: Module, sink: ByteSink) {
    this.out = new TextSink(sink);
  }

  type(type: Type): string {
    switch (type.kind) {
      case "int": return `i${type.bits}`;
      case "ptr": return type.pointee === undefined ? "ptr" : `${this.type(type.pointee)}*`;
      case "array": return `[${type.count} x ${this.type(type.element)}]`;
      case "struct":
        if (type.name !== undefined) return llvmName("%", type.name);
        return type.elements.length === 0 ? "{}" : `{ ${type.elements.map((t) => this.type(t)).join(", ")} }`;
      case "function": return `${this.type(type.result)} (${type.params.map((t) => this.type(t)).join(", ")})`;
      default: return type.kind;
    }
  }

  /** A value as an operand, without its type. */
  ref(value: Value): string {
    switch (value.kind) {
      case "global":
      case "function": return llvmName("@", value.name);
      case "argument":
      case "instruction":
      case "block": return value.name !== "" ? llvmName("%", value.name) : `%${this.slots.get(value)}`;
      case "int": return value.type.kind === "int" && value.type.bits === 1 ? (value.value === 0n ? "false" : "true") : value.value.toString();
      case "null": return value.type.kind === "ptr" ? "null" : "zeroinitializer";
      case "data": throw new Error("image data is streamed, not formatted");
      case "aggregate": {
        const items = value.elements.map((e) => this.typed(e));
        if (value.type.kind === "array") return `[${items.join(", ")}]`;
        return items.length === 0 ? "{}" : `{ ${items.join(", ")} }`;
      }
      case "gep":
        return `getelementptr ${value.inBounds ? "inbounds " : ""}(${this.type(value.sourceType)}, ${value.operands.map((o) => this.typed(o)).join(", ")})`;
    }
  }

  typed(value: Value): string {
    return `${this.type(value.type)} ${this.ref(value)}`;
  }

  /** TypeFinder: named structs in the order a walk of globals, then functions, first meets them. */
  private namedStructs(): Type[] {
    const visited = new Set<Type>();
    const found: Type[] = [];
    const seenConstants = new Set<Value>();
    const incorporateType = (root: Type) => {
      if (visited.has(root)) return;
      visited.add(root);
      const work = [root];
      while (work.length > 0) {
        const t = work.pop()!;
        if (t.kind === "struct" && t.name !== undefined) found.push(t);
        for (const sub of [...subtypes(t)].reverse()) {
          if (!visited.has(sub)) {
            visited.add(sub);
            work.push(sub);
          }
        }
      }
    };
    const incorporateValue = (value: Value) => {
      if (isGlobalValue(value) || value.kind === "argument" || value.kind === "instruction" || value.kind === "block") return;
      if (seenConstants.has(value)) return;
      seenConstants.add(value);
      incorporateType(value.type);
      if (value.kind === "gep") incorporateType(value.sourceType);
      const operands = value.kind === "aggregate" ? value.elements : value.kind === "gep" ? value.operands : [];
      for (const operand of operands) incorporateValue(operand);
    };
    for (const global of this.module.globals) {
      incorporateType(this.module.typedPointers ? global.type : global.valueType);
      if (global.initializer !== undefined) incorporateValue(global.initializer);
    }
    for (const fn of this.module.functions) {
      incorporateType(this.module.typedPointers ? fn.type : fn.functionType);
      for (const block of fn.blocks) {
        for (const instruction of block.instructions) {
          incorporateType(instruction.type);
          for (const operand of instruction.operands) incorporateValue(operand);
          if (instruction.opcode === "gep") incorporateType(instruction.elementType!);
        }
      }
    }
    return found;
  }

  run(): void {
    const m = this.module;
    const out = this.out;
    out.text(`; ModuleID = '${m.sourceFileName}'\nsource_filename = "${escaped(m.sourceFileName)}"\n`);
    if (m.triple !== "") out.text(`target triple = "${escaped(m.triple)}"\n`);
    const structs = this.namedStructs();
    if (structs.length > 0) out.text("\n");
    for (const type of structs) {
      if (type.kind !== "struct") continue;
      out.text(`${this.type(type)} = type ${type.elements.length === 0 ? "{}" : `{ ${type.elements.map((t) => this.type(t)).join(", ")} }`}\n`);
    }
    if (m.globals.length > 0) out.text("\n");
    for (const global of m.globals) this.global(global);
    for (const fn of m.functions) {
      out.text("\n");
      this.function(fn);
    }
    out.flush();
  }

  private global(global: GlobalVariable): void {
    const out = this.out;
    let head = `${llvmName("@", global.name)} = `;
    if (global.linkage !== "external" || global.initializer === undefined) head += `${global.linkage === "weak_odr" ? "weak_odr" : global.linkage} `;
    if (global.visibility === "hidden") head += "hidden ";
    if (global.unnamedAddr) head += "unnamed_addr ";
    head += `${global.constant ? "constant" : "global"} ${this.type(global.valueType)}`;
    out.text(head);
    const init = global.initializer;
    if (init !== undefined) {
      out.text(" ");
      if (init.kind === "data") this.data(init);
      else out.text(this.ref(init));
    }
    if (global.section !== undefined) out.text(`, section "${escaped(global.section)}"`);
    if (global.align !== undefined) out.text(`, align ${global.align}`);
    out.text("\n");
  }

  /** `c"..."`, read and escaped chunk by chunk. */
  private data(value: Extract<Constant, { kind: "data" }>): void {
    const source = value.data.source;
    const out = this.out;
    out.text('c"');
    const scratch = new Uint8Array(Math.min(CHUNK, Math.max(1, source.size)));
    const escapedChunk = new Uint8Array(scratch.length * 3);
    for (let position = 0; position < source.size; position += scratch.length) {
      const n = Math.min(scratch.length, source.size - position);
      let chunk: Uint8Array;
      if (source.bytes !== undefined) {
        chunk = source.bytes.subarray(position, position + n);
      } else {
        chunk = scratch.subarray(0, n);
        let done = 0;
        while (done < n) {
          const got = source.read(chunk.subarray(done), position + done);
          if (got <= 0) throw new Error(`image: short read at offset ${position + done}`);
          done += got;
        }
      }
      // Escaped into a local buffer, three bytes at most per byte: a call per byte cost 10x (measured).
      let at = 0;
      for (let i = 0; i < n; i++) {
        const c = chunk[i]!;
        if (c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c) {
          escapedChunk[at++] = c;
        } else if (c === 0x5c) {
          escapedChunk[at++] = 0x5c;
          escapedChunk[at++] = 0x5c;
        } else {
          escapedChunk[at++] = 0x5c;
          escapedChunk[at++] = HEX_CODES[c >> 4]!;
          escapedChunk[at++] = HEX_CODES[c & 15]!;
        }
      }
      out.bytes(escapedChunk.subarray(0, at));
    }
    out.text('"');
  }

  private function(fn: Function): void {
    const out = this.out;
    const ft = fn.functionType;
    const linkage = fn.linkage === "external" ? "" : `${fn.linkage} `;
    if (isDeclaration(fn)) {
      out.text(`declare ${linkage}${this.type(ft.result)} ${llvmName("@", fn.name)}(${ft.params.map((t) => this.type(t)).join(", ")})\n`);
      return;
    }
    this.slots = new Map();
    let next = 0;
    for (const arg of fn.args) if (arg.name === "") this.slots.set(arg, next++);
    for (const block of fn.blocks) {
      if (block.name === "") this.slots.set(block, next++);
      for (const instruction of block.instructions) {
        if (instruction.name === "" && instruction.type.kind !== "void") this.slots.set(instruction, next++);
      }
    }
    const params = fn.args.map((arg) => this.typed(arg)).join(", ");
    const section = fn.section === undefined ? "" : ` section "${escaped(fn.section)}"`;
    out.text(`define ${linkage}${this.type(ft.result)} ${llvmName("@", fn.name)}(${params})${section} {\n`);
    fn.blocks.forEach((block, index) => {
      if (index > 0) out.text("\n");
      out.text(`${block.name === "" ? `${this.slots.get(block)}` : llvmName("", block.name)}:\n`);
      for (const instruction of block.instructions) out.text(`  ${this.instruction(instruction)}\n`);
    });
    out.text("}\n");
  }

  private instruction(i: Instruction): string {
    const ops = i.operands;
    const lhs = i.type.kind === "void" ? "" : `${this.ref(i)} = `;
    const label = (index: number) => `label ${this.ref(i.blocks![index]!)}`;
    switch (i.opcode) {
      case "ret": return "ret void";
      case "call": {
        const args = ops.slice(0, ops.length - 1).map((a) => this.typed(a)).join(", ");
        return `${lhs}call ${this.type(i.functionType!.result)} ${this.ref(ops[ops.length - 1]!)}(${args})`;
      }
      case "load": return `${lhs}load ${this.type(i.type)}, ${this.typed(ops[0]!)}, align ${i.align}`;
      case "store": return `store ${this.typed(ops[0]!)}, ${this.typed(ops[1]!)}, align ${i.align}`;
      case "gep": return `${lhs}getelementptr ${i.inBounds ? "inbounds " : ""}${this.type(i.elementType!)}, ${ops.map((o) => this.typed(o)).join(", ")}`;
      case "icmp": return `${lhs}icmp ${i.predicate} ${this.typed(ops[0]!)}, ${this.ref(ops[1]!)}`;
      case "and":
      case "lshr": return `${lhs}${i.opcode} ${this.typed(ops[0]!)}, ${this.ref(ops[1]!)}`;
      case "trunc": return `${lhs}trunc ${this.typed(ops[0]!)} to ${this.type(i.type)}`;
      case "br": return i.blocks!.length === 1 ? `br ${label(0)}` : `br ${this.typed(ops[0]!)}, ${label(0)}, ${label(1)}`;
      case "switch": {
        const cases = i.cases!.map((value, k) => `    ${this.typed(value)}, ${label(k + 1)}\n`).join("");
        return `switch ${this.typed(ops[0]!)}, ${label(0)} [\n${cases}  ]`;
      }
      case "phi": return `${lhs}phi ${this.type(i.type)} ${i.blocks!.map((b, k) => `[ ${this.ref(ops[k]!)}, ${this.ref(b)} ]`).join(", ")}`;
    }
  }
}

/** Writes `module` as .ll text to `sink`. `version` only documents the syntax: the module's pointers decide it. */
export function printModule(module: Module, version: 14 | 22, sink: ByteSink): void {
  if ((version === 14) !== module.typedPointers) throw new Error("printModule: the module's pointers do not match the version");
  new Printer(module, sink).run();
}
