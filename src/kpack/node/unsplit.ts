/**
 * `offload-kit unkpack`: a host binary that `offload-kit kpack` split (src/kpack/node/split.ts) made a fat binary
 * again. Each HIPK wrapper becomes HIPF with its pointer back on the header-only bundle before its marker, and
 * that bundle is replaced (through the same `.hip_fatbin` rewrite) by a clang-offload-bundle of every code object
 * its key has in the installed archives, with the empty host entry clang writes, payloads at 4096 as the HIP
 * driver asks the bundler for. The HIP runtime then registers the original entries.
 *
 * rocm-kpack's own output (its `.hip_fatbin` zero-paged into NOBITS, the marker in a PT_LOAD of its own) is first
 * brought to that layout by src/kpack/refill.ts (the cut pages back, the split segment whole again), then
 * refilled the same way.
 */
import { readFileSync, renameSync, rmSync, statSync, writeFileSync, chmodSync } from "node:fs";
import { OffloadKitError } from "../../engine/errors.js";
import { bytesSource } from "../../engine/source.js";
import type { ByteSource } from "../../engine/source.js";
import { concatSources } from "../../elf-edit/compose.js";
import { EM_AARCH64, SHF_ALLOC, SHT_RELA, fileOffsetOf, openLinkedElf } from "../../elf-edit/elf64.js";
import { HIP_FATBIN_MAGIC, readHipFatbinLayout } from "../../elf-edit/hip-fatbin.js";
import { planHipFatbinRewrite, writeRewrite } from "../../elf-edit/rewrite.js";
import { BUNDLE_MAGIC_BYTES, layoutBinaryBundle } from "../../formats/bundle.js";
import { readKpackEntry } from "../../formats/kpack.js";
import { codecDecompressor } from "../../compress/node/packager-codecs.js";
import { withFile } from "../../node/file-source.js";
import { kpackKey, readKpackHost } from "../host.js";
import { EMPTY_BUNDLE_SIZE, isZeroPaged, refillZeroPagedHost } from "../refill.js";
import { listInstalledKpack } from "./resolve.js";
import type { KpackEnv } from "./resolve.js";

const HOST_ENTRY_ID = "host-x86_64-unknown-linux--";

export interface UnkpackResult {
  readonly path: string;
  readonly wrappers: number;
  readonly codeObjects: number;
  readonly before: number;
  readonly after: number;
}

/** Makes `path` a fat binary again, in place; throws for a file this cannot undo. */
export function unkpackFile(path: string, env: KpackEnv = process.env): UnkpackResult {
  const original = new Uint8Array(readFileSync(path));
  const found = readKpackHost(bytesSource(original));
  if (found === undefined) throw new OffloadKitError("NOT_KPACKED", `${path}: not a kpack'd host binary (no HIPK wrapper)`);
  // rocm-kpack's zero-paged layout first becomes the one offload-kit kpack writes.
  const input = isZeroPaged(original) ? refillZeroPagedHost(original, found) : original;
  const host = input === original ? found : readKpackHost(bytesSource(input))!;
  const elf = openLinkedElf(bytesSource(input));
  const patched = input.slice();
  const view = new DataView(patched.buffer);
  const bundleAddress = new Map<number, number>();
  for (const wrapper of host.wrappers) {
    const bundleAt = fileOffsetOf(elf, wrapper.markerAddress - EMPTY_BUNDLE_SIZE, EMPTY_BUNDLE_SIZE);
    const ours = bundleAt !== undefined && BUNDLE_MAGIC_BYTES.every((b, i) => input[bundleAt + i] === b) && view.getBigUint64(bundleAt + 24, true) === 0n;
    if (!ours) {
      throw new OffloadKitError("UNKPACK_UNSUPPORTED",
        `${path}: HIPK wrapper ${wrapper.index}'s marker follows no header-only bundle in .hip_fatbin (neither offload-kit kpack's layout nor rocm-kpack's)`,
        { offset: wrapper.offset });
    }
    bundleAddress.set(wrapper.offset, wrapper.markerAddress - EMPTY_BUNDLE_SIZE);
    view.setUint32(wrapper.offset, HIP_FATBIN_MAGIC, true);
    if (Number(view.getBigUint64(wrapper.offset + 8, true)) === wrapper.markerAddress) view.setBigUint64(wrapper.offset + 8, BigInt(wrapper.markerAddress - EMPTY_BUNDLE_SIZE), true);
    view.setBigUint64(wrapper.offset + 16, 0n, true);
  }
  // The RELATIVE relocations on the wrappers' pointers: back from the marker to its bundle.
  const relative = elf.machine === EM_AARCH64 ? 1027 : 8;
  const segment = elf.sections.find((s) => s.name === ".hipFatBinSegment")!;
  for (const section of elf.sections) {
    if ((section.flags & SHF_ALLOC) === 0 || section.type !== SHT_RELA) continue;
    for (let at = section.offset; at + 24 <= section.offset + section.size; at += 24) {
      const where = Number(view.getBigUint64(at, true));
      if (view.getUint32(at + 8, true) !== relative || where < segment.addr || where >= segment.addr + segment.size) continue;
      const addend = Number(view.getBigInt64(at + 16, true));
      if (host.wrappers.some((w) => w.markerAddress === addend)) view.setBigInt64(at + 16, BigInt(addend - EMPTY_BUNDLE_SIZE), true);
    }
  }
  const installed = listInstalledKpack(path, host, env);
  const decode = codecDecompressor();
  const replacements = new Map<number, ByteSource>();
  let codeObjects = 0;
  for (const lookup of installed.lookups) {
    if (lookup.found.length === 0) throw new OffloadKitError("KPACK_NOT_FOUND", `${path}: no installed archive holds '${kpackKey(lookup.wrapper)}'`);
    const payloads = lookup.found.map((f) => ({
      id: f.entry.target ?? `hipv4-amdgcn-amd-amdhsa--${f.entry.arch}`,
      data: withFile(f.archivePath, (source) => readKpackEntry(source, f.archive.compression, f.entry, (frame, size) => decode("zstd", frame, size))),
    }));
    codeObjects += payloads.length;
    const entries = [{ id: HOST_ENTRY_ID, data: new Uint8Array(0) }, ...payloads];
    const layout = layoutBinaryBundle(entries.map((e) => ({ id: e.id, size: e.data.length })), 4096);
    const parts: ByteSource[] = [bytesSource(layout.header)];
    let at = layout.header.length;
    entries.forEach((e, i) => {
      if (layout.offsets[i]! > at) parts.push(bytesSource(new Uint8Array(layout.offsets[i]! - at)));
      parts.push(bytesSource(e.data));
      at = layout.offsets[i]! + e.data.length;
    });
    replacements.set(bundleAddress.get(lookup.wrapper.offset)!, concatSources(parts));
  }
  const layout = readHipFatbinLayout(openLinkedElf(bytesSource(patched)));
  const plan = planHipFatbinRewrite(layout, { bundles: (b) => replacements.get(b.address) });
  const output = new Uint8Array(plan.outputSize);
  let written = 0;
  writeRewrite(plan, { write: (bytes) => { output.set(bytes, written); written += bytes.length; } });
  const temp = `${path}.unkpack-tmp-${process.pid}`;
  try {
    writeFileSync(temp, output);
    chmodSync(temp, statSync(path).mode & 0o7777);
    renameSync(temp, path);
  } catch (e) {
    rmSync(temp, { force: true });
    throw e;
  }
  return { path, wrappers: host.wrappers.length, codeObjects, before: original.length, after: output.length };
}
