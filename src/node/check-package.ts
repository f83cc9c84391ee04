/**
 * `check` for packages: each member's bundle entries (src/inspect/locate.ts) judged for the GPU, the
 * package answering as one input whose entries name their member (`usr/lib/x.so`, `!` per level).
 * Members without device code are not entries; members with device code but none for the GPU are
 * listed in `membersWithoutCode`.
 */
import { isOffloadKitError } from "../engine/errors.js";
import { judgeEntries } from "../inspect/check.js";
import type { GpuConfig } from "../inspect/check.js";
import type { ScanProblem } from "../inspect/scan.js";
import { locate } from "../inspect/locate.js";
import { statSync } from "node:fs";
import { checkPaths, entriesOf, verdictsFor } from "./check.js";
import type { CheckOptions, CheckRun, CheckedEntry, CheckedInput, WalkError } from "./check.js";
import { withCcobPrefetch } from "./decompress.js";
import { forEachInput } from "./packages.js";
import { readExact } from "../engine/source.js";
import { FileSource } from "./file-source.js";
import { sniffPackage } from "../packages/walk.js";

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

export async function checkPackage(path: string, gpu: GpuConfig, options: CheckOptions = {}): Promise<CheckedPackage> {
  const verdict = verdictsFor(gpu, options);
  const entries: CheckedEntry[] = [];
  const problems: ScanProblem[] = [];
  const membersWithoutCode: string[] = [];
  const judged = (error?: { code: string; message: string }): CheckedPackage => ({
    path,
    kind: "package",
    entries,
    deviceEntries: entries.filter((e) => e.verdict.verdict !== "host").length,
    loadable: entries.filter((e) => e.verdict.verdict === "loadable").length,
    judgement: judgeEntries(entries.map((e) => e.verdict)),
    problems,
    offloadFile: true,
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
 * `checkPaths`, with each file that is a package checked as one input (in the order given). The paths
 * between two packages go to checkPaths together, so its walk sees a folder or file named twice as once.
 */
export async function checkPathsWithPackages(paths: readonly string[], gpu: GpuConfig, options: CheckOptions = {}): Promise<CheckRun> {
  const inputs: CheckedInput[] = [];
  const skipped: string[] = [];
  const emptyDirectories: string[] = [];
  const unreadable: WalkError[] = [];
  let pending: string[] = [];
  const flush = (): void => {
    if (pending.length === 0) return;
    const run = checkPaths(pending, gpu, options);
    inputs.push(...run.inputs);
    skipped.push(...run.skipped);
    emptyDirectories.push(...run.emptyDirectories);
    unreadable.push(...run.unreadable);
    pending = [];
  };
  for (const path of paths) {
    if (!isPackageFile(path)) {
      pending.push(path);
      continue;
    }
    flush();
    inputs.push(await checkPackage(path, gpu, options));
  }
  flush();
  return { inputs, skipped, emptyDirectories, unreadable };
}
