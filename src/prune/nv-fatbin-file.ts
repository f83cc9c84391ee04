/**
 * `prune`, `compress` and `decompress` of standalone NVIDIA fatbin files (`nvcc -fatbin`, `fatbinary
 * --create`): one or more containers back to back (src/formats/nv-fatbin.ts), each edited by the same code
 * as a container in a library (./nv-linked-elf.ts's prune rule, ./nv-compress.ts) and written again at the
 * next multiple of 8; zeros after the last container stay. Nothing points into such a file, so nothing else
 * changes.
 */
import type { Codecs } from "../compress/codecs.js";
import { OffloadKitError } from "../engine/errors.js";
import { isNvFatbin, parseNvFatbinContainers } from "../formats/nv-fatbin.js";
import type { NvFatbinContainer } from "../formats/nv-fatbin.js";
import { transformNvContainer } from "./nv-compress.js";
import type { NvTransform } from "./nv-compress.js";
import { pruneNvContainer } from "./nv-linked-elf.js";
import { placeText } from "./outcome.js";
import type { PruneContext } from "./outcome.js";

export { isNvFatbin as isNvFatbinFile };

function editNvFatbinFile(bytes: Uint8Array, name: string, where: string, edit: (index: number, container: NvFatbinContainer) => Uint8Array | undefined): Uint8Array {
  const run = parseNvFatbinContainers(bytes);
  if (run.trailing !== undefined) {
    throw new OffloadKitError("BAD_NV_FATBIN", `${placeText(name, where)}: ${run.trailing.size} bytes after the last fatbin container are neither zeros nor a container`, { offset: run.trailing.offset, field: "contents" });
  }
  const edited = run.containers.map((container, index) => edit(index, container) ?? bytes.subarray(container.offset, container.offset + container.size));
  if (edited.every((out, i) => out.buffer === bytes.buffer && out.byteOffset === bytes.byteOffset + run.containers[i]!.offset)) return bytes;
  let size = 0;
  const at = edited.map((out) => {
    const start = Math.ceil(size / 8) * 8;
    size = start + out.length;
    return start;
  });
  const last = run.containers[run.containers.length - 1]!;
  const result = new Uint8Array(size + (bytes.length - last.offset - last.size));
  edited.forEach((out, i) => result.set(out, at[i]!));
  return result;
}

export function pruneNvFatbinFile(bytes: Uint8Array, ctx: PruneContext, where = ""): Uint8Array {
  return editNvFatbinFile(bytes, ctx.name, where, (index, container) =>
    pruneNvContainer(index, container, ctx, where, [where, `fat binary ${index}`].filter((w) => w !== "").join(", ")));
}

export function transformNvFatbinFile(operation: NvTransform, bytes: Uint8Array, ctx: { readonly name: string; readonly codecs: Codecs }, where = ""): Uint8Array {
  return editNvFatbinFile(bytes, ctx.name, where, (_index, container) => transformNvContainer(operation, container, ctx.codecs));
}
