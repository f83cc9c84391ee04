/**
 * "Download, pruned for GPU" of a dropped package: `offload-kit prune --keep=GPU PKG -o OUT` in the page's
 * worker, the package written back as its kind, as the CLI's writers (src/packages/node/editors.ts) write it:
 * wheels and other zips (./zip.ts), `.conda` (./conda.ts), .deb (./deb.ts), tarballs plain or gzip, xz, zstd,
 * bzip2, a legacy conda `.tar.bz2` among them (./tarball.ts). Refused with the CLI command that writes them:
 * RPMs (the CLI refuses them too: their signature and digests), container images, anything else.
 * A package inside a package (a wheel in a tarball, a .deb in a zip) is written by its own writer and its new
 * bytes are the member's, every level down to the CLI's depth, as the CLI's nestedEditor does; the selection
 * is checked once, over every level's edits.
 * Members are held in memory one at a time (the page has no scratch disk); the output is parts: ranges of
 * the File where bytes are kept as they are, and the bytes made here.
 */
import type { Codecs } from "../../compress/codecs.js";
import { OffloadKitError } from "../../engine/errors.js";
import { bytesSource, readExact } from "../../engine/source.js";
import type { ByteSource } from "../../engine/source.js";
import { locate } from "../../inspect/locate.js";
import { memorySpooler } from "../../packages/decoders.js";
import { isRpm, rpmRefusal } from "../../packages/rpm.js";
import { mayBeWritablePackage, walkPackage } from "../../packages/walk.js";
import { readZip } from "../../packages/zip.js";
import { parseSelection } from "../../prune/select.js";
import type { Selection } from "../../prune/select.js";
import { browserDecoders } from "../packages.js";
import type { PruneReply, PrunedPart } from "../protocol.js";
import { condaMembers, pruneCondaPackage } from "./conda.js";
import { isDebPackage, pruneDebPackage } from "./deb.js";
import { checkMatched, holdsOffloadCode, partSize } from "./members.js";
import type { MemberEdit, PackageEdit, PruneScope } from "./members.js";
import { pruneTarballPackage, tarballCompression } from "./tarball.js";
import { isZipPackage, pruneZipPackage } from "./zip.js";

export { isZipPackage, pruneZipPackage };

/** Packages inside packages are written down to this depth (the CLI's, src/packages/node/editors.ts). */
const MAX_NESTING = 8;

/** The package `source` (named `name`) pruned to `keep`, written back as its kind. */
export async function prunePackage(source: ByteSource, name: string, keep: readonly string[], codecs: Codecs): Promise<PruneReply> {
  const edit = await packageWriter(source, name, packageScope(parseSelection("keep", keep), codecs));
  if (edit === undefined) {
    throw new OffloadKitError("PACKAGE_NOT_WRITTEN_HERE", `${name}: not a package the page writes (wheels and zips, .conda, .deb, tarballs); offload-kit prune --keep=${keep.join(",")} ${name} -o OUT writes what the CLI can`);
  }
  return edit.reply;
}

/** The scope of a dropped package's prune: checked over every level's edits, packages inside written. */
export function packageScope(selection: Selection, codecs: Codecs): PruneScope {
  return { selection, codecs, depth: 0, check: (edits) => checkMatched(edits, selection), nested };
}

/** `source` written by the writer of its kind; undefined when it is none the page writes. An RPM is refused. */
async function packageWriter(source: ByteSource, name: string, scope: PruneScope): Promise<PackageEdit | undefined> {
  if (isZipPackage(source)) {
    return condaMembers(readZip(source)) !== undefined ? pruneCondaPackage(source, name, scope) : pruneZipPackage(source, name, scope);
  }
  if (isDebPackage(source)) return pruneDebPackage(source, name, scope);
  if (source.size >= 4 && isRpm(readExact(source, 0, 4))) throw rpmRefusal(name);
  const tarball = await tarballCompression(source, scope.codecs);
  return tarball === undefined ? undefined : pruneTarballPackage(source, name, scope, tarball.compression);
}

/**
 * The scope's `nested`: a member that is a package, written by its own writer without the selection's check
 * (the outermost writer checks every level's edits at once). Its edits are named below the member
 * (`x.tar.gz!wheels/y.whl!y/lib/z.so`), their entries and notes counted in the one answer. An RPM inside is
 * refused, naming it, when a member of it holds device code (it would have to be written), else left as it is.
 */
async function nested(bytes: Uint8Array, name: string, outer: PruneScope): Promise<{ readonly edit?: MemberEdit } | undefined> {
  if (outer.depth + 1 >= MAX_NESTING || bytes.length < 16 || !mayBeWritablePackage(bytes.subarray(0, 512))) return undefined;
  const source = bytesSource(bytes);
  if (isRpm(bytes.subarray(0, 4))) {
    if (await rpmHoldsOffloadCode(source, name)) throw rpmRefusal(name);
    return {};
  }
  const inner = await packageWriter(source, name, { ...outer, depth: outer.depth + 1, check: () => {} });
  if (inner === undefined) return undefined;
  if (inner.edits.length === 0) return {};
  const entries = inner.edits.flatMap((e) => e.entries);
  const edit: MemberEdit = { name, entries, notes: inner.reply.notes, ...(inner.reply.changed ? { output: assemble(inner.reply.parts, bytes) } : {}) };
  return { edit };
}

/** A package's parts as one buffer: its ranges are of `bytes`, the package in hand. */
function assemble(parts: readonly PrunedPart[], bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + partSize(p), 0));
  let at = 0;
  for (const part of parts) {
    if ("bytes" in part) out.set(part.bytes, at);
    else if ("offset" in part) out.set(bytes.subarray(part.offset, part.offset + part.size), at);
    // Zeros: the buffer is zero already.
    at += partSize(part);
  }
  return out;
}

/** Whether any member of the RPM `source` holds device code (the walker's members, as the CLI's check finds them). */
async function rpmHoldsOffloadCode(source: ByteSource, name: string): Promise<boolean> {
  let found = false;
  await walkPackage(source, name, {
    decoders: browserDecoders(),
    spooler: memorySpooler(),
    onMember: ({ source: member }) => {
      if (!found && holdsOffloadCode(locate(member))) found = true;
    },
  });
  return found;
}
