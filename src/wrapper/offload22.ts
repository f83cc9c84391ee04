/**
 * The modules llvm-offload-wrapper 22 writes (spec/wrapper.md §2): `--kind=openmp`, `cuda` and `hip`.
 *
 * Follows llvm/lib/Frontend/Offloading/Utility.cpp (getOffloadEntryArray) and OffloadWrapper.cpp (createBinDesc,
 * createRegisterFunction/createUnregisterFunction for OpenMP; createFatbinDesc, createRegisterGlobalsFunction,
 * createRegisterFatbinFunction for CUDA/HIP) and llvm/tools/llvm-offload-wrapper, in their creation order:
 * the order of globals, functions, blocks and named values decides the bitcode. Checked record by record
 * against llvm-offload-wrapper-22's output (test/differential/wrapper-native.test.ts).
 *
 * | kind   | globals after the entry array                                   | constructor (priority 101)                  |
 * |--------|-----------------------------------------------------------------|---------------------------------------------|
 * | openmp | .omp_offloading.device_image[.N] (".llvm.offloading", align 8), device_images, descriptor | __tgt_register_lib, atexit(unreg) |
 * | cuda   | .fatbin_image (".nv_fatbin"), .fatbin_wrapper (0x466243B1, ".nvFatBinSegment", align 8), .cuda.binary_handle | __cudaRegisterFatBinary, globals_reg loop, __cudaRegisterFatBinaryEnd, atexit |
 * | hip    | the same with ".hip_fatbin", 0x48495046, ".hipFatBinSegment", .hip.binary_handle | no RegisterFatBinaryEnd; surfaces and textures registered |
 *
 * An OpenMP input that starts with the OffloadBinary magic (0x10FF10AD) makes the image's begin and end point at
 * its first entry's image: gep(0, ImageOffset) and gep(0, ImageOffset + ImageSize), read from the header at
 * fixed offsets as 22 does (any version). 22 reads those fields without checking they lie in the file; we refuse
 * such a file instead (its native output depends on memory past the buffer).
 */
import { OffloadKitError } from "../engine/errors.js";
import type { BasicBlock, Constant, ConstantInt, Function, GlobalVariable, Instruction, Module as IrModule, StructType, Value } from "../llvm/bitcode/ir.js";
import { FunctionBuilder, Module } from "../llvm/bitcode/ir.js";
import { ObjectFormatType, OSType, Triple } from "../llvm/triple.js";
import type { PreparedImage } from "./images.js";

export const WRAPPER22_SOURCE_FILENAME = "offload.wrapper.module";
export type OffloadKind22 = "openmp" | "cuda" | "hip";

const CUDA_FAT_MAGIC = 0x466243b1;
const HIP_FAT_MAGIC = 0x48495046;
const OFFLOAD_BINARY_ALIGNMENT = 8;
const OFK_CUDA = 2;
const OFK_HIP = 4;

interface EntryArray {
  readonly begin: GlobalVariable;
  readonly end: GlobalVariable;
  readonly entryTy: StructType;
}

/** `getOffloadEntryArray(M, "llvm_offload_entries")`. */
function offloadEntryArray(m: IrModule, triple: Triple): EntryArray {
  const ptr = m.ptr();
  const i64 = m.int(64);
  const i32 = m.int(32);
  const i16 = m.int(16);
  const entryTy = m.namedStruct("struct.__tgt_offload_entry", [i64, i16, i16, i32, ptr, ptr, i64, i64, ptr]);
  const arrayTy = m.array(entryTy, 0);
  const zero = m.constNull(arrayTy);
  const coff = triple.objectFormat === ObjectFormatType.COFF;
  const make = (name: string) => m.addGlobal({
    name, valueType: arrayTy, constant: true, linkage: coff ? "weak_odr" : "external", visibility: "hidden",
    initializer: coff ? zero : undefined,
  });
  const begin = make("__start_llvm_offload_entries");
  const end = make("__stop_llvm_offload_entries");
  if (triple.objectFormat === ObjectFormatType.ELF) {
    const dummy = m.addGlobal({
      name: "__dummy.llvm_offload_entries", valueType: arrayTy, constant: true, linkage: "internal", initializer: zero,
      section: "llvm_offload_entries", align: OFFLOAD_BINARY_ALIGNMENT,
    });
    const usedTy = m.array(ptr, 1);
    m.addGlobal({ name: "llvm.compiler.used", valueType: usedTy, constant: false, linkage: "appending", section: "llvm.metadata", initializer: m.constAggregate(usedTy, [dummy]) });
  } else {
    (begin as { section: string | undefined }).section = "llvm_offload_entries$OA";
    (end as { section: string | undefined }).section = "llvm_offload_entries$OZ";
  }
  return { begin, end, entryTy };
}

function appendToGlobalCtors(m: IrModule, fn: Function, priority: number): void {
  const i32 = m.int(32);
  const ptr = m.ptr();
  const elementTy = m.literalStruct([i32, ptr, ptr]);
  const arrayTy = m.array(elementTy, 1);
  const element = m.constAggregate(elementTy, [m.constInt(i32, priority), fn, m.constNull(ptr)]);
  m.addGlobal({ name: "llvm.global_ctors", valueType: arrayTy, constant: false, linkage: "appending", initializer: m.constAggregate(arrayTy, [element]) });
}

function readU64(image: PreparedImage, at: number): bigint {
  const bytes = new Uint8Array(8);
  let done = 0;
  while (done < 8) {
    const n = image.source.read(bytes.subarray(done), at + done);
    if (n <= 0) break;
    done += n;
  }
  return new DataView(bytes.buffer).getBigUint64(0, true);
}

function hasOffloadMagic(image: PreparedImage): boolean {
  if (image.source.size < 4) return false;
  const head = new Uint8Array(4);
  image.source.read(head, 0);
  return head[0] === 0x10 && head[1] === 0xff && head[2] === 0x10 && head[3] === 0xad;
}

/** The first entry's image range of an OffloadBinary input, as 22 reads it (unchecked values, checked reads). */
function offloadBinaryRange(image: PreparedImage, name: string): [bigint, bigint] {
  const size = BigInt(image.source.size);
  const HEADER = 32n;
  const ENTRY = 40n;
  if (size < HEADER) throw new OffloadKitError("WRAPPER_BINARY", `'${name}': offload binary is too small for its header`, { offset: 0 });
  const entryOffset = readU64(image, 16);
  if (entryOffset > size - ENTRY) {
    throw new OffloadKitError("WRAPPER_BINARY", `'${name}': offload binary entry at ${entryOffset} is outside the ${size}-byte file`, { offset: 16 });
  }
  const imageOffset = readU64(image, Number(entryOffset) + 24);
  const imageSize = readU64(image, Number(entryOffset) + 32);
  return [imageOffset, BigInt.asUintN(64, imageOffset + imageSize)];
}

export interface Offload22Options {
  readonly triple: string;
  readonly kind: OffloadKind22;
  /** Input names for error messages. */
  readonly names: readonly string[];
}

export function buildOffload22Module(images: readonly PreparedImage[], options: Offload22Options): IrModule {
  const triple = new Triple(options.triple, 22);
  const m = new Module(WRAPPER22_SOURCE_FILENAME, options.triple, false, triple.isNVPTX());
  const entries = offloadEntryArray(m, triple);
  if (options.kind === "openmp") buildOpenMP(m, images, entries, options.names);
  else buildFatbin(m, images[0]!, entries, options.kind === "hip", triple);
  return m;
}

function imageConstant(m: IrModule, image: PreparedImage): Constant {
  return image.zero ? m.constNull(m.array(m.int(8), image.source.size)) : m.constBytes(image.data, image.identity);
}

function buildOpenMP(m: IrModule, images: readonly PreparedImage[], entries: EntryArray, names: readonly string[]): void {
  const ptr = m.ptr();
  const i64 = m.int(64);
  const i32 = m.int(32);
  const imageTy = m.namedStruct("__tgt_device_image", [ptr, ptr, ptr, ptr]);
  const descTy = m.namedStruct("__tgt_bin_desc", [i32, ptr, ptr, ptr]);
  const zero = m.constInt(i64, 0);
  const inits: Constant[] = [];
  images.forEach((image, index) => {
    const data = imageConstant(m, image);
    const global = m.addGlobal({
      name: ".omp_offloading.device_image", valueType: data.type, constant: true, linkage: "internal", unnamedAddr: true, initializer: data,
      section: ".llvm.offloading", align: OFFLOAD_BINARY_ALIGNMENT,
    });
    const [begin, end] = hasOffloadMagic(image) ? offloadBinaryRange(image, names[index] ?? `image ${index}`) : [0n, BigInt(image.source.size)];
    // A GEP whose indices are all zero folds to its base pointer (opaque pointers).
    const pointer = (offset: bigint): Value => offset === 0n ? global : m.constGep(data.type, global, [zero, m.constInt(i64, offset)], false);
    inits.push(m.constAggregate(imageTy, [pointer(begin), pointer(end), entries.begin, entries.end]));
  });
  const imagesData = m.constAggregate(m.array(imageTy, inits.length), inits);
  const imagesGlobal = m.addGlobal({
    name: ".omp_offloading.device_images", valueType: imagesData.type, constant: true, linkage: "internal", unnamedAddr: true, initializer: imagesData,
  });
  const descInit = m.constAggregate(descTy, [m.constInt(i32, inits.length), imagesGlobal, entries.begin, entries.end]);
  const desc = m.addGlobal({ name: ".omp_offloading.descriptor", valueType: descTy, constant: true, linkage: "internal", initializer: descInit });

  const voidFn = m.functionType(m.simple("void"), []);
  const reg = m.addFunction(".omp_offloading.descriptor_reg", voidFn, "internal", ".text.startup");
  const registerLib = m.getOrInsertFunction("__tgt_register_lib", m.functionType(m.simple("void"), [ptr]));
  const atexit = m.getOrInsertFunction("atexit", m.functionType(i32, [ptr]));
  const unreg = m.addFunction(".omp_offloading.descriptor_unreg", voidFn, "internal", ".text.startup");
  const unregisterLib = m.getOrInsertFunction("__tgt_unregister_lib", m.functionType(m.simple("void"), [ptr]));
  const unregBody = new FunctionBuilder(m, unreg);
  unregBody.setInsertPoint(unregBody.addBlock("entry"));
  unregBody.call(unregisterLib, [desc]);
  unregBody.retVoid();
  const regBody = new FunctionBuilder(m, reg);
  regBody.setInsertPoint(regBody.addBlock("entry"));
  regBody.call(registerLib, [desc]);
  regBody.call(atexit, [unreg]);
  regBody.retVoid();
  appendToGlobalCtors(m, reg, 101);
}

function buildFatbin(m: IrModule, image: PreparedImage, entries: EntryArray, hip: boolean, triple: Triple): void {
  const ptr = m.ptr();
  const i32 = m.int(32);
  const voidTy = m.simple("void");
  const macOS = triple.os === OSType.MacOSX || triple.os === OSType.Darwin;
  const prefix = hip ? "__hip" : "__cuda";
  const local = hip ? ".hip" : ".cuda";
  const data = imageConstant(m, image);
  const fatbin = m.addGlobal({
    name: ".fatbin_image", valueType: data.type, constant: true, linkage: "internal", initializer: data,
    section: hip ? ".hip_fatbin" : macOS ? "__NV_CUDA,__nv_fatbin" : ".nv_fatbin",
  });
  const wrapperTy = m.namedStruct("fatbin_wrapper", [i32, i32, ptr, ptr]);
  const wrapperInit = m.constAggregate(wrapperTy, [m.constInt(i32, hip ? HIP_FAT_MAGIC : CUDA_FAT_MAGIC), m.constInt(i32, 1), fatbin, m.constNull(ptr)]);
  const wrapper = m.addGlobal({
    name: ".fatbin_wrapper", valueType: wrapperTy, constant: true, linkage: "internal", initializer: wrapperInit,
    section: hip ? ".hipFatBinSegment" : macOS ? "__NV_CUDA,__fatbin" : ".nvFatBinSegment", align: 8,
  });

  const voidFn = m.functionType(voidTy, []);
  const ctor = m.addFunction(`${local}.fatbin_reg`, voidFn, "internal", ".text.startup");
  const dtor = m.addFunction(`${local}.fatbin_unreg`, voidFn, "internal", ".text.startup");
  const registerFatbin = m.getOrInsertFunction(`${prefix}RegisterFatBinary`, m.functionType(ptr, [ptr]));
  const registerFatbinEnd = m.getOrInsertFunction("__cudaRegisterFatBinaryEnd", m.functionType(voidTy, [ptr]));
  const unregisterFatbin = m.getOrInsertFunction(`${prefix}UnregisterFatBinary`, m.functionType(voidTy, [ptr]));
  const atexit = m.getOrInsertFunction("atexit", m.functionType(i32, [ptr]));
  const handle = m.addGlobal({ name: `${local}.binary_handle`, valueType: ptr, constant: false, linkage: "internal", initializer: m.constNull(ptr) });

  const ctorBody = new FunctionBuilder(m, ctor);
  ctorBody.setInsertPoint(ctorBody.addBlock("entry"));
  const registered = ctorBody.call(registerFatbin, [wrapper]);
  ctorBody.insert({ opcode: "store", type: voidTy, operands: [registered, handle], align: 8 });
  const globalsReg = buildRegisterGlobals(m, hip, entries);
  ctorBody.call(globalsReg, [registered]);
  if (!hip) ctorBody.call(registerFatbinEnd, [registered]);
  ctorBody.call(atexit, [dtor]);
  ctorBody.retVoid();

  const dtorBody = new FunctionBuilder(m, dtor);
  dtorBody.setInsertPoint(dtorBody.addBlock("entry"));
  const loaded = dtorBody.insert({ opcode: "load", type: ptr, operands: [handle], align: 8 });
  dtorBody.call(unregisterFatbin, [loaded]);
  dtorBody.retVoid();
  appendToGlobalCtors(m, ctor, 101);
}

/** `createRegisterGlobalsFunction`: walks the offload entries and registers each one of this kind. */
function buildRegisterGlobals(m: IrModule, hip: boolean, entries: EntryArray): Function {
  const ptr = m.ptr();
  const i64 = m.int(64);
  const i32 = m.int(32);
  const i16 = m.int(16);
  const i1 = m.int(1);
  const voidTy = m.simple("void");
  const prefix = hip ? "__hip" : "__cuda";
  const registerFunction = m.getOrInsertFunction(`${prefix}RegisterFunction`, m.functionType(i32, [ptr, ptr, ptr, ptr, i32, ptr, ptr, ptr, ptr, ptr]));
  const registerVar = m.getOrInsertFunction(`${prefix}RegisterVar`, m.functionType(voidTy, [ptr, ptr, ptr, ptr, i32, i64, i32, i32]));
  const registerManaged = m.getOrInsertFunction(`${prefix}RegisterManagedVar`, m.functionType(voidTy, [ptr, ptr, ptr, ptr, i64, i32]));
  const registerSurface = m.getOrInsertFunction(`${prefix}RegisterSurface`, m.functionType(voidTy, [ptr, ptr, ptr, ptr, i32, i32]));
  const registerTexture = m.getOrInsertFunction(`${prefix}RegisterTexture`, m.functionType(voidTy, [ptr, ptr, ptr, ptr, i32, i32, i32]));
  const fn = m.addFunction(`${hip ? ".hip" : ".cuda"}.globals_reg`, m.functionType(voidTy, [ptr]), "internal", ".text.startup");
  const b = new FunctionBuilder(m, fn);
  const handle = fn.args[0]!;
  const entryBB = b.addBlock("entry");
  const whileEntry = b.addBlock("while.entry");
  const ifKind = b.addBlock("if.kind");
  const ifThen = b.addBlock("if.then");
  const ifElse = b.addBlock("if.else");
  const swGlobal = b.addBlock("sw.global");
  const swManaged = b.addBlock("sw.managed");
  const swSurface = b.addBlock("sw.surface");
  const swTexture = b.addBlock("sw.texture");
  const ifEnd = b.addBlock("if.end");
  const exit = b.addBlock("while.end");
  const c32 = (v: number): ConstantInt => m.constInt(i32, v);
  const br = (target: BasicBlock) => b.insert({ opcode: "br", type: voidTy, operands: [], blocks: [target] });
  const condBr = (cond: Value, yes: BasicBlock, no: BasicBlock) => b.insert({ opcode: "br", type: voidTy, operands: [cond], blocks: [yes, no] });
  const icmp = (predicate: "eq" | "ne", left: Value, right: Value, name = "") => b.insert({ opcode: "icmp", type: i1, operands: [left, right], predicate, name });
  const field = (entry: Value, index: number) => b.insert({
    opcode: "gep", type: ptr, operands: [entry, c32(0), c32(index)], elementType: entries.entryTy, inBounds: true,
  });
  const load = (type: typeof ptr | typeof i64 | typeof i32 | typeof i16, pointer: Value, align: number, name: string) =>
    b.insert({ opcode: "load", type, operands: [pointer], align, name });
  const binop = (opcode: "and" | "lshr", left: Value, right: Value, name = "") => b.insert({ opcode, type: i32, operands: [left, right], name });

  b.setInsertPoint(entryBB);
  condBr(icmp("ne", entries.begin, entries.end), whileEntry, exit);

  b.setInsertPoint(whileEntry);
  const phi: Instruction = b.insert({ opcode: "phi", type: ptr, operands: [entries.begin], blocks: [entryBB], name: "entry" });
  const addr = load(ptr, field(phi, 4), 8, "addr");
  const auxAddr = load(ptr, field(phi, 8), 8, "aux_addr");
  const kind = load(i16, field(phi, 2), 2, "kind");
  const name = load(ptr, field(phi, 5), 8, "name");
  const size = load(i64, field(phi, 6), 4, "size");
  const flags = load(i32, field(phi, 3), 4, "flags");
  const data = load(i64, field(phi, 7), 4, "data");
  const data32 = b.insert({ opcode: "trunc", type: i32, operands: [data] });
  const type = binop("and", flags, c32(7), "type");
  const external = binop("lshr", binop("and", flags, c32(8)), c32(3), "extern");
  const constant = binop("lshr", binop("and", flags, c32(16)), c32(4), "constant");
  const normalized = binop("lshr", binop("and", flags, c32(32)), c32(5), "normalized");
  condBr(icmp("eq", kind, m.constInt(i16, hip ? OFK_HIP : OFK_CUDA)), ifKind, ifEnd);

  b.setInsertPoint(ifKind);
  condBr(icmp("eq", size, m.constInt(i64, 0)), ifThen, ifElse);

  b.setInsertPoint(ifThen);
  const nul = m.constNull(ptr);
  b.call(registerFunction, [handle, addr, name, name, m.constInt(i32, -1), nul, nul, nul, nul, nul]);
  br(ifEnd);

  b.setInsertPoint(ifElse);
  b.insert({
    opcode: "switch", type: voidTy, operands: [type, c32(0), c32(1), c32(2), c32(3)], cases: [c32(0), c32(1), c32(2), c32(3)],
    blocks: [ifEnd, swGlobal, swManaged, swSurface, swTexture],
  });

  b.setInsertPoint(swGlobal);
  b.call(registerVar, [handle, addr, name, name, external, size, constant, c32(0)]);
  br(ifEnd);
  b.setInsertPoint(swManaged);
  b.call(registerManaged, [handle, auxAddr, addr, name, size, data32]);
  br(ifEnd);
  b.setInsertPoint(swSurface);
  if (hip) b.call(registerSurface, [handle, addr, name, name, data32, external]);
  br(ifEnd);
  b.setInsertPoint(swTexture);
  if (hip) b.call(registerTexture, [handle, addr, name, name, data32, normalized, external]);
  br(ifEnd);

  b.setInsertPoint(ifEnd);
  const next = b.insert({ opcode: "gep", type: ptr, operands: [phi, m.constInt(i64, 1)], elementType: entries.entryTy, inBounds: true });
  phi.operands.push(next);
  phi.blocks!.push(ifEnd);
  condBr(icmp("eq", next, entries.end), exit, whileEntry);

  b.setInsertPoint(exit);
  b.retVoid();
  return fn;
}
