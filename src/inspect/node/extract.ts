/**
 * `offload-kit extract`: every entry of every bundle in a file (compressed bundles decoded, host entries
 * too) and every image of its offload binaries, written to files, wherever the file holds them (the
 * locator, src/inspect/locate.ts). Ranges are copied straight from the input through the engine window
 * (src/node/copy.ts), so memory stays bounded whatever the input size; a bundle inside a compressed
 * bundle is copied from its decompressed contents while they are open.
 *
 * Names, all in the output folder, never outside it:
 * - a bundle entry: `<file name>-<bundle index>-<entry ID>` (`:`, `/`, `\` and NUL in the ID become `_`;
 *   src/bundler/node/batch.ts `outputFileName`), the bundle index counting the file's bundles in file order;
 * - an offload image: clang-offload-packager's `<stem>-<triple>-<arch>.<n>.<ext>` (`n` the image's index);
 * - an NVIDIA fatbin entry or a cubin: cuobjdump's `<stem>.<n>.sm_<arch>.cubin` / `.ptx`, decoded (`Outputs.nvEntry`).
 * A name already given in the run (a repeated ID, or two inputs whose names meet) gets `.1`, `.2`, ...
 * appended, compared without case, so no two outputs share a name even on a case-insensitive file system.
 * `offload-kit extract DIR` names a file found in a folder after its path below it, flattened into one
 * component (src/inspect/node/folders.ts `flattenFoundPath`), and a package member after its whole path
 * (src/packages/names.ts): the name passed as `input` here is already that single component.
 *
 * Selection: `targets` keeps the entries (and images, by `<kind>-<triple>-<arch>`) compatible with one of
 * the targets under the bundler's rules (src/bundler/targets.ts); `imageFilters` selects images as the
 * packager does (`file=` and `archive` included) and then bundle entries only when `targets` is given too.
 *
 * One input's outputs are committed together (src/node/output.ts): an input that fails leaves none.
 */
import type { Hash } from "node:crypto";
import { statSync } from "node:fs";
import { basename, join } from "node:path";
import type { Engine } from "../../engine/engine.js";
import { OffloadKitError } from "../../engine/errors.js";
import { engine as defaultEngine } from "../../engine/select.js";
import type { ByteSource } from "../../engine/source.js";
import { byteStringToUnicode } from "../../formats/bytes.js";
import { NV_KIND_ELF, decodeNvEntry } from "../../formats/nv-fatbin.js";
import { nodeCodecs } from "../../compress/node/codecs.js";
import { readExact } from "../../engine/source.js";
import { isNvArchId } from "../check.js";
import { imageTargetId, locate } from "../locate.js";
import { holdsOffloadCode } from "./check.js";
import type { LocatedBundle, LocatedOffloadBinaries } from "../locate.js";
import type { FoundEntry, FoundOffloadImage, ScanProblem } from "../scan.js";
import type { CollectedImage } from "../../packager/collect.js";
import { extractedFileName, matchesFilter, parseImageArguments } from "../../packager/image-args.js";
import { compatible, parseTarget } from "../../bundler/targets.js";
import { normaliseBatchTargets, outputFileName } from "../../bundler/node/batch.js";
import { cryptoModule } from "../../node/builtins.js";
import { copyRange } from "../../node/copy.js";
import { CcobPrefetch } from "../../compress/node/decompress.js";
import { makeDirectories, removeDirectories } from "../../node/directories.js";
import { fileError } from "../../node/errors.js";
import { FileSource } from "../../node/file-source.js";
import { OutputFile } from "../../node/output.js";
import { codecDecompressor } from "../../compress/node/packager-codecs.js";
import { writeArchiveFile } from "../../packager/node.js";
import { kpackHostContents, withKpackHost } from "../../kpack/node/location.js";
import type { KpackEntryInfo } from "../scan.js";

export interface ExtractAllOptions {
  /** Where generated names go. `file=` paths of image filters are used as given. */
  readonly outDir: string;
  /** Keep only entries compatible with one of these (raw `--targets` strings, byte strings). */
  readonly targets?: readonly string[];
  readonly hipOpenmpCompatible?: boolean;
  /** `--image` filters (byte strings), as clang-offload-packager takes them. */
  readonly imageFilters?: readonly string[];
  /** `--archive`: each image filter's matches go to a static archive at its `file=`. */
  readonly archive?: boolean;
  /** Compute each output's SHA-256 while copying. */
  readonly hash?: boolean;
  readonly engine?: Engine;
  /** Prints a warning as the packager does (several matches for one `file=`). */
  readonly warn?: (text: string) => void;
  /** Names already given in this run (shared across inputs); keys are lower-cased. */
  readonly taken?: Set<string>;
  /**
   * For a file found in a folder: when it is not offload code by the walk's rule (src/inspect/node/check.ts
   * `holdsOffloadCode`), give no outputs and no error instead of "nothing to extract".
   */
  readonly skipWithoutOffloadCode?: boolean;
  /** Where the input is on disk: a kpack'd host binary's archives are looked for beside it (src/kpack/node/location.ts). */
  readonly kpackHostPath?: string;
}

/** One file written. */
export interface ExtractedOutput {
  readonly path: string;
  /** The entry ID, or `<kind>-<triple>-<arch>` for an image (byte strings). */
  readonly id: string;
  /** The payload's absolute offset in the input; null inside a compressed bundle or a compressed image. */
  readonly offset: number | null;
  /** A kpack code object: its archive (for a kpack'd host's), TOC key and architecture. */
  readonly kpack?: KpackEntryInfo;
  readonly size: number;
  readonly sha256?: string;
  /** The bundle's index in the file, for bundle entries. */
  readonly bundle: number | null;
  /** The image's index in the file, for offload images. */
  readonly image?: number;
  readonly file: string;
  readonly section?: string;
  readonly member?: string;
  /** The compressed bundle the entry came out of. */
  readonly compressed?: { readonly offset: number; readonly size: number };
  /** A static archive of several images (`--archive`): their indexes. */
  readonly archiveOf?: readonly number[];
}

export interface ExtractFileResult {
  readonly file: string;
  /** Empty only for a file skipped by `skipWithoutOffloadCode` (otherwise no output is an error). */
  readonly outputs: readonly ExtractedOutput[];
  readonly problems: readonly ScanProblem[];
  readonly bundles: number;
  readonly images: number;
}

/** An output that hashes what goes through it. */
class HashedOutput extends OutputFile {
  private readonly hasher: Hash | undefined;
  constructor(path: string, hash: boolean) {
    super(path);
    this.hasher = hash ? cryptoModule().createHash("sha256") : undefined;
  }
  override write(bytes: Uint8Array): void {
    this.hasher?.update(bytes);
    super.write(bytes);
  }
  digest(): string | undefined {
    return this.hasher?.digest("hex");
  }
}

/** A name not yet given in this run: `name`, else `name.1`, `name.2`, ... */
function uniqueName(taken: Set<string>, name: string): string {
  let candidate = name;
  for (let k = 1; taken.has(candidate.toLowerCase()); k++) candidate = `${name}.${k}`;
  taken.add(candidate.toLowerCase());
  return candidate;
}

interface Selection {
  readonly entry: (id: string) => boolean;
  readonly bundles: boolean;
}

function selection(options: ExtractAllOptions): Selection {
  const filters = options.imageFilters ?? [];
  if (options.targets === undefined || options.targets.length === 0) return { entry: () => true, bundles: filters.length === 0 };
  // NVIDIA entries are named by arch (`sm_80`, `compute_90`) and selected by that name exactly; the other
  // targets are the bundler's.
  const raw = options.targets.map(byteStringToUnicode);
  const nvArchs = raw.filter(isNvArchId);
  const others = raw.filter((t) => !isNvArchId(t));
  const targets = others.length > 0 ? normaliseBatchTargets(others).map(parseTarget) : [];
  const hipOpenmp = options.hipOpenmpCompatible ?? false;
  return {
    entry: (id) => {
      if (isNvArchId(id)) return nvArchs.includes(id);
      const codeObject = parseTarget(id);
      return targets.some((target) => compatible(codeObject, target, hipOpenmp));
    },
    bundles: true,
  };
}

interface PendingImage {
  readonly found: FoundOffloadImage;
  readonly image: CollectedImage;
  readonly run: LocatedOffloadBinaries;
}

/** One input's outputs: named, written, closed, and committed or discarded together. */
class Outputs {
  readonly list: ExtractedOutput[] = [];
  private readonly files: HashedOutput[] = [];
  private readonly names: string[] = [];
  /** Folders made for the output folder; undefined until the first generated name. */
  private created: string[] | undefined;

  constructor(readonly input: string, readonly outDir: string, readonly engine: Engine, readonly taken: Set<string>, readonly hash: boolean) {}

  /** A path in the output folder for `wanted`, unique in the run. */
  generated(wanted: string): string {
    // Made when the first output is named, so an input that gives nothing leaves no empty folder behind.
    this.created ??= makeDirectories(this.outDir);
    const unique = uniqueName(this.taken, wanted);
    this.names.push(unique);
    return join(this.outDir, unique);
  }

  /** Writes one output through `copy`; returns its size and hash. */
  write(path: string, copy: (out: OutputFile) => void): { size: number; sha256?: string } {
    // Found now rather than when renaming at the end, after other outputs of the input were renamed.
    if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
      throw fileError(path, Object.assign(new Error("is a directory"), { code: "EISDIR" }));
    }
    const out = new HashedOutput(path, this.hash);
    this.files.push(out);
    copy(out);
    out.close();
    const sha256 = out.digest();
    return { size: out.position, ...(sha256 !== undefined ? { sha256 } : {}) };
  }

  copy(path: string, source: ByteSource, offset: number, size: number): { size: number; sha256?: string } {
    return this.write(path, (out) => copyRange(this.engine, source, offset, size, out));
  }

  entry(bundle: LocatedBundle, entry: FoundEntry, contents: ByteSource): void {
    const path = this.generated(outputFileName(this.input, `${bundle.index}-${entry.id}`));
    const written = this.copy(path, contents, entry.offset, entry.size);
    this.list.push({
      path,
      id: entry.id,
      // A kpack code object decoded from a zstd frame, or read from an archive beside a host binary, is not in the input as it is.
      offset: bundle.compressed === undefined && entry.kpack?.archive === undefined && entry.kpack?.compression !== "zstd-per-kernel" ? entry.offset : null,
      ...written,
      ...(entry.kpack !== undefined ? { kpack: entry.kpack } : {}),
      bundle: bundle.index,
      file: this.input,
      ...where(bundle),
      ...(bundle.compressed !== undefined ? { compressed: { offset: bundle.compressed.offset, size: bundle.compressed.size } } : {}),
    });
  }

  /**
   * An NVIDIA fatbin entry or cubin, decoded (LZ4 or zstd) and named as cuobjdump `-xelf all` / `-xptx all`
   * names it: `<stem>.<n>.sm_<arch>.cubin` / `.ptx`, `n` counting the input's cubins and PTX files apart from 1
   * (a standalone cubin: `<stem>.sm_<arch>.cubin`), `stem` the input's name less its last extension.
   */
  nvEntry(bundle: LocatedBundle, index: number, contents: ByteSource): void {
    const entry = bundle.entries[index]!;
    const stem = nvStem(this.input);
    if (bundle.format === "cubin") {
      const path = this.generated(`${stem}.sm_${bundle.cubin!.arch}.cubin`);
      this.list.push({ path, id: entry.id, offset: entry.offset, ...this.copy(path, contents, entry.offset, entry.size), bundle: bundle.index, file: this.input, ...where(bundle) });
      return;
    }
    const info = bundle.nvFatbin!.entries[index]!;
    const elf = info.kind === NV_KIND_ELF;
    const n = elf ? ++this.nvCubins : ++this.nvPtx;
    const path = this.generated(`${stem}.${n}.sm_${info.arch}.${elf ? "cubin" : "ptx"}`);
    const payloadOffset = info.headerOffset + info.headerSize;
    let bytes;
    try {
      bytes = decodeNvEntry({ ...info, payloadOffset }, readExact(contents, entry.offset, entry.size), (frame, capacity) => nodeCodecs.zstdDecompressFrame(frame, capacity));
    } catch (e) {
      if (e instanceof OffloadKitError) throw new OffloadKitError(e.code, `fatbin entry ${entry.id} at 0x${info.headerOffset.toString(16)}: ${e.message}`, { offset: e.offset, field: e.field });
      throw e;
    }
    const written = this.write(path, (out) => out.write(bytes));
    this.list.push({ path, id: entry.id, offset: info.compression === "none" ? entry.offset : null, ...written, bundle: bundle.index, file: this.input, ...where(bundle) });
  }

  private nvCubins = 0;
  private nvPtx = 0;

  image(path: string, pending: PendingImage): void {
    const written = this.copy(path, pending.image.source, pending.image.imageOffset, pending.image.imageSize);
    this.list.push(imageOutput(this.input, path, pending, written));
  }

  archive(path: string, matched: readonly PendingImage[]): void {
    const written = this.write(path, (out) => writeArchiveFile(out, this.engine, matched.map((m) => m.image)));
    this.list.push({ path, id: "", offset: null, ...written, bundle: null, file: this.input, archiveOf: matched.map((m) => m.found.index) });
  }

  commit(): void {
    for (const file of this.files) file.commit();
  }

  discard(): void {
    for (const file of this.files) file.discard();
    for (const name of this.names) this.taken.delete(name.toLowerCase());
    removeDirectories(this.created ?? []);
  }
}

/** cuobjdump's stem for extracted files: the input's base name less its last extension (`libkernels.so` → `libkernels`). */
function nvStem(input: string): string {
  const name = basename(input);
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.substring(0, dot) : name;
}

function where(found: { readonly section?: string; readonly member?: string }): { section?: string; member?: string } {
  return {
    ...(found.section !== undefined ? { section: found.section } : {}),
    ...(found.member !== undefined ? { member: found.member } : {}),
  };
}

function imageOutput(input: string, path: string, pending: PendingImage, written: { size: number; sha256?: string }): ExtractedOutput {
  return {
    path,
    id: imageTargetId(pending.found),
    offset: pending.found.compressed ? null : pending.found.offset,
    ...written,
    bundle: null,
    image: pending.found.index,
    file: input,
    ...where(pending.run),
  };
}

/** The error for an input that gave no output: why, in the words a user needs. */
function nothingExtracted(
  found: { bundles: number; images: number; problems: readonly ScanProblem[]; size: number; ids: ReadonlySet<string> },
  options: ExtractAllOptions,
): OffloadKitError {
  if (found.bundles === 0 && found.images === 0) {
    const problem = found.problems[0];
    if (problem !== undefined) {
      return new OffloadKitError(problem.code, `at 0x${problem.offset.toString(16)}: ${problem.message}`, { offset: problem.offset });
    }
    return new OffloadKitError("NOTHING_TO_EXTRACT", `no offload bundles or offload binaries found (${found.size} bytes)`);
  }
  const what = `${found.bundles} bundle${found.bundles === 1 ? "" : "s"} and ${found.images} offload image${found.images === 1 ? "" : "s"}`;
  const by = [
    ...(options.targets !== undefined && options.targets.length > 0 ? [`--targets=${options.targets.map(byteStringToUnicode).join(",")}`] : []),
    ...(options.imageFilters ?? []).map((f) => `--image=${byteStringToUnicode(f)}`),
  ].join(" ");
  const held = [...found.ids].sort().map(byteStringToUnicode).join(", ");
  return new OffloadKitError("NO_MATCH", `none of the entries of its ${what} is selected by ${by} (it holds ${held})`);
}

/** Extracts one input; throws OffloadKitError when it cannot be read or gives nothing to extract. */
export function extractFile(input: string, options: ExtractAllOptions): ExtractFileResult {
  const source = FileSource.open(input);
  try {
    return extractSource(source, input, { ...options, kpackHostPath: input });
  } finally {
    source.close();
  }
}

/** `extractFile` on bytes already open (a package member); outputs are named after `input`'s base name. */
export function extractSource(source: ByteSource, input: string, options: ExtractAllOptions): ExtractFileResult {
  const engine = options.engine ?? defaultEngine();
  const select = selection(options);
  const filters = (options.imageFilters ?? []).map(parseImageArguments);
  const outputs = new Outputs(input, options.outDir, engine, options.taken ?? new Set<string>(), options.hash ?? false);
  const ccob = new CcobPrefetch();
  try {
    const images: PendingImage[] = [];
    const ids = new Set<string>();
    const located = locate(source, {
      engine,
      openCompressed: ccob.open,
      prefetchCompressed: ccob.prefetch,
      decompressOffload: codecDecompressor(),
      onBundle: (bundle, contents) => {
        bundle.entries.forEach((entry, i) => {
          ids.add(entry.id);
          if (!select.bundles || !select.entry(entry.id)) return;
          if (bundle.format === "nv-fatbin" || bundle.format === "cubin") outputs.nvEntry(bundle, i, contents);
          else outputs.entry(bundle, entry, contents);
        });
      },
      onOffloadBinaries: (run, raw) => {
        run.images.forEach((image, i) => {
          ids.add(imageTargetId(image));
          images.push({ found: image, image: { ...raw[i]!, identifier: run.member ?? input }, run });
        });
      },
    });
    // A kpack'd host binary given or found on disk: the code objects its wrappers find in archives beside it.
    const location = options.kpackHostPath !== undefined ? withKpackHost(options.kpackHostPath, source, located) : located;
    for (const bundle of location.bundles) {
      if (bundle.kpack?.wrapper === undefined || bundle.entries.length === 0) continue;
      const read = kpackHostContents(bundle);
      for (const entry of read.bundle.entries) {
        ids.add(entry.id);
        if (select.bundles && select.entry(entry.id)) outputs.entry(read.bundle, entry, read.contents);
      }
    }
    if (filters.length === 0) {
      for (const pending of images) {
        if (select.entry(imageTargetId(pending.found))) outputs.image(outputs.generated(extractedFileName(input, pending.image, pending.found.index)), pending);
      }
    }
    for (const args of filters) {
      const matched = images.filter((pending) => matchesFilter(args, pending.image));
      if (matched.length === 0) continue;
      const file = args.get("file") ?? undefined;
      if (options.archive) {
        if (file === undefined) throw new OffloadKitError("PACKAGER_ARCHIVE_NEEDS_FILE", "Image must have a 'file' argument.");
        outputs.archive(file, matched);
      } else if (file !== undefined) {
        // The packager's rule: several matches for one file= leave the last.
        if (matched.length > 1) options.warn?.(`Multiple inputs match to a single file, '${file}'`);
        outputs.image(file, matched[matched.length - 1]!);
      } else {
        matched.forEach((pending, i) => outputs.image(outputs.generated(extractedFileName(input, pending.image, i)), pending));
      }
    }
    if (outputs.list.length === 0 && options.skipWithoutOffloadCode === true && !holdsOffloadCode(location)) {
      return { file: input, outputs: [], problems: location.problems, bundles: 0, images: 0 };
    }
    if (outputs.list.length === 0) {
      throw nothingExtracted({ bundles: location.bundles.length, images: images.length, problems: location.problems, size: location.size, ids }, options);
    }
    outputs.commit();
    return { file: input, outputs: outputs.list, problems: location.problems, bundles: location.bundles.length, images: images.length };
  } catch (e) {
    outputs.discard();
    throw e;
  } finally {
    ccob.close();
  }
}
