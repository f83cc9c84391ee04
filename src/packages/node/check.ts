/**
 * `check` for packages: each member's bundle entries (src/inspect/locate.ts) judged for the GPU, the
 * package answering as one input whose entries name their member (`usr/lib/x.so`, `!` per level).
 * Members without device code are not entries; members with device code but none for the GPU are
 * listed in `membersWithoutCode`. A package found while walking a folder is checked the same way, named
 * as the walk names it (`dir/sub/x.whl`), its entries naming their member inside it.
 */
import { isOffloadKitError } from "../../engine/errors.js";
import { judgeEntries } from "../../inspect/check.js";
import type { GpuConfig } from "../../inspect/check.js";
import type { ScanProblem } from "../../inspect/scan.js";
import { locate } from "../../inspect/locate.js";
import { statSync } from "node:fs";
import { checkPaths, checkSourceWith, checkWith, entriesOf, fatBinariesOf, filePasses, isDamagedOffloadFile, verdictsFor } from "../../inspect/node/check.js";
import type { CheckOptions, CheckRun, CheckedEntry, CheckedFatBinary, CheckedInput } from "../../inspect/node/check.js";
import type { Location } from "../../inspect/locate.js";
import { isCaptureMiss } from "../../inspect/stream-locate.js";
import type { EntryVerdict } from "../../inspect/check.js";
import { withCcobPrefetch } from "../../compress/node/decompress.js";
import { forEachInput, openNamedMember, splitMemberPath } from "./inputs.js";
import { readExact } from "../../engine/source.js";
import { FileSource } from "../../node/file-source.js";
import { sniffPackage } from "../walk.js";

/** What one member of a package comes to on the GPU, as it would if checked as a file of its own. */
export interface CheckedMember {
  /** Its path inside the package, `!` per level. */
  readonly path: string;
  /**
   * `ok`: it passes as a file; `no-code`: it has device code but none that loads under every setting (a
   * library for other GPUs, as packages of per-GPU files ship); `fat-binary-without-code`: it has code the
   * GPU loads, but a fat binary without any (loading the library fails); `unreadable`: it could not be read.
   */
  readonly verdict: "ok" | "no-code" | "fat-binary-without-code" | "unreadable";
  readonly deviceEntries: number;
  readonly loadable: number;
  readonly fatBinaries: readonly CheckedFatBinary[];
  readonly error?: { readonly code: string; readonly message: string };
}

export interface CheckedPackage extends CheckedInput {
  /** Members holding device code of which none loads on the GPU. */
  readonly membersWithoutCode: readonly string[];
  /** Every member holding device code, damaged where offload code is, or unreadable, in the walk's order. */
  readonly members: readonly CheckedMember[];
}

function isPackageFile(path: string): boolean {
  let source: FileSource | undefined;
  try {
    // A path that cannot be looked at is not a package: checkPaths reports it as it reports any input.
    if (statSync(path, { throwIfNoEntry: false })?.isFile() !== true) return false;
    source = FileSource.open(path);
    return sniffPackage(readExact(source, 0, Math.min(source.size, 1024))) !== undefined;
  } catch {
    return false;
  } finally {
    source?.close();
  }
}

export function checkPackage(path: string, gpu: GpuConfig, options: CheckOptions = {}): Promise<CheckedPackage> {
  return checkPackageWith(path, verdictsFor(gpu, options));
}

/**
 * A package passes when it could be read to its end, its device code loads (some entry, in any member,
 * under every setting: packages ship libraries for other GPUs beside the ones for this one, so a member
 * without code for it is listed, not failed), and no member that has code the GPU loads has a fat binary
 * without any (that library would fail to load). Every member keeps its verdict whatever a later one does:
 * a member that cannot be read is an error naming it, and the walk goes on.
 */
async function checkPackageWith(path: string, verdict: (id: string) => EntryVerdict): Promise<CheckedPackage> {
  const entries: CheckedEntry[] = [];
  const fatBinaries: CheckedFatBinary[] = [];
  const problems: ScanProblem[] = [];
  const members: CheckedMember[] = [];
  /** Whether some member is offload code by checkFile's rule (entries, or damage where offload code is). */
  let offloadMember = false;
  const unreadable = (member: string, error: { code: string; message: string }) => {
    members.push({ path: member, verdict: "unreadable", deviceEntries: 0, loadable: 0, fatBinaries: [], error });
  };
  const judged = (error?: { code: string; message: string }): CheckedPackage => {
    const judgement = judgeEntries(entries.map((e) => e.verdict));
    const broken = members.some((m) => m.verdict === "fat-binary-without-code");
    return {
      path,
      kind: "package",
      entries,
      fatBinaries,
      ok: error === undefined && judgement.ok && !broken,
      deviceEntries: entries.filter((e) => e.verdict.verdict !== "host").length,
      loadable: entries.filter((e) => e.verdict.verdict === "loadable").length,
      judgement,
      problems,
      // In a folder, a package counts when some member is offload code, or when it could not be read to the end.
      offloadFile: offloadMember || error !== undefined,
      membersWithoutCode: members.filter((m) => m.verdict === "no-code" && m.loadable === 0).map((m) => m.path),
      members,
      ...(error !== undefined ? { error } : {}),
    };
  };
  let failure: { code: string; message: string } | undefined;
  try {
    const walk = await forEachInput(path, ({ member, source }) => {
      const name = (member ?? []).join("!");
      let location: Location;
      let mine: CheckedEntry[];
      let own: CheckedFatBinary[];
      try {
        location = withCcobPrefetch({}, (ccob) => locate(source, { ...ccob }));
        // A member's own archive members are named after it, `!` per level as everywhere in packages.
        const found = entriesOf(location, verdict);
        own = fatBinariesOf(location, found).map((f) => ({ ...f, member: f.member !== undefined ? `${name}!${f.member}` : name }));
        mine = found.map((e) => ({ ...e, member: e.member !== undefined ? `${name}!${e.member}` : name }));
      } catch (e) {
        // A streamed member whose bytes were not kept is read again, spooled, by the walker.
        if (isCaptureMiss(e) || !isOffloadKitError(e)) throw e;
        unreadable(name, { code: e.code, message: `${path}!${name}: ${e.message}` });
        failure ??= members[members.length - 1]!.error;
        offloadMember = true;
        return;
      }
      if (mine.length > 0 || (location.problems.length > 0 && isDamagedOffloadFile(location))) offloadMember = true;
      const device = mine.filter((e) => e.verdict.verdict !== "host").length;
      if (device > 0) {
        const judgement = judgeEntries(mine.map((e) => e.verdict));
        const loadable = mine.filter((e) => e.verdict.verdict === "loadable").length;
        const memberVerdict = !judgement.ok ? "no-code" : filePasses(judgement, own) ? "ok" : "fat-binary-without-code";
        members.push({ path: name, verdict: memberVerdict, deviceEntries: device, loadable, fatBinaries: own });
      }
      entries.push(...mine);
      fatBinaries.push(...own);
      problems.push(...location.problems);
    }, { locateOnly: true });
    for (const p of walk.problems) {
      if (p.code === "IMAGE_WHITEOUT_UNUSED" || p.code === "PACKAGE_TOO_DEEP") continue;
      const error = { code: p.code, message: `${p.path.join("!")}: at offset ${p.offset}: ${p.message}` };
      unreadable(p.path.slice(1).join("!"), error);
      failure ??= error;
    }
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    // The package itself failed (its file, its container): what was found before stays reported.
    failure ??= { code: e.code, message: e.message };
  }
  return judged(failure);
}

/**
 * `checkPaths`, with each file that is a package checked as one input: named on the command line or found
 * while walking a folder (the walk's rules unchanged: a package holding no offload code is skipped there,
 * as any other file without it).
 */
export function checkPathsWithPackages(paths: readonly string[], gpu: GpuConfig, options: CheckOptions = {}): Promise<CheckRun> {
  return checkPaths(paths, gpu, options, (path, verdict) => {
    if (splitMemberPath(path) !== undefined) return checkMemberWith(path, verdict, options);
    return isPackageFile(path) ? checkPackageWith(path, verdict) : checkWith(path, verdict, options);
  });
}

/** A `pkg!member` name as `ls` prints it: that member checked as a file of that name. */
async function checkMemberWith(path: string, verdict: (id: string) => EntryVerdict, options: CheckOptions): Promise<CheckedInput> {
  let member: Awaited<ReturnType<typeof openNamedMember>>;
  try {
    member = await openNamedMember(path);
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    // Reported as a file that cannot be read is.
    return checkSourceWith(path, () => {
      throw e;
    }, verdict, options);
  }
  try {
    return checkSourceWith(path, (use) => use(member!), verdict, options);
  } finally {
    member?.close();
  }
}
