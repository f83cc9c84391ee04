/**
 * `check` for packages: each member's bundle entries (src/inspect/locate.ts) judged for the GPU, the
 * package answering as one input whose entries name their member (`usr/lib/x.so`, `!` per level).
 * Members without device code are not entries; members with device code but none for the GPU are
 * listed in `membersWithoutCode`.
 */
import { isOffloadKitError } from "../engine/errors.js";
import { checkEntry } from "../inspect/check.js";
import type { GpuConfig } from "../inspect/check.js";
import { locate } from "../inspect/locate.js";
import { statSync } from "node:fs";
import { checkPaths } from "./check.js";
import type { CheckOptions, CheckRun, CheckedEntry, CheckedInput } from "./check.js";
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
  if (statSync(path, { throwIfNoEntry: false })?.isFile() !== true) return false;
  const source = FileSource.open(path);
  try {
    return sniffPackage(readExact(source, 0, Math.min(source.size, 1024))) !== undefined;
  } finally {
    source.close();
  }
}

export async function checkPackage(path: string, gpu: GpuConfig, options: CheckOptions = {}): Promise<CheckedPackage> {
  const entries: CheckedEntry[] = [];
  const membersWithoutCode: string[] = [];
  try {
    const walk = await forEachInput(path, ({ member, source }) => {
      const location = withCcobPrefetch({}, (ccob) => locate(source, { ...ccob }));
      const name = (member ?? []).join("!");
      const mine = location.bundles.flatMap((b) => b.entries.map((e) => ({ member: name, id: e.id, size: e.size, verdict: checkEntry(e.id, gpu, { kind: options.kind }) })));
      if (mine.some((e) => e.verdict.verdict !== "host") && !mine.some((e) => e.verdict.verdict === "loadable")) membersWithoutCode.push(name);
      entries.push(...mine);
    });
    const broken = walk.problems.find((p) => p.code !== "IMAGE_WHITEOUT_UNUSED" && p.code !== "PACKAGE_TOO_DEEP");
    return {
      path,
      kind: "package",
      entries,
      deviceEntries: entries.filter((e) => e.verdict.verdict !== "host").length,
      loadable: entries.filter((e) => e.verdict.verdict === "loadable").length,
      membersWithoutCode,
      ...(broken !== undefined ? { error: { code: broken.code, message: `${broken.path.join("!")}: at offset ${broken.offset}: ${broken.message}` } } : {}),
    };
  } catch (e) {
    if (!isOffloadKitError(e)) throw e;
    return { path, kind: "package", entries: [], deviceEntries: 0, loadable: 0, membersWithoutCode, error: { code: e.code, message: e.message } };
  }
}

/** `checkPaths`, with each file that is a package checked as one input (in the order given). */
export async function checkPathsWithPackages(paths: readonly string[], gpu: GpuConfig, options: CheckOptions = {}): Promise<CheckRun> {
  const inputs: CheckedInput[] = [];
  const skipped: string[] = [];
  const emptyDirectories: string[] = [];
  for (const path of paths) {
    if (isPackageFile(path)) {
      inputs.push(await checkPackage(path, gpu, options));
      continue;
    }
    const run = checkPaths([path], gpu, options);
    inputs.push(...run.inputs);
    skipped.push(...run.skipped);
    emptyDirectories.push(...run.emptyDirectories);
  }
  return { inputs, skipped, emptyDirectories };
}
