/**
 * `replace`: one code object swapped for another, in a bundle file (binary or CCOB) or in one fat binary
 * of a linked ELF file. The bundle keeps its entries, order and alignment (./bundle-file.ts
 * `planBinaryBundleReplace`), a CCOB is re-encoded as `prune` re-encodes it (`editCcobMembers`), and in a
 * linked ELF file the ELF editor packs the result (./linked-elf.ts), moving `.hip_fatbin` to a new
 * PT_LOAD at the end of the file when the new bundle no longer fits. The entry must be found exactly
 * once: in a file with several fat binaries holding it, `bundle` (the fat binary's index) says which.
 */
import { OffloadKitError } from "../engine/errors.js";
import type { Codecs } from "../compress/codecs.js";
import { bytesSource, readExact } from "../engine/source.js";
import type { ByteSource } from "../engine/source.js";
import { byteStringToUnicode } from "../formats/bytes.js";
import { isBinaryBundle } from "../formats/bundle.js";
import { CCOB_MIN_SIZE, isCompressedBundle } from "../formats/ccob.js";
import { editCcobMembers, planBinaryBundleReplace } from "./bundle-file.js";
import { isLinkedElf, planLinkedElf } from "./linked-elf.js";
import { placeText } from "./outcome.js";
import { materialize, planOf } from "./plan.js";
import type { OutputPlan } from "./plan.js";

export interface ReplaceContext {
  /** The entry ID (byte string) whose code object is replaced. */
  readonly entry: string;
  /** In a linked ELF file: the index of the fat binary to edit (needed when several hold the entry). */
  readonly bundle?: number;
  /** The new code object. */
  readonly payload: ByteSource;
  readonly codecs: Codecs;
  readonly name: string;
  readonly notes: string[];
  /** Force this compression level when re-encoding a CCOB (default: the detected one). */
  readonly level?: number;
  /** Where the entry was replaced (filled in as bundles are edited). */
  readonly replaced: string[];
}

/** The bytes of a bundle (plain or CCOB) with the entry replaced, or `bytes` itself when it has no such entry. */
export function replaceInBundleBytes(bytes: Uint8Array, ctx: ReplaceContext, where: string): Uint8Array {
  const replacePlain = (contents: Uint8Array, inner: string): Uint8Array => {
    const source = bytesSource(contents);
    const plan = planBinaryBundleReplace(source, ctx.entry, ctx.payload, placeText(ctx.name, inner));
    if (plan === undefined) return contents;
    ctx.replaced.push(inner);
    return materialize(plan, source, ctx.codecs);
  };
  return bytes.length >= CCOB_MIN_SIZE && isCompressedBundle(bytes) ? editCcobMembers(bytes, ctx, where, replacePlain) : replacePlain(bytes, where);
}

/** A plain binary bundle read through `source` with the entry replaced, as a plan; undefined without the entry. */
export function planReplaceInBundle(source: ByteSource, ctx: ReplaceContext, where: string): OutputPlan | undefined {
  const plan = planBinaryBundleReplace(source, ctx.entry, ctx.payload, placeText(ctx.name, where));
  if (plan !== undefined) ctx.replaced.push(where);
  return plan;
}

/** Plans `replace` over a file: the container it is and the output. */
export function planReplaceFile(source: ByteSource, ctx: ReplaceContext): { container: string; plan: OutputPlan } {
  const head = readExact(source, 0, Math.min(source.size, 64));
  let container: string;
  let plan: OutputPlan | undefined;
  if (isLinkedElf(head)) {
    container = "linked ELF";
    const planned = planLinkedElf("replace", source, ctx, "");
    plan = planned === "unchanged" ? undefined : planned;
  } else {
    if (ctx.bundle !== undefined) throw new OffloadKitError("BAD_OPTIONS", `${ctx.name}: --bundle picks a fat binary of a linked ELF file; this is a bundle file`, { field: "--bundle" });
    container = "bundle";
    if (isBinaryBundle(head)) plan = planReplaceInBundle(source, ctx, "");
    else if (head.length >= CCOB_MIN_SIZE && isCompressedBundle(head)) {
      const bytes = readExact(source, 0, source.size);
      const output = replaceInBundleBytes(bytes, ctx, "");
      plan = output === bytes ? undefined : planOf([{ bytes: output }]);
    } else {
      throw new OffloadKitError("UNSUPPORTED_CONTAINER", `${ctx.name}: replace edits binary offload bundles, compressed bundles and linked ELF files`, { offset: 0, field: "magic" });
    }
  }
  const id = byteStringToUnicode(ctx.entry);
  if (ctx.replaced.length === 0 || plan === undefined) {
    const inBundle = ctx.bundle === undefined ? "" : ` fat binary ${ctx.bundle}`;
    throw new OffloadKitError("ENTRY_NOT_FOUND", `${ctx.name}:${inBundle === "" ? "" : `${inBundle}:`} no entry '${id}'`, { field: "--entry" });
  }
  if (ctx.replaced.length > 1) {
    throw new OffloadKitError("ENTRY_AMBIGUOUS",
      `${ctx.name}: '${id}' is in ${ctx.replaced.length} places (${ctx.replaced.join("; ")}); give --bundle=N to pick the fat binary`, { field: "--bundle" });
  }
  return { container, plan };
}
