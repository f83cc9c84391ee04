/**
 * The module clang-offload-wrapper 14 writes (spec/wrapper.md §1), and the seed's image-info variant
 * (seeds/004: `--offload-arch` before each image).
 *
 * Follows clang/tools/clang-offload-wrapper/ClangOffloadWrapper.cpp (release 14): BinaryWrapper::createBinDesc,
 * createRegisterFunction, createUnregisterFunction, in that creation order, because the order of globals,
 * functions and types decides the bitcode. Without a data layout pointers are 8 bytes, so size_t is i64 for
 * every triple. Constant GEPs on globals come out `inbounds` (14's constant folder proves the indices in range)
 * and normalised (an index past an array's end is carried into the index before it).
 *
 * ```
 * %__tgt_offload_entry = type { i8*, i8*, i64, i32, i32 }
 * %__tgt_device_image  = type { i8*, i8*, %__tgt_offload_entry*, %__tgt_offload_entry* }
 * %__tgt_bin_desc      = type { i32, %__tgt_device_image*, %__tgt_offload_entry*, %__tgt_offload_entry* }
 * @__start_omp_offloading_entries, @__stop_...      external hidden constant %__tgt_offload_entry
 * @__dummy.omp_offloading.entry                     hidden constant [0 x entry] zeroinitializer, section "omp_offloading_entries"
 * @.omp_offloading.device_image[.N]                 internal unnamed_addr constant [size x i8]
 * @.omp_offloading.device_images                    internal unnamed_addr constant [K x %__tgt_device_image]
 * @.omp_offloading.descriptor                       internal constant %__tgt_bin_desc { i32 K, ... }
 * @llvm.global_ctors / @llvm.global_dtors           priority 1: .omp_offloading.descriptor_reg / _unreg
 * ```
 *
 * The image-info variant adds, per image N (the seed is its only specification; no native tool here has it):
 * `%__tgt_image_info = type { i32 version, i32 image_number, i32 number_images, i8* offload_arch,
 * i8* compile_opts }`; `@__offload_arch[.N]`, the NUL-terminated target ID, internal constant in section
 * `.offload_arch_list` with align 1 (so the linked section is the strings back to back); `@.offload_image_info[.N]`
 * = { 1, N, K, the string, null }, internal constant; and the constructor calls
 * `__tgt_register_image_info(&info)` for each image in order before `__tgt_register_lib`. Its globals are named
 * with the seed's explicit `.N` suffixes and created in the constructor, before its calls, as the AMD fork does.
 */
import type { Constant, ConstantInt, Function, GlobalVariable } from "../llvm/bitcode/ir.js";
import { FunctionBuilder, Module } from "../llvm/bitcode/ir.js";
import { latin1Encode } from "../formats/bytes.js";
import type { PreparedImage } from "./images.js";
import { bytesPayload, prepareImages } from "./images.js";

export const WRAPPER14_SOURCE_FILENAME = "offload.wrapper.object";

export interface OpenMP14Options {
  readonly triple: string;
  readonly nvptx: boolean;
  /** The image-info variant: one target ID per image. */
  readonly offloadArchs?: readonly string[];
}

export function buildOpenMP14Module(images: readonly PreparedImage[], options: OpenMP14Options): Module {
  const m = new Module(WRAPPER14_SOURCE_FILENAME, options.triple, true, options.nvptx);
  const i8ptr = m.bytePtr();
  const i64 = m.int(64);
  const i32 = m.int(32);
  const entryTy = m.namedStruct("__tgt_offload_entry", [i8ptr, i8ptr, i64, i32, i32]);
  const entryPtr = m.ptr(entryTy);
  const imageTy = m.namedStruct("__tgt_device_image", [i8ptr, i8ptr, entryPtr, entryPtr]);
  const descTy = m.namedStruct("__tgt_bin_desc", [i32, m.ptr(imageTy), entryPtr, entryPtr]);

  const entriesBegin = m.addGlobal({ name: "__start_omp_offloading_entries", valueType: entryTy, constant: true, linkage: "external", visibility: "hidden" });
  const entriesEnd = m.addGlobal({ name: "__stop_omp_offloading_entries", valueType: entryTy, constant: true, linkage: "external", visibility: "hidden" });
  const dummyInit = m.constNull(m.array(entryTy, 0));
  m.addGlobal({
    name: "__dummy.omp_offloading.entry", valueType: dummyInit.type, constant: true, linkage: "external", visibility: "hidden",
    section: "omp_offloading_entries", initializer: dummyInit,
  });

  const zero = m.constInt(i64, 0);
  const inits: Constant[] = [];
  for (const image of images) {
    const data = image.zero ? m.constNull(m.array(m.int(8), image.source.size)) : m.constBytes(image.data, image.identity);
    const global = m.addGlobal({
      name: ".omp_offloading.device_image", valueType: data.type, constant: true, linkage: "internal", unnamedAddr: true, initializer: data,
    });
    const begin = m.constGep(data.type, global, [zero, zero], true);
    // gep(0, size): 14's constant folder factors an index past the array's end into the previous one, so
    // it becomes gep(1, 0) (an empty array has no end to pass: gep(0, 0), the begin itself).
    const end = image.source.size === 0 ? begin : m.constGep(data.type, global, [m.constInt(i64, 1), zero], true);
    inits.push(m.constAggregate(imageTy, [begin, end, entriesBegin, entriesEnd]));
  }
  const imagesData = m.constAggregate(m.array(imageTy, inits.length), inits);
  const imagesGlobal = m.addGlobal({
    name: ".omp_offloading.device_images", valueType: imagesData.type, constant: true, linkage: "internal", unnamedAddr: true, initializer: imagesData,
  });
  const imagesBegin = m.constGep(imagesData.type, imagesGlobal, [zero, zero], true);
  const descInit = m.constAggregate(descTy, [m.constInt(i32, inits.length), imagesBegin, entriesBegin, entriesEnd]);
  const desc = m.addGlobal({ name: ".omp_offloading.descriptor", valueType: descTy, constant: true, linkage: "internal", initializer: descInit });

  const voidFn = m.functionType(m.simple("void"), []);
  const descFn = m.functionType(m.simple("void"), [m.ptr(descTy)]);

  const reg = m.addFunction(".omp_offloading.descriptor_reg", voidFn, "internal", ".text.startup");
  const registerLib = m.getOrInsertFunction("__tgt_register_lib", descFn);
  const regBody = new FunctionBuilder(m, reg);
  regBody.setInsertPoint(regBody.addBlock("entry"));
  if (options.offloadArchs !== undefined) emitImageInfos(m, regBody, options.offloadArchs, zero);
  regBody.call(registerLib, [desc]);
  regBody.retVoid();
  appendToGlobalStructors(m, "llvm.global_ctors", reg, 1);

  const unreg = m.addFunction(".omp_offloading.descriptor_unreg", voidFn, "internal", ".text.startup");
  const unregisterLib = m.getOrInsertFunction("__tgt_unregister_lib", descFn);
  const unregBody = new FunctionBuilder(m, unreg);
  unregBody.setInsertPoint(unregBody.addBlock("entry"));
  unregBody.call(unregisterLib, [desc]);
  unregBody.retVoid();
  appendToGlobalStructors(m, "llvm.global_dtors", unreg, 1);
  return m;
}

function emitImageInfos(m: Module, body: FunctionBuilder, archs: readonly string[], zero: ConstantInt): void {
  const i32 = m.int(32);
  const i8ptr = m.bytePtr();
  const infoTy = m.namedStruct("__tgt_image_info", [i32, i32, i32, i8ptr, i8ptr]);
  const registerInfo = m.getOrInsertFunction("__tgt_register_image_info", m.functionType(m.simple("void"), [m.ptr(infoTy)]));
  const infos: GlobalVariable[] = [];
  const strings = prepareImages(archs.map((arch) => bytesPayload(latin1Encode(`${arch}\0`))), "arch");
  archs.forEach((_, index) => {
    const suffix = index === 0 ? "" : `.${index}`;
    const string = strings[index]!;
    const text = string.zero ? m.constNull(m.array(m.int(8), string.source.size)) : m.constBytes(string.data, string.identity);
    const archGlobal = m.addGlobal({
      name: `__offload_arch${suffix}`, valueType: text.type, constant: true, linkage: "internal", section: ".offload_arch_list", align: 1,
      initializer: text,
    });
    const init = m.constAggregate(infoTy, [
      m.constInt(i32, 1), m.constInt(i32, index), m.constInt(i32, archs.length), m.constGep(text.type, archGlobal, [zero, zero], true),
      m.constNull(i8ptr),
    ]);
    infos.push(m.addGlobal({ name: `.offload_image_info${suffix}`, valueType: infoTy, constant: true, linkage: "internal", initializer: init }));
  });
  for (const info of infos) body.call(registerInfo, [info]);
}

/** `appendToGlobalCtors` / `appendToGlobalDtors` on a module without them: a one-element appending array. */
export function appendToGlobalStructors(m: Module, name: string, fn: Function, priority: number): GlobalVariable {
  const i32 = m.int(32);
  const elementTy = m.literalStruct([i32, m.ptr(fn.functionType), m.bytePtr()]);
  const element = m.constAggregate(elementTy, [m.constInt(i32, priority), fn, m.constNull(m.bytePtr())]);
  const arrayTy = m.array(elementTy, 1);
  return m.addGlobal({ name, valueType: arrayTy, constant: false, linkage: "appending", initializer: m.constAggregate(arrayTy, [element]) });
}
