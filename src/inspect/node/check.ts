/**
 * The inputs of `offload-kit check`: every bundle entry and offload image in a file, found by the one
 * locator that `ls`, `extract` and `sizes` use (src/inspect/locate.ts: bundles, compressed bundles, fat
 * objects, offload binaries, the offload sections of ELF files, archive members), or in the offload
 * files of a directory, each with the verdict of src/inspect/check.ts for one GPU configuration.
 *
 * Directories are walked as `find DIR` walks them (without -L), by the one walk `ls`, `sizes` and
 * `extract` make too (src/inspect/node/folders.ts).
 */
import type { Engine } from "../../engine/engine.js";
import { isOffloadKitError } from "../../engine/errors.js";
import { engine as defaultEngine } from "../../engine/select.js";
import { checkEntry, judgeEntries, judgeFatBinary } from "../check.js";
import type { EntryVerdict, FatBinaryJudgement, FileJudgement, GpuConfig } from "../check.js";
import { fatBinaryOffset, fatBinaryOrigins, isFatBinary } from "../fat-binaries.js";
import type { FatBinaryOrigin } from "../fat-binaries.js";
import type { ByteSource } from "../../engine/source.js";
import { imageTargetId, locate } from "../locate.js";
import type { Location } from "../locate.js";
import type { ScanProblem } from "../scan.js";
import { withCcobPrefetch } from "../../compress/node/decompress.js";
import { withFile } from "../../node/file-source.js";
import { codecDecompressor } from "../../compress/node/packager-codecs.js";
import { forEachPath } from "./folders.js";
import type { WalkError } from "./folders.js";
import { withKpackHost } from "../../kpack/node/location.js";

export type { WalkError } from "./folders.js";

export type InputKind =
  | "archive" | "package" | "fat object" | "bundle" | "compressed bundle" | "text bundle" | "embedded bundles"
  | "offload binary" | "embedded offload binaries" | "code object" | "NVIDIA fatbin" | "cubin" | "kpack archive" | "kpack'd host" | "none";

export interface CheckedEntry {
  /** Archive member name, for archives. */
  readonly member?: string;
  /** The bundle holding the entry: its index among the file's bundles, as `ls` and `extract` count them. */
  readonly bundle?: number;
  /** For an offload image (0x10FF10AD): its index among the file's images, as `ls` and `llvm-objdump --offloading` count them. */
  readonly image?: number;
  /** Where the payload starts: in the file, or in the decompressed bytes of the compressed bundle at `compressedAt`. */
  readonly offset: number;
  readonly compressedAt?: number;
  /** The bundle entry ID, or `<kind>-<triple>-<arch>` for an offload image. */
  readonly id: string;
  readonly size: number;
  readonly verdict: EntryVerdict;
}

/** One fat binary of a file (src/inspect/fat-binaries.ts says which bundles are) and its verdict. */
export interface CheckedFatBinary {
  /** Its bundle's index, as `ls`, `extract` and `replace --bundle` count them. */
  readonly index: number;
  /** Where its bytes start in the file (a compressed bundle's own offset). */
  readonly offset: number;
  readonly section?: string;
  /** The archive member (an object in a static library) or package member holding it. */
  readonly member?: string;
  readonly origin?: FatBinaryOrigin;
  /** Entries that load whatever the unstated features are. */
  readonly loadable: number;
  /** `ok`: some device entry loads under every setting of the unstated features (or it has none). */
  readonly judgement: FatBinaryJudgement;
  readonly entries: readonly CheckedEntry[];
}

export interface CheckedInput {
  readonly path: string;
  readonly kind: InputKind;
  readonly entries: readonly CheckedEntry[];
  /** The file's fat binaries, each judged alone: the runtime fails when any one has nothing the GPU loads. */
  readonly fatBinaries: readonly CheckedFatBinary[];
  /**
   * The input's verdict: no error, device code that loads under every setting (`judgement`), and every fat
   * binary with code the GPU loads; for a package, as src/packages/node/check.ts rules.
   */
  readonly ok: boolean;
  /** Entries that are device code (not host). */
  readonly deviceEntries: number;
  /** Entries that load whatever the unstated features are. */
  readonly loadable: number;
  /** Whether some entry loads under every setting of the features `--gpu` leaves unstated. */
  readonly judgement: FileJudgement;
  /** What the locator could not read (a damaged bundle in an offload section, a CUDA fatbinary). */
  readonly problems: readonly ScanProblem[];
  /** Set when the input could not be read (or held nothing readable but problems). */
  readonly error?: { readonly code: string; readonly message: string };
  /**
   * Whether the file is offload code at all, for directory walks: something was found, or damage where
   * offload code is (an ELF file's offload section, an archive, the start of the file). A file that only
   * quotes a magic somewhere inside (a C source naming `__CLANG_OFFLOAD_BUNDLE__`) is not.
   */
  readonly offloadFile: boolean;
  /** Set when `error` is the file's own failing open or read (a walk reports such files as unreadable entries). */
  readonly readError?: boolean;
}

export interface CheckOptions {
  /** Only entries of this offload kind count (hip and hipv4 are one). */
  readonly kind?: string;
  readonly engine?: Engine;
  /**
   * The GPUs a kpack'd host binary's archives are searched for, as rocm-kpack's runtime is given them (the agent's
   * ISA name, `gfx90a:sramecc+:xnack-`): only what it would load is checked. Without them, every installed archive.
   */
  readonly kpackGpus?: readonly string[];
}

function kindOf(location: Location): InputKind {
  if (location.container === "archive") return "archive";
  const bundle = location.bundles[0];
  const run = location.offloadBinaries[0];
  // Named for its bundles when it has any, else for its offload binaries.
  if (bundle !== undefined) {
    if (bundle.compressed !== undefined) return "compressed bundle";
    if (bundle.format === "text") return "text bundle";
    if (bundle.format === "object") return "fat object";
    if (bundle.format === "code-object") return "code object";
    if (bundle.format === "nv-fatbin") return "NVIDIA fatbin";
    if (bundle.format === "cubin") return "cubin";
    if (bundle.format === "kpack") return bundle.kpack?.wrapper !== undefined ? "kpack'd host" : "kpack archive";
    return bundle.offset === 0 && bundle.section === undefined ? "bundle" : "embedded bundles";
  }
  if (run !== undefined) return run.offset === 0 && run.section === undefined ? "offload binary" : "embedded offload binaries";
  return "none";
}

/**
 * checkEntry for one GPU and kind, each entry ID judged once: a library repeats a few IDs in every bundle
 * (librocsparse0: 8 IDs in 888 entries); judging every entry made `check` of it 171 ms against 121 ms
 * (measured, hyperfine).
 */
export function verdictsFor(gpu: GpuConfig, options: CheckOptions): (id: string) => EntryVerdict {
  const known = new Map<string, EntryVerdict>();
  return (id) => {
    let verdict = known.get(id);
    if (verdict === undefined) known.set(id, (verdict = checkEntry(id, gpu, { kind: options.kind })));
    return verdict;
  };
}

export function entriesOf(location: Location, verdict: (id: string) => EntryVerdict): CheckedEntry[] {
  const entries: CheckedEntry[] = [];
  for (const bundle of location.bundles) {
    for (const e of bundle.entries) {
      entries.push({
        ...(bundle.member !== undefined ? { member: bundle.member } : {}),
        bundle: bundle.index,
        offset: e.offset,
        ...(bundle.compressed !== undefined ? { compressedAt: bundle.compressed.offset } : {}),
        id: e.id,
        size: e.size,
        verdict: verdict(e.id),
      });
    }
  }
  for (const run of location.offloadBinaries) {
    for (const image of run.images) {
      const id = imageTargetId(image);
      entries.push({
        ...(run.member !== undefined ? { member: run.member } : {}),
        image: image.index,
        // A compressed image's offset is in its inflated bytes; where its binary starts says where it is.
        offset: image.compressed ? image.binaryOffset : image.offset,
        id,
        size: image.size,
        verdict: verdict(id),
      });
    }
  }
  return entries;
}

/**
 * The fat binaries among a located file's bundles, each with its entries (as `entriesOf` gave them) and
 * verdict; `source`, when given, is read for where each came from (wrappers and symbols of a linked ELF
 * file). Package members are not given one: a member located as it streams keeps only the bytes the
 * locator reads, not the wrappers and relocations, and its answer must not depend on whether it streamed.
 */
export function fatBinariesOf(location: Location, entries: readonly CheckedEntry[], source?: ByteSource): CheckedFatBinary[] {
  const bundles = location.bundles.filter(isFatBinary);
  if (bundles.length === 0) return [];
  const named = source !== undefined && bundles.some((b) => b.section !== undefined && b.member === undefined && b.format !== "nv-fatbin");
  const origins = named ? fatBinaryOrigins(source) : new Map<number, FatBinaryOrigin>();
  return bundles.map((bundle) => {
    const mine = entries.filter((e) => e.bundle === bundle.index);
    const offset = fatBinaryOffset(bundle);
    const origin = bundle.member === undefined ? origins.get(offset) : undefined;
    return {
      index: bundle.index,
      offset,
      ...(bundle.section !== undefined ? { section: bundle.section } : {}),
      ...(bundle.member !== undefined ? { member: bundle.member } : {}),
      ...(origin !== undefined ? { origin } : {}),
      loadable: mine.filter((e) => e.verdict.verdict === "loadable").length,
      judgement: kpackMiss(bundle, mine.length, judgeFatBinary(mine.map((e) => e.verdict))),
      entries: mine,
    };
  });
}

/**
 * A kpack'd host's HIPK wrapper for which no archive holds a code object is not "host code only": the runtime
 * registers it and stops with "kernel not found" (rocm-kpack's -fgpu-rdc split leaves such a wrapper).
 */
function kpackMiss(bundle: { readonly format: string }, entries: number, judgement: FatBinaryJudgement): FatBinaryJudgement {
  return bundle.format === "kpack" && entries === 0 ? { ...judgement, ok: false } : judgement;
}

/** Whether a file passes: device code that loads under every setting, and no fat binary without any. */
export function filePasses(judgement: FileJudgement, fatBinaries: readonly CheckedFatBinary[]): boolean {
  return judgement.ok && fatBinaries.every((f) => f.judgement.ok);
}

function failed(path: string, error: { code: string; message: string }, problems: readonly ScanProblem[], offloadFile: boolean): CheckedInput {
  return { path, kind: "none", entries: [], fatBinaries: [], ok: false, deviceEntries: 0, loadable: 0, judgement: judgeEntries([]), problems, error, offloadFile };
}

/** Checks one file. */
export function checkFile(path: string, gpu: GpuConfig, options: CheckOptions = {}): CheckedInput {
  return checkWith(path, verdictsFor(gpu, options), options);
}

/**
 * Whether a located file with no readable entries is still offload code, by where its damage is: an ELF
 * file's offload section, an archive, the start of the file (not a magic quoted somewhere in a text).
 */
export function isDamagedOffloadFile(location: Location): boolean {
  return location.container !== "other" || location.problems.some((p) => p.offset === 0);
}

/** Whether a located file is offload code by the walk's rule: something found, or damage where offload code is. */
export function holdsOffloadCode(location: Location): boolean {
  if (location.bundles.length > 0 || location.offloadBinaries.length > 0) return true;
  return location.problems.length > 0 && isDamagedOffloadFile(location);
}

/** checkFile with the verdicts of one run (a directory's files share them). */
export function checkWith(path: string, verdict: (id: string) => EntryVerdict, options: CheckOptions): CheckedInput {
  return checkSourceWith(path, (use) => withFile(path, use), verdict, options);
}

/** checkWith over bytes opened by the caller (a package member named `pkg!member`), reported under `path`. */
export function checkSourceWith(
  path: string,
  open: <T>(use: (source: ByteSource) => T) => T,
  verdict: (id: string) => EntryVerdict,
  options: CheckOptions,
): CheckedInput {
  const engine = options.engine ?? defaultEngine();
  let location: Location;
  let fatBinaries: CheckedFatBinary[] = [];
  let entries: CheckedEntry[] = [];
  try {
    location = open((source) => {
      const located = withCcobPrefetch({}, (ccob) => locate(source, { ...ccob, engine, decompressOffload: codecDecompressor() }));
      const found = withKpackHost(path, source, located, { ...(options.kpackGpus !== undefined ? { gpus: options.kpackGpus } : {}) });
      entries = entriesOf(found, verdict);
      fatBinaries = fatBinariesOf(found, entries, source);
      return found;
    });
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    // The locator turns what it cannot make sense of into problems: what escapes is the source failing.
    return { ...failed(path, { code: e.code, message: e.message }, [], true), readError: true };
  }
  if (entries.length === 0 && location.problems.length > 0) {
    // Nothing readable, only damage: the file is not vouched for.
    const first = location.problems[0]!;
    return failed(path, { code: first.code, message: `at 0x${first.offset.toString(16)}: ${first.message}` }, location.problems, isDamagedOffloadFile(location));
  }
  const judgement = judgeEntries(entries.map((e) => e.verdict));
  return {
    path,
    kind: kindOf(location),
    entries,
    fatBinaries,
    ok: filePasses(judgement, fatBinaries),
    deviceEntries: entries.filter((e) => e.verdict.verdict !== "host").length,
    loadable: entries.filter((e) => e.verdict.verdict === "loadable").length,
    judgement,
    problems: location.problems,
    offloadFile: entries.length > 0,
  };
}

export interface CheckRun {
  readonly inputs: readonly CheckedInput[];
  /** Files found in directories that hold no offload code (not counted as inputs). */
  readonly skipped: readonly string[];
  /** Directories given that held no offload file at all (in what could be read). */
  readonly emptyDirectories: readonly string[];
  /** Directories and entries a walk could not read (reported, skipped; they fail the run). */
  readonly unreadable: readonly WalkError[];
}

/** How one file is checked: as a plain file by default; `check` passes one that opens packages (src/packages/node/check.ts). */
export type InspectFile = (path: string, verdict: (id: string) => EntryVerdict) => CheckedInput | Promise<CheckedInput>;

/**
 * Checks files and directories: a file given by name is an input (a symbolic link to it is followed);
 * in a directory (a link to one, given by name, is followed too), each offload file is. `inspect` checks
 * each file, named or found by the walk alike, so a package found in a folder answers as one named would.
 */
export async function checkPaths(
  paths: readonly string[],
  gpu: GpuConfig,
  options: CheckOptions = {},
  inspect: InspectFile = (path, verdict) => checkWith(path, verdict, options),
): Promise<CheckRun> {
  const inputs: CheckedInput[] = [];
  const verdict = verdictsFor(gpu, options);
  const run = await forEachPath(paths, {
    inspect: (path) => inspect(path, verdict),
    classify: (checked) => (checked.readError === true ? { unreadable: checked.error! } : checked.offloadFile ? "input" : "skipped"),
    use: (checked) => {
      inputs.push(checked);
    },
  });
  return { inputs, skipped: run.skipped, emptyDirectories: run.emptyDirectories, unreadable: run.unreadable };
}
