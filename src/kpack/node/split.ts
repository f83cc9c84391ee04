/**
 * `offload-kit kpack`: ROCm's kpack split (ROCm/rocm-kpack e3483286 python/rocm_kpack/artifact_splitter.py) done
 * on an installed tree. Every linked host binary under the root whose `.hip_fatbin` wrappers are HIPF gives its
 * code objects to per-architecture archives, `<root>/.kpack/<group>_<arch>.kpack`, filed under
 * `<kernel_name>#<wrapper index>` (kernel_name: `<prefix>/<path below the root>`, as rocm-kpack names them), and
 * becomes a kpack'd binary the runtime reads: each wrapper HIPK, its index at +16, its pointer at a marker
 * (`{"kpack_search_paths": ["<up>/.kpack/<group>_@GFXARCH@.kpack"], "kernel_name": ...}`).
 *
 * The host is edited as rocm-kpack edits it (src/kpack/rocm-layout.ts, byte for byte): the marker in a
 * `.rocm_kpack_ref` section with a PT_LOAD of its own, `.hip_fatbin` zero-paged, the wrappers HIPK.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { codecDecompressor } from "../../compress/node/packager-codecs.js";
import { withCcobPrefetch } from "../../compress/node/decompress.js";
import { nodeCodecs } from "../../compress/node/codecs.js";
import { OffloadKitError, isOffloadKitError } from "../../engine/errors.js";
import { bytesSource, readExact } from "../../engine/source.js";
import { openLinkedElf } from "../../elf-edit/elf64.js";
import { readHipFatbinLayout } from "../../elf-edit/hip-fatbin.js";
import { readKpackArchive, readKpackEntry, writeKpackArchive } from "../../formats/kpack.js";
import type { KpackCompression, KpackWriteEntry } from "../../formats/kpack.js";
import { writeKpackMarker } from "../../formats/kpack-marker.js";
import { locate } from "../../inspect/locate.js";
import { withFile } from "../../node/file-source.js";
import { readKpackHost } from "../host.js";
import { rocmKpackHost } from "../rocm-layout.js";
import { GFXARCH_PLACEHOLDER } from "../targets.js";

export interface KpackSplitOptions {
  /** The installed tree: `.kpack/` is made here, paths below it name the code objects. */
  readonly root: string;
  /** Archive names' group (`<group>_<arch>.kpack`), rocm-kpack's artifact prefix. */
  readonly group: string;
  /** Put before each binary's path in its kernel_name (rocm-kpack: the artifact's prefix, `stage`); none by default. */
  readonly prefix?: string;
  readonly compression?: KpackCompression;
  /** zstd level for `zstd-per-kernel` (3, as rocm-kpack). */
  readonly level?: number;
}

export interface KpackSplitResult {
  readonly binaries: readonly { readonly path: string; readonly kernelName: string; readonly wrappers: number; readonly before: number; readonly after: number }[];
  readonly archives: readonly { readonly path: string; readonly arch: string; readonly codeObjects: number; readonly size: number }[];
  /** Files that look like HIP hosts but could not be split, and why. */
  readonly skipped: readonly { readonly path: string; readonly reason: string }[];
}


/** `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-` -> `gfx90a:xnack-` (rocm-kpack's extract_architecture_from_target); host entries give "". */
export function archOfEntryId(id: string): string {
  const at = id.lastIndexOf("--");
  return at < 0 ? "" : id.substring(at + 2);
}

function filesBelow(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const stat = lstatSync(path);
      if (stat.isDirectory()) {
        if (!(dir === root && name === ".kpack")) walk(path);
      } else if (stat.isFile()) {
        out.push(path);
      }
    }
  };
  walk(root);
  return out;
}

/** The marker's search path from the binary's directory to `<root>/.kpack/<group>_@GFXARCH@.kpack`. */
function searchPathFor(root: string, binary: string, group: string): string {
  const up = relative(dirname(binary), root).split(sep).filter((p) => p !== "").join("/");
  return `${up === "" ? "" : `${up}/`}.kpack/${group}_${GFXARCH_PLACEHOLDER}.kpack`;
}

/** Each fat binary's device code objects, by the fat binary's file offset (a CCOB's own offset). */
function codeObjectsByBundle(path: string): Map<number, { id: string; data: Uint8Array }[]> {
  const out = new Map<number, { id: string; data: Uint8Array }[]>();
  withFile(path, (source) =>
    withCcobPrefetch({}, (ccob) =>
      locate(source, {
        ...ccob,
        decompressOffload: codecDecompressor(),
        onBundle: (bundle, contents) => {
          if (bundle.section === undefined || !bundle.section.startsWith(".hip_fatbin")) return;
          const at = bundle.compressed?.offset ?? bundle.offset;
          const list = out.get(at) ?? [];
          for (const e of bundle.entries) if (archOfEntryId(e.id) !== "") list.push({ id: e.id, data: readExact(contents, e.offset, e.size).slice() });
          out.set(at, list);
        },
      })));
  return out;
}

/** Splits one binary: its archive entries, and its kpack'd bytes. Undefined for a file that is not a HIPF host. */
function splitBinary(path: string, kernelName: string, searchPath: string, prefix: string | undefined): { entries: KpackWriteEntry[]; output: Uint8Array; wrappers: number } | undefined {
  const input = readFileSync(path);
  const source = bytesSource(input);
  if (readKpackHost(source) !== undefined) throw new OffloadKitError("ALREADY_KPACKED", "already kpack'd (its wrappers are HIPK)");
  let layout;
  try {
    layout = readHipFatbinLayout(openLinkedElf(source));
  } catch (e) {
    // Not a linked ELF file, or one without .hip_fatbin: nothing to split. A HIP host that cannot be read is thrown.
    if (isOffloadKitError(e) && (e.code === "NO_HIP_FATBIN" || e.code === "NOT_ELF" || e.code.startsWith("ELF_"))) return undefined;
    throw e;
  }
  const objects = codeObjectsByBundle(path);
  const entries: KpackWriteEntry[] = [];
  const bundleOf = new Map(layout.bundles.map((b) => [b.address, b]));
  layout.wrappers.forEach((wrapper, index) => {
    const bundle = bundleOf.get(wrapper.target);
    if (bundle === undefined) throw new OffloadKitError("KPACK_WRAPPER_TARGET", `${path}: wrapper ${index} points at no fat binary`);
    for (const { id, data } of objects.get(bundle.fileOffset) ?? []) {
      // rocm-kpack's metadata: the entry ID it came from, and the prefix (its artifact's) the binary is below.
      entries.push({ key: `${kernelName}#${index}`, arch: archOfEntryId(id), data, metadata: { target: id, ...(prefix !== undefined ? { source_prefix: prefix } : {}) } });
    }
  });
  const output = rocmKpackHost(new Uint8Array(input.buffer, input.byteOffset, input.length), writeKpackMarker({ kernelName, searchPaths: [searchPath] }));
  return { entries, output, wrappers: layout.wrappers.length };
}

/** Splits every HIP host under `options.root`, writing archives to `<root>/.kpack/` and each host in place. */
export function kpackTree(options: KpackSplitOptions): KpackSplitResult {
  const root = options.root;
  const compression = options.compression ?? "none";
  const byArch = new Map<string, KpackWriteEntry[]>();
  const binaries: { path: string; kernelName: string; wrappers: number; before: number; after: number }[] = [];
  const skipped: { path: string; reason: string }[] = [];
  const outputs: { path: string; bytes: Uint8Array }[] = [];
  for (const path of filesBelow(root)) {
    const below = relative(root, path).split(sep).join("/");
    const kernelName = options.prefix === undefined || options.prefix === "" ? below : `${options.prefix}/${below}`;
    let split;
    try {
      split = splitBinary(path, kernelName, searchPathFor(root, path, options.group), options.prefix || undefined);
    } catch (e) {
      if (!isOffloadKitError(e)) throw e;
      skipped.push({ path, reason: e.message });
      continue;
    }
    if (split === undefined) continue;
    for (const entry of split.entries) {
      const frame = compression === "zstd-per-kernel" ? nodeCodecs.zstdCompress(entry.data, options.level ?? 3) : undefined;
      byArch.set(entry.arch, [...(byArch.get(entry.arch) ?? []), { ...entry, ...(frame !== undefined ? { frame } : {}) }]);
    }
    outputs.push({ path, bytes: split.output });
    binaries.push({ path, kernelName, wrappers: split.wrappers, before: statSync(path).size, after: split.output.length });
  }
  // Archives first: a host is replaced only once what it needs is on disk.
  const archives: { path: string; arch: string; codeObjects: number; size: number }[] = [];
  if (byArch.size > 0) mkdirSync(join(root, ".kpack"), { recursive: true });
  for (const [arch, added] of [...byArch.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const path = join(root, ".kpack", `${options.group}_${arch}.kpack`);
    // An archive of the group there already (an earlier run, another binary) keeps what it holds for other keys.
    const entries = [...existingEntries(path, new Set(added.map((e) => e.key)), compression, options.level ?? 3), ...added];
    const bytes = writeKpackArchive(entries, { groupName: options.group, gfxArchFamily: arch, gfxArches: [arch], compression });
    atomicWrite(path, bytes, 0o644);
    archives.push({ path, arch, codeObjects: entries.length, size: bytes.length });
  }
  for (const { path, bytes } of outputs) atomicWrite(path, bytes, statSync(path).mode & 0o7777);
  return { binaries, archives, skipped };
}

/** The code objects of the archive at `path` filed under keys not in `replaced`, as entries in `compression`; none when there is no archive. */
function existingEntries(path: string, replaced: ReadonlySet<string>, compression: KpackCompression, level: number): KpackWriteEntry[] {
  if (!existsSync(path)) return [];
  const decode = codecDecompressor();
  return withFile(path, (source) => {
    const archive = readKpackArchive(source);
    return archive.entries.filter((e) => !replaced.has(e.key)).map((e) => {
      const data = readKpackEntry(source, archive.compression, e, (frame, size) => decode("zstd", frame, size));
      const metadata = { ...(e.target !== undefined ? { target: e.target } : {}), ...(e.sourcePrefix !== undefined ? { source_prefix: e.sourcePrefix } : {}) };
      return {
        key: e.key, arch: e.arch, data,
        ...(compression === "zstd-per-kernel" ? { frame: nodeCodecs.zstdCompress(data, level) } : {}),
        ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
      };
    });
  });
}

function atomicWrite(path: string, bytes: Uint8Array, mode: number): void {
  const temp = `${path}.kpack-tmp-${process.pid}`;
  try {
    writeFileSync(temp, bytes);
    chmodSync(temp, mode);
    renameSync(temp, path);
  } catch (e) {
    rmSync(temp, { force: true });
    throw e;
  }
}
