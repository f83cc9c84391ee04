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
import { checkPaths, checkWith, entriesOf, isDamagedOffloadFile, verdictsFor } from "../../inspect/node/check.js";
import type { CheckOptions, CheckRun, CheckedEntry, CheckedInput } from "../../inspect/node/check.js";
import type { EntryVerdict } from "../../inspect/check.js";
import { withCcobPrefetch } from "../../compress/node/decompress.js";
import { forEachInput } from "./inputs.js";
import { readExact } from "../../engine/source.js";
import { FileSource } from "../../node/file-source.js";
import { sniffPackage } from "../walk.js";

export interface CheckedPackage extends CheckedInput {
  /** Members holding device code of which none loads on the GPU. */
  readonly membersWithoutCode: readonly string[];
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

async function checkPackageWith(path: string, verdict: (id: string) => EntryVerdict): Promise<CheckedPackage> {
  const entries: CheckedEntry[] = [];
  const problems: ScanProblem[] = [];
  const membersWithoutCode: string[] = [];
  /** Whether some member is offload code by checkFile's rule (entries, or damage where offload code is). */
  let offloadMember = false;
  const judged = (error?: { code: string; message: string }): CheckedPackage => ({
    path,
    kind: "package",
    entries,
    deviceEntries: entries.filter((e) => e.verdict.verdict !== "host").length,
    loadable: entries.filter((e) => e.verdict.verdict === "loadable").length,
    judgement: judgeEntries(entries.map((e) => e.verdict)),
    problems,
    // In a folder, a package counts when some member is offload code, or when it could not be read to the end.
    offloadFile: offloadMember || error !== undefined,
    membersWithoutCode,
    ...(error !== undefined ? { error } : {}),
  });
  try {
    const walk = await forEachInput(path, ({ member, source }) => {
      const location = withCcobPrefetch({}, (ccob) => locate(source, { ...ccob }));
      const name = (member ?? []).join("!");
      // A member's own archive members are named after it, `!` per level as everywhere in packages.
      const mine = entriesOf(location, verdict).map((e) => ({ ...e, member: e.member !== undefined ? `${name}!${e.member}` : name }));
      if (mine.some((e) => e.verdict.verdict !== "host") && !mine.some((e) => e.verdict.verdict === "loadable")) membersWithoutCode.push(name);
      if (mine.length > 0 || (location.problems.length > 0 && isDamagedOffloadFile(location))) offloadMember = true;
      entries.push(...mine);
      problems.push(...location.problems);
    }, { locateOnly: true });
    const broken = walk.problems.find((p) => p.code !== "IMAGE_WHITEOUT_UNUSED" && p.code !== "PACKAGE_TOO_DEEP");
    return judged(broken !== undefined ? { code: broken.code, message: `${broken.path.join("!")}: at offset ${broken.offset}: ${broken.message}` } : undefined);
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    entries.length = 0;
    return judged({ code: e.code, message: e.message });
  }
}

/**
 * `checkPaths`, with each file that is a package checked as one input: named on the command line or found
 * while walking a folder (the walk's rules unchanged: a package holding no offload code is skipped there,
 * as any other file without it).
 */
export function checkPathsWithPackages(paths: readonly string[], gpu: GpuConfig, options: CheckOptions = {}): Promise<CheckRun> {
  return checkPaths(paths, gpu, options, (path, verdict) => (isPackageFile(path) ? checkPackageWith(path, verdict) : checkWith(path, verdict, options)));
}
