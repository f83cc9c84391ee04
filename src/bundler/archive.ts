/**
 * Heterogeneous device archives (`-type=a -unbundle`): which bundle entries of which archive members
 * go into which per-target archive, under what name. Pure: the Node front end (src/bundler/node/archive.ts)
 * reads the members and writes the archives.
 *
 * Follows OffloadBundler::UnbundleArchive and CheckHeterogeneousArchive in
 * clang/lib/Driver/OffloadBundler.cpp (the 19 release), seed 000 "Archive Unbundling" and spec
 * bundler.md §8:
 *
 * - members in archive order; entries of a member in the order the bundler visits them (binary
 *   bundles: llvm::StringMap order; fat objects: section order); an empty entry ID ends the member;
 * - every compatible requested target (-targets order) gets its own copy of the entry, named
 *   `<stem>-<entry ID><stem><ext>` with every ':' replaced by '_', where stem and extension come from
 *   the member's file name and ext is `.bc` for a gfx target ID, `.cubin` for sm_, else the member's;
 * - a target without members is an error unless -allow-missing-bundles (then an empty archive), checked
 *   per target in -targets order.
 *
 * Member names never become paths. The member's own name is reduced to its last path component first
 * (so `../x` and `/etc/x` give `x`, as LLVM does), and the result is only ever written as a name
 * inside an output archive. A name may still hold '/' (an entry ID with one, or the root "/"), which
 * the `//` table stores as LLVM's writer does.
 */
import { OffloadKitError } from "../engine/errors.js";
import { extension, filename, stem } from "../llvm/path.js";
import { getDeviceFileExtension } from "../target-id/index.js";
import type { IndexedEntry } from "./read.js";
import { compatible, getConflictTargetIdCombination, parseTarget } from "./targets.js";

/** One input archive member, as the bundler sees it. */
export interface ArchiveBundleMember {
  /** `Archive::Child::getName()` (a byte string). */
  readonly name: string;
  /** Bundle entries in the order the bundler visits them. */
  readonly entries: readonly IndexedEntry[];
}

/** One member of a per-target output archive. */
export interface DeviceArchiveMember {
  /** Output member name. */
  readonly name: string;
  /** Index of the input member (in the list given to planArchiveUnbundle). */
  readonly member: number;
  readonly entry: IndexedEntry;
}

export interface ArchiveUnbundleRequest {
  /** Normalised target IDs, in -targets order. */
  readonly targets: readonly string[];
  readonly allowMissingBundles?: boolean;
  readonly hipOpenmpCompatible?: boolean;
  /** The -input path as given, for the "no compatible code object" message. */
  readonly inputPath: string;
}

/**
 * The name UnbundleArchive gives an extracted entry: `stem(file) + "-" + ID + stem(file) + ext`, then
 * ':' → '_'. `memberName` is the archive member's name; only its last path component is used.
 */
export function deviceMemberName(memberName: string, entryId: string, targetId: string): string {
  return deviceName(memberFileParts(memberName), entryId, targetId);
}

interface MemberFileParts {
  readonly stem: string;
  readonly extension: string;
}

function memberFileParts(memberName: string): MemberFileParts {
  const file = filename(memberName);
  return { stem: stem(file), extension: extension(file) };
}

function deviceName(parts: MemberFileParts, entryId: string, targetId: string): string {
  return `${parts.stem}-${entryId}${parts.stem}${getDeviceFileExtension(targetId, parts.extension)}`.replace(/:/g, "_");
}

/** The members each target's archive gets, in order (index = position in `request.targets`). */
export interface ArchivePlan {
  readonly outputs: readonly (readonly DeviceArchiveMember[])[];
}

/**
 * Assigns entries to targets. Throws LLVM's "no compatible code object found" error for the first
 * target (in -targets order) that gets nothing, unless -allow-missing-bundles; `onTarget` runs for each
 * target before that check (LLVM writes each archive before looking at the next target).
 */
export function planArchiveUnbundle(
  members: readonly ArchiveBundleMember[],
  request: ArchiveUnbundleRequest,
  onTarget?: (target: number, members: readonly DeviceArchiveMember[]) => void,
): ArchivePlan {
  const parsedTargets = request.targets.map(parseTarget);
  const outputs: DeviceArchiveMember[][] = request.targets.map(() => []);
  const hipOpenmp = request.hipOpenmpCompatible ?? false;
  // Members of one archive mostly repeat the same few IDs: decide each ID once.
  const decided = new Map<string, { targetId: string; targets: number[] }>();
  members.forEach((member, memberIndex) => {
    let parts: MemberFileParts | undefined;
    for (const entry of member.entries) {
      // UnbundleArchive loops `while (!CodeObject.empty())`: an empty ID ends this member.
      if (entry.id === "") break;
      let decision = decided.get(entry.id);
      if (decision === undefined) {
        const codeObject = parseTarget(entry.id);
        const targets = parsedTargets.flatMap((target, t) => (compatible(codeObject, target, hipOpenmp) ? [t] : []));
        decision = { targetId: codeObject.targetId, targets };
        decided.set(entry.id, decision);
      }
      if (decision.targets.length === 0) continue;
      parts ??= memberFileParts(member.name);
      const name = deviceName(parts, entry.id, decision.targetId);
      for (const t of decision.targets) outputs[t].push({ name, member: memberIndex, entry });
    }
  });
  request.targets.forEach((target, t) => {
    if (outputs[t].length === 0 && !request.allowMissingBundles) {
      throw new OffloadKitError("NO_COMPATIBLE_CODE_OBJECT", `no compatible code object found for the target '${target}' in ` +
        `heterogeneous archive library: ${request.inputPath}`);
    }
    onTarget?.(t, outputs[t]);
  });
  return { outputs };
}

/**
 * `-check-input-archive` for one member: CheckHeterogeneousArchive hands the member's *bundle IDs*
 * (kind, triple and target ID together, deduplicated and sorted) to getConflictTargetIDCombination,
 * which keys them by the text before the first ':'. Returns LLVM's message, or undefined.
 */
export function checkArchiveMemberConflicts(memberName: string, ids: readonly string[], archivePath: string): string | undefined {
  const conflict = getConflictTargetIdCombination(new Set(ids));
  if (conflict === undefined) return undefined;
  return `conflicting TargetIDs [${conflict[0]}, ${conflict[1]}] found in ${memberName} of ${archivePath}`;
}
